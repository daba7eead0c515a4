"""The reachability of the inputs as one object: index, queries and evidence together.

``build_reachability(inventory, perimeter=None, options=...)`` builds a
``ReachabilityGraph``, which composes three parts, each in its own module:

* ``index.py`` — ``ReachabilityIndex``: every cluster's endpoint classes,
  policies of every tier and ways in, over the external address space cut by
  every CIDR the inputs mention; lookups by workload name and namespace;
* ``queries.py`` — ``ReachabilityQueries``: what rules and commands ask (can a
  source reach a target, who can, what outside addresses reach, where egress
  goes at each tier);
* ``evidence.py`` — ``EvidenceWriter``: which layer decided each hop, in words,
  with the file and line it is written at (looked up only when shown).

Callers hold the one object and ask it; ``ReachabilityGraph.graph(cluster)``
exports a cluster as a networkx DiGraph whose nodes are endpoint classes and
external ranges and whose edges carry a ``ConnectionSet`` and what allowed it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx

from hcpscan.analysis.reachability.answers import POD_NETWORK
from hcpscan.analysis.reachability.evaluation import DEFAULT_OPTIONS, EvaluationOptions
from hcpscan.analysis.reachability.evidence import EvidenceWriter, allowed_by
from hcpscan.analysis.reachability.index import ReachabilityIndex, TargetNotFound
from hcpscan.analysis.reachability.perimeter import Perimeter
from hcpscan.analysis.reachability.queries import PodPeer, ReachabilityQueries
from hcpscan.inventory import Inventory
from hcpscan.model.ports import ConnectionSet

# Taken from here by the path graph, the required flows and the commands.
__all__ = ["POD_NETWORK", "PodPeer", "ReachabilityGraph", "TargetNotFound", "build_reachability"]


class ReachabilityGraph:
    """The index of the inputs, the queries over it and their evidence, as one object."""

    def __init__(self, inventory: Inventory, perimeter: Perimeter | None = None,
                 options: EvaluationOptions = DEFAULT_OPTIONS) -> None:
        self.inventory = inventory
        self.perimeter = perimeter
        self.options = options
        self.index = index = ReachabilityIndex(inventory, perimeter, options)
        self.evidence = EvidenceWriter(inventory, perimeter)
        self.queries = queries = ReachabilityQueries(index, self.evidence)
        # what the build could not read or evaluate (lists shared with the index)
        self.diagnostics = index.diagnostics
        self.secondary_diagnostics = index.secondary_diagnostics
        self.unevaluated = index.unevaluated
        # lookups, answered by the index
        self.has_workload = index.has_workload
        self.has_way_in = index.has_way_in
        self.is_workload_source = index.is_workload_source
        self.workloads = index.workloads
        self.host_network_workloads = index.host_network_workloads
        self.select_workloads = index.select_workloads
        self.selected_by = index.selected_by
        self.dnat_notes = index.dnat_notes
        self.dnat_notes_for = index.dnat_notes_for
        self.exclusion_note = index.exclusion_note
        # questions, answered with evidence
        self.who_can_reach = queries.who_can_reach
        self.can_reach = queries.can_reach
        self.exposed_ports = queries.exposed_ports
        self.ways_in = queries.ways_in
        self.egress_outside = queries.egress_outside
        self.egress_connections = queries.egress_connections
        self.egress_rules_open = queries.egress_rules_open
        self.protocols_open = queries.protocols_open
        self.dns_named_port = queries.dns_named_port
        self.dns_pods_in_input = queries.dns_pods_in_input
        self.egress_to_pods = queries.egress_to_pods
        self.unresolved_names_to_pods = queries.unresolved_names_to_pods
        self.names_to_pods = queries.names_to_pods
        self.egress_to_pods_evidence = queries.egress_to_pods_evidence

    def graph(self, cluster: str | None = None) -> nx.DiGraph:
        """A networkx DiGraph of one cluster (the first when not given): nodes are
        endpoint classes (``class-N``) and external ranges (``ext:first-last``);
        edge attributes ``connections`` (ConnectionSet) and ``allowed_by``
        (policies, Services, Routes and perimeter that allow the edge)."""
        import networkx as nx  # only for this export: a scan never imports it

        view = self.index.view(cluster)
        g = nx.DiGraph(cluster=cluster)
        if view is None:
            return g
        evaluation, n = view.evaluation, view.evaluation.n
        names = [f"class-{i}" for i in range(n)]
        for i, klass in enumerate(evaluation.classes):
            g.add_node(names[i], kind="class", namespace=klass.namespace,
                       workloads=[w.ref for w in klass.workloads] or ["router (ingress controller)"],
                       endpoint_class=klass)
        atom_names = [f"ext:{a.range_strings()[0]}" for a in view.atoms]
        for k, atom in enumerate(view.atoms):
            g.add_node(atom_names[k], kind="external", addresses=atom)
        for s, d, conns, in_part, out_part in evaluation.pairs():
            if s >= n:
                continue  # inbound from outside: added below with the perimeter and Services
            target = names[d] if d < n else atom_names[d - n]
            g.add_edge(names[s], target, connections=conns,
                       allowed_by=allowed_by(in_part, out_part))
        for dst in range(len(view.model.classes)):
            for k in range(len(view.atoms)):
                inbound = self.queries.inbound(view, k, dst)
                if inbound:
                    conns = ConnectionSet.none()
                    for _, c, _ in inbound:
                        conns = conns.union(c)
                    g.add_edge(atom_names[k], names[dst], connections=conns,
                               allowed_by=[via for via, _, _ in inbound])
        return g


def build_reachability(inventory: Inventory, perimeter: Perimeter | None = None,
                       options: EvaluationOptions = DEFAULT_OPTIONS) -> ReachabilityGraph:
    return ReachabilityGraph(inventory, perimeter, options)
