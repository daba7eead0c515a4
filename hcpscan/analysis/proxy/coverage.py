"""Coverage: does *every* address of a CIDR (or every name of a domain) go direct?

``10.128.0.0/14`` is covered by ``10.0.0.0/8`` but not by ``10.128.0.0/16``; a
list of host names never covers a CIDR for a client that matches IP literals by
address only. The answer is exact set arithmetic over the networks the client
matches by address; clients that also compare addresses as *text* (suffix or
glob rules) are checked address by address over what the networks leave
uncovered, up to a budget (``exact`` says whether the budget sufficed).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from hcpscan.analysis.proxy.decision import Decision
from hcpscan.analysis.proxy.noproxy import NoProxyEntry, address_rules, bypasses, parse_no_proxy
from hcpscan.analysis.proxy.runtimes.base import IPNetwork
from hcpscan.analysis.proxy.target import DEFAULT_PORTS, Target
from hcpscan.model.ipspace import IPSpace

# Addresses examined one by one when text rules may match what networks do not.
ADDRESS_BUDGET = 1 << 16
# A label no NO_PROXY entry names: a match on "<probe>.domain" is a match on the domain.
PROBE_LABEL = "hcpscan-coverage-probe"


@dataclass(frozen=True, slots=True)
class Coverage:
    runtime: str
    subject: str  # the CIDR or domain asked about
    covered: bool
    exact: bool = True  # False: a text-matching client was sampled, not fully checked
    uncovered: tuple[str, ...] = ()  # sub-networks or names that still use the proxy
    example: str | None = None  # one address or name that uses the proxy
    by: tuple[str, ...] = field(default_factory=tuple)  # entries that contribute

    def to_json(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "subject": self.subject, "covered": self.covered,
                "exact": self.exact, "uncovered": list(self.uncovered), "example": self.example,
                "by": list(self.by)}


def _remainder(cidr: IPNetwork, networks: tuple[IPNetwork, ...]) -> list[IPNetwork]:
    """``cidr`` minus the union of ``networks``, as the fewest disjoint networks."""
    return (IPSpace.from_networks([cidr]) - IPSpace.from_networks(networks)).networks()


def _addresses(nets: list[IPNetwork]) -> Iterator[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    for net in nets:
        yield from (net if net.num_addresses > 1 else [net.network_address])


def covers_cidr(runtime: str, no_proxy: str | None, cidr: str | IPNetwork,
                port: int | None = None, scheme: str = "https") -> Coverage:
    """Whether every address of ``cidr`` bypasses the proxy for ``runtime``.

    ``port`` defaults to the scheme's port; it matters for ``host:port`` entries.
    """
    if no_proxy is not None and len(no_proxy) > _REMEMBERED_LENGTH:
        return _covers_cidr(runtime, no_proxy, cidr, port, scheme)
    return _remembered_cidr(runtime, no_proxy, cidr, port, scheme)


# A fleet's noProxy values repeat in every control plane, and so do its networks (each
# hosted cluster's service and pod networks are often the same defaults): a coverage, an
# immutable answer, is worked out once per question. Values up to 16 Ki characters, the
# last 4,096 questions of each kind, are remembered.
_REMEMBERED_LENGTH = 16 * 1024


def _covers_cidr(runtime: str, no_proxy: str | None, cidr: str | IPNetwork,
                 port: int | None, scheme: str) -> Coverage:
    net = ipaddress.ip_network(cidr, strict=False) if isinstance(cidr, str) else cidr
    port = port if port is not None else DEFAULT_PORTS.get(scheme)
    rules = address_rules(runtime, no_proxy, port)
    subject = str(net)
    if rules.everything:
        return Coverage(runtime, subject, True, by=("*",))
    left = _remainder(net, rules.networks)
    by = tuple(dict.fromkeys(rules.entries[n] for n in rules.networks
                             if n.version == net.version and n.overlaps(net)))  # type: ignore[arg-type]
    if not left:
        return Coverage(runtime, subject, True, by=by)
    if not rules.by_text:
        return Coverage(runtime, subject, False, uncovered=tuple(map(str, left)),
                        example=str(left[0].network_address), by=by)
    checked = 0
    for addr in _addresses(left):
        target = Target(scheme, str(addr), port, str(addr))
        if not bypasses(runtime, no_proxy, target).bypass:
            return Coverage(runtime, subject, False, uncovered=tuple(map(str, left)),
                            example=str(addr), by=by)
        checked += 1
        if checked >= ADDRESS_BUDGET:
            return Coverage(runtime, subject, True, exact=False, by=by)
    return Coverage(runtime, subject, True, by=by)


def covers_domain(runtime: str, no_proxy: str | None, domain: str, include_apex: bool = True,
                  port: int | None = None, scheme: str = "https") -> Coverage:
    """Whether ``domain``'s subdomains (and the apex, unless ``include_apex`` is
    False) all bypass the proxy — e.g. ``svc.cluster.local`` for in-cluster names."""
    if no_proxy is not None and len(no_proxy) > _REMEMBERED_LENGTH:
        return _covers_domain(runtime, no_proxy, domain, include_apex, port, scheme)
    return _remembered_domain(runtime, no_proxy, domain, include_apex, port, scheme)


def _covers_domain(runtime: str, no_proxy: str | None, domain: str, include_apex: bool,
                   port: int | None, scheme: str) -> Coverage:
    domain = domain.strip().lstrip("*").lstrip(".").rstrip(".")
    names = [f"{PROBE_LABEL}.{domain}", f"a.{PROBE_LABEL}.{domain}"]
    if include_apex:
        names.insert(0, domain)
    by: list[str] = []
    for name in names:
        decision = bypasses(runtime, no_proxy, Target(scheme, name, port, name))
        if not decision.bypass:
            shown = name.replace(PROBE_LABEL, "x")
            return Coverage(runtime, domain, False, uncovered=(shown,), example=shown,
                            by=tuple(dict.fromkeys(by)))
        if decision.matched:
            by.append(decision.matched)
    return Coverage(runtime, domain, True, by=tuple(dict.fromkeys(by)))


_remembered_cidr = lru_cache(maxsize=4096)(_covers_cidr)
_remembered_domain = lru_cache(maxsize=4096)(_covers_domain)


@dataclass(frozen=True, slots=True)
class NoProxyList:
    """A NO_PROXY value as written, and what each client decides with it.

    The one way rules, templates and CEL ask NO_PROXY questions: ``decide`` for one
    URL, ``covers`` for a whole destination - a CIDR (every address), ``.domain`` or
    ``*.domain`` (every name under it) or one host name or IP."""

    text: str | None

    @property
    def entries(self) -> tuple[NoProxyEntry, ...]:
        return parse_no_proxy(self.text)

    def decide(self, runtime: str, url: str | Target) -> Decision:
        return bypasses(runtime, self.text, url)

    def covers(self, runtime: str, destination: str) -> Coverage:
        if "/" in destination:
            return covers_cidr(runtime, self.text, destination)
        if destination.startswith((".", "*.")):
            return covers_domain(runtime, self.text, destination, include_apex=False)
        host = f"[{destination}]" if ":" in destination else destination
        decision = self.decide(runtime, f"https://{host}")
        shown = f"https://{host}"
        return Coverage(runtime, destination, decision.bypass,
                        uncovered=() if decision.bypass else (shown,),
                        example=None if decision.bypass else shown,
                        by=(decision.matched,) if decision.matched else ())
