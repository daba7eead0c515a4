"""Semantic connectivity diff of two inputs: connections added, removed and changed.

Both inputs' connection lists are computed over the same external ranges (the
pieces that the address blocks of *both* cut the space into), then compared
pair by pair: ``added`` (no connection before), ``removed`` (none after),
``changed`` (both, different). A pair whose workload exists in only one input
says so (``workload X added``), as netpol-analyzer's diff does.

Each input's rows are its connection list's, every layer applied alike: primary
(C)UDNs (workloads in different primary networks have no connection; a workload
is named as outside any section, ``ns/name[Kind]``, so moving a namespace onto a
UDN shows as the connections it loses), secondary networks with their
MultiNetworkPolicies (a change there names its network), the policy tiers and
the ingress controller.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass, field

from hcpscan.analysis.reachability.connlist import (
    ConnectionList,
    Cuts,
    add_cluster,
    connection_universe,
    plain_name,
)
from hcpscan.analysis.reachability.coverage import (
    CONNECTION_LIST_EVALUATED,
    UnevaluatedKind,
    read_unevaluated,
)
from hcpscan.analysis.reachability.evaluation import DEFAULT_OPTIONS, EvaluationOptions
from hcpscan.analysis.reachability.exposure import unrouted_backends
from hcpscan.analysis.reachability.model import ClusterModel, read_clusters
from hcpscan.analysis.reachability.policies import EGRESS, INGRESS
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.model.ports import ConnectionSet

ADDED, REMOVED, CHANGED = "added", "removed", "changed"
ORDER = (CHANGED, ADDED, REMOVED)  # the order lines are listed in
EXTERNAL = "[External]"


@dataclass(frozen=True, slots=True)
class ConnectionChange:
    cluster: str
    source: str
    destination: str
    old: ConnectionSet
    new: ConnectionSet
    workloads: str = ""  # "workload X added", "workload X and Y removed", or ""
    network: str = ""  # a secondary network's name (NAD): the change is on that network

    @property
    def kind(self) -> str:
        if not self.old:
            return ADDED
        return REMOVED if not self.new else CHANGED

    def fields(self) -> list[str]:
        """diff-type, source, destination, ref1 (old), ref2 (new), workloads-diff-info."""
        return [self.kind, self.source, self.destination, str(self.old), str(self.new),
                self.workloads]

    @property
    def network_label(self) -> str:
        return f"{self.network}[NAD]" if self.network else ""

    def __str__(self) -> str:
        info = f", workloads-diff-info: {self.workloads}" if self.workloads else ""
        on = f", network: {self.network_label}" if self.network else ""
        return (f"diff-type: {self.kind}, source: {self.source}, destination: {self.destination}, "
                f"ref1: {self.old}, ref2: {self.new}{info}{on}")

    def to_json(self) -> dict[str, str]:
        out = {"cluster": self.cluster, "diff-type": self.kind, "src": self.source,
               "dst": self.destination, "ref1": str(self.old), "ref2": str(self.new),
               "workloads-diff-info": self.workloads}
        if self.network:
            out["network"] = self.network_label
        return out


@dataclass(slots=True)
class ConnectivityDiff:
    changes: list[ConnectionChange] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    unevaluated: list[UnevaluatedKind] = field(default_factory=list)  # of either input

    def lines(self) -> list[str]:
        multi = len({c.cluster for c in self.changes}) > 1
        return [f"{c.cluster}: {c}" if multi else str(c) for c in self.changes]


def connectivity_diff(old: Inventory, new: Inventory,
                      options: EvaluationOptions = DEFAULT_OPTIONS) -> ConnectivityDiff:
    result = ConnectivityDiff()
    result.unevaluated = (read_unevaluated(old, result.diagnostics, CONNECTION_LIST_EVALUATED)
                          + read_unevaluated(new, result.diagnostics, CONNECTION_LIST_EVALUATED))
    result.diagnostics.extend(unrouted_backends(old) + unrouted_backends(new))
    old_models = {m.cluster: m for m in read_clusters(old, options, result.diagnostics)}
    new_models = {m.cluster: m for m in read_clusters(new, options, result.diagnostics)}
    for cluster in sorted(old_models.keys() | new_models.keys()):
        result.changes.extend(_cluster_changes(cluster, old, old_models.get(cluster), new,
                                               new_models.get(cluster), options,
                                               result.diagnostics))
    result.changes.sort(key=lambda c: (c.cluster, c.network, ORDER.index(c.kind), c.source,
                                       c.destination))
    return result


def _cluster_changes(cluster: str, old: Inventory, old_model: ClusterModel | None,
                     new: Inventory, new_model: ClusterModel | None,
                     options: EvaluationOptions,
                     diagnostics: list[Diagnostic]) -> list[ConnectionChange]:
    models = [m for m in (old_model, new_model) if m is not None]
    universe = connection_universe(models[0])
    for model in models[1:]:
        universe = universe.union(connection_universe(model))
    cuts = Cuts(universe, tuple(b for m in models for b in m.policy_blocks(INGRESS)),
                tuple(b for m in models for b in m.policy_blocks(EGRESS)))
    before = _rows(old, old_model, options, cuts, diagnostics)
    after = _rows(new, new_model, options, cuts, diagnostics)
    old_names, new_names = _workloads(old_model), _workloads(new_model)
    out = []
    pairs = {key: (before.get(key, ConnectionSet.none()), after.get(key, ConnectionSet.none()))
             for key in before.keys() | after.keys()}
    for (src, dst, network), (was, now) in sorted(_merge_ranges(pairs).items()):
        if was == now:
            continue
        # added: the pair's workloads the old input lacks; removed: those the new one lacks
        other = old_names if now else new_names
        missing = [name for name in (src, dst) if _is_workload(name) and name not in other]
        info = ""
        if missing:
            info = f"workload {' and '.join(missing)} {'added' if now else 'removed'}"
        out.append(ConnectionChange(cluster, src, dst, was, now, info, network))
    return out


Key = tuple[str, str, str]  # source, destination, secondary network ("" on a primary one)


def _merge_ranges(pairs: dict[Key, tuple[ConnectionSet, ConnectionSet]]
                  ) -> dict[Key, tuple[ConnectionSet, ConnectionSet]]:
    """Adjacent external ranges of one workload that changed alike become one range: the
    common cut of both inputs splits ranges neither input tells apart on its own."""
    out: dict[Key, tuple[ConnectionSet, ConnectionSet]] = {}
    runs: dict[tuple[int, str, str, tuple[ConnectionSet, ConnectionSet]],
               list[tuple[int, int, int]]] = {}
    for (src, dst, network), change in pairs.items():
        side = 0 if src.endswith(EXTERNAL) else 1 if dst.endswith(EXTERNAL) else -1
        if side < 0:
            out[(src, dst, network)] = change
            continue
        first, last = (src, dst)[side].removesuffix(EXTERNAL).split("-")
        a, b = ipaddress.ip_address(first), ipaddress.ip_address(last)
        runs.setdefault((side, (dst, src)[side], network, change), []).append(
            (a.version, int(a), int(b)))
    for (side, workload, network, change), ranges in runs.items():
        for version, lo, hi in _contiguous(ranges):
            text = f"{_address(version, lo)}-{_address(version, hi)}{EXTERNAL}"
            out[(text, workload, network) if side == 0 else (workload, text, network)] = change
    return out


def _contiguous(ranges: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    merged: list[list[int]] = []
    for version, lo, hi in sorted(ranges):
        if merged and merged[-1][0] == version and merged[-1][2] + 1 == lo:
            merged[-1][2] = hi
        else:
            merged.append([version, lo, hi])
    return [(v, lo, hi) for v, lo, hi in merged]


def _address(version: int, value: int) -> str:
    return str(ipaddress.IPv4Address(value) if version == 4 else ipaddress.IPv6Address(value))


def _rows(inventory: Inventory, model: ClusterModel | None, options: EvaluationOptions,
          cuts: Cuts, diagnostics: list[Diagnostic]) -> dict[Key, ConnectionSet]:
    """The input's connection list with every layer the list applies (``add_cluster``),
    keyed by plain workload names and, on a secondary network, the network."""
    if model is None:
        return {}
    listed = ConnectionList()
    add_cluster(listed, inventory, model, options, cuts)
    diagnostics.extend(listed.diagnostics)
    rows: dict[Key, ConnectionSet] = {}
    for c in listed.connections:
        key = (plain_name(c.source), plain_name(c.destination), c.network if c.secondary else "")
        rows[key] = rows[key].union(c.connections) if key in rows else c.connections
    return rows


def _workloads(model: ClusterModel | None) -> set[str]:
    if model is None:
        return set()
    return {w.ref for klass in model.classes for w in klass.workloads}


def _is_workload(name: str) -> bool:
    return not name.endswith("[External]") and not name.startswith("{")


def changed_pairs(changes: list[ConnectionChange]) -> Callable[[str, str], bool]:
    """A pair filter for explaining a diff: does a pair of one input's explanation (its
    own names and external ranges) belong to a changed pair? Workloads compare by plain
    name; an external range belongs when it overlaps the changed range."""
    exact = {(c.source, c.destination) for c in changes}
    ranges: dict[tuple[int, str], list[tuple[int, int, int]]] = {}
    for c in changes:
        for side, (peer, other) in enumerate(((c.source, c.destination),
                                              (c.destination, c.source))):
            span = _span(peer)
            if span is not None:
                ranges.setdefault((side, other), []).append(span)

    def keep(source: str, destination: str) -> bool:
        src, dst = plain_name(source), plain_name(destination)
        if (src, dst) in exact:
            return True
        for side, (peer, other) in enumerate(((src, dst), (dst, src))):
            span = _span(peer)
            if span is not None and any(v == span[0] and lo <= span[2] and span[1] <= hi
                                        for v, lo, hi in ranges.get((side, other), ())):
                return True
        return False

    return keep


def _span(peer: str) -> tuple[int, int, int] | None:
    """(IP version, first, last) of an ``a-b[External]`` peer, else None."""
    if not peer.endswith(EXTERNAL):
        return None
    first, last = peer.removesuffix(EXTERNAL).split("-")
    a, b = ipaddress.ip_address(first), ipaddress.ip_address(last)
    return a.version, int(a), int(b)
