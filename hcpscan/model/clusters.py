"""The clusters of a scan in domain terms: the management cluster (its ``Proxy`` spec and
status kept apart, its networks), Cluster API clusters with their infrastructure
networks, NodePools and OCM managed clusters; and, for any object that holds proxy
settings, the networks of the cluster whose clients read them.

Facts from DOMAIN.md §3-6. Everything is read from the inventory once per scan
(``scan_model``) and queried by the analyses and the rule templates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from hcpscan.core.yamldocs import YamlSyntaxError, load_one
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.objects import INSTALL_CONFIG_KIND, MANAGEMENT
from hcpscan.inventory.store import INSTALL_CONFIG_CONFIGMAP
from hcpscan.model.capi import CAPI_GROUP, VALUES_SUFFIX, capi_cluster_of
from hcpscan.model.computed_noproxy import (
    CAPI_METADATA_INFRASTRUCTURE,
    METADATA_ADDRESS,
    openshift_no_proxy,
)
from hcpscan.model.hostedcluster import (
    HOSTED_KINDS,
    HostedCluster,
    hosted_cluster,
    hosted_cluster_of_guest,
    hosted_clusters,
)
from hcpscan.model.networks import cidrs, first_host, network

# Cluster API infrastructure kinds whose node network the model reads.
INFRASTRUCTURE_KINDS = ("AWSCluster", "VCDCluster")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class ClusterNetworks:
    """The in-cluster destinations of one cluster, and where they were read.

    ``machine`` are the networks the nodes live on (HostedCluster machineNetwork, an
    AWSCluster's VPC, an install-config's machineNetwork), when the input states them."""

    service: tuple[str, ...]
    pod: tuple[str, ...]
    kas_ip: str | None
    source: str
    service_domain: str = "cluster.local"
    machine: tuple[str, ...] = ()
    machine_source: str = ""
    # A Cluster API cluster's control plane endpoint (``https://host:port``), which
    # ``kubeadm join`` and the kubelet dial from the nodes, and where it was read.
    endpoint: str | None = None
    endpoint_source: str = ""
    # what the endpoint is, and who dials it (the networks of one API server's own flags:
    # its advertise address, which it dials itself)
    # the instance metadata address of a cloud cluster's machines, and where that was read
    metadata: str | None = None
    metadata_source: str = ""
    endpoint_label: str = "control plane endpoint"
    endpoint_dialers: str = "kubeadm join and the kubelet dial it"


@dataclass(frozen=True, slots=True)
class ManagementCluster:
    """The cluster hcpscan was pointed at: its ``config.openshift.io`` Proxy ``cluster`` with
    what the user wrote (spec) and what the cluster computed (status) as separate fields."""

    proxy: K8sObject | None
    proxy_spec: dict[str, Any]
    proxy_status: dict[str, Any]
    networks: ClusterNetworks | None
    # The status noProxy OpenShift's network operator computes from spec (when the input holds
    # the spec only), where its parts were read; or why it cannot be computed from the input.
    computed_no_proxy: str = ""
    computed_from: str = ""
    computed_unknown: str = ""
    # Why the computed noProxy may lack entries the input does not show ('' when it cannot):
    # the install-config, whose machine networks the network operator always adds, is absent.
    computed_open: str = ""

    @property
    def effective_proxy(self) -> tuple[str, dict[str, Any]] | None:
        """("status", block) when the status says anything, else ("spec", block)."""
        if self.proxy is None:
            return None
        if any(self.proxy_status.get(k) for k in ("httpProxy", "httpsProxy", "noProxy")):
            return "status", self.proxy_status
        return "spec", self.proxy_spec


@dataclass(frozen=True, slots=True)
class InfrastructureNetwork:
    """What a Cluster API infrastructure object says of the nodes' network."""

    cidrs: tuple[str, ...]
    source: str  # "AWSCluster org-a/test spec.network.vpc.cidrBlock"
    unstated: str = ""  # a network named without a CIDR: "VCDCluster org-a/test spec.ovdcNetwork test"


@dataclass(frozen=True, slots=True)
class CapiCluster:
    obj: K8sObject
    infrastructure: K8sObject | None
    networks: ClusterNetworks | None

    @property
    def name(self) -> str:
        return self.obj.name


@dataclass(frozen=True, slots=True)
class NodePool:
    obj: K8sObject
    cluster_name: str  # spec.clusterName: the HostedCluster it belongs to
    platform: str
    attach_default_network: bool | None  # KubeVirt: spec.platform.kubevirt.attachDefaultNetwork
    additional_networks: tuple[str, ...] = ()  # KubeVirt NAD names (namespace/name or name)


@dataclass(frozen=True, slots=True)
class ManagedCluster:
    obj: K8sObject
    vendor: str  # the ``vendor`` label: OpenShift, EKS, ...

    @property
    def is_openshift(self) -> bool:
        return self.vendor.lower() == "openshift"


@dataclass(slots=True)
class ScanModel:
    """Every domain object of a scan, built once from the inventory."""

    management: ManagementCluster
    hosted_clusters: list[HostedCluster] = field(default_factory=list)
    node_pools: list[NodePool] = field(default_factory=list)
    capi_clusters: list[CapiCluster] = field(default_factory=list)
    managed_clusters: list[ManagedCluster] = field(default_factory=list)


def scan_model(inventory: Inventory) -> ScanModel:
    """The scan's model, built on first use and shared by every rule and analysis."""
    return inventory.derived("scan-model", _build)


def _build(inventory: Inventory) -> ScanModel:
    return ScanModel(
        management=_management(inventory),
        hosted_clusters=[hc for hc in hosted_clusters(inventory) if hc.obj.cluster == MANAGEMENT],
        node_pools=[_node_pool(o) for o in inventory.of_kind("NodePool")],
        capi_clusters=[CapiCluster(o, _infrastructure(inventory, o), _capi_networks(inventory, o))
                       for o in inventory.of_kind("Cluster") if o.group == CAPI_GROUP],
        managed_clusters=[ManagedCluster(o, str(o.labels.get("vendor", "")))
                          for o in inventory.of_kind("ManagedCluster")],
    )


# -- the management cluster -------------------------------------------------------------------


def _management(inventory: Inventory) -> ManagementCluster:
    for obj in inventory.of_kind("Proxy"):
        if obj.cluster == MANAGEMENT and obj.group == "config.openshift.io" and obj.name == "cluster":
            spec = _mapping(obj.body.get("spec"))
            nets = openshift_networks(inventory, MANAGEMENT)
            computed, where, unknown = openshift_computed_no_proxy(inventory, MANAGEMENT, spec, nets)
            open_ = "" if not computed or install_config(inventory, MANAGEMENT) is not None else (
                "the install-config (ConfigMap kube-system/cluster-config-v1 key install-config) "
                "is not in the input: the machine networks the network operator adds from it "
                "are unknown")
            return ManagementCluster(obj, spec, _mapping(obj.body.get("status")), nets,
                                     computed, where, unknown, open_)
    return ManagementCluster(None, {}, {}, openshift_networks(inventory, MANAGEMENT))


def openshift_computed_no_proxy(inventory: Inventory, cluster: str, spec: dict[str, Any],
                                nets: ClusterNetworks | None) -> tuple[str, str, str]:
    """(noProxy, what it was computed from, '') as the cluster-network-operator computes a
    Proxy's status from ``spec`` (hcpscan.model.computed_noproxy), or ('', '', why not) when
    the input lacks what it reads: the Network's service and cluster networks and the
    Infrastructure's platform and internal API URI."""
    if not (spec.get("httpProxy") or spec.get("httpsProxy")):
        return "", "", "the Proxy sets no httpProxy or httpsProxy: nothing is computed"
    infra = inventory.get("Infrastructure", "", "cluster", cluster)
    status = _mapping(infra.body.get("status")) if infra is not None else {}
    if nets is None or not nets.service or not nets.pod:
        return "", "", ("the config.openshift.io Network 'cluster' with its service and cluster "
                        "networks is not in the input")
    if infra is None or not status:
        return "", "", "the config.openshift.io Infrastructure 'cluster' status is not in the input"
    platform = _mapping(status.get("platformStatus"))
    kind = str(platform.get("type") or status.get("platform") or "")
    internal = str(status.get("apiServerInternalURI") or "")
    try:
        host = (urlsplit(internal).hostname or "") if internal else ""
    except ValueError:  # not a URL: the CNO fails to parse it too and computes nothing
        return "", "", f"{infra.ref} status.apiServerInternalURI {internal!r} is not a URL"
    azure = _mapping(platform.get("azure"))
    user = spec.get("noProxy")
    value = openshift_no_proxy(
        machine=nets.machine, api_internal_host=host, service=nets.service, cluster=nets.pod,
        platform=kind, aws_region=str(_mapping(platform.get("aws")).get("region") or ""),
        azure_cloud=str(azure.get("cloudName") or ""),
        azure_arm_endpoint=str(azure.get("armEndpoint") or ""),
        user=user if isinstance(user, str) else None,
        hosted=status.get("controlPlaneTopology") == "External")
    parts = [nets.source, f"{infra.ref} status (platform {kind or 'none'}"
             + (f", api-int host {host}" if host else "") + ")"]
    if nets.machine_source:
        parts.append(nets.machine_source)
    return value, "; ".join(parts), ""


# install-config `platform` keys -> the Infrastructure platform type the network operator reads
_INSTALL_PLATFORMS = {"aws": "AWS", "azure": "Azure", "gcp": "GCP", "openstack": "OpenStack",
                      "baremetal": "BareMetal", "vsphere": "VSphere", "nutanix": "Nutanix",
                      "ibmcloud": "IBMCloud", "powervs": "PowerVS", "external": "External",
                      "none": "None"}


def install_config_networks(obj: K8sObject) -> ClusterNetworks | None:
    """The networks an install-config installs its cluster with (``networking``: the
    service and cluster networks, the machine networks or the legacy machineCIDR)."""
    networking = _mapping(obj.body.get("networking"))
    service = cidrs(networking.get("serviceNetwork"), None)
    pod = cidrs(networking.get("clusterNetwork"))
    if not service or not pod:
        return None
    machine = tuple(dict.fromkeys((*cidrs([networking.get("machineCIDR")], None),
                                   *cidrs(networking.get("machineNetwork")))))
    return ClusterNetworks(service, pod, first_host(service[0]), f"{obj.ref} networking",
                           machine=machine,
                           machine_source=f"{obj.ref} networking.machineNetwork" if machine else "")


def install_config_computed_no_proxy(obj: K8sObject) -> tuple[str, str, str]:
    """(noProxy, what it was computed from, '') of the Proxy status the cluster an
    install-config installs will have: the network operator computes it from the proxy the
    installer writes and the cluster's networks, api-int host and platform, all of which the
    install-config states (hcpscan.model.computed_noproxy); ('', '', why not) otherwise."""
    proxy = _mapping(obj.body.get("proxy"))
    if not (proxy.get("httpProxy") or proxy.get("httpsProxy")):
        return "", "", "the install-config sets no httpProxy or httpsProxy: nothing is computed"
    nets = install_config_networks(obj)
    if nets is None:
        return "", "", (f"{obj.ref} states no networking.serviceNetwork and clusterNetwork "
                        "(the installer's defaults then apply)")
    name = _mapping(obj.body.get("metadata")).get("name")
    domain = obj.body.get("baseDomain")
    host = f"api-int.{name}.{domain}" if isinstance(name, str) and name and \
        isinstance(domain, str) and domain else ""
    platforms = [k for k in _mapping(obj.body.get("platform")) if isinstance(k, str)]
    kind = _INSTALL_PLATFORMS.get(platforms[0], platforms[0]) if len(platforms) == 1 else ""
    settings = _mapping(_mapping(obj.body.get("platform")).get(platforms[0])) \
        if len(platforms) == 1 else {}
    user = proxy.get("noProxy")
    value = openshift_no_proxy(
        machine=nets.machine, api_internal_host=host, service=nets.service, cluster=nets.pod,
        platform=kind, aws_region=str(settings.get("region") or "") if kind == "AWS" else "",
        azure_cloud=str(settings.get("cloudName") or "AzurePublicCloud") if kind == "Azure"
        else "", user=user if isinstance(user, str) else None)
    return value, (f"{obj.ref} networking, platform {kind or 'none'}"
                   + (f" and api-int host {host}" if host else "")), ""


def install_config(inventory: Inventory, cluster: str) -> tuple[dict[str, Any], str] | None:
    """The install-config an OpenShift cluster was installed with, and where it was read: the
    InstallConfig the inventory found in its ConfigMap kube-system/cluster-config-v1."""
    namespace, name, key = INSTALL_CONFIG_CONFIGMAP
    for obj in inventory.of_kind(INSTALL_CONFIG_KIND):
        held = obj.origin
        if obj.cluster == cluster and held is not None and held.kind == "ConfigMap" and (
                held.namespace, held.name) == (namespace, name):
            return obj.body, f"{held.ref} data.{key}"
    return None


# The kinds ``openshift_networks`` reads (the Network config, the install-config, the
# default/kubernetes Service): a rule judging by a cluster's networks reads them besides
# its own kinds, so that run alone (`--select`) it judges what a whole scan judges.
OPENSHIFT_NETWORK_READS = ("Network", INSTALL_CONFIG_KIND, "Service")


def openshift_networks(inventory: Inventory, cluster: str) -> ClusterNetworks | None:
    """An OpenShift cluster's networks: service and pod networks from the
    ``config.openshift.io`` Network (status, else spec), machine networks from its
    install-config."""
    installed = install_config(inventory, cluster)
    networking = _mapping(installed[0].get("networking")) if installed else {}
    # machineNetwork, and the legacy machineCIDR an install-config of a cluster installed
    # before machineNetwork keeps (the network operator reads both into noProxy)
    machine = tuple(dict.fromkeys((*cidrs([networking.get("machineCIDR")], None),
                                   *cidrs(networking.get("machineNetwork")))))
    machine_source = installed[1] if installed and machine else ""
    for net in inventory.of_kind("Network"):
        if net.cluster != cluster or net.group != "config.openshift.io" or net.name != "cluster":
            continue
        for part in ("status", "spec"):
            block = _mapping(net.body.get(part))
            service = cidrs(block.get("serviceNetwork"), None)
            pod = cidrs(block.get("clusterNetwork"))
            if service or pod:
                kas = inventory.get("Service", "default", "kubernetes", cluster)
                kas_ip = kas.get("spec.clusterIP") if kas is not None else None
                return ClusterNetworks(service, pod, kas_ip or (first_host(service[0])
                                                                if service else None),
                                       f"{net.ref} {part}", machine=machine,
                                       machine_source=machine_source)
    return None


def hosted_cluster_networks(obj: K8sObject) -> ClusterNetworks | None:
    hc = hosted_cluster(obj)
    service, pod = hc.service_networks, hc.cluster_networks
    if not service and not pod:
        return None
    return ClusterNetworks(service, pod, first_host(service[0]) if service else None,
                           f"{obj.ref} spec.networking", machine=hc.machine_networks,
                           machine_source=f"{obj.ref} spec.networking.machineNetwork"
                           if hc.machine_networks else "")


# -- Cluster API ------------------------------------------------------------------------------


def _infrastructure(inventory: Inventory, cluster: K8sObject) -> K8sObject | None:
    ref = _mapping(_mapping(cluster.body.get("spec")).get("infrastructureRef"))
    kind, name = ref.get("kind"), ref.get("name")
    if not isinstance(kind, str) or not isinstance(name, str):
        return None
    namespace = ref.get("namespace")
    if not isinstance(namespace, str):
        namespace = cluster.namespace
    return inventory.get(kind, namespace, name, cluster.cluster)


def infrastructure_network(infra: K8sObject) -> InfrastructureNetwork | None:
    """The node network a Cluster API infrastructure object states: an AWSCluster's VPC
    (and subnets), a VCDCluster's OVDC network (named, never with its CIDR)."""
    spec = _mapping(infra.body.get("spec"))
    if infra.kind == "AWSCluster":
        net = _mapping(spec.get("network"))
        vpc = network(_mapping(net.get("vpc")).get("cidrBlock"))
        if vpc:
            return InfrastructureNetwork((vpc,), f"{infra.ref} spec.network.vpc.cidrBlock")
        subnets = cidrs(net.get("subnets"), "cidrBlock")
        if subnets:
            return InfrastructureNetwork(subnets, f"{infra.ref} spec.network.subnets[].cidrBlock")
    if infra.kind == "VCDCluster" and isinstance(spec.get("ovdcNetwork"), str):
        return InfrastructureNetwork((), "", f"{infra.ref} spec.ovdcNetwork "
                                             f"{spec['ovdcNetwork']} (a name; VCD keeps its CIDR)")
    return None


def _capi_networks(inventory: Inventory, cluster: K8sObject) -> ClusterNetworks | None:
    spec = _mapping(cluster.body.get("spec"))
    cluster_network = _mapping(spec.get("clusterNetwork"))
    service = cidrs(_mapping(cluster_network.get("services")).get("cidrBlocks"), None)
    pod = cidrs(_mapping(cluster_network.get("pods")).get("cidrBlocks"), None)
    infra = _infrastructure(inventory, cluster)
    node_net = infrastructure_network(infra) if infra is not None else None
    machine = node_net.cidrs if node_net else ()
    if not service and not pod:
        values = _values_networks(inventory, cluster.namespace, cluster.name, cluster.cluster)
        if values is None:
            return None
        service, pod, source = values.service, values.pod, values.source
    else:
        source = f"{cluster.ref} spec.clusterNetwork"
    endpoint, endpoint_source = control_plane_endpoint(cluster, infra)
    infra_kind = infra.kind if infra is not None else str(
        _mapping(spec.get("infrastructureRef")).get("kind") or "")
    cloud = infra_kind in CAPI_METADATA_INFRASTRUCTURE
    return ClusterNetworks(service, pod, first_host(service[0]) if service else None, source,
                           str(cluster_network.get("serviceDomain") or "cluster.local"),
                           machine=machine, machine_source=node_net.source if node_net and machine else "",
                           endpoint=endpoint, endpoint_source=endpoint_source,
                           metadata=METADATA_ADDRESS if cloud else None,
                           metadata_source=f"{cluster.ref} spec.infrastructureRef kind {infra_kind}"
                           if cloud else "")


def control_plane_endpoint(cluster: K8sObject, infra: K8sObject | None) -> tuple[str | None, str]:
    """(``https://host:port``, where it was read) of a Cluster API cluster: the Cluster's
    ``spec.controlPlaneEndpoint``, else its infrastructure cluster's (which the Cluster
    copies; CAPI's contract), or (None, '') when neither states a host."""
    for obj in (cluster, infra):
        point = _mapping(_mapping(obj.body.get("spec")).get("controlPlaneEndpoint")) \
            if obj is not None else {}
        host = point.get("host")
        if isinstance(host, str) and host.strip():
            port = point.get("port")
            port = int(port) if isinstance(port, str) and port.isdigit() else port
            host = host.strip()
            shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
            url = f"https://{shown}:{port}" if isinstance(port, int) and 0 < port < 65536 else \
                f"https://{shown}:6443"
            return url, f"{obj.ref} spec.controlPlaneEndpoint"  # type: ignore[union-attr]
    return None, ""


def _values_networks(inventory: Inventory, namespace: str, cluster_name: str,
                     cluster: str) -> ClusterNetworks | None:
    """Giant Swarm ``<cluster>-cluster-values`` ConfigMap: ``kubernetes.API.clusterIPRange``
    and ``calico.CIDR`` (seed 003)."""
    cm = inventory.get("ConfigMap", namespace, cluster_name + VALUES_SUFFIX, cluster)
    text = _mapping(cm.body.get("data")).get("values") if cm is not None else None
    if cm is None or not isinstance(text, str):
        return None
    try:
        values = load_one(text)
    except YamlSyntaxError:
        return None
    if not isinstance(values, dict):
        return None
    api = _mapping(_mapping(values.get("kubernetes")).get("API"))
    calico = _mapping(values.get("calico"))
    service = tuple(x for x in [api.get("clusterIPRange")] if isinstance(x, str))
    pod = tuple(x for x in [calico.get("CIDR")] if isinstance(x, str))
    if not service and not pod:
        return None
    return ClusterNetworks(service, pod, first_host(service[0]) if service else None,
                           f"{cm.ref} data.values")


def _node_pool(obj: K8sObject) -> NodePool:
    spec = _mapping(obj.body.get("spec"))
    platform = _mapping(spec.get("platform"))
    kubevirt = _mapping(platform.get("kubevirt"))
    attach = kubevirt.get("attachDefaultNetwork")
    extra = kubevirt.get("additionalNetworks")
    if not isinstance(extra, list):
        extra = []
    return NodePool(obj, str(spec.get("clusterName") or ""), str(platform.get("type") or ""),
                    attach if isinstance(attach, bool) else None,
                    tuple(str(n["name"]) for n in extra if isinstance(n, dict)
                          and isinstance(n.get("name"), str)))


# -- whose networks ---------------------------------------------------------------------------

# Kinds whose proxy settings belong to a Cluster API cluster's nodes.
_CAPI_SETTINGS_KINDS = ("KubeadmConfig", "KubeadmConfigTemplate", "KubeadmControlPlane",
                        "KubeadmControlPlaneTemplate", "HelmRelease", "Secret", "ConfigMap",
                        "VCDCluster")


def networks_for(inventory: Inventory, obj: K8sObject) -> ClusterNetworks | None:
    """The networks of the cluster whose clients use ``obj``'s proxy settings."""
    if obj.kind in HOSTED_KINDS:
        return hosted_cluster_networks(obj)
    if obj.cluster != MANAGEMENT:  # a guest cluster of a hypershift dump
        hosted = hosted_cluster_of_guest(inventory, obj.cluster)
        found = hosted_cluster_networks(hosted.obj) if hosted is not None else None
        return found if found is not None else openshift_networks(inventory, obj.cluster)
    owner = capi_cluster_of(inventory, obj) if obj.kind in _CAPI_SETTINGS_KINDS else None
    capi_name = owner[0] if owner else None
    if capi_name:
        for capi in scan_model(inventory).capi_clusters:
            if (capi.obj.namespace, capi.name, capi.obj.cluster) == (obj.namespace, capi_name,
                                                                     obj.cluster):
                return capi.networks
        return _values_networks(inventory, obj.namespace, capi_name, obj.cluster)
    found = openshift_networks(inventory, obj.cluster)
    if found is None and obj.kind == INSTALL_CONFIG_KIND:  # a cluster still to install
        return install_config_networks(obj)
    return found


# The annotation kubeadm writes on the kube-apiserver static pod (kubeadm's constants:
# KubeAPIServerAdvertiseAddressEndpointAnnotationKey), host:port.
KUBEADM_ADVERTISE_ANNOTATION = "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint"


def kube_apiserver_networks(obj: K8sObject, container: str) -> ClusterNetworks | None:
    """The networks a kube-apiserver container states in its own flags, for when no Cluster,
    Network or values in the input give the cluster's: ``--service-cluster-ip-range`` (the
    kubernetes Service's IP is its first address) and its own address,
    ``--advertise-address`` (else kubeadm's annotation) on ``--secure-port`` (6443). None
    when ``container`` is no kube-apiserver with a service range."""
    spec = obj.body.get("spec") if obj.kind == "Pod" else (
        _mapping(_mapping(obj.body.get("spec")).get("template")).get("spec"))
    found = next((c for c in _mapping(spec).get("containers") or []
                  if isinstance(c, dict) and c.get("name") == container), None)
    if found is None:
        return None
    words = [str(w) for w in (found.get("command") or []) + (found.get("args") or [])
             if isinstance(w, (str, int))] if isinstance(found.get("command") or [], list) \
        and isinstance(found.get("args") or [], list) else []
    program = words[0].rsplit("/", 1)[-1] if words else ""
    if program != "kube-apiserver" and container != "kube-apiserver":
        return None
    flags = _flags(words)
    service = tuple(dict.fromkeys(n for n in (network(t) for t in
                                              flags.get("--service-cluster-ip-range", "").split(","))
                                  if n is not None))
    if not service:
        return None
    where = f"{obj.ref} container {container}"
    port = flags.get("--secure-port", "6443")
    host, endpoint_source = flags.get("--advertise-address", ""), f"{where} --advertise-address"
    if not host:
        annotated = str(obj.metadata.get("annotations", {}).get(KUBEADM_ADVERTISE_ANNOTATION)
                        or "") if isinstance(obj.metadata.get("annotations"), dict) else ""
        host, _, port = annotated.rpartition(":") if ":" in annotated else (annotated, "", port)
        endpoint_source = f"{obj.ref} annotation {KUBEADM_ADVERTISE_ANNOTATION}"
    host = host.strip("[]")
    endpoint = (f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}") \
        if host else None
    return ClusterNetworks(service, (), first_host(service[0]),
                           f"{where} --service-cluster-ip-range", endpoint=endpoint,
                           endpoint_source=endpoint_source if endpoint else "",
                           endpoint_label="its advertise address",
                           endpoint_dialers="kubeadm's HTTPProxy preflight check warns when the "
                                            "API server's own address goes through a proxy")


def _flags(words: list[str]) -> dict[str, str]:
    """``--name=value`` and ``--name value`` words of a command line (the last one wins)."""
    out: dict[str, str] = {}
    for i, word in enumerate(words):
        if not word.startswith("--"):
            continue
        name, sep, value = word.partition("=")
        if not sep and i + 1 < len(words) and not words[i + 1].startswith("--"):
            value = words[i + 1]
        out[name] = value
    return out

