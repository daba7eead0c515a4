"""Cluster API in domain terms: which workload cluster a bootstrap config belongs to, and
where each bootstrap kind keeps the files it writes on the node (seed 003; DOMAIN.md §6)."""

from __future__ import annotations

from typing import Any

from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.fieldpath import Step

CAPI_GROUP = "cluster.x-k8s.io"
CAPI_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
VALUES_SUFFIX = "-cluster-values"
# Giant Swarm labels every release its cluster chart renders, and the values users write
# for them, with the workload cluster's name (alongside CAPI's own label).
GS_CLUSTER_LABEL = "giantswarm.io/cluster"
# Where the cluster charts (giantswarm/cluster and cluster-<provider>) take the cluster's name.
CHART_CLUSTER_NAME = ("global", "metadata", "name")

# clusterctl labels every object of a provider it installs with PROVIDER_LABEL =
# <type>-<name> (cluster-api cmd/clusterctl/api/v1alpha3 ManifestLabel: cluster-api,
# bootstrap-kubeadm, control-plane-kubeadm, infrastructure-aws ...).
PROVIDER_LABEL = "cluster.x-k8s.io/provider"
# The infrastructure providers whose controllers call a public cloud's API from the
# management cluster (so need its egress proxy, cluster-api#4585), and the container that
# does: CAPA (AWS APIs), CAPZ (Azure Resource Manager, its controller and the Azure Service
# Operator it ships), CAPG (Google Cloud APIs). The core controller and the kubeadm
# bootstrap/control-plane providers talk only to Kubernetes API servers; vSphere, OpenStack
# and VCD providers dial an endpoint the user names, often inside the network: not listed.
CLOUD_API_PROVIDERS = {
    "infrastructure-aws": "manager",
    "infrastructure-azure": "manager",
    "infrastructure-gcp": "manager",
}


def provider_proxy_fix(name: str, namespace: str, container: str) -> str:
    """Where a clusterctl-installed provider's missing management proxy is set, as a fix says."""
    where = f"-n {namespace} " if namespace else ""
    return (f"{name} is installed by clusterctl, which has no proxy setting (cluster-api#4585): "
            f"add HTTP_PROXY, HTTPS_PROXY and NO_PROXY (the management cluster's, its service "
            f"and pod networks and .svc in NO_PROXY) to its {container} container, e.g. "
            f"`kubectl {where}set env deployment/{name} -c {container} HTTPS_PROXY=...`; "
            "`clusterctl upgrade` writes the Deployment again, so set them again after it.")

BOOTSTRAP_FILES: dict[str, tuple[Step, ...]] = {
    "KubeadmConfig": ("spec", "files"),
    "KubeadmConfigTemplate": ("spec", "template", "spec", "files"),
    "KubeadmControlPlane": ("spec", "kubeadmConfigSpec", "files"),
    "KubeadmControlPlaneTemplate": ("spec", "template", "spec", "kubeadmConfigSpec", "files"),
}

# The bootstrap configs of a cluster's control plane: what they write is what its nodes get.
CONTROL_PLANE_KINDS = ("KubeadmControlPlane", "KubeadmControlPlaneTemplate")

# Proxy settings an infrastructure provider writes into its nodes (for containerd): CAPVCD's
# VCDCluster ``spec.proxyConfig`` in v1beta1, ``spec.proxyConfigSpec`` from v1beta2 on
# (vmware/cluster-api-provider-cloud-director api/<version>/vcdcluster_types.go).
INFRASTRUCTURE_PROXY: dict[tuple[str, str], tuple[Step, ...]] = {
    ("VCDCluster", "v1beta1"): ("spec", "proxyConfig"),
    ("VCDCluster", "v1beta2"): ("spec", "proxyConfigSpec"),
    ("VCDCluster", "v1beta3"): ("spec", "proxyConfigSpec"),
    # a ClusterClass's template of it (api/<version>/vcdclustertemplate_types.go)
    ("VCDClusterTemplate", "v1beta2"): ("spec", "template", "spec", "proxyConfigSpec"),
    ("VCDClusterTemplate", "v1beta3"): ("spec", "template", "spec", "proxyConfigSpec"),
}
INFRASTRUCTURE_GROUP = "infrastructure.cluster.x-k8s.io"


def infrastructure_proxy(obj: K8sObject) -> tuple[Step, ...] | None:
    """Where an infrastructure cluster keeps the proxy its nodes get (None: it has none)."""
    if obj.group != INFRASTRUCTURE_GROUP:
        return None
    return INFRASTRUCTURE_PROXY.get((obj.kind, obj.api_version.rpartition("/")[2]))


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
    owner = _referring_cluster(inventory, obj)
    if owner is not None:
        return owner
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


def _referring_cluster(inventory: Inventory, obj: K8sObject) -> tuple[str, str] | None:
    """The Cluster an infrastructure or control-plane object is for: the one whose
    ``spec.infrastructureRef``/``spec.controlPlaneRef`` names it, else its owner reference
    to a Cluster (set by Cluster API once it adopts the object)."""
    for cluster in inventory.query("Cluster", namespace=obj.namespace, cluster=obj.cluster):
        if cluster.group != CAPI_GROUP:
            continue
        for field in ("infrastructureRef", "controlPlaneRef"):
            ref = cluster.get(("spec", field))
            if isinstance(ref, dict) and ref.get("kind") == obj.kind and \
                    ref.get("name") == obj.name and ref.get("namespace", obj.namespace) == obj.namespace:
                return cluster.name, f"spec.{field} of Cluster {obj.namespace}/{cluster.name}"
    meta = obj.body.get("metadata")
    owners = meta.get("ownerReferences") if isinstance(meta, dict) else None
    for owner in owners if isinstance(owners, list) else []:
        if isinstance(owner, dict) and owner.get("kind") == "Cluster" and \
                str(owner.get("apiVersion", "")).startswith(CAPI_GROUP + "/") and owner.get("name"):
            return str(owner["name"]), "its owner reference"
    return None


def machine_owned(obj: K8sObject) -> bool:
    """A bootstrap config rendered for one Machine from a template or control plane,
    which is where its content is decided."""
    return any(isinstance(o, dict) and o.get("kind") == "Machine"
               for o in obj.metadata.get("ownerReferences") or [])


def release_clusters(release: K8sObject, values: Any) -> set[str]:
    """The workload clusters a chart release (HelmRelease, App) or a values object names:
    its ``cluster.x-k8s.io/cluster-name`` or ``giantswarm.io/cluster`` label; a release's
    own name (Giant Swarm names the cluster chart's App or HelmRelease after the cluster)
    and a HelmRelease's ``spec.releaseName``; the values' ``global.metadata.name``."""
    found = {str(release.labels[k]) for k in (CAPI_NAME_LABEL, GS_CLUSTER_LABEL)
             if release.labels.get(k)}
    if release.kind in ("HelmRelease", "App"):
        found.add(release.name)
        name = release.get("spec.releaseName") if release.kind == "HelmRelease" else None
        if isinstance(name, str) and name:
            found.add(name)
    named: Any = values
    for step in CHART_CLUSTER_NAME:
        named = named.get(step) if isinstance(named, dict) else None
    if isinstance(named, str) and named:
        found.add(named)
    return found
