"""Ruby ``Net::HTTP`` through ``URI::Generic#find_proxy`` / ``use_proxy?`` (uri gem).

Modelled: Ruby 3.x (checked against Debian's Ruby 3.1 by tests/realclients).
``Net::HTTP`` asks for the proxy of ``http://host:port`` whatever the URL's
scheme, so an https request uses ``http_proxy`` (``env`` holds that choice; code
calling ``URI("https://...").find_proxy`` itself, like open-uri, reads
``https_proxy``). Facts:
* the host is resolved first (``IPSocket.getaddress``); a 127.x or ``::1``
  address is always direct. hcpscan does not resolve names: IP literals stand
  for themselves and ``localhost`` for 127.0.0.1; other names have no address;
* entries are read with the pattern ``([^:,\\s]+)(?::(\\d+))?`` — so separators
  are commas, whitespace and colons, and IPv6 entries fall apart;
* an entry with a port applies to that port only (the URL's or its default);
* ``.x.com`` matches subdomains only (``host.end_with?``); ``x.com`` matches the
  apex and subdomains; no ``*`` wildcard at all;
* when the host has an address, an entry that ``IPAddr`` reads (``10.0.0.0/8``,
  ``10.1.2.3``) matches by address.
"""

from __future__ import annotations

import ipaddress
import re

from hcpscan.analysis.proxy.decision import LOOPBACK, Decision, direct, proxied
from hcpscan.analysis.proxy.hosts import strict_ip
from hcpscan.analysis.proxy.runtimes.base import AddressRules, Era, IPNetwork, Version
from hcpscan.analysis.proxy.target import IPAddress, Target

NAME = "ruby"
SUMMARY = "Ruby Net::HTTP: .x.com = subdomains, x.com = apex+subdomains, CIDR for resolved " \
          "addresses, host:port, no '*', loopback direct"
ERAS = (Era((3, 0, 0), (4, 0, 0), "URI::Generic#find_proxy through Net::HTTP"),)
LATEST = ERAS[-1].since

_ENTRY = re.compile(r"([^:,\s]+)(?::(\d+))?")
_PORTS = {"http": 80, "https": 443, "ftp": 21, "ws": 80, "wss": 443}


def entries(no_proxy: str) -> list[tuple[str, str, int | None]]:
    """(text as written, host part, port or None)."""
    return [(m.group(0), m.group(1), int(m.group(2)) if m.group(2) else None)
            for m in _ENTRY.finditer(no_proxy)]


def ipaddr(text: str) -> IPNetwork | None:
    """What ``IPAddr.new`` accepts among colon-free texts: an IPv4 address or CIDR."""
    addr, slash, bits = text.partition("/")
    ip = strict_ip(addr)
    if ip is None:
        return None
    if not slash:
        return ipaddress.ip_network(ip)
    try:  # IPAddr also takes a netmask after the slash
        return ipaddress.ip_network(f"{addr}/{bits}", strict=False)
    except ValueError:
        return None


def address_of(target: Target) -> IPAddress | None:
    if target.host.lower() == "localhost":
        return ipaddress.ip_address("127.0.0.1")
    return strict_ip(target.host)


def decide(no_proxy: str, target: Target, version: Version = LATEST) -> Decision:
    addr = address_of(target)
    if addr is not None and (str(addr).startswith("127.") or str(addr) == "::1"):
        return direct(NAME, LOOPBACK, "Ruby never proxies a host resolving to loopback")
    hostname = target.host.lower()
    port = target.port if target.port is not None else _PORTS.get(target.scheme)
    for raw, p_host, p_port in entries(no_proxy):
        if p_port is not None and p_port != port:
            continue
        p_lower = p_host.lower()
        if p_lower.startswith("."):
            if hostname.endswith(p_lower):
                return direct(NAME, raw, "subdomain match")
        elif ("." + hostname).endswith("." + p_lower):
            return direct(NAME, raw, "host or domain match")
        net = ipaddr(p_host)
        if addr is not None and net is not None and addr in net:
            return direct(NAME, raw, "address match")
    return proxied(NAME)


def address_rules(no_proxy: str, port: int | None,
                  version: Version = LATEST) -> AddressRules:
    found: dict[IPNetwork, str] = {ipaddress.ip_network("127.0.0.0/8"): LOOPBACK,
                                   ipaddress.ip_network("::1/128"): LOOPBACK}
    for raw, p_host, p_port in entries(no_proxy):
        net = ipaddr(p_host)
        if net is not None and (p_port is None or p_port == port):
            found.setdefault(net, raw)
    return AddressRules(networks=tuple(found), by_text=True, entries=found)
