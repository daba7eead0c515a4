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
    try:
        return base64.b64decode(kept, validate=True)
    except (binascii.Error, ValueError):
        return f"illegal base64 data at input byte {len(raw) - 1 if raw else 0} (bad padding)"
