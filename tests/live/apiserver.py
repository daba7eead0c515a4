"""A small Kubernetes-API-compatible server for live-scan tests (HTTPS; read-only unless a test
makes resources appliable).

There is no kube-apiserver package on our registries (DOMAIN.md §9), so the
tests talk to this stand-in, and the real kubectl is driven against it in the
same tests to prove it answers as a real server would. It serves:

* discovery: ``/api``, ``/apis``, ``/api/v1`` and ``/apis/<group>/<version>``
  resource lists (``namespaced``, ``kind``, ``verbs``, ``shortNames``);
* ``/version``;
* RBAC as 403: a ClusterRole's grants (``allowed``: anything else is
  forbidden) or single resources (``forbidden``);
* lists, cluster-wide and per namespace, with ``limit``/``continue`` and equality
  ``labelSelector``/``fieldSelector`` (``metadata.name``, ``metadata.namespace``); built-in
  lists omit ``kind``/``apiVersion`` on their items as the real server does;
* ``GET /api/v1/namespaces/<name>``;
* ``GET`` of one object (``.../<plural>/<name>``);
* server-side apply (``PATCH`` with ``application/apply-patch+yaml``) of the
  resources in ``ClusterState.appliable`` only (the OpenReports kinds, or the
  deploy/ kinds for ``kubectl apply --dry-run=server``): ``fieldManager``
  required, conflicts between managers without ``force``, ``dryRun=All``,
  403 for resources not granted, 404 for a namespace that does not exist, 422
  with the schema's complaints (``ClusterState.schemas``);
* 401 without a known bearer token or client certificate, 404 for what is
  not served, 410 for expired continue tokens, injected 429/5xx answers, 405
  for any other write;
* an OCM hub and its managed clusters for the fleet tests (``FLEET_HUB``,
  ``FLEET_MANAGED``; tests/live/ocm.py plays OCM's controllers through this API, and
  makes a CRD served once it is applied);
* hostile answers (``misbehave``): headers dribbled a line at a time, a body
  that never ends, a JSON server that is not Kubernetes.

It binds 127.0.0.1 on an ephemeral port; every connection has a timeout and a
request budget, so no loop runs unbounded.
"""

from __future__ import annotations

import base64
import binascii
import json
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from tests.live.pki import CertificateAuthority

LIST_VERBS = ("get", "list", "watch")
RW_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
BUILTIN_GROUPS = frozenset({"", "apps", "batch", "networking.k8s.io", "rbac.authorization.k8s.io"})
_PER_CONNECTION_REQUESTS = 1000
_SOCKET_TIMEOUT = 10.0
DRIBBLE_INTERVAL = 0.25  # seconds between dribbled header lines
DRIBBLE_FOR = 4.0  # then the real answer, so a client without a deadline gets one eventually
ENDLESS_CAP = 64 << 20  # bytes of an "endless" body before the stand-in gives up
MANY_GROUPS = 6_000  # API groups of a "many-groups" /apis, beyond any cluster
ECHO_PAD = 100_000  # characters after the echoed token in an "echo-token" answer


@dataclass(frozen=True)
class Served:
    """One resource the stand-in serves."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...] = RW_VERBS
    short_names: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def _r(gv: str, plural: str, kind: str, namespaced: bool = True, short: tuple[str, ...] = (),
       verbs: tuple[str, ...] = RW_VERBS) -> Served:
    group, _, version = gv.rpartition("/")
    return Served(group, version, plural, kind, namespaced, verbs, short)


BUILTINS = (
    _r("v1", "namespaces", "Namespace", False, ("ns",)),
    _r("v1", "nodes", "Node", False, ("no",)),
    _r("v1", "configmaps", "ConfigMap", short=("cm",)),
    _r("v1", "secrets", "Secret"),
    _r("v1", "services", "Service", short=("svc",)),
    _r("v1", "endpoints", "Endpoints", short=("ep",)),
    _r("discovery.k8s.io/v1", "endpointslices", "EndpointSlice"),
    _r("v1", "pods", "Pod", short=("po",)),
    _r("v1", "replicationcontrollers", "ReplicationController", short=("rc",)),
    _r("v1", "pods/log", "Pod", verbs=("get",)),
    _r("v1", "serviceaccounts", "ServiceAccount", short=("sa",)),
    _r("v1", "bindings", "Binding", verbs=("create",)),
    _r("apps/v1", "deployments", "Deployment", short=("deploy",)),
    _r("apps/v1", "deployments/scale", "Scale", verbs=("get", "patch", "update")),
    _r("apps/v1", "statefulsets", "StatefulSet", short=("sts",)),
    _r("apps/v1", "daemonsets", "DaemonSet", short=("ds",)),
    _r("apps/v1", "replicasets", "ReplicaSet", short=("rs",)),
    _r("batch/v1", "jobs", "Job"),
    _r("batch/v1", "cronjobs", "CronJob", short=("cj",)),
    _r("networking.k8s.io/v1", "networkpolicies", "NetworkPolicy", short=("netpol",)),
    _r("networking.k8s.io/v1", "ingresses", "Ingress", short=("ing",)),
)

# CRDs of an OpenShift management cluster running HyperShift, ACM and CAPI.
CRDS = (
    _r("route.openshift.io/v1", "routes", "Route"),
    _r("config.openshift.io/v1", "proxies", "Proxy", False),
    _r("config.openshift.io/v1", "networks", "Network", False),
    _r("config.openshift.io/v1", "infrastructures", "Infrastructure", False),
    _r("config.openshift.io/v1", "imagedigestmirrorsets", "ImageDigestMirrorSet", False),
    _r("config.openshift.io/v1", "imagetagmirrorsets", "ImageTagMirrorSet", False),
    _r("operator.openshift.io/v1alpha1", "imagecontentsourcepolicies", "ImageContentSourcePolicy", False),
    _r("operator.openshift.io/v1", "networks", "Network", False),
    _r("operator.openshift.io/v1", "ingresscontrollers", "IngressController"),
    _r("apps.openshift.io/v1", "deploymentconfigs", "DeploymentConfig", short=("dc",)),
    _r("hypershift.openshift.io/v1beta1", "hostedclusters", "HostedCluster", short=("hc",)),
    _r("hypershift.openshift.io/v1beta1", "nodepools", "NodePool", short=("np",)),
    _r("hypershift.openshift.io/v1beta1", "hostedcontrolplanes", "HostedControlPlane", short=("hcp",)),
    _r("hypershift.openshift.io/v1alpha1", "hostedclusters", "HostedCluster"),
    _r("addon.open-cluster-management.io/v1alpha1", "addondeploymentconfigs", "AddOnDeploymentConfig"),
    _r("addon.open-cluster-management.io/v1alpha1", "managedclusteraddons", "ManagedClusterAddOn",
       short=("mca",)),
    _r("cluster.open-cluster-management.io/v1", "managedclusters", "ManagedCluster", False,
       short=("mcl",)),
    _r("addon.open-cluster-management.io/v1alpha1", "clustermanagementaddons",
       "ClusterManagementAddOn", False, ("cma",)),
    _r("cluster.open-cluster-management.io/v1beta1", "placementdecisions", "PlacementDecision"),
    _r("config.open-cluster-management.io/v1alpha1", "klusterletconfigs", "KlusterletConfig",
       False),
    _r("agent.open-cluster-management.io/v1", "klusterletaddonconfigs", "KlusterletAddonConfig"),
    # the klusterlet's own configuration on a managed cluster (cluster-scoped): its
    # spec.clusterName says which managed cluster the input is (OCM004)
    _r("operator.open-cluster-management.io/v1", "klusterlets", "Klusterlet", False),
    _r("machineconfiguration.openshift.io/v1", "machineconfigs", "MachineConfig", False,
       ("mc",)),
    _r("helm.toolkit.fluxcd.io/v2", "helmreleases", "HelmRelease", short=("hr",)),
    _r("application.giantswarm.io/v1alpha1", "apps", "App"),
    _r("cluster.x-k8s.io/v1beta1", "clusters", "Cluster", short=("cl",)),
    _r("infrastructure.cluster.x-k8s.io/v1beta2", "awsclusters", "AWSCluster"),
    _r("infrastructure.cluster.x-k8s.io/v1beta2", "vcdclusters", "VCDCluster"),
    _r("infrastructure.cluster.x-k8s.io/v1beta2", "vcdclustertemplates", "VCDClusterTemplate"),
    _r("operators.coreos.com/v1alpha1", "subscriptions", "Subscription", short=("sub",)),
    # security groups in front of the nodes (the required flows' perimeter)
    _r("infrastructure.cluster.x-k8s.io/v1beta2", "awsmachinetemplates", "AWSMachineTemplate"),
    _r("infrastructure.cluster.x-k8s.io/v1beta2", "awsmachines", "AWSMachine"),
    _r("controlplane.cluster.x-k8s.io/v1beta2", "awsmanagedcontrolplanes", "AWSManagedControlPlane"),
    _r("ec2.services.k8s.aws/v1alpha1", "securitygroups", "SecurityGroup"),
    _r("ec2.aws.upbound.io/v1beta1", "securitygroups", "SecurityGroup", False),
    _r("ec2.aws.upbound.io/v1beta1", "securitygroupingressrules", "SecurityGroupIngressRule", False),
    _r("ec2.aws.upbound.io/v1beta1", "securitygrouprules", "SecurityGroupRule", False),
    _r("bootstrap.cluster.x-k8s.io/v1beta1", "kubeadmconfigs", "KubeadmConfig"),
    _r("bootstrap.cluster.x-k8s.io/v1beta1", "kubeadmconfigtemplates", "KubeadmConfigTemplate"),
    _r("controlplane.cluster.x-k8s.io/v1beta1", "kubeadmcontrolplanes", "KubeadmControlPlane",
       short=("kcp",)),
    _r("controlplane.cluster.x-k8s.io/v1beta1", "kubeadmcontrolplanetemplates",
       "KubeadmControlPlaneTemplate"),
    _r("k8s.cni.cncf.io/v1", "network-attachment-definitions", "NetworkAttachmentDefinition",
       short=("net-attach-def",)),
    _r("kyverno.io/v1", "clusterpolicies", "ClusterPolicy", False, ("cpol",)),
    _r("kyverno.io/v1", "policies", "Policy", short=("pol",)),
    _r("policies.kyverno.io/v1alpha1", "mutatingpolicies", "MutatingPolicy", False, ("mpol",)),
    _r("policies.kyverno.io/v1alpha1", "namespacedmutatingpolicies", "NamespacedMutatingPolicy",
       short=("nmpol",)),
    _r("policy.open-cluster-management.io/v1", "policies", "Policy", short=("plc",)),
    # policy-like kinds the reachability engine reports when it does not evaluate them
    _r("policy.networking.k8s.io/v1alpha1", "adminnetworkpolicies", "AdminNetworkPolicy", False,
       ("anp",)),
    _r("policy.networking.k8s.io/v1alpha1", "baselineadminnetworkpolicies",
       "BaselineAdminNetworkPolicy", False, ("banp",)),
    _r("k8s.ovn.org/v1", "egressfirewalls", "EgressFirewall"),
    _r("k8s.ovn.org/v1", "userdefinednetworks", "UserDefinedNetwork"),
    _r("k8s.ovn.org/v1", "clusteruserdefinednetworks", "ClusterUserDefinedNetwork", False),
    _r("k8s.cni.cncf.io/v1beta1", "multi-networkpolicies", "MultiNetworkPolicy"),
    _r("network.openshift.io/v1", "egressnetworkpolicies", "EgressNetworkPolicy"),
    _r("crd.projectcalico.org/v1", "networkpolicies", "NetworkPolicy"),
    _r("crd.projectcalico.org/v1", "globalnetworkpolicies", "GlobalNetworkPolicy", False),
    _r("crd.projectcalico.org/v1", "stagednetworkpolicies", "StagedNetworkPolicy"),
    _r("crd.projectcalico.org/v1", "stagedglobalnetworkpolicies", "StagedGlobalNetworkPolicy",
       False),
    _r("cilium.io/v2", "ciliumnetworkpolicies", "CiliumNetworkPolicy", short=("cnp",)),
    _r("cilium.io/v2", "ciliumclusterwidenetworkpolicies", "CiliumClusterwideNetworkPolicy", False,
       ("ccnp",)),
    _r("security.istio.io/v1", "authorizationpolicies", "AuthorizationPolicy"),
    # KubeVirt: virtual machines are endpoints (HostedClusters on KubeVirt run their nodes so)
    _r("kubevirt.io/v1", "virtualmachines", "VirtualMachine", short=("vm",)),
    _r("kubevirt.io/v1", "virtualmachineinstances", "VirtualMachineInstance", short=("vmi",)),
)

PREFERRED = {"hypershift.openshift.io": "v1beta1"}

# The OpenReports CRDs, which `hcpscan cluster --publish-reports` writes to.
REPORT_CRDS = (
    _r("openreports.io/v1alpha1", "reports", "Report", short=("reps",)),
    _r("openreports.io/v1alpha1", "clusterreports", "ClusterReport", False, ("creps",)),
)
# What deploy/ creates (RBAC, and Open Cluster Management's hub kinds), for
# `kubectl apply --dry-run=server` of its manifests.
DEPLOY_RESOURCES = (
    _r("apiextensions.k8s.io/v1", "customresourcedefinitions", "CustomResourceDefinition", False,
       ("crd", "crds")),
    _r("rbac.authorization.k8s.io/v1", "clusterroles", "ClusterRole", False),
    _r("rbac.authorization.k8s.io/v1", "clusterrolebindings", "ClusterRoleBinding", False),
    _r("rbac.authorization.k8s.io/v1", "roles", "Role"),
    _r("rbac.authorization.k8s.io/v1", "rolebindings", "RoleBinding"),
    _r("cluster.open-cluster-management.io/v1beta1", "placements", "Placement"),
    _r("cluster.open-cluster-management.io/v1beta2", "managedclustersetbindings", "ManagedClusterSetBinding"),
    _r("work.open-cluster-management.io/v1", "manifestworks", "ManifestWork", short=("mw",)),
    _r("work.open-cluster-management.io/v1alpha1", "manifestworkreplicasets", "ManifestWorkReplicaSet",
       short=("mwrs",)),
)
# What a managed cluster of the fleet serves besides the catalog: the klusterlet's
# ClusterClaims, its Klusterlet and the CRDs the ManifestWork carries (ScanSummary), and what the hub
# serves for `hcpscan fleet` (PlacementDecisions; ManagedClusters are in CRDS).
FLEET_MANAGED = (
    _r("cluster.open-cluster-management.io/v1alpha1", "clusterclaims", "ClusterClaim", False),
    _r("hcpscan.io/v1alpha1", "scansummaries", "ScanSummary", False),
    _r("operator.open-cluster-management.io/v1", "klusterlets", "Klusterlet", False),
)
POLICYREPORT_CRDS = (
    _r("wgpolicyk8s.io/v1alpha2", "policyreports", "PolicyReport", short=("polr",)),
    _r("wgpolicyk8s.io/v1alpha2", "clusterpolicyreports", "ClusterPolicyReport", False, ("cpolr",)),
)
FLEET_HUB = (
    _r("cluster.open-cluster-management.io/v1beta1", "placementdecisions", "PlacementDecision"),
)
APPLY_PATCH = "application/apply-patch+yaml"
_MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's request body limit


def catalog(*, without: Iterable[str] = ()) -> list[Served]:
    """Built-ins plus CRDs, minus the CRD groups or kinds named in ``without``."""
    drop = set(without)
    return [*BUILTINS, *(r for r in CRDS if r.group not in drop and r.kind not in drop)]


@dataclass
class Fault:
    status: int
    remaining: int
    retry_after: str | None = None


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    user: str | None
    status: int = 0


@dataclass
class ClusterState:
    """What the stand-in serves and how it misbehaves; tests change it between requests."""

    resources: list[Served]
    objects: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)  # bearer token -> user
    forbidden: set[str] = field(default_factory=set)  # plurals the users may not list
    allowed: set[tuple[str, str]] | None = None  # (group, plural) granted; None: everything
    expire_continue: set[str] = field(default_factory=set)  # next continue on these plurals -> 410
    faults: dict[str, Fault] = field(default_factory=dict)  # path -> injected answers
    delay: float = 0.0  # seconds before every answer (bounded by the socket timeout)
    # path -> how the answer misbehaves: "dribble-headers" (one header line every
    # DRIBBLE_INTERVAL s for DRIBBLE_FOR s, then the real answer), "endless-body" (a 200
    # whose body never ends, up to ENDLESS_CAP bytes), "not-kubernetes" (some other JSON API),
    # "cyclic-continue" (the first page again and again, continue tokens A, B, C, A, B ...),
    # "endless-continue" (the first page again and again, a new continue token each time),
    # "echo-token" (403 whose Status message repeats the request's Authorization header and
    # ECHO_PAD characters more), "many-groups" (/apis lists MANY_GROUPS groups)
    misbehave: dict[str, str] = field(default_factory=dict)
    # path -> an answer sent exactly as given, as a hostile server would: (status line,
    # headers, body bytes), e.g. ("200 OK", {}, b'{"kind": "Status"}')
    raw: dict[str, tuple[str, dict[str, str], bytes]] = field(default_factory=dict)
    # Server-side apply: the (group, plural)s that accept it, and a validator per
    # (group, kind) returning what the server would reject (empty: valid).
    appliable: set[tuple[str, str]] = field(default_factory=set)
    schemas: dict[tuple[str, str], Callable[[dict[str, Any]], list[str]]] = field(default_factory=dict)
    resource_version: int = 1000
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, body: dict[str, Any]) -> None:
        group, _, _ = str(body.get("apiVersion", "")).rpartition("/")
        kind = str(body.get("kind"))
        if not any(r.group == group and r.kind == kind for r in self.resources):
            raise ValueError(f"the stand-in serves no {kind} in group {group!r}; add it to the catalog")
        self.resource_version += 1
        stored = json.loads(json.dumps(body))
        meta = stored.setdefault("metadata", {})
        meta.setdefault("uid", str(uuid.uuid5(uuid.NAMESPACE_URL, f"{group}/{kind}/"
                                              f"{meta.get('namespace', '')}/{meta.get('name')}")))
        meta["resourceVersion"] = str(self.resource_version)
        items = self.objects.setdefault((group, kind), [])
        items.append(stored)
        items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"].get("name", "")))

    def find(self, group: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        for obj in self.objects.get((group, kind), []):
            meta = obj["metadata"]
            if meta.get("namespace", "") == namespace and meta.get("name") == name:
                return obj
        return None

    def store(self, body: dict[str, Any], manager: str) -> bool:
        """Create or replace an applied object (one field manager owns all of it);
        True when it was created."""
        group, _, _ = str(body["apiVersion"]).rpartition("/")
        meta = body["metadata"]
        old = self.find(group, body["kind"], meta.get("namespace", ""), meta["name"])
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        meta["managedFields"] = [{"manager": manager, "operation": "Apply", "apiVersion": body["apiVersion"],
                                  "time": stamp, "fieldsType": "FieldsV1", "fieldsV1": {}}]
        if old is None:
            meta["creationTimestamp"] = stamp
            meta["generation"] = 1
            self.add(body)
            return True
        meta.update(uid=old["metadata"]["uid"], creationTimestamp=old["metadata"]["creationTimestamp"],
                    generation=old["metadata"].get("generation", 1) + 1)
        self.resource_version += 1
        meta["resourceVersion"] = str(self.resource_version)
        items = self.objects[(group, body["kind"])]
        items[items.index(old)] = json.loads(json.dumps(body))
        return False

    def may(self, group: str, plural: str) -> bool:
        return self.allowed is None or (group, plural) in self.allowed

    def served(self, group: str, version: str) -> list[Served]:
        return [r for r in self.resources if r.group == group and r.version == version]


def _status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                           "message": message, "reason": reason, "code": code}
    if details:
        out["details"] = details
    return out


def _display(r: Served) -> str:
    return f"{r.plural}.{r.group}" if r.group else r.plural


def _mismatch(body: Any, resource: Served, namespace: str, name: str) -> str:
    """What a real server answers 400 to: a body that is not the object of the URL."""
    if not isinstance(body, dict) or not isinstance(body.get("metadata"), dict):
        return "the body is not an object with metadata"
    if body.get("apiVersion") != resource.api_version or body.get("kind") != resource.kind:
        return (f"the API version in the data ({body.get('apiVersion')}) or kind ({body.get('kind')}) "
                f"does not match the request ({resource.api_version}, {resource.kind})")
    meta = body["metadata"]
    if meta.get("name") != name:
        return f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})"
    if meta.get("namespace", namespace) != namespace:
        return "the namespace of the provided object does not match the namespace sent on the request"
    if namespace:
        meta["namespace"] = namespace
    return ""


def _encode_token(rv: int, last: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"rv": rv, "start": last}).encode()).decode().rstrip("=")


def _decode_token(token: str) -> tuple[int, str] | None:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        return int(data["rv"]), str(data["start"])
    except (ValueError, KeyError, TypeError, binascii.Error):
        return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: StandInServer
    timeout = _SOCKET_TIMEOUT

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
        return

    def handle(self) -> None:
        # Keep-alive, but a bounded number of requests per connection.
        self.close_connection = True
        for _ in range(_PER_CONNECTION_REQUESTS):
            self.handle_one_request()
            if self.close_connection:
                return

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        state = self.server.state
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        user = self._user()
        record = Request("GET", url.path, query, user)
        with state.lock:
            state.requests.append(record)
        if state.delay:
            time.sleep(min(state.delay, _SOCKET_TIMEOUT))
        if url.path in state.raw:
            self._raw(*state.raw[url.path])
            return
        mode = state.misbehave.get(url.path)
        if mode == "endless-body":
            self._endless_body()
            return
        if mode == "not-kubernetes":
            self._send(200, {"status": "ok", "service": "corporate login portal"}, {})
            return
        if mode == "dribble-headers":
            self._dribble_headers()
        if mode == "echo-token":
            said = f"forbidden for {self.headers.get('Authorization', '')} " + "x" * ECHO_PAD
            self._send(403, _status(403, "Forbidden", said), {})
            return
        if mode == "many-groups":  # /apis listing more group versions than any cluster serves
            groups = [{"name": f"g{i}.example.com", "versions": [{"groupVersion": f"g{i}.example.com/v1",
                                                                  "version": "v1"}]}
                      for i in range(MANY_GROUPS)]
            self._send(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}, {})
            return
        if mode in ("cyclic-continue", "endless-continue"):
            self._send(*self._paging_without_end(mode, url.path, query, user))
            return
        code, body, headers = self._answer(url.path, query, user)
        record.status = code
        self._send(code, body, headers)

    def _paging_without_end(self, mode: str, path: str, query: dict[str, str], user: str | None
                            ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """The first page, always, with a continue token that never lets the list end."""
        given = query.get("continue", "")
        code, body, headers = self._answer(path, {k: v for k, v in query.items()
                                                  if k != "continue"}, user)
        if code == 200:
            if mode == "cyclic-continue":
                cycle = ("A", "B", "C")
                following = cycle[(cycle.index(given) + 1) % 3] if given in cycle else cycle[0]
            else:
                following = f"page-{int(given.removeprefix('page-') or 0) + 1}"
            body.setdefault("metadata", {})["continue"] = following
        return code, body, headers

    def _raw(self, status: str, headers: dict[str, str], body: bytes) -> None:
        self.wfile.write(f"HTTP/1.1 {status}\r\n".encode())
        for key, value in {"Content-Type": "application/json", **headers}.items():
            self.wfile.write(f"{key}: {value}\r\n".encode("latin-1"))
        self.wfile.write(b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
        self.close_connection = True

    def _dribble_headers(self) -> None:
        """Headers as a slow (or hostile) server sends them: each read of the client gets
        a line before its socket timeout, so only a whole-request deadline ends it."""
        started = time.monotonic()
        self.wfile.write(b"HTTP/1.1 200 OK\r\n")
        self.wfile.flush()
        while time.monotonic() - started < DRIBBLE_FOR:
            time.sleep(DRIBBLE_INTERVAL)
            self.wfile.write(b"X-Dribble: 1\r\n")
            self.wfile.flush()
        # then a real answer's headers follow: _send's status line is swallowed as a header
        self.wfile.write(b"X-Status-Line: ")

    def _endless_body(self) -> None:
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Connection: close\r\n\r\n{\"kind\": \"APIVersions\", \"pad\": \"")
        chunk = b"x" * (1 << 16)
        for _ in range(ENDLESS_CAP // len(chunk)):
            self.wfile.write(chunk)
        self.close_connection = True

    def _refuse(self) -> None:
        with self.server.state.lock:
            self.server.state.requests.append(Request(self.command, self.path, {}, self._user(), 405))
        self._send(405, _status(405, "MethodNotAllowed", "the stand-in is read-only"), {})

    do_POST = do_PUT = do_DELETE = _refuse  # noqa: N815

    def do_PATCH(self) -> None:  # noqa: N802 - http.server's naming
        state = self.server.state
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        if length > _MAX_BODY:
            self.close_connection = True
            self._send(413, _status(413, "RequestEntityTooLarge", "request body too large"), {})
            return
        body = self.rfile.read(length)
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip()
        user = self._user()
        record = Request("PATCH", url.path, query, user)
        with state.lock:
            state.requests.append(record)
        code, answer = self._apply(url.path, query, user, content_type, body)
        record.status = code
        self._send(code, answer, {})

    def _apply(self, path: str, query: dict[str, str], user: str | None, content_type: str,
               data: bytes) -> tuple[int, dict[str, Any]]:
        state = self.server.state
        if user is None:
            return 401, _status(401, "Unauthorized", "Unauthorized")
        target = self._object_path(path)
        if target is None or (target[0].group, target[0].plural) not in state.appliable:
            return 405, _status(405, "MethodNotAllowed", "the stand-in only accepts server-side apply "
                                "of the resources a test made appliable")
        resource, namespace, name = target
        if content_type != APPLY_PATCH:
            return 415, _status(415, "UnsupportedMediaType", f"the stand-in only accepts {APPLY_PATCH}")
        where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
        if resource.plural in state.forbidden or not state.may(resource.group, resource.plural):
            return 403, _status(403, "Forbidden", (
                f'{_display(resource)} "{name}" is forbidden: User "{user}" cannot patch resource '
                f'"{resource.plural}" in API group "{resource.group}" {where}'),
                {"name": name, "group": resource.group, "kind": resource.plural})
        if not query.get("fieldManager"):
            return 400, _status(400, "BadRequest", "PATCH requests of type apply must set fieldManager")
        try:
            body = yaml.safe_load(data)
        except yaml.YAMLError as exc:
            return 400, _status(400, "BadRequest", f"error decoding YAML: {exc}")
        problem = _mismatch(body, resource, namespace, name)
        if problem:
            return 400, _status(400, "BadRequest", problem)
        if namespace and state.objects.get(("", "Namespace")) and state.find("", "Namespace", "", namespace) is None:
            return 404, _status(404, "NotFound", f'namespaces "{namespace}" not found',
                                {"name": namespace, "kind": "namespaces"})
        validate = state.schemas.get((resource.group, resource.kind))
        errors = validate(body) if validate else []
        if errors:
            causes = [{"reason": "FieldValueInvalid", "message": message, "field": where}
                      for where, _, message in (e.partition(": ") for e in errors)]
            return 422, _status(422, "Invalid", f'{resource.kind}.{resource.group or "core"} "{name}" is '
                                f'invalid: {"; ".join(errors)}', {"name": name, "group": resource.group,
                                                                  "kind": resource.kind, "causes": causes})
        with state.lock:
            old = state.find(resource.group, resource.kind, namespace, name)
            owner = (old or {}).get("metadata", {}).get("managedFields", [{}])[0].get("manager")
            if old is not None and owner and owner != query["fieldManager"] and query.get("force") != "true":
                return 409, _status(409, "Conflict", f'Apply failed with 1 conflict: conflict with '
                                    f'"{owner}": .metadata (retry with force)')
            if query.get("dryRun") == "All":
                return 200, body
            created = state.store(body, query["fieldManager"])
            stored = state.find(resource.group, resource.kind, namespace, name)
        return (201 if created else 200), stored or {}

    def _object_path(self, path: str) -> tuple[Served, str, str] | None:
        """``/api(s)/.../[namespaces/<ns>/]<plural>/<name>`` -> (resource, namespace, name)."""
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["api"] and len(parts) >= 2:
            gv, rest = ("", parts[1]), parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            gv, rest = (parts[1], parts[2]), parts[3:]
        else:
            return None
        namespace = ""
        if len(rest) == 4 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if len(rest) != 2:
            return None
        resource = next((r for r in self.server.state.served(*gv) if r.plural == rest[0]), None)
        if resource is None or resource.namespaced != bool(namespace):
            return None
        return resource, namespace, rest[1]

    def _user(self) -> str | None:
        scheme, _, token = self.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer":  # case-insensitive, as kube-apiserver reads it
            return self.server.state.tokens.get(token.strip())
        cert = self.connection.getpeercert() if isinstance(self.connection, ssl.SSLSocket) else None
        for rdn in (cert or {}).get("subject", ()):
            for key, value in rdn:
                if key == "commonName":
                    return f"cert:{value}"
        return None

    def _send(self, code: int, body: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _answer(self, path: str, query: dict[str, str], user: str | None
                ) -> tuple[int, dict[str, Any], dict[str, str]]:
        state = self.server.state
        if user is None:
            return 401, _status(401, "Unauthorized", "Unauthorized"), {}
        with state.lock:
            fault = state.faults.get(path)
            if fault and fault.remaining > 0:
                fault.remaining -= 1
                headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
                reason = "TooManyRequests" if fault.status == 429 else "InternalError"
                return fault.status, _status(fault.status, reason, "injected by the test"), headers
        parts = [p for p in path.split("/") if p]
        if parts == ["version"]:
            return 200, {"major": "1", "minor": "31", "gitVersion": "v1.31.0+hcpscan-standin",
                         "platform": "linux/amd64"}, {}
        if parts == ["api"]:
            return 200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": self.server.address}]}, {}
        if parts == ["apis"]:
            return 200, self._groups(), {}
        if parts[:1] == ["api"] and len(parts) >= 2:
            return self._resource(("", parts[1]), parts[2:], query, user)
        if parts[:1] == ["apis"] and len(parts) >= 3:
            return self._resource((parts[1], parts[2]), parts[3:], query, user)
        return 404, _status(404, "NotFound", "the server could not find the requested resource"), {}

    def _groups(self) -> dict[str, Any]:
        groups: dict[str, list[str]] = {}
        for r in self.server.state.resources:
            if r.group and r.version not in groups.setdefault(r.group, []):
                groups[r.group].append(r.version)
        out = []
        for name, versions in groups.items():
            preferred = PREFERRED.get(name, versions[0])
            if preferred not in versions:
                preferred = versions[0]
            out.append({"name": name,
                        "versions": [{"groupVersion": f"{name}/{v}", "version": v} for v in versions],
                        "preferredVersion": {"groupVersion": f"{name}/{preferred}", "version": preferred}})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": out}

    def _resource(self, gv: tuple[str, str], rest: list[str], query: dict[str, str], user: str
                  ) -> tuple[int, dict[str, Any], dict[str, str]]:
        state = self.server.state
        served = state.served(*gv)
        not_found = (404, _status(404, "NotFound", "the server could not find the requested resource"), {})
        if not served:
            return not_found
        group, version = gv
        if not rest:
            return 200, {"kind": "APIResourceList", "apiVersion": "v1",
                         "groupVersion": f"{group}/{version}" if group else version,
                         "resources": [self._describe(r) for r in served]}, {}
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        elif rest[0] == "namespaces" and len(rest) == 2 and not group:
            return self._get_namespace(rest[1])
        if len(rest) == 2:
            return self._get_object(served, namespace, rest, user)
        if len(rest) != 1:
            return not_found
        resource = next((r for r in served if r.plural == rest[0] and "list" in r.verbs), None)
        if resource is None or (namespace is not None and not resource.namespaced):
            return not_found
        if resource.plural in state.forbidden or not state.may(group, resource.plural):
            scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
            message = (f'{resource.plural}{"." + group if group else ""} is forbidden: User "{user}" '
                       f'cannot list resource "{resource.plural}" in API group "{group}" {scope}')
            return 403, _status(403, "Forbidden", message, {"group": group, "kind": resource.plural}), {}
        return self._list(resource, namespace, query)

    def _get_object(self, served: list[Served], namespace: str | None, rest: list[str], user: str
                    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        state = self.server.state
        resource = next((r for r in served if r.plural == rest[0] and "get" in r.verbs), None)
        if resource is None or resource.namespaced != (namespace is not None):
            return 404, _status(404, "NotFound", "the server could not find the requested resource"), {}
        if resource.plural in state.forbidden or not state.may(resource.group, resource.plural):
            return 403, _status(403, "Forbidden", f'{_display(resource)} "{rest[1]}" is forbidden: User '
                                f'"{user}" cannot get resource "{resource.plural}" in API group '
                                f'"{resource.group}"'), {}
        with state.lock:
            obj = state.find(resource.group, resource.kind, namespace or "", rest[1])
        if obj is None:
            return 404, _status(404, "NotFound", f'{_display(resource)} "{rest[1]}" not found',
                                {"name": rest[1], "group": resource.group, "kind": resource.plural}), {}
        return 200, obj, {}

    @staticmethod
    def _describe(r: Served) -> dict[str, Any]:
        out: dict[str, Any] = {"name": r.plural, "singularName": "" if "/" in r.plural else r.kind.lower(),
                               "namespaced": r.namespaced, "kind": r.kind, "verbs": list(r.verbs)}
        if r.short_names:
            out["shortNames"] = list(r.short_names)
        return out

    def _get_namespace(self, name: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        state = self.server.state
        if "namespaces" in state.forbidden or not state.may("", "namespaces"):
            return 403, _status(403, "Forbidden", f'namespaces "{name}" is forbidden'), {}
        for obj in state.objects.get(("", "Namespace"), []):
            if obj["metadata"].get("name") == name:
                return 200, {k: v for k, v in obj.items()}, {}
        return 404, _status(404, "NotFound", f'namespaces "{name}" not found',
                            {"name": name, "kind": "namespaces"}), {}

    def _list(self, resource: Served, namespace: str | None, query: dict[str, str]
              ) -> tuple[int, dict[str, Any], dict[str, str]]:
        state = self.server.state
        with state.lock:
            items = [o for o in state.objects.get((resource.group, resource.kind), [])
                     if (namespace is None or o["metadata"].get("namespace") == namespace)
                     and _selected(o, query)]
            current_rv = state.resource_version
            token = query.get("continue", "")
            if token and resource.plural in state.expire_continue:
                state.expire_continue.discard(resource.plural)
                return 410, _status(410, "Expired", "The provided continue parameter is too old to "
                                    "display a consistent list result. You can start a new list "
                                    "without the continue parameter."), {}
        start = ""
        if token:
            decoded = _decode_token(token)
            if decoded is None:
                return 400, _status(400, "BadRequest", "continue key is not valid"), {}
            current_rv, start = decoded
        keys = [f'{o["metadata"].get("namespace", "")}/{o["metadata"].get("name", "")}' for o in items]
        remaining = [(k, o) for k, o in zip(keys, items) if k > start]
        limit = int(query["limit"]) if query.get("limit", "").isdigit() and int(query["limit"]) > 0 else 0
        page = remaining[:limit] if limit else remaining
        meta: dict[str, Any] = {"resourceVersion": str(current_rv)}
        if limit and len(remaining) > limit:
            meta["continue"] = _encode_token(current_rv, page[-1][0])
            meta["remainingItemCount"] = len(remaining) - limit
        builtin = resource.group in BUILTIN_GROUPS
        body_items = [{k: v for k, v in o.items() if not (builtin and k in ("kind", "apiVersion"))}
                      for _, o in page]
        return 200, {"kind": f"{resource.kind}List", "apiVersion": resource.api_version,
                     "metadata": meta, "items": body_items}, {}


def _selected(obj: dict[str, Any], query: dict[str, str]) -> bool:
    """``labelSelector`` and ``fieldSelector`` as equality requirements (``a=b,c==d``);
    the only fields a CRD serves are ``metadata.name`` and ``metadata.namespace``."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    fields = {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}
    for param, values in (("labelSelector", labels), ("fieldSelector", fields)):
        for requirement in filter(None, query.get(param, "").split(",")):
            key, _, value = requirement.replace("==", "=").partition("=")
            if values.get(key.strip()) != value.strip():
                return False
    return True


class StandInServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, state: ClusterState, ssl_context: ssl.SSLContext) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state
        self.ssl_context = ssl_context
        self.address = f"127.0.0.1:{self.server_address[1]}"
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"https://{self.address}"

    def finish_request(self, request: Any, client_address: Any) -> None:
        request.settimeout(_SOCKET_TIMEOUT)
        try:
            tls = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return  # a client that gave up, or did not speak TLS
        try:
            self.RequestHandlerClass(tls, client_address, self)
        except (OSError, ssl.SSLError):
            pass
        finally:
            tls.close()

    def start(self) -> StandInServer:
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="standin-apiserver", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def server_context(ca: CertificateAuthority, folder: Path) -> ssl.SSLContext:
    """TLS for the stand-in: a certificate for 127.0.0.1, client certificates optional."""
    pair = ca.issue("kube-apiserver", server=True)
    cert, key = pair.write(folder, "apiserver")
    ca_file = folder / "ca.crt"
    ca_file.write_bytes(ca.cert_pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.load_verify_locations(ca_file)
    context.verify_mode = ssl.CERT_OPTIONAL
    return context


def unused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
