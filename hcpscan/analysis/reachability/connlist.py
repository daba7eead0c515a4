"""The connection list: every connection NetworkPolicy allows between workloads
and external ranges, in the notation of np-guard's netpol-analyzer
(``src => dst : connections``).

External ranges follow that tool's convention so outputs compare line for
line: sources are the pieces the *ingress* ipBlocks cut the address space
into, destinations the pieces the *egress* ipBlocks cut it into. The space is
IPv4, plus IPv6 when some NetworkPolicy names an IPv6 block (IPv6 ``networks``
of AdminNetworkPolicies alone do not add it: netpol-analyzer lists only IPv4
for them; the graph's queries evaluate them all the same). A workload's
connections to itself are not listed; connections of workloads whose pods fall
into several classes are the union over those classes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from hcpscan.analysis.reachability.coverage import (
    UnevaluatedKind,
    exclusion_note,
    read_unevaluated,
)
from hcpscan.analysis.reachability.evaluation import (
    DEFAULT_OPTIONS,
    EvaluationOptions,
    PolicyEvaluation,
)
from hcpscan.analysis.reachability.ipspace import IPSpace, cut
from hcpscan.analysis.reachability.model import ClusterModel, read_clusters
from hcpscan.analysis.reachability.policies import EGRESS, INGRESS
from hcpscan.analysis.reachability.ports import ConnectionSet
from hcpscan.inventory import Inventory
from hcpscan.sources.interface import Diagnostic


@dataclass(frozen=True, slots=True)
class Connection:
    cluster: str
    source: str
    destination: str
    connections: ConnectionSet

    def __str__(self) -> str:
        return f"{self.source} => {self.destination} : {self.connections}"

    def to_json(self) -> dict[str, str]:
        return {"cluster": self.cluster, "src": self.source, "dst": self.destination,
                "conn": str(self.connections)}


@dataclass(slots=True)
class ConnectionList:
    connections: list[Connection] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # policy-like objects of the input the list does not reflect
    unevaluated: list[UnevaluatedKind] = field(default_factory=list)

    @property
    def exclusion_note(self) -> str:
        return exclusion_note(self.unevaluated)

    def lines(self) -> list[str]:
        multi = len({c.cluster for c in self.connections}) > 1
        return [f"{c.cluster}: {c}" if multi else str(c) for c in self.connections]


def external_name(space: IPSpace) -> str:
    return f"{space.range_strings()[0]}[External]"


def connection_universe(model: ClusterModel) -> IPSpace:
    universe = IPSpace.all_v4()
    if any(6 in block.versions for block in model.policy_blocks(admin=False)):
        universe = universe.union(IPSpace.all_v6())
    return universe


def cluster_connections(model: ClusterModel, options: EvaluationOptions) -> list[Connection]:
    universe = connection_universe(model)
    src_atoms = cut(model.policy_blocks(INGRESS), universe)
    dst_atoms = cut(model.policy_blocks(EGRESS), universe)
    evaluation = PolicyEvaluation(model.classes, model.policies, model.namespaces,
                                  src_atoms, dst_atoms, options, model.admin)
    n = evaluation.n
    class_names = [[w.ref for w in c.workloads] for c in model.classes]
    spans = Counter(name for names in class_names for name in names)
    # a class holding exactly one workload that lives in no other class maps
    # one-to-one onto output lines; only the rest need merging
    alone = [len(names) == 1 and spans[names[0]] == 1 for names in class_names]
    src_names = class_names + [[external_name(a)] for a in src_atoms]
    dst_names = class_names + [[external_name(a)] for a in dst_atoms]
    src_alone = alone + [True] * len(src_atoms)
    dst_alone = alone + [True] * len(dst_atoms)
    rows: list[tuple[str, str, ConnectionSet]] = []
    merged: dict[tuple[str, str], ConnectionSet] = defaultdict(ConnectionSet.none)
    for s, d, conns, _, _ in evaluation.pairs():
        if s == d and s < n and d < n and alone[s]:
            continue
        if src_alone[s] and dst_alone[d]:
            rows.append((src_names[s][0], dst_names[d][0], conns))
            continue
        for src in src_names[s]:
            for dst in dst_names[d]:
                if src != dst:
                    merged[(src, dst)] = merged[(src, dst)].union(conns)
    rows.extend((src, dst, conns) for (src, dst), conns in merged.items() if conns)
    rows.sort(key=lambda row: (row[0], row[1]))
    return [Connection(model.cluster, src, dst, conns) for src, dst, conns in rows]


def connection_list(inventory: Inventory,
                    options: EvaluationOptions = DEFAULT_OPTIONS) -> ConnectionList:
    result = ConnectionList()
    result.unevaluated = read_unevaluated(inventory, result.diagnostics)
    for model in read_clusters(inventory, options, result.diagnostics):
        result.connections.extend(cluster_connections(model, options))
    return result
