"""GNU Wget (src/host.c ``sufmatch``, src/init.c ``sepstring``; 1.20+).

Modelled: Wget 1.20 onwards (not wget2), one behaviour; tests/realclients checks
the installed wget.

Facts:
* only the lower-case ``no_proxy`` (and ``http_proxy`` ...) variables are read;
* the value is split on commas; blanks after a comma are skipped, blanks before
  one stay part of the entry;
* an entry matches when the host ends with it and the match starts at the
  host's beginning or just after a dot, or the entry itself starts with a dot
  (``x.com`` = apex+subdomains, ``.x.com`` = subdomains); case-insensitive;
* no CIDR, no ports, no wildcards: IP literals are compared as text.
"""

from __future__ import annotations

from hcpscan.analysis.proxy.decision import Decision, direct, proxied
from hcpscan.analysis.proxy.runtimes.base import AddressRules, Era, Version
from hcpscan.analysis.proxy.target import Target

NAME = "wget"
SUMMARY = "wget: suffix match on a dot boundary, lower-case no_proxy only, no CIDR, no ports"
ERAS = (Era((1, 20, 0), (2, 0, 0), "GNU Wget 1.x (not wget2)"),)
LATEST = ERAS[-1].since


def entries(no_proxy: str) -> list[str]:
    if not no_proxy:
        return []
    out, start, i = [], 0, 0
    while i < len(no_proxy):
        if no_proxy[i] == ",":
            out.append(no_proxy[start:i])
            i += 1
            while i < len(no_proxy) and no_proxy[i].isspace():
                i += 1
            start = i
        else:
            i += 1
    out.append(no_proxy[start:])
    return out


def _sufmatch(entry: str, host: str) -> bool:
    entry_l, host_l = entry.lower(), host.lower()
    if len(host_l) < len(entry_l) or not host_l.endswith(entry_l):
        return False
    rest = len(host_l) - len(entry_l)
    return rest == 0 or host_l[rest - 1] == "." or entry_l.startswith(".")


def decide(no_proxy: str, target: Target, version: Version = LATEST) -> Decision:
    for entry in entries(no_proxy):
        if _sufmatch(entry, target.host):
            return direct(NAME, entry, "domain-suffix match")
    return proxied(NAME)


def address_rules(no_proxy: str, port: int | None,
                  version: Version = LATEST) -> AddressRules:
    return AddressRules(by_text=True)
