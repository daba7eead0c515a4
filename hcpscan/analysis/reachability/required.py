"""Required flows on the path graph: is each flow of the catalog open for a HostedCluster?

For one HostedCluster and one flow (``hcpscan.model.flows``) this asks the reachability
graph each hop's verdict, records the hops in the path graph, and asks it (networkx's
path semantics, ``paths.py``) whether a path is open: per target workload and port, per protocol and per worker
range. A flow is *open* when every connection it needs has a path, *blocked* (naming
the first hop that blocks, its object with file:line, the connections missing and
those allowed), *unknown* when a deciding input is absent (named), or *not
applicable* to this cluster (platform, publishing strategy, endpoint access).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hcpscan.analysis.reachability.answers import Evidence
from hcpscan.analysis.reachability.cloud_perimeter import undescribed_groups
from hcpscan.analysis.reachability.endpoints import Workload
from hcpscan.analysis.reachability.graph import POD_NETWORK, ReachabilityGraph
from hcpscan.analysis.reachability.paths import NO_WAY, ROUTER, Hop, PathAnswer, PathGraph
from hcpscan.analysis.reachability.perimeter import unknowns_behind
from hcpscan.analysis.reachability.queries import KUBE_DNS, OPENSHIFT_DNS, dns_pods
from hcpscan.analysis.reachability.routers import hcp_route_router
from hcpscan.analysis.reachability.scan_graph import worker_space
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.model.destinations import (
    DNS,
    MANAGEMENT_KAS,
    PROXY,
    address_space,
    management_kas_endpoints,
    proxy_endpoint,
)
from hcpscan.model.flows import MANAGEMENT_SOURCE, Endpoint, Flow
from hcpscan.model.hostedcluster import DEFAULT_ADVERTISE_IPV4, DEFAULT_KAS_PORT, HostedCluster
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.publishing import DeclaredWay, Undeclared, Unpublished, declared_way

OPEN, BLOCKED, UNKNOWN, NOT_APPLICABLE = "open", "blocked", "unknown", "not-applicable"
VIRT_LAUNCHER = {"kubevirt.io": "virt-launcher"}  # KubeVirt workers: the VMs' pods


@dataclass(frozen=True, slots=True)
class FlowResult:
    """One flow for one subject workload (the target of an ingress flow, the sender of
    an egress flow) — or for the whole cluster when nothing could be asked."""

    flow: Flow
    status: str
    reason: str = ""
    workload: Workload | None = None
    destination: str = ""
    answers: tuple[PathAnswer, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def blocked(self) -> list[PathAnswer]:
        return [a for a in self.answers if not a.open]

    @property
    def first_block(self) -> PathAnswer | None:
        return next(iter(self.blocked), None)

    @property
    def missing(self) -> list[str]:
        """The connections with no open path, e.g. ``TCP 53`` (from which range, if several)."""
        return list(dict.fromkeys(_conn(a, self.flow) for a in self.blocked))

    @property
    def allowed(self) -> list[str]:
        missing = set(self.missing)
        return [c for c in dict.fromkeys(_conn(a, self.flow) for a in self.answers if a.open)
                if c not in missing]

    def facts(self) -> dict[str, Any]:
        """Structured data for a fix: the flow, the subject workload, the connections
        missing and allowed, the first blocking hop with its object and place."""
        block = self.first_block
        hop = block.blocked_by if block is not None else None
        return {"flow": self.flow.id, "workload": self.workload.ref if self.workload else None,
                "destination": self.destination, "missing": self.missing, "allowed": self.allowed,
                "blocking_hop": hop.to_json() if hop is not None else None,
                "path": block.to_json() if block is not None else None}


def _conn(answer: PathAnswer, flow: Flow) -> str:
    if flow.check == "operator-ingress":  # one target, several senders
        return f"{answer.connection} from {answer.origin}"
    if answer.origin.startswith("range "):
        return f"{answer.connection} from {answer.origin.removeprefix('range ')}"
    return f"{answer.connection} to {answer.target}"


def evaluate_flow(inventory: Inventory, graph: ReachabilityGraph, paths: PathGraph,
                  hc: HostedCluster, flow: Flow, worker_cidrs: list[str] | tuple[str, ...]
                  ) -> list[FlowResult]:
    why_not = flow.applies(hc)
    if why_not:
        return [FlowResult(flow, NOT_APPLICABLE, why_not)]
    if paths.inventory is None:  # where the path graph reads Routes' routers and Services
        paths.inventory = inventory
    if flow.check == "none":
        return [FlowResult(flow, UNKNOWN, f"not checkable from manifests: {flow.reason}")]
    if any(t.named == PROXY for t in flow.targets) and proxy_endpoint(hc.proxy) is None:
        return [FlowResult(flow, NOT_APPLICABLE, "spec.configuration.proxy names no usable proxy URL "
                           "(httpsProxy, httpProxy)")]
    if flow.check == "guest-egress":
        return [FlowResult(flow, NOT_APPLICABLE, "judged in the guest cluster, on its "
                           "Infrastructure cluster object (evaluate_guest_flow)")]
    cluster, ns = hc.obj.cluster, hc.control_plane_namespace
    if not graph.workloads(cluster, ns) and flow.check == "ingress" and \
            any(t.service for t in flow.targets):
        return _declared_ingress(inventory, graph, paths, hc, flow, worker_cidrs)
    if not graph.workloads(cluster, ns):
        return [FlowResult(flow, UNKNOWN, f"{hc.namespace_not_read}: its workloads, "
                           f"Services and NetworkPolicies decide the flow (`oc get deployments,"
                           f"services,routes,networkpolicies -n {ns} -o yaml`)")]
    if flow.check == "ingress":
        return _ingress(graph, paths, hc, flow, worker_cidrs)
    if flow.check == "operator-ingress":
        return _operator_ingress(graph, paths, hc, flow)
    if flow.check == "worker-egress":
        sources = graph.select_workloads(cluster, ns, VIRT_LAUNCHER)
        if not sources:
            return [FlowResult(flow, UNKNOWN, f"no virt-launcher pods (kubevirt.io=virt-launcher) in "
                               f"HCP namespace {ns} in the input: the KubeVirt workers' egress is "
                               "theirs")]
        return _egress(inventory, graph, paths, hc, flow, sources)
    sources = _hcp_sources(graph, hc, flow)
    if not sources:
        apps = ("control-plane" if flow.source == ("*",) else " or ".join(flow.source)
                if isinstance(flow.source, tuple) else str(flow.source))
        return [FlowResult(flow, UNKNOWN, f"no {apps} workload in HCP namespace {ns} in the input")]
    return _egress(inventory, graph, paths, hc, flow, sources)


def evaluate_guest_flow(inventory: Inventory, graph: ReachabilityGraph, paths: PathGraph,
                        infra: K8sObject, hc: HostedCluster | None, flow: Flow) -> list[FlowResult]:
    """A ``guest-egress`` flow in the guest cluster of ``infra``: every guest workload whose
    egress a policy isolates must reach the hosted API server — outside the guest, through
    the ``kubernetes`` Service to the node-local proxy at the advertise address (policies
    apply after the Service's DNAT). One result per isolated workload; the flow is open for
    a workload whose egress nothing isolates."""
    if hc is not None and (why_not := flow.applies(hc)):
        return [FlowResult(flow, NOT_APPLICABLE, why_not)]
    if paths.inventory is None:
        paths.inventory = inventory
    cluster = infra.cluster
    space, where = hosted_kas(inventory, cluster, hc)
    port = (hc.api_server_port if hc is not None and hc.api_server_port else DEFAULT_KAS_PORT)
    through = cluster_ip_hop(inventory, cluster, "default", "kubernetes", 443,
                             f"the hosted API server at {shown_of(space)} port {port}")
    shown = ", ".join(c.removesuffix("/32").removesuffix("/128") for c in space.cidrs())
    destination = f"the hosted API server at {shown} port {port} ({where})"
    results = []
    host = graph.host_network_workloads(cluster)  # the node-local proxy itself, ovnkube-node ...
    for workload in graph.workloads(cluster):
        if workload in host:
            continue  # on the node's network: NetworkPolicy does not filter it
        name = graph_name(cluster, workload)
        answers = []
        isolated = False
        for protocol in flow.protocols:
            egress = graph.egress_outside(name, port, protocol)
            isolated = isolated or egress.isolated
            allows = egress.allowed.contains(space)
            summary = "" if allows or not egress.allowed else (
                f"egress of {workload.ref} opens {protocol} {port} to {egress.allowed} only, "
                f"not to {space} ({where})")
            answers.append(paths.add_egress(
                workload.ref, "hosted-kas", protocol, port, allows, egress.evidence,
                summary or f"egress of {workload.ref} to the hosted API server {protocol} {port}",
                explicit=bool(summary), through=through))
        if not isolated:
            continue  # no policy isolates its egress: open, and nothing to show
        status = OPEN if all(a.open for a in answers) else BLOCKED
        results.append(FlowResult(flow, status, workload=workload, destination=destination,
                                  answers=tuple(answers)))
    return results


def shown_of(space: IPSpace) -> str:
    return ", ".join(c.removesuffix("/32").removesuffix("/128") for c in space.cidrs())


def cluster_ip_hop(inventory: Inventory, cluster: str, namespace: str, name: str, port: int,
                   endpoints: str) -> Hop:
    """The hop into a ClusterIP Service a workload sends to: its DNAT picks an endpoint,
    and the egress policies after it see that endpoint and its port (not the Service's).
    Made once per Service and port (every control-plane workload sends through it)."""
    hop: Hop = inventory.derived(
        f"required.cluster-ip-hop\0{cluster}\0{namespace}\0{name}\0{port}\0{endpoints}",
        lambda inv: _cluster_ip_hop(inv, cluster, namespace, name, port, endpoints))
    return hop


def _cluster_ip_hop(inventory: Inventory, cluster: str, namespace: str, name: str, port: int,
                    endpoints: str) -> Hop:
    svc = inventory.get("Service", namespace, name, cluster)
    address = svc.get("spec.clusterIP") if svc is not None else None
    where = inventory.locate(svc) if svc is not None else None
    node = f"Service {namespace}/{name}" + (f" ({address})" if isinstance(address, str) and address
                                           and address != "None" else "")
    said = "" if svc is not None else " (the Service is not in the input; every cluster has it)"
    return Hop("", node, "service", True,
               f"ClusterIP Service {namespace}/{name} port {port} → {endpoints}: its DNAT chooses "
               f"the endpoint, which the egress policies see{said}",
               where.path if where else None, where.line if where else None)


def hosted_kas(inventory: Inventory, cluster: str, hc: HostedCluster | None) -> tuple[IPSpace, str]:
    """Where guest pods' API server traffic goes after the ``kubernetes`` Service's DNAT:
    the HostedCluster's advertise address, else the guest's default/kubernetes endpoints,
    else HyperShift's default node-local address."""
    if hc is not None:
        address, where = hc.advertise_address
        return IPSpace.from_cidrs([address]), f"{hc.obj.ref} {where}"
    found = management_kas_endpoints(inventory, cluster)  # the guest's own default/kubernetes
    if found is not None:
        return found, "the guest's default/kubernetes endpoints"
    return (IPSpace.from_cidrs([DEFAULT_ADVERTISE_IPV4]),
            "HyperShift's node-local API server proxy on every compute node")


def graph_name(cluster: str, workload: Workload) -> str:
    return workload.graph_name(cluster)


def _hcp_sources(graph: ReachabilityGraph, hc: HostedCluster, flow: Flow) -> list[Workload]:
    cluster, ns = hc.obj.cluster, hc.control_plane_namespace
    if flow.source == ("*",):  # the KubeVirt workers' pods are workers, not control plane
        workers = set(graph.select_workloads(cluster, ns, VIRT_LAUNCHER))
        return [w for w in graph.workloads(cluster, ns) if w.namespace == ns and w.name
                and w not in workers]
    found: list[Workload] = []
    for app in flow.source:
        found += [w for w in graph.select_workloads(cluster, ns, {"app": app}) if w not in found]
    return found


def _operator_ingress(graph: ReachabilityGraph, paths: PathGraph, hc: HostedCluster,
                      flow: Flow) -> list[FlowResult]:
    """Operators that reconcile the control plane — the HyperShift operator in its own
    namespace, the control-plane operator in the HCP namespace — into the control-plane
    pods they manage, workload to workload: every tier of policy in the HCP namespace (a
    default-deny ingress policy shuts them out unless another policy lets them in).
    One result per target workload; an operator absent from the input is named."""
    cluster, ns = hc.obj.cluster, hc.control_plane_namespace
    sources: list[Workload] = []
    absent: list[str] = []
    for entry in flow.source if isinstance(flow.source, tuple) else ():
        if entry.startswith(MANAGEMENT_SOURCE):
            where, name = entry.removeprefix(MANAGEMENT_SOURCE).split("/", 1)
            found = [w for w in graph.workloads(cluster, where) if w.name == name]
        else:
            where, name = ns, entry
            found = graph.select_workloads(cluster, ns, {"app": entry})
        sources += [w for w in found if w not in sources]
        if not found:
            absent.append(f"{where}/{name}")
    if absent:
        return [FlowResult(flow, UNKNOWN, f"{', '.join(absent)} is not in the input: its pods' "
                           "labels and namespace decide which policies let it in (`oc get "
                           + "; oc get ".join(f"deployment {a.split('/')[1]} -n {a.split('/')[0]}"
                                              if not a.startswith(ns + "/") else
                                              f"deployments -l app={a.split('/')[1]} -n {ns}"
                                              for a in absent) + " -o yaml`)")]
    results = []
    for endpoint in flow.targets:
        port = endpoint.port_for(hc)
        if not endpoint.app or port is None:
            continue
        for target in graph.select_workloads(cluster, ns, {"app": endpoint.app}):
            answers = []
            for source in sources:
                for protocol in flow.protocols:
                    reach = graph.can_reach(graph_name(cluster, source), graph_name(cluster, target),
                                            port, protocol)
                    paths.add_reach(reach, source.ref, target.ref, ways_only=False)
                    answers.append(paths.answer(source.ref, target.ref, reach.protocol, port))
            status = OPEN if all(a.open for a in answers) else BLOCKED
            results.append(FlowResult(flow, status, workload=target,
                                      destination=f"{target.ref} port {port}",
                                      answers=tuple(answers)))
    if not results:
        apps = " or ".join(dict.fromkeys(t.app for t in flow.targets if t.app))
        return [FlowResult(flow, UNKNOWN, f"no {apps} workload in HCP namespace {ns} in the input")]
    return results


def _ingress(graph: ReachabilityGraph, paths: PathGraph, hc: HostedCluster, flow: Flow,
             worker_cidrs: list[str] | tuple[str, ...]) -> list[FlowResult]:
    workers = worker_space(hc, worker_cidrs)
    if workers is None:
        return [FlowResult(flow, UNKNOWN, "input the user must supply: worker_cidrs ("
                           f"{hc.label} has no spec.networking.machineNetwork)")]
    cluster, ns = hc.obj.cluster, hc.control_plane_namespace
    apps = list(dict.fromkeys(t.app for t in flow.targets if t.app))
    chosen = next(((app, found) for app in apps
                   if (found := graph.select_workloads(cluster, ns, {"app": app}))), None)
    if chosen is None:
        return [FlowResult(flow, UNKNOWN, f"no {' or '.join(apps)} workload in HCP namespace {ns} "
                           "in the input")]
    app, targets = chosen
    results = []
    for workload in targets:
        name = graph_name(cluster, workload)
        answers, ports, unexposed = [], [], []
        for endpoint in (t for t in flow.targets if t.app == app):
            port = endpoint.port_for(hc)
            if port is None:  # flows.py refuses an app target without a port
                continue
            ports.append(str(port))
            for protocol in flow.protocols:
                for cidr in workers[0].cidrs():
                    origin = f"range {cidr}"
                    reach = graph.can_reach(cidr, name, port, protocol)
                    if not any(p.via != POD_NETWORK for p in reach.paths):
                        unexposed.append(port)
                    paths.add_reach(reach, origin, workload.ref, ways_only=True)
                    answers.append(paths.answer(origin, workload.ref, protocol, port))
        if unexposed:  # the Service or Route the publishing strategy makes is not in the input
            results.append(FlowResult(flow, UNKNOWN, _no_way(hc, flow, workload, unexposed)))
            continue
        status = OPEN if all(a.open for a in answers) else BLOCKED
        if status == BLOCKED and (unknown := perimeter_unknown(graph, answers)):
            results.append(FlowResult(flow, UNKNOWN, unknown, workload=workload))
            continue
        results.append(FlowResult(flow, status, workload=workload,
                                  destination=f"{workload.ref} port {', '.join(ports)}",
                                  answers=tuple(answers),
                                  notes=(f"workers are {', '.join(workers[0].cidrs())} "
                                         f"({workers[1]})",)))
    return results


def _declared_ingress(inventory: Inventory, graph: ReachabilityGraph, paths: PathGraph,
                      hc: HostedCluster, flow: Flow, worker_cidrs: list[str] | tuple[str, ...]
                      ) -> list[FlowResult]:
    """An ingress flow judged from the HostedCluster alone (a GitOps tree without its HCP
    namespace): the spec.services entry says how the target is offered — a NodePort, a
    LoadBalancer bounded by allowedCIDRBlocks, a Route through the router (shard) that
    serves it — and the perimeter file says who reaches its entry port."""
    workers = worker_space(hc, worker_cidrs)
    if workers is None:
        return [FlowResult(flow, UNKNOWN, "input the user must supply: worker_cidrs ("
                           f"{hc.label} has no spec.networking.machineNetwork)")]
    endpoint = next(t for t in flow.targets if t.service)
    service = endpoint.service
    router = hcp_route_router(inventory, hc)
    way = declared_way(inventory, hc, service, router)
    if isinstance(way, Undeclared):
        return [FlowResult(flow, UNKNOWN, f"{hc.namespace_not_read}; {way.reason}")]
    said: tuple[str, ...] = ()
    if isinstance(way, Unpublished):  # no entry port: the connection is to the service's port
        entry, published = endpoint.port_for(hc) or 0, "not published outside"
    else:
        entry, published, said = (way.entry[0], f"published as {way.kind}, entry {way.entry_text}",
                                   way.evidence)
    target = f"{service} of {hc.label}"
    place = inventory.locate(hc.obj, hc.publishing[service].field) if service in hc.publishing else None
    answers, notes = [], []
    for protocol in flow.protocols:
        for cidr in workers[0].cidrs():
            origin = f"range {cidr}"
            hops, unknown = _declared_hops(graph, way, origin, target, cidr, protocol, place)
            if hops and isinstance(way, DeclaredWay) and way.kind == "Route":
                hops = _through_router(inventory, hops, router)
            if unknown:
                notes.append(unknown)
                continue
            for hop in hops:
                paths.record(origin, protocol, entry, hop)
            answers.append(paths.answer(origin, target, protocol, entry))
    if notes and not any(not a.open for a in answers):
        return [FlowResult(flow, UNKNOWN, f"{hc.namespace_not_read}; " + "; ".join(notes))]
    status = OPEN if all(a.open for a in answers) else BLOCKED
    if status == BLOCKED and (unknown := perimeter_unknown(graph, answers)):
        return [FlowResult(flow, UNKNOWN, unknown)]
    return [FlowResult(flow, status, destination=f"{target} ({published})", answers=tuple(answers),
                       notes=(*said, *notes))]


def perimeter_unknown(graph: ReachabilityGraph, answers: list[PathAnswer]) -> str:
    """Why a flow the perimeter blocks is not evaluable: a security group attached to the
    machines is not described in the input, and its rules might admit the flow."""
    blocked = [a.blocked_by.summary for a in answers
               if a.blocked_by is not None and a.blocked_by.layer == "perimeter"]
    return undescribed_groups(unknowns_behind(graph.perimeter, blocked)) if blocked else ""


def _through_router(inventory: Inventory, hops: list[Hop], router: K8sObject | None) -> list[Hop]:
    """A Route's last hop split at the router shard that serves it (its IngressController
    a node of its own, with its place); the default router when the input names none."""
    last = hops[-1]
    if router is not None:
        where = inventory.locate(router)
        node = f"router IngressController {router.namespace}/{router.name}"
        said = (f"IngressController {router.namespace}/{router.name} serves the HostedCluster's "
                "Routes (its namespaceSelector and routeSelector admit them)")
        place: tuple[str | None, int | None] = (where.path, where.line)
    else:
        node, said, place = ("router (openshift-ingress)", "the management cluster's default router "
                             "serves the HostedCluster's Routes", (None, None))
    return [*hops[:-1], Hop(last.source, node, last.layer, last.allows, last.summary, last.path,
                            last.line),
            Hop(node, last.target, ROUTER, True, said, *place)]


def _declared_hops(graph: ReachabilityGraph, way: DeclaredWay | Unpublished, origin: str,
                   target: str, cidr: str, protocol: str, place: Any) -> tuple[list[Hop], str]:
    """The hops origin → perimeter → the way → the service, or why they cannot be told."""
    path, line = (place.path, place.line) if place is not None else (None, None)
    if isinstance(way, Unpublished):
        return [Hop(origin, target, NO_WAY, False, way.why, path, line)], ""
    hops, at = [], origin
    source = IPSpace.from_cidrs([cidr])
    perimeter = graph.perimeter.for_way(way.gate) if graph.perimeter is not None else None
    node = f"{way.kind} {way.service} (entry {way.entry_text})"
    if perimeter is not None:
        every, some = perimeter.admitting(protocol, *way.entry)
        if not every.contains(source) and some.overlaps(source):
            return [], (f"{cidr} → {way.entry_text}/{protocol}: the entry port is not known "
                        "(set nodePort.port) and the perimeter admits some of those ports only")
        verdict = perimeter.decide(source, protocol, way.entry[0])
        hop_to = f"perimeter {perimeter.name} → {node}"
        written, line = perimeter.place_of(verdict)
        hops.append(Hop(at, hop_to, "perimeter", every.contains(source),
                        f"{perimeter.name}: {verdict.describe(perimeter)} for {protocol}/"
                        f"{way.entry_text}", written or None, line))
        at = hop_to
    admits = way.sources.contains(source)
    summary = " ".join(way.evidence) + ("" if admits else f"; admits only {way.sources}")
    hops.append(Hop(at, target, "service", admits, summary, path, line))
    return hops, ""


def _no_way(hc: HostedCluster, flow: Flow, workload: Workload, ports: list[int]) -> str:
    """Why a flow into ``workload`` cannot be judged when nothing exposes its port: the
    Service or Route its publishing strategy makes is not in the input."""
    shown = ", ".join(map(str, dict.fromkeys(ports)))
    services = [t.service for t in flow.targets if t.service]
    strategy = hc.publishing.get(services[0]) if services else None
    made = ("a Route to it (and the router that serves it)" if strategy and strategy.type == "Route"
            else f"a {strategy.type} Service selecting it" if strategy
            else "the LoadBalancer Service that exposes it")
    where = f"{strategy.field} is {strategy.type}: " if strategy else ""
    return (f"{where}no Service or Route in the input exposes port {shown} of {workload.ref}; "
            f"add {made} (`oc get services,routes -n {workload.namespace} -o yaml`)")


def dns_pod_ports(inventory: Inventory, cluster: str) -> tuple[tuple[int, ...], str]:
    """The port the cluster's DNS pods listen on, as far as the input says: 5353 behind
    OpenShift's dns-default Service (policies apply after DNAT), 53 for a vanilla
    cluster's kube-dns; either when the input shows neither."""
    ports, note, _pods = dns_pods(inventory, cluster)
    return ports, note




def _egress(inventory: Inventory, graph: ReachabilityGraph, paths: PathGraph, hc: HostedCluster,
            flow: Flow, sources: list[Workload]) -> list[FlowResult]:
    cluster = hc.obj.cluster
    results: list[FlowResult] = []
    if not sources:
        return results
    # where each target is sent to, the same for every source workload
    nodes = [(endpoint, *_egress_nodes(inventory, hc, endpoint)) for endpoint in flow.targets]
    destination_text = ", ".join(t.text(hc) for t in flow.targets)
    for workload in sources:
        name = graph_name(cluster, workload)
        answers, notes = [], []
        dns_shut: list[str] = []  # the protocols DNS is blocked on
        for endpoint, destination, through in nodes:
            for protocol, port, allows, evidence, note, summary in _out(inventory, graph, hc, flow,
                                                                       name, endpoint):
                answers.append(paths.add_egress(
                    workload.ref, destination, protocol, port, allows, evidence,
                    summary or f"egress of {workload.ref} to {destination} {protocol} {port}",
                    explicit=bool(summary), through=through))
                if endpoint.named == DNS and not answers[-1].open and protocol not in dns_shut:
                    dns_shut.append(protocol)
                if note and note not in notes:
                    notes.append(note)
        status = OPEN if all(a.open for a in answers) else BLOCKED
        if status == BLOCKED and dns_shut and \
                (unknown := _dns_names_unknown(inventory, graph, hc, name, dns_shut)):
            results.append(FlowResult(flow, UNKNOWN, unknown, workload=workload))
            continue
        results.append(FlowResult(flow, status, workload=workload,
                                  destination=destination_text,
                                  answers=tuple(answers), notes=tuple(notes)))
    return results


def _dns_names_unknown(inventory: Inventory, graph: ReachabilityGraph, hc: HostedCluster,
                       name: str, shut: list[str]) -> str:
    """Why a blocked DNS flow is not known to be blocked: a rule towards the DNS pods gives
    its port by name, in a protocol DNS is blocked on (``shut``), and the DNS pods, whose
    container ports say the number, are not in the input. '' otherwise."""
    _ports, _note, dns = dns_pods(inventory, hc.obj.cluster)
    named = graph.unresolved_names_to_pods(name, dns, shut)
    if not named:
        return ""
    return ("; ".join(named) + ": a named port means the number of the DNS pods' container "
            "port of that name, and the DNS pods are not in the input, so whether DNS is open "
            "is not known. Add them and scan again: `oc get daemonset dns-default -n "
            "openshift-dns -o yaml`, or `kubectl get deployment coredns -n kube-system -o yaml`")


def _egress_nodes(inventory: Inventory, hc: HostedCluster, endpoint: Endpoint) -> tuple[str, Hop | None]:
    """The destination node of an egress flow's target (a proxy at its host and port) and
    the ClusterIP Service it is sent through, if any (the cluster's DNS Service, the
    management API server's ``default/kubernetes``)."""
    cluster = hc.obj.cluster
    if endpoint.named == PROXY and (found := proxy_endpoint(hc.proxy)) is not None:
        return f"proxy {found[0]}:{found[1]}", None
    if endpoint.named == DNS:
        ports, _note, dns = dns_pods(inventory, cluster)
        if len(dns) == 1:  # which DNS the cluster runs is known
            service = OPENSHIFT_DNS if dns[0].namespace == OPENSHIFT_DNS[0] else KUBE_DNS
            return DNS, cluster_ip_hop(inventory, cluster, *service, 53,
                                       f"the DNS pods on {' or '.join(map(str, ports))}")
        return DNS, None
    if endpoint.named == MANAGEMENT_KAS:
        return MANAGEMENT_KAS, cluster_ip_hop(inventory, cluster, "default", "kubernetes", 443,
                                              "the management API server's endpoints")
    return endpoint.named, None


def _out(inventory: Inventory, graph: ReachabilityGraph, hc: HostedCluster, flow: Flow, name: str,
         endpoint: Endpoint) -> list[tuple[str, int, bool, tuple[Evidence, ...], str, str]]:
    """(protocol, port, allowed?, evidence, note, summary) for each connection the endpoint
    needs; summary '' lets the evidence speak."""
    cluster = hc.obj.cluster
    if endpoint.named == DNS:
        ports, note, dns = dns_pods(inventory, cluster)
        # only rules whose peers select the DNS pods count, in every tier: a rule towards
        # openshift-dns lets nothing through to a vanilla cluster's kube-system/kube-dns
        isolated, opened = graph.egress_to_pods(name, dns)
        out: list[tuple[str, int, bool, tuple[Evidence, ...], str, str]] = []
        protocols = flow.dns_protocols if flow.check == "worker-egress" else flow.protocols
        for protocol in protocols:
            opening = next((p for p in ports if opened.allows(protocol, p)), None)
            if opening is not None:  # most of a fleet's workloads: no blocker to name
                out.append((protocol, opening, True, (), note if isolated else "",
                            f"{_isolated_by(())} opens {protocol} {opening} to the DNS pods"
                            if isolated else ""))
                continue
            port, allows = ports[0], False
            pods_text = " or ".join(p.namespace + (
                f" ({', '.join(f'{k}={v}' for k, v in p.labels.items())})" if p.labels else "")
                for p in dns)
            # the blocking policy's place is asked only for a blocked connection (fleets
            # have thousands of control-plane workloads whose DNS is open)
            blocker = graph.egress_to_pods_evidence(
                name, dns, protocol, port, f"the DNS pods in {pods_text}")
            evidence = (blocker,) if blocker is not None else ()
            shown = " or ".join(map(str, ports))
            who = _isolated_by(evidence)
            summary = (f"{who} opens no {protocol} on {shown} to the DNS pods in {pods_text}; "
                       f"to them it opens {opened if opened else 'nothing'}")
            if blocker is not None and " is isolated by " not in blocker.summary:
                summary = blocker.summary  # an admin tier denies: its rule says so
            out.append((protocol, port, allows, evidence, note if isolated else "",
                        summary if isolated else ""))
        return out
    target_port: int | None = endpoint.port_for(hc)
    space: IPSpace | None = None
    note = ""
    if endpoint.named == PROXY:
        found = proxy_endpoint(hc.proxy)
        if found is None:
            return []  # evaluate_flow said not applicable
        host, target_port, where = found
        space = address_space(host)
        if space is None:
            note = (f"the proxy {host} ({where}) is a host name: judged as egress to any outside "
                    f"address on {target_port}")
    if target_port is None:
        return []  # outside and management-kas targets carry a port (flows.yaml)
    if endpoint.named == MANAGEMENT_KAS:
        space = management_kas_endpoints(inventory, cluster)
        if space is None:
            note = ("the management API server's endpoints (default/kubernetes Endpoints) are not "
                    "in the input: judged as egress to any outside address")
    out = []
    for protocol in flow.protocols:
        egress = graph.egress_outside(name, target_port, protocol)
        allows = egress.allowed.contains(space) if space is not None else bool(egress.allowed)
        out.append((protocol, target_port, allows, egress.evidence, note, ""))
    return out


def _isolated_by(evidence: tuple[Evidence, ...]) -> str:
    """"egress isolated by NetworkPolicy ns/a, ns/b" from the graph's egress evidence."""
    marker = " is isolated by "
    for e in evidence:
        if marker in e.summary:
            return f"egress isolated by NetworkPolicy {e.summary.split(marker)[-1].split(' and ')[0]}"
    return "egress"


@dataclass
class FlowIndex:
    """Every flow result asked so far, by HostedCluster, with the path graph they share."""

    paths: PathGraph = field(default_factory=PathGraph)
    results: dict[tuple[str, str, str], list[FlowResult]] = field(default_factory=dict)
    current: frozenset[str] = frozenset()  # the flows of the rule being judged

    def of(self, inventory: Inventory, graph: ReachabilityGraph, hc: HostedCluster, flow: Flow,
           worker_cidrs: list[str] | tuple[str, ...]) -> list[FlowResult]:
        key = (hc.obj.cluster, hc.obj.ref, flow.id)
        if key not in self.results:
            self.results[key] = evaluate_flow(inventory, graph, self.paths, hc, flow, worker_cidrs)
        return self.results[key]
