"""What every runtime module provides, and the address view coverage needs."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Protocol

from hcpscan.analysis.proxy.decision import Decision
from hcpscan.analysis.proxy.target import Target

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class AddressRules:
    """How a client treats IP-literal hosts, for coverage questions.

    ``networks`` bypass by address arithmetic (CIDR or exact-IP entries, built-in
    loopback rules); ``by_text`` says the client may also match an address by
    comparing its text (suffix or glob rules), which only an address-by-address
    check can settle.
    """

    everything: bool = False
    networks: tuple[IPNetwork, ...] = ()
    by_text: bool = False
    entries: dict[IPNetwork, str] = field(default_factory=dict)  # network -> entry as written


class Runtime(Protocol):
    NAME: str
    SUMMARY: str

    def decide(self, no_proxy: str, target: Target) -> Decision: ...

    def address_rules(self, no_proxy: str, port: int | None) -> AddressRules: ...


def host_network(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> IPNetwork:
    return ipaddress.ip_network(ip)
