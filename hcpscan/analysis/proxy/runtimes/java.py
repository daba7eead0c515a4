"""Java ``sun.net.spi.DefaultProxySelector`` with ``http.nonProxyHosts``.

Modelled: JDK 11 to 25, one behaviour; tests/realclients checks the installed JDK.

Java reads no environment variable: the list is the system property
``http.nonProxyHosts`` (used for https too). Facts:
* entries are separated by ``|`` only and are not trimmed;
* an entry may start and/or end with ``*`` (any text); anything else is literal;
  the whole host must match, case-insensitively;
* the host is ``URI.getHost()``: IPv6 keeps its brackets;
* when the property is unset the default ``localhost|127.*|[::1]|0.0.0.0|[::0]``
  applies; when it is set and non-empty, that default is *appended*; when it is
  set but empty, nothing bypasses — not even localhost;
* no CIDR, no ports.
"""

from __future__ import annotations

import ipaddress
import re

from hcpscan.analysis.proxy.decision import DEFAULT_LIST, Decision, direct, proxied
from hcpscan.analysis.proxy.hosts import strict_ip
from hcpscan.analysis.proxy.runtimes.base import AddressRules, Era, IPNetwork, Version
from hcpscan.analysis.proxy.target import Target

NAME = "java"
SUMMARY = "Java http.nonProxyHosts: '|'-separated globs (*.x.com, 10.*), whole-host match, " \
          "no CIDR, no ports, no env"
ERAS = (Era((11, 0, 0), (26, 0, 0), "DefaultProxySelector with the JDK default list appended"),)
LATEST = ERAS[-1].since

DEFAULT = "localhost|127.*|[::1]|0.0.0.0|[::0]"


def disjuncts(non_proxy_hosts: str | None) -> list[tuple[str, bool]]:
    """(pattern, comes from the JDK default) in the order Java joins them."""
    if non_proxy_hosts is None:
        return [(d, True) for d in DEFAULT.split("|")]
    if non_proxy_hosts == "":
        return []
    return [(d, False) for d in non_proxy_hosts.split("|") if d] + \
           [(d, True) for d in DEFAULT.split("|")]


def glob_regex(pattern: str) -> re.Pattern[str]:
    pattern = pattern.lower()
    if pattern == "*":
        return re.compile(".*", re.DOTALL)
    lead, trail = pattern.startswith("*"), pattern.endswith("*")
    core = pattern[1 if lead else 0: len(pattern) - 1 if trail else len(pattern)]
    return re.compile(("(?s:.*)" if lead else "") + re.escape(core) + ("(?s:.*)" if trail else ""))


def decide(non_proxy_hosts: str | None, target: Target, version: Version = LATEST) -> Decision:
    host = target.url_host.lower()
    if not host:
        return proxied(NAME, "no host")
    for pattern, default in disjuncts(non_proxy_hosts):
        if glob_regex(pattern).fullmatch(host):
            matched = f"{DEFAULT_LIST} {pattern}" if default else pattern
            return direct(NAME, matched, "matches the JDK default" if default else "glob match")
    return proxied(NAME)


def _octets(values: list[int], prefixlen: int) -> IPNetwork:
    padded = values + [0] * (4 - len(values))
    return ipaddress.ip_network(f"{'.'.join(map(str, padded))}/{prefixlen}")


def _prefix_networks(prefix: str) -> list[IPNetwork]:
    """IPv4 networks whose dotted text starts with ``prefix`` (``10.*``, ``192.168.1*``)."""
    *whole, partial = prefix.split(".")
    if len(whole) > 3 or not all(p.isdigit() and str(int(p)) == p and int(p) < 256 for p in whole):
        return []
    base = [int(p) for p in whole]
    if partial == "":
        return [_octets(base, 8 * len(base))] if base else []
    if not partial.isdigit():
        return []
    # "10.1*" is 10.1.x.x, 10.10-19.x.x and 10.100-199.x.x
    return [_octets(base + [v], 8 * (len(base) + 1)) for v in range(256)
            if str(v).startswith(partial)]


def address_rules(non_proxy_hosts: str | None, port: int | None,
                  version: Version = LATEST) -> AddressRules:
    found: dict[IPNetwork, str] = {}
    for pattern, _default in disjuncts(non_proxy_hosts):
        if pattern == "*":
            return AddressRules(everything=True)
        if pattern.endswith("*") and not pattern.startswith("*"):
            for net in _prefix_networks(pattern[:-1]):
                found.setdefault(net, pattern)
        elif "*" not in pattern:
            text = pattern[1:-1] if pattern.startswith("[") and pattern.endswith("]") else pattern
            ip = strict_ip(text)
            # the host text must equal the pattern: only the canonical spelling matches
            if ip is not None and (ip.version == 4 or ip.compressed == text.lower()):
                found.setdefault(ipaddress.ip_network(ip), pattern)
    return AddressRules(networks=tuple(found), by_text=True, entries=found)
