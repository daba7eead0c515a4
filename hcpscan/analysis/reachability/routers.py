"""Which management-cluster router serves a HostedCluster's Routes: the default one or a shard.

An IngressController admits the Routes whose namespace its ``spec.namespaceSelector``
selects and whose labels its ``spec.routeSelector`` selects (both empty: every Route).
HyperShift labels the Routes of a control plane ``hypershift.openshift.io/hosted-control-plane:
<HCP namespace>`` and the HCP namespace ``hypershift.openshift.io/hosted-control-plane: "true"``
(used when the Namespace object is not in the input). A shard whose selectors pick them is
the router that publishes them — a default router whose own selectors leave them out does
not — so the exposure of a Route-published service is judged at that shard.
"""

from __future__ import annotations

from hcpscan.analysis.reachability.selectors import LabelSelector, SelectorError
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.objects import namespace_of
from hcpscan.model.hostedcluster import HostedCluster
from hcpscan.model.ingress import (
    DEFAULT_ROUTER,
    INGRESS_CONTROLLER,
    INGRESS_OPERATOR_NAMESPACE,
    RouterOnMachines,
    router_on_machines,
    strategy_of,
)
from hcpscan.model.ipspace import PRIVATE_ADDRESSES, IPSpace
from hcpscan.model.networks import cidrs

HCP_LABEL = "hypershift.openshift.io/hosted-control-plane"


def hcp_route_router(inventory: Inventory, hc: HostedCluster) -> K8sObject | None:
    """The IngressController that serves the HostedCluster's Routes: a shard whose
    selectors pick them (by name, the first), else the default one if its selectors do
    not leave them out; None when the input holds no IngressController that serves them."""
    cluster, ns = hc.obj.cluster, hc.control_plane_namespace
    ns_labels = inventory.namespace_labels(ns, cluster)
    if inventory.get("Namespace", "", ns, cluster) is None:
        ns_labels.setdefault(HCP_LABEL, "true")
    serving = serving_controllers(inventory, cluster, ns_labels, {HCP_LABEL: ns})
    shards = [c for c in serving if c.name != DEFAULT_ROUTER and _selective(c)]
    if shards:
        return shards[0]
    return next((c for c in serving if c.name == DEFAULT_ROUTER), None)


def serving_controllers(inventory: Inventory, cluster: str, ns_labels: dict[str, str],
                        route_labels: dict[str, str]) -> list[K8sObject]:
    """The IngressControllers of ``cluster`` whose selectors admit a Route with these labels
    in a namespace with these labels, by name."""
    return sorted((c for c in inventory.of_kind(INGRESS_CONTROLLER)
                   if c.cluster == cluster and c.namespace == INGRESS_OPERATOR_NAMESPACE
                   and _serves(c, ns_labels, route_labels)), key=lambda c: c.name)


def route_sources(inventory: Inventory, route: K8sObject) -> tuple[IPSpace, str] | None:
    """The outside addresses that reach ``route`` through the routers serving it: the
    union of their LoadBalancerService ``allowedSourceRanges`` (every address for a router
    without them, a NodePortService or HostNetwork, which the manifests do not bound; the
    private ranges for an Internal load balancer) and the routers' names; empty when only Private routers serve
    it; None when the input holds no IngressController that admits it (the router is
    unknown: every address, as before)."""
    if not inventory.of_kind(INGRESS_CONTROLLER):
        return None
    labels = inventory.namespace_labels(namespace_of(route), route.cluster)
    serving = serving_controllers(inventory, route.cluster, labels, dict(route.labels))
    if not serving:
        return None  # none of the input's routers admits it: another one, not in the input
    names = ", ".join(f"IngressController {c.namespace}/{c.name}" for c in serving)
    return IPSpace.union_of([_offered(c) for c in serving]), names


def route_on_machines(inventory: Inventory, route: K8sObject) -> RouterOnMachines | None:
    """How ``route``'s traffic meets the machines' perimeter when every router serving it
    takes it on the machines the same way (HostNetwork, or NodePortService): the first's,
    by name. None when a load balancer serves it too, when the routers differ, or when
    the input holds no IngressController that serves it."""
    if not inventory.of_kind(INGRESS_CONTROLLER):
        return None
    labels = inventory.namespace_labels(namespace_of(route), route.cluster)
    serving = serving_controllers(inventory, route.cluster, labels, dict(route.labels))
    found = [router_on_machines(inventory, c) for c in serving
             if strategy_of(c).get("type") != "Private"]
    if not found or any(f is None for f in found):
        return None
    fronts = {f.front for f in found if f is not None}
    return found[0] if len(fronts) == 1 else None


def route_bounds(inventory: Inventory, route: K8sObject) -> tuple[K8sObject, str] | None:
    """The IngressController (and its field) whose allowedSourceRanges or Private
    publishing bound who reaches ``route``: where to widen them when the workers are
    kept out; None when no router serving it is bounded (or none is in the input)."""
    if not inventory.of_kind(INGRESS_CONTROLLER):
        return None
    labels = inventory.namespace_labels(namespace_of(route), route.cluster)
    for controller in serving_controllers(inventory, route.cluster, labels, dict(route.labels)):
        if _offered(controller) != IPSpace.everything():
            strategy = ("spec.endpointPublishingStrategy"
                        if controller.get("spec.endpointPublishingStrategy") is not None
                        else "status.endpointPublishingStrategy")
            ranges = f"{strategy}.loadBalancer.allowedSourceRanges"
            return controller, ranges if controller.get(ranges) else strategy
    return None


def _offered(controller: K8sObject) -> IPSpace:
    strategy = controller.get("spec.endpointPublishingStrategy") or \
        controller.get("status.endpointPublishingStrategy") or {}
    if not isinstance(strategy, dict):
        return IPSpace.everything()
    if strategy.get("type") == "Private":
        return IPSpace()
    lb = strategy.get("loadBalancer") if strategy.get("type") == "LoadBalancerService" else None
    ranges = cidrs(lb.get("allowedSourceRanges"), key=None) if isinstance(lb, dict) else ()
    space = IPSpace.from_cidrs(ranges) if ranges else IPSpace.everything()
    if isinstance(lb, dict) and str(lb.get("scope") or "").lower() == "internal":
        space = space.intersection(IPSpace.from_cidrs(PRIVATE_ADDRESSES))  # a private address
    return space


def _selective(controller: K8sObject) -> bool:
    return bool(controller.get("spec.namespaceSelector") or controller.get("spec.routeSelector"))


def _serves(controller: K8sObject, ns_labels: dict[str, str], route_labels: dict[str, str]) -> bool:
    try:
        namespaces = LabelSelector.parse(controller.get("spec.namespaceSelector"))
        routes = LabelSelector.parse(controller.get("spec.routeSelector"))
    except SelectorError:
        return False  # a selector the API server refuses selects nothing
    return namespaces.matches(ns_labels) and routes.matches(route_labels)
