"""Node.js clients: ``proxy-from-env`` (axios) and undici's ``EnvHttpProxyAgent``.

Both compare the URL's ``host`` with its port cut off and IPv6 brackets kept,
lower-cased, and both read the port as ``parseInt(port) || default || 0`` (so an
explicit ``:0`` means the default port). Entries are split on commas *and*
whitespace; ``name:digits`` is an entry with a port; no CIDR.

proxy-from-env (Rob--W/proxy-from-env): the value ``*`` bypasses all; an entry not
starting with ``.`` or ``*`` must equal the host; otherwise a leading ``*`` is
dropped and the host must *end with* the rest as a plain string (``*example``
matches ``prefexample``; ``.x.com`` does not match ``x.com``).

undici (lib/dispatcher/env-http-proxy-agent.js, current): a leading ``*.`` or
``.`` is dropped, then the entry matches the host exactly or as a dot-bounded
suffix (``.x.com`` matches ``x.com`` too); only the whole value ``*`` bypasses all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hcpscan.analysis.proxy.decision import Decision, direct, proxied
from hcpscan.analysis.proxy.hosts import strict_ip
from hcpscan.analysis.proxy.runtimes.base import AddressRules
from hcpscan.analysis.proxy.target import Target

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


def url_host(target: Target) -> str:
    """WHATWG URL ``host`` minus the port: lower case, IPv6 canonical in brackets."""
    ip = strict_ip(target.host) if target.is_ipv6 else None
    if ip is not None:
        return f"[{ip.compressed}]"
    return target.url_host.lower()


def url_port(target: Target, defaults: dict[str, int]) -> int:
    return target.port or defaults.get(target.scheme, 0)


class ProxyFromEnv:
    NAME = "proxy-from-env"
    SUMMARY = "proxy-from-env (axios): exact host, .x.com/*x = plain string suffix, " \
              "host:port, '*' only alone, no CIDR"

    def decide(self, no_proxy: str, target: Target) -> Decision:
        value = no_proxy.lower()
        if not value:
            return proxied(self.NAME, "empty NO_PROXY")
        if value == "*":
            return direct(self.NAME, "*", "the value is '*'")
        host, port = url_host(target), url_port(target, PFE_PORTS)
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

    def address_rules(self, no_proxy: str, port: int | None) -> AddressRules:
        return AddressRules(everything=no_proxy.lower() == "*", by_text=True)


class Undici:
    NAME = "node-undici"
    SUMMARY = "undici EnvHttpProxyAgent: x.com/.x.com/*.x.com = apex+subdomains, " \
              "host:port, '*' only alone, no CIDR"

    def decide(self, no_proxy: str, target: Target) -> Decision:
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

    def address_rules(self, no_proxy: str, port: int | None) -> AddressRules:
        return AddressRules(everything=no_proxy == "*", by_text=True)
