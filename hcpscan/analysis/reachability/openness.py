"""Exposure analysis: which workloads the policies open to pods that are not in the input.

The connection list only names workloads the input holds. A policy rule, though,
also admits every pod its selectors will ever match: ``namespaceSelector: {}``
admits any pod of any namespace, ``namespaceSelector: {team: a}`` every pod of
every namespace labelled so, now or later. Exposure analysis (np-guard's
netpol-analyzer ``--exposure``) answers for each workload, per direction:

* **not protected**: no policy of any tier selects it in that direction, so it is
  open to everything there (``entire-cluster : All Connections``);
* **entire-cluster**: what its rules allow to or from *any* pod of *any*
  namespace - the rules whose peers are empty selectors (or absent), decided by
  the tiers as for a real peer;
* **representative peers**: for every selector entry of every rule (NetworkPolicy
  ``podSelector``/``namespaceSelector`` peers, AdminNetworkPolicy and its baseline
  ``namespaces``/``pods`` peers) one stand-in for "a pod these selectors match".
  A rule matches a stand-in when its selector is empty or *requires the same*
  as the stand-in's (``app In [x]`` is ``app=x``; a rule without
  ``namespaceSelector`` matches stand-ins of its own namespace) - never by
  partial overlap, so each stand-in is what its own rules say. A stand-in's
  line is shown only where it differs from the entire-cluster one: wider (a
  rule admits more from those pods) or narrower (an AdminNetworkPolicy Deny
  cuts it out; ``No Connections`` when nothing is left);
* the workload's lines to and from outside addresses, as the list has them.

A stand-in whose selectors are plain labels (no expressions, neither side
empty) is dropped when a pod of the input matches it: the list already names
that pod. Only the exposed workload's own policies count: the unknown pods'
policies are unknown too. Named ports towards unknown pods cannot be resolved
and are kept by name (``TCP http``); an AdminNetworkPolicy ``namedPort`` names
no protocol (the pod's container port gives it), so an Allow rule's named port
is kept by name alone (`` local-port``, netpol-analyzer's writing: an empty
protocol), unless rules before it decide every connection; a
BaselineAdminNetworkPolicy's likewise, when no NetworkPolicy isolates the side.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hcpscan.analysis.reachability.admin import (
    ADMIN_TIER,
    ALLOW,
    BASELINE_TIER,
    PASS,
    AdminPeer,
    AdminRule,
)
from hcpscan.analysis.reachability.connlist import Connection, ConnectionList, Focus
from hcpscan.analysis.reachability.endpoints import NAMESPACE_NAME_LABEL, EndpointClass
from hcpscan.analysis.reachability.evaluation import (
    DEFAULT_OPTIONS,
    AnyRule,
    EvaluationOptions,
    PolicyEvaluation,
    Side,
    tiered_connections,
)
from hcpscan.analysis.reachability.model import ClusterModel, read_clusters
from hcpscan.analysis.reachability.policies import EGRESS, INGRESS, PolicyRule
from hcpscan.analysis.reachability.selectors import LabelSelector
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.model.ports import PROTOCOLS, ConnectionSet

ENTIRE_CLUSTER = "entire-cluster"
DIRECTIONS = (EGRESS, INGRESS)

# A selector as Kubernetes compares requirements: sorted (key, operator, values), with
# `In` of one value the same as `=`. Empty: selects everything.
Requirements = tuple[tuple[str, str, tuple[str, ...]], ...]


def requirements(selector: LabelSelector | None) -> Requirements:
    if selector is None:
        return ()
    out: list[tuple[str, str, tuple[str, ...]]] = [(k, "=", (v,)) for k, v in selector.match_labels]
    for req in selector.expressions:
        if req.operator == "In" and len(req.values) == 1:
            out.append((req.key, "=", tuple(req.values)))
        else:
            out.append((req.key, req.operator, tuple(sorted(req.values))))
    return tuple(sorted(out))


@dataclass(frozen=True, slots=True)
class RepresentativePeer:
    """A stand-in for the unknown pods one rule's selectors match.

    ``namespace``: the real namespace of a NetworkPolicy peer without
    ``namespaceSelector`` (its policy's), else empty. ``text``: how it is
    written, e.g. ``[namespace with {team=a}]/[all pods]``."""

    namespace: str
    namespaces: Requirements
    pods: Requirements
    text: str = field(compare=False)
    node: str = field(compare=False)  # its node id in the dot picture
    plain: bool = field(default=False, compare=False)  # written without matchExpressions


ENTIRE = RepresentativePeer("", (), (), ENTIRE_CLUSTER, ENTIRE_CLUSTER)


def selector_text(raw: Any) -> str:
    """netpol-analyzer's notation: ``k=v`` pairs sorted, then each expression as
    ``{Key:k,Operator:In,Values:[a b],}``, sorted."""
    if not isinstance(raw, Mapping):
        return ""
    labels = raw.get("matchLabels") or {}
    parts = [f"{k}={v}" for k, v in sorted((str(k), str(v)) for k, v in labels.items())]
    exprs = sorted(
        "{Key:%s,Operator:%s,Values:[%s],}" % (
            e.get("key"), e.get("operator"), " ".join(str(v) for v in e.get("values") or []))
        for e in raw.get("matchExpressions") or [] if isinstance(e, Mapping))
    return ",".join(parts + exprs)


def _names_one_namespace(raw: Any) -> str:
    """The namespace a selector names by ``kubernetes.io/metadata.name`` alone, or ''."""
    if not isinstance(raw, Mapping) or raw.get("matchExpressions"):
        return ""
    labels = raw.get("matchLabels") or {}
    return str(labels[NAMESPACE_NAME_LABEL]) if list(labels) == [NAMESPACE_NAME_LABEL] else ""


def _peer(namespace: str, ns_sel: LabelSelector | None, ns_raw: Any,
          pod_sel: LabelSelector | None, pod_raw: Any) -> RepresentativePeer:
    pods = requirements(pod_sel)
    pod_text = f"pod with {{{selector_text(pod_raw)}}}" if pods else "all pods"
    if namespace:
        ns_reqs: Requirements = ((NAMESPACE_NAME_LABEL, "=", (namespace,)),)
        ns_text = ns_node = namespace
    else:
        ns_reqs = requirements(ns_sel)
        ns_text = ns_node = _names_one_namespace(ns_raw)
        if not ns_text:
            ns_node = (f"namespace with {{{selector_text(ns_raw)}}}" if ns_reqs
                       else "all namespaces")
            ns_text = f"[{ns_node}]"
    plain = not any(isinstance(raw, Mapping) and raw.get("matchExpressions")
                    for raw in (ns_raw, pod_raw))
    return RepresentativePeer(namespace, ns_reqs, pods, f"{ns_text}/[{pod_text}]",
                              f"{pod_text}_in_{ns_node}", plain)


def _rule_peers(rule: AnyRule) -> Iterable[RepresentativePeer]:
    """Stand-ins for each selector entry of ``rule`` (none for addresses)."""
    obj = rule.policy.obj
    for peer in rule.peers or ():
        raw = obj.get(peer.field) if peer.field else None
        raw = raw if isinstance(raw, Mapping) else {}
        if isinstance(peer, AdminPeer):
            if peer.namespace_selector is None:
                continue
            pods_raw = raw.get("pods")
            if not isinstance(pods_raw, Mapping):
                pods_raw = {}
            ns_raw = raw.get("namespaces", pods_raw.get("namespaceSelector"))
            yield _peer("", peer.namespace_selector, ns_raw, peer.pod_selector,
                        pods_raw.get("podSelector"))
        elif peer.ip_block is None and isinstance(rule, PolicyRule):
            namespace = rule.policy.namespace if peer.namespace_selector is None else ""
            yield _peer(namespace, peer.namespace_selector, raw.get("namespaceSelector"),
                        peer.pod_selector, raw.get("podSelector"))


def representative_peers(model: ClusterModel) -> list[RepresentativePeer]:
    """One stand-in per distinct rule selector entry, first written form kept; never the
    entire cluster (handled on its own) nor one a pod of the input already matches."""
    found: dict[RepresentativePeer, RepresentativePeer] = {}
    rules: list[AnyRule] = [r for p in model.policies for r in p.ingress + p.egress]
    rules += [r for p in model.admin for r in p.ingress + p.egress]
    for rule in rules:
        for peer in _rule_peers(rule):
            if peer != ENTIRE:
                found.setdefault(peer, peer)
    return [p for p in found if not _matched_by_input(p, model.classes)]


def _matched_by_input(peer: RepresentativePeer, classes: list[EndpointClass]) -> bool:
    if not (peer.plain and peer.namespaces and peer.pods):
        return False
    pods = LabelSelector(tuple((k, v[0]) for k, _, v in peer.pods))
    namespaces = LabelSelector(tuple((k, v[0]) for k, _, v in peer.namespaces))
    return any(pods.matches(c.labels) and namespaces.matches(c.namespace_labels) for c in classes)


def rule_matches(rule: AnyRule, peer: RepresentativePeer) -> bool:
    """Does ``rule`` admit the stand-in: an empty selector, or one requiring the same."""
    if rule.peers is None:
        return True
    for spec in rule.peers:
        if isinstance(spec, AdminPeer):
            if spec.namespace_selector is None:
                continue
            ns_ok = _same_or_all(spec.namespace_selector, peer.namespaces)
        elif spec.ip_block is not None:
            continue
        elif spec.namespace_selector is None:
            ns_ok = isinstance(rule, PolicyRule) and bool(peer.namespace) \
                and peer.namespace == rule.policy.namespace
        else:
            ns_ok = _same_or_all(spec.namespace_selector, peer.namespaces)
        if ns_ok and (spec.pod_selector is None or _same_or_all(spec.pod_selector, peer.pods)):
            return True
    return False


def _same_or_all(selector: LabelSelector, wanted: Requirements) -> bool:
    return selector.is_empty or requirements(selector) == wanted


@dataclass(frozen=True, slots=True)
class Openness:
    """What a workload's policies allow with a stand-in: ports, and named ports
    ``(protocol, name)`` no unknown pod can be resolved for."""

    connections: ConnectionSet
    named: frozenset[tuple[str, str]] = frozenset()

    def union(self, other: Openness) -> Openness:
        return Openness(self.connections.union(other.connections), self.named | other.named)

    def only(self, focus: ConnectionSet | None) -> Openness:
        return self if focus is None else Openness(self.connections.intersection(focus))

    def __bool__(self) -> bool:
        return bool(self.connections) or bool(self.named)

    def __str__(self) -> str:
        if not self.named:
            return str(self.connections)
        parts = []
        for proto in PROTOCOLS:
            numbers = str(self.connections.ports(proto))
            names = sorted(n for p, n in self.named if p == proto)
            if numbers or names:
                parts.append(f"{proto} " + ",".join(([numbers] if numbers else []) + names))
        anyproto = sorted(n for p, n in self.named if p == "")  # an ANP namedPort: no protocol
        if anyproto:
            parts.append(" " + ",".join(anyproto))
        return ",".join(parts)


NOTHING = Openness(ConnectionSet.none())
EVERYTHING = Openness(ConnectionSet.all())


def side_openness(side: Side, peer: RepresentativePeer, dst: EndpointClass | None) -> Openness:
    """What an isolated side allows with ``peer`` (``dst``: the class for ingress, None for
    egress towards the unknown pod)."""
    matched = tuple(r for r in side.rules if rule_matches(r, peer))
    conns = tiered_connections(matched, dst, side.np_isolated)
    named: frozenset[tuple[str, str]] = frozenset()
    if dst is None and side.np_isolated and not any(r.tier == ADMIN_TIER for r in matched):
        named = frozenset((s.protocol, s.name) for r in matched if isinstance(r, PolicyRule)
                          for s in r.named)
    if dst is None:
        named |= _admin_named(matched, side.np_isolated)
    return Openness(conns, named)


def _admin_named(rules: Iterable[Any], np_isolated: bool) -> frozenset[tuple[str, str]]:
    """Named ports of the admin tier's Allow rules towards an unknown pod (protocol ''),
    as long as the matching rules before each leave some connection undecided; then,
    when no NetworkPolicy isolates the side, those of the baseline's Allow rules, as long
    as the admin tier (Pass aside) and the baseline's rules before each leave some."""
    undecided, decided = ConnectionSet.all(), ConnectionSet.none()
    out: set[tuple[str, str]] = set()
    admin = [r for r in rules if isinstance(r, AdminRule)]
    for rule in admin:
        if rule.tier != ADMIN_TIER:
            continue
        if rule.action == ALLOW and rule.named and undecided:
            out.update(("", name) for name in rule.named)
        if rule.action != PASS:
            decided = decided.union(rule.numeric.intersection(undecided))
        undecided = undecided.difference(rule.numeric)
    rest = ConnectionSet.all().difference(decided)
    for rule in admin if not np_isolated else ():
        if rule.tier != BASELINE_TIER:
            continue
        if rule.action == ALLOW and rule.named and rest:
            out.update(("", name) for name in rule.named)
        rest = rest.difference(rule.numeric)
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class ExposureLine:
    """``workload => peer`` (egress) or ``workload <= peer`` (ingress) and what is open."""

    cluster: str
    workload: str
    direction: str
    peer: str
    openness: Openness
    node: str = ""  # the peer's node id in the picture ('' : its text)

    @property
    def source(self) -> str:
        return self.peer if self.direction == INGRESS else self.workload

    @property
    def destination(self) -> str:
        return self.workload if self.direction == INGRESS else self.peer

    def to_json(self, pairs_only: bool = False) -> dict[str, str]:
        out = {"cluster": self.cluster, "src": self.source, "dst": self.destination}
        if not pairs_only:
            out["conn"] = str(self.openness)
        return out


@dataclass(frozen=True, slots=True)
class Unprotected:
    cluster: str
    workload: str
    direction: str

    def __str__(self) -> str:
        return f"{self.workload} is not protected on {self.direction.capitalize()}"


@dataclass(slots=True)
class ExposureReport:
    lines: list[ExposureLine] = field(default_factory=list)
    unprotected: list[Unprotected] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def of(self, direction: str) -> list[ExposureLine]:
        """One direction's lines, sorted by workload then peer, as netpol-analyzer sorts."""
        return sorted((x for x in self.lines if x.direction == direction),
                      key=lambda x: (x.cluster, x.workload, x.peer))


@dataclass(slots=True)
class _Openings:
    """One workload's findings in one direction, over all its classes."""

    unprotected: bool = False
    entire: Openness = NOTHING
    peers: dict[RepresentativePeer, Openness] = field(default_factory=dict)


def exposure_report(inventory: Inventory, listed: ConnectionList, focus: Focus | None = None,
                    options: EvaluationOptions = DEFAULT_OPTIONS) -> ExposureReport:
    """Exposure of every workload of the input, in the focus of ``listed`` (the list the
    lines to outside addresses are taken from)."""
    report, focus = ExposureReport(), focus or Focus()
    only = ConnectionSet.port(*focus.connection) if focus.connection else None
    if listed.sections:
        report.diagnostics.append(Diagnostic(
            "", None, "exposure analysis treats every workload as on the pod network: "
            "the isolation of primary (Cluster)UserDefinedNetworks is not applied to it",
            "warning", "read the exposure of workloads on a user-defined network as an upper "
            "bound; the connection list above does apply the isolation"))
    for model in read_clusters(inventory, options, []):  # the list reported their problems
        openings = _cluster_openings(model, options)
        # a workload with something open in either direction has its outside lines shown too
        exposed = {w for (w, d), o in openings.items() if _lines(model.cluster, w, d, o, None)}
        for (workload, direction), found in sorted(openings.items()):
            if workload not in exposed:
                continue
            for line in _lines(model.cluster, workload, direction, found, only):
                if focus.keeps(Connection(line.cluster, line.source, line.destination,
                                          line.openness.connections or ConnectionSet.all())):
                    report.lines.append(line)
            # as netpol-analyzer, a list focused on one connection names no unprotected ones
            if found.unprotected and only is None and focus.keeps(_pseudo(model.cluster, workload, direction)):
                report.unprotected.append(Unprotected(model.cluster, workload, direction))
        report.lines += _outside_lines(listed, {(model.cluster, w) for w in exposed}, only)
    return report


def _lines(cluster: str, workload: str, direction: str, found: _Openings,
           only: ConnectionSet | None) -> list[ExposureLine]:
    if found.unprotected:
        return [ExposureLine(cluster, workload, direction, ENTIRE_CLUSTER, EVERYTHING.only(only))]
    entire = found.entire.only(only)
    out = [ExposureLine(cluster, workload, direction, ENTIRE_CLUSTER, entire)] if entire else []
    for peer, openness in found.peers.items():
        openness = openness.only(only)
        if openness != entire and (openness or only is None):
            out.append(ExposureLine(cluster, workload, direction, peer.text, openness, peer.node))
    return out


def _pseudo(cluster: str, workload: str, direction: str) -> Connection:
    """A stand-in connection for asking the focus about a workload and direction."""
    if direction == INGRESS:
        return Connection(cluster, ENTIRE_CLUSTER, workload, ConnectionSet.all())
    return Connection(cluster, workload, ENTIRE_CLUSTER, ConnectionSet.all())


def _outside_lines(listed: ConnectionList, exposed: set[tuple[str, str]],
                   only: ConnectionSet | None) -> list[ExposureLine]:
    """The list's lines to and from outside addresses, for the exposed workloads."""
    out = []
    for conn in listed.connections:
        for workload, peer, direction in ((conn.destination, conn.source, INGRESS),
                                          (conn.source, conn.destination, EGRESS)):
            workload = workload.replace("[udn]/", "/", 1)  # a UDN section's spelling
            if peer.endswith("[External]") and (conn.cluster, workload) in exposed:
                out.append(ExposureLine(conn.cluster, workload, direction, peer,
                                        Openness(conn.connections).only(only)))
    return out


def _cluster_openings(model: ClusterModel,
                      options: EvaluationOptions) -> dict[tuple[str, str], _Openings]:
    peers = representative_peers(model)
    # address ranges play no part here: only the rules each side holds do
    evaluation = PolicyEvaluation(model.classes, model.policies, model.namespaces,
                                  [], [], options, model.admin)
    cache: dict[tuple[int, tuple[Any, ...]], tuple[Openness, dict[RepresentativePeer, Openness]]] = {}
    out: dict[tuple[str, str], _Openings] = defaultdict(_Openings)
    for i, klass in enumerate(model.classes):
        for direction in DIRECTIONS:
            side = (evaluation.ingress_side(i) if direction == INGRESS
                    else evaluation.egress_side(i))
            names = [w.ref for w in klass.workloads]
            if not side.isolated:
                for name in names:
                    out[(name, direction)].unprotected = True
                continue
            dst = klass if direction == INGRESS else None
            key = (id(side), klass.ports if dst is not None else ())
            if key not in cache:
                cache[key] = (side_openness(side, ENTIRE, dst),
                              {p: side_openness(side, p, dst) for p in peers})
            entire, by_peer = cache[key]
            for name in names:
                found = out[(name, direction)]
                found.entire = found.entire.union(entire)
                for peer, openness in by_peer.items():
                    found.peers[peer] = found.peers.get(peer, NOTHING).union(openness)
    return out


def exposure_title(focus: Focus | None) -> str:
    if focus is not None and focus.connection is not None:
        return f"Exposure Analysis Result On {focus.connection[0]} {focus.connection[1]}:"
    return "Exposure Analysis Result:"


def exposure_text(report: ExposureReport, title: str, pairs_only: bool = False) -> list[str]:
    """The report as netpol-analyzer writes it: egress then ingress lines with the workload
    column padded, then the workloads no policy protects."""
    multi = len({x.cluster for x in report.lines} | {u.cluster for u in report.unprotected}) > 1
    shown = {(x.cluster, x.workload) for x in report.lines}
    shown |= {(u.cluster, u.workload) for u in report.unprotected}
    width = max((len(w) for _, w in shown), default=0)
    out = [title]
    for direction, head, arrow in ((EGRESS, "Egress Exposure:", "=>"),
                                   (INGRESS, "Ingress Exposure:", "<=")):
        lines = report.of(direction)
        if not lines:
            continue
        out += ([""] if len(out) > 1 else []) + [head]
        for x in lines:
            text = f"{x.workload:<{width}} \t{arrow} \t{x.peer}"
            text += "" if pairs_only else f" : {x.openness}"
            out.append(f"{x.cluster}: {text}" if multi else text)
    if report.unprotected:
        out += ["", "Workloads not protected by network policies:"]
        out += sorted(f"{u.cluster}: {u}" if multi else str(u) for u in report.unprotected)
    return out
