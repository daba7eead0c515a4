"""Small host-name helpers several clients share (IDNA, strict IP parsing)."""

from __future__ import annotations

import ipaddress
from types import ModuleType

from hcpscan.analysis.proxy.target import IPAddress
from hcpscan.model.ipspace import parse_address

_idna: ModuleType | None
try:  # the `idna` package (a dependency of requests) implements UTS #46 like Go
    import idna as _idna_package
    _idna = _idna_package
except ImportError:  # pragma: no cover - the stdlib codec is IDNA 2003, close enough
    _idna = None


def to_ascii(name: str) -> str:
    """Punycode each non-ASCII label; empty labels (a leading dot) stay as they are.

    Go converts both NO_PROXY entries and URL hosts this way, so ``.示例.com`` and
    ``xn--fsq092h.com`` meet on the ASCII form.
    """
    if name.isascii():
        return name
    labels = []
    for label in name.split("."):
        if label.isascii():
            labels.append(label)
            continue
        try:
            if _idna is not None:
                labels.append(_idna.encode(label, uts46=True).decode("ascii"))
            else:
                labels.append(label.encode("idna").decode("ascii"))
        except (UnicodeError, ValueError):
            return name  # as the clients do: keep the original on failure
    return ".".join(labels)


def strict_ip(text: str) -> IPAddress | None:
    """An IPv4 dotted quad or IPv6 literal, as inet_pton reads it (no zone)."""
    return parse_address(text)


def unmap(ip: IPAddress) -> IPAddress:
    """``::ffff:a.b.c.d`` as the IPv4 address Go's net.IP treats it as."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip
