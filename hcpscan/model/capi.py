"""Cluster API in domain terms: which workload cluster a bootstrap config belongs to, and
where each bootstrap kind keeps the files it writes on the node (seed 003; DOMAIN.md §6)."""

from __future__ import annotations

from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.fieldpath import Step
from hcpscan.model.clusters import CAPI_NAME_LABEL, VALUES_SUFFIX

BOOTSTRAP_FILES: dict[str, tuple[Step, ...]] = {
    "KubeadmConfig": ("spec", "files"),
    "KubeadmConfigTemplate": ("spec", "template", "spec", "files"),
    "KubeadmControlPlane": ("spec", "kubeadmConfigSpec", "files"),
    "KubeadmControlPlaneTemplate": ("spec", "template", "spec", "kubeadmConfigSpec", "files"),
}


def capi_cluster_of(inventory: Inventory, obj: K8sObject) -> tuple[str, str] | None:
    """(workload cluster name, how it was found) of a bootstrap config: its
    ``cluster.x-k8s.io/cluster-name`` label, else the longest ``<cluster>`` for which a
    ``<cluster>-cluster-values`` Secret is in the same namespace and the object is named
    ``<cluster>`` or ``<cluster>-…`` (Giant Swarm names templates ``<cluster>-<pool>`` and
    the control plane ``<cluster>``)."""
    label = obj.labels.get(CAPI_NAME_LABEL)
    if label:
        return str(label), f"label {CAPI_NAME_LABEL}"
    candidates = [s.name.removesuffix(VALUES_SUFFIX)
                  for s in inventory.query("Secret", namespace=obj.namespace, cluster=obj.cluster)
                  if s.name.endswith(VALUES_SUFFIX)]
    matching = [c for c in candidates if obj.name == c or obj.name.startswith(c + "-")]
    if not matching:
        return None
    name = max(matching, key=len)
    return name, f"name prefix of Secret {obj.namespace}/{name}{VALUES_SUFFIX}"


def machine_owned(obj: K8sObject) -> bool:
    """A bootstrap config rendered for one Machine from a template or control plane,
    which is where its content is decided."""
    return any(isinstance(o, dict) and o.get("kind") == "Machine"
               for o in obj.metadata.get("ownerReferences") or [])
