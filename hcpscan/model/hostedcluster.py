"""HyperShift's HostedCluster in domain terms: where its control plane runs, how each
service is published, which networks it uses and which port its API server listens on.

Facts from DOMAIN.md §2-3 (hypershift support/config/constants.go and
hostedcluster/network_policies.go)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hcpscan.inventory import Inventory, K8sObject
from hcpscan.model.computed_noproxy import hypershift_no_proxy
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.networks import cidrs as _cidrs

HOSTED_CLUSTER = "HostedCluster"
NODE_POOL = "NodePool"
# The HyperShift operator copies a HostedCluster's configuration into a HostedControlPlane of
# the same name in its HCP namespace (hostedcluster_controller.go, reconcileHostedControlPlane).
# A dump of the HCP namespace alone (`oc adm inspect ns/clusters-<name>`) holds only that copy:
# it stands in for its HostedCluster (``hosted_clusters``), with the differences below.
HOSTED_CONTROL_PLANE = "HostedControlPlane"
HOSTED_KINDS = (HOSTED_CLUSTER, HOSTED_CONTROL_PLANE)
# A kind that stands in for another when that one is not in the input.
STANDS_IN_FOR = {HOSTED_CONTROL_PLANE: HOSTED_CLUSTER}
# The annotation naming the HostedCluster (`<namespace>/<name>`) a HostedControlPlane copies.
HOSTED_CLUSTER_ANNOTATION = "hypershift.openshift.io/cluster"

# The port the API server pods listen on (container port ``client``) unless
# spec.networking.apiServer.port says otherwise (hypershift support/netutil KASPodPort:
# 6443; a port of 443 is never bound, the pods stay on 6443). IBM Cloud's is 2040: the
# HyperShift operator's ``kas`` NetworkPolicy admits 2040 there (KASSVCIBMCloudPort).
KAS_PORT_BY_PLATFORM = {"IBMCloud": 2040}
DEFAULT_KAS_PORT = 6443
# The port of the LoadBalancer Service that publishes the API server, where it is not
# the pods' (support/config/constants.go): Azure's 7443 (KASSVCLBAzurePort, "6443 collides
# with the public LB rule for the management cluster"; kube-apiserverlb or
# kube-apiserver-private, targetPort ``client``), IBM Cloud's 2040. Elsewhere 6443
# (KASSVCPort), whatever spec.networking.apiServer.port says.
# Azure's only when the APIServer is published as a LoadBalancer and the platform is Azure
# or the cluster is annotated as managed from Azure (KubeVirt on an Azure management
# cluster; control-plane-operator hostedcontrolplane/infra/infra.go): ``kas_service_port``.
KAS_SERVICE_PORT_BY_PLATFORM = {"Azure": 7443, "IBMCloud": 2040}
# The management cluster's platform, which the HyperShift operator writes on every
# HostedCluster (and passes to its HostedControlPlane) from its Infrastructure's status.
MANAGEMENT_PLATFORM_ANNOTATION = "hypershift.openshift.io/management-platform"

# The address the node-local haproxy (kube-system/kube-apiserver-proxy) serves the API server on,
# unless spec.networking.apiServer.advertiseAddress says otherwise; IPv6 when the first service
# network is IPv6 (hypershift support/config/constants.go, GetAdvertiseAddress).
DEFAULT_ADVERTISE_IPV4 = "172.20.0.1"
DEFAULT_ADVERTISE_IPV6 = "fd00::1"
# The private DNS zone HyperShift names private endpoints in (api.<name>.hypershift.local).
HYPERSHIFT_LOCAL_DOMAIN = "hypershift.local"


# Control-plane workloads whose traffic to the outside goes through the data plane to the hosted
# cluster's proxy (seed 000: Control Plane Operator, Ingress Operator, OAuth server, OpenShift API
# server), each with a konnectivity proxy sidecar.
DATA_PLANE_PROXY_WORKLOADS = ("control-plane-operator", "ingress-operator", "oauth-openshift",
                              "openshift-apiserver")
# Those of them that reach the data plane through a konnectivity sidecar or proxy env. The
# control-plane-operator dials through konnectivity in process: the HyperShift operator renders
# it with no sidecar and only the management cluster's proxy env, which it lacks when the
# management cluster has no proxy (reconcileControlPlaneOperatorDeployment), so its carrying no
# proxy says nothing (PRX017 judges its management proxy env).
SIDECAR_PROXY_WORKLOADS = tuple(w for w in DATA_PLANE_PROXY_WORKLOADS
                                if w != "control-plane-operator")
# Control-plane workloads given the management cluster's proxy env (seed 000: "Control plane
# deployments that need external access are configured with the proxy environment variables of
# the management cluster"), and the container that gets it. As HyperShift renders them: every
# control-plane-operator component whose container it passes to proxy.SetEnvVars
# (control-plane-operator/controllers/hostedcontrolplane/v2/*/deployment.go; capi-provider's
# first container, ignition-server-proxy's haproxy, aws-cloud-controller-manager's
# cloud-controller-manager); cluster-storage-operator only since HyperShift PR 9256
# (OCPBUGS-105282, Aug 2026: before it, its CSI driver operators could not reach the cloud
# API); and cloud-network-config-controller, which the cluster-network-operator renders with
# the MGMT_HTTP(S)_PROXY/MGMT_NO_PROXY HyperShift hands it (CNO pkg/network/cloud_network.go,
# PR 1576, OCPBUGS-1736). The CSI controllers the storage operators start are theirs, not
# HyperShift's: not listed. The konnectivity sidecar that connects directly to cloud APIs
# (support/controlplane-component/konnectivity-container.go, ConnectDirectlyToCloudAPIs:
# ingress-operator's and oauth-openshift's konnectivity-proxy-https) gets it since HyperShift
# commit c41b56cbc7 (May 2026): before it, their cloud API calls went without the proxy.
MANAGEMENT_PROXY_WORKLOADS = {
    "capi-provider": "manager",
    "aws-cloud-controller-manager": "cloud-controller-manager",
    "cloud-credential-operator": "cloud-credential-operator",
    "cloud-network-config-controller": "controller",
    "cluster-image-registry-operator": "cluster-image-registry-operator",
    "cluster-storage-operator": "cluster-storage-operator",
    "control-plane-operator": "control-plane-operator",
    "control-plane-pki-operator": "control-plane-pki-operator",
    "hosted-cluster-config-operator": "hosted-cluster-config-operator",
    "ingress-operator": "konnectivity-proxy-https",
    "ignition-server": "ignition-server",
    "ignition-server-proxy": "haproxy",
    "karpenter": "karpenter",
    "karpenter-operator": "karpenter-operator",
    "kube-apiserver": "kube-apiserver",
    "kube-controller-manager": "kube-controller-manager",
    "oauth-openshift": "konnectivity-proxy-https",
}

# Who gives each of those workloads the management proxy, which is where a missing one is
# fixed: the HyperShift operator renders capi-provider and control-plane-operator with the
# HTTP(S)_PROXY/NO_PROXY of its own environment; every other one is rendered by that
# control-plane-operator, whose proxy.SetEnvVars copies the control-plane-operator's own
# environment (os.Getenv) into it (cloud-network-config-controller through the network
# operator it hands them to).
RENDERED_BY_HYPERSHIFT_OPERATOR = frozenset({"capi-provider", "control-plane-operator"})


def management_proxy_fix(workload: str, namespace: str) -> str:
    """Where a control-plane workload's missing management proxy comes from, as a fix says."""
    operator = ("the HyperShift operator's own HTTP_PROXY, HTTPS_PROXY and NO_PROXY (the "
                "operator Deployment in the hypershift namespace, which copies the management "
                "cluster's Proxy when installed: set the Proxy, then reinstall or restart it)")
    if workload in RENDERED_BY_HYPERSHIFT_OPERATOR:
        return (f"{workload} is rendered by the HyperShift operator with {operator}; a manual "
                "edit is reverted on reconcile.")
    return (f"{workload} gets the management proxy from the control-plane-operator, which "
            "copies its own environment into it: check HTTP_PROXY and HTTPS_PROXY on the "
            f"control-plane-operator Deployment in {namespace} (`oc -n {namespace} get "
            "deployment control-plane-operator -o yaml`); that Deployment gets them from "
            f"{operator}. A manual edit of {workload} is reverted on reconcile.")


# The NodePool's ignition pointer stub: Secret user-data-<nodepool>-<hash> in the HCP namespace.
USER_DATA_PREFIX = "user-data-"


def is_user_data(obj: K8sObject) -> bool:
    return obj.kind == "Secret" and obj.name.startswith(USER_DATA_PREFIX)


def hcp_namespace(namespace: str, name: str) -> str:
    """`<hostedcluster.namespace>-<hostedcluster.name>`, dots become dashes."""
    return f"{namespace}-{name}".replace(".", "-")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class Publishing:
    service: str  # APIServer, OAuthServer, OIDC, Konnectivity, Ignition, OVNSbDb
    type: str  # LoadBalancer, NodePort, Route, None, S3
    index: int  # position in spec.services, for field paths
    node_port: int | None = None
    address: str | None = None
    route_hostname: str | None = None  # route.hostname: the Route's own DNS name

    @property
    def field(self) -> str:
        return f"spec.services[{self.index}].servicePublishingStrategy"


@dataclass(slots=True)
class HostedCluster:
    obj: K8sObject
    platform: str
    publishing: dict[str, Publishing] = field(default_factory=dict)
    cluster_networks: tuple[str, ...] = ()
    service_networks: tuple[str, ...] = ()
    machine_networks: tuple[str, ...] = ()
    api_server_port: int | None = None
    allowed_cidrs: tuple[str, ...] = ()
    advertise_address_set: str | None = None  # spec.networking.apiServer.advertiseAddress

    @property
    def advertise_address(self) -> tuple[str, str]:
        """(address, where it comes from): the address every node reaches its API server on,
        through the node-local haproxy. Its clients (kubelet, CRI-O, the ignition fetch) take
        the hosted cluster's proxy env, so it must go direct."""
        if self.advertise_address_set:
            return self.advertise_address_set, "spec.networking.apiServer.advertiseAddress"
        ipv6 = bool(self.service_networks) and ":" in self.service_networks[0]
        return ((DEFAULT_ADVERTISE_IPV6, "HyperShift's default for an IPv6 service network")
                if ipv6 else (DEFAULT_ADVERTISE_IPV4, "HyperShift's default advertise address"))

    @property
    def name(self) -> str:
        return self.obj.name

    @property
    def stand_in(self) -> bool:
        """Whether a HostedControlPlane stands in for its HostedCluster (not in the input)."""
        return self.obj.kind == HOSTED_CONTROL_PLANE

    @property
    def namespace(self) -> str:
        """The HostedCluster's namespace (where its NodePools are). A HostedControlPlane
        names it in its ``hypershift.openshift.io/cluster`` annotation; without one it is
        the HCP namespace less ``-<name>``."""
        if not self.stand_in:
            return self.obj.namespace
        key = _hosted_cluster_key(self.obj)
        return key[0] if key is not None else self.obj.namespace  # unknown: its own, as a key

    @property
    def label(self) -> str:
        """What the input holds for this cluster: ``HostedCluster ns/name``, or
        ``HostedControlPlane ns/name`` for a stand-in (never a HostedCluster not in it)."""
        return f"{self.obj.kind} {self.obj.namespace}/{self.obj.name}"

    @property
    def namespace_not_read(self) -> str:
        """That the control plane's workloads are not in the input: its HCP namespace is
        not (a HostedCluster from Git), or holds no workload (a HostedControlPlane's dump
        without them)."""
        if self.stand_in:
            return f"the workloads of HCP namespace {self.control_plane_namespace} are not in the input"
        return f"HCP namespace {self.control_plane_namespace} is not in the input"

    @property
    def source_label(self) -> str:
        """The HostedCluster a change is made on: this one, or the one a stand-in copies
        (the operator undoes an edit of the HostedControlPlane), unnamed when not known."""
        if self.stand_in and _hosted_cluster_key(self.obj) is None:
            return unknown_hosted_cluster(self.obj, why=False)
        return f"HostedCluster {self.namespace}/{self.name}"

    @property
    def control_plane_namespace(self) -> str:
        if self.stand_in:  # a HostedControlPlane lives in its HCP namespace
            return self.obj.namespace
        return hcp_namespace(self.obj.namespace, self.obj.name)

    @property
    def kas_port(self) -> int:
        """The port the API server pods listen on: what policies in the HCP namespace
        must admit (flows' ``port: kas`` on the kube-apiserver workload)."""
        if self.api_server_port and self.api_server_port != 443:
            return self.api_server_port
        return KAS_PORT_BY_PLATFORM.get(self.platform, DEFAULT_KAS_PORT)

    @property
    def kas_service_port(self) -> int:
        """The port the Service publishing the API server listens on: Azure's 7443 when the
        APIServer is published as a LoadBalancer on Azure or from an Azure management
        cluster (the annotation ``hypershift.openshift.io/management-platform: Azure``),
        IBM Cloud's 2040, else 6443 (HyperShift's KASSVCPort)."""
        azure = self.platform == "Azure" or \
            self.obj.annotations.get(MANAGEMENT_PLATFORM_ANNOTATION) == "Azure"
        if azure and self.published_as("APIServer") == "LoadBalancer":
            return KAS_SERVICE_PORT_BY_PLATFORM["Azure"]
        return KAS_SERVICE_PORT_BY_PLATFORM.get(self.platform, DEFAULT_KAS_PORT) \
            if self.platform != "Azure" else DEFAULT_KAS_PORT

    @property
    def kas_local_port(self) -> int:
        """The port the node-local haproxy (kube-system/kube-apiserver-proxy) listens on at
        the advertise address: spec.networking.apiServer.port as written (443 included),
        else 6443 (hypershift nodepool apiserver-haproxy, haproxyFrontendListenPort)."""
        return self.api_server_port or DEFAULT_KAS_PORT

    def published_as(self, service: str) -> str | None:
        strategy = self.publishing.get(service)
        return strategy.type if strategy else None

    @property
    def proxy(self) -> dict[str, Any]:
        proxy = self.obj.get("spec.configuration.proxy")
        return proxy if isinstance(proxy, dict) else {}

    @property
    def computed_no_proxy(self) -> str:
        """The noProxy HyperShift hands the hosted cluster's components and nodes when a
        proxy is set (hcpscan.model.computed_noproxy, support/globalconfig/proxy.go)."""
        user = self.proxy.get("noProxy")
        return self.computed_no_proxy_with(user if isinstance(user, str) else None)

    def computed_no_proxy_with(self, user: str | None) -> str:
        """The noProxy HyperShift would compute were ``spec.configuration.proxy.noProxy``
        ``user`` (what a fix of the user's value leads to)."""
        return hypershift_no_proxy(self.machine_networks, self.cluster_networks,
                                   self.service_networks, self.platform,
                                   str(self.obj.get("spec.platform.aws.region") or ""), user)


def hosted_cluster(obj: K8sObject) -> HostedCluster:
    """The HostedCluster ``obj`` declares, read once per object (rules ask it per subject
    and per flow; nothing changes a HostedCluster once read)."""
    found = obj._cache.get("hosted-cluster")
    if found is None:
        found = obj._cache["hosted-cluster"] = _read_hosted_cluster(obj)
    return found  # type: ignore[no-any-return]


def _read_hosted_cluster(obj: K8sObject) -> HostedCluster:
    spec = _mapping(obj.body.get("spec"))
    platform = _mapping(spec.get("platform")).get("type") or "None"
    if obj.kind == HOSTED_CONTROL_PLANE and platform == "None" and \
            isinstance(_mapping(spec.get("platform")).get("agent"), dict):
        # the operator writes an Agent HostedCluster's platform type None on its
        # HostedControlPlane and copies the rest of spec.platform, agent included
        platform = "Agent"
    publishing: dict[str, Publishing] = {}
    services = spec.get("services")
    if not isinstance(services, list):
        services = []
    for i, entry in enumerate(services):
        if not isinstance(entry, dict):
            continue
        strategy = _mapping(entry.get("servicePublishingStrategy"))
        node_port = _mapping(strategy.get("nodePort"))
        hostname = _mapping(strategy.get("route")).get("hostname")
        publishing[str(entry.get("service"))] = Publishing(
            service=str(entry.get("service")), type=str(strategy.get("type", "None")), index=i,
            node_port=node_port.get("port") if isinstance(node_port.get("port"), int) else None,
            address=node_port.get("address") if isinstance(node_port.get("address"), str) else None,
            route_hostname=hostname if isinstance(hostname, str) and hostname else None)
    networking = _mapping(spec.get("networking"))
    api_server = _mapping(networking.get("apiServer"))
    return HostedCluster(
        obj=obj, platform=str(platform), publishing=publishing,
        cluster_networks=_cidrs(networking.get("clusterNetwork")),
        service_networks=_cidrs(networking.get("serviceNetwork")),
        machine_networks=_cidrs(networking.get("machineNetwork")),
        api_server_port=api_server.get("port") if type(api_server.get("port")) is int else None,
        advertise_address_set=(str(api_server["advertiseAddress"]).strip() or None
                               if isinstance(api_server.get("advertiseAddress"), str) else None),
        allowed_cidrs=tuple(c for c in api_server.get("allowedCIDRBlocks") or []
                            if isinstance(c, str)) if isinstance(api_server.get("allowedCIDRBlocks"),
                                                                  list) else (),
    )


GUEST_PREFIX = "hostedcluster-"  # a hypershift dump's guest cluster folder (DOMAIN.md §8)


def hosted_cluster_of_guest(inventory: Inventory, cluster: str) -> HostedCluster | None:
    """The HostedCluster whose guest cluster a ``hypershift dump`` holds as ``cluster``."""
    if not cluster.startswith(GUEST_PREFIX):
        return None
    return inventory.derived("hosted-clusters-by-name", _by_name).get(
        cluster.removeprefix(GUEST_PREFIX))


def _by_name(inventory: Inventory) -> dict[str, HostedCluster]:
    index: dict[str, HostedCluster] = {}
    for hc in hosted_clusters(inventory):
        if hc.obj.cluster == "management":
            index.setdefault(hc.name, hc)  # the first wins, as the query's first did
    return index


GUEST_KINDS = ("Infrastructure", "Endpoints", "EndpointSlice")  # the objects that can tell


def guest_of(inventory: Inventory, subject: K8sObject) -> tuple[str, HostedCluster | None]:
    """Whether the cluster of ``subject`` is a hosted cluster's guest (its API server runs
    outside it, in an HCP namespace): (why, its HostedCluster if the input holds it), or
    ('', None) when it is not or ``subject`` is not the object that answers for its cluster.

    One answer per cluster, at its ``Infrastructure cluster`` when the input holds one, else
    at its ``default/kubernetes`` Endpoints, else at that Service's EndpointSlice. A cluster
    is a guest when its Infrastructure says ``status.controlPlaneTopology: External`` (what a
    hosted cluster reports); when no Infrastructure status says either way, when it is a
    hypershift dump's ``hostedcluster-<name>`` folder, or when its ``default/kubernetes``
    endpoints are as HyperShift's hosted-cluster-config-operator writes them: one address,
    the node-local API server proxy's advertise address (172.20.0.1, fd00::1, or a
    HostedCluster's ``spec.networking.apiServer.advertiseAddress``), where a standalone
    cluster lists its control-plane nodes. (HyperShift puts no label of its own there: the
    ``endpointslice.kubernetes.io/skip-mirror`` label is the same on every cluster.)"""
    cluster = subject.cluster
    infra = inventory.get("Infrastructure", "", "cluster", cluster)
    if subject is not (infra if infra is not None else _kas_endpoints(inventory, cluster)):
        return "", None
    hc = hosted_cluster_of_guest(inventory, cluster)
    status = infra.body.get("status") if infra is not None else None
    topology = status.get("controlPlaneTopology") if isinstance(status, dict) else None
    if topology == "External":
        return f"{infra.ref} status.controlPlaneTopology is External", hc  # type: ignore[union-attr]
    if topology is not None:
        return "", None  # the cluster says where its API server runs
    if cluster.startswith(GUEST_PREFIX):
        return f"the guest cluster folder {cluster} of a hypershift dump", hc
    address = _node_local_kas(inventory, cluster)
    if address:
        return (f"the default/kubernetes endpoints point at {address} only, the node-local API "
                "server proxy HyperShift writes there for a hosted cluster"), hc
    return "", None


def _kas_endpoints(inventory: Inventory, cluster: str) -> K8sObject | None:
    """The guest's ``default/kubernetes`` Endpoints, else its EndpointSlice."""
    found = inventory.get("Endpoints", "default", "kubernetes", cluster)
    if found is not None:
        return found
    return next((o for o in inventory.query("EndpointSlice", namespace="default", cluster=cluster)
                 if o.labels.get("kubernetes.io/service-name") == "kubernetes"), None)


def _node_local_kas(inventory: Inventory, cluster: str) -> str:
    """The advertise address the cluster's ``default/kubernetes`` endpoints hold, when they
    hold that one address and nothing else ('' otherwise)."""
    from hcpscan.model.destinations import management_kas_endpoints

    found = management_kas_endpoints(inventory, cluster)
    if found is None:
        return ""
    advertised = {DEFAULT_ADVERTISE_IPV4, DEFAULT_ADVERTISE_IPV6} | {
        hc.advertise_address_set for hc in hosted_clusters(inventory) if hc.advertise_address_set}
    shown = found.cidrs()
    for address in sorted(advertised) if len(shown) == 1 else ():
        try:
            if IPSpace.from_cidrs([address]).cidrs() == shown:
                return address
        except ValueError:  # an advertiseAddress that is no address advertises nothing
            continue
    return ""


def hosted_clusters(inventory: Inventory) -> list[HostedCluster]:
    """Every hosted cluster the input declares: each HostedCluster, and each
    HostedControlPlane whose HostedCluster is not in the input (it stands in)."""
    return list(inventory.derived("hosted-clusters", _hosted_clusters))


def _hosted_clusters(inventory: Inventory) -> list[HostedCluster]:
    found = [hosted_cluster(o) for o in inventory.of_kind(HOSTED_CLUSTER)]
    return found + [hosted_cluster(o) for o in inventory.of_kind(HOSTED_CONTROL_PLANE)
                    if _copied_from(inventory, o) is None]


def copied_from(obj: K8sObject) -> tuple[str | None, str] | None:
    """(namespace, name) of the HostedCluster the HyperShift operator reconciles ``obj``
    from, when ``obj`` is a HostedControlPlane: a change made to it is undone, so it is
    made on that HostedCluster (the fields a fix changes have the same paths there). The
    namespace is None when nothing says it (no annotation, an HCP namespace not
    ``<namespace>-<name>``): the HostedCluster is then the one whose control-plane namespace
    is ``obj``'s (its name is the HostedControlPlane's, as HyperShift names it)."""
    if obj.kind != HOSTED_CONTROL_PLANE:
        return None
    return _hosted_cluster_key(obj) or (None, obj.name)


def unknown_hosted_cluster(hcp: K8sObject, why: bool = True) -> str:
    """How a fix names the HostedCluster of ``hcp`` when its namespace is not known."""
    if not why:
        return f"the HostedCluster whose control-plane namespace is {hcp.namespace}"
    return (f"the HostedCluster whose control-plane namespace is {hcp.namespace} (named "
            f"{hcp.name}; its namespace is in no annotation and {hcp.namespace} is not "
            f"<namespace>-{hcp.name}: `oc get hostedclusters -A` shows it)")


def synced_from(hcp: K8sObject, namespace: str, name: str) -> tuple[str | None, str] | None:
    """(namespace, name) of the ConfigMap the HyperShift operator syncs ConfigMap
    ``namespace/name`` from, when ``hcp`` is a HostedControlPlane and the ConfigMap is in
    its HCP namespace: the ConfigMaps ``spec.configuration`` names (the proxy's trustedCA)
    are copied from the HostedCluster's namespace under the same name, over any edit
    (hostedcluster_controller.go, reconcileGlobalConfigSync). The namespace is None when the
    HostedCluster's is not known (``copied_from``)."""
    source = copied_from(hcp)
    if source is None or namespace != hcp.namespace:
        return None
    return source[0], name


def _hosted_cluster_key(hcp: K8sObject) -> tuple[str, str] | None:
    """(namespace, name) of the HostedCluster ``hcp`` copies: its annotation when it names
    one whose HCP namespace is ``hcp``'s; else the namespace less ``-<name>``; else None
    (not HyperShift's naming: the HostedCluster's namespace is unknown, never guessed)."""
    said = hcp.annotations.get(HOSTED_CLUSTER_ANNOTATION)
    namespace, slash, name = said.partition("/") if isinstance(said, str) else ("", "", "")
    if slash and name == hcp.name and hcp_namespace(namespace, name) == hcp.namespace:
        return namespace, name
    suffix = "-" + hcp.name.replace(".", "-")
    if hcp.namespace.endswith(suffix) and len(hcp.namespace) > len(suffix):
        return hcp.namespace[:-len(suffix)], hcp.name
    return None


def _copied_from(inventory: Inventory, hcp: K8sObject) -> K8sObject | None:
    """The HostedCluster in the input that ``hcp`` is the copy of: same name, and ``hcp``
    in its HCP namespace (the same cluster: it is judged there, once)."""
    return inventory.derived("hosted-clusters-by-copy", _by_copy).get(
        (hcp.cluster, hcp.namespace, hcp.name))


def _by_copy(inventory: Inventory) -> dict[tuple[str, str, str], K8sObject]:
    index: dict[tuple[str, str, str], K8sObject] = {}
    for hc in inventory.of_kind(HOSTED_CLUSTER):
        index.setdefault((hc.cluster, hcp_namespace(hc.namespace, hc.name), hc.name), hc)
    return index


def judged_at(inventory: Inventory, obj: K8sObject) -> K8sObject | None:
    """The object ``obj`` is judged at instead of itself: a HostedControlPlane's
    HostedCluster when the input holds both."""
    return _copied_from(inventory, obj) if obj.kind == HOSTED_CONTROL_PLANE else None



def hosted_cluster_named(inventory: Inventory, cluster: str, namespace: str,
                         name: str) -> HostedCluster | None:
    """The hosted cluster HostedCluster ``namespace/name`` declares (a NodePool's
    ``spec.clusterName`` in its namespace), or the HostedControlPlane standing in for it."""
    return inventory.derived("hosted-clusters-by-ref", _by_ref).get((cluster, namespace, name))


def _by_ref(inventory: Inventory) -> dict[tuple[str, str, str], HostedCluster]:
    index: dict[tuple[str, str, str], HostedCluster] = {}
    for hc in hosted_clusters(inventory):
        index.setdefault((hc.obj.cluster, hc.namespace, hc.name), hc)
    return index


def hosted_cluster_for_namespace(inventory: Inventory, namespace: str,
                                 cluster: str = "management") -> HostedCluster | None:
    """The HostedCluster whose control plane runs in ``namespace``."""
    return inventory.derived("hosted-clusters-by-namespace", _by_control_plane).get(
        (cluster, namespace))


def _by_control_plane(inventory: Inventory) -> dict[tuple[str, str], HostedCluster]:
    index: dict[tuple[str, str], HostedCluster] = {}
    for hc in hosted_clusters(inventory):
        index.setdefault((hc.obj.cluster, hc.control_plane_namespace), hc)  # the first wins
    return index
