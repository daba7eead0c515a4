"""Template ``reach``: who gets in to some workloads' ports, or where they get out to.

One question over the reachability graph, in two directions:

* ``in``: which outside addresses open a port of the target workloads, through every
  layer (perimeter file, Service source ranges, Routes through the router,
  NetworkPolicy), against the allowed sources (``only-allowed``, ``all-allowed``,
  ``none``). Outside traffic counts when it enters through a way the cluster offers
  from outside — a NodePort or LoadBalancer Service, or a Route through the router —
  not when it would need a routable pod IP: pod networks are not reachable from
  outside the cluster in the platforms HyperShift supports.
* ``out``: whether the source workloads' egress (NetworkPolicy, EgressFirewall) reaches
  a destination — a named one of ``hcpscan.model.destinations`` or a CIDR — on every
  port and protocol (``reachable``), or on all protocols as soon as on one
  (``all-protocols-if-any``: DNS over UDP needs TCP for large answers).

Which workloads: for a HostedCluster subject, those of its control-plane namespace
that the rule's selectors pick; for a workload, itself; for a NetworkPolicy, the pods
it selects. A ``listeners`` condition adds what no policy decides: a listener bound to
loopback (read from the container's args) is reached from inside its pod only.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from typing import Any

from hcpscan.analysis.reachability.answers import NETWORK_POLICY, PERIMETER
from hcpscan.analysis.reachability.answers import Reach as Answer
from hcpscan.analysis.reachability.cloud_perimeter import undescribed_groups
from hcpscan.analysis.reachability.coverage import (
    POLICY_GROUP_WORD,
    kind_label,
)
from hcpscan.analysis.reachability.endpoints import Workload
from hcpscan.analysis.reachability.graph import POD_NETWORK, ReachabilityGraph
from hcpscan.analysis.reachability.opening import (
    Opening,
    admitting_range,
    narrowing,
    perimeter_narrowing,
)
from hcpscan.analysis.reachability.paths import Hop
from hcpscan.analysis.reachability.perimeter import unknowns_behind
from hcpscan.analysis.reachability.policies import is_network_policy
from hcpscan.analysis.reachability.required import BLOCKED
from hcpscan.analysis.reachability.routers import hcp_route_router
from hcpscan.analysis.reachability.scan_graph import (
    ENDPOINT_READS,
    GRAPH_READS,
    REACHABILITY,
    outside_text,
)
from hcpscan.analysis.reachability.scan_graph import worker_space as hosts_of
from hcpscan.findings.fix import (
    AddDocument,
    AppendEntries,
    AppendItems,
    Edit,
    NoFix,
    Remedy,
    ReplaceKey,
    SetField,
)
from hcpscan.inventory import K8sObject
from hcpscan.model.destinations import MANAGEMENT_KAS, NAMED_DESTINATIONS
from hcpscan.model.flows import ingress_flow_to
from hcpscan.model.hostedcluster import (
    HOSTED_KINDS,
    HostedCluster,
    hosted_cluster,
    hosted_cluster_for_namespace,
)
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.publishing import (
    INGRESS_CONTROLLER,
    SERVICE_POD_PORTS,
    DeclaredWay,
    Undeclared,
    Unpublished,
    declared_way,
)
from hcpscan.rules.context import REQUIRED_FLOWS, Context
from hcpscan.rules.templates import register
from hcpscan.rules.templates.base import NotApplicable, NotEvaluable, Outcome, Template, Violation
from hcpscan.rules.templates.reach_out import Scope, check_out, listeners, none_present, protocols_of

# Named address sets a reach rule may allow, besides literal CIDRs.
MACHINE_NETWORK = "machine-network"  # the HostedCluster's machineNetwork, else worker_cidrs
WORKER_CIDRS = "worker-cidrs"  # worker_cidrs in .hcpscan.yaml

IN, OUT = "in", "out"
EXPECT_IN = ("only-allowed", "all-allowed", "none", "restricted")
UNRESTRICTED = "restricted"  # fails only when every address beyond the allowed ranges gets in
EXPECT_OUT = ("reachable", "all-protocols-if-any")
_PORT = {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 65535}, {"const": "kas"}]}
_TO = {"anyOf": [{"enum": list(NAMED_DESTINATIONS)}, {"type": "string", "format": "cidr"}],
       "description": "out: outside (some outside address), management-kas (every endpoint of "
                      "the management default/kubernetes Service), dns (any peer on the DNS "
                      "ports), or a CIDR (every address of it); default outside"}
_SELECTOR = {
    "type": "object", "additionalProperties": False,
    "properties": {"app": {"type": "string", "description": "pods labelled app=<this>"},
                   "labels": {"type": "object", "additionalProperties": {"type": "string"},
                              "description": "pods carrying all these labels"},
                   "port": _PORT, "ports": {"type": "array", "minItems": 1, "items": _PORT},
                   "service": {"type": "string", "description": "the spec.services entry a "
                               "finding on a HostedCluster points at"},
                   "to": _TO},
}
_SELECTION_DOC = ("workloads of a HostedCluster subject's control-plane namespace, by app label "
                  "or label set, each with its own port(s), service and (out) destination; "
                  "omitted: the subject's own pods (a workload, or a NetworkPolicy's selected pods)")
_LISTENERS = {
    "type": "object", "additionalProperties": False, "required": ["flags", "default"],
    "description": "listeners that must bind loopback (reached from inside the pod only)",
    "properties": {
        "workloads": {"type": "array", "items": {"type": "string"},
                      "description": "workload names this applies to (default: every subject)"},
        "flags": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": "^-"},
                  "description": "container args that set the listener's host:port"},
        "default": {"type": "string", "description": "the address used when no flag is given"},
        "disabled": {"type": "array", "items": {"type": "string"},
                     "description": "flag values that turn the listener off (nothing listens)"},
        "platforms": {"type": "array", "items": {"type": "string"},
                      "description": "HostedCluster platform types this applies to (default: "
                                     "all)"},
    },
}


def reachability(ctx: Context) -> ReachabilityGraph:
    """The scan's reachability graph (built by the analysis stage, shared by the context)."""
    return ctx.reachability()


class GraphTemplate(Template):
    """A check answered from the reachability graph: it reads what the graph reads,
    and its answer says which policy objects the graph leaves out."""

    reads = GRAPH_READS
    analyses = frozenset({REACHABILITY, REQUIRED_FLOWS})  # HCP001/002 ask the flows too
    reads_groups = (POLICY_GROUP_WORD,)

    def reads_whole(self, params: dict[str, Any], subjects: tuple[str, ...]) -> tuple[str, ...]:
        return ()  # the graph's endpoints read what inventory/kept.py keeps

    def caveat(self, ctx: Context) -> str:
        graph = ctx.built(REACHABILITY)
        return graph.exclusion_note() if graph is not None else ""

    def reads_served(self, group: str, kind: str) -> bool:
        # every policy-like kind the graph leaves out: its objects make the answer's caveat
        return super().reads_served(group, kind) or kind_label(group, kind) is not None


def worker_space(ctx: Context, hc: HostedCluster) -> tuple[IPSpace, str] | None:
    """Where worker nodes live: the HostedCluster's machineNetwork, else config worker_cidrs."""
    return hosts_of(hc, ctx.config.worker_cidrs)


def allowed_space(ctx: Context, hc: HostedCluster | None,
                  allowed: list[str]) -> tuple[IPSpace, str] | None:
    """The union of a rule's allowed sources: literal CIDRs and named sets; None when a
    named set has no value in the input or config."""
    space, where = IPSpace.from_cidrs(()), []
    for item in allowed:
        if item == MACHINE_NETWORK:
            found = worker_space(ctx, hc) if hc is not None else _config_workers(ctx)
        elif item == WORKER_CIDRS:
            found = _config_workers(ctx)
        else:
            found = IPSpace.from_cidrs([item]), "the rule"
        if found is None:
            return None
        space = space.union(found[0])
        where.append(found[1])
    return space, ", ".join(dict.fromkeys(where))


def _config_workers(ctx: Context) -> tuple[IPSpace, str] | None:
    if not ctx.config.worker_cidrs:
        return None
    return IPSpace.from_cidrs(ctx.config.worker_cidrs), "worker_cidrs in the config"


def selection_key(params: dict[str, Any]) -> str:
    return "targets" if params.get("direction", IN) == IN else "sources"


def scope_of(ctx: Context, graph: ReachabilityGraph, subject: K8sObject,
             params: dict[str, Any]) -> Scope | Outcome:
    """The subject's scope, or why it has none (not applicable / not evaluable)."""
    items = params.get(selection_key(params))
    if subject.kind in HOSTED_KINDS:
        hc = hosted_cluster(subject)
        ns = hc.control_plane_namespace
        picked = [(item, _named(graph.select_workloads(subject.cluster, ns, _labels(item))))
                  for item in items or []]
        return Scope(subject, hc, picked)
    hosting = hosted_cluster_for_namespace(ctx.inventory, subject.namespace, subject.cluster)
    if items:
        return NotEvaluable(f"params.{selection_key(params)} picks workloads of a HostedCluster's "
                            f"control plane; {subject.ref} is not a HostedCluster")
    if is_network_policy(subject):
        return Scope(subject, hosting, [({}, _named(graph.selected_by(subject)))])
    workload = Workload.of(subject)
    if not graph.has_workload(workload.graph_name(subject.cluster)):
        return NotEvaluable(f"{subject.ref} is not in the reachability graph")
    return Scope(subject, hosting, [({}, [workload])])


def _named(workloads: list[Workload]) -> list[Workload]:
    """Workloads a finding can name: one without a name (a document the API server would
    refuse, reported by the loader) cannot be asked about by name either."""
    return [w for w in workloads if w.name and w.namespace]


def _labels(item: dict[str, Any]) -> dict[str, str]:
    labels = dict(item.get("labels") or {})
    if "app" in item:
        labels["app"] = item["app"]
    return labels


def _bad_cidr(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return True
    return False


@register
class Reach(GraphTemplate):
    name = "reach"
    description = ("who gets in to workloads' ports from outside (direction in: through the "
                   "perimeter file, Service source ranges, Routes and NetworkPolicy, against the "
                   "allowed sources), or where workloads get out to (direction out: outside, the "
                   "management API server, DNS or a CIDR, per port and protocol); listeners "
                   "that must bind loopback. Subjects: HostedClusters, or with applies_to.kinds "
                   "NetworkPolicies (the pods they select) and workloads (themselves)")
    params_schema = {
        "type": "object", "additionalProperties": False,
        "properties": {
            "direction": {"enum": [IN, OUT], "description": "in (default) or out"},
            "targets": {"type": "array", "minItems": 1, "items": _SELECTOR,
                        "description": "in: the workloads reached; " + _SELECTION_DOC},
            "sources": {"type": "array", "minItems": 1, "items": _SELECTOR,
                        "description": "out: the workloads sending; " + _SELECTION_DOC},
            "ports": {"type": "array", "minItems": 1, "items": _PORT,
                      "description": "ports of items without their own; kas: the "
                                     "HostedCluster's API server port"},
            "protocols": {"type": "array", "minItems": 1, "uniqueItems": True,
                          "items": {"enum": ["TCP", "UDP", "SCTP"]}, "description": "default [TCP]"},
            "protocol": {"enum": ["TCP", "UDP", "SCTP"], "description": "one protocol (shorthand)"},
            "allowed": {"type": "array", "minItems": 1,
                        "items": {"anyOf": [{"enum": [MACHINE_NETWORK, WORKER_CIDRS]},
                                            {"type": "string", "format": "cidr"}]},
                        "description": "in: source ranges: CIDRs, machine-network (the "
                                       "HostedCluster's machineNetwork, else worker_cidrs) or "
                                       "worker-cidrs (the config's); default machine-network"},
            "to": _TO,
            "expect": {"enum": [*EXPECT_IN, *EXPECT_OUT],
                       "description": "in: only-allowed (default; nothing outside the allowed "
                                      "ranges gets in), all-allowed (every allowed range gets "
                                      "in), none (no outside address gets in), restricted (not "
                                      "every address beyond the allowed ranges gets in: some "
                                      "source range or perimeter narrows it); out: reachable "
                                      "(default; the destination on every port and protocol), "
                                      "all-protocols-if-any (once one protocol gets out on the "
                                      "ports, all do)"},
            "scope": {"enum": ["any", "control-plane"],
                      "description": "control-plane: only subjects in a HostedCluster's "
                                     "control-plane namespace (others are not applicable)"},
            "listeners": _LISTENERS,
            "exempt": {"type": "array", "minItems": 1,
                       "items": {"type": "object", "additionalProperties": False,
                                 "required": ["app", "port"],
                                 "properties": {"app": {"type": "string"}, "port": _PORT}},
                       "description": "in: ports that workloads labelled app=<app> serve to "
                                      "outside clients by design (the private router's HTTP "
                                      "on 8080), not judged for them"},
        },
    }
    # HostedClusters unless the rule's applies_to names others: a NetworkPolicy stands
    # for the pods it selects, a workload (or Pod) for itself.
    subject_kinds = HOSTED_KINDS
    message_fields = {"target": "the workload reached (namespace/name[Kind])",
                      "workload": "the workload that cannot get out (out)",
                      "workloads": "the workloads a protocol is missing for (all-protocols-if-any)",
                      "port": "the port", "ports": "the ports (or the listener's address)",
                      "protocol": "the protocol",
                      "have": "the protocols allowed", "missing": "the protocols not allowed",
                      "sources": "outside addresses that get in (only-allowed, none)",
                      "source": "an allowed range that does not get in (all-allowed)",
                      "via": "the way in (or the listener's flag)",
                      "blocked": "the destination addresses that cannot be reached (out)",
                      "workers": "the allowed ranges",
                      "workers_reach": "in: '; workers cannot reach <service> (<missing>): <first "
                                       "blocking hop>' when the catalog's required flow into the "
                                       "target is blocked, else empty"}

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        items = [params, *(params.get("sources") or ())]
        if any(item.get("to") == MANAGEMENT_KAS for item in items):
            return (*GRAPH_READS, *ENDPOINT_READS)
        if params.get("direction", IN) == IN:
            return (*GRAPH_READS, INGRESS_CONTROLLER)  # the router, when the spec alone speaks
        return GRAPH_READS

    def problems(self, params: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
        found = super().problems(params)
        if not isinstance(params, dict) or found:
            return found
        for i, item in enumerate(params.get("allowed", ())):
            if item not in (MACHINE_NETWORK, WORKER_CIDRS) and _bad_cidr(item):
                found.append((("allowed", i), f"{item!r} is neither a CIDR nor "
                                              f"{MACHINE_NETWORK} / {WORKER_CIDRS}"))
        direction = params.get("direction", IN)
        for key in ("targets", "sources"):
            found += [((key, i), "a selector needs app or labels")
                      for i, item in enumerate(params.get(key, ())) if not ({"app", "labels"} & set(item))]
        wrong = {IN: ("sources", "to"), OUT: ("targets", "allowed")}[direction]
        found += [((key,), f"{key} is for direction {OUT if direction == IN else IN}")
                  for key in wrong if key in params]
        expect = params.get("expect")
        if expect is not None and expect not in (EXPECT_IN if direction == IN else EXPECT_OUT):
            found.append((("expect",), f"expect {expect} is not for direction {direction}"))
        return found

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        if params.get("scope") == "control-plane" and subject.kind not in HOSTED_KINDS and \
                hosted_cluster_for_namespace(ctx.inventory, subject.namespace, subject.cluster) is None:
            yield NotApplicable("not in the control-plane namespace of a HostedCluster in the input")
            return
        if params.get("listeners"):
            hc = (hosted_cluster(subject) if subject.kind in HOSTED_KINDS else
                  hosted_cluster_for_namespace(ctx.inventory, subject.namespace, subject.cluster))
            yield from listeners(subject, params["listeners"], hc.platform if hc else None)
        graph = reachability(ctx)
        scope = scope_of(ctx, graph, subject, params)
        if not isinstance(scope, Scope):
            yield scope
            return
        if subject.kind in HOSTED_KINDS and scope.hc is not None and not scope.picked:
            found = _spec_only(ctx, graph, scope, scope.hc, params)
        elif params.get("direction", IN) == OUT:
            found = check_out(ctx, graph, scope, params)
        else:
            found = _check_in(ctx, graph, scope, params)
        for outcome in found:
            if isinstance(outcome, Violation):
                outcome.values.setdefault("workers_reach", "")
            yield outcome


def _spec_only(ctx: Context, graph: ReachabilityGraph, scope: Scope, hc: HostedCluster,
               params: dict[str, Any]) -> Iterable[Outcome]:
    """A HostedCluster subject of a rule that picks no workloads of its control plane: the
    workloads are subjects of their own where they are in the input; otherwise the spec's
    services that publish one of the rule's ports are judged (direction in), and what the
    spec cannot say is named."""
    ns = hc.control_plane_namespace
    if graph.workloads(scope.subject.cluster, ns):
        yield NotApplicable(f"the workloads of HCP namespace {ns} are judged one by one")
        return
    ports = scope.ports({}, params) or []
    published: list[tuple[dict[str, Any], list[Workload]]] = [
        ({"service": service}, []) for service, pod_ports in SERVICE_POD_PORTS.items()
                 if service in hc.publishing and params.get("direction", IN) == IN
                 and any((hc.kas_port if p == "kas" else p) in ports for p in pod_ports)]
    if published:
        yield from _declared_in(ctx, graph, Scope(scope.subject, hc, published), hc, params)
        return
    shown = "/".join(map(str, ports)) or "the rule's ports"
    yield NotEvaluable(f"{hc.namespace_not_read}: spec.services publishes none of "
                       f"ports {shown}, but HyperShift renders the workloads that serve them "
                       f"there (`oc get deployments,statefulsets,services,routes -n {ns} -o yaml`)")


def _check_in(ctx: Context, graph: ReachabilityGraph, scope: Scope,
              params: dict[str, Any]) -> Iterable[Outcome]:
    expect = params.get("expect", "only-allowed")
    if scope.hc is not None and scope.subject.kind in HOSTED_KINDS and \
            not graph.workloads(scope.subject.cluster, scope.hc.control_plane_namespace):
        yield from _declared_in(ctx, graph, scope, scope.hc, params)  # a GitOps tree: the spec alone
        return
    absent = none_present(scope)
    if absent is not None:
        yield absent
        return
    present = [(item, workloads) for item, workloads in scope.picked if workloads]
    allowed = _allowed(ctx, scope.hc, params)
    if allowed is None:
        yield _no_allowed_input(params.get("allowed", [MACHINE_NETWORK]))
        return
    for item, workloads in present:
        ports = scope.ports(item, params)
        if ports is None:
            yield NotEvaluable("port kas needs a HostedCluster: its API server port")
            return
        if expect != "all-allowed" and _no_way_in(graph, scope, workloads):
            continue  # who gets in is judged per way in, and none leads to these pods
        for port in ports:
            judged = _not_exempt(graph, scope, workloads, port, params)
            if not judged:
                continue
            for protocol in protocols_of(params):
                if expect == "all-allowed":
                    yield from _all_get_in(ctx, graph, scope, item, judged, allowed, port,
                                           protocol)
                else:
                    yield from _only_allowed_get_in(ctx, graph, scope, item, judged, allowed,
                                                    port, protocol, expect == UNRESTRICTED)


def _no_way_in(graph: ReachabilityGraph, scope: Scope, workloads: list[Workload]) -> bool:
    """No Service or Route leads to any of ``workloads`` (most of HCP006's thousands of
    workload subjects): who gets in from outside is then judged for none of their ports."""
    return not any(graph.has_way_in(scope.graph_name(w)) for w in workloads)


def _not_exempt(graph: ReachabilityGraph, scope: Scope, workloads: list[Workload], port: Any,
                params: dict[str, Any]) -> list[Workload]:
    """``workloads`` less those that serve ``port`` to outside clients by design (the
    rule's ``exempt``: the private router's HTTP listener on 8080 is a required flow)."""
    exempt = [e["app"] for e in params.get("exempt", ()) if e["port"] == port]
    if not exempt:
        return workloads
    out = set()
    cluster = scope.subject.cluster
    for app in exempt:
        for namespace in {w.namespace for w in workloads}:
            out.update(graph.select_workloads(cluster, namespace, {"app": app}))
    return [w for w in workloads if w not in out]


def _allowed(ctx: Context, hc: HostedCluster | None,
             params: dict[str, Any]) -> tuple[IPSpace, str] | None:
    if params.get("expect") == "none":
        return IPSpace(), ""
    return allowed_space(ctx, hc, params.get("allowed", [MACHINE_NETWORK]))


def _declared_in(ctx: Context, graph: ReachabilityGraph, scope: Scope, hc: HostedCluster,
                 params: dict[str, Any]) -> Iterable[Outcome]:
    """Judge each target's spec.services entry from the HostedCluster alone: its HCP
    namespace is not in the input (a GitOps tree), but its publishing strategies, its
    allowedCIDRBlocks, the management router's IngressController and the perimeter are."""
    services = list(dict.fromkeys(str(item.get("service") or "") for item, _ in scope.picked))
    if "" in services:
        yield NotEvaluable(f"{hc.namespace_not_read}, and "
                           "a target names no spec.services entry (service) to judge from the "
                           "HostedCluster")
        return
    allowed = _allowed(ctx, hc, params)
    for service in services:
        way = declared_way(ctx.inventory, hc, service, hcp_route_router(ctx.inventory, hc))
        missing = [way.reason] if isinstance(way, Undeclared) else []
        if allowed is None and not isinstance(way, Unpublished):
            missing.append(_no_allowed_input(params.get("allowed", [MACHINE_NETWORK])).reason)
        if isinstance(way, Undeclared) or missing:
            yield NotEvaluable(f"{hc.namespace_not_read}; "
                               + "; ".join(missing))
            continue
        expect = params.get("expect", "only-allowed")
        for protocol in protocols_of(params):
            if isinstance(way, Unpublished):
                yield from _unpublished_verdict(way, allowed, protocol, expect)
            elif allowed is not None:  # else missing named it above
                yield from _declared_verdict(ctx, graph, hc, way, allowed, protocol, expect)


def _unpublished_verdict(way: Unpublished, allowed: tuple[IPSpace, str] | None, protocol: str,
                         expect: str) -> Iterable[Outcome]:
    if expect == "all-allowed" and allowed is not None:
        for cidr in allowed[0].cidrs():
            yield Violation(field="spec.services", values={"source": cidr, "protocol": protocol},
                            evidence=[way.why])


def _declared_verdict(ctx: Context, graph: ReachabilityGraph, hc: HostedCluster,
                      way: DeclaredWay, allowed: tuple[IPSpace, str],
                      protocol: str, expect: str) -> Iterable[Outcome]:
    space, where = allowed
    perimeter = graph.perimeter.for_way(way.gate) if graph.perimeter is not None else None
    every, some = (perimeter.admitting(protocol, *way.entry) if perimeter is not None
                   else (IPSpace.everything(), IPSpace.everything()))
    certain, maybe = way.sources.intersection(every), way.sources.intersection(some)
    values = {"target": f"{way.service} (published as {way.kind})", "port": way.entry_text,
              "ports": way.entry_text, "protocol": protocol, "via": way.kind,
              "workers": ", ".join(space.cidrs())}
    layer = (f"perimeter {perimeter.name} admits it" if perimeter is not None else
             "no perimeter file was given (--firewall): the firewall or security group in "
             "front of the nodes is unknown")
    unset = (f"the entry port is not known ({way.entry_text}: set nodePort.port), and the "
             "perimeter admits {} on some of those ports only")
    if expect == "all-allowed":
        for cidr in space.cidrs():
            target = IPSpace.from_cidrs([cidr])
            if certain.contains(target):
                continue
            if maybe.contains(target):
                yield NotEvaluable(unset.format(cidr))
                continue
            if perimeter is not None and perimeter.undescribed and way.sources.contains(target):
                yield NotEvaluable(undescribed_groups(perimeter.undescribed))
                continue
            blocked = ("not in its source ranges" if not way.sources.contains(target)
                       else f"perimeter {perimeter.name if perimeter else ''} denies it")
            yield Violation(field=way.field, values={**values, "source": cidr},
                            remedy=_admit_worker(hc, way, cidr, protocol, perimeter is not None
                                                 and way.sources.contains(target)),
                            evidence=[*way.evidence, f"{cidr} → {way.entry_text}/{protocol}: "
                                                     f"{blocked}", f"allowed source {cidr} from {where}"])
        return
    beyond, maybe_beyond = certain.difference(space), maybe.difference(space)
    if expect == UNRESTRICTED and not open_to_every_address(beyond, space):
        return  # some source range, allowlist or perimeter restricts who gets in
    if not beyond:
        if maybe_beyond:
            yield NotEvaluable(unset.format(maybe_beyond))
        return
    shown = outside_text(beyond, space)
    yield Violation(field=way.field, values={**values, "sources": shown},
                    remedy=exposure_remedy(ctx, hc, [way.kind], way.entry_text, protocol,
                                           space, hc.obj.cluster, [(protocol, way.entry_text)],
                                           name=f"{hc.name}-{way.service.lower()}"),
                    evidence=[*way.evidence, f"{shown} → {way.entry_text}/{protocol}: {layer}"]
                    + ([f"allowed sources: {', '.join(space.cidrs())} (from {where})"] if where else []))


def _admit_worker(hc: HostedCluster, way: DeclaredWay, cidr: str, protocol: str,
                  at_perimeter: bool) -> Remedy | NoFix:
    """A worker range the HostedCluster's declared way keeps out: added to
    ``allowedCIDRBlocks`` when those bound it (the API server's load balancer, which the
    operator renders from them); else where to let it in."""
    if at_perimeter:
        return NoFix(f"the perimeter (--firewall) keeps {cidr} out of {way.entry_text}/{protocol}: "
                     "it describes a firewall or security group hcpscan does not change; admit "
                     f"{cidr} there, before the rule that denies it, and in the perimeter file")
    if way.field == _ALLOWED_CIDRS:
        steps = tuple(_ALLOWED_CIDRS.split("."))
        return Remedy(hc.obj, f"add {cidr} to {_ALLOWED_CIDRS} of {hc.obj.ref} (the API server's "
                              "load balancer source ranges, which the operator renders from it)",
                      (AppendItems(steps, (cidr,)),))
    return NoFix(f"{way.service} is published as {way.kind}, whose source ranges are not a "
                 f"field of the HostedCluster: admit {cidr} where it is kept out ({way.field})")


_ALLOWED_CIDRS = "spec.networking.apiServer.allowedCIDRBlocks"


# Why a way in is not narrowed by an edit of the input, per kind of way (ExposurePath.via
# labels start with the kind: "NodePort Service ns/x", "Route ns/x").
_WAY_LIMITS = {
    "NodePort": "a NodePort is open on every node address and no Service field narrows its "
                "sources (loadBalancerSourceRanges covers the load balancer only)",
    "LoadBalancer": "loadBalancerSourceRanges narrows the load balancer only: the Service "
                    "still opens its node ports to every address unless "
                    "allocateLoadBalancerNodePorts is false, which load balancers that forward "
                    "to node ports cannot take",
    "Route": "a Route is served by a router shared with other Routes: its port 443 and its "
             "allowedSourceRanges are theirs too",
    "Ingress": "an Ingress is served by an ingress controller shared with other Ingresses",
}


def opening_remedy(found: Opening) -> Remedy:
    """An ``analysis.reachability.opening`` change as the edits of a fix."""
    edits: list[Edit] = [AppendItems(steps, items) for steps, items in found.append]
    edits += [AppendItems(steps, items, first=True) for steps, items in found.prepend]
    edits += [ReplaceKey(steps, str(steps[-1]), list(items)) for steps, items in found.replace]
    edits += [AppendEntries(steps, entries) for steps, entries in found.entries]
    edits += [SetField(steps, value) for steps, value in found.scalars]
    edits += [AddDocument(body) for body in found.documents]
    return Remedy(found.target, found.summary, tuple(edits))


# The services only the workers need: narrowing who reaches them to the workers loses no
# other client (the API server and OAuth serve users too)
WORKERS_ONLY_SERVICES = frozenset({"ignition-server", "ignition-server-proxy",
                                   "konnectivity-server"})


def exposure_remedy(ctx: Context, hc: HostedCluster | None, vias: list[str], port: int | str,
                    protocol: str, allowed: IPSpace, cluster: str,
                    entries: list[tuple[str, str]] | None = None, name: str = ""
                    ) -> Remedy | NoFix | None:
    """The edit that admits only the workers where it is safe and lasts (a LoadBalancer
    Service nobody reconciles, without node ports; a router that serves only the workers'
    Routes; for NodePorts, the perimeter file the scan read, on exactly their entry
    ports), else why not and where to close it."""
    found = narrowing(ctx.inventory, hc, vias, cluster, allowed, WORKERS_ONLY_SERVICES)
    if found is not None:
        return opening_remedy(found)
    perimeter = ctx.reachability().perimeter
    if perimeter is not None and entries and vias and all(v.startswith("NodePort") for v in vias):
        name = name or (vias[0].rsplit("/", 1)[-1] if len(vias) == 1 else "hcp-node-ports")
        at = perimeter_narrowing(perimeter, cluster, name, entries, allowed)
        if isinstance(at, Opening):
            return opening_remedy(at)
    return exposure_nofix(vias, port, protocol, allowed)


_NODE_PORT_ENTRY = re.compile(r"type NodePort: every node address, port (\d+) -> pod port")


def node_port_entries(paths: list[Any], protocol: str) -> list[tuple[str, str]] | None:
    """(protocol, node port) of every NodePort way in ``paths``; None when one is not
    known (a node port the API server allocates)."""
    out = []
    for path in paths:
        if not str(path.via).startswith("NodePort "):
            continue
        found = [m.group(1) for e in path.evidence if e.layer == "service"
                 and (m := _NODE_PORT_ENTRY.search(e.summary))]
        if not found:
            return None
        out.append((protocol, found[0]))
    return out


def exposure_nofix(vias: list[str], port: int | str, protocol: str, allowed: IPSpace
                   ) -> NoFix | None:
    """Why the exposure of a hosted control plane's port is not closed by an edit of the
    input, and the exact rule that closes it where traffic enters. None (the rule's own
    reason) when no source is allowed."""
    cidrs = allowed.cidrs()
    if not cidrs:
        return None
    kinds = {v.split(" ")[0] for v in vias}
    limits = [why for kind, why in _WAY_LIMITS.items() if kind in kinds]
    direct = [v for v in vias if v.split(" ")[0] in ("NodePort", "LoadBalancer")]
    routed = [v for v in vias if v.split(" ")[0] in ("Route", "Ingress")]
    ways = []
    if direct:
        ways.append("in the firewall or security group in front of the nodes and load "
                    f"balancers, admit the port {' and '.join(direct)} publishes for {protocol} "
                    f"{port} only from {', '.join(cidrs)} (give that rule to hcpscan with "
                    "--firewall so the scan sees it)")
    if routed:
        ways.append(f"the router's port is shared, so do not narrow it for {' and '.join(routed)}: "
                    f"limit it to {', '.join(cidrs)} with the router's per-route source allow "
                    "list, or publish the service as a NodePort or LoadBalancer behind a "
                    "firewall that admits only those ranges")
    return NoFix("; ".join(limits or [f"the way in ({', '.join(vias)}) has no source field"])
                 + ". The HyperShift operator reconciles these Services, Routes and its "
                 "nodeport-* NetworkPolicies, so an edit of them is undone. Close it where "
                 "traffic enters: " + "; ".join(ways or [f"admit {protocol} {port} only from "
                                                         f"{', '.join(cidrs)} there"]))


def _no_allowed_input(allowed: list[str]) -> NotEvaluable:
    if WORKER_CIDRS in allowed or MACHINE_NETWORK in allowed:
        return NotEvaluable("input the user must supply: worker_cidrs (the HostedCluster has no "
                            "spec.networking.machineNetwork)")
    return NotEvaluable("no allowed source range")


def _only_allowed_get_in(ctx: Context, graph: ReachabilityGraph, scope: Scope, item: dict[str, Any],
                         workloads: list[Workload], allowed_where: tuple[IPSpace, str], port: int,
                         protocol: str, unrestricted_only: bool = False) -> Iterable[Outcome]:
    allowed, where = allowed_where
    for workload in workloads:
        if not graph.has_way_in(scope.graph_name(workload)):
            continue  # outside traffic gets in only through one (pod IPs are not routable)
        reaches = [r for r in graph.who_can_reach(scope.graph_name(workload), port, protocol,
                                                  workloads=False) if r.source.is_external]
        if unrestricted_only and not open_to_every_address(_admitted(reaches, allowed), allowed):
            if unknown := _kept_out_by_undescribed(graph, scope.graph_name(workload), port,
                                                   protocol, allowed):
                yield NotEvaluable(unknown)
            continue  # a source range, an allowlist or the perimeter narrows who gets in
        judged = False
        for reach in reaches:
            paths = [p for p in reach.paths if p.allowed and p.via != POD_NETWORK]
            addresses = reach.source.addresses  # an external source: addresses, no workload
            outside = addresses.intersection(allowed.complement()) if addresses is not None else None
            if not paths or not outside:
                continue
            layers = {e.layer for p in paths for e in p.evidence}
            shown = outside_text(outside, allowed)
            perimeter = ("" if "perimeter" in layers else
                         "; no perimeter rule restricts it" if ctx.config.firewall else
                         "; no perimeter file was given (--firewall): the firewall or "
                         "security group in front of the nodes is unknown")
            allowed_note = [f"allowed sources: {', '.join(allowed.cidrs())} (from {where})"] if where else []
            workers_note = workers_cannot_reach(ctx, graph, scope, item, workload, port)
            vias = list(dict.fromkeys(p.via for p in paths))
            judged = True
            yield Violation(
                remedy=exposure_remedy(ctx, scope.hc, vias, port, protocol, allowed,
                                       scope.subject.cluster,
                                       node_port_entries(paths, protocol)),
                field=scope.field_for(item),
                values={"target": workload.ref, "port": port, "ports": str(port),
                        "protocol": protocol, "sources": shown,
                        "via": ", ".join(dict.fromkeys(p.via for p in paths)),
                        "workers": ", ".join(allowed.cidrs()),
                        "workers_reach": f"; {workers_note}" if workers_note else ""},
                evidence=[f"{shown} → {port}/{protocol} via {p.via}: "
                          + "; ".join(str(e) for e in p.evidence) + perimeter
                          for p in paths] + allowed_note
                + ([f"{workers_note} (the required flow; {_flow_rule(item, port)} reports it)"]
                   if workers_note else []))
        if not judged and (unknown := _kept_out_by_undescribed(graph, scope.graph_name(workload),
                                                               port, protocol, allowed)):
            yield NotEvaluable(unknown)  # nothing beyond the workers gets in, as far as known


def _kept_out_by_undescribed(graph: ReachabilityGraph, target: str, port: int, protocol: str,
                             allowed: IPSpace) -> str:
    """Why who gets in is not known: outside addresses beyond ``allowed`` are kept out of a
    way in by the security groups while one attached is not described (its rules might
    let them in; the workers' flow is then not evaluable too); '' otherwise."""
    perimeter = graph.perimeter
    if perimeter is None or not perimeter.undescribed:
        return ""
    for cidr in allowed.complement().cidrs():
        reach = graph.can_reach(cidr, target, port, protocol)
        blocked = [p.blocked_by.summary for p in reach.paths
                   if not p.allowed and p.via != POD_NETWORK and p.blocked_by is not None
                   and p.blocked_by.layer == PERIMETER]
        if unknowns := unknowns_behind(perimeter, blocked):
            return undescribed_groups(unknowns)
    return ""


def _admit_range(ctx: Context, scope: Scope, workload: Workload, cidr: str, protocol: str,
                 port: int, ways_in: list[Any]) -> Remedy | NoFix | None:
    """When NetworkPolicies isolating the pods are what keeps ``cidr`` out on every way
    in (a default-deny ingress beside no policy admitting the workers): the new policy that
    admits exactly it (``opening.admitting_range``); None when another layer blocks."""
    if not ways_in:
        return NoFix(f"no NodePort/LoadBalancer Service or Route of the input exposes port {port} "
                     f"of {workload.ref}: the HostedCluster's spec.services publishes it (its "
                     "rendered Service is not in the input, or the service is not published); "
                     "nothing here keeps the workers out that an edit could open")
    blocking = [p.blocked_by for p in ways_in]
    if any(e is None or e.layer != NETWORK_POLICY for e in blocking):
        return None
    hops = [Hop(cidr, workload.ref, e.layer, e.allows, e.summary, e.path, e.line)
            for e in blocking if e is not None]
    found = admitting_range(ctx.inventory, (workload.kind, workload.namespace, workload.name),
                            cidr, protocol, port, scope.subject.cluster, hops,
                            [str(p.via) for p in ways_in])
    return opening_remedy(found) if isinstance(found, Opening) else NoFix(found.why)


def open_to_every_address(admitted: IPSpace, allowed: IPSpace) -> bool:
    """Whether ``admitted`` holds every address beyond ``allowed`` of one address family:
    a source range 0.0.0.0/0 opens the whole IPv4 internet though no IPv6 address gets in
    (an IPv4-only load balancer or cluster has none to admit)."""
    beyond = allowed.complement()
    for family in (IPSpace.all_v4(), IPSpace.all_v6()):
        part = beyond.intersection(family)
        if part and admitted.contains(part):
            return True
    return False


def _admitted(reaches: list[Answer], allowed: IPSpace) -> IPSpace:
    """The outside addresses beyond ``allowed`` that get in through some way in."""
    found = [r.source.addresses.intersection(allowed.complement()) for r in reaches
             if r.source.addresses is not None
             and any(p.allowed and p.via != POD_NETWORK for p in r.paths)]
    return IPSpace.union_of(found)


def workers_cannot_reach(ctx: Context, graph: ReachabilityGraph, scope: Scope,
                         item: dict[str, Any], workload: Workload, port: int) -> str:
    """'workers cannot reach konnectivity: <first blocking hop>' when the required flow of
    the catalog into this workload's port is blocked, asked of the same path graph the
    required-flow rules read (so who gets in and whether the workers do never disagree);
    '' when it is open, unknown, or no catalog flow goes there."""
    flow = ingress_flow_to(str(item.get("app") or ""), port)
    if flow is None or scope.hc is None or scope.subject.kind not in HOSTED_KINDS:
        return ""
    results = ctx.flow_index().of(ctx.inventory, graph, scope.hc, flow, ctx.config.worker_cidrs)
    for result in results:
        block = result.first_block
        hop = block.blocked_by if block is not None else None
        if result.status == BLOCKED and result.workload == workload and hop is not None:
            what = str(item.get("service") or item.get("app") or workload.name).lower()
            where = f" at {hop.where}" if hop.where else ""
            return (f"workers cannot reach {what} ({', '.join(result.missing)}): "
                    f"{hop.summary}{where}")
    return ""


def _flow_rule(item: dict[str, Any], port: int) -> str:
    flow = ingress_flow_to(str(item.get("app") or ""), port)
    return flow.checked_by if flow is not None and flow.checked_by else "required-flow"


def _all_get_in(ctx: Context, graph: ReachabilityGraph, scope: Scope, item: dict[str, Any],
                workloads: list[Workload], allowed_where: tuple[IPSpace, str], port: int,
                protocol: str) -> Iterable[Outcome]:
    allowed, where = allowed_where
    first = workloads[0]
    for cidr in allowed.cidrs():
        reach = graph.can_reach(cidr, scope.graph_name(first), port, protocol)
        ways_in = [p for p in reach.paths if p.via != POD_NETWORK]
        if any(p.allowed for p in ways_in):
            continue
        blocked = [f"via {p.via}: {p.blocked_by}" for p in ways_in if p.blocked_by is not None]
        if not ways_in:
            blocked = [f"no NodePort/LoadBalancer Service or Route exposes port {port} of "
                       f"{first.ref}"]
        elif graph.perimeter is not None and graph.perimeter.undescribed and all(
                p.blocked_by is not None and p.blocked_by.layer == "perimeter" for p in ways_in):
            yield NotEvaluable(undescribed_groups(graph.perimeter.undescribed))
            continue
        yield Violation(
            field=scope.field_for(item),
            remedy=_admit_range(ctx, scope, first, cidr, protocol, port, ways_in) or
            NoFix(f"{cidr} is kept out of {first.ref} port {port} by what the HyperShift "
                         "operator renders in the HCP namespace (an edit of it is undone) or by "
                         "the firewall: widen it where it is written — "
                         f"{scope.hc.source_label if scope.hc else 'the HostedCluster'}'s "
                         f"{_ALLOWED_CIDRS} for the API server's load balancer (the next "
                         "render carries it; `hcpscan fix` makes that change on the HostedCluster "
                         "from Git), a NetworkPolicy beside the one that isolates the pods, or "
                         "the firewall rule for the port"),
            values={"target": first.ref, "port": port, "ports": str(port), "protocol": protocol,
                    "source": cidr, "workers": ", ".join(allowed.cidrs())},
            evidence=[f"{cidr} → {port}/{protocol}: {b}" for b in blocked]
            + [f"allowed source {cidr} from {where}"])
