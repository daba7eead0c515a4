"""Python ``requests`` (``requests.utils.should_bypass_proxies``, 2.x).

Modelled: 2.32 onwards, one behaviour (older releases are not modelled: asking
for one is a usage error); tests/realclients checks the installed requests.

Facts:
* spaces are removed from the whole value, then it is split on commas;
* for an IPv4 host: an entry that is a valid ``a.b.c.d/n`` (n in 1..32) matches by
  address; otherwise only an entry equal to the host text matches;
* for any other host (names and IPv6, without brackets): leading dots of the
  entry are dropped, then it matches when it equals the host or ``host:port``
  (port only when written in the URL) or either ends with ``.entry``
  (2.32+; older releases compared a plain string suffix, ``ample.com`` matching
  ``example.com``);
* then urllib's ``proxy_bypass`` runs on the bare host name as a second chance
  (no port, IPv6 without brackets), with the same value.
"""

from __future__ import annotations

import ipaddress
import socket

from hcpscan.analysis.proxy.decision import Decision, direct, proxied
from hcpscan.analysis.proxy.runtimes import python_urllib
from hcpscan.analysis.proxy.runtimes.base import AddressRules, Era, IPNetwork, Version
from hcpscan.analysis.proxy.target import Target

NAME = "requests"
SUMMARY = "requests: IPv4 CIDR, x.com/.x.com = apex+subdomains, host:port, " \
          "then urllib's rules"
ERAS = (Era((2, 32, 0), (3, 0, 0), "dot-bounded domain suffixes"),)
LATEST = ERAS[-1].since


def inet_aton(text: str) -> ipaddress.IPv4Address | None:
    """The C library's lenient IPv4 reader requests uses (``10.1``, ``0x7f.1`` pass)."""
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except (OSError, ValueError):
        return None


def _cidr(entry: str) -> IPNetwork | None:
    if entry.count("/") != 1:
        return None
    addr, _, bits = entry.partition("/")
    try:
        prefix = int(bits)
    except ValueError:
        return None
    base = inet_aton(addr)
    if base is None or not 1 <= prefix <= 32:
        return None
    return ipaddress.ip_network(f"{base}/{prefix}", strict=False)


def entries(no_proxy: str) -> list[str]:
    return [e for e in no_proxy.replace(" ", "").split(",") if e]


def decide(no_proxy: str, target: Target, version: Version = LATEST) -> Decision:
    hostname = target.host.lower()
    if not hostname:
        return direct(NAME, "", "a URL without a host is never proxied")
    ip = inet_aton(hostname)
    for entry in entries(no_proxy):
        if ip is not None:
            net = _cidr(entry)
            if net is not None:
                if ip in net:
                    return direct(NAME, entry, "inside the CIDR")
            elif hostname == entry:
                return direct(NAME, entry, "same address")
        else:
            with_port = hostname + (f":{target.port}" if target.port else "")
            bare = entry.lstrip(".")
            if bare in (hostname, with_port):
                return direct(NAME, entry, "same host")
            if hostname.endswith("." + bare) or with_port.endswith("." + bare):
                return direct(NAME, entry, "domain-suffix match")
    matched = python_urllib.bypass_host(no_proxy, hostname)
    if matched is not None:
        return direct(NAME, matched, "urllib proxy_bypass fallback")
    return proxied(NAME)


def address_rules(no_proxy: str, port: int | None,
                  version: Version = LATEST) -> AddressRules:
    found: dict[IPNetwork, str] = {}
    for entry in entries(no_proxy):
        net = _cidr(entry)
        if net is not None:
            found.setdefault(net, entry)
    return AddressRules(everything=no_proxy == "*", networks=tuple(found), by_text=True,
                        entries=found)
