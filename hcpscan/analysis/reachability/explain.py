"""Explain mode: for each pair of peers, which policy layer and rule allows or denies each
connection, in the form np-guard's netpol-analyzer prints (``list --explain``).

Each direction of a pair is decided on its own, as the policy tiers decide it:

* the first AdminNetworkPolicy rule (by priority, then rule order) that matches the
  peer and the port decides: Allow and Deny are final, Pass hands the port on;
* a port no ANP rule decides, or one passed on, is decided by the NetworkPolicies that
  select the pod in that direction, if any: it is allowed when some policy allows it
  (each policy names the first of its rules that allows the port), else denied by
  every selecting policy (each saying why: no rules in that direction, no rule
  selecting the peer, or the first rule selecting the peer but not the port);
* failing NetworkPolicies, the first BaselineAdminNetworkPolicy rule matching the
  peer and port decides, else the system default allows.

Beside those tiers: the ``{ingress-controller}`` reaches a workload only on the ports
its Routes and Ingresses send to (each object named), as far as the workload's ingress
tiers admit a controller that serves them; an EgressFirewall (which netpol-analyzer
does not read) decides traffic leaving the cluster after the tiers; pods on different
primary (C)UDNs are isolated, which only an explanation of one connection lists.

Each secondary network (NetworkAttachmentDefinitions of one name) has a section of its
own, between the workloads attached to it, decided by the MultiNetworkPolicies for it
alone, as the connection list evaluates it (``secondary.py``). There, as
netpol-analyzer writes it, a direction no MultiNetworkPolicy decides is not named
beside one that some policy decides.

The ports of a pair are split by (allowed, egress reasons, ingress reasons); pairs that
no rule of any tier touches are only listed, as allowed by the system default. The
explanations come from the ``PolicyEvaluation`` the connection list uses (its sides and
rule peer masks), so a pair's allowed groups are exactly its line of the list.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from hcpscan.analysis.reachability.admin import ADMIN_TIER, ALLOW, ANP, BANP, DENY, PASS, AdminRule
from hcpscan.analysis.reachability.connlist import (
    INGRESS_CONTROLLER,
    Focus,
    connection_universe,
    external_name,
    udn_name,
)
from hcpscan.analysis.reachability.coverage import (
    CONNECTION_LIST_EVALUATED,
    UnevaluatedKind,
    exclusion_note,
    read_unevaluated,
)
from hcpscan.analysis.reachability.endpoints import (
    EndpointClass,
    split_workloads,
)
from hcpscan.analysis.reachability.evaluation import EvaluationOptions, PolicyEvaluation
from hcpscan.analysis.reachability.exposure import (
    NGINX,
    ROUTER,
    ExposurePath,
    IngressController,
    add_controller,
    has_ways_through_controllers,
    ingress_paths,
    route_paths,
    unrouted_backends,
)
from hcpscan.analysis.reachability.model import ClusterModel, read_clusters
from hcpscan.analysis.reachability.networks import (
    POD,
    Network,
    names_networks,
    primary_networks,
)
from hcpscan.analysis.reachability.policies import EGRESS, INGRESS, NetworkPolicyModel, PolicyRule
from hcpscan.analysis.reachability.secondary import SecondaryNetwork, secondary_networks
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import namespace_of
from hcpscan.model.ipspace import IPSpace, cut
from hcpscan.model.ports import ConnectionSet

NP_KIND = "NetworkPolicy"
FIREWALL_KIND = "EgressFirewall"  # hcpscan's addition: netpol-analyzer does not read them
ISOLATION_KIND = "isolation"  # user-defined primary networks apart: no policy has a say
DEFAULT_KIND = ""  # the system default: listed last
SYSTEM_DEFAULT = "the system default (Allow all)"
# the order kinds are listed in within a direction: by layer, then by name
LAYER = {ANP: 3, NP_KIND: 2, FIREWALL_KIND: 2, "Route": 2, "Ingress": 2, BANP: 1, DEFAULT_KIND: 0}
ALL = ConnectionSet.all()


@dataclass(frozen=True, slots=True)
class Reason:
    """What one direction decides for some connections, and the lines saying why:
    ``(kind, text)`` pairs; only the system default's line means nothing else decided."""

    allowed: bool
    lines: tuple[tuple[str, str], ...]

    @property
    def by_default(self) -> bool:
        return all(kind == DEFAULT_KIND for kind, _ in self.lines)

    @property
    def isolation(self) -> bool:
        return any(kind == ISOLATION_KIND for kind, _ in self.lines)


DEFAULT_REASON = Reason(True, ((DEFAULT_KIND, SYSTEM_DEFAULT),))
Partition = list[tuple[ConnectionSet, Reason]]


@dataclass(frozen=True, slots=True)
class Segment:
    """Connections of a pair with the same outcome and the same reasons."""

    connections: ConnectionSet
    egress: Reason
    ingress: Reason

    @property
    def allowed(self) -> bool:
        return self.egress.allowed and self.ingress.allowed

    @property
    def by_default(self) -> bool:
        return self.egress.by_default and self.ingress.by_default


@dataclass(frozen=True, slots=True)
class Peer:
    """One side of a pair: a bit of the evaluation (class or external atom) and its name."""

    bit: int
    name: str
    klass: EndpointClass | None  # None: an address range outside the cluster


def _direction(direction: str) -> str:
    return "Ingress" if direction == INGRESS else "Egress"


def _np_partition(evaluation: PolicyEvaluation, policy: NetworkPolicyModel, direction: str,
                  me: Peer, peer: Peer, dst: EndpointClass | None) -> Partition:
    """One NetworkPolicy's (or MultiNetworkPolicy's) verdict on the pair, per connection."""
    kind = policy.kind
    name = f"{kind} '{policy.ref}'"
    word = _direction(direction)
    rules = policy.rules(direction)
    if not rules:
        text = f"{name} selects {me.name}, but {peer.name} is not allowed by any {word} rule " \
               "(no rules defined)"
        return [(ALL, Reason(False, ((kind, text),)))]
    matched = [r for r in rules if evaluation.rule_peers(r) >> peer.bit & 1]
    if not matched:
        text = f"{name} selects {me.name}, but {peer.name} is not allowed by any {word} rule"
        return [(ALL, Reason(False, ((kind, text),)))]
    out: Partition = []
    rest = ALL
    for rule in matched:  # each port is explained by the first rule that allows it
        allowed = rule.connections_to(dst).intersection(rest)
        if allowed:
            text = f"{name} allows connections by {word} rule #{rule.index + 1}"
            out.append((allowed, Reason(True, ((kind, text),))))
            rest = rest.difference(allowed)
    if rest:
        out.append((rest, Reason(False, ((kind, _unmatched(matched[0], name, word, me, peer,
                                                            dst)),))))
    return out


def _unmatched(rule: PolicyRule, name: str, word: str, me: Peer, peer: Peer,
               dst: EndpointClass | None) -> str:
    head = f"{name} selects {me.name}, and {word} rule #{rule.index + 1} selects {peer.name}, "
    if rule.named and not rule.numeric and not rule.connections_to(dst):
        return head + "but named ports of the rule have no match in the configuration of the " \
                      "destination peer"
    return head + "but the protocols and ports do not match"


def _combine(parts: Sequence[Partition]) -> Partition:
    """Several NetworkPolicies together: a connection is allowed when one allows it (the
    allowing ones are named), else denied by all of them (all are named)."""
    out = parts[0]
    for part in parts[1:]:
        merged: Partition = []
        for conns, reason in out:
            for other_conns, other in part:
                both = conns.intersection(other_conns)
                if not both:
                    continue
                if reason.allowed == other.allowed:
                    merged.append((both, Reason(reason.allowed, reason.lines + other.lines)))
                else:
                    merged.append((both, reason if reason.allowed else other))
        out = merged
    return out


def _baseline_partition(rules: Iterable[AdminRule], dst: EndpointClass | None) -> Partition:
    out: Partition = []
    rest = ALL
    for rule in rules:
        matched = rule.connections_to(dst).intersection(rest)
        if matched:
            out.append((matched, Reason(rule.action == ALLOW, ((BANP, _admin_line(rule)),))))
            rest = rest.difference(matched)
    if rest:
        out.append((rest, DEFAULT_REASON))
    return out


def _admin_line(rule: AdminRule) -> str:
    verb = {ALLOW: "allows", DENY: "denies", PASS: "passes"}[rule.action]
    kind = ANP if rule.tier == ADMIN_TIER else BANP
    return f"{kind} '{rule.policy.name}' {verb} connections by {_direction(rule.direction)} " \
           f"rule {rule.name}"


def direction_partition(evaluation: PolicyEvaluation, direction: str, me: Peer,
                        peer: Peer) -> Partition:
    """Why ``me``'s ``direction`` (its egress towards ``peer`` or its ingress from it)
    allows or denies each connection."""
    if me.klass is None:
        return [(ALL, DEFAULT_REASON)]  # addresses outside: no policy selects them
    side = evaluation.ingress_side(me.bit) if direction == INGRESS else evaluation.egress_side(me.bit)
    if not side.isolated:
        return [(ALL, DEFAULT_REASON)]
    dst = me.klass if direction == INGRESS else peer.klass
    matched = [r for r in side.rules if evaluation.rule_peers(r) >> peer.bit & 1]
    out: Partition = []
    handed_on: list[tuple[ConnectionSet, tuple[tuple[str, str], ...]]] = []
    undecided = ALL
    for rule in matched:
        if not isinstance(rule, AdminRule) or rule.tier != ADMIN_TIER:
            continue
        decided = rule.connections_to(dst).intersection(undecided)
        if not decided:
            continue
        undecided = undecided.difference(decided)
        line = ((ANP, _admin_line(rule)),)
        if rule.action == PASS:
            handed_on.append((decided, line))
        else:
            out.append((decided, Reason(rule.action == ALLOW, line)))
    if undecided:
        handed_on.append((undecided, ()))
    if side.policies:
        lower = _combine([_np_partition(evaluation, p, direction, me, peer, dst)
                          for p in side.policies])
    else:
        lower = _baseline_partition((r for r in matched if isinstance(r, AdminRule)
                                     and r.tier != ADMIN_TIER), dst)
    for conns, prefix in handed_on:
        for lower_conns, reason in lower:
            both = conns.intersection(lower_conns)
            if both:
                out.append((both, Reason(reason.allowed, prefix + reason.lines)))
    return out


def _firewall_partition(evaluation: PolicyEvaluation, src: Peer, dst: Peer) -> Partition | None:
    """What ``src``'s namespace's EgressFirewall decides towards an outside ``dst`` (None:
    no firewall applies); connections no rule matches pass it without a word."""
    firewall = evaluation.firewall_of(src.bit) if src.klass is not None else None
    if firewall is None or dst.klass is not None:
        return None
    atom = evaluation.dst_atoms[dst.bit - evaluation.n]
    out: Partition = []
    rest = ALL
    for rule in firewall.rules:
        if rule.dns_name or not rule.addresses.contains(atom):
            continue
        matched = rule.ports.intersection(rest)
        if matched:
            verb = "allows" if rule.allow else "denies"
            text = f"{FIREWALL_KIND} '{firewall.namespace}/{firewall.obj.name}' {verb} " \
                   f"connections by rule #{rule.index + 1}"
            out.append((matched, Reason(rule.allow, ((FIREWALL_KIND, text),))))
            rest = rest.difference(matched)
    return out + ([(rest, Reason(True, ()))] if rest else [])


def explain_pair(evaluation: PolicyEvaluation, src: Peer, dst: Peer) -> list[Segment]:
    """The pair's connections split by outcome and reasons (egress of ``src``, ingress
    of ``dst``), each reason pair once."""
    egress = direction_partition(evaluation, EGRESS, src, dst)
    firewall = _firewall_partition(evaluation, src, dst)
    if firewall is not None:  # both must let it out; the firewall's word replaces the default's
        egress = [(c, _without_default(r) if len(r.lines) > 1 else r)
                  for c, r in _intersect(egress, firewall)]
    ingress = direction_partition(evaluation, INGRESS, dst, src)
    return join_directions(egress, ingress)


def join_directions(egress: Partition, ingress: Partition) -> list[Segment]:
    found: dict[tuple[Reason, Reason], ConnectionSet] = {}
    for out_conns, out_reason in egress:
        for in_conns, in_reason in ingress:
            both = out_conns.intersection(in_conns)
            if both:
                key = (out_reason, in_reason)
                found[key] = found[key].union(both) if key in found else both
    return [Segment(conns, out_reason, in_reason) for (out_reason, in_reason), conns in found.items()]


# -- text ------------------------------------------------------------------------------------

RULER = "-" * 160


def connections_text(conns: ConnectionSet) -> str:
    """``TCP:[80,8000-8090], UDP`` (a bare protocol: all its ports), TCP, UDP, SCTP order."""
    parts = []
    for proto in ("TCP", "UDP", "SCTP"):
        ports = conns.ports(proto)
        if ports:
            parts.append(proto if ports.is_all else f"{proto}:[{ports}]")
    return ", ".join(parts)


def _reason_lines(direction: str, reason: Reason) -> list[str]:
    if reason.isolation:
        return [f"\t\t{_direction(direction)} "] + [f"\t\t\t{text}" for _, text in reason.lines]
    verdict = "Allowed" if reason.allowed else "Denied"
    head = f"\t\t{_direction(direction)} ({verdict})"
    if reason.by_default:
        return [f"{head} due to {SYSTEM_DEFAULT}"]
    out = [head]
    by_kind: dict[str, set[str]] = {}
    for kind, text in reason.lines:
        by_kind.setdefault(kind, set()).add(text)
    for kind in sorted(by_kind, key=lambda k: (-LAYER.get(k, 2), k)):
        texts = sorted(by_kind[kind])
        if len(texts) == 1:
            out.append(f"\t\t\t{texts[0]}")
        else:
            out.append(f"\t\t\t{kind} list:")
            out += [f"\t\t\t\t- {t}" for t in texts] + [""]
    return out


def segment_lines(segment: Segment, quiet_default: bool = False) -> list[str]:
    """One group of a pair's connections with why; ``quiet_default``: a direction only the
    system default decides is not named (a secondary network's way)."""
    verdict = "Allowed" if segment.allowed else "Denied"
    conns = connections_text(segment.connections)
    if segment.by_default:
        return [f"\t{verdict} {conns} due to {SYSTEM_DEFAULT}"]
    reasons = [line for direction, reason in ((EGRESS, segment.egress), (INGRESS, segment.ingress))
               if not (quiet_default and reason.by_default)
               for line in _reason_lines(direction, reason)]
    if segment.egress.isolation:
        return [f"\t{verdict} {conns} due to existence of user defined networks:"] + reasons
    return [f"\t{verdict} {conns} due to the following policies and rules:"] + reasons


def pair_lines(source: str, destination: str, segments: Sequence[Segment],
               quiet_default: bool = False) -> list[str]:
    """One pair's block: its allowed, then its denied connections, each group with why."""
    out = [RULER, f"Connections between {source} => {destination}:", ""]
    for allowed, title in ((True, "Allowed connections:"), (False, "Denied connections:")):
        chosen = [s for s in segments if s.allowed == allowed]
        if not chosen:
            continue
        out.append(title)
        texts = sorted((segment_lines(s, quiet_default) for s in chosen), key=lambda lines: lines[0])
        for lines in texts:
            out += lines + [""]
    return out


def banner(title: str) -> list[str]:
    edge = "#" * (len(title) + 4)
    return [edge, f"# {title} #", edge]


# -- pairs of a cluster ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairExplanation:
    source: str
    destination: str
    segments: tuple[Segment, ...]

    @property
    def by_default(self) -> bool:
        """No rule of any tier touches the pair: everything is allowed by default."""
        return all(s.by_default for s in self.segments)

    def restricted(self, conns: ConnectionSet | None, only: str) -> PairExplanation:
        """The pair on ``conns`` only (None: all), with ``only`` ``allow`` or ``deny``
        keeping those segments ('' keeps both)."""
        out = []
        for segment in self.segments:
            kept = segment.connections if conns is None else segment.connections.intersection(conns)
            if kept and (not only or segment.allowed == (only == "allow")):
                out.append(Segment(kept, segment.egress, segment.ingress))
        return PairExplanation(self.source, self.destination, tuple(out))


@dataclass(slots=True)
class ExplainSection:
    """The explanations inside one network ('' when the cluster has only the pod network)."""

    cluster: str
    network: str
    pairs: list[PairExplanation]

    # pairs across primary networks: denied by the isolation (listed only for one connection)
    isolated: list[PairExplanation] = field(default_factory=list)
    secondary: bool = False  # a secondary network's: MultiNetworkPolicies decide


@dataclass(slots=True)
class Explanation:
    sections: list[ExplainSection] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    unevaluated: list[UnevaluatedKind] = field(default_factory=list)

    @property
    def exclusion_note(self) -> str:
        return exclusion_note(self.unevaluated)

    @property
    def networks(self) -> bool:
        """Some cluster has user-defined primary networks (sections name their network)."""
        return any(s.network for s in self.sections)


def _peers(evaluation: PolicyEvaluation, atoms: Sequence[IPSpace],
           rename: Callable[[str], str]) -> list[Peer]:
    """Every workload (on the first class holding it) and every external range."""
    out: dict[str, Peer] = {}
    for klass in evaluation.classes:
        for workload in klass.workloads:
            out.setdefault(workload.ref, Peer(klass.index, rename(workload.ref), klass))
    peers = sorted(out.values(), key=lambda p: p.name)
    return peers + [Peer(evaluation.n + k, external_name(a), None) for k, a in enumerate(atoms)]


PairFilter = Callable[[str, str], bool]


def cluster_explanations(model: ClusterModel, options: EvaluationOptions,
                         inventory: Inventory | None, rename: Callable[[str], str] = str,
                         keep: PairFilter = lambda src, dst: True,
                         universe: IPSpace | None = None) -> list[PairExplanation]:
    """Every pair of the cluster's workloads and external ranges (cut from ``universe``,
    by default ``connection_universe``), explained; with ``inventory`` and Routes or
    Ingresses in it, also the ``{ingress-controller}`` pairs."""
    universe = connection_universe(model) if universe is None else universe
    src_atoms = cut(model.policy_blocks(INGRESS), universe)
    dst_atoms = cut(model.policy_blocks(EGRESS), universe)
    classes, namespaces = list(model.classes), dict(model.namespaces)
    controllers: list[tuple[int, IngressController]] = []
    if inventory is not None and has_ways_through_controllers(inventory, model.cluster):
        controllers = [(add_controller(inventory, model.cluster, c, classes, namespaces), c)
                       for c in (ROUTER, NGINX)]
    evaluation = PolicyEvaluation(classes, model.policies, namespaces, src_atoms, dst_atoms,
                                  options, model.admin, model.firewalls)
    out = _controller_explanations(inventory, evaluation, controllers, rename) if inventory is not None else []
    for src in _peers(evaluation, src_atoms, rename):
        for dst in _peers(evaluation, dst_atoms, rename):
            if src.name == dst.name or (src.klass is None and dst.klass is None):
                continue
            if not keep(src.name, dst.name):
                continue
            segments = explain_pair(evaluation, src, dst)
            out.append(PairExplanation(src.name, dst.name, tuple(segments)))
    return out


def _controller_explanations(inventory: Inventory, evaluation: PolicyEvaluation,
                             controllers: list[tuple[int, IngressController]],
                             rename: Callable[[str], str]) -> list[PairExplanation]:
    """``{ingress-controller}`` to each workload its Routes and Ingresses send to: the
    objects' ports, and the workload's ingress policies towards the controllers that
    serve those objects (allowed when one of them is admitted, as the list says)."""
    out = []
    for klass in evaluation.classes[:evaluation.n - len(controllers)]:
        paths = route_paths(inventory, klass) + ingress_paths(inventory, klass)
        if not paths:
            continue
        layer = _combine([_path_partition(via, paths) for via in sorted({_path_key(p) for p in paths})])
        for workload in klass.workloads:
            me = Peer(klass.index, rename(workload.ref), klass)
            policies = _combine([
                direction_partition(evaluation, INGRESS, me,
                                    Peer(index, INGRESS_CONTROLLER, evaluation.classes[index]))
                for index, controller in controllers
                if any(p.via in controller.serves for p in paths)])
            ingress = [(conns, _without_default(r)) for conns, r in _intersect(layer, policies)]
            out.append(PairExplanation(INGRESS_CONTROLLER, me.name,
                                       tuple(join_directions([(ALL, DEFAULT_REASON)], ingress))))
    return out


def _path_key(path: ExposurePath) -> tuple[str, str, str]:
    return (path.via, f"{namespace_of(path.obj)}/{path.obj.name}", path.service)


def _path_partition(key: tuple[str, str, str], paths: list[ExposurePath]) -> Partition:
    """One Route or Ingress: the pod ports it sends to, and the rest it does not."""
    via, ref, service = key
    sent = ConnectionSet.none()
    for path in paths:
        if _path_key(path) == key:
            sent = sent.union(ConnectionSet.port(path.protocol, path.pod_port))
    allow = f"{via} '{ref}' allows ingress connections through service {service}"
    deny = f"{via} '{ref}' allows ingress to service {service}, but the protocols and ports do " \
           "not match"
    out: Partition = [(sent, Reason(True, ((via, allow),)))]
    rest = ALL.difference(sent)
    return out + ([(rest, Reason(False, ((via, deny),)))] if rest else [])


def _without_default(reason: Reason) -> Reason:
    """A layer's own word where the system default would otherwise be named beside it."""
    return Reason(reason.allowed, tuple(x for x in reason.lines if x[0] != DEFAULT_KIND))


def _intersect(first: Partition, second: Partition) -> Partition:
    """Two layers that must both allow: every connection names the reasons of both."""
    out: Partition = []
    for conns, reason in first:
        for other_conns, other in second:
            both = conns.intersection(other_conns)
            if both:
                out.append((both, Reason(reason.allowed and other.allowed, reason.lines + other.lines)))
    return out


def explain(inventory: Inventory, options: EvaluationOptions,
            keep: PairFilter = lambda src, dst: True,
            evaluated: frozenset[tuple[str, str]] = CONNECTION_LIST_EVALUATED) -> Explanation:
    """Every cluster's pairs (those ``keep`` keeps) explained; with user-defined primary
    networks or secondary networks, per network. ``evaluated``: the kinds the answer
    does not declare left out (an exposure section beside it leaves out secondary
    networks, so its caller passes ``EVALUATED``)."""
    result = Explanation()
    result.unevaluated = read_unevaluated(inventory, result.diagnostics, evaluated)
    result.diagnostics.extend(unrouted_backends(inventory))
    for model in read_clusters(inventory, options, result.diagnostics):
        _warn_split_workloads(inventory, model, result.diagnostics)
        networks = primary_networks(inventory, model.cluster, model.namespaces, result.diagnostics)
        secondary = secondary_networks(inventory, model.cluster, model.classes, result.diagnostics)
        if networks:
            result.sections.extend(_primary_sections(inventory, model, networks, options, keep))
        else:  # beside secondary networks (or for VMs) the pod network is named: say so
            named = names_networks(networks, secondary, model.classes)
            result.sections.append(ExplainSection(
                model.cluster, _section_name(POD) if named else "",
                cluster_explanations(model, options, inventory, keep=keep)))
        result.sections.extend(_secondary_section(model, net, options, keep) for net in secondary)
    return result


def _secondary_section(model: ClusterModel, net: SecondaryNetwork, options: EvaluationOptions,
                       keep: PairFilter) -> ExplainSection:
    """The pairs of a secondary network's workloads: no outside ranges (the network's
    addresses are not in the input), no {ingress-controller} (Routes reach the pod network)."""
    own, options = net.model(model, options)
    pairs = cluster_explanations(own, options, None, keep=keep, universe=IPSpace())
    return ExplainSection(model.cluster, _section_name(net.network), pairs, secondary=True)


def _primary_sections(inventory: Inventory, model: ClusterModel, networks: dict[str, Network],
                      options: EvaluationOptions, keep: PairFilter) -> list[ExplainSection]:
    """One section per primary network, with the pairs across them (the isolation)."""
    members: dict[Network, list[EndpointClass]] = defaultdict(list)
    for klass in model.classes:
        members[networks.get(klass.namespace, POD)].append(klass)
    sections = {}
    for network, classes in sorted(members.items()):
        own = [dataclasses.replace(k, index=i) for i, k in enumerate(classes)]
        rename = udn_name if network.kind == "UDN" else str
        pairs = cluster_explanations(dataclasses.replace(model, classes=own), options,
                                     inventory, rename, keep)
        sections[network] = ExplainSection(model.cluster, _section_name(network), pairs)
    _isolation(members, sections)
    return list(sections.values())


def _warn_split_workloads(inventory: Inventory, model: ClusterModel,
                          diagnostics: list[Diagnostic]) -> None:
    """A workload whose pods policies tell apart is explained for one kind of its pods."""
    for workload, _, obj in split_workloads(model.classes):
        loc = inventory.locate(obj)
        diagnostics.append(Diagnostic(
            loc.path, loc.line, f"pods of {workload.ref} carry different labels or ports: "
            f"--explain explains the pods like {obj.name} only", "warning",
            "explain the others with --focus-workload on an input holding only them"))


def _isolation(members: dict[Network, list[EndpointClass]],
               sections: dict[Network, ExplainSection]) -> None:
    """Pairs across primary networks, in the section of the source's user-defined network
    (the destination's when the source is on the pod network)."""
    located = [(network, udn_name(w.ref) if network.kind == "UDN" else w.ref)
               for network, classes in members.items() for k in classes for w in k.workloads]
    for src_net, src in sorted(set(located), key=lambda x: x[1]):
        for dst_net, dst in sorted(set(located), key=lambda x: x[1]):
            if src_net == dst_net:
                continue
            text = "; and ".join(f"{_object_kind(net)} '{net.name}' isolates {name}"
                                 for net, name in ((src_net, src), (dst_net, dst)) if net.kind != "pod")
            reason = Reason(False, ((ISOLATION_KIND, text),))
            home = src_net if src_net.kind != "pod" else dst_net
            sections[home].isolated.append(
                PairExplanation(src, dst, (Segment(ALL, reason, reason),)))


def _object_kind(network: Network) -> str:
    return "UserDefinedNetwork" if network.kind == "UDN" else "ClusterUserDefinedNetwork"


def _section_name(network: Network) -> str:
    return "pod-network" if network.kind == "pod" else network.title


NETWORKS_NOTE = ("*** Note: Connections between any peers from separate isolated networks are "
                 "denied by default and therefore not listed in this report.")


def explanation_lines(result: Explanation, focus: Focus, only: str = "",
                      across: PairFilter | None = None) -> list[str]:
    """The explanation as text: per network, the pairs some rule decides, each with its
    reasons, then the pairs nothing decides (allowed by the system default). ``focus``
    keeps some pairs (one connection: every pair is explained on it); ``only`` ``allow``
    or ``deny`` keeps those connections; ``across``: also the pairs across isolated
    networks it keeps (explaining a diff: a UDN that cut a pair is its reason)."""
    one = ConnectionSet.port(*focus.connection) if focus.connection is not None else None
    clusters = {s.cluster for s in result.sections}
    out: list[str] = []
    for section in result.sections:
        where = f" in {section.network}" if section.network else ""
        where += f" of cluster {section.cluster}" if len(clusters) > 1 else ""
        specific, default = _split(section, focus, one, only, across)
        if specific:
            out += ["", *banner(f"Specific connections and their reasons{where}")]
            for pair in specific:
                out += pair_lines(pair.source, pair.destination, pair.segments, section.secondary)
        if default:
            out += ["", *banner(f"All Connections due to the system default (Allow all){where}")]
            out += [f"{p.source} => {p.destination}" for p in default]
    networks = [s for s in result.sections if s.network and not s.secondary]  # the isolated ones
    if one is None and len(networks) > len({s.cluster for s in networks}):
        out += ["", NETWORKS_NOTE]
    return out


def _split(section: ExplainSection, focus: Focus, one: ConnectionSet | None, only: str,
           across: PairFilter | None = None) -> tuple[list[PairExplanation], list[PairExplanation]]:
    """The section's pairs some rule decides (restricted as asked), and the rest."""
    isolated = section.isolated if one is not None else [
        p for p in section.isolated if across is not None and across(p.source, p.destination)]
    pairs = section.pairs + isolated
    specific, default = [], []
    for pair in sorted(pairs, key=lambda p: (p.source, p.destination)):
        if not focus.keeps_pair(pair.source, pair.destination):
            continue
        if one is None and pair.by_default:
            if only != "deny":
                default.append(pair)
            continue
        kept = pair.restricted(one, only)
        if kept.segments:
            specific.append(kept)
    return specific, default
