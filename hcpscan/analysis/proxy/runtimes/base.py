"""What every runtime module provides, and the address view coverage needs."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Protocol

from hcpscan.analysis.proxy.decision import Decision
from hcpscan.analysis.proxy.target import Target

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# A release number as a tuple of three integers: "7.88" -> (7, 88, 0).
Version = tuple[int, int, int]


class VersionError(ValueError):
    """A version text that is not ``major[.minor[.patch]]``."""


def parse_version(text: str) -> Version:
    parts = text.strip().lstrip("vV").split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise VersionError(f"{text!r} is not a version (write e.g. 8.5 or 8.5.0)")
    numbers = [int(p) for p in parts] + [0] * (3 - len(parts))
    return numbers[0], numbers[1], numbers[2]


def version_text(version: Version) -> str:
    major, minor, patch = version
    return f"{major}.{minor}" + (f".{patch}" if patch else "")


@dataclass(frozen=True, slots=True)
class Era:
    """A range of releases ``[since, until)`` over which a client reads NO_PROXY the same way."""

    since: Version
    until: Version  # first release outside the era (the next major for the newest era)
    changes: str  # what this era does differently from the one before it

    def holds(self, version: Version) -> bool:
        return self.since <= version < self.until

    @property
    def label(self) -> str:
        return f">= {version_text(self.since)}, < {version_text(self.until)}"


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

    @property
    def ERAS(self) -> tuple[Era, ...]:  # oldest first; the newest is the default
        ...  # read-only, so a module's literal tuple of one or three eras conforms

    def decide(self, no_proxy: str, target: Target, version: Version) -> Decision: ...

    def address_rules(self, no_proxy: str, port: int | None, version: Version) -> AddressRules: ...


def host_network(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> IPNetwork:
    return ipaddress.ip_network(ip)
