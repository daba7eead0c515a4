"""The destination of a request, as the NO_PROXY evaluators need it.

Clients look at different pieces of a URL: Go and curl at the bare host, Node
and Java at the host *with* IPv6 brackets, Python urllib at ``host:port`` as
written. ``Target`` keeps the pieces unmodified so that each runtime module can
rebuild the exact string its client compares.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import unquote

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Ports clients fill in when a URL has none (the union of the clients' tables;
# each runtime module decides which of them its client actually knows).
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21,
                 "gopher": 70, "socks5": 1080}

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class TargetError(ValueError):
    """A URL or host that cannot be read as a request destination."""


@dataclass(frozen=True, slots=True)
class Target:
    scheme: str  # lower case; "" when only a host (and port) was given
    host: str  # as written: IPv6 without brackets, a zone kept (``%25`` decoded)
    port: int | None  # the explicit port, None when the URL has none
    raw: str
    bracketed: bool = False  # the host was written as ``[v6]``

    @property
    def default_port(self) -> int | None:
        return DEFAULT_PORTS.get(self.scheme)

    @property
    def effective_port(self) -> int | None:
        return self.port if self.port is not None else self.default_port

    @property
    def zone(self) -> str:
        return self.host.partition("%")[2]

    @property
    def ip(self) -> IPAddress | None:
        """The address when the host is an IP literal (an IPv6 zone is dropped)."""
        return parse_ip(self.host.partition("%")[0]) if self.host else None

    @property
    def is_ipv6(self) -> bool:
        return ":" in self.host

    @property
    def url_host(self) -> str:
        """The host as a URL parser's ``host`` shows it: IPv6 in brackets."""
        return f"[{self.host}]" if self.is_ipv6 else self.host

    @property
    def netloc(self) -> str:
        """``host[:port]`` as written in the URL (no userinfo)."""
        return self.url_host + (f":{self.port}" if self.port is not None else "")


def parse_ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def parse_target(text: str) -> Target:
    """Read ``scheme://host[:port]/path``, ``host:port``, ``[v6]:port``, a bare host
    or a bare IPv6 address. Raises ``TargetError`` for anything else."""
    raw = text
    text = text.strip()
    if not text:
        raise TargetError("empty URL")
    scheme = ""
    m = _SCHEME.match(text)
    if m:
        scheme = m.group(1).lower()
        text = text[m.end():]
    authority = re.split(r"[/?#]", text, maxsplit=1)[0] if scheme else text
    authority = authority.rpartition("@")[2]
    if not authority:
        raise TargetError(f"no host in {raw!r}")
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise TargetError(f"unclosed '[' in {raw!r}")
        host, rest = unquote(authority[1:end]), authority[end + 1:]
        if rest and not rest.startswith(":"):
            raise TargetError(f"unexpected {rest!r} after ']' in {raw!r}")
        return Target(scheme, host, _port(rest[1:], raw) if rest else None, raw, bracketed=True)
    if authority.count(":") > 1:
        # a bare IPv6 literal such as ``::1`` (curl's table writes them so)
        if parse_ip(authority.partition("%")[0]) is None:
            raise TargetError(f"{raw!r} is neither host:port nor an IPv6 address")
        return Target(scheme, authority, None, raw)
    host, sep, port = authority.partition(":")
    if not host:
        raise TargetError(f"no host in {raw!r}")
    return Target(scheme, host, _port(port, raw) if sep else None, raw)


def _port(text: str, raw: str) -> int | None:
    if text == "":
        return None  # "http://example:/" has an empty port: the default applies
    if not text.isdigit() or int(text) > 65535:
        raise TargetError(f"invalid port {text!r} in {raw!r}")
    return int(text)
