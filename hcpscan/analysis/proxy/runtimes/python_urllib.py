"""Python ``urllib.request.proxy_bypass_environment`` (CPython 3.x on Linux).

Modelled: CPython 3.8 onwards, one behaviour; tests/realclients checks the running one.

Facts:
* the value ``*`` (exactly) bypasses everything; otherwise entries are split on
  commas, stripped, lower-cased, and *all* leading dots dropped;
* the host compared is the request's ``host[:port]`` as written (IPv6 in
  brackets) and the same without its port: an entry matches when it equals
  either, or either ends with ``.entry`` (so ``x.com`` = apex+subdomains and an
  entry with a port matches only that explicit port);
* no CIDR, no wildcards: IP literals are compared as text.
"""

from __future__ import annotations

import re

from hcpscan.analysis.proxy.decision import Decision, direct, proxied
from hcpscan.analysis.proxy.runtimes.base import AddressRules, Era, Version
from hcpscan.analysis.proxy.target import Target

NAME = "python"
SUMMARY = "Python urllib: x.com/.x.com = apex+subdomains, host:port, '*' only alone, no CIDR"
ERAS = (Era((3, 8, 0), (4, 0, 0), "proxy_bypass_environment"),)
LATEST = ERAS[-1].since

_PORT = re.compile(r"(.*):([0-9]*)", re.DOTALL)


def split_port(host: str) -> tuple[str, str | None]:
    """urllib's own split: the text after the last ``:`` when it is all digits."""
    m = _PORT.fullmatch(host)
    if m and m.group(2):
        return m.group(1), m.group(2)
    return host, None


def bypass_host(no_proxy: str, host: str) -> str | None:
    """The entry that makes ``host`` (``host[:port]`` text) go direct, or None."""
    if no_proxy == "*":
        return "*"
    host = host.lower()
    hostonly, _port = split_port(host)
    for piece in no_proxy.split(","):
        name = piece.strip()
        if not name:
            continue
        bare = name.lstrip(".").lower()
        if bare in (hostonly, host):
            return name
        if hostonly.endswith("." + bare) or host.endswith("." + bare):
            return name
    return None


def decide(no_proxy: str, target: Target, version: Version = LATEST) -> Decision:
    matched = bypass_host(no_proxy, target.netloc)
    if matched is None:
        return proxied(NAME)
    return direct(NAME, matched, "'*'" if matched == "*" else "name or domain-suffix match")


def address_rules(no_proxy: str, port: int | None,
                  version: Version = LATEST) -> AddressRules:
    return AddressRules(everything=no_proxy == "*", by_text=True)
