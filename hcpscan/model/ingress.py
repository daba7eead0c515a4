"""The management cluster's routers as OpenShift's ingress operator declares them.

One home for the names: IngressControllers live in ``openshift-ingress-operator``; the one
named ``default`` serves every Route its selectors do not leave out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hcpscan.inventory import Inventory, K8sObject

INGRESS_CONTROLLER = "IngressController"
INGRESS_OPERATOR_NAMESPACE, DEFAULT_ROUTER = "openshift-ingress-operator", "default"

ROUTER_NAMESPACE = "openshift-ingress"
# endpointPublishingStrategy types whose router takes its traffic on the machines themselves
# (behind the machines' firewall or security groups), not through a cloud load balancer
HOST_NETWORK, NODE_PORT_SERVICE = "HostNetwork", "NodePortService"
# how that traffic meets the machines' perimeter: straight at the host's ports, or at the
# router Service's node ports (the ways a perimeter ``fronts``)
ON_HOST, ON_NODE_PORT = "HostNetwork", "NodePort"


@dataclass(frozen=True, slots=True)
class RouterOnMachines:
    """A router published on the machines: the way its traffic meets their perimeter
    (``ON_HOST`` or ``ON_NODE_PORT``), the ports it arrives at (None: a node port the
    input does not give), and a sentence saying where that is read."""

    front: str
    https: int | None
    http: int | None
    said: str


def strategy_of(controller: K8sObject) -> dict[str, Any]:
    """The IngressController's endpointPublishingStrategy (spec, else the status the
    operator defaulted)."""
    for field in ("spec.endpointPublishingStrategy", "status.endpointPublishingStrategy"):
        value = controller.get(field)
        if isinstance(value, dict) and value:
            return value
    return {}


def router_on_machines(inventory: Inventory, controller: K8sObject) -> RouterOnMachines | None:
    """How a HostNetwork or NodePortService router takes its traffic on the machines; None
    for any other publishing (a load balancer, Private, none stated). HostNetwork listens on
    ``hostNetwork.httpsPort``/``httpPort`` (443/80 by default) of the nodes it runs on; a
    NodePortService router is reached at the node ports of its Service
    ``openshift-ingress/router-nodeport-<name>`` (ports ``https``/``http``)."""
    strategy = strategy_of(controller)
    kind = strategy.get("type")
    where = f"IngressController {controller.namespace}/{controller.name}"
    if kind == HOST_NETWORK:
        raw = strategy.get("hostNetwork")
        host: dict[str, Any] = raw if isinstance(raw, dict) else {}
        https, http = _port(host.get("httpsPort"), 443), _port(host.get("httpPort"), 80)
        return RouterOnMachines(ON_HOST, https, http, f"{where} uses HostNetwork: the router listens "
                                                      f"on ports {https}/{http} of the machines it runs on")
    if kind != NODE_PORT_SERVICE:
        return None
    name = f"router-nodeport-{controller.name}"
    svc = inventory.get("Service", ROUTER_NAMESPACE, name, controller.cluster)
    found: dict[int, int] = {}
    for entry in (svc.get("spec.ports") if svc is not None else None) or []:
        if not isinstance(entry, dict):
            continue
        port = {"https": 443, "http": 80}.get(str(entry.get("name") or ""), entry.get("port"))
        node_port = entry.get("nodePort")
        if port in (443, 80) and isinstance(node_port, int) and not isinstance(node_port, bool):
            found.setdefault(int(port), node_port)
    if svc is None:
        said = (f"{where} is a NodePortService; its Service {ROUTER_NAMESPACE}/{name} is not in the "
                "input, so the node ports are not known")
    else:
        said = (f"{where} is a NodePortService: Service {ROUTER_NAMESPACE}/{name} takes https on node "
                f"port {found.get(443, 'not allocated')} and http on {found.get(80, 'not allocated')}")
    return RouterOnMachines(ON_NODE_PORT, found.get(443), found.get(80), said)


def _port(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 65536 \
        else default
