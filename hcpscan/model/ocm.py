"""Open Cluster Management in domain terms: the agents that run on a managed cluster
(DOMAIN.md §5)."""

from __future__ import annotations

from hcpscan.inventory import Inventory, K8sObject

# The klusterlet and add-on agents run in namespaces named so (open-cluster-management-agent,
# open-cluster-management-agent-addon, klusterlet-<cluster> in hosted mode).
AGENT_NAMESPACES = ("open-cluster-management", "klusterlet")
WORKLOAD_KINDS = ("Deployment", "DaemonSet", "StatefulSet")


def agent_workloads(inventory: Inventory, cluster: str) -> list[K8sObject]:
    """The OCM agent workloads of one (managed) cluster of the input."""
    return [o for o in inventory.of_kind(*WORKLOAD_KINDS)
            if o.cluster == cluster and o.namespace.startswith(AGENT_NAMESPACES)]
