"""Primitives over the reachability graph for HyperShift control planes (rules HCP001-HCP006).

Outside traffic counts when it enters through a way the cluster offers from
outside — a NodePort or LoadBalancer Service, or a Route through the router —
not when it would need a routable pod IP: pod networks are not reachable from
outside the cluster in the platforms HyperShift supports.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from typing import Any

from hcpscan.analysis.reachability.coverage import POLICY_GROUP_WORD, POLICY_LIKE_KINDS
from hcpscan.analysis.reachability.endpoints import WORKLOAD_KINDS
from hcpscan.analysis.reachability.graph import POD_NETWORK, ReachabilityGraph, build_reachability
from hcpscan.analysis.reachability.perimeter import PerimeterError, load_perimeter
from hcpscan.analysis.reachability.policies import is_network_policy
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.objects import MANAGEMENT
from hcpscan.model.hostedcluster import HostedCluster, hosted_cluster, hosted_cluster_for_namespace
from hcpscan.model.ipspace import IPSpace
from hcpscan.rules.context import Context
from hcpscan.rules.primitives import register
from hcpscan.rules.primitives.base import NotApplicable, NotEvaluable, Outcome, Primitive, Violation
from hcpscan.sources.interface import Diagnostic

# Everything the graph reads: endpoints and their owners, policies of every tier and
# the ways in (one home for the endpoint kinds: the reachability endpoints module).
REACHABILITY = "reachability"  # the name the graph is shared under in the Context
GRAPH_READS = ("Pod", *WORKLOAD_KINDS, "Namespace", "NetworkPolicy", "Service", "Route", "Ingress",
               "HostedCluster", "HostedControlPlane", "Node", *POLICY_LIKE_KINDS)

_TARGET = {"type": "object", "additionalProperties": False, "required": ["app"],
           "properties": {"app": {"type": "string"},
                          "port": {"anyOf": [{"type": "integer"}, {"const": "kas"}]},
                          "service": {"type": "string"}}}


def reachability(ctx: Context) -> ReachabilityGraph:
    """The scan's reachability graph, built once, with the perimeter file if given."""
    def build(inventory: Inventory) -> ReachabilityGraph:
        perimeter = None
        if ctx.config.firewall is not None:
            try:
                perimeter = load_perimeter(ctx.config.firewall)
            except PerimeterError as exc:
                ctx.diagnostics.append(Diagnostic(exc.path, exc.line, str(exc)))
        graph = build_reachability(inventory, perimeter)
        ctx.diagnostics.extend(graph.diagnostics)
        return graph

    return ctx.analysis(REACHABILITY, build)


# Named address sets a reach rule may allow, besides literal CIDRs.
MACHINE_NETWORK = "machine-network"  # the HostedCluster's machineNetwork, else worker_cidrs
WORKER_CIDRS = "worker-cidrs"  # worker_cidrs in .hcpscan.yaml


class GraphPrimitive(Primitive):
    """A check answered from the reachability graph: it reads what the graph reads,
    and its answer says which policy objects the graph leaves out."""

    reads = GRAPH_READS
    reads_groups = (POLICY_GROUP_WORD,)

    def caveat(self, ctx: Context) -> str:
        graph = ctx.built(REACHABILITY)
        return graph.exclusion_note() if graph is not None else ""


def worker_space(ctx: Context, hc: HostedCluster) -> tuple[IPSpace, str] | None:
    """Where worker nodes live: the HostedCluster's machineNetwork, else config worker_cidrs."""
    if hc.machine_networks:
        return IPSpace.from_cidrs(hc.machine_networks), "spec.networking.machineNetwork"
    if ctx.config.worker_cidrs:
        return IPSpace.from_cidrs(ctx.config.worker_cidrs), "worker_cidrs in the config"
    return None


def outside_text(outside: IPSpace, workers: IPSpace) -> str:
    """Outside addresses beyond the worker subnets, as findings and pictures name them."""
    if outside == workers.complement():
        return f"any address outside {', '.join(workers.cidrs())}"
    return str(outside)


def allowed_space(ctx: Context, hc: HostedCluster, allowed: list[str]) -> tuple[IPSpace, str] | None:
    """The union of a rule's allowed sources: literal CIDRs and named sets; None when a
    named set has no value in the input or config."""
    space, where = IPSpace.from_cidrs(()), []
    for item in allowed:
        if item == MACHINE_NETWORK:
            found = worker_space(ctx, hc)
        elif item == WORKER_CIDRS:
            found = ((IPSpace.from_cidrs(ctx.config.worker_cidrs), "worker_cidrs in the config")
                     if ctx.config.worker_cidrs else None)
        else:
            found = IPSpace.from_cidrs([item]), "the rule"
        if found is None:
            return None
        space = space.union(found[0])
        where.append(found[1])
    return space, ", ".join(dict.fromkeys(where))


def _port(target: dict[str, Any], hc: HostedCluster) -> int:
    port = target.get("port", "kas")
    return hc.kas_port if port == "kas" else int(port)


def _anchor(hc: HostedCluster, service: str | None) -> str:
    strategy = hc.publishing.get(service or "")
    return strategy.field if strategy else "spec.services"


def _no_allowed_input(allowed: list[str]) -> NotEvaluable:
    if WORKER_CIDRS in allowed or MACHINE_NETWORK in allowed:
        return NotEvaluable("input the user must supply: worker_cidrs (the HostedCluster has no "
                            "spec.networking.machineNetwork)")
    return NotEvaluable("no allowed source range")


def _hcp_targets(ctx: Context, graph: ReachabilityGraph, hc: HostedCluster,
                 app: str) -> list[str]:
    workloads = graph.select_workloads(hc.obj.cluster, hc.control_plane_namespace, {"app": app})
    return [f"{hc.obj.cluster}:{w.namespace}/{w.name}[{w.kind}]" for w in workloads]


_TARGET_DOC = ("a workload of the HostedCluster's control plane: app (its app label), port (a "
               "number, or kas for the platform's API server port) and service (the "
               "spec.services entry a finding points at)")


@register
class Reach(GraphPrimitive):
    name = "reach"
    description = ("who can reach a HostedCluster's control-plane ports from outside, through every "
                   "layer (perimeter file, Service source ranges, NetworkPolicy): only the allowed "
                   "sources (expect: only-allowed), or every allowed source (expect: "
                   "all-allowed)")
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["targets"],
        "properties": {
            "targets": {"type": "array", "minItems": 1, "items": _TARGET, "description": _TARGET_DOC},
            "protocol": {"enum": ["TCP", "UDP", "SCTP"], "description": "default TCP"},
            "allowed": {"type": "array", "minItems": 1,
                        "items": {"anyOf": [{"enum": [MACHINE_NETWORK, WORKER_CIDRS]},
                                            {"type": "string", "format": "cidr"}]},
                        "description": "source ranges: CIDRs, machine-network (the "
                                       "HostedCluster's machineNetwork, else worker_cidrs) or "
                                       "worker-cidrs (the config's); default machine-network"},
            "expect": {"enum": ["only-allowed", "all-allowed"],
                       "description": "only-allowed (default): nothing outside the allowed "
                                      "ranges gets in; all-allowed: every allowed range gets in"},
        },
    }
    subject_kinds = ("HostedCluster",)

    def problems(self, params: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
        found = super().problems(params)
        for i, item in enumerate(params.get("allowed", ()) if isinstance(params, dict) else ()):
            if isinstance(item, str) and item not in (MACHINE_NETWORK, WORKER_CIDRS):
                try:
                    ipaddress.ip_network(item, strict=False)
                except ValueError:
                    found.append((("allowed", i), f"{item!r} is neither a CIDR nor "
                                                  f"{MACHINE_NETWORK} / {WORKER_CIDRS}"))
        return found

    message_fields = {"target": "the workload reached (namespace/name[Kind])",
                      "port": "the port", "protocol": "the protocol",
                      "sources": "outside addresses that get in (only-allowed)",
                      "source": "an allowed range that does not get in (all-allowed)",
                      "workers": "the allowed ranges"}

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        hc = hosted_cluster(subject)
        graph = reachability(ctx)
        allowed_items = params.get("allowed", [MACHINE_NETWORK])
        protocol = params.get("protocol", "TCP")
        expect_all = params.get("expect", "only-allowed") == "all-allowed"
        found_any = False
        for target in params["targets"]:
            names = _hcp_targets(ctx, graph, hc, target["app"])
            if not names:
                continue
            found_any = True
            allowed = allowed_space(ctx, hc, allowed_items)
            if allowed is None:
                yield _no_allowed_input(allowed_items)
                return
            check = _all_get_in if expect_all else _only_allowed_get_in
            yield from check(ctx, graph, hc, target, names, allowed, protocol)
        if not found_any:
            yield NotEvaluable(f"no {', '.join(t['app'] for t in params['targets'])} workload in "
                               f"HCP namespace {hc.control_plane_namespace} in the input")


def _only_allowed_get_in(ctx: Context, graph: ReachabilityGraph, hc: HostedCluster,
                         target: dict[str, Any], names: list[str], allowed_where: tuple[IPSpace, str],
                         protocol: str) -> Iterable[Outcome]:
    allowed, where = allowed_where
    port = _port(target, hc)
    for name in names:
        for reach in graph.who_can_reach(name, port, protocol, workloads=False):
            if not reach.source.is_external:
                continue
            paths = [p for p in reach.paths if p.allowed and p.via != POD_NETWORK]
            outside = reach.source.addresses.intersection(allowed.complement())
            if not paths or not outside:
                continue
            layers = {e.layer for p in paths for e in p.evidence}
            shown = outside_text(outside, allowed)
            perimeter = ("" if "perimeter" in layers else
                         "; no perimeter rule restricts it" if ctx.config.firewall else
                         "; no perimeter file was given (--firewall): the firewall or "
                         "security group in front of the nodes is unknown")
            yield Violation(
                field=_anchor(hc, target.get("service")),
                values={"target": name.split(":", 1)[1], "port": port,
                        "protocol": protocol, "sources": shown,
                        "workers": ", ".join(allowed.cidrs())},
                evidence=[f"{shown} → {port}/{protocol} via {p.via}: "
                          + "; ".join(str(e) for e in p.evidence) + perimeter
                          for p in paths] + [f"allowed sources: {', '.join(allowed.cidrs())} "
                                             f"(from {where})"])


def _all_get_in(ctx: Context, graph: ReachabilityGraph, hc: HostedCluster, target: dict[str, Any],
                names: list[str], allowed_where: tuple[IPSpace, str], protocol: str
                ) -> Iterable[Outcome]:
    allowed, where = allowed_where
    port = _port(target, hc)
    for cidr in allowed.cidrs():
        reach = graph.can_reach(cidr, names[0], port, protocol)
        ways_in = [p for p in reach.paths if p.via != POD_NETWORK]
        if any(p.allowed for p in ways_in):
            continue
        blocked = [f"via {p.via}: {p.blocked_by}" for p in ways_in if p.blocked_by is not None]
        if not ways_in:
            blocked = [f"no NodePort/LoadBalancer Service or Route exposes port {port} of "
                       f"{names[0].split(':', 1)[1]}"]
        yield Violation(
            field=_anchor(hc, target.get("service")),
            values={"target": names[0].split(":", 1)[1], "port": port, "protocol": protocol,
                    "source": cidr, "workers": ", ".join(allowed.cidrs())},
            evidence=[f"{cidr} → {port}/{protocol}: {b}" for b in blocked]
            + [f"allowed source {cidr} from {where}"])


# Where an egress need goes: any outside address, or the management cluster's API server
# endpoints (the kubernetes Service's endpoints: policies apply after DNAT).
OUTSIDE, MANAGEMENT_KAS = "outside", "management-kas"
_SOURCES = {"type": "object", "additionalProperties": False,
            "description": "the HCP namespace's workloads that have the need: by app label, or "
                           "by any label set",
            "properties": {"apps": {"type": "array", "items": {"type": "string"}},
                           "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}
_NEED = {
    "type": "object", "additionalProperties": False, "required": ["sources", "port"],
    "properties": {
        "sources": _SOURCES,
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "protocol": {"enum": ["TCP", "UDP", "SCTP"]},
        "to": {"enum": [OUTSIDE, MANAGEMENT_KAS],
               "description": "outside (default): some outside address; management-kas: every "
                              "endpoint of the management cluster's default/kubernetes Service"},
        "require": {"enum": ["some", "all"],
                    "description": "to outside: some address (default), or every one"},
    },
}


def management_kas_endpoints(ctx: Context, cluster: str) -> IPSpace | None:
    """The management API server's addresses: the default/kubernetes Endpoints (or
    EndpointSlices) of the cluster; None when the input holds neither."""
    addresses: list[str] = []
    endpoints = ctx.inventory.get("Endpoints", "default", "kubernetes", cluster)
    for subset in (endpoints.get("subsets") or []) if endpoints is not None else []:
        for address in (subset.get("addresses") or []) if isinstance(subset, dict) else []:
            if isinstance(address, dict) and isinstance(address.get("ip"), str):
                addresses.append(address["ip"])
    for eps in ctx.inventory.query("EndpointSlice", namespace="default", cluster=cluster):
        if eps.labels.get("kubernetes.io/service-name") != "kubernetes":
            continue
        for endpoint in eps.get("endpoints") or []:
            if isinstance(endpoint, dict):
                addresses += [a for a in endpoint.get("addresses") or [] if isinstance(a, str)]
    valid = [a for a in dict.fromkeys(addresses) if _is_address(a)]
    return IPSpace.from_cidrs(valid) if valid else None


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


@register
class EgressOpen(GraphPrimitive):
    name = "egress_open"
    description = ("control-plane workloads of a HostedCluster keep the egress they need under "
                   "NetworkPolicy: each need names its workloads, a port and where to (outside "
                   "addresses, or the management API server's endpoints)")
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["needs"],
        "properties": {"needs": {"type": "array", "minItems": 1, "items": _NEED}},
    }
    reads = (*GRAPH_READS, "Endpoints", "EndpointSlice")
    subject_kinds = ("HostedCluster",)
    message_fields = {"workload": "the workload that cannot get out", "port": "the port",
                      "protocol": "the protocol", "blocked": "the destinations it cannot reach"}

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        hc = hosted_cluster(subject)
        graph = reachability(ctx)
        ns, cluster = hc.control_plane_namespace, subject.cluster
        if not graph.workloads(cluster, ns):
            yield NotEvaluable(f"HCP namespace {ns} is not in the input")
            return
        for need in params["needs"]:
            yield from self._need(ctx, graph, cluster, ns, need)

    def _need(self, ctx: Context, graph: ReachabilityGraph, cluster: str, ns: str,
              need: dict[str, Any]) -> Iterable[Outcome]:
        selectors = [{"app": a} for a in need["sources"].get("apps", ())]
        if need["sources"].get("labels"):
            selectors.append(dict(need["sources"]["labels"]))
        workloads = {w for sel in selectors for w in graph.select_workloads(cluster, ns, sel)}
        protocol, port = need.get("protocol", "TCP"), need["port"]
        wanted, note = None, ""
        if need.get("to") == MANAGEMENT_KAS:
            wanted = management_kas_endpoints(ctx, MANAGEMENT)
            if wanted is None:
                note = ("the management API server's endpoints (default/kubernetes Endpoints) are "
                        "not in the input: judged as egress to any outside address")
        for w in sorted(workloads, key=lambda w: w.name):
            egress = graph.egress_outside(f"{cluster}:{w.namespace}/{w.name}[{w.kind}]", port, protocol)
            if wanted is not None:
                missing = wanted.intersection(egress.allowed.complement())
            elif need.get("require", "some") == "some":
                missing = IPSpace.from_cidrs(()) if egress.allowed else egress.allowed.complement()
            else:
                missing = egress.allowed.complement()
            if not missing:
                continue
            obj = ctx.inventory.get(w.kind, w.namespace, w.name, cluster)
            blocked = ("every outside address" if not egress.allowed and wanted is None
                       else f"the management API server ({missing})" if wanted is not None
                       else str(missing))
            yield Violation(
                field="spec.template.spec" if obj is not None and w.kind != "Pod" else "spec",
                subject=obj,
                values={"workload": w.ref, "port": port, "protocol": protocol, "blocked": blocked},
                evidence=[str(e) for e in egress.evidence] + ([note] if note else []))


@register
class DnsBothProtocols(GraphPrimitive):
    name = "dns_both_protocols"
    description = "egress rules that open DNS on one protocol only, for pods under egress isolation"
    params_schema = {"type": "object", "additionalProperties": False,
                     "properties": {"ports": {"type": "array", "items": {"type": "integer"}}}}

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        if not is_network_policy(subject):
            return
        graph = reachability(ctx)
        dns_ports = params.get("ports", [53, 5353])
        rules = subject.get("spec.egress") or []
        for i, rule in enumerate(rules if isinstance(rules, list) else []):
            protocols = _dns_protocols(rule, dns_ports)
            if len(protocols) != 1:
                continue
            (have,) = protocols
            other = "TCP" if have == "UDP" else "UDP"
            lacking = []
            for w in graph.selected_by(subject):
                isolated, conns = graph.egress_connections(
                    f"{subject.cluster}:{w.namespace}/{w.name}[{w.kind}]")
                if isolated and not any(conns.allows(other, p) for p in dns_ports):
                    lacking.append(w.ref)
            if lacking:
                yield Violation(
                    field=f"spec.egress[{i}].ports",
                    values={"have": have, "missing": other, "workloads": ", ".join(lacking[:5])
                            + (f" and {len(lacking) - 5} more" if len(lacking) > 5 else "")},
                    evidence=[f"egress rule #{i + 1} opens DNS on {have} only",
                              f"no egress rule of any NetworkPolicy opens {other} "
                              f"{'/'.join(map(str, dns_ports))} for {', '.join(lacking)}"])


def _dns_protocols(rule: Any, dns_ports: list[int]) -> set[str]:
    if not isinstance(rule, dict) or not isinstance(rule.get("ports"), list):
        return set()
    found = set()
    for port in rule["ports"]:
        if not isinstance(port, dict) or not isinstance(port.get("port"), int):
            continue
        first, last = port["port"], port.get("endPort") or port["port"]
        if any(first <= p <= last for p in dns_ports):
            found.add(str(port.get("protocol", "TCP")).upper())
    return found


_BIND_FLAGS = ("--metrics-bind-address", "--metrics-addr", "--metrics-bind-addr")
_LOOPBACK = re.compile(r"^(127\.0\.0\.1|localhost|\[::1\]):\d+$")


@register
class PlainHttpEndpoints(GraphPrimitive):
    name = "plain_http_endpoints"
    description = ("plain-HTTP health/metrics ports reachable from outside the cluster, and "
                   "metrics listeners that must bind loopback")
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["ports"],
        "properties": {"ports": {"type": "array", "items": {"type": "integer"}},
                       "loopback_only": {"type": "array", "items": {"type": "string"},
                                         "description": "workload names whose metrics flag must "
                                                        "bind 127.0.0.1"}},
    }

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        if hosted_cluster_for_namespace(ctx.inventory, subject.namespace, subject.cluster) is None:
            yield NotApplicable("not in the control-plane namespace of a HostedCluster in the input")
            return
        yield from self._bind(subject, params)
        graph = reachability(ctx)
        name = f"{subject.cluster}:{subject.namespace}/{subject.name}[{subject.kind}]"
        try:
            exposed = graph.exposed_ports(name)
        except LookupError:
            yield NotEvaluable(f"{subject.ref} is not in the reachability graph")
            return
        for entry in exposed:
            if entry.via == POD_NETWORK or not entry.sources:
                continue
            ports = [p for p in params["ports"] if entry.connections.allows("TCP", p)]
            if not ports:
                continue
            yield Violation(
                field="spec.template.spec.containers",
                values={"ports": ", ".join(map(str, ports)), "via": entry.via,
                        "sources": str(entry.sources)},
                evidence=[f"{entry.sources} → {', '.join(map(str, ports))}/TCP via {entry.via}"]
                + [str(e) for e in entry.evidence])

    @staticmethod
    def _bind(subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        if subject.name not in params.get("loopback_only", ()):
            return
        containers = subject.get("spec.template.spec.containers") or []
        for ci, container in enumerate(containers):
            args = [*(container.get("command") or []), *(container.get("args") or [])]
            for ai, arg in enumerate(container.get("args") or []):
                flag, _, value = str(arg).partition("=")
                if flag in _BIND_FLAGS and not _LOOPBACK.match(value):
                    yield Violation(field=f"spec.template.spec.containers[{ci}].args[{ai}]",
                                    values={"ports": value or "(empty)", "via": flag,
                                            "sources": "every address of the pod"},
                                    evidence=[f"{flag}={value} listens beyond 127.0.0.1"])
            if not any(str(a).split("=")[0] in _BIND_FLAGS for a in args):
                yield Violation(field=f"spec.template.spec.containers[{ci}]",
                                values={"ports": "8080", "via": "default bind address",
                                        "sources": "every address of the pod"},
                                evidence=[f"container {container.get('name')} sets no "
                                          f"{'/'.join(_BIND_FLAGS)}: the controller-runtime "
                                          "default binds every address"])
