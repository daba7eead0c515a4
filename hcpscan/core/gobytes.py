"""How Go reads a ``[]byte`` field of a Kubernetes object or a kubeconfig (kubeconfig
``certificate-authority-data``, ``client-certificate-data``, an OCM ``caBundle``):
``encoding/json`` writes it as standard, padded base64 and decodes it with a decoder that
skips CR and LF and nothing else."""

from __future__ import annotations

import base64
import binascii

_BASE64_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def go_bytes(text: str) -> bytes | str:
    """The bytes a Go ``[]byte`` field holds for ``text`` as JSON (or YAML turned into
    JSON) writes it, or Go's error: ``encoding/json`` decodes it with standard, padded
    base64 whose decoder skips CR and LF and nothing else (a space, a ``-`` is illegal)."""
    raw = text.encode("utf-8", "surrogateescape")
    for i, byte in enumerate(raw):
        if byte not in _BASE64_ALPHABET and byte not in b"\r\n":
            return f"illegal base64 data at input byte {i}"
    kept = raw.replace(b"\r", b"").replace(b"\n", b"")
    wrong = _padding_error(kept)
    if wrong is not None:  # Python accepts excess padding; Go's StdEncoding does not
        at = [i for i, byte in enumerate(raw) if byte not in b"\r\n"]
        return f"illegal base64 data at input byte {at[wrong] if wrong < len(at) else len(raw)}"
    try:
        return base64.b64decode(kept, validate=True)
    except (binascii.Error, ValueError):
        return f"illegal base64 data at input byte {len(raw) - 1 if raw else 0} (bad padding)"


def _padding_error(kept: bytes) -> int | None:
    """Where Go's padded standard decoding stops on ``kept`` (CR and LF removed) because of
    its padding, or None: ``=`` only ends the last quantum of 4, as one or two of them."""
    first = kept.find(b"=")
    if first < 0:
        return None
    needed = (-first) % 4
    if needed not in (1, 2):  # '=' as the first or second character of a quantum
        return first
    for i in range(first, first + needed):
        if i >= len(kept) or kept[i:i + 1] != b"=":
            return min(i, len(kept))
    return first + needed if len(kept) > first + needed else None
