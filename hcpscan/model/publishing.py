"""What a HostedCluster's spec alone says about the ways into its control plane.

A GitOps tree holds the HostedCluster and its NodePools, never the HCP namespace
HyperShift renders from them. Its ``spec.services[].servicePublishingStrategy``
still decides how each endpoint is offered (DOMAIN.md §2-3; hypershift
control-plane-operator ``kas``/``konnectivity``/``ignitionserver`` services and
``network_policies.go``; support/util ``LabelHCPRoutes``):

* ``NodePort``: a NodePort Service on every management-cluster node, on
  ``nodePort.port`` when set, else one the API server allocates from 30000-32767.
  HyperShift's ``nodeport-*`` NetworkPolicies admit any source to it.
* ``LoadBalancer``: a LoadBalancer Service. For the API server its source ranges are
  ``spec.networking.apiServer.allowedCIDRBlocks`` (none: every address); the other
  services get none. Not on a private cluster, whose API server stays a ClusterIP.
* ``Route``: a Route through a router on 443. The management cluster's default
  router (IngressController ``openshift-ingress-operator/default``) serves it unless
  HyperShift labels the HCP's routes for its own router: when the API server is
  itself a Route with a hostname, and on AWS, Azure and GCP unless the cluster is
  public only. How the default router is offered is its IngressController's
  ``endpointPublishingStrategy``.

The NetworkPolicy layer never narrows these (HyperShift's own policies admit any
source on the published ports), so the Service or router layer and the perimeter
in front of the nodes decide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hcpscan.inventory import Inventory, K8sObject
from hcpscan.model.hostedcluster import HostedCluster, Publishing
from hcpscan.model.ingress import (
    DEFAULT_ROUTER,
    INGRESS_CONTROLLER,
    INGRESS_OPERATOR_NAMESPACE,
    router_on_machines,
)
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.networks import cidrs
from hcpscan.model.ports import NODE_PORT_RANGE

ROUTER_PORT = 443
# The pod port each published service leads to (kas: the HostedCluster's API server port).
SERVICE_POD_PORTS: dict[str, tuple[int | str, ...]] = {
    "Ignition": (8443, 9090), "Konnectivity": (8091,), "APIServer": ("kas",), "OAuthServer": (6443,),
}
# The port a LoadBalancer Service of the service listens on (kas: the API server port).
_LB_PORTS: dict[str, int | str] = {"Konnectivity": 8091, "APIServer": "kas", "OAuthServer": 443}
# Where a platform says whether the cluster is public: (platform key, field, values with
# public endpoints, values with public endpoints only). "" is the field left out.
_ACCESS = {"AWS": ("aws", "endpointAccess", ("Public", "PublicAndPrivate", ""), ("Public", "")),
           "Azure": ("azure", "topology", ("Public", "PublicAndPrivate", ""), ("Public", "")),
           "GCP": ("gcp", "endpointAccess", ("PublicAndPrivate",), ())}


@dataclass(frozen=True, slots=True)
class DeclaredWay:
    """How one service of a HostedCluster is offered outside the management cluster."""

    service: str
    kind: str  # NodePort | LoadBalancer | Route
    field: str  # the field a finding points at
    entry: tuple[int, int]  # the port(s) at the perimeter: one port, or the node-port range
    sources: IPSpace  # what the Service or router admits, before the perimeter
    evidence: tuple[str, ...]
    # a Route through a router on the machines (HostNetwork, NodePortService): how its
    # traffic meets the machines' perimeter (model.ingress ON_HOST / ON_NODE_PORT)
    front: str = ""

    @property
    def gate(self) -> str:
        """The way the perimeter sees: the router's way onto the machines, else ``kind``."""
        return self.front or self.kind

    @property
    def entry_text(self) -> str:
        first, last = self.entry
        return str(first) if first == last else f"{first}-{last}"


@dataclass(frozen=True, slots=True)
class Undeclared:
    """The input does not say how the service is offered: what is missing, and where to get it."""

    reason: str


@dataclass(frozen=True, slots=True)
class Unpublished:
    """The service is not offered outside the cluster at all."""

    why: str


def declared_way(inventory: Inventory, hc: HostedCluster, service: str,
                 router: K8sObject | None = None) -> DeclaredWay | Undeclared | Unpublished:
    """How ``service`` is offered from outside, from the HostedCluster alone; ``router``:
    the IngressController that serves its Routes when it is not the default one (a shard,
    chosen by the analysis stage from the controllers' selectors)."""
    strategy = hc.publishing.get(service)
    if strategy is None:
        return Undeclared(f"spec.services of {hc.label} has no "
                          f"{service} entry")
    said = f"{strategy.field}: {service} is published as {strategy.type}"
    if strategy.type == "NodePort":
        port = strategy.node_port
        entry = (port, port) if port else NODE_PORT_RANGE
        where = f"node port {port}" if port else "a node port the API server allocates from 30000-32767"
        return DeclaredWay(service, "NodePort", strategy.field, entry, IPSpace.everything(), (
            f"{said}: HyperShift opens {where} on every management-cluster node, and its "
            "NodePort NetworkPolicies admit any source",))
    if strategy.type == "LoadBalancer":
        return _load_balancer(hc, strategy, said)
    if strategy.type == "Route":
        return _route(inventory, hc, strategy, said, router)
    return Undeclared(f"{said}, which hcpscan does not model")


def _load_balancer(hc: HostedCluster, strategy: Publishing, said: str) -> DeclaredWay | Undeclared:
    if not is_public(hc):
        return Undeclared(f"{said} on a private cluster ({private_field(hc)}): it is reached "
                          "through the platform's private endpoint, which the manifests do not "
                          "describe")
    port = _LB_PORTS.get(strategy.service)
    if port is None:
        return Undeclared(f"{said}, which HyperShift does not offer for {strategy.service}")
    port = hc.kas_service_port if port == "kas" else int(port)
    if strategy.service == "APIServer" and hc.allowed_cidrs:
        ranges = cidrs(list(hc.allowed_cidrs), key=None)
        return DeclaredWay(strategy.service, "LoadBalancer", "spec.networking.apiServer.allowedCIDRBlocks",
                           (port, port), IPSpace.from_cidrs(ranges), (
                               f"{said}: a LoadBalancer Service on port {port} whose source ranges "
                               f"are spec.networking.apiServer.allowedCIDRBlocks "
                               f"({', '.join(ranges)})",))
    limit = ("no spec.networking.apiServer.allowedCIDRBlocks, so no source range"
             if strategy.service == "APIServer" else "no source range")
    return DeclaredWay(strategy.service, "LoadBalancer", strategy.field, (port, port),
                       IPSpace.everything(), (f"{said}: a LoadBalancer Service on port {port} with "
                                              f"{limit}",))


def _route(inventory: Inventory, hc: HostedCluster, strategy: Publishing, said: str,
           router: K8sObject | None = None) -> DeclaredWay | Undeclared | Unpublished:
    own = own_router_reason(hc)
    if own:
        return Undeclared(f"{said}, served by the hosted control plane's own router ({own}): "
                          f"its Service router in {hc.control_plane_namespace} is not in the input "
                          f"(`oc get service router -n {hc.control_plane_namespace} -o yaml`)")
    controller = router or inventory.get(INGRESS_CONTROLLER, INGRESS_OPERATOR_NAMESPACE,
                                         DEFAULT_ROUTER, hc.obj.cluster)
    if controller is None:
        return Undeclared(f"{said}, served by the management cluster's default router; how that "
                          f"router is offered is in IngressController {INGRESS_OPERATOR_NAMESPACE}/"
                          f"{DEFAULT_ROUTER}, not in the input (`oc get ingresscontroller "
                          f"{DEFAULT_ROUTER} -n {INGRESS_OPERATOR_NAMESPACE} -o yaml`)")
    return _router(inventory, controller, strategy, said)


def _router(inventory: Inventory, controller: K8sObject, published: Publishing,
            said: str) -> DeclaredWay | Undeclared | Unpublished:
    strategy = _mapping(controller.get("spec.endpointPublishingStrategy")) or \
        _mapping(controller.get("status.endpointPublishingStrategy"))
    kind = strategy.get("type")
    where = f"IngressController {controller.namespace}/{controller.name}"
    serves = ("the default router serves it" if controller.name == DEFAULT_ROUTER else
              f"router shard {controller.name} serves it (its selectors pick the HCP's Routes)")
    service, field = published.service, published.field
    if kind == "Private":
        return Unpublished(f"{said}; {where} is published Private: no way in from outside")
    if kind == "LoadBalancerService":
        lb = _mapping(strategy.get("loadBalancer"))
        if lb.get("scope") == "Internal":
            return Undeclared(f"{said}; {where} is an internal load balancer (scope Internal), "
                              "reached from the cloud network, which the manifests do not describe")
        ranges = cidrs(lb.get("allowedSourceRanges"), key=None)
        sources = IPSpace.from_cidrs(ranges) if ranges else IPSpace.everything()
        limit = f"allowedSourceRanges {', '.join(ranges)}" if ranges else "no allowedSourceRanges"
        return DeclaredWay(service, "Route", field, (ROUTER_PORT, ROUTER_PORT), sources, (
            f"{said}; {serves}: {where} is a LoadBalancerService "
            f"(scope {lb.get('scope') or 'External'}) with {limit}",))
    machines = router_on_machines(inventory, controller)
    if machines is not None:  # HostNetwork or NodePortService: behind the machines' perimeter
        port = machines.https
        return DeclaredWay(service, "Route", field, (port, port) if port else NODE_PORT_RANGE,
                           IPSpace.everything(), (f"{said}; {serves}: {machines.said}",),
                           machines.front)
    return Undeclared(f"{said}; {where} states no endpointPublishingStrategy type")


def is_public(hc: HostedCluster) -> bool:
    """Whether the cluster has public endpoints (hypershift IsPublicHC)."""
    access = private_access(hc)
    return access is None or access[1] in _ACCESS[hc.platform][2]


def private_access(hc: HostedCluster) -> tuple[str, str] | None:
    """(field, value) of the platform's endpoint access setting; None off AWS/Azure/GCP."""
    found = _ACCESS.get(hc.platform)
    if found is None:
        return None
    key, name = found[0], found[1]
    value = _mapping(hc.obj.get(f"spec.platform.{key}")).get(name)
    return f"spec.platform.{key}.{name}", str(value or "")


def private_field(hc: HostedCluster) -> str:
    access = private_access(hc)
    return f"{access[0]}: {access[1]}" if access else "spec.platform"


def own_router_reason(hc: HostedCluster) -> str:
    """Why HyperShift labels the HCP's routes for its own router ('' when it does not)."""
    kas = hc.publishing.get("APIServer")
    if kas is not None and kas.type == "Route" and kas.route_hostname:
        return f"{kas.field} is a Route with hostname {kas.route_hostname}"
    access = private_access(hc)
    if access is not None and access[1] not in _ACCESS[hc.platform][3]:
        return f"{access[0]} is {access[1] or 'unset'}"
    return ""


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
