"""Open Cluster Management in domain terms: the agents that run on a managed cluster, and
the AddOnDeploymentConfig the hub applies to each add-on, and which managed cluster an
input is (DOMAIN.md §5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


# -- the AddOnDeploymentConfig each add-on gets ---------------------------------------------
#
# The add-on manager picks one config of each type (group addon.open-cluster-management.io,
# resource exactly addondeploymentconfigs) per add-on of a cluster, first found wins
# (OCM "Add-on configuration"; addon-framework's addonconfig controllers):
#
# 1. the ManagedClusterAddOn's own spec.configs[];
# 2. the configs[] of a spec.installStrategy.placements[] entry of the ClusterManagementAddOn
#    of the same name whose Placement selected the cluster (its PlacementDecisions'
#    status.decisions[].clusterName);
# 3. that ClusterManagementAddOn's spec.supportedConfigs[].defaultConfig;
# 4. the deprecated spec.addOnConfiguration{crdName, crName} of older ClusterManagementAddOns:
#    it names a cluster-scoped resource by name only, so it can never name an
#    AddOnDeploymentConfig (namespaced): read as a reference to namespace "", which no
#    AddOnDeploymentConfig has.
#
# A reference spelled otherwise (AddonDeploymentConfig) or written outside spec is never
# read (OCM007/OCM008 report those).

ADDON_GROUP = "addon.open-cluster-management.io"
ADDON_CONFIG_RESOURCE = "addondeploymentconfigs"
ADDON_CONFIG_CRD = f"{ADDON_CONFIG_RESOURCE}.{ADDON_GROUP}"
PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"
OWN_CONFIGS = "its own spec.configs"
# what deciding an add-on's configs reads beyond the add-on itself
ADDON_CONFIG_READS = ("ClusterManagementAddOn", "PlacementDecision")


@dataclass(frozen=True, slots=True)
class AddonConfigRef:
    """An AddOnDeploymentConfig reference: what it names, the object and field holding it,
    and how it reaches the add-on (its own configs, a placement, a default)."""

    namespace: str
    name: str
    holder: K8sObject
    steps: tuple[str | int, ...]
    how: str
    name_key: str = "name"  # the reference's key holding the name


# -- add-ons whose agents reach hub services other than the kube-apiserver ------------------
#
# The klusterlet puts its own hub proxy into each add-on's hub kubeconfig, so an agent that
# only talks to the hub's kube-apiserver follows the klusterlet through the proxy. An agent
# that dials another hub endpoint gets a proxy only from the AddOnDeploymentConfig
# ``spec.proxyConfig`` the hub applies to its add-on (seed 004, "Add-on proxy settings").
# The add-ons (ManagedClusterAddOn name) upstream says so of, each with its evidence:
# cluster-proxy: the proxy-agent's --proxy-server-host is the hub's proxy-server entry point,
# and its HTTP(S)_PROXY/NO_PROXY come only from the AddOnDeploymentConfig proxyConfig
# (open-cluster-management-io/cluster-proxy pkg/proxyagent/agent/agent.go and the addon-agent
# chart; RHACM "Configuring proxy settings for cluster proxy add-ons", ACM-7110).
# observability-controller: the metrics-collector sends to the hub's observability API
# route (RHACM "Configuring proxy settings for observability add-ons", ACM-9274).
# managed-serviceaccount, work-manager, governance-policy-framework, config-policy-controller,
# application-manager, search-collector: no upstream statement that they need one; not listed.
HUB_SERVICE_ADDONS: dict[str, str] = {
    "cluster-proxy": "its proxy-agent dials the cluster-proxy proxy-server on the hub, "
                     "not the hub's kube-apiserver",
    "observability-controller": "its metrics-collector sends metrics to the hub's "
                                "observability API route, not the hub's kube-apiserver",
}

# A ManagedCluster is bound to a KlusterletConfig by this annotation; a KlusterletConfig
# named ``global`` applies to every managed cluster, and a bound one overrides its fields
# (RHACM 'Configuring the global KlusterletConfig').
KLUSTERLET_CONFIG_ANNOTATION = "agent.open-cluster-management.io/klusterlet-config"
GLOBAL_KLUSTERLET_CONFIG = "global"
BOOTSTRAP_HUB_KUBECONFIG = "bootstrap-hub-kubeconfig"


def klusterlet_configs_of(inventory: Inventory, cluster_name: str, cluster: str
                          ) -> list[K8sObject]:
    """The KlusterletConfigs the import controller applies to managed cluster
    ``cluster_name`` of hub ``cluster``, the one that wins first: the one its ManagedCluster's
    annotation names, then ``global``."""
    names = []
    managed = inventory.get("ManagedCluster", "", cluster_name, cluster)
    bound = managed.annotations.get(KLUSTERLET_CONFIG_ANNOTATION) if managed else None
    if isinstance(bound, str) and bound.strip():
        names.append(bound.strip())
    names.append(GLOBAL_KLUSTERLET_CONFIG)
    found = (inventory.get("KlusterletConfig", "", name, cluster) for name in dict.fromkeys(names))
    return [o for o in found if o is not None]


def is_addon_config_ref(ref: Any) -> bool:
    """A config reference the add-on manager reads as an AddOnDeploymentConfig."""
    return (isinstance(ref, dict) and ref.get("resource") == ADDON_CONFIG_RESOURCE
            and ref.get("group", ADDON_GROUP) == ADDON_GROUP)


def applied_addon_configs(inventory: Inventory, addon: K8sObject,
                          notes: list[str] | None = None) -> list[AddonConfigRef]:
    """The AddOnDeploymentConfig references the hub applies to a ManagedClusterAddOn, by the
    add-on manager's precedence (above). ``notes`` collects what the input cannot decide
    (a placement whose PlacementDecisions are absent)."""
    notes = notes if notes is not None else []
    own = addon.get("spec.configs")
    found = [AddonConfigRef(str(r.get("namespace") or addon.namespace), str(r.get("name")), addon,
                            ("spec", "configs", i), OWN_CONFIGS)
             for i, r in enumerate(own if isinstance(own, list) else []) if is_addon_config_ref(r)]
    if found:
        return found
    cma = cluster_management_addon(inventory, addon)
    if cma is None:
        return []
    return (_placement_refs(inventory, cma, addon.namespace, notes) or default_addon_configs(cma)
            or legacy_addon_configs(cma))


def cluster_management_addon(inventory: Inventory, addon: K8sObject) -> K8sObject | None:
    """The ClusterManagementAddOn of a ManagedClusterAddOn: the one of the same name. It is
    cluster-scoped, so a namespace written on it (kustomize's namespace transformer sets one
    on kinds it does not know) is none: the API server drops it."""
    found = inventory.get("ClusterManagementAddOn", "", addon.name, addon.cluster)
    if found is not None:
        return found
    return next(iter(inventory.query("ClusterManagementAddOn", name=addon.name,
                                     cluster=addon.cluster)), None)


def declared_addon_configs(cma: K8sObject) -> list[AddonConfigRef]:
    """Every AddOnDeploymentConfig reference a ClusterManagementAddOn holds: its placements'
    configs, its defaults and the deprecated addOnConfiguration (each applies to some
    cluster's add-on, whichever clusters the input holds)."""
    out = []
    for i, placement in enumerate(_list(cma.get("spec.installStrategy.placements"))):
        if isinstance(placement, dict):
            out += _placement_configs(cma, i, placement)
    return out + default_addon_configs(cma) + legacy_addon_configs(cma)


def default_addon_configs(cma: K8sObject) -> list[AddonConfigRef]:
    out = []
    for i, entry in enumerate(_list(cma.get("spec.supportedConfigs"))):
        default = entry.get("defaultConfig") if is_addon_config_ref(entry) else None
        if isinstance(default, dict) and default.get("name"):
            out.append(AddonConfigRef(str(default.get("namespace") or ""), str(default["name"]),
                                      cma, ("spec", "supportedConfigs", i, "defaultConfig"),
                                      f"the default of {cma.ref}"))
    return out


def legacy_addon_configs(cma: K8sObject) -> list[AddonConfigRef]:
    legacy = cma.get("spec.addOnConfiguration")
    if not isinstance(legacy, dict) or legacy.get("crdName") != ADDON_CONFIG_CRD \
            or not legacy.get("crName"):
        return []
    return [AddonConfigRef("", str(legacy["crName"]), cma, ("spec", "addOnConfiguration"),
                           f"the deprecated spec.addOnConfiguration of {cma.ref}, which names "
                           "no namespace (an AddOnDeploymentConfig always has one)", "crName")]


def _placement_refs(inventory: Inventory, cma: K8sObject, cluster_name: str,
                    notes: list[str]) -> list[AddonConfigRef]:
    """The configs of the last placement that selects the cluster: the add-on manager walks
    the placements from the last (addonconfiguration graph, addAddonNode), and that
    placement's node starts from the defaults, so a later selecting placement without
    AddOnDeploymentConfigs leaves the default in force (an empty answer). With
    ``spec.installStrategy.type`` empty or ``Manual`` the graph reads no placement
    (addonconfiguration controller, buildConfigurationGraph)."""
    if cma.get("spec.installStrategy.type") in (None, "", "Manual"):
        return []  # the configuration graph reads the placements of no other install strategy
    placements = _list(cma.get("spec.installStrategy.placements"))
    unknown_without: list[str] = []  # later placements without configs, selection unknown
    for i in range(len(placements) - 1, -1, -1):
        placement = placements[i]
        if not isinstance(placement, dict):
            continue
        name, namespace = str(placement.get("name")), str(placement.get("namespace") or "")
        refs = _placement_configs(cma, i, placement)
        selected = placement_selects(inventory, cma.cluster, namespace, name, cluster_name)
        if selected is None:
            if refs:
                notes.append(f"{cma.ref} placement {namespace}/{name} has configs, but no "
                             "PlacementDecision of it is in the input: whether it selects "
                             f"cluster {cluster_name} is not known")
            else:
                unknown_without.append(f"{namespace}/{name}")
            continue
        if selected:
            if refs and unknown_without:
                verb = "set" if len(unknown_without) > 1 else "sets"
                notes.append(f"{cma.ref} placement{'s' if len(unknown_without) > 1 else ''} "
                             f"{', '.join(unknown_without)}, later in "
                             f"spec.installStrategy.placements, {verb} no configs and no "
                             "PlacementDecision of them is in the input: if one selects "
                             f"cluster {cluster_name}, the defaults apply instead of "
                             f"placement {namespace}/{name}'s configs")
            return refs
    return []


def _placement_configs(cma: K8sObject, i: int, placement: dict[str, Any]) -> list[AddonConfigRef]:
    name, namespace = str(placement.get("name")), str(placement.get("namespace") or "")
    return [AddonConfigRef(str(r.get("namespace") or ""), str(r.get("name")), cma,
                           ("spec", "installStrategy", "placements", i, "configs", j),
                           f"placement {namespace}/{name} of {cma.ref}")
            for j, r in enumerate(_list(placement.get("configs"))) if is_addon_config_ref(r)]


def placement_selects(inventory: Inventory, cluster: str, namespace: str, placement: str,
                      cluster_name: str) -> bool | None:
    """Whether the PlacementDecisions of a Placement name ``cluster_name`` (None: none in
    the input)."""
    decisions = [d for d in inventory.query("PlacementDecision", namespace=namespace,
                                            cluster=cluster)
                 if d.labels.get(PLACEMENT_LABEL) == placement]
    if not decisions:
        return None
    return any(isinstance(e, dict) and e.get("clusterName") == cluster_name
               for d in decisions for e in _list(d.get("status.decisions")))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


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
    # per Klusterlet (OCM's AgentNamespace): a Hosted one runs its agents, with a
    # hub-kubeconfig-secret of the other cluster, in a namespace named after it; a Default
    # one beside it still names this cluster
    hosted = {(k.cluster, k.name) for k in klusterlets
              if k.get("spec.deployOption.mode") in HOSTED_MODES}
    for k in klusterlets:
        name = k.get("spec.clusterName")
        if (k.cluster, k.name) not in hosted and isinstance(name, str) and name.strip():
            out.append(OwnName(name.strip(), f"{k.ref} spec.clusterName", k.cluster))
    for secret in inventory.query("Secret", name=HUB_KUBECONFIG_SECRET):
        if (secret.cluster, secret.namespace) in hosted \
                or not secret.namespace.startswith(AGENT_NAMESPACE_PREFIX):
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
