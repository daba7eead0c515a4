"""Open Cluster Management in domain terms: the agents that run on a managed cluster, and
which managed cluster an input is (DOMAIN.md §5)."""

from __future__ import annotations

from dataclasses import dataclass

from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.secrets import secret_values

# The klusterlet and add-on agents run in namespaces named so (open-cluster-management-agent,
# open-cluster-management-agent-addon, klusterlet-<cluster> in hosted mode).
AGENT_NAMESPACES = ("open-cluster-management", "klusterlet")
WORKLOAD_KINDS = ("Deployment", "DaemonSet", "StatefulSet")


def agent_workloads(inventory: Inventory, cluster: str) -> list[K8sObject]:
    """The OCM agent workloads of one (managed) cluster of the input."""
    return [o for o in inventory.of_kind(*WORKLOAD_KINDS)
            if o.cluster == cluster and o.namespace.startswith(AGENT_NAMESPACES)]


# -- which managed cluster the input is ---------------------------------------------------------

# The multicluster engine registers the hub with itself as the ManagedCluster named by its
# spec.localClusterName (default local-cluster), always labelled so (stolostron/backplane-operator
# pkg/utils/local_cluster.go, api/v1/multiclusterengine_types.go).
LOCAL_CLUSTER_LABEL = "local-cluster"
KLUSTERLET_GROUP = "operator.open-cluster-management.io"
# The klusterlet's agent namespace on the managed cluster is open-cluster-management-<...>
# (Klusterlet spec.namespace, default open-cluster-management-agent); in the Hosted modes
# the agents, with hub-kubeconfig-secret, run on another (hosting) cluster, in a namespace
# named after the Klusterlet (open-cluster-management-io/api operator/v1/types_klusterlet.go).
AGENT_NAMESPACE_PREFIX = "open-cluster-management-"
HOSTED_MODES = ("Hosted", "SingletonHosted")
HUB_KUBECONFIG_SECRET = "hub-kubeconfig-secret"
CLUSTER_NAME_KEY = "cluster-name"  # written by the registration agent (ocm register/interface.go)


# The kinds ``own_managed_names`` and ``managed_cluster_kas_ip`` read.
OWN_NAME_READS = ("ManagedCluster", "Klusterlet", "Secret", "Service")


@dataclass(frozen=True, slots=True)
class OwnName:
    """A name under which one cluster of the input is an OCM managed cluster."""

    name: str
    where: str  # what says so: "Klusterlet klusterlet spec.clusterName"
    cluster: str  # the input's cluster (inventory) it was read from


def own_managed_names(inventory: Inventory) -> list[OwnName]:
    """The managed-cluster names the input's own clusters have: the hub's ManagedCluster
    labelled ``local-cluster=true`` (the hub manages itself), the ``clusterName`` of a
    Klusterlet running its agents here (not in a Hosted mode), and the ``cluster-name`` the
    registration agent wrote into ``hub-kubeconfig-secret`` in an agent namespace."""
    names: list[OwnName] = inventory.derived("ocm.own-managed-names", _own_names)
    return names


def _own_names(inventory: Inventory) -> list[OwnName]:
    out = [OwnName(mc.name, f"{mc.ref} is labelled {LOCAL_CLUSTER_LABEL}=true: the hub itself",
                   mc.cluster)
           for mc in inventory.of_kind("ManagedCluster")
           if str(mc.labels.get(LOCAL_CLUSTER_LABEL, "")).lower() == "true"]
    klusterlets = [k for k in inventory.of_kind("Klusterlet") if k.group == KLUSTERLET_GROUP]
    hosted = {k.cluster for k in klusterlets if k.get("spec.deployOption.mode") in HOSTED_MODES}
    for k in klusterlets:
        name = k.get("spec.clusterName")
        if k.cluster not in hosted and isinstance(name, str) and name.strip():
            out.append(OwnName(name.strip(), f"{k.ref} spec.clusterName", k.cluster))
    for secret in inventory.query("Secret", name=HUB_KUBECONFIG_SECRET):
        if secret.cluster in hosted or not secret.namespace.startswith(AGENT_NAMESPACE_PREFIX):
            continue
        value = secret_values(secret).get(CLUSTER_NAME_KEY)
        name = value.text.strip() if value is not None and value.text else ""
        if name:
            out.append(OwnName(name, f"{secret.ref} key {CLUSTER_NAME_KEY}", secret.cluster))
    return out


@dataclass(frozen=True, slots=True)
class KasIP:
    """A managed cluster's kube-apiserver ClusterIP (``default/kubernetes``), where read."""

    ip: str
    origin: str


def managed_cluster_kas_ip(inventory: Inventory, name: str) -> KasIP | str:
    """The kube-apiserver ClusterIP of the managed cluster ``name``, known only when one of
    the input's clusters is that managed cluster (``own_managed_names``): the ClusterIP of
    that cluster's ``default/kubernetes`` Service. Else why not (a hub's own Service is the
    hub's, never another managed cluster's)."""
    owners = [o for o in own_managed_names(inventory) if o.name == name]
    if not owners:
        return (f"the input is not managed cluster {name} (no ManagedCluster {name} labelled "
                f"{LOCAL_CLUSTER_LABEL}=true, no Klusterlet or hub-kubeconfig-secret naming it): "
                "a default/kubernetes Service in it is another cluster's")
    ips: dict[str, list[str]] = {}
    for cluster in dict.fromkeys(o.cluster for o in owners):
        for svc in inventory.query("Service", namespace="default", name="kubernetes",
                                   cluster=cluster):
            cluster_ip = svc.get("spec.clusterIP")
            if isinstance(cluster_ip, str) and cluster_ip and cluster_ip != "None":
                ips.setdefault(cluster_ip, []).append(svc.ref)
    if len(ips) == 1:
        ((ip, refs),) = ips.items()
        return KasIP(ip, f"ClusterIP of {refs[0]}, managed cluster {name}'s ({owners[0].where})")
    if ips:
        return (f"the input holds several default/kubernetes Services of {name} ("
                + ", ".join(f"{ip}: {' '.join(r)}" for ip, r in sorted(ips.items())) + ")")
    return (f"the input is managed cluster {name} ({owners[0].where}) but holds no "
            "default/kubernetes Service")
