"""curl / libcurl ``Curl_check_noproxy`` (lib/noproxy.c).

Versions modelled (``ERAS``), 7.86 (CIDR support) onwards:
* 7.86 .. 8.8: a blank not followed by a comma separates entries too
  ("a b" = "a,b"; observed with Debian's curl 7.88);
* 8.9 .. 8.17: a blank not followed by a comma ends the list ("a b" = "a");
  IPv6 CIDR entries (``fd00::/8``) never match (observed with 7.88; fixed in 8.18);
* 8.18 onwards (the default): IPv6 CIDR entries match.

Facts common to all:
* the list is only skipped as a whole when it is exactly ``*``;
* tokens are separated by commas; blanks around a token are passed over;
* for a host name, one trailing and one leading dot of a token are ignored and
  the token matches the name or a domain tail (``x.com`` = apex+subdomains); the
  host's own trailing dot is ignored; case-insensitive; no ports, no wildcards;
* for an IPv4/IPv6 host, tokens are addresses with an optional ``/bits``
  (decimal only, nothing after it); ``/0`` (or none) means the exact address;
  tokens of 128 bytes or more never match; names never match addresses.
"""

from __future__ import annotations

import ipaddress

from hcpscan.analysis.proxy.decision import Decision, direct, proxied
from hcpscan.analysis.proxy.hosts import strict_ip
from hcpscan.analysis.proxy.runtimes.base import AddressRules, Era, IPNetwork, Version
from hcpscan.analysis.proxy.target import Target

NAME = "curl"
SUMMARY = "curl: x.com/.x.com = apex+subdomains, CIDR (7.86+), '*' only alone, no ports"

BLANK_ENDS_LIST = (8, 9, 0)
IPV6_CIDR = (8, 18, 0)
ERAS = (
    Era((7, 86, 0), BLANK_ENDS_LIST, "CIDR entries; blanks separate entries like commas; "
        "IPv6 CIDR entries never match"),
    Era(BLANK_ENDS_LIST, IPV6_CIDR, "a blank not followed by a comma ends the list"),
    Era(IPV6_CIDR, (9, 0, 0), "IPv6 CIDR entries match"),
)

_BLANK = " \t"


def tokens(no_proxy: str, version: Version = IPV6_CIDR) -> list[str]:
    out: list[str] = []
    i, n = 0, len(no_proxy)
    while i < n:
        while i < n and no_proxy[i] in _BLANK:
            i += 1
        start = i
        while i < n and no_proxy[i] not in _BLANK and no_proxy[i] != ",":
            i += 1
        if i > start:
            out.append(no_proxy[start:i])
        while i < n and no_proxy[i] in _BLANK:
            i += 1
        if i >= n:
            break
        if no_proxy[i] != ",":
            if version >= BLANK_ENDS_LIST:
                break
            continue
        while i < n and no_proxy[i] == ",":
            i += 1
    return out


def _host_match(token: str, name: str) -> bool:
    if token.endswith("."):
        token = token[:-1]
    if token.startswith("."):
        token = token[1:]
    name_l, tok_l = name.lower(), token.lower()
    if len(tok_l) == len(name_l):
        return tok_l == name_l
    if len(tok_l) < len(name_l):
        cut = len(name_l) - len(tok_l)
        return name_l[cut - 1] == "." and name_l[cut:] == tok_l
    return False


def ip_token(token: str, family: int, version: Version = IPV6_CIDR) -> IPNetwork | None:
    """The network an IP token stands for (None when curl cannot use it)."""
    if len(token) >= 128:
        return None
    addr, slash, bits_text = token.partition("/")
    bits = 0
    if slash:
        if not bits_text.isdigit() or int(bits_text) > 128:
            return None
        bits = int(bits_text)
    ip = strict_ip(addr)
    if ip is None or ip.version != family:
        return None
    if family == 6 and slash and version < IPV6_CIDR:
        return None  # before 8.18 an IPv6 entry with /bits never matched
    if family == 4:
        if bits > 32:
            return None
        prefix = bits if bits and bits != 32 else 32  # /0 compares the exact address
    else:
        prefix = bits or 128
    return ipaddress.ip_network(f"{ip}/{prefix}", strict=False)


def decide(no_proxy: str, target: Target, version: Version = IPV6_CIDR) -> Decision:
    name = target.host.partition("%")[0] if target.is_ipv6 else target.host
    if not name or not no_proxy:
        return proxied(NAME, "empty NO_PROXY")
    if no_proxy == "*":
        return direct(NAME, "*", "the list is exactly '*'")
    ip = strict_ip(name)
    if ip is None and name.endswith("."):
        name = name[:-1]
    for token in tokens(no_proxy, version):
        if ip is None:
            if _host_match(token, name):
                return direct(NAME, token, "domain match")
        else:
            net = ip_token(token, ip.version, version)
            if net is not None and ip in net:
                return direct(NAME, token, "address match" if "/" not in token else "inside the CIDR")
    return proxied(NAME)


def address_rules(no_proxy: str, port: int | None,
                  version: Version = IPV6_CIDR) -> AddressRules:
    if no_proxy == "*":
        return AddressRules(everything=True)
    entries: dict[IPNetwork, str] = {}
    for token in tokens(no_proxy, version):
        for family in (4, 6):
            net = ip_token(token, family, version)
            if net is not None:
                entries.setdefault(net, token)
    return AddressRules(networks=tuple(entries), entries=entries)
