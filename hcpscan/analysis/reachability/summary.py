"""The connection list folded per namespace: what a person reads in one screen.

A whole must-gather lists thousands of lines (every pair of an HCP namespace open
to every other); what matters fits in a screen: which workloads outside addresses
and the ingress controller reach and on which ports, and per namespace whether it
is open within itself, and what it exchanges with outside and other namespaces.
The counts are exact (pairs and workloads of the list); connections of a group are
the union of its pairs' connections, and ``alike`` says whether every pair has the
same ones.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from hcpscan.analysis.reachability.connlist import INGRESS_CONTROLLER, Connection
from hcpscan.model.ports import ConnectionSet

EXTERNAL = "[External]"


@dataclass(slots=True)
class Flow:
    """Pairs between two groups: how many, their connections (union), and whether alike."""

    pairs: int = 0
    connections: ConnectionSet = field(default_factory=ConnectionSet.none)
    kinds: set[str] = field(default_factory=set)
    workloads: set[str] = field(default_factory=set)  # of the namespace the flow belongs to

    def add(self, conn: Connection, workload: str) -> None:
        self.pairs += 1
        self.connections = self.connections.union(conn.connections)
        self.kinds.add(str(conn.connections))
        self.workloads.add(workload)

    @property
    def alike(self) -> bool:
        return len(self.kinds) == 1


@dataclass(slots=True)
class NamespaceSummary:
    cluster: str
    namespace: str
    workloads: set[str] = field(default_factory=set)
    within: Flow = field(default_factory=Flow)
    from_outside: Flow = field(default_factory=Flow)
    to_outside: Flow = field(default_factory=Flow)
    from_ingress: Flow = field(default_factory=Flow)
    from_namespaces: dict[str, Flow] = field(default_factory=lambda: defaultdict(Flow))
    to_namespaces: dict[str, Flow] = field(default_factory=lambda: defaultdict(Flow))

    # Open to everything (set by summarize): every workload is reached from every outside
    # address and every other workload, and reaches every outside address, with all
    # connections. Judged from the effect, so a policy that admits only some addresses
    # (an ipBlock) or only some namespaces keeps its namespace out of the fold.
    unrestricted: bool = False

    @property
    def open_within(self) -> bool:
        """Every ordered pair of its workloads is connected."""
        n = len(self.workloads)
        return n > 1 and self.within.pairs == n * (n - 1)


@dataclass(frozen=True, slots=True)
class Exposed:
    """A workload outside addresses (or the ingress controller) reach."""

    cluster: str
    workload: str
    connections: ConnectionSet
    sources: tuple[str, ...]  # the outside ranges, or the ingress controller


@dataclass(slots=True)
class ConnectivitySummary:
    connections: int
    namespaces: list[NamespaceSummary]
    exposed: list[Exposed]  # from outside addresses
    routed: list[Exposed]  # through the ingress controller

    @property
    def workloads(self) -> int:
        return sum(len(ns.workloads) for ns in self.namespaces)


def namespace_of(peer: str) -> str:
    return peer.split("/", 1)[0]


def is_workload(peer: str) -> bool:
    return not peer.endswith(EXTERNAL) and peer != INGRESS_CONTROLLER


def summarize(connections: Sequence[Connection], workloads: Iterable[str] = ()) -> ConnectivitySummary:
    """``workloads``: every workload ref of the input (``ns/name[Kind]``), so a namespace
    whose workloads talk to nobody is counted too."""
    spaces: dict[tuple[str, str], NamespaceSummary] = {}

    def space(cluster: str, peer: str) -> NamespaceSummary:
        key = (cluster, namespace_of(peer))
        if key not in spaces:
            spaces[key] = NamespaceSummary(*key)
        spaces[key].workloads.add(peer)
        return spaces[key]

    clusters = {c.cluster for c in connections}
    if len(clusters) <= 1:  # the refs carry no cluster: only a one-cluster input places them
        home = next(iter(clusters), "")
        for ref in workloads:
            if is_workload(ref):
                space(home, ref)
    exposed: dict[tuple[str, str], list[Connection]] = defaultdict(list)
    routed: dict[tuple[str, str], list[Connection]] = defaultdict(list)
    # with all connections: which workloads reach a workload, which outside ranges reach
    # it and which it reaches (for the "open to everything" fold)
    inbound: dict[tuple[str, str], set[str]] = defaultdict(set)
    outside_in: dict[tuple[str, str], list[str]] = defaultdict(list)
    outside_out: dict[tuple[str, str], list[str]] = defaultdict(list)
    v6 = False
    for c in connections:
        src_in, dst_in = is_workload(c.source), is_workload(c.destination)
        v6 = v6 or ":" in c.source or ":" in c.destination
        if c.connections.is_all:
            if src_in and dst_in:
                inbound[(c.cluster, c.destination)].add(c.source)
            elif dst_in and c.source.endswith(EXTERNAL):
                outside_in[(c.cluster, c.destination)].append(c.source.removesuffix(EXTERNAL))
            elif src_in and c.destination.endswith(EXTERNAL):
                outside_out[(c.cluster, c.source)].append(c.destination.removesuffix(EXTERNAL))
        if src_in and dst_in:
            source, target = space(c.cluster, c.source), space(c.cluster, c.destination)
            if source is target:
                source.within.add(c, c.source)
            else:
                source.to_namespaces[target.namespace].add(c, c.source)
                target.from_namespaces[source.namespace].add(c, c.destination)
        elif dst_in:
            target = space(c.cluster, c.destination)
            if c.source == INGRESS_CONTROLLER:
                target.from_ingress.add(c, c.destination)
                routed[(c.cluster, c.destination)].append(c)
            else:
                target.from_outside.add(c, c.destination)
                exposed[(c.cluster, c.destination)].append(c)
        elif src_in:
            space(c.cluster, c.source).to_outside.add(c, c.source)
    population: dict[str, int] = defaultdict(int)  # workloads per cluster
    for s in spaces.values():
        population[s.cluster] += len(s.workloads)
    for s in spaces.values():
        s.unrestricted = bool(s.workloads) and all(
            _open_to_all((s.cluster, w), population[s.cluster], inbound, outside_in, outside_out, v6)
            for w in s.workloads)
    ordered = sorted(spaces.values(), key=lambda s: (s.cluster, s.namespace))
    return ConnectivitySummary(len(connections), ordered,
                               _exposed(exposed), _exposed(routed))


def _open_to_all(key: tuple[str, str], population: int, inbound: dict[tuple[str, str], set[str]],
                 outside_in: dict[tuple[str, str], list[str]],
                 outside_out: dict[tuple[str, str], list[str]], v6: bool) -> bool:
    """Every other workload of its cluster and every outside address reach the workload
    ``key`` with all connections, and it reaches every outside address so."""
    sources = inbound.get(key, set())
    others = len(sources) - (key[1] in sources)  # the sources are workloads of the cluster
    return (others >= population - 1
            and _covers_everything(outside_in.get(key, []), v6)
            and _covers_everything(outside_out.get(key, []), v6))


def _covers_everything(ranges: list[str], v6: bool) -> bool:
    """Do the ``first-last`` ranges make up every IPv4 address (and every IPv6 one when
    the list has any)?"""
    spans: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for text in ranges:
        first, _, last = text.partition("-")
        try:
            first_ip, last_ip = ipaddress.ip_address(first), ipaddress.ip_address(last)
        except ValueError:
            return False
        spans[first_ip.version].append((int(first_ip), int(last_ip)))
    for version, top in ((4, 2**32 - 1), *(((6, 2**128 - 1),) if v6 else ())):
        reach = -1
        for lo, hi in sorted(spans[version]):
            if lo > reach + 1:
                return False
            reach = max(reach, hi)
        if reach < top:
            return False
    return True


def _exposed(found: dict[tuple[str, str], list[Connection]]) -> list[Exposed]:
    out = []
    for (cluster, workload), conns in found.items():
        union = ConnectionSet.none()
        for c in conns:
            union = union.union(c.connections)
        out.append(Exposed(cluster, workload, union,
                           tuple(sorted({c.source.removesuffix(EXTERNAL) for c in conns}))))
    # the widest openings first (all connections), then by name
    return sorted(out, key=lambda e: (not e.connections.is_all, e.cluster, e.workload))
