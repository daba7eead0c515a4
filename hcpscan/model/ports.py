"""Ports and connection sets: exact interval sets per transport protocol.

A ``PortSet`` is a normalised tuple of disjoint, non-adjacent closed intervals
inside 1-65535. A ``ConnectionSet`` maps each of TCP, UDP and SCTP to a
``PortSet``. Both are immutable values with union, intersection and
difference, so NetworkPolicy rules, Services and perimeter rules all reduce to
set algebra.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from hcpscan.model import intervals
from hcpscan.model.intervals import Interval

MIN_PORT = 1
MAX_PORT = 65535
PROTOCOLS: tuple[str, ...] = ("SCTP", "TCP", "UDP")  # the order connection strings use
NODE_PORT_RANGE = (30000, 32767)  # kube-apiserver's default --service-node-port-range



def _normalise(port_ranges: Iterable[Interval]) -> tuple[Interval, ...]:
    return intervals.normalise(port_ranges, MIN_PORT, MAX_PORT)


@dataclass(frozen=True, slots=True)
class PortSet:
    """A set of port numbers, kept as sorted disjoint closed intervals."""

    intervals: tuple[Interval, ...] = ()

    @classmethod
    def of(cls, *intervals: Interval) -> PortSet:
        return cls(_normalise(intervals))

    @classmethod
    def single(cls, port: int) -> PortSet:
        return cls.of((port, port))

    @classmethod
    def all(cls) -> PortSet:
        return cls(((MIN_PORT, MAX_PORT),))

    @classmethod
    def empty(cls) -> PortSet:
        return cls(())

    def __bool__(self) -> bool:
        return bool(self.intervals)

    def __contains__(self, port: object) -> bool:
        return isinstance(port, int) and intervals.contains_point(self.intervals, port)

    def __iter__(self) -> Iterator[Interval]:
        return iter(self.intervals)

    @property
    def is_all(self) -> bool:
        return self.intervals == ((MIN_PORT, MAX_PORT),)

    def union(self, other: PortSet) -> PortSet:
        merged = intervals.union(self.intervals, other.intervals, MIN_PORT, MAX_PORT)
        return self if merged is self.intervals else other if merged is other.intervals else PortSet(merged)

    def intersection(self, other: PortSet) -> PortSet:
        return PortSet(intervals.intersection(self.intervals, other.intervals))

    def complement(self) -> PortSet:
        return PortSet(intervals.complement(self.intervals, MIN_PORT, MAX_PORT))

    def difference(self, other: PortSet) -> PortSet:
        return PortSet(intervals.difference(self.intervals, other.intervals, MIN_PORT, MAX_PORT))

    __or__ = union
    __and__ = intersection
    __sub__ = difference

    def __str__(self) -> str:
        return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in self.intervals)


@dataclass(frozen=True, slots=True)
class ConnectionSet:
    """Allowed transport connections: a ``PortSet`` per protocol (absent = none)."""

    by_protocol: tuple[tuple[str, PortSet], ...] = ()

    @classmethod
    def from_mapping(cls, ports: Mapping[str, PortSet]) -> ConnectionSet:
        return cls(tuple((p, ports[p]) for p in PROTOCOLS if p in ports and ports[p]))

    @classmethod
    def all(cls) -> ConnectionSet:
        return _ALL

    @classmethod
    def none(cls) -> ConnectionSet:
        return _NONE

    @classmethod
    def of(cls, protocol: str, ports: PortSet) -> ConnectionSet:
        return cls.from_mapping({normalise_protocol(protocol): ports})

    @classmethod
    def port(cls, protocol: str, port: int) -> ConnectionSet:
        return cls.of(protocol, PortSet.single(port))

    def ports(self, protocol: str) -> PortSet:
        for proto, ports in self.by_protocol:
            if proto == protocol:
                return ports
        return PortSet.empty()

    def as_mapping(self) -> dict[str, PortSet]:
        return dict(self.by_protocol)

    def __bool__(self) -> bool:
        return bool(self.by_protocol)

    @property
    def is_all(self) -> bool:
        return self == _ALL

    def allows(self, protocol: str, port: int) -> bool:
        # asked hundreds of thousands of times per large scan: the protocol's intervals
        # read in place (what ``port in self.ports(normalise_protocol(protocol))`` gives)
        if protocol not in PROTOCOLS:  # a tuple: compared by ==, so any value may be asked
            protocol = normalise_protocol(protocol)
        for proto, ports in self.by_protocol:
            if proto == protocol:
                if not isinstance(port, int):
                    return False
                for first, last in ports.intervals:
                    if first <= port <= last:
                        return True
                return False
        return False

    def _combine(self, other: ConnectionSet, op: str) -> ConnectionSet:
        mine, theirs = self.as_mapping(), other.as_mapping()
        out = {}
        for proto in PROTOCOLS:
            a, b = mine.get(proto, PortSet.empty()), theirs.get(proto, PortSet.empty())
            out[proto] = getattr(a, op)(b)
        return ConnectionSet.from_mapping(out)

    def union(self, other: ConnectionSet) -> ConnectionSet:
        if not other.by_protocol or self is other:
            return self
        if not self.by_protocol:
            return other
        return self._combine(other, "union")

    def intersection(self, other: ConnectionSet) -> ConnectionSet:
        if self.is_all:
            return other
        if other.is_all:
            return self
        return self._combine(other, "intersection")

    def difference(self, other: ConnectionSet) -> ConnectionSet:
        return self._combine(other, "difference")

    __or__ = union
    __and__ = intersection
    __sub__ = difference

    def __str__(self) -> str:
        """The connection-list notation: ``All Connections`` or ``TCP 80,443,UDP 53``."""
        if self.is_all:
            return "All Connections"
        if not self.by_protocol:
            return "No Connections"
        return ",".join(f"{proto} {ports}" for proto, ports in self.by_protocol)


_ALL = ConnectionSet(tuple((p, PortSet.all()) for p in PROTOCOLS))
_NONE = ConnectionSet(())


def normalise_protocol(protocol: object) -> str:
    """Kubernetes protocol names are upper case; a missing protocol means TCP. Anything
    else (a number, a list) comes back as text, which no protocol name equals."""
    if protocol is None or protocol == "":
        return "TCP"
    return protocol.upper() if isinstance(protocol, str) else repr(protocol)


def is_known_protocol(protocol: str | None) -> bool:
    return normalise_protocol(protocol) in PROTOCOLS


def union_all(sets: Iterable[ConnectionSet]) -> ConnectionSet:
    out = _NONE
    for item in sets:
        out = out.union(item)
        if out.is_all:
            break
    return out
