"""Node.js clients: ``proxy-from-env`` (axios) and undici's ``EnvHttpProxyAgent``.

Both compare the URL's ``host`` with its port cut off and IPv6 brackets kept,
lower-cased, and both read the port as ``parseInt(port) || default || 0`` (so an
explicit ``:0`` means the default port). Entries are split on commas *and*
whitespace; ``name:digits`` is an entry with a port; no CIDR.

proxy-from-env (Rob--W/proxy-from-env): the value ``*`` bypasses all; an entry not
starting with ``.`` or ``*`` must equal the host; otherwise a leading ``*`` is
dropped and the host must *end with* the rest as a plain string (``*example``
matches ``prefexample``; ``.x.com`` does not match ``x.com``). Versions:
* 1.x reads the URL with Node's legacy ``url.parse``: an IPv6 host is only
  lower-cased, not normalised (``[2001:DB8:0::1]`` stays ``[2001:db8:0::1]``);
  it also reads ``npm_config_*`` variables first (see ``env``);
* 2.x (the default) reads it with WHATWG ``URL``: IPv6 in its canonical form.

undici (lib/dispatcher/env-http-proxy-agent.js). Versions (read on the published
releases; the matching code is the same within each range):
* 7.x to 8.9.x: a leading ``*.`` or ``.`` is dropped, then the entry matches the
  host exactly or as a dot-bounded suffix (``.x.com`` and ``*.x.com`` match ``x.com``
  too); only the whole value ``*`` bypasses all; an entry is split at its last
  ``:digits``, so a bare IPv6 entry (``2001:db8::1``) never matches; trailing dots
  are compared as written;
* 8.10.0 (undici PR 5623): IPv6 entries are compared without brackets, so
  ``2001:db8::1`` and ``[2001:db8::1]`` both match;
* 8.10.1 and 8.10.2: one trailing dot of an entry and of the host is ignored;
* 8.11.0 on (undici PR 5777, the default): a ``*`` entry anywhere bypasses all
  (``*:80`` only that port); ``*.x.com`` matches subdomains only, no longer ``x.com``.
Both throw when a proxy variable is not a URL (``127.0.0.1:3128``): every request
fails, whatever NO_PROXY says (undici 8.0.0 and 8.0.1 prepend ``http://`` resp.
``https://`` instead; see ``env``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hcpscan.analysis.proxy.decision import Decision, direct, proxied
from hcpscan.analysis.proxy.hosts import strict_ip
from hcpscan.analysis.proxy.runtimes.base import AddressRules, Era, Version
from hcpscan.analysis.proxy.target import Target

PFE_2 = (2, 0, 0)
UNDICI_8 = (8, 0, 0)
UNDICI_IPV6 = (8, 10, 0)  # PR 5623: bare IPv6 entries match
UNDICI_DOT = (8, 10, 1)  # trailing dots ignored
UNDICI_WILDCARD = (8, 11, 0)  # PR 5777: '*' entry anywhere, *.x.com subdomains only

_ENTRY_PORT = re.compile(r"^(.+):(\d+)$", re.DOTALL)
_SPLIT = re.compile(r"[,\s]")

# Default ports each library knows.
PFE_PORTS = {"ftp": 21, "gopher": 70, "http": 80, "https": 443, "ws": 80, "wss": 443}
UNDICI_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class _Entry:
    raw: str
    host: str
    port: int  # 0 = any


def parse(no_proxy: str, strip_wildcard_dot: bool) -> list[_Entry]:
    out = []
    for raw in _SPLIT.split(no_proxy):
        if not raw:
            continue
        m = _ENTRY_PORT.match(raw)
        host, port = (m.group(1), int(m.group(2))) if m else (raw, 0)
        if strip_wildcard_dot:
            host = re.sub(r"^\*?\.", "", host)
        out.append(_Entry(raw, host.lower(), port))
    return out


def url_host(target: Target, canonical: bool = True) -> str:
    """The URL's ``host`` minus the port, lower case, IPv6 in brackets: canonical as
    WHATWG ``URL`` writes it, or as written (legacy ``url.parse``)."""
    ip = strict_ip(target.host) if target.is_ipv6 and canonical else None
    if ip is not None:
        return f"[{ip.compressed}]"
    return target.url_host.lower()


def url_port(target: Target, defaults: dict[str, int]) -> int:
    return target.port or defaults.get(target.scheme, 0)


class ProxyFromEnv:
    NAME = "proxy-from-env"
    SUMMARY = "proxy-from-env (axios): exact host, .x.com/*x = plain string suffix, " \
              "host:port, a '*' entry anywhere = all (an empty suffix), no CIDR"
    ERAS = (Era((1, 0, 0), PFE_2, "legacy url.parse: IPv6 hosts not normalised; "
                "npm_config_* variables read first"),
            Era(PFE_2, (3, 0, 0), "WHATWG URL: IPv6 hosts canonical; no npm_config_* variables"))

    def decide(self, no_proxy: str, target: Target, version: Version = PFE_2) -> Decision:
        value = no_proxy.lower()
        if not value:
            return proxied(self.NAME, "empty NO_PROXY")
        if value == "*":
            return direct(self.NAME, "*", "the value is '*'")
        host, port = url_host(target, version >= PFE_2), url_port(target, PFE_PORTS)
        if not host:
            return direct(self.NAME, "", "a URL without a host is never proxied")
        for entry in parse(value, strip_wildcard_dot=False):
            if entry.port and entry.port != port:
                continue
            if entry.host[:1] not in (".", "*"):
                if host == entry.host:
                    return direct(self.NAME, entry.raw, "same host")
                continue
            suffix = entry.host[1:] if entry.host.startswith("*") else entry.host
            if host.endswith(suffix):
                return direct(self.NAME, entry.raw, "string suffix of the host")
        return proxied(self.NAME)

    def address_rules(self, no_proxy: str, port: int | None,
                      version: Version = PFE_2) -> AddressRules:
        return AddressRules(everything=no_proxy.lower() == "*", by_text=True)


@dataclass(frozen=True, slots=True)
class _Entry8:
    raw: str
    host: str  # no brackets, no leading "*." / ".", no trailing dot, lower case
    port: int  # 0 = any
    wildcard: bool  # written with a leading "*": subdomains only


_V6_PORT = re.compile(r"^\[(.+)\]:(\d+)$", re.DOTALL)
_BRACKETED = re.compile(r"^\[(.+)\]$", re.DOTALL)


def parse8(no_proxy: str, trailing_dot: bool = True) -> list[_Entry8]:
    """undici 8.10's reading of the list (``trailing_dot``: 8.10.1+ drops one)."""
    out = []
    for raw in _SPLIT.split(no_proxy):
        if not raw:
            continue
        m = _V6_PORT.match(raw)
        if m:
            host, port = m.group(1), int(m.group(2))
        else:
            host, port = _BRACKETED.sub(r"\1", raw), 0
            p = _ENTRY_PORT.match(host) if host.count(":") == 1 else None
            if p:
                host, port = p.group(1), int(p.group(2))
        host = re.sub(r"^\*?\.", "", host, count=1)
        if trailing_dot:
            host = re.sub(r"^(.+)\.$", r"\1", host, count=1, flags=re.DOTALL)
        out.append(_Entry8(raw, host.lower(), port, raw.startswith("*")))
    return out


def host8(target: Target, trailing_dot: bool = True) -> str:
    host = url_host(target)
    host = _BRACKETED.sub(r"\1", host)
    return host[:-1] if trailing_dot and len(host) > 1 and host.endswith(".") else host


class Undici:
    NAME = "node-undici"
    SUMMARY = "undici EnvHttpProxyAgent: x.com/.x.com = apex+subdomains, *.x.com = " \
              "subdomains (8+), host:port, '*' entry = all (8+), no CIDR"
    ERAS = (Era((7, 0, 0), UNDICI_IPV6, "'*' only as the whole value; *.x.com matches x.com; "
                "bare IPv6 entries never match; trailing dots compared"),
            Era(UNDICI_IPV6, UNDICI_DOT, "bare IPv6 entries match (PR 5623)"),
            Era(UNDICI_DOT, UNDICI_WILDCARD, "trailing dots ignored"),
            Era(UNDICI_WILDCARD, (9, 0, 0), "'*' entry anywhere; *.x.com subdomains only "
                "(PR 5777)"))

    def decide(self, no_proxy: str, target: Target,
               version: Version = UNDICI_WILDCARD) -> Decision:
        if version >= UNDICI_IPV6:
            return self._decide8(no_proxy, target, version)
        entries = parse(no_proxy, strip_wildcard_dot=True)
        if not entries:
            return proxied(self.NAME, "empty NO_PROXY")
        if no_proxy == "*":
            return direct(self.NAME, "*", "the value is '*'")
        host, port = url_host(target), url_port(target, UNDICI_PORTS)
        for entry in entries:
            if entry.port and entry.port != port:
                continue
            if host == entry.host or host.endswith("." + entry.host):
                return direct(self.NAME, entry.raw, "host or domain match")
        return proxied(self.NAME)

    def _decide8(self, no_proxy: str, target: Target, version: Version) -> Decision:
        dot, star = version >= UNDICI_DOT, version >= UNDICI_WILDCARD
        entries = parse8(no_proxy, dot)
        if not entries:
            return proxied(self.NAME, "empty NO_PROXY")
        if not star and no_proxy == "*":
            return direct(self.NAME, "*", "the value is '*'")
        host, port = host8(target, dot), url_port(target, UNDICI_PORTS)
        for entry in entries:
            if entry.port and entry.port != port:
                continue
            if star and entry.host == "*":
                return direct(self.NAME, entry.raw, "a '*' entry bypasses every host")
            if not (star and entry.wildcard) and host == entry.host:
                return direct(self.NAME, entry.raw, "same host")
            if host.endswith("." + entry.host):
                return direct(self.NAME, entry.raw, "subdomain match")
        return proxied(self.NAME)

    def address_rules(self, no_proxy: str, port: int | None,
                      version: Version = UNDICI_WILDCARD) -> AddressRules:
        if version >= UNDICI_WILDCARD:
            star = any(e.host == "*" and e.port in (0, port) for e in parse8(no_proxy))
            return AddressRules(everything=star, by_text=True)
        return AddressRules(everything=no_proxy == "*", by_text=True)
