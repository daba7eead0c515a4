"""The reachability graph of the inputs and the queries rules ask it.

``build_reachability(inventory, perimeter=None, options=...)`` reads every
cluster of the inventory (clusters are never connected to each other) into
endpoint classes, NetworkPolicies and ways in from outside, over an external
address space cut by every CIDR the inputs mention (policies, declared
cluster/service/machine networks, LoadBalancer source ranges, perimeter
rules). ``ReachabilityGraph.graph(cluster)`` materialises a networkx DiGraph
whose nodes are endpoint classes and external ranges and whose edges carry a
``ConnectionSet`` and what allowed it; the queries answer with full evidence.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx

from hcpscan.analysis.reachability.admin import ADMIN_TIER, ALLOW, BASELINE_TIER
from hcpscan.analysis.reachability.coverage import (
    UnevaluatedKind,
    exclusion_note,
    read_unevaluated,
)
from hcpscan.analysis.reachability.dnat import DnatNote, dns_dnat_notes
from hcpscan.analysis.reachability.endpoints import EndpointClass, Workload
from hcpscan.analysis.reachability.evaluation import (
    DEFAULT_OPTIONS,
    DEFAULT_TIER,
    AnyRule,
    EvaluationOptions,
    Part,
    PolicyEvaluation,
    Side,
    Verdict,
    tiered_connections,
    tiered_verdict,
)
from hcpscan.analysis.reachability.exposure import (
    ROUTER,
    ROUTER_NAMESPACE,
    ExposurePath,
    add_controller,
    declared_networks,
    has_ways_through_controllers,
    ingress_paths,
    route_paths,
    service_paths,
)
from hcpscan.analysis.reachability.model import ClusterModel, read_clusters
from hcpscan.analysis.reachability.networks import POD, Network, primary_networks
from hcpscan.analysis.reachability.perimeter import Perimeter
from hcpscan.analysis.reachability.policies import EGRESS, INGRESS, NP_TIER, NetworkPolicyModel
from hcpscan.analysis.reachability.queries import (
    ADMIN_NETWORK_POLICY,
    BASELINE_ADMIN_NETWORK_POLICY,
    EGRESS_FIREWALL,
    MULTI_NETWORK_POLICY,
    NETWORK_POLICY,
    PERIMETER,
    PRIMARY_NETWORK,
    SERVICE,
    Egress,
    Evidence,
    ExposedPort,
    PathResult,
    Peer,
    Place,
    Reach,
    WayInVerdict,
)
from hcpscan.analysis.reachability.secondary import SecondaryNetwork, secondary_networks
from hcpscan.analysis.reachability.selectors import LabelSelector, Requirement, bits
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.model.ipspace import AddressError, IPSpace, cut
from hcpscan.model.ports import NODE_PORT_RANGE, ConnectionSet, PortSet, normalise_protocol, union_all

POD_NETWORK = "pod network"
LAYER_OF_TIER = {ADMIN_TIER: ADMIN_NETWORK_POLICY, NP_TIER: NETWORK_POLICY,
                 BASELINE_TIER: BASELINE_ADMIN_NETWORK_POLICY, DEFAULT_TIER: NETWORK_POLICY}


class TargetNotFound(LookupError):
    """A query named a workload or address the inputs do not hold."""


@dataclass(slots=True, eq=False)
class ClusterView:
    model: ClusterModel
    evaluation: PolicyEvaluation
    atoms: list[IPSpace]
    router: int | None  # class index of the virtual router, when Routes exist
    machine_network: IPSpace
    paths: dict[int, list[ExposurePath]] = field(default_factory=dict)
    primary: dict[str, Network] = field(default_factory=dict)  # namespace -> its (C)UDN
    # secondary networks: (network, its MultiNetworkPolicy evaluation, class index of the
    # view -> the network's class indices holding that class's pods)
    secondary: list[tuple[SecondaryNetwork, PolicyEvaluation, dict[int, list[int]]]] = field(
        default_factory=list)
    # atoms inside a space, and the space a set of atoms covers, by bit mask over atoms
    _atoms_within: dict[IPSpace, int] = field(default_factory=dict)
    _spaces: dict[int, IPSpace] = field(default_factory=dict)

    def atoms_within(self, space: IPSpace) -> int:
        mask = self._atoms_within.get(space)
        if mask is None:
            mask = sum(1 << k for k, atom in enumerate(self.atoms) if space.contains(atom))
            self._atoms_within[space] = mask
        return mask

    def space_of(self, mask: int) -> IPSpace:
        """The union of the atoms in ``mask``."""
        space = self._spaces.get(mask)
        if space is None:
            ranges = tuple(r for k in bits(mask) for r in self.atoms[k].ranges)
            space = self._spaces[mask] = IPSpace(ranges).union(IPSpace())
        return space

    @property
    def cluster(self) -> str:
        return self.model.cluster


class ReachabilityGraph:
    def __init__(self, inventory: Inventory, perimeter: Perimeter | None = None,
                 options: EvaluationOptions = DEFAULT_OPTIONS) -> None:
        self.inventory = inventory
        self.perimeter = perimeter
        self.options = options
        self.diagnostics: list[Diagnostic] = []
        # what the secondary networks' evaluation rests on (an ipBlock taken to match no pod
        # whose address the input lacks, a NAD the input lacks): the questions between
        # workloads evaluate those networks, so their answers carry these warnings
        self.secondary_diagnostics: list[Diagnostic] = []
        # policy-like objects no answer of this graph reflects
        self.unevaluated: list[UnevaluatedKind] = read_unevaluated(inventory, self.diagnostics)
        self.views = [self._view(m) for m in read_clusters(inventory, options, self.diagnostics)]
        # Lookups by name, built on first use: rules ask per HostedCluster and per
        # workload, and scanning every class for each question is quadratic in a fleet.
        self._by_name: dict[tuple[str, str], list[tuple[ClusterView, Workload, int]]] | None = None
        self._by_namespace: dict[tuple[str, str], list[EndpointClass]] | None = None
        self._places: dict[tuple[K8sObject, str], Place] = {}

    def dnat_notes(self, cluster: str) -> list[DnatNote]:
        """Service ports of the cluster's DNS that its pods receive on another port."""
        view = next((v for v in self.views if v.cluster == cluster), None)
        return dns_dnat_notes(self.inventory, cluster, view.model.classes) if view else []

    def dnat_notes_for(self, target: str) -> list[DnatNote]:
        """The DNAT notes that matter to a question about ``target``: those of the
        Services in front of it."""
        view, workload, _ = self._workload_classes(target)
        return [n for n in self.dnat_notes(view.cluster) if workload in n.workloads]

    def exclusion_note(self, cluster: str | None = None) -> str:
        """What answers about ``cluster`` (every cluster when ``None``) leave out, as one
        sentence; '' when they leave nothing out."""
        return exclusion_note([k for k in self.unevaluated if cluster is None or k.cluster == cluster])

    # -- construction ---------------------------------------------------------------------

    def _view(self, model: ClusterModel) -> ClusterView:
        networks = declared_networks(self.inventory, model.cluster)
        classes, namespaces = list(model.classes), dict(model.namespaces)
        router = None
        if has_ways_through_controllers(self.inventory, model.cluster):
            router = add_controller(self.inventory, model.cluster, ROUTER, classes, namespaces)
        view = ClusterView(model, None, [], router,  # type: ignore[arg-type]  # evaluation: set below, once the atoms are cut
                           IPSpace.union_of(networks["machine"]))
        for klass in model.classes:
            view.paths[klass.index] = (service_paths(self.inventory, klass)
                                       + route_paths(self.inventory, klass)
                                       + ingress_paths(self.inventory, klass))
        cuts = model.policy_blocks() + [s for spaces in networks.values() for s in spaces]
        cuts += [p.sources for paths in view.paths.values() for p in paths]
        if self.perimeter is not None:
            cuts += self.perimeter.cidrs()
        view.atoms = cut(cuts, IPSpace.everything())
        primary = view.primary = primary_networks(self.inventory, model.cluster, model.namespaces, [])
        ids = {network: n for n, network in enumerate(sorted(set(primary.values())), 1)}
        network_of = [-1 if k.index == router else ids[primary[k.namespace]]
                      if k.namespace in primary else 0 for k in classes]
        view.evaluation = PolicyEvaluation(classes, model.policies, namespaces, view.atoms,
                                           view.atoms, self.options, model.admin,
                                           model.firewalls, network_of)
        view.secondary = self._secondary(model)
        return view

    def _secondary(self, model: ClusterModel
                   ) -> list[tuple[SecondaryNetwork, PolicyEvaluation, dict[int, list[int]]]]:
        """Each secondary network as the list evaluates it (its pods, its
        MultiNetworkPolicies), with which of its classes hold each class's pods."""
        out = []
        owner = {id(e): k.index for k in model.classes for e in k.endpoints}
        for net in secondary_networks(self.inventory, model.cluster, model.classes,
                                      self.secondary_diagnostics):
            own, options = net.model(model, self.options)
            evaluation = PolicyEvaluation(own.classes, own.policies, dict(own.namespaces), [], [],
                                          options)
            members: dict[int, list[int]] = defaultdict(list)
            for klass in own.classes:
                for index in {owner[id(e)] for e in klass.endpoints}:
                    members[index].append(klass.index)
            out.append((net, evaluation, dict(members)))
        return out

    # -- resolving names ------------------------------------------------------------------

    def _workload_classes(self, target: str) -> tuple[ClusterView, Workload, list[int]]:
        cluster, _, rest = target.rpartition(":") if ":" in target.split("/")[0] else ("", "", target)
        kind = ""
        if rest.endswith("]") and "[" in rest:
            rest, kind = rest[:-1].split("[", 1)
        namespace, _, name = rest.partition("/")
        if not name:
            raise TargetNotFound(f"{target!r} is not a workload: write namespace/name "
                                 "(optionally namespace/name[Kind] or cluster:namespace/name)")
        found = [(view, workload, index)
                 for view, workload, index in self._name_index().get((namespace, name), ())
                 if (not cluster or view.cluster == cluster) and (not kind or workload.kind == kind)]
        if not found:
            raise TargetNotFound(f"no workload {target} in the inputs")
        view, workload = found[0][0], found[0][1]
        indices = sorted({i for v, w, i in found if v is view and w == workload})
        return view, workload, indices

    def has_workload(self, target: str) -> bool:
        """Whether ``target`` (``cluster:namespace/name[Kind]``) is a workload of the inputs."""
        try:
            self._workload_classes(target)
        except TargetNotFound:
            return False
        return True

    def has_way_in(self, target: str) -> bool:
        """Whether a NodePort or LoadBalancer Service or a Route leads to ``target``'s pods:
        without one, outside traffic would need a routable pod IP."""
        view, _workload, indices = self._workload_classes(target)
        return any(view.paths.get(i) for i in indices)

    def _name_index(self) -> dict[tuple[str, str], list[tuple[ClusterView, Workload, int]]]:
        """(namespace, name) -> every (view, workload, class index), in class order."""
        if self._by_name is None:
            index: dict[tuple[str, str], list[tuple[ClusterView, Workload, int]]] = defaultdict(list)
            for view in self.views:
                for klass in view.model.classes:
                    for workload in klass.workloads:
                        index[(workload.namespace, workload.name)].append((view, workload, klass.index))
            self._by_name = dict(index)
        return self._by_name

    def _namespace_classes(self, cluster: str, namespace: str) -> list[EndpointClass]:
        if self._by_namespace is None:
            index: dict[tuple[str, str], list[EndpointClass]] = defaultdict(list)
            for view in self.views:
                for klass in view.model.classes:
                    index[(view.cluster, klass.namespace)].append(klass)
            self._by_namespace = dict(index)
        return self._by_namespace.get((cluster, namespace), [])

    def _place(self, obj: K8sObject, field: str = "") -> Place:
        """Where a field of an object is written, looked up when evidence is shown."""
        place = self._places.get((obj, field))
        if place is None:
            def find() -> tuple[str, int]:
                loc = self.inventory.locate(obj, field) if field else self.inventory.locate(obj)
                return loc.path, loc.line

            place = self._places[(obj, field)] = Place(find=find)
        return place

    def is_workload_source(self, source: str) -> bool:
        """Does ``source`` (a query's --from) name a workload rather than addresses?"""
        return not isinstance(self._source(source), IPSpace)

    @staticmethod
    def _source(source: str) -> IPSpace | str:
        """The addresses ``source`` names, or ``source`` itself when it names a workload."""
        try:
            return IPSpace.from_cidr(source)
        except AddressError:
            return source

    # -- flow verdicts --------------------------------------------------------------------

    def _policy_evidence(self, direction: str, side: Side, verdict: Verdict, who: str, peer: str,
                         protocol: str, port: int) -> Evidence:
        """The policy tiers' say, naming the tier, the object and the rule that decided."""
        if not side.isolated:
            return Evidence(NETWORK_POLICY, True, f"no NetworkPolicy isolates {direction} of {who}")
        passed = (f" (passed on by {verdict.passed_by.display})"
                  if verdict.passed_by is not None else "")
        if verdict.tier in (ADMIN_TIER, BASELINE_TIER):
            (rule,) = verdict.rules
            return Evidence(LAYER_OF_TIER[verdict.tier], verdict.allowed,
                            f"{direction} of {who} {'allowed' if verdict.allowed else 'denied'} "
                            f"for {peer} on {protocol}/{port} by {rule.display}{passed}",
                            self._place(rule.policy.obj, rule.field))
        if verdict.tier == DEFAULT_TIER:
            return Evidence(NETWORK_POLICY, True,
                            f"{direction} of {who}: no AdminNetworkPolicy rule decides {peer} on "
                            f"{protocol}/{port}{passed}, no NetworkPolicy isolates it and no "
                            "BaselineAdminNetworkPolicy rule denies it")
        # Named in a fixed order (not the input's: API order live, file order offline).
        if verdict.allowed:
            deciding = sorted(verdict.rules, key=_rule_order)
            names = ", ".join(r.display for r in deciding)
            return Evidence(NETWORK_POLICY, True, f"{direction} of {who} allowed by {names}{passed}",
                            self._place(deciding[0].policy.obj, deciding[0].field))
        ordered = sorted(side.policies, key=lambda p: p.ref)
        names = ", ".join(p.ref for p in ordered)
        return Evidence(NETWORK_POLICY, False,
                        f"{direction} of {who} is isolated by {names} and no rule allows {peer} on "
                        f"{protocol}/{port}{passed}", self._place(ordered[0].obj))

    def _ingress(self, view: ClusterView, dst: int, src_bit: int, src_name: str, protocol: str,
                 port: int) -> Evidence:
        verdict = view.evaluation.verdict(INGRESS, dst, src_bit, protocol, port)
        return self._policy_evidence("ingress", view.evaluation.ingress_side(dst), verdict,
                                     _class_name(view, dst), src_name, protocol, port)

    def _egress(self, view: ClusterView, src: int, dst_bit: int, dst_name: str,
                protocol: str, port: int) -> Evidence:
        verdict = view.evaluation.verdict(EGRESS, src, dst_bit, protocol, port)
        return self._policy_evidence("egress", view.evaluation.egress_side(src), verdict,
                                     _class_name(view, src), dst_name, protocol, port)

    def _perimeter(self, atom: IPSpace, protocol: str, port: int | None,
                   via: str | None = None) -> Evidence | None:
        """The perimeter's say on traffic from ``atom`` to ``port`` (``None``: a
        node port not allocated yet, so any port of the NodePort range) taking ``via``."""
        perimeter = self.perimeter.for_way(via) if self.perimeter is not None else None
        if perimeter is None:
            return None
        shown = f"{protocol}/{port}" if port is not None else f"{protocol} node ports"
        if port is None:
            open_ports = perimeter.allowed(atom).intersection(
                ConnectionSet.of(protocol, PortSet.of(NODE_PORT_RANGE))).ports(protocol)
            port = open_ports.intervals[0][0] if open_ports else NODE_PORT_RANGE[0]
        verdict = perimeter.decide(atom, protocol, port)
        return Evidence(PERIMETER, verdict.allowed,
                        f"{perimeter.name}: {verdict.describe(perimeter)} for {shown}",
                        Place(*perimeter.place_of(verdict)))

    def _external_paths(self, view: ClusterView, atom_index: int, dst: int, protocol: str,
                        port: int) -> tuple[PathResult, ...]:
        atom = view.atoms[atom_index]
        src_bit = view.evaluation.n + atom_index
        results = []
        direct = [e for e in (self._perimeter(atom, protocol, port),
                              self._ingress(view, dst, src_bit, "outside", protocol, port)) if e]
        results.append(PathResult(POD_NETWORK, all(e.allows for e in direct), tuple(direct)))
        for path in view.paths.get(dst, []):
            if path.protocol == protocol and path.pod_port == port:
                results.append(self._way_in_result(view, atom_index, dst, path))
        return tuple(results)

    def _way_in_result(self, view: ClusterView, atom_index: int, dst: int,
                       path: ExposurePath) -> PathResult:
        """Every layer's say on one outside range taking one way in to ``dst``."""
        atom, protocol, port = view.atoms[atom_index], path.protocol, path.pod_port
        place = self._place(path.obj, path.field)
        evidence: list[Evidence] = []
        if not path.sources.contains(atom):
            # the hop is written where the ranges that keep the source out are
            bound = self._place(*path.bounded_by) if path.bounded_by is not None else place
            evidence.append(Evidence(SERVICE, False, f"{path.describe()} admits only "
                                     f"{path.sources}", bound))
        else:
            evidence.append(Evidence(SERVICE, True, path.describe(), place))
        gate = self._perimeter(atom, protocol, path.entry_port, path.via)
        if gate is not None:
            evidence.append(gate)
        if path.through_router and view.router is not None:
            evidence.append(self._ingress(view, dst, view.router,
                                          f"the router ({ROUTER_NAMESPACE})", protocol, port))
        else:
            evidence.append(self._ingress(view, dst, view.evaluation.n + atom_index, "outside",
                                          protocol, port))
        return PathResult(path.label, all(e.allows for e in evidence), tuple(evidence))

    def _internal_paths(self, view: ClusterView, src: int, dst: int, protocol: str,
                        port: int) -> tuple[PathResult, ...]:
        evidence: tuple[Evidence, ...] = (
            self._egress(view, src, dst, _class_name(view, dst), protocol, port),
            self._ingress(view, dst, src, _class_name(view, src), protocol, port))
        apart = self._network_apart(view, src, dst)
        if apart is not None:
            evidence = (apart, *evidence)
        paths = [PathResult(POD_NETWORK, all(e.allows for e in evidence), evidence)]
        return (*paths, *self._secondary_paths(view, src, dst, protocol, port))

    def _secondary_paths(self, view: ClusterView, src: int, dst: int, protocol: str,
                         port: int) -> list[PathResult]:
        """One path per secondary network both classes' pods are attached to, decided by
        its MultiNetworkPolicies alone (no other tier acts there)."""
        out = []
        for net, evaluation, members in view.secondary:
            for s in members.get(src, ()):
                for d in members.get(dst, ()):
                    if s == d and src != dst:
                        continue
                    names = [str(evaluation.classes[i]) for i in (s, d)]
                    evidence = (
                        self._secondary_evidence(net, evaluation, EGRESS, s, d, names, protocol, port),
                        self._secondary_evidence(net, evaluation, INGRESS, d, s, names[::-1],
                                                 protocol, port))
                    out.append(PathResult(f"secondary network {net.network.name}",
                                          all(e.allows for e in evidence), evidence))
        return out

    def _secondary_evidence(self, net: SecondaryNetwork, evaluation: PolicyEvaluation,
                            direction: str, own: int, peer: int, names: list[str],
                            protocol: str, port: int) -> Evidence:
        side = (evaluation.ingress_side if direction == INGRESS else evaluation.egress_side)(own)
        where = f"on secondary network {net.network.name}"
        if not side.isolated:
            return Evidence(MULTI_NETWORK_POLICY, True, f"no MultiNetworkPolicy isolates "
                            f"{direction} of {names[0]} {where}")
        verdict = evaluation.verdict(direction, own, peer, protocol, port)
        if verdict.allowed:
            deciding = sorted(verdict.rules, key=_rule_order)
            return Evidence(MULTI_NETWORK_POLICY, True, f"{direction} of {names[0]} {where} "
                            f"allowed by {', '.join(r.display for r in deciding)}",
                            self._place(deciding[0].policy.obj, deciding[0].field))
        ordered = sorted(side.policies, key=lambda p: p.ref)
        return Evidence(MULTI_NETWORK_POLICY, False, f"{direction} of {names[0]} {where} is "
                        f"isolated by {', '.join(p.ref for p in ordered)} and no rule allows "
                        f"{names[1]} on {protocol}/{port}", self._place(ordered[0].obj))

    def _network_apart(self, view: ClusterView, src: int, dst: int) -> Evidence | None:
        """Evidence that two classes sit on different primary networks (UDN isolation)."""
        networks = view.evaluation.networks
        if networks[src] == networks[dst] or -1 in (networks[src], networks[dst]):
            return None
        primary = view.primary
        names = [primary.get(view.evaluation.classes[i].namespace, POD).title for i in (src, dst)]
        return Evidence(PRIMARY_NETWORK, False, f"{_class_name(view, src)} is on the {names[0]} "
                        f"and {_class_name(view, dst)} on the {names[1]}: OVN-Kubernetes keeps "
                        "primary networks apart")

    # -- queries --------------------------------------------------------------------------

    def who_can_reach(self, target: str, port: int, protocol: str = "TCP", *,
                      workloads: bool = True) -> list[Reach]:
        """Every source (workloads, and outside ranges merged by identical
        evidence) that can open ``protocol``/``port`` to ``target``;
        ``workloads=False`` leaves out the workloads (outside ranges only)."""
        protocol = normalise_protocol(protocol)
        view, workload, indices = self._workload_classes(target)
        target_peer = Peer(view.cluster, workload)
        out: list[Reach] = []
        by_source: dict[Workload, list[PathResult]] = {}
        for dst in indices if workloads else ():
            candidates = set(self._ingress_candidates(view, dst, protocol, port))
            for _, _, members in view.secondary:  # sources on a network dst is on too
                if dst in members:
                    candidates.update(members)
            for src in sorted(candidates):
                klass = view.model.classes[src]
                paths = [p for p in self._internal_paths(view, src, dst, protocol, port) if p.allowed]
                if not paths:
                    continue
                for source in klass.workloads:
                    if source != workload:
                        by_source.setdefault(source, []).extend(paths)
        for source, paths in sorted(by_source.items()):
            out.append(Reach(Peer(view.cluster, source), target_peer, protocol, port,
                             tuple(_unique(paths))))
        merged: dict[tuple, tuple[IPSpace, list[PathResult]]] = {}
        for group in self._atom_groups(view, indices):
            k = (group & -group).bit_length() - 1  # every atom of the group fares alike
            paths = [p for dst in indices
                     for p in self._external_paths(view, k, dst, protocol, port) if p.allowed]
            if not paths:
                continue
            key = tuple((p.via, tuple((e.layer, e.summary) for e in p.evidence)) for p in paths)
            space, _ = merged.get(key, (IPSpace(), paths))
            merged[key] = (space.union(view.space_of(group)), paths)
        for space, paths in merged.values():
            out.append(Reach(Peer(view.cluster, addresses=space), target_peer, protocol, port,
                             tuple(_unique(paths))))
        return out

    def ways_in(self, cluster: str, namespace: str) -> list[WayInVerdict]:
        """Every NodePort/LoadBalancer Service and Route into the pods of a namespace, with
        the outside addresses that get through every layer (and, for the rest, the first
        layer that blocks them)."""
        view = next((v for v in self.views if v.cluster == cluster), None)
        if view is None:
            return []
        out: list[WayInVerdict] = []
        for klass in self._namespace_classes(cluster, namespace):
            groups = self._atom_groups(view, [klass.index])
            for path in view.paths.get(klass.index, []):
                admitted, blocked = IPSpace(), None
                for group in groups:
                    k = (group & -group).bit_length() - 1  # every atom of the group fares alike
                    result = self._way_in_result(view, k, klass.index, path)
                    if result.allowed:
                        admitted = admitted.union(view.space_of(group))
                    elif blocked is None:
                        blocked = result.blocked_by
                out.append(WayInVerdict(path, tuple(klass.workloads), admitted, blocked))
        return out

    def _atom_groups(self, view: ClusterView, targets: list[int]) -> list[int]:
        """Outside ranges (masks over atoms, ordered by lowest atom) that every layer
        treats alike on the way into ``targets``: the same ingress part and the same
        Services and Routes admitting them. A perimeter file may tell any two ranges
        apart, so with one each range stands alone."""
        count = len(view.atoms)
        if self.perimeter is not None:
            return [1 << k for k in range(count)]
        everything = (1 << count) - 1
        n = view.evaluation.n
        groups = [everything]
        for dst in targets:
            splits = [(part.mask >> n) & everything
                      for part in view.evaluation.ingress_side(dst).parts]
            splits += [view.atoms_within(path.sources) for path in view.paths.get(dst, [])]
            for inside in splits:
                refined = []
                for group in groups:
                    if group & inside:
                        refined.append(group & inside)
                    if group & ~inside:
                        refined.append(group & ~inside)
                groups = refined
        return sorted(groups, key=lambda g: g & -g)

    @staticmethod
    def _ingress_candidates(view: ClusterView, dst: int, protocol: str, port: int) -> list[int]:
        """Classes whose traffic ``dst``'s ingress admits on the port: the only
        sources whose evidence can come out allowed (parts are disjoint)."""
        mask = 0
        for part in view.evaluation.ingress_side(dst).parts:
            if part.connections is not None and part.connections.allows(protocol, port):
                mask |= part.mask
        return bits(mask & ((1 << len(view.model.classes)) - 1))

    def can_reach(self, source: str, target: str, port: int, protocol: str = "TCP") -> Reach:
        """One flow's verdict with every path and layer. ``source`` is a workload
        (``ns/name``) or an address/CIDR outside the cluster; ``target`` a workload."""
        protocol = normalise_protocol(protocol)
        view, workload, indices = self._workload_classes(target)
        target_peer = Peer(view.cluster, workload)
        value = self._source(source)
        paths: list[PathResult] = []
        if isinstance(value, IPSpace):
            pieces = [k for k, atom in enumerate(view.atoms) if value.overlaps(atom)]
            per_piece = [[p for dst in indices for p in self._external_paths(view, k, dst, protocol, port)]
                         for k in pieces]
            denied = [ps for ps in per_piece if not any(p.allowed for p in ps)]
            paths = (denied[0] if denied else per_piece[0]) if per_piece else []
            return Reach(Peer(view.cluster, addresses=value), target_peer, protocol, port,
                         tuple(_unique(paths)))
        src_view, src_workload, src_indices = self._workload_classes(value)
        if src_view is not view:
            return Reach(Peer(src_view.cluster, src_workload), target_peer, protocol, port, (
                PathResult("none", False, (Evidence(NETWORK_POLICY, False,
                                                    "source and target are in different clusters"),)),))
        for src in src_indices:
            for dst in indices:
                paths.extend(self._internal_paths(view, src, dst, protocol, port))
        allowed = [p for p in paths if p.allowed]
        return Reach(Peer(view.cluster, src_workload), target_peer, protocol, port,
                     tuple(_unique(allowed or paths)))

    def egress_outside(self, source: str, port: int, protocol: str = "TCP") -> Egress:
        """Which outside addresses ``source`` may open ``protocol``/``port`` to, as far
        as NetworkPolicy egress decides (traffic leaving a pod meets no Service or
        perimeter layer of ours)."""
        protocol = normalise_protocol(protocol)
        view, workload, indices = self._workload_classes(source)
        ev = view.evaluation
        reached: list[IPSpace] = []
        isolated = True
        deciding: list[AnyRule] = []
        isolating: list[NetworkPolicyModel] = []
        walled: dict[tuple[int, int], list[int]] = {}  # (src, firewall rule) -> atoms it denies
        for src in indices:
            side = ev.egress_side(src)
            if not side.isolated:
                isolated = False
            isolating.extend(p for p in side.policies if p not in isolating)
            for part in side.parts:
                if not ev.egress_connections(part, None).allows(protocol, port):
                    continue
                atoms = (part.mask >> ev.n) & ((1 << len(view.atoms)) - 1)
                atoms = self._through_firewall(view, src, atoms, protocol, port, walled)
                reached.append(view.space_of(atoms))  # the outside atoms it reaches
                if side.isolated:
                    verdict = tiered_verdict(part.rules, None, part.np_isolated, protocol, port)
                    deciding.extend(r for r in verdict.rules if r not in deciding)
        evidence = self._egress_evidence(workload, isolated, isolating, deciding, protocol, port)
        evidence += self._firewall_evidence(view, walled, protocol, port)
        return Egress(Peer(view.cluster, workload), protocol, port, isolated, IPSpace.union_of(reached),
                      evidence)

    @staticmethod
    def _through_firewall(view: ClusterView, src: int, atoms: int, protocol: str, port: int,
                          walled: dict[tuple[int, int], list[int]]) -> int:
        """The atoms of ``atoms`` the source's EgressFirewall lets ``protocol``/``port``
        through to; the rest are noted in ``walled`` under the rule that denies them."""
        ev = view.evaluation
        firewall = ev.firewall_of(src)
        if firewall is None:
            return atoms
        kept = 0
        for k in bits(atoms):
            rule = firewall.deciding(view.atoms[k], protocol, port)
            if rule is None or rule.allow:
                kept |= 1 << k
            else:
                walled.setdefault((src, rule.index), []).append(k)
        return kept

    def _firewall_evidence(self, view: ClusterView, walled: dict[tuple[int, int], list[int]],
                           protocol: str, port: int) -> tuple[Evidence, ...]:
        out = []
        for (src, index), atoms in sorted(walled.items()):
            firewall = view.evaluation.firewall_of(src)
            if firewall is None:  # walled holds only sources a firewall filtered
                raise RuntimeError(f"no EgressFirewall for class {src}, which one walled")
            rule = firewall.rules[index]
            space = view.space_of(sum(1 << k for k in atoms))
            out.append(Evidence(EGRESS_FIREWALL, False, f"{rule.describe(firewall)} denies "
                                f"{protocol}/{port} to {space}",
                                self._place(firewall.obj, rule.field)))
        return tuple(out)

    def egress_connections(self, source: str) -> tuple[bool, ConnectionSet]:
        """(egress isolated?, every connection its egress rules allow to any peer)."""
        view, _workload, indices = self._workload_classes(source)
        ev = view.evaluation
        conns = ConnectionSet.none()
        for src in indices:
            side = ev.egress_side(src)
            if not side.isolated:
                return False, ConnectionSet.all()
            for part in side.parts:
                conns = conns.union(ev.egress_connections(part, None))
                if part.connections is not None:
                    continue  # the same whatever the destination
                # named ports: what a destination gets depends on its container ports only
                seen: set[tuple] = set()
                for bit in bits(part.mask & ev.all_classes):
                    if ev.classes[bit].ports not in seen:
                        seen.add(ev.classes[bit].ports)
                        conns = conns.union(ev.egress_connections(part, ev.classes[bit]))
        return True, conns

    def egress_rules_open(self, source: str) -> tuple[bool, ConnectionSet]:
        """(egress isolated?, what the egress rules of the NetworkPolicies isolating
        ``source`` open by port, whoever their peers are — in the inputs or not: a rule
        towards the DNS pods counts though a dump holds none of them)."""
        view, _workload, indices = self._workload_classes(source)
        conns = ConnectionSet.none()
        for src in indices:
            side = view.evaluation.egress_side(src)
            if not side.np_isolated:
                return False, ConnectionSet.all()
            for model in side.policies:
                conns = union_all([conns, *(rule.connections_to(None) for rule in model.egress)])
        return True, conns

    def egress_to_pods(self, source: str, peers: Iterable[PodPeer]) -> tuple[bool, ConnectionSet]:
        """What ``source``'s egress opens towards pods that may not be in the input (the
        management cluster's DNS pods), described by their namespace and labels: every
        tier decides (AdminNetworkPolicy, NetworkPolicy, BaselineAdminNetworkPolicy),
        and only rules whose peers select such a pod count. An ipBlock peer counts (the
        pods' addresses are unknown). Returns (isolated?, the connections open to one of
        ``peers`` from every class of ``source``); ``egress_to_pods_evidence`` names
        what blocks one."""
        view, _workload, indices = self._workload_classes(source)
        peers = tuple(peers)
        isolated, opened = False, ConnectionSet.all()
        for src in indices:
            side = view.evaluation.egress_side(src)
            if not side.isolated:
                continue
            isolated = True
            reach = union_all(tiered_connections([r for r in side.rules if _rule_selects(r, p)],
                                                 None, side.np_isolated) for p in peers)
            opened = opened.intersection(reach)
        return isolated, (opened if isolated else ConnectionSet.all())

    def egress_to_pods_evidence(self, source: str, peers: Iterable[PodPeer], protocol: str,
                                port: int, shown: str) -> Evidence | None:
        """The tier and object that deny ``protocol``/``port`` from ``source`` to the pods
        ``peers`` describe (named ``shown``), for the first class of ``source`` denied."""
        view, _workload, indices = self._workload_classes(source)
        peers = tuple(peers)
        for src in indices:
            side = view.evaluation.egress_side(src)
            if not side.isolated:
                continue
            verdicts = [tiered_verdict([r for r in side.rules if _rule_selects(r, p)], None,
                                       side.np_isolated, protocol, port) for p in peers]
            if any(v.allowed for v in verdicts):
                continue
            return self._policy_evidence("egress", side, verdicts[0], _class_name(view, src),
                                         shown, protocol, port)
        return None

    def workloads(self, cluster: str, namespace: str | None = None) -> list[Workload]:
        """Top-owner workloads (with endpoints) of a cluster, optionally of one namespace."""
        out: set[Workload] = set()
        if namespace is not None:
            for klass in self._namespace_classes(cluster, namespace):
                out.update(w for w in klass.workloads if w.namespace == namespace)
            return sorted(out, key=lambda w: (w.namespace, w.name, w.kind))
        for view in self.views:
            if view.cluster != cluster:
                continue
            for klass in view.model.classes:
                out.update(klass.workloads)
        return sorted(out, key=lambda w: (w.namespace, w.name, w.kind))

    def host_network_workloads(self, cluster: str) -> set[Workload]:
        """Workloads of a cluster whose pods all run with hostNetwork: true (a node's own
        network, which NetworkPolicy does not filter in OVN-Kubernetes)."""
        pod_network: set[Workload] = set()
        host: set[Workload] = set()
        for view in self.views:
            if view.cluster != cluster:
                continue
            for klass in view.model.classes:
                (host if klass.host_network else pod_network).update(klass.workloads)
        return host - pod_network

    def select_workloads(self, cluster: str, namespace: str,
                         labels: dict[str, str]) -> list[Workload]:
        """Workloads of a namespace whose pods carry all of ``labels``."""
        out: set[Workload] = set()
        for klass in self._namespace_classes(cluster, namespace):
            if all(klass.labels.get(k) == v for k, v in labels.items()):
                out.update(klass.workloads)
        return sorted(out, key=lambda w: (w.name, w.kind))

    def selected_by(self, policy_obj: object) -> list[Workload]:
        """Workloads whose pods a NetworkPolicy object selects."""
        out: set[Workload] = set()
        for view in self.views:
            for model in view.model.policies:
                if model.obj is policy_obj:
                    for i in bits(view.evaluation.policy_selects(model)):
                        out.update(view.evaluation.classes[i].workloads)
        return sorted(out, key=lambda w: (w.namespace, w.name, w.kind))

    def _egress_evidence(self, workload: Workload, isolated: bool,
                         isolating: list[NetworkPolicyModel], deciding: list[AnyRule],
                         protocol: str, port: int) -> tuple[Evidence, ...]:
        who = workload.ref
        if not isolated:
            return (Evidence(NETWORK_POLICY, True, f"no NetworkPolicy isolates egress of {who}"),)
        if deciding:
            deciding = sorted(deciding, key=_rule_order)
            names = ", ".join(r.display for r in deciding)
            return (Evidence(LAYER_OF_TIER[deciding[0].tier], True,
                             f"egress of {who} on {protocol}/{port} allowed by {names}",
                             self._place(deciding[0].policy.obj, deciding[0].field)),)
        if isolating:
            isolating = sorted(isolating, key=lambda p: p.ref)
            names = ", ".join(p.ref for p in isolating)
            return (Evidence(NETWORK_POLICY, False, f"egress of {who} is isolated by {names} and "
                                                    f"no rule allows {protocol}/{port} to outside "
                                                    "addresses", self._place(isolating[0].obj)),)
        return (Evidence(ADMIN_NETWORK_POLICY, False,
                         f"egress of {who} on {protocol}/{port} to outside addresses is denied or "
                         "passed on by AdminNetworkPolicy rules and denied by the "
                         "BaselineAdminNetworkPolicy, or allowed to none of them"),)

    def exposed_ports(self, target: str) -> list[ExposedPort]:
        """Pod ports of ``target`` that outside addresses reach, per way in."""
        view, workload, indices = self._workload_classes(target)
        target_peer = Peer(view.cluster, workload)
        found: dict[tuple[str, ConnectionSet], tuple[IPSpace, tuple[Evidence, ...]]] = {}
        for dst in indices:
            for group in self._atom_groups(view, [dst]):
                k = (group & -group).bit_length() - 1  # every atom of the group fares alike
                for via, conns, evidence in self._inbound(view, k, dst):
                    space, ev = found.get((via, conns), (IPSpace(), evidence))
                    found[(via, conns)] = (space.union(view.space_of(group)), ev)
        return [ExposedPort(target_peer, via, conns, space, ev)
                for (via, conns), (space, ev) in found.items()]

    def _inbound(self, view: ClusterView, atom_index: int,
                 dst: int) -> list[tuple[str, ConnectionSet, tuple[Evidence, ...]]]:
        """What one outside range reaches on ``dst``, per way in, as connection sets."""
        atom = view.atoms[atom_index]
        evaluation = view.evaluation
        part = evaluation.ingress_part(dst, evaluation.n + atom_index)
        policy_conns = part.connections if part is not None and part.connections else ConnectionSet.none()
        def gate_of(via: str | None) -> ConnectionSet:
            perimeter = self.perimeter.for_way(via) if self.perimeter is not None else None
            return perimeter.allowed(atom) if perimeter is not None else ConnectionSet.all()

        out: list[tuple[str, ConnectionSet, tuple[Evidence, ...]]] = []
        direct = policy_conns.intersection(gate_of(None))
        if direct and part is not None:  # no part: no connections, so nothing direct
            out.append((POD_NETWORK, direct, (Evidence(
                NETWORK_POLICY, True, _side_summary(evaluation.ingress_side(dst).policies, part)),)))
        for path in view.paths.get(dst, []):
            if not path.sources.contains(atom):
                continue
            if path.through_router and view.router is not None:
                rpart = evaluation.ingress_part(dst, view.router)
                allowed = rpart.connections if rpart is not None and rpart.connections else None
            else:
                allowed = policy_conns
            if not allowed or not allowed.allows(path.protocol, path.pod_port):
                continue
            entry = (PortSet.single(path.entry_port) if path.entry_port is not None
                     else PortSet.of(NODE_PORT_RANGE))
            if not gate_of(path.via).intersection(ConnectionSet.of(path.protocol, entry)):
                continue
            out.append((path.label, ConnectionSet.port(path.protocol, path.pod_port),
                        (Evidence(SERVICE, True, path.describe(), self._place(path.obj, path.field)),)))
        return out

    # -- the graph ------------------------------------------------------------------------

    def graph(self, cluster: str | None = None) -> nx.DiGraph:
        """A networkx DiGraph of one cluster (the first when not given): nodes are
        endpoint classes (``class-N``) and external ranges (``ext:first-last``);
        edge attributes ``connections`` (ConnectionSet) and ``allowed_by``
        (policies, Services, Routes and perimeter that allow the edge)."""
        import networkx as nx  # only for this export: a scan never imports it

        view = next((v for v in self.views if cluster is None or v.cluster == cluster), None)
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
                       allowed_by=_allowed_by(in_part, out_part))
        for dst in range(len(view.model.classes)):
            for k in range(len(view.atoms)):
                inbound = self._inbound(view, k, dst)
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


@dataclass(frozen=True, slots=True)
class PodPeer:
    """Pods described rather than read: their namespace, its labels (all of them when
    ``namespace_known``: the Namespace is in the input) and some of theirs."""

    namespace: str
    namespace_labels: dict[str, str]
    labels: dict[str, str]
    namespace_known: bool = False


def _may_match(selector: LabelSelector, labels: dict[str, str], complete: bool) -> bool:
    """Whether ``selector`` may select an object known to carry ``labels`` (and, unless
    ``complete``, perhaps others: a requirement on a key not known is taken as met)."""
    if complete:
        return selector.matches(labels)
    wanted = [Requirement(k, "In", frozenset([v])) for k, v in selector.match_labels]
    return all(r.matches(labels) for r in [*wanted, *selector.expressions] if r.key in labels)


def _rule_selects(rule: AnyRule, pod: PodPeer) -> bool:
    """Whether a policy rule's peers may select ``pod`` (an address peer may: the pod's
    address is not known; an admin rule's address peer only when it allows). A label the
    input does not show is taken as matching, so an unknown label never blocks."""
    if rule.peers is None:
        return True
    for peer in rule.peers:
        if getattr(peer, "ip_block", None) is not None:
            return True
        if getattr(peer, "addresses", None) is not None:
            if rule.action != "Deny":
                return True
            continue
        ns_sel, pod_sel = peer.namespace_selector, peer.pod_selector
        if ns_sel is None and isinstance(rule.policy, NetworkPolicyModel):
            ns_ok = rule.policy.namespace == pod.namespace  # a NetworkPolicy peer: its own namespace
        else:
            ns_ok = ns_sel is None or _may_match(ns_sel, pod.namespace_labels, pod.namespace_known)
        if ns_ok and (pod_sel is None or _may_match(pod_sel, pod.labels, False)):
            return True
    return False


def _rule_order(rule: AnyRule) -> tuple[str, str, int]:
    return rule.policy.ref, rule.direction, rule.index


def _class_name(view: ClusterView, index: int) -> str:
    if index == view.router:
        return f"the router ({ROUTER_NAMESPACE})"
    return str(view.evaluation.classes[index])


def _side_summary(policies: tuple[NetworkPolicyModel, ...], part: Part) -> str:
    if not policies:
        return "no NetworkPolicy isolates ingress"
    return "ingress allowed by " + ", ".join(_allowing(part))


def _allowing(part: Part) -> list[str]:
    """The part's rules that allow (for the tiers, Deny and Pass rules may match too)."""
    names = [r.display for r in part.rules if r.action == ALLOW]
    return names or ["no policy tier denying it"]


def _allowed_by(in_part: Part | None, out_part: Part | None) -> list[str]:
    out = ["egress not isolated"] if out_part is None else _allowing(out_part)
    out += ["ingress not isolated"] if in_part is None else _allowing(in_part)
    return out


def _unique(paths: Iterable[PathResult]) -> list[PathResult]:
    seen, out = set(), []
    for path in paths:
        if path not in seen:
            seen.add(path)
            out.append(path)
    return out
