"""Go, ``golang.org/x/net/http/httpproxy`` (every Kubernetes and OpenShift component).

Modelled: Go 1.11 onwards (net/http reads the environment through this package
since then), one behaviour; tests/realclients checks it against the installed Go.

Facts (golang/net http/httpproxy/proxy.go, current master):
* entries are split on ``,``, trimmed and lower-cased; a ``*`` entry anywhere
  disables the proxy for every host;
* ``a/b`` parsed as a CIDR matches IP hosts by address; ``ip`` or ``ip:port`` /
  ``[ipv6]:port`` matches the address (and port, compared as text);
* other entries are domains: ``x.com`` matches the apex and subdomains,
  ``.x.com`` and ``*.x.com`` subdomains only, with an optional ``:port``;
  non-ASCII names meet their punycode form;
* domain entries never match an IP host (an IPv6 zone does not make it a name);
* ``localhost`` and loopback addresses are always direct.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import lru_cache

from hcpscan.analysis.proxy.decision import LOOPBACK, Decision, direct, proxied
from hcpscan.analysis.proxy.hosts import strict_ip, to_ascii, unmap
from hcpscan.analysis.proxy.runtimes.base import AddressRules, Era, IPNetwork, Version
from hcpscan.analysis.proxy.target import Target

NAME = "go"
SUMMARY = "Go httpproxy: CIDR and IP entries, x.com = apex+subdomains, .x.com/*.x.com = " \
          "subdomains, host:port, loopback always direct"
ERAS = (Era((1, 11, 0), (2, 0, 0), "net/http reads the environment with x/net/http/httpproxy"),)
LATEST = ERAS[-1].since


@dataclass(frozen=True, slots=True)
class _Entry:
    raw: str
    kind: str  # "all" | "cidr" | "ip" | "domain"
    network: IPNetwork | None = None
    host: str = ""  # ".x.com" for domains
    port: str = ""
    apex: bool = False  # a domain entry without a leading dot also matches the apex


def split_host_port(text: str) -> tuple[str, str] | None:
    """net.SplitHostPort: ``host:port`` or ``[host]:port``; None when it fails."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or end + 1 >= len(text) or text[end + 1] != ":":
            return None
        host, port = text[1:end], text[end + 2:]
        if "[" in host or "]" in port or "[" in port:
            return None
        return host, port
    colon = text.rfind(":")
    if colon < 0:
        return None
    host, port = text[:colon], text[colon + 1:]
    if ":" in host or any(c in host + port for c in "[]"):
        return None
    return host, port


def _cidr(text: str) -> IPNetwork | None:
    addr, slash, bits = text.partition("/")
    ip = strict_ip(addr) if slash and bits.isdigit() else None
    if ip is None or int(bits) > ip.max_prefixlen:
        return None
    return ipaddress.ip_network(f"{ip}/{int(bits)}", strict=False)


@lru_cache(maxsize=4096)
def parse(no_proxy: str) -> tuple[_Entry, ...]:
    # one value is asked about many hosts (every domain and address a rule checks): read once
    return tuple(_parse(no_proxy))


def _parse(no_proxy: str) -> list[_Entry]:
    out: list[_Entry] = []
    for piece in no_proxy.split(","):
        raw = piece.strip()
        p = raw.lower()
        if not p:
            continue
        if p == "*":
            return [_Entry(raw, "all")]
        net = _cidr(p)
        if net is not None:
            out.append(_Entry(raw, "cidr", network=net))
            continue
        split = split_host_port(p)
        if split is not None:
            host, port = split
            if not host:
                continue  # malformed (":1"): ignored
        else:
            host, port = p, ""
        ip = strict_ip(host)
        if ip is not None:
            out.append(_Entry(raw, "ip", network=ipaddress.ip_network(unmap(ip)), port=port))
            continue
        if host.startswith("*."):
            host = host[1:]
        apex = not host.startswith(".")
        host = to_ascii(host if not apex else "." + host)
        out.append(_Entry(raw, "domain", host=host, port=port, apex=apex))
    return out


def _is_loopback(target: Target) -> bool:
    ip = target.ip
    return target.host == "localhost" or (ip is not None and unmap(ip).is_loopback)


def decide(no_proxy: str, target: Target, version: Version = LATEST) -> Decision:
    if _is_loopback(target):
        return direct(NAME, LOOPBACK, "Go never proxies localhost or loopback addresses")
    ip = target.ip
    host = to_ascii(target.host).strip().lower()
    port = str(target.port) if target.port is not None else str(target.default_port or "")
    for entry in parse(no_proxy):
        if entry.kind == "all":
            return direct(NAME, entry.raw, "'*' disables the proxy for every host")
        if ip is not None and entry.network is not None and unmap(ip) in entry.network:
            if entry.kind == "cidr":
                return direct(NAME, entry.raw, "address inside the CIDR")
            if entry.port in ("", port):
                return direct(NAME, entry.raw, "same address" + (" and port" if entry.port else ""))
        if ip is None and entry.kind == "domain":
            if host.endswith(entry.host) or (entry.apex and host == entry.host[1:]):
                if entry.port in ("", port):
                    return direct(NAME, entry.raw, "domain match")
    return proxied(NAME)


def address_rules(no_proxy: str, port: int | None,
                  version: Version = LATEST) -> AddressRules:
    loop = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
    entries: dict[IPNetwork, str] = {n: LOOPBACK for n in loop}
    for entry in parse(no_proxy):
        if entry.kind == "all":
            return AddressRules(everything=True)
        if entry.network is not None and (entry.kind == "cidr" or entry.port in ("", str(port))):
            entries.setdefault(entry.network, entry.raw)
    return AddressRules(networks=tuple(entries), entries=entries)
