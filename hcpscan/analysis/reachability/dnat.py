"""Where a Service's port is not the port its pods listen on, and that matters to a policy.

OVN-Kubernetes, like kube-proxy, applies NetworkPolicy after DNAT: a client dials the
Service, the packet is rewritten to a pod address and the pod's port, and only then do
policies look at it. So a policy towards the pods must name the pod port. The case
that bites on OpenShift is DNS: clients send to the ``dns-default`` Service of
``openshift-dns`` on 53, the DNS pods listen on 5353, and an egress rule for 53 to
those pods lets nothing through (DOMAIN.md §2). An answer about DNS says so, when the
input holds that Service and pods whose ports resolve its target ports.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from hcpscan.analysis.reachability.endpoints import EndpointClass, Workload
from hcpscan.analysis.reachability.exposure import service_selector, target_port
from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import namespace_of
from hcpscan.model.ports import normalise_protocol

DNS_NAMESPACE = "openshift-dns"
DNS_SERVICE = "dns-default"


@dataclass(frozen=True, slots=True)
class DnatNote:
    """One Service port its pods receive on another port."""

    cluster: str
    service: str
    port: int
    pod_port: int
    protocols: tuple[str, ...]
    workloads: tuple[Workload, ...]  # the pods behind it, as the list names them

    def __str__(self) -> str:
        return (f"policies apply after DNAT: Service {self.service} {self.port} → pods "
                f"{self.pod_port} ({', '.join(self.protocols)}), so rules towards the pods "
                f"must name {self.pod_port}")


def dns_dnat_notes(inventory: Inventory, cluster: str,
                   classes: list[EndpointClass]) -> list[DnatNote]:
    """The DNS Service's ports that its pods (among ``classes``) receive on another port."""
    service = inventory.get("Service", DNS_NAMESPACE, DNS_SERVICE, cluster)
    selector = service_selector(service) if service is not None else None
    if service is None or selector is None:
        return []
    behind = [k for k in classes
              if k.namespace == namespace_of(service) and selector.matches(k.labels)]
    found: dict[tuple[int, int], set[str]] = defaultdict(set)
    workloads: dict[tuple[int, int], set[Workload]] = defaultdict(set)
    for entry in service.get("spec.ports") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("port"), int):
            continue
        protocol = normalise_protocol(entry.get("protocol"))
        for klass in behind:
            pod_port = target_port(entry, klass, protocol)
            if pod_port is not None and pod_port != entry["port"]:
                found[(entry["port"], pod_port)].add(protocol)
                workloads[(entry["port"], pod_port)].update(klass.workloads)
    name = f"{namespace_of(service)}/{service.name}"
    return [DnatNote(cluster, name, port, pod_port, tuple(sorted(protocols, reverse=True)),
                     tuple(sorted(workloads[(port, pod_port)])))
            for (port, pod_port), protocols in sorted(found.items())]
