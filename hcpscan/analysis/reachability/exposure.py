"""Ways in from outside the cluster besides the pod network: Services and Routes.

* a ``NodePort`` Service (and a ``LoadBalancer`` one, which allocates node
  ports too) is reachable on every node address at its ``nodePort``;
* a ``LoadBalancer`` Service is reachable at its ``port`` from
  its source ranges (``model.sourceranges``: the field, else the legacy annotation),
  or from anywhere when neither sets any; an
  internal one (the cloud provider's annotation: a Private HostedCluster's
  ``kube-apiserver-private``, the private router) from private addresses only;
* an OpenShift ``Route`` reaches the pods of its Service through the router
  (ingress controller) on 443, or 80 without TLS; the pods then see the
  router as the client, so their NetworkPolicy must admit the router's
  namespace, not the outside address;
* a Kubernetes ``Ingress`` reaches the target port of the Service port each
  backend names through an ingress controller the same way (OpenShift's
  router serves Ingresses too).

None of these bypasses NetworkPolicy: traffic still arrives at a pod port and
is subject to the pod's ingress policies. Also collected here: the networks
the inputs declare (cluster, service and machine networks), which take part
in cutting the external address space.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hcpscan.analysis.reachability.endpoints import EndpointClass
from hcpscan.analysis.reachability.perimeter import load_balancer_way
from hcpscan.analysis.reachability.routers import route_bounds, route_on_machines, route_sources
from hcpscan.analysis.reachability.selectors import LabelSelector
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import MANAGEMENT, K8sObject, namespace_of
from hcpscan.model.clusters import openshift_networks
from hcpscan.model.hostedcluster import hosted_cluster
from hcpscan.model.ingress import ROUTER_NAMESPACE
from hcpscan.model.ipspace import PRIVATE_ADDRESSES, IPSpace
from hcpscan.model.ports import normalise_protocol
from hcpscan.model.securitygroups import load_balancer_groups
from hcpscan.model.sourceranges import load_balancer_source_ranges

ROUTER_NAMESPACE_LABELS = {
    "kubernetes.io/metadata.name": ROUTER_NAMESPACE,
    "network.openshift.io/policy-group": "ingress",
    "policy-group.network.openshift.io/ingress": "",
}
ROUTER_POD_LABELS = {"ingresscontroller.operator.openshift.io/deployment-ingresscontroller": "default"}
NGINX_NAMESPACE = "ingress-nginx"


@dataclass(frozen=True, slots=True)
class IngressController:
    """An ingress controller the pods behind Routes/Ingresses see as their client:
    where it runs, its pods' labels, and which kinds it serves."""

    namespace: str
    pod_labels: tuple[tuple[str, str], ...]
    namespace_labels: tuple[tuple[str, str], ...]  # when the input lacks its Namespace
    serves: tuple[str, ...]


# OpenShift's router serves Routes, and Ingresses too (it turns them into Routes).
ROUTER = IngressController(ROUTER_NAMESPACE, tuple(ROUTER_POD_LABELS.items()),
                           tuple(ROUTER_NAMESPACE_LABELS.items()), ("Route", "Ingress"))
# The ingress-nginx project's controller, as its manifests install it.
NGINX = IngressController(
    NGINX_NAMESPACE,
    (("app.kubernetes.io/component", "controller"), ("app.kubernetes.io/name", "ingress-nginx")),
    (("app.kubernetes.io/name", "ingress-nginx"), ("kubernetes.io/metadata.name", NGINX_NAMESPACE)),
    ("Ingress",))


def add_controller(inventory: Inventory, cluster: str, controller: IngressController,
                   classes: list[EndpointClass], namespaces: dict[str, dict[str, str]]) -> int:
    """Append a virtual endpoint class for ``controller`` (its namespace's labels from the
    input when it holds the Namespace); returns its index."""
    index = len(classes)
    if controller.namespace not in namespaces:
        ns = inventory.get("Namespace", "", controller.namespace, cluster)
        labels = (dict(controller.namespace_labels) if ns is None
                  else {str(k): str(v) for k, v in ns.labels.items()})
        labels.setdefault("kubernetes.io/metadata.name", controller.namespace)
        namespaces[controller.namespace] = labels
    classes.append(EndpointClass(index, cluster, controller.namespace, dict(controller.pod_labels),
                                 namespaces[controller.namespace], (), False))
    return index


def has_ways_through_controllers(inventory: Inventory, cluster: str) -> bool:
    """Routes or Ingresses in the cluster: something an ingress controller sends to."""
    return any(o.cluster == cluster for o in inventory.of_kind("Route", "Ingress"))


@dataclass(frozen=True, slots=True)
class ExposurePath:
    """One way from outside to one pod port of a class."""

    via: str  # NodePort | LoadBalancer | Route | Ingress
    obj: K8sObject
    field: str
    protocol: str
    pod_port: int
    entry_port: int | None  # the port at the perimeter; None = an unallocated node port
    sources: IPSpace
    through_router: bool = False
    service: str = ""  # the Service a Route or Ingress names
    router: str = ""  # the IngressControllers serving a Route, when the input holds them
    # the object and field that bound ``sources`` (loadBalancerSourceRanges, the router's
    # allowedSourceRanges): where a hop that keeps a source out is written
    bounded_by: tuple[K8sObject, str] | None = None
    # a Route through a router on the machines (HostNetwork, NodePortService): how its
    # traffic meets their perimeter (model.ingress ON_HOST / ON_NODE_PORT) and at which port
    front: str = ""
    front_port: int | None = None
    # what keeps ``sources`` from being read exactly (a source range that is no CIDR)
    note: str = ""

    @property
    def gate_via(self) -> str:
        """The way the perimeter sees this path take."""
        return self.front or self.via

    @property
    def gate_port(self) -> int | None:
        """The port the perimeter sees (None: a node port not allocated or not given)."""
        return self.front_port if self.front else self.entry_port

    @property
    def name(self) -> str:
        kind = self.via if self.via in ("Route", "Ingress") else "Service"
        return f"{kind} {namespace_of(self.obj)}/{self.obj.name}"

    @property
    def label(self) -> str:
        """How a path is named in answers: ``NodePort Service ns/x``, ``Route ns/x``."""
        return self.name if self.via in ("Route", "Ingress") else f"{self.via} {self.name}"

    def describe(self) -> str:
        entry = self.entry_port if self.entry_port is not None else "an allocated node port"
        if self.via == "NodePort":
            return f"{self.name} type NodePort: every node address, port {entry} -> pod port {self.pod_port}"
        if self.via == "LoadBalancer":
            who = "anywhere" if self.sources == IPSpace.everything() else str(self.sources)
            said = (f"; read as every address: {self.note}" if self.note else "")
            return (f"{self.name} type LoadBalancer: port {entry} from {who} -> pod port "
                    f"{self.pod_port}{said}")
        via = f"the router ({self.router})" if self.router else "the router"
        if self.front:
            at = self.front_port if self.front_port is not None else "a node port not in the input"
            return (f"{self.name} through {via} on {entry} (on the machines, port {at}) -> pod port "
                    f"{self.pod_port}")
        return f"{self.name} through {via} on {entry} -> pod port {self.pod_port}"


def declared_networks(inventory: Inventory, cluster: str) -> dict[str, list[IPSpace]]:
    """Cluster, service and machine networks of every HostedCluster and HostedControlPlane
    of ``cluster`` and of its config.openshift.io Network, as the model reads them."""
    out: dict[str, list[IPSpace]] = {"cluster": [], "service": [], "machine": []}
    for obj in inventory.of_kind("HostedCluster", "HostedControlPlane"):
        if obj.cluster == cluster:  # both carry spec.networking in the same shape
            hc = hosted_cluster(obj)
            _add(out["cluster"], hc.cluster_networks)
            _add(out["service"], hc.service_networks)
            _add(out["machine"], hc.machine_networks)
    nets = openshift_networks(inventory, cluster)
    if nets is not None:
        _add(out["cluster"], nets.pod)
        _add(out["service"], nets.service)
        _add(out["machine"], nets.machine)
    return out


def _add(target: list[IPSpace], cidrs: tuple[str, ...]) -> None:
    target.extend(IPSpace.from_cidr(c) for c in cidrs)  # normalised by the model


def service_selector(service: K8sObject) -> LabelSelector | None:
    """The pods a Service sends to, or None: without a selector its endpoints are
    managed by hand, not by labels."""
    selector = service.get("spec.selector")
    if not isinstance(selector, dict) or not selector:
        return None
    return LabelSelector.parse({"matchLabels": selector})


def target_port(entry: dict, klass: EndpointClass, protocol: str) -> int | None:
    target = entry.get("targetPort", entry.get("port"))
    if isinstance(target, bool):
        return None
    if isinstance(target, int):
        return target
    if isinstance(target, str):
        if target.isdigit():
            return int(target)
        return klass.resolve_named_port(target, protocol)
    return None


@dataclass(slots=True)
class _WaysIn:
    """NodePort/LoadBalancer Services (with their type) and Routes (with the Service they
    name) by (cluster, namespace), in inventory order, each with the selector of its
    Service: read once, as every endpoint class of a namespace asks for the same."""

    services: dict[tuple[str, str], list[tuple[K8sObject, str, LabelSelector | None]]]
    routes: dict[tuple[str, str], list[tuple[K8sObject, K8sObject, LabelSelector | None]]]
    # Kubernetes Ingresses: (ingress, field of the backend, Service, its selector, port ref)
    ingresses: dict[tuple[str, str], list[tuple[K8sObject, str, K8sObject, LabelSelector | None,
                                                 int | str]]] = field(default_factory=dict)

    @classmethod
    def read(cls, inventory: Inventory) -> _WaysIn:
        services: dict[tuple[str, str], list[tuple[K8sObject, str, LabelSelector | None]]] = {}
        for svc in inventory.of_kind("Service"):
            kind = svc.get("spec.type") or "ClusterIP"
            if kind in ("NodePort", "LoadBalancer"):
                services.setdefault((svc.cluster, namespace_of(svc)), []).append(
                    (svc, kind, service_selector(svc)))
        routes: dict[tuple[str, str], list[tuple[K8sObject, K8sObject, LabelSelector | None]]] = {}
        for route in inventory.of_kind("Route"):
            if route.get("spec.to.kind", "Service") != "Service":
                continue
            backend = _service(inventory, route, str(route.get("spec.to.name") or ""))
            if backend is not None:
                routes.setdefault((route.cluster, namespace_of(route)), []).append(
                    (route, backend, service_selector(backend)))
        return cls(services, routes, _read_ingresses(inventory))


def _service(inventory: Inventory, referrer: K8sObject, name: str) -> K8sObject | None:
    """The Service a Route or Ingress names, in its namespace (a Service written without
    a namespace is in ``default``, as ``kubectl apply`` puts it)."""
    return inventory.get_namespaced("Service", namespace_of(referrer), name, referrer.cluster)


def _read_ingresses(inventory: Inventory) -> dict[tuple[str, str], list[tuple[
        K8sObject, str, K8sObject, LabelSelector | None, int | str]]]:
    out: dict[tuple[str, str], list[tuple[K8sObject, str, K8sObject, LabelSelector | None,
                                          int | str]]] = {}
    for ingress in inventory.of_kind("Ingress"):
        if ingress.group != "networking.k8s.io":
            continue
        for field_path, backend in _ingress_backends(ingress):
            service = backend.get("service") if isinstance(backend, dict) else None
            if not isinstance(service, dict) or not isinstance(service.get("port"), dict):
                continue  # a resource backend sends to no pod
            port = service["port"].get("number", service["port"].get("name"))
            svc = _service(inventory, ingress, str(service.get("name") or ""))
            if svc is not None and isinstance(port, (int, str)) and not isinstance(port, bool):
                out.setdefault((ingress.cluster, namespace_of(ingress)), []).append(
                    (ingress, field_path, svc, service_selector(svc), port))
    return out


def _ingress_backends(ingress: K8sObject) -> list[tuple[str, Any]]:
    """(field, backend) of the default backend and of every rule's paths."""
    found: list[tuple[str, Any]] = []
    if ingress.get("spec.defaultBackend") is not None:
        found.append(("spec.defaultBackend", ingress.get("spec.defaultBackend")))
    for i, rule in enumerate(ingress.get("spec.rules") or []):
        paths = rule.get("http", {}).get("paths") if isinstance(rule, dict) else None
        for j, path in enumerate(paths if isinstance(paths, list) else []):
            if isinstance(path, dict):
                found.append((f"spec.rules[{i}].http.paths[{j}].backend", path.get("backend")))
    return found


def _ways_in(inventory: Inventory) -> _WaysIn:
    return inventory.derived("reachability.ways_in", _WaysIn.read)


# The annotations by which a cloud provider gives a LoadBalancer a private address (the
# VPC / VNet and what is peered with it reach it, the internet does not), and the values
# that mean internal; None: any value but "false".
INTERNAL_LB_ANNOTATIONS: dict[str, tuple[str, ...] | None] = {
    "service.beta.kubernetes.io/aws-load-balancer-internal": None,  # "true", legacy "0.0.0.0/0"
    "service.beta.kubernetes.io/aws-load-balancer-scheme": ("internal",),
    "service.beta.kubernetes.io/azure-load-balancer-internal": ("true",),
    "networking.gke.io/load-balancer-type": ("internal",),
    "cloud.google.com/load-balancer-type": ("internal",),
    "service.kubernetes.io/ibm-load-balancer-cloud-provider-ip-type": ("private",),
    "service.beta.kubernetes.io/openstack-internal-load-balancer": ("true",),
}


def internal_load_balancer(svc: K8sObject) -> str:
    """The annotation that makes ``svc``'s load balancer internal, or ''."""
    for key, values in INTERNAL_LB_ANNOTATIONS.items():
        value = svc.annotations.get(key)
        if not isinstance(value, str) or not value.strip():
            continue
        value = value.strip().lower()
        if (values is None and value != "false") or (values is not None and value in values):
            return key
    return ""


def service_paths(inventory: Inventory, klass: EndpointClass) -> list[ExposurePath]:
    paths: list[ExposurePath] = []
    for svc, kind, selector in _ways_in(inventory).services.get((klass.cluster, klass.namespace), ()):
        if selector is None or not selector.matches(klass.labels):
            continue
        ranges = load_balancer_source_ranges(svc)
        # ranges holding an entry that is no CIDR bound nothing hcpscan can know (the API
        # server refuses them): read as every address, the entry named on the path
        lb_sources = ranges.space() if not ranges.malformed else IPSpace.everything()
        bounded_by = (svc, ranges.path) if ranges.declared and not ranges.malformed else None
        if internal_load_balancer(svc):
            lb_sources = lb_sources.intersection(IPSpace.from_cidrs(PRIVATE_ADDRESSES))
            bounded_by = bounded_by or (svc, "metadata.annotations")
        node_ports = svc.get("spec.allocateLoadBalancerNodePorts") is not False or kind == "NodePort"
        # annotated AWS security groups of its load balancer: they, not the source ranges
        # alone, say who gets in (the ranges stay a rule of theirs beside extra groups)
        annotated = load_balancer_groups(svc) if kind == "LoadBalancer" else None
        own_groups = (load_balancer_way(namespace_of(svc), svc.name)
                      if annotated is not None and annotated.names and svc.cluster == MANAGEMENT else "")
        groups_sources = (IPSpace.everything() if not internal_load_balancer(svc)
                          else IPSpace.from_cidrs(PRIVATE_ADDRESSES))
        for i, entry in enumerate(svc.get("spec.ports") or []):
            if not isinstance(entry, dict):
                continue
            protocol = normalise_protocol(entry.get("protocol"))
            pod_port = target_port(entry, klass, protocol)
            if pod_port is None:
                continue
            field = f"spec.ports[{i}]"
            node_port = entry.get("nodePort") if isinstance(entry.get("nodePort"), int) else None
            if node_ports:
                paths.append(ExposurePath("NodePort", svc, field, protocol, pod_port, node_port,
                                          IPSpace.everything()))
            if kind == "LoadBalancer" and isinstance(entry.get("port"), int):
                if own_groups:  # its load balancer's own groups decide (a perimeter of their own)
                    paths.append(ExposurePath("LoadBalancer", svc, field, protocol, pod_port,
                                              entry["port"], groups_sources, front=own_groups,
                                              front_port=entry["port"]))
                    continue
                paths.append(ExposurePath("LoadBalancer", svc, field, protocol, pod_port,
                                          entry["port"], lb_sources, bounded_by=bounded_by,
                                          note=ranges.malformed_text()))
    return paths


def route_paths(inventory: Inventory, klass: EndpointClass) -> list[ExposurePath]:
    paths: list[ExposurePath] = []
    for route, svc, selector in _ways_in(inventory).routes.get((klass.cluster, klass.namespace), ()):
        if selector is None or not selector.matches(klass.labels):
            continue
        served = route_sources(inventory, route)  # the routers that serve it and their ranges
        if served is not None and not served[0]:
            continue  # only Private routers serve it: no way in from outside
        wanted = route.get("spec.port.targetPort")
        entry_port = 443 if route.get("spec.tls") else 80
        machines = route_on_machines(inventory, route)
        front, front_port = "", None
        if machines is not None:
            front = machines.front
            front_port = machines.https if entry_port == 443 else machines.http
        for entry in svc.get("spec.ports") or []:
            if not isinstance(entry, dict):
                continue
            protocol = normalise_protocol(entry.get("protocol"))
            pod_port = target_port(entry, klass, protocol)
            if pod_port is None or protocol != "TCP":
                continue
            if wanted is not None and wanted not in (entry.get("name"), entry.get("targetPort"),
                                                     pod_port):
                continue
            paths.append(ExposurePath("Route", route, "spec.to", protocol, pod_port, entry_port,
                                      IPSpace.everything() if served is None else served[0],
                                      through_router=True, service=svc.name,
                                      router="" if served is None else served[1],
                                      bounded_by=route_bounds(inventory, route),
                                      front=front, front_port=front_port))
    return paths


def ingress_paths(inventory: Inventory, klass: EndpointClass) -> list[ExposurePath]:
    """Kubernetes Ingress backends that send to ``klass``: through an ingress controller
    to the target port of the Service port the backend names."""
    paths: list[ExposurePath] = []
    for ingress, field_path, svc, selector, port in _ways_in(inventory).ingresses.get(
            (klass.cluster, klass.namespace), ()):
        if selector is None or not selector.matches(klass.labels):
            continue
        for entry in svc.get("spec.ports") or []:
            if not isinstance(entry, dict) or port not in (entry.get("port"), entry.get("name")):
                continue
            protocol = normalise_protocol(entry.get("protocol"))
            pod_port = target_port(entry, klass, protocol)
            if pod_port is None or protocol != "TCP":
                continue
            entry_port = 443 if ingress.get("spec.tls") else 80
            paths.append(ExposurePath("Ingress", ingress, field_path, protocol, pod_port,
                                      entry_port, IPSpace.everything(), through_router=True,
                                      service=svc.name))
    return paths


def malformed_source_ranges(inventory: Inventory) -> list[Diagnostic]:
    """A warning at each LoadBalancer Service whose source ranges hold an entry that is not
    a CIDR: its way in is read as open to every address, and the user is told why."""
    out: list[Diagnostic] = []
    for svc in inventory.of_kind("Service"):
        if svc.get("spec.type") != "LoadBalancer":
            continue
        ranges = load_balancer_source_ranges(svc)
        if not ranges.malformed:
            continue
        loc = inventory.locate(svc, ranges.path)
        out.append(Diagnostic(
            loc.path, loc.line, f"Service {namespace_of(svc)}/{svc.name}: {ranges.malformed_text()}; "
            "hcpscan reads its load balancer as open to every address", "warning",
            "write each range as address/prefix (10.0.0.0/8), comma-separated in the annotation"))
    return out


def unrouted_backends(inventory: Inventory) -> list[Diagnostic]:
    """Every Route and Ingress backend that sends to no pod port, each named with what to
    do: a Service the input lacks, or a port of the Service it does not have (an Ingress
    ``port.number``/``port.name``, a Route ``spec.port.targetPort``). Kubernetes routes
    nothing there, so the list has no ``{ingress-controller}`` line for it, while
    netpol-analyzer matches such a number against the Service's targetPorts."""
    out: list[Diagnostic] = []
    for ingress in inventory.of_kind("Ingress"):
        if ingress.group != "networking.k8s.io":
            continue
        for field_path, backend in _ingress_backends(ingress):
            service = backend.get("service") if isinstance(backend, dict) else None
            if not isinstance(service, dict) or not isinstance(service.get("port"), dict):
                continue
            port = service["port"].get("number", service["port"].get("name"))
            name = str(service.get("name") or "")
            out += _check_backend(inventory, ingress, f"{field_path}.service", name, port,
                                  lambda e, p: p in (e.get("port"), e.get("name")))
    for route in inventory.of_kind("Route"):
        if route.get("spec.to.kind", "Service") != "Service":
            continue
        wanted = route.get("spec.port.targetPort")
        out += _check_backend(inventory, route, "spec.to", str(route.get("spec.to.name") or ""),
                              wanted, _route_port_matches)
    return out


def _route_port_matches(entry: dict[str, Any], port: Any) -> bool:
    """May a Route's targetPort mean this Service port? Its name, its targetPort (a named
    targetPort resolves per pod, so any number may be it)."""
    target = entry.get("targetPort", entry.get("port"))
    if str(port) in (str(entry.get("name")), str(target)):
        return True
    return isinstance(port, int) and isinstance(target, str) and not target.isdigit()


def _check_backend(inventory: Inventory, obj: K8sObject, field_path: str, name: str,
                   port: Any, matches: Any) -> list[Diagnostic]:
    ref = f"{obj.kind} {namespace_of(obj)}/{obj.name}"
    svc = _service(inventory, obj, name)
    if svc is None:
        loc = inventory.locate(obj, field_path)
        return [Diagnostic(
            loc.path, loc.line, f"{ref} sends to Service {namespace_of(obj)}/{name}, which is not "
            "in the input: no {ingress-controller} line is listed for it", "warning",
            f"add the Service to the input (oc get service -n {namespace_of(obj)} {name} -o yaml), "
            "or fix the name")]
    if port is None or isinstance(port, bool):
        return []
    entries = [e for e in svc.get("spec.ports") or [] if isinstance(e, dict)]
    if any(matches(e, port) for e in entries):
        return []
    loc = inventory.locate(obj, field_path)
    have = ", ".join(f"{e.get('port')}" + (f" ({e['name']})" if e.get("name") else "")
                     + (f" -> {e['targetPort']}" if "targetPort" in e else "") for e in entries)
    return [Diagnostic(
        loc.path, loc.line, f"{ref} names port {port} of Service {namespace_of(svc)}/{svc.name}, "
        f"which has no such port (its ports: {have or 'none'}): Kubernetes routes nothing there, "
        "so no {ingress-controller} line is listed for it (netpol-analyzer matches the port "
        "against the Service's targetPorts and lists one)", "warning",
        "name one of the Service's ports (the `port` or its name; a Route's "
        "spec.port.targetPort: the port's name or targetPort)")]
