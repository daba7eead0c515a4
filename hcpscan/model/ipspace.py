"""Sets of IP addresses: exact sets of IPv4 and IPv6 ranges, the one IP-space type of
hcpscan.

An ``IPSpace`` is a normalised tuple of disjoint closed integer ranges, each
tagged with its IP version, so ``0.0.0.0/0`` and ``::/0`` never mix. The
reachability graph's external peers are the disjoint pieces (``cut``) that
every CIDR the inputs mention splits the whole space into; the perimeter's
allowed sources and NO_PROXY coverage (what part of a CIDR a client's entries
leave to the proxy) are set arithmetic on the same type.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from hcpscan.model import intervals
from hcpscan.model.intervals import Interval

Range = tuple[int, int, int]  # (version, first, last)

_MAX = {4: (1 << 32) - 1, 6: (1 << 128) - 1}
# the addresses an internal load balancer gets and is reached from: RFC 1918, RFC 6598
# (shared address space), IPv6 unique local
PRIVATE_ADDRESSES = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")


class AddressError(ValueError):
    """A CIDR or address that cannot be read."""


def _normalise(ranges: Iterable[Range]) -> tuple[Range, ...]:
    by_version: dict[int, list[Interval]] = {4: [], 6: []}
    for version, lo, hi in ranges:
        by_version[version].append((lo, hi))
    return _join({v: intervals.normalise(found, 0, _MAX[v]) for v, found in by_version.items()})


def _split(ranges: tuple[Range, ...]) -> dict[int, tuple[Interval, ...]]:
    """Per IP version, the plain intervals (ranges are sorted by version first)."""
    cut_at = next((k for k, (v, _, _) in enumerate(ranges) if v == 6), len(ranges))
    return {4: tuple((lo, hi) for _, lo, hi in ranges[:cut_at]),
            6: tuple((lo, hi) for _, lo, hi in ranges[cut_at:])}


def _join(by_version: dict[int, tuple[Interval, ...]]) -> tuple[Range, ...]:
    return tuple((v, lo, hi) for v in (4, 6) for lo, hi in by_version[v])


def parse_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An IPv4 dotted quad (no leading zeros) or an IPv6 literal without a zone, as inet_pton
    and Go's ``net.ParseIP`` read it; None for anything else."""
    if not text or "%" in text:
        return None
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def parse_network(text: str, strict: bool = True) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """A CIDR (or a bare address, as a /32 or /128). With ``strict`` host bits must be
    zero; without, they are masked off (``10.0.0.1/8`` is ``10.0.0.0/8``), as the
    Kubernetes API server does for ipBlock (it accepts such CIDRs)."""
    try:
        return ipaddress.ip_network(str(text).strip(), strict=strict)
    except ValueError as exc:
        raise AddressError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class IPSpace:
    ranges: tuple[Range, ...] = ()

    @classmethod
    def from_cidr(cls, cidr: str) -> IPSpace:
        if cls is IPSpace and isinstance(cidr, str):
            return _from_cidr(cidr)  # read once per distinct text (an error is raised anew)
        net = parse_network(cidr)
        return cls(((net.version, int(net.network_address), int(net.broadcast_address)),))

    @classmethod
    def from_networks(cls, networks: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network]
                      ) -> IPSpace:
        return cls(_normalise((n.version, int(n.network_address), int(n.broadcast_address))
                              for n in networks))

    @classmethod
    def from_cidrs(cls, cidrs: Iterable[str]) -> IPSpace:
        out = cls()
        for cidr in cidrs:
            out = out.union(cls.from_cidr(cidr))
        return out

    @classmethod
    def union_of(cls, spaces: Iterable[IPSpace]) -> IPSpace:
        """Every address of any of ``spaces`` (one merge, however many spaces)."""
        return cls(_normalise([r for space in spaces for r in space.ranges]))

    @classmethod
    def from_range(cls, first: str, last: str) -> IPSpace:
        a, b = ipaddress.ip_address(first), ipaddress.ip_address(last)
        if a.version != b.version:
            raise AddressError(f"{first}-{last} mixes IPv4 and IPv6")
        return cls(_normalise([(a.version, int(a), int(b))]))

    @classmethod
    def all_v4(cls) -> IPSpace:
        return cls(((4, 0, _MAX[4]),))

    @classmethod
    def all_v6(cls) -> IPSpace:
        return cls(((6, 0, _MAX[6]),))

    @classmethod
    def everything(cls) -> IPSpace:
        return cls(((4, 0, _MAX[4]), (6, 0, _MAX[6])))

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def __iter__(self) -> Iterator[Range]:
        return iter(self.ranges)

    @property
    def versions(self) -> set[int]:
        return {v for v, _, _ in self.ranges}

    def union(self, other: IPSpace) -> IPSpace:
        return IPSpace(_normalise(self.ranges + other.ranges))

    def intersection(self, other: IPSpace) -> IPSpace:
        # One merge walk over both range lists (sorted by version, then address): the
        # reachability queries intersect a million times per large scan.
        a, b = self.ranges, other.ranges
        if not a or not b:
            return _EMPTY
        if a == b:
            return self
        out: list[Range] = []
        i = j = 0
        while i < len(a) and j < len(b):
            va, la, ha = a[i]
            vb, lb, hb = b[j]
            if va != vb:
                if va < vb:
                    i += 1
                else:
                    j += 1
                continue
            first, last = max(la, lb), min(ha, hb)
            if first <= last:
                out.append((va, first, last))
            if ha < hb:
                i += 1
            else:
                j += 1
        return IPSpace(tuple(out))

    def complement(self) -> IPSpace:
        mine = _split(self.ranges)
        return IPSpace(_join({v: intervals.complement(mine[v], 0, _MAX[v]) for v in (4, 6)}))

    def difference(self, other: IPSpace) -> IPSpace:
        return self.intersection(other.complement())

    def contains(self, other: IPSpace) -> bool:
        """True when every address of ``other`` lies in this space."""
        # Ranges are merged (no two touch), so each range of ``other`` lies inside one
        # range of this space or some address of it is outside.
        mine = self.ranges
        i = 0
        for version, first, last in other.ranges:
            while i < len(mine) and (mine[i][0], mine[i][2]) < (version, first):
                i += 1
            if i == len(mine):
                return False
            v, lo, hi = mine[i]
            if v != version or lo > first or hi < last:
                return False
        return True

    def overlaps(self, other: IPSpace) -> bool:
        a, b = self.ranges, other.ranges
        i = j = 0
        while i < len(a) and j < len(b):
            va, la, ha = a[i]
            vb, lb, hb = b[j]
            if (va, ha) < (vb, lb):
                i += 1
            elif (vb, hb) < (va, la):
                j += 1
            else:
                return True
        return False

    __or__ = union
    __and__ = intersection
    __sub__ = difference

    # -- presentation -----------------------------------------------------------

    def range_strings(self) -> list[str]:
        """Each contiguous range as ``first-last`` (the connection-list notation)."""
        return [f"{_addr(v, lo)}-{_addr(v, hi)}" for v, lo, hi in self.ranges]

    def networks(self) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
        """The fewest CIDR blocks that make up the set, in address order."""
        return list(_networks_of(self.ranges))

    def cidrs(self) -> list[str]:
        return list(_cidrs_of(self.ranges))

    def __str__(self) -> str:
        if not self.ranges:
            return "(no addresses)"
        cidrs = self.cidrs()
        if len(cidrs) <= len(self.ranges) * 2:
            return ", ".join(cidrs)
        return ", ".join(self.range_strings())


_EMPTY = IPSpace()


# A CIDR's set, read once per distinct text (bounded): each hosted cluster's machine
# network is read again by every rule and by the exposures (N = 500: 4,000 parses).
@lru_cache(maxsize=4096)
def _from_cidr(cidr: str) -> IPSpace:
    net = parse_network(cidr)
    return IPSpace(((net.version, int(net.network_address), int(net.broadcast_address)),))


# A set's CIDR blocks, worked out once per distinct set (bounded): findings, evidence and
# the report name the same worker and outside ranges for every hosted cluster, and
# summarising a range parses each address again (N = 500: 11,000 asks).
@lru_cache(maxsize=4096)
def _networks_of(ranges: tuple[Range, ...]
                 ) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    out: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for v, lo, hi in ranges:
        first, last = ipaddress.ip_address(_addr(v, lo)), ipaddress.ip_address(_addr(v, hi))
        out.extend(ipaddress.summarize_address_range(first, last))  # type: ignore[arg-type]
    return tuple(out)


@lru_cache(maxsize=4096)
def _cidrs_of(ranges: tuple[Range, ...]) -> tuple[str, ...]:
    return tuple(str(n) for n in _networks_of(ranges))


def _addr(version: int, value: int) -> str:
    return str(ipaddress.IPv4Address(value) if version == 4 else ipaddress.IPv6Address(value))


def cut(spaces: Iterable[IPSpace], universe: IPSpace) -> list[IPSpace]:
    """The disjoint contiguous pieces that ``spaces`` cut ``universe`` into.

    A boundary is placed exactly where membership in some space changes, so
    each piece is either wholly inside or wholly outside every given space.
    """
    bounds: dict[int, set[int]] = {4: set(), 6: set()}
    for space in spaces:
        for v, lo, hi in space.ranges:
            bounds[v].add(lo)
            bounds[v].add(hi + 1)
    pieces: list[IPSpace] = []
    for v, lo, hi in universe.ranges:
        starts = sorted({lo} | {b for b in bounds[v] if lo < b <= hi})
        for k, start in enumerate(starts):
            end = starts[k + 1] - 1 if k + 1 < len(starts) else hi
            pieces.append(IPSpace(((v, start, end),)))
    return pieces
