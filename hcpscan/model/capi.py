"""Cluster API in domain terms: which workload cluster a bootstrap config belongs to, and
where each bootstrap kind keeps the files it writes on the node (seed 003; DOMAIN.md §6)."""

from __future__ import annotations

from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.fieldpath import Step

CAPI_GROUP = "cluster.x-k8s.io"
CAPI_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
VALUES_SUFFIX = "-cluster-values"

BOOTSTRAP_FILES: dict[str, tuple[Step, ...]] = {
    "KubeadmConfig": ("spec", "files"),
    "KubeadmConfigTemplate": ("spec", "template", "spec", "files"),
    "KubeadmControlPlane": ("spec", "kubeadmConfigSpec", "files"),
    "KubeadmControlPlaneTemplate": ("spec", "template", "spec", "kubeadmConfigSpec", "files"),
}


def capi_cluster_of(inventory: Inventory, obj: K8sObject) -> tuple[str, str] | None:
    """(workload cluster name, how it was found) of an object that belongs to one Cluster
    API cluster (a bootstrap config, a ``<cluster>-cluster-values`` Secret or ConfigMap):
    its ``cluster.x-k8s.io/cluster-name`` label; its own ``<cluster>-cluster-values`` name;
    else the longest ``<cluster>`` of the namespace - a Cluster, or the owner of a
    ``<cluster>-cluster-values`` Secret - such that the object is named ``<cluster>`` or
    ``<cluster>-...`` (Giant Swarm names templates ``<cluster>-<pool>`` and the control
    plane ``<cluster>``)."""
    label = obj.labels.get(CAPI_NAME_LABEL)
    if label:
        return str(label), f"label {CAPI_NAME_LABEL}"
    if obj.name.endswith(VALUES_SUFFIX):
        return obj.name.removesuffix(VALUES_SUFFIX), "its name"
    candidates = {c.name: f"Cluster {obj.namespace}/{c.name}"
                  for c in inventory.query("Cluster", namespace=obj.namespace, cluster=obj.cluster)
                  if c.group == CAPI_GROUP}
    candidates.update({s.name.removesuffix(VALUES_SUFFIX): f"Secret {obj.namespace}/{s.name}"
                       for s in inventory.query("Secret", namespace=obj.namespace,
                                                cluster=obj.cluster)
                       if s.name.endswith(VALUES_SUFFIX)})  # the values name the proxy
    matching = [c for c in candidates if obj.name == c or obj.name.startswith(c + "-")]
    if not matching:
        return None
    name = max(matching, key=len)
    return name, f"name prefix of {candidates[name]}"


def machine_owned(obj: K8sObject) -> bool:
    """A bootstrap config rendered for one Machine from a template or control plane,
    which is where its content is decided."""
    return any(isinstance(o, dict) and o.get("kind") == "Machine"
               for o in obj.metadata.get("ownerReferences") or [])
