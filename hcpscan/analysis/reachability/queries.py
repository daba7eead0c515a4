"""The questions rules and commands ask the reachability index, answered with evidence.

Between workloads and from outside: ``can_reach`` (one flow, every path and
layer), ``who_can_reach`` (every source of a port, outside ranges merged by
identical evidence), ``exposed_ports`` and ``ways_in`` (what outside addresses
reach, per Service or Route). Out of a workload: ``egress_outside`` (which
outside addresses), ``egress_connections`` / ``egress_rules_open`` (what its
egress rules open), ``egress_to_pods`` (towards pods described rather than read,
at every tier). ``inbound`` is what the exported graph's edges from outside carry.
The index (``index.py``) holds what is asked about; ``evidence.py`` says why.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from hcpscan.analysis.reachability.answers import (
    NETWORK_POLICY,
    POD_NETWORK,
    Egress,
    Evidence,
    ExposedPort,
    PathResult,
    Peer,
    Reach,
    WayInVerdict,
)
from hcpscan.analysis.reachability.endpoints import EndpointClass, Workload
from hcpscan.analysis.reachability.evaluation import AnyRule, Side, tiered_connections, tiered_verdict
from hcpscan.analysis.reachability.evidence import EvidenceWriter, class_name
from hcpscan.analysis.reachability.exposure import ROUTER_NAMESPACE, ExposurePath
from hcpscan.analysis.reachability.index import ClusterView, ReachabilityIndex, resolve_source, source_value
from hcpscan.analysis.reachability.policies import EGRESS, INGRESS, NetworkPolicyModel
from hcpscan.analysis.reachability.selectors import LabelSelector, Requirement, bits
from hcpscan.inventory import Inventory
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.ports import NODE_PORT_RANGE, ConnectionSet, PortSet, normalise_protocol, union_all


@dataclass(frozen=True, slots=True)
class PodPeer:
    """Pods described rather than read: their namespace, its labels (all of them when
    ``namespace_known``: the Namespace is in the input) and some of theirs."""

    namespace: str
    namespace_labels: dict[str, str]
    labels: dict[str, str]
    namespace_known: bool = False


# (namespace, Service) of the DNS pods
OPENSHIFT_DNS = ("openshift-dns", "dns-default")
KUBE_DNS = ("kube-system", "kube-dns")


def dns_pods(inventory: Inventory, cluster: str) -> tuple[tuple[int, ...], str, list[PodPeer]]:
    """``dns_pod_ports`` and the DNS pods an egress rule must select: their namespace (its
    labels, with the name label every namespace carries) and their labels (the DNS
    Service's selector when the input has it). Read once per cluster (every workload's
    DNS flow asks)."""
    ports, note, pods = inventory.derived(f"required.dns-pods\0{cluster}",
                                          lambda inv: _dns_pods(inv, cluster))
    return ports, note, list(pods)


def _dns_pods(inventory: Inventory, cluster: str) -> tuple[tuple[int, ...], str, list[PodPeer]]:
    def pods(namespace: str, service: str) -> PodPeer:
        ns = inventory.get("Namespace", "", namespace, cluster)
        svc = inventory.get("Service", namespace, service, cluster)
        spec = svc.body.get("spec") if svc is not None else None
        selector = spec.get("selector") if isinstance(spec, dict) else None
        selector = ({str(k): v for k, v in selector.items() if isinstance(v, str)}
                    if isinstance(selector, dict) else {})
        ns_labels = {k: v for k, v in (ns.labels if ns is not None else {}).items()
                     if isinstance(v, str)}
        # without the Service its pods' labels are not known: every pod selector may match
        return PodPeer(namespace, {**ns_labels, "kubernetes.io/metadata.name": namespace},
                       selector, namespace_known=ns is not None)

    if inventory.get("Service", "openshift-dns", "dns-default", cluster) is not None or \
            inventory.get("Namespace", "", "openshift-dns", cluster) is not None:
        return ((5353,), "OpenShift DNS: dns-default 53 → pods 5353 (policies apply after DNAT)",
                [pods(*OPENSHIFT_DNS)])
    if inventory.get("Service", "kube-system", "kube-dns", cluster) is not None:
        return ((53,), "kube-system/kube-dns: DNS pods on 53 (no openshift-dns in this cluster)",
                [pods(*KUBE_DNS)])
    return (53, 5353), ("which DNS the management cluster runs is not in the input (openshift-dns "
                        "or kube-system/kube-dns): 53 or 5353 counts"), \
        [pods(*OPENSHIFT_DNS), pods(*KUBE_DNS)]


class ReachabilityQueries:
    """The questions, over one index and the evidence of its inventory."""

    def __init__(self, index: ReachabilityIndex, evidence: EvidenceWriter) -> None:
        self.index = index
        self.evidence = evidence
        # asked per workload by every NetworkPolicy of its namespace (HCP004's subjects)
        self._rules_open: dict[str, tuple[bool, ConnectionSet]] = {}
        self._protocols_open: dict[tuple[tuple[int, ...], tuple[str, ...]],
                                   dict[str, tuple[str, ...]]] = {}
        self._distinct: dict[tuple[str, ...], tuple[str, ...]] = {}
        # (egress side, DNS pods) -> what the side opens to them (``_side_to_pods``)
        self._to_pods: dict[tuple[int, ...], tuple[Side, tuple[PodPeer, ...], ConnectionSet]] = {}

    # -- towards a workload ---------------------------------------------------------------

    def who_can_reach(self, target: str, port: int, protocol: str = "TCP", *,
                      workloads: bool = True) -> list[Reach]:
        """Every source (workloads, and outside ranges merged by identical
        evidence) that can open ``protocol``/``port`` to ``target``;
        ``workloads=False`` leaves out the workloads (outside ranges only)."""
        protocol = normalise_protocol(protocol)
        view, workload, indices = self.index.resolve(target)
        target_peer = Peer(view.cluster, workload)
        out: list[Reach] = []
        by_source: dict[Workload, list[PathResult]] = {}
        for dst in indices if workloads else ():
            candidates = set(_ingress_candidates(view, dst, protocol, port))
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

    def can_reach(self, source: str, target: str, port: int, protocol: str = "TCP") -> Reach:
        """One flow's verdict with every path and layer. ``source`` is a workload
        (``ns/name``) or an address/CIDR outside the cluster; ``target`` a workload."""
        protocol = normalise_protocol(protocol)
        view, workload, indices = self.index.resolve(target)
        target_peer = Peer(view.cluster, workload)
        value = source_value(source)
        paths: list[PathResult] = []
        if isinstance(value, IPSpace):
            pieces = view.atoms_overlapping(value)
            per_piece = [[p for dst in indices for p in self._external_paths(view, k, dst, protocol, port)]
                         for k in pieces]
            denied = [i for i, ps in enumerate(per_piece) if not any(p.allowed for p in ps)]
            paths = per_piece[denied[0] if denied else 0] if per_piece else []
            if denied and len(denied) < len(per_piece):  # part of the range gets through
                shut = view.atoms[pieces[denied[0]]].intersection(value)
                let = IPSpace.union_of(view.atoms[pieces[i]] for i in range(len(per_piece))
                                       if i not in denied).intersection(value)
                paths = [_for_part(p, shut, let) for p in paths]
            return Reach(Peer(view.cluster, addresses=value), target_peer, protocol, port,
                         tuple(_unique(paths)))
        src_view, src_workload, src_indices = resolve_source(self.index, value)
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

    def exposed_ports(self, target: str) -> list[ExposedPort]:
        """Pod ports of ``target`` that outside addresses reach, per way in."""
        view, workload, indices = self.index.resolve(target)
        target_peer = Peer(view.cluster, workload)
        found: dict[tuple[str, ConnectionSet], tuple[IPSpace, tuple[Evidence, ...]]] = {}
        for dst in indices:
            for group in self._atom_groups(view, [dst]):
                k = (group & -group).bit_length() - 1  # every atom of the group fares alike
                for via, conns, evidence in self.inbound(view, k, dst):
                    space, ev = found.get((via, conns), (IPSpace(), evidence))
                    found[(via, conns)] = (space.union(view.space_of(group)), ev)
        return [ExposedPort(target_peer, via, conns, space, ev)
                for (via, conns), (space, ev) in found.items()]

    def ways_in(self, cluster: str, namespace: str) -> list[WayInVerdict]:
        """Every NodePort/LoadBalancer Service and Route into the pods of a namespace, with
        the outside addresses that get through every layer (and, for the rest, the first
        layer that blocks them)."""
        view = next((v for v in self.index.views if v.cluster == cluster), None)
        if view is None:
            return []
        out: list[WayInVerdict] = []
        for klass in self.index.namespace_classes(cluster, namespace):
            ways = view.paths.get(klass.index)
            if not ways:
                continue  # most classes: no way in, no ranges to tell apart
            groups = self._atom_groups(view, [klass.index])
            for path in ways:
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

    def inbound(self, view: ClusterView, atom_index: int,
                dst: int) -> list[tuple[str, ConnectionSet, tuple[Evidence, ...]]]:
        """What one outside range reaches on ``dst``, per way in, as connection sets."""
        atom = view.atoms[atom_index]
        evaluation = view.evaluation
        perimeter = self.index.perimeter
        part = evaluation.ingress_part(dst, evaluation.n + atom_index)
        policy_conns = part.connections if part is not None and part.connections else ConnectionSet.none()

        def gate_of(via: str | None) -> ConnectionSet:
            way = perimeter.for_way(via) if perimeter is not None else None
            return way.allowed(atom) if way is not None else ConnectionSet.all()

        out: list[tuple[str, ConnectionSet, tuple[Evidence, ...]]] = []
        direct = policy_conns.intersection(gate_of(None))
        if direct and part is not None:  # no part: no connections, so nothing direct
            out.append((POD_NETWORK, direct, (self.evidence.pod_network_ingress(view, dst, part),)))
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
            entry = (PortSet.single(path.gate_port) if path.gate_port is not None
                     else PortSet.of(NODE_PORT_RANGE))
            if not gate_of(path.gate_via).intersection(ConnectionSet.of(path.protocol, entry)):
                continue
            out.append((path.label, ConnectionSet.port(path.protocol, path.pod_port),
                        (self.evidence.way_in(path, True),)))
        return out

    # -- paths and the ranges that fare alike ---------------------------------------------

    def _external_paths(self, view: ClusterView, atom_index: int, dst: int, protocol: str,
                        port: int) -> tuple[PathResult, ...]:
        atom = view.atoms[atom_index]
        src_bit = view.evaluation.n + atom_index
        results = []
        direct = [e for e in (self.evidence.perimeter_gate(atom, protocol, port),
                              self.evidence.ingress(view, dst, src_bit, "outside", protocol, port)) if e]
        results.append(PathResult(POD_NETWORK, all(e.allows for e in direct), tuple(direct)))
        for path in view.paths.get(dst, []):
            if path.protocol == protocol and path.pod_port == port:
                results.append(self._way_in_result(view, atom_index, dst, path))
        return tuple(results)

    def _way_in_result(self, view: ClusterView, atom_index: int, dst: int,
                       path: ExposurePath) -> PathResult:
        """Every layer's say on one outside range taking one way in to ``dst``."""
        atom, protocol, port = view.atoms[atom_index], path.protocol, path.pod_port
        evidence = [self.evidence.way_in(path, path.sources.contains(atom))]
        gate = self.evidence.perimeter_gate(atom, protocol, path.gate_port, path.gate_via)
        if gate is not None:
            evidence.append(gate)
        if path.through_router and view.router is not None:
            evidence.append(self.evidence.ingress(view, dst, view.router,
                                                  f"the router ({ROUTER_NAMESPACE})", protocol, port))
        else:
            evidence.append(self.evidence.ingress(view, dst, view.evaluation.n + atom_index,
                                                  "outside", protocol, port))
        return PathResult(path.label, all(e.allows for e in evidence), tuple(evidence))

    def _internal_paths(self, view: ClusterView, src: int, dst: int, protocol: str,
                        port: int) -> tuple[PathResult, ...]:
        evidence: tuple[Evidence, ...] = (
            self.evidence.egress(view, src, dst, class_name(view, dst), protocol, port),
            self.evidence.ingress(view, dst, src, class_name(view, src), protocol, port))
        apart = self.evidence.network_apart(view, src, dst)
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
                        self.evidence.secondary(net, evaluation, EGRESS, s, d, names, protocol, port),
                        self.evidence.secondary(net, evaluation, INGRESS, d, s, names[::-1],
                                                protocol, port))
                    out.append(PathResult(f"secondary network {net.network.name}",
                                          all(e.allows for e in evidence), evidence))
        return out

    def _atom_groups(self, view: ClusterView, targets: list[int]) -> list[int]:
        """Outside ranges (masks over atoms, ordered by lowest atom) that every layer
        treats alike on the way into ``targets``: the same ingress part and the same
        Services and Routes admitting them. A perimeter file may tell any two ranges
        apart, so with one each range stands alone."""
        count = len(view.atoms)
        if self.index.perimeter is not None:
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

    # -- out of a workload ----------------------------------------------------------------

    def egress_outside(self, source: str, port: int, protocol: str = "TCP") -> Egress:
        """Which outside addresses ``source`` may open ``protocol``/``port`` to, as far
        as NetworkPolicy egress decides (traffic leaving a pod meets no Service or
        perimeter layer of ours)."""
        protocol = normalise_protocol(protocol)
        view, workload, indices = self.index.resolve(source)
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
                atoms = _through_firewall(view, src, atoms, protocol, port, walled)
                reached.append(view.space_of(atoms))  # the outside atoms it reaches
                if side.isolated:
                    verdict = tiered_verdict(part.rules, None, part.np_isolated, protocol, port)
                    deciding.extend(r for r in verdict.rules if r not in deciding)
        evidence = self.evidence.egress_outside(workload, isolated, isolating, deciding, protocol, port)
        evidence += self.evidence.firewall(view, walled, protocol, port)
        return Egress(Peer(view.cluster, workload), protocol, port, isolated, IPSpace.union_of(reached),
                      evidence)

    def egress_connections(self, source: str) -> tuple[bool, ConnectionSet]:
        """(egress isolated?, every connection its egress rules allow to any peer)."""
        view, _workload, indices = self.index.resolve(source)
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
        found = self._rules_open.get(source)
        if found is None:
            found = self._rules_open[source] = self._egress_rules_open(source)
        return found

    def protocols_open(self, source: str, ports: tuple[int, ...], protocols: tuple[str, ...]
                       ) -> tuple[str, ...]:
        """Those of ``protocols`` that ``source``'s egress rules open on any of ``ports``
        (``egress_rules_open``), in their order. Every NetworkPolicy of a namespace asks
        it of each workload it selects (HCP004): kept per question."""
        # by question, then by source (a few answers, each kept once: thousands of sources)
        answers = self._protocols_open.setdefault((ports, protocols), {})
        found = answers.get(source)
        if found is None:
            opened = self.egress_rules_open(source)[1]
            found = tuple(p for p in protocols if any(opened.allows(p, port) for port in ports))
            found = answers[source] = self._distinct.setdefault(found, found)
        return found

    def _egress_rules_open(self, source: str) -> tuple[bool, ConnectionSet]:
        view, _workload, indices = self.index.resolve(source)
        conns = ConnectionSet.none()
        dns: list[EndpointClass] | None = None
        for src in indices:
            side = view.evaluation.egress_side(src)
            if not side.np_isolated:
                return False, ConnectionSet.all()
            for model in side.policies:
                parts = [conns]
                for rule in model.egress:
                    parts.append(rule.connections_to(None))
                    if rule.named:  # ("port: dns"): what it names on the input's DNS pods
                        dns = self._dns_classes(view.cluster) if dns is None else dns
                        parts.extend(rule.connections_to(klass) for klass in dns)
                conns = union_all(parts)
        return True, conns

    def dns_named_port(self, cluster: str, name: str, protocol: str) -> frozenset[int]:
        """The port numbers a NetworkPolicy's named port (``port: dns``, its protocol)
        resolves to on the cluster's DNS pods in the input (none there: no number)."""
        return frozenset(port.number for klass in self._dns_classes(cluster)
                         for port in klass.ports if port.name == name and port.protocol == protocol)

    def dns_pods_in_input(self, cluster: str) -> bool:
        """Whether the cluster's DNS pods are in the input: without them a named port of a
        DNS egress rule (``port: dns``) means a number the input does not say."""
        return bool(self._dns_classes(cluster))

    def _dns_classes(self, cluster: str) -> list[EndpointClass]:
        """The endpoint classes of the cluster's DNS pods in the input, where a named port
        of a DNS egress rule resolves (none in the input: it resolves to nothing, as for an
        address outside)."""
        _ports, _note, peers = dns_pods(self.index.inventory, cluster)
        return [klass for peer in peers
                for klass in self.index.namespace_classes(cluster, peer.namespace)
                if all(klass.labels.get(k) == v for k, v in peer.labels.items())]

    def egress_to_pods(self, source: str, peers: Iterable[PodPeer]) -> tuple[bool, ConnectionSet]:
        """What ``source``'s egress opens towards pods that may not be in the input (the
        management cluster's DNS pods), described by their namespace and labels: every
        tier decides (AdminNetworkPolicy, NetworkPolicy, BaselineAdminNetworkPolicy),
        and only rules whose peers select such a pod count. An ipBlock peer counts (the
        pods' addresses are unknown). Returns (isolated?, the connections open to one of
        ``peers`` from every class of ``source``); ``egress_to_pods_evidence`` names
        what blocks one."""
        view, _workload, indices = self.index.resolve(source)
        peers = tuple(peers)
        isolated, opened = False, ConnectionSet.all()
        for src in indices:
            side = view.evaluation.egress_side(src)
            if not side.isolated:
                continue
            isolated = True
            opened = opened.intersection(self._side_to_pods(side, peers, view.cluster))
        return isolated, (opened if isolated else ConnectionSet.all())

    def unresolved_names_to_pods(self, source: str, peers: Iterable[PodPeer],
                                 protocols: Iterable[str] | None = None) -> list[str]:
        """The rules of ``source``'s egress that select one of ``peers`` and give a port by
        name (of one of ``protocols``, when given) while no pod of theirs is in the input:
        what those rules open is not known (a name means the number of the destination
        pods' container port of that name)."""
        return [f"{rule.display} names port " + ", ".join(_named_text(n) for n in named)
                for rule, named in self.names_to_pods(source, peers, protocols)]

    def names_to_pods(self, source: str, peers: Iterable[PodPeer],
                      protocols: Iterable[str] | None = None) -> list[tuple[AnyRule, tuple[Any, ...]]]:
        """``unresolved_names_to_pods`` as (rule, its named ports): only the names of
        ``protocols`` when given (an AdminNetworkPolicy's ``namedPort`` has no protocol and
        may be any). A rule whose peers cannot select one of ``peers`` (a bare podSelector:
        the policy's own namespace) or whose names are of other protocols opens nothing
        that is in doubt, so it is not among them."""
        view, _workload, indices = self.index.resolve(source)
        peers = tuple(peers)
        wanted = None if protocols is None else {p.upper() for p in protocols}
        out: dict[int, tuple[AnyRule, tuple[Any, ...]]] = {}
        for src in indices:
            side = view.evaluation.egress_side(src)
            for peer in peers:
                if self._peer_classes(view.cluster, peer):
                    continue
                for rule in side.rules:
                    named = tuple(n for n in getattr(rule, "named", ())
                                  if wanted is None or not getattr(n, "protocol", "")
                                  or n.protocol in wanted)
                    if named and id(rule) not in out and _rule_selects(rule, peer):
                        out[id(rule)] = (rule, named)
        return list(out.values())

    def _peer_classes(self, cluster: str, peer: PodPeer) -> list[EndpointClass]:
        """The input's classes of the DNS pods ``peer`` describes."""
        return [k for k in self._dns_classes(cluster) if k.namespace == peer.namespace
                and all(k.labels.get(key) == v for key, v in peer.labels.items())]

    def _peer_targets(self, cluster: str, peer: PodPeer) -> list[EndpointClass | None]:
        """The destinations a rule's ports resolve on for ``peer``: its classes in the
        input, else None (named ports resolve to nothing, as for an address)."""
        found: list[EndpointClass | None] = list(self._peer_classes(cluster, peer))
        return found or [None]

    def _side_to_pods(self, side: Side, peers: tuple[PodPeer, ...], cluster: str) -> ConnectionSet:
        """What one egress side opens to one of ``peers``: the classes a namespace's
        policies select alike share their side, and every control-plane workload asks
        of its DNS pods (kept by side and peers, both held so their ids stay theirs)."""
        key = (id(side), *map(id, peers))
        known = self._to_pods.get(key)
        if known is not None and known[0] is side and all(
                a is b for a, b in zip(known[1], peers, strict=True)):
            return known[2]
        # a port given by name opens the number the DNS pods' container port of that name
        # has: on those in the input (none: the name opens nothing known, as for an address)
        reach = union_all(
            tiered_connections([r for r in side.rules if _rule_selects(r, p)], klass,
                               side.np_isolated)
            for p in peers for klass in self._peer_targets(cluster, p))
        self._to_pods[key] = (side, peers, reach)
        return reach

    def egress_to_pods_evidence(self, source: str, peers: Iterable[PodPeer], protocol: str,
                                port: int, shown: str) -> Evidence | None:
        """The tier and object that deny ``protocol``/``port`` from ``source`` to the pods
        ``peers`` describe (named ``shown``), for the first class of ``source`` denied."""
        view, _workload, indices = self.index.resolve(source)
        peers = tuple(peers)
        for src in indices:
            side = view.evaluation.egress_side(src)
            if not side.isolated:
                continue
            verdicts = [tiered_verdict([r for r in side.rules if _rule_selects(r, p)], None,
                                       side.np_isolated, protocol, port) for p in peers]
            if any(v.allowed for v in verdicts):
                continue
            return self.evidence.policy("egress", side, verdicts[0], class_name(view, src),
                                        shown, protocol, port)
        return None


def _ingress_candidates(view: ClusterView, dst: int, protocol: str, port: int) -> list[int]:
    """Classes whose traffic ``dst``'s ingress admits on the port: the only
    sources whose evidence can come out allowed (parts are disjoint)."""
    mask = 0
    for part in view.evaluation.ingress_side(dst).parts:
        if part.connections is not None and part.connections.allows(protocol, port):
            mask |= part.mask
    return bits(mask & ((1 << len(view.model.classes)) - 1))


def _through_firewall(view: ClusterView, src: int, atoms: int, protocol: str, port: int,
                      walled: dict[tuple[int, int], list[int]]) -> int:
    """The atoms of ``atoms`` the source's EgressFirewall lets ``protocol``/``port``
    through to; the rest are noted in ``walled`` under the rule that denies them."""
    firewall = view.evaluation.firewall_of(src)
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


def _may_match(selector: LabelSelector, labels: dict[str, str], complete: bool) -> bool:
    """Whether ``selector`` may select an object known to carry ``labels`` (and, unless
    ``complete``, perhaps others: a requirement on a key not known is taken as met)."""
    if complete:
        return selector.matches(labels)
    wanted = [Requirement(k, "In", frozenset([v])) for k, v in selector.match_labels]
    return all(r.matches(labels) for r in [*wanted, *selector.expressions] if r.key in labels)


def _named_text(port: object) -> str:
    """A named port of a rule as a reason shows it: a NetworkPolicy's has a protocol, an
    AdminNetworkPolicy's ``namedPort`` is a name only."""
    name, protocol = getattr(port, "name", port), getattr(port, "protocol", "")
    return f"{name!r}" + (f" ({protocol})" if protocol else "")


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


def _unique(paths: Iterable[PathResult]) -> list[PathResult]:
    seen, out = set(), []
    for path in paths:
        if path not in seen:
            seen.add(path)
            out.append(path)
    return out


def _for_part(path: PathResult, shut: IPSpace, let: IPSpace) -> PathResult:
    """A blocked way of a range part of which gets through: its first blocking layer's say
    holds for ``shut`` only, so the say names it and what ``let`` in (a security group
    rule admitting some of the workers is not "no rule admits it" for all of them)."""
    evidence = list(path.evidence)
    for i, e in enumerate(evidence):
        if not e.allows:
            evidence[i] = replace(e, summary=f"{e.summary} (for {shut}; {let} of the range gets "
                                             "through)")
            break
    return replace(path, evidence=tuple(evidence))

