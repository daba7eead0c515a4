"""NetworkPolicy evaluation over endpoint classes and external ranges, as bit masks.

For one cluster, every endpoint class and every external range gets a bit.
Each rule's peers become a mask (selectors through ``LabelIndex``, ipBlocks
through range containment); each destination's ingress then partitions the
sources by *which rules* select them, and each source's egress partitions the
destinations the same way. A connection is the intersection of what the
source's egress allows and what the destination's ingress allows. Work is
proportional to classes, rules and the connections that exist - never to raw
pod pairs.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from hcpscan.analysis.reachability.admin import (
    ADMIN_TIER,
    ALLOW,
    BASELINE_TIER,
    DENY,
    PASS,
    AdminPeer,
    AdminPolicyModel,
    AdminRule,
)
from hcpscan.analysis.reachability.egressfirewall import EgressFirewallModel
from hcpscan.analysis.reachability.endpoints import EndpointClass
from hcpscan.analysis.reachability.policies import (
    EGRESS,
    INGRESS,
    NP_TIER,
    NetworkPolicyModel,
    PeerSpec,
    PolicyRule,
)
from hcpscan.analysis.reachability.selectors import LabelIndex, LabelSelector, bits
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.ports import ConnectionSet, union_all


@dataclass(frozen=True, slots=True)
class EvaluationOptions:
    """Documented choices where Kubernetes leaves the answer to the network plugin.

    ``ipblock_selects_pods``: ipBlock peers also match pods whose IPs lie in
    the block (default False: ipBlock describes addresses outside the cluster,
    as the NetworkPolicy API documents and np-guard's analyser assumes).
    ``host_network_exempt``: pods with ``hostNetwork: true`` are not isolated
    by NetworkPolicy (default False: treat them like other pods; most plugins
    do not apply policies to host-network pods, so turn it on for a
    conservative view of such clusters).
    ``ipblock_any_address``: with ``ipblock_selects_pods``, a pod is selected when
    any of its addresses lies in the block, not all of them (secondary networks:
    a VM's cloud-init addresses stand for each of its networks, one of them is
    its address on this one; a dual-stack pod sends IPv4 from its IPv4 address).
    """

    ipblock_selects_pods: bool = False
    host_network_exempt: bool = False
    ipblock_any_address: bool = False


DEFAULT_OPTIONS = EvaluationOptions()


AnyRule = PolicyRule | AdminRule
DEFAULT_TIER = "default"  # no tier decided: the connection is allowed


@dataclass(slots=True)
class Part:
    """Peers of one side that the same rules select, and what those rules allow.

    ``rules`` are in evaluation order: AdminNetworkPolicy rules (by priority),
    NetworkPolicy rules, BaselineAdminNetworkPolicy rules. ``np_isolated``: some
    NetworkPolicy selects the side's class in this direction (so its tier, not the
    baseline, decides what the admin tier passes on). ``connections`` is ``None``
    when it depends on the destination's named ports.
    """

    mask: int
    rules: tuple[AnyRule, ...]
    connections: ConnectionSet | None
    np_isolated: bool = True


@dataclass(slots=True)
class Side:
    """One class's isolation in one direction: the policies selecting it and the parts."""

    policies: tuple[NetworkPolicyModel, ...]
    parts: list[Part] = field(default_factory=list)
    admin: tuple[AdminPolicyModel, ...] = ()  # ANPs and the BANP with rules for this side
    rules: tuple[AnyRule, ...] = ()  # every rule of those policies, in evaluation order

    @property
    def isolated(self) -> bool:
        """Some policy of some tier has a say (else everything is allowed)."""
        return bool(self.policies or self.admin)

    @property
    def np_isolated(self) -> bool:
        return bool(self.policies)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the policy tiers decide for one connection, and which rules decided.

    ``tier``: ``admin``, ``network-policy``, ``baseline`` or ``default`` (nothing
    decided: allowed). ``rules``: the deciding rule (for NetworkPolicy every rule
    that allows). ``passed_by``: the ANP rule that passed it to the next tier."""

    allowed: bool
    tier: str
    rules: tuple[AnyRule, ...] = ()
    passed_by: AdminRule | None = None


def tiered_connections(rules: Sequence[AnyRule], dst: EndpointClass | None,
                       np_isolated: bool) -> ConnectionSet:
    """What ``rules`` (all matching one peer, in evaluation order) allow towards
    ``dst``: the admin tier first (first match decides; Pass hands on), then the
    NetworkPolicies if any isolates the side, else the baseline, else allowed."""
    if all(r.tier == NP_TIER for r in rules):
        if np_isolated:
            return union_all(r.connections_to(dst) for r in rules)
        return ConnectionSet.all()
    undecided, allowed, denied = ConnectionSet.all(), ConnectionSet.none(), ConnectionSet.none()
    for rule in rules:
        if rule.tier != ADMIN_TIER:
            continue
        matched = rule.connections_to(dst).intersection(undecided)
        if not matched:
            continue
        undecided = undecided.difference(matched)
        if rule.action == ALLOW:
            allowed = allowed.union(matched)
        elif rule.action == DENY:
            denied = denied.union(matched)
    rest = ConnectionSet.all().difference(allowed.union(denied))
    if np_isolated:
        permitted = union_all(r.connections_to(dst) for r in rules if r.tier == NP_TIER)
        return allowed.union(rest.intersection(permitted))
    for rule in rules:
        if rule.tier != BASELINE_TIER or not rest:
            continue
        matched = rule.connections_to(dst).intersection(rest)
        rest = rest.difference(matched)
        if rule.action == ALLOW:
            allowed = allowed.union(matched)
    return allowed.union(rest)


def tiered_verdict(rules: Sequence[AnyRule], dst: EndpointClass | None, np_isolated: bool,
                   protocol: str, port: int) -> Verdict:
    """``tiered_connections`` for one protocol and port, with the rules that decided."""
    passed_by: AdminRule | None = None
    for rule in rules:
        if isinstance(rule, AdminRule) and rule.tier == ADMIN_TIER \
                and rule.connections_to(dst).allows(protocol, port):
            if rule.action == PASS:
                passed_by = rule
                break
            return Verdict(rule.action == ALLOW, ADMIN_TIER, (rule,))
    if np_isolated:
        allowing = tuple(r for r in rules
                         if r.tier == NP_TIER and r.connections_to(dst).allows(protocol, port))
        return Verdict(bool(allowing), NP_TIER, allowing, passed_by)
    for rule in rules:
        if rule.tier == BASELINE_TIER and rule.connections_to(dst).allows(protocol, port):
            return Verdict(rule.action == ALLOW, BASELINE_TIER, (rule,), passed_by)
    return Verdict(True, DEFAULT_TIER, (), passed_by)


class PolicyEvaluation:
    """Connections allowed by NetworkPolicy inside one cluster.

    Source universe: classes ``0..n-1`` then ``src_atoms``; destination
    universe: classes then ``dst_atoms``. Atoms are disjoint external ranges.
    """

    def __init__(self, classes: Sequence[EndpointClass], policies: Sequence[NetworkPolicyModel],
                 namespaces: dict[str, dict[str, str]], src_atoms: Sequence[IPSpace],
                 dst_atoms: Sequence[IPSpace], options: EvaluationOptions = DEFAULT_OPTIONS,
                 admin: Sequence[AdminPolicyModel] = (),
                 firewalls: dict[str, EgressFirewallModel] | None = None,
                 networks: Sequence[int] | None = None) -> None:
        self.classes = list(classes)
        self.policies = list(policies)
        self.admin = list(admin)  # in evaluation order: ANPs by priority, then the BANP
        self.firewalls = firewalls or {}  # EgressFirewall by namespace
        # Primary network of each class (UDN isolation): classes reach only classes of their
        # own network; -1 is in every network (the ingress controller). None: one network.
        self.networks = list(networks) if networks is not None else [0] * len(self.classes)
        self._firewall_cache: dict[tuple[str, int], ConnectionSet] = {}
        self.options = options
        self.n = len(self.classes)
        self.src_atoms = list(src_atoms)
        self.dst_atoms = list(dst_atoms)
        self.all_classes = (1 << self.n) - 1
        self.all_src = (1 << (self.n + len(self.src_atoms))) - 1
        self.all_dst = (1 << (self.n + len(self.dst_atoms))) - 1
        self._class_index = LabelIndex([c.labels for c in self.classes])
        self._ns_names = sorted(namespaces)
        self._ns_index = LabelIndex([namespaces[n] for n in self._ns_names])
        self._ns_classes: dict[str, int] = {}
        for i, klass in enumerate(self.classes):
            self._ns_classes[klass.namespace] = self._ns_classes.get(klass.namespace, 0) | (1 << i)
        self._host_network = sum(1 << i for i, c in enumerate(self.classes) if c.host_network)
        self._atom_starts = {EGRESS: [a.ranges[0][:2] for a in self.dst_atoms],
                             INGRESS: [a.ranges[0][:2] for a in self.src_atoms]}
        self._peer_masks: dict[tuple[int, str], int] = {}
        self._sides: dict[str, list[Side]] = {INGRESS: [], EGRESS: []}
        self._isolated: dict[str, int] = {INGRESS: 0, EGRESS: 0}
        self._conn_cache: dict[tuple, ConnectionSet] = {}
        self._build()

    # -- construction -----------------------------------------------------------------

    def _selecting(self, policies: Sequence[NetworkPolicyModel | AdminPolicyModel]
                   ) -> dict[str, list[list[Any]]]:
        """Per direction and class, the policies (in their given order) selecting it."""
        selecting: dict[str, list[list[Any]]] = {
            INGRESS: [[] for _ in range(self.n)], EGRESS: [[] for _ in range(self.n)]}
        for policy in policies:
            selected = self.policy_selects(policy)
            if not selected:
                continue
            for direction in (INGRESS, EGRESS):
                if policy.affects(direction):
                    for i in bits(selected):
                        selecting[direction][i].append(policy)
        return selecting

    def _build(self) -> None:
        selecting = self._selecting(self.policies)
        admin_selecting = self._selecting(self.admin)
        reach = self._network_reach()
        for direction in (INGRESS, EGRESS):
            cache: dict[tuple, Side] = {}
            # the rules of each set of selecting policies (a namespace's classes share one)
            rules_of: dict[tuple[tuple[int, ...], tuple[int, ...]],
                           tuple[tuple[AnyRule, ...], bool]] = {}
            everything = self.all_src if direction == INGRESS else self.all_dst
            beyond_classes = everything & ~self.all_classes
            for i, policies in enumerate(selecting[direction]):
                admin = admin_selecting[direction][i]
                if policies or admin:
                    self._isolated[direction] |= 1 << i
                ids = (tuple(id(p) for p in policies), tuple(id(p) for p in admin))
                found = rules_of.get(ids)
                if found is None:
                    rules = (
                        *(r for p in admin if p.tier == ADMIN_TIER for r in p.rules(direction)),
                        *(r for p in policies for r in p.rules(direction)),
                        *(r for p in admin if p.tier == BASELINE_TIER for r in p.rules(direction)))
                    found = rules_of[ids] = (rules, direction == INGRESS
                                             and any(r.named for r in rules))
                rules, named = found
                key = (*ids, self.classes[i].ports if named else (), self.networks[i])
                side = cache.get(key)
                if side is None:
                    universe = beyond_classes | reach[self.networks[i]]
                    side = cache[key] = self._side(tuple(policies), tuple(admin), rules,
                                                   direction, universe, i)
                self._sides[direction].append(side)

    def _network_reach(self) -> dict[int, int]:
        """Network id -> the classes a class of that network may reach (its network's and
        those in every network); -1 reaches every class."""
        members: dict[int, int] = {}
        for i, network in enumerate(self.networks):
            members[network] = members.get(network, 0) | (1 << i)
        everywhere = members.get(-1, 0)
        reach = {network: mask | everywhere for network, mask in members.items()}
        reach[-1] = self.all_classes
        return reach

    def _side(self, policies: tuple[NetworkPolicyModel, ...], admin: tuple[AdminPolicyModel, ...],
              rules: tuple[AnyRule, ...], direction: str, universe: int, index: int) -> Side:
        if not policies and not admin:
            return Side((), [Part(universe, (), ConnectionSet.all(), False)])
        groups: dict[tuple[int, ...], int] = {}
        members: dict[tuple[int, ...], tuple[AnyRule, ...]] = {(): ()}
        groups[()] = universe
        for rule_no, rule in enumerate(rules):
            mask = self.rule_peers(rule)
            if not mask:
                continue
            refined: dict[tuple[int, ...], int] = {}
            for key, part in groups.items():
                inside, outside = part & mask, part & ~mask
                if outside:
                    refined[key] = refined.get(key, 0) | outside
                if inside:
                    new_key = key + (rule_no,)
                    refined[new_key] = refined.get(new_key, 0) | inside
                    members.setdefault(new_key, members[key] + (rule,))
            groups = refined
        side = Side(policies, admin=admin, rules=rules)
        np_isolated = bool(policies)
        dst = self.classes[index] if direction == INGRESS else None
        for key, mask in groups.items():
            chosen = members[key]
            if direction == INGRESS:
                conns: ConnectionSet | None = self._tiered(chosen, dst, np_isolated)
                if not conns:
                    continue
            elif any(r.named for r in chosen):
                conns = None  # resolved per destination
            else:
                conns = self._tiered(chosen, None, np_isolated)
                if not conns:
                    continue
            side.parts.append(Part(mask, chosen, conns, np_isolated))
        return side

    # -- selection ----------------------------------------------------------------------

    def policy_selects(self, policy: NetworkPolicyModel | AdminPolicyModel) -> int:
        if isinstance(policy, AdminPolicyModel):
            mask = self._namespaces_mask(policy.subject_namespaces)
            if policy.subject_pods is not None:
                mask &= self._class_index.select(policy.subject_pods)
        else:
            mask = (self._ns_classes.get(policy.namespace, 0)
                    & self._class_index.select(policy.pod_selector))
        if self.options.host_network_exempt:
            mask &= ~self._host_network
        return mask

    def _namespaces_mask(self, selector: LabelSelector) -> int:
        """Classes of the namespaces ``selector`` selects."""
        namespaces = 0
        for j in bits(self._ns_index.select(selector)):
            namespaces |= self._ns_classes.get(self._ns_names[j], 0)
        return namespaces

    def rule_peers(self, rule: AnyRule) -> int:
        key = (id(rule), rule.direction)
        cached = self._peer_masks.get(key)
        if cached is not None:
            return cached
        universe = self.all_src if rule.direction == INGRESS else self.all_dst
        if rule.peers is None:
            mask = universe
        else:
            mask = 0
            for peer in rule.peers:
                if isinstance(peer, AdminPeer):
                    mask |= self._admin_peer_mask(peer, rule.direction)
                elif isinstance(rule, PolicyRule):  # a NetworkPolicy peer is only in its rules
                    mask |= self._peer_mask(peer, rule)
        self._peer_masks[key] = mask
        return mask

    def _address_mask(self, space: IPSpace, direction: str) -> int:
        """External atoms inside ``space``, and pods with IPs in it when ipBlocks select pods."""
        mask = self._atoms_within(space, direction)
        if self.options.ipblock_selects_pods:
            for i, klass in enumerate(self.classes):
                if not klass.ips:
                    continue
                if (any(space.contains(IPSpace.from_cidrs((ip,))) for ip in klass.ips)
                        if self.options.ipblock_any_address
                        else space.contains(IPSpace.from_cidrs(klass.ips))):
                    mask |= 1 << i
        return mask

    def _peer_mask(self, peer: PeerSpec, rule: PolicyRule) -> int:
        if peer.ip_block is not None:
            return self._address_mask(peer.ip_block, rule.direction)
        if peer.namespace_selector is None:
            namespaces = self._ns_classes.get(rule.policy.namespace, 0)
        else:
            namespaces = self._namespaces_mask(peer.namespace_selector)
        if peer.pod_selector is None:
            return namespaces
        return namespaces & self._class_index.select(peer.pod_selector)

    def _admin_peer_mask(self, peer: AdminPeer, direction: str) -> int:
        if peer.addresses is not None:
            return self._address_mask(peer.addresses, direction) if peer.addresses else 0
        if peer.namespace_selector is None:
            raise ValueError("an admin policy peer with neither addresses nor a namespace selector")
        mask = self._namespaces_mask(peer.namespace_selector)
        if peer.pod_selector is not None:
            mask &= self._class_index.select(peer.pod_selector)
        if self.options.host_network_exempt:
            mask &= ~self._host_network
        return mask

    def _atoms_within(self, block: IPSpace, direction: str) -> int:
        atoms = self.dst_atoms if direction == EGRESS else self.src_atoms
        starts = self._atom_starts[direction]
        mask = 0  # atom k at bit k, shifted past the classes once (not a class-wide int per atom)
        for version, lo, hi in block.ranges:
            k = bisect.bisect_right(starts, (version, lo)) - 1
            k = max(k, 0)
            while k < len(atoms):
                av, alo, ahi = atoms[k].ranges[0]
                if (av, alo) > (version, hi):
                    break
                if av == version and lo <= alo and ahi <= hi:
                    mask |= 1 << k
                k += 1
        return mask << self.n

    # -- answers ------------------------------------------------------------------------

    def ingress_side(self, dst: int) -> Side:
        return self._sides[INGRESS][dst]

    def egress_side(self, src: int) -> Side:
        return self._sides[EGRESS][src]

    def egress_part(self, src: int, dst_bit: int) -> Part | None:
        for part in self._sides[EGRESS][src].parts:
            if part.mask >> dst_bit & 1:
                return part
        return None

    def ingress_part(self, dst: int, src_bit: int) -> Part | None:
        for part in self._sides[INGRESS][dst].parts:
            if part.mask >> src_bit & 1:
                return part
        return None

    def firewall_of(self, src: int) -> EgressFirewallModel | None:
        """The EgressFirewall filtering class ``src``'s traffic out of the cluster (never a
        hostNetwork pod's)."""
        klass = self.classes[src]
        return None if klass.host_network else self.firewalls.get(klass.namespace)

    def firewall_allows(self, src: int, atom: int) -> ConnectionSet:
        """What class ``src``'s EgressFirewall lets out to destination atom ``atom``."""
        firewall = self.firewall_of(src)
        if firewall is None:
            return ConnectionSet.all()
        key = (firewall.namespace, atom)
        found = self._firewall_cache.get(key)
        if found is None:
            found = self._firewall_cache[key] = firewall.allowed(self.dst_atoms[atom])
        return found

    def verdict(self, direction: str, index: int, peer_bit: int, protocol: str,
                port: int) -> Verdict:
        """What the tiers decide for class ``index``'s ``direction`` towards the peer at
        ``peer_bit`` (a class, or an external atom past ``n``) on one port."""
        side = self._sides[direction][index]
        if not side.isolated:
            return Verdict(True, DEFAULT_TIER)
        matched = tuple(r for r in side.rules if self.rule_peers(r) >> peer_bit & 1)
        if direction == INGRESS:
            dst: EndpointClass | None = self.classes[index]
        else:
            dst = self.classes[peer_bit] if peer_bit < self.n else None
        return tiered_verdict(matched, dst, side.np_isolated, protocol, port)

    def egress_connections(self, part: Part, dst: EndpointClass | None) -> ConnectionSet:
        if part.connections is not None:
            return part.connections
        return self._tiered(part.rules, dst, part.np_isolated)

    def _tiered(self, rules: tuple[AnyRule, ...], dst: EndpointClass | None,
                np_isolated: bool) -> ConnectionSet:
        """``tiered_connections``, once per rule tuple and destination ports: classes
        and sides share rule tuples (a rule's ports depend on nothing else)."""
        key = (tuple(id(r) for r in rules), dst.ports if dst is not None else None, np_isolated)
        found = self._conn_cache.get(key)
        if found is None:
            found = self._conn_cache[key] = tiered_connections(rules, dst, np_isolated)
        return found

    def connections(self, src: int, dst: int) -> ConnectionSet:
        """What class ``src`` may open to class ``dst``: its egress and ``dst``'s ingress."""
        inbound = self.ingress_part(dst, src)
        if inbound is None or not inbound.connections:
            return ConnectionSet.none()
        if not self._isolated[EGRESS] >> src & 1:
            return inbound.connections
        outbound = self.egress_part(src, dst)
        if outbound is None:
            return ConnectionSet.none()
        return inbound.connections.intersection(self.egress_connections(outbound, self.classes[dst]))

    def pairs(self) -> Iterator[tuple[int, int, ConnectionSet, Part | None, Part | None]]:
        """Every allowed (source bit, destination bit, connections, ingress part,
        egress part) where at least one side is a class; bits past ``n`` are
        external atoms; a part is ``None`` where that side is not isolated."""
        n = self.n
        egress_isolated = self._isolated[EGRESS]
        for d in range(n):
            klass = self.classes[d]
            side = self._sides[INGRESS][d]
            for part in side.parts:
                if part.connections is None:
                    raise ValueError("an ingress part without its connections")
                in_part = part if side.isolated else None
                for s in bits(part.mask & ~egress_isolated):
                    yield s, d, part.connections, in_part, None
                for s in bits(part.mask & egress_isolated):
                    out = self.egress_part(s, d)
                    if out is None:
                        continue
                    conns = part.connections.intersection(self.egress_connections(out, klass))
                    if conns:
                        yield s, d, conns, in_part, out
        atom_mask = self.all_dst & ~self.all_classes
        for s in range(n):
            side = self._sides[EGRESS][s]
            for part in side.parts:
                reach = part.mask & atom_mask
                if not reach:
                    continue
                conns = self.egress_connections(part, None)
                if not conns:
                    continue
                firewalled = self.firewall_of(s) is not None
                for d in bits(reach):
                    allowed = conns.intersection(self.firewall_allows(s, d - n)) if firewalled else conns
                    if allowed:
                        yield s, d, allowed, None, part if side.isolated else None
