"""Deterministic synthetic inputs for the benchmarks (bench/run.py).

    python3 bench/generate.py mgmt --clusters 100            # bench/out/mgmt-100/ (+ --tar)
    python3 bench/generate.py netpol --pods 2000 --policies 500   # bench/out/netpol-2000-500/
    python3 bench/generate.py netpol --pods 2000 --policies 500 --anps 50 --banp-rules 10

``mgmt``: a management cluster in must-gather layout. Each of N hosted clusters
has a HostedCluster and NodePools in ``clusters``, and an HCP namespace
``clusters-<name>`` holding the control plane HyperShift's own tests render
(../shared/realworld/hypershift/cpo-rendered): Deployments with their
ReplicaSets and Pods, the etcd StatefulSet, Services, Routes, Secrets (redacted
as must-gather redacts them), ConfigMaps, and the NetworkPolicies HyperShift
creates for the cluster's platform and publishing strategy (DOMAIN.md §3).
Some hosted clusters sit behind a corporate proxy. M workload namespaces add
application Deployments, Pods and policies. Noise a real must-gather carries
and a scan must skip: events, pod logs, ServiceAccounts, Roles, RoleBindings,
monitors, PodDisruptionBudgets and ControlPlaneComponents.

``netpol``: a plain directory of Namespaces, Pods and NetworkPolicies (one
multi-document file per namespace kind), the input both ``hcpscan
connectivity`` and np-guard's ``nca --connectivity`` read.

Everything derives from ``--seed``: the same arguments write the same bytes.
Each hosted cluster's files are rendered once per *profile* (platform,
publishing, proxy, availability) with placeholders and then filled in by
string substitution, so 500 clusters take seconds, not minutes.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import os
import random
import re
import shutil
import sys
import tarfile
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from build_example import published_services  # noqa: E402  (one definition of those Services)

try:
    from yaml import CSafeDumper as _BaseDumper
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as _BaseDumper  # type: ignore[assignment]


class Dumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """No anchors or aliases: API servers and must-gather never write them."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
TEMPLATE = HERE.parent.parent / "shared" / "realworld" / "hypershift" / "cpo-rendered"
IMAGE_DIR = "quay-io-openshift-must-gather-sha256-5eedbe7c4"

PROXY_HTTP = "http://proxy.corp.example.com:3128"
PROXY_HTTPS = "https://proxy.corp.example.com:3129"
RELEASE = "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"
UNREDACTED_KEYS = {"tls.crt", "ca.crt", "service-ca.crt"}

# Placeholders filled per hosted cluster (plain YAML scalars, so numbers stay numbers).
NS, HC, IP, MC = "ZZNSZZ", "ZZHCZZ", "ZZIPZZ", "ZZMCZZ"
NODE_PORTS = [f"ZZNP{k}ZZ" for k in range(6)]
_PLACEHOLDER = re.compile(r"ZZ(?:NS|HC|IP|MC|NP\d)ZZ")

PLATFORM_PREFIXES = ("aws-", "azure-", "gcp-", "openstack-", "powervs-", "kubevirt-")
# platform -> (its own controller prefixes, APIServer publishing, others' publishing)
PLATFORMS = {
    "AWS": (("aws-",), "LoadBalancer", "Route"),
    "Agent": ((), "NodePort", "NodePort"),
    "KubeVirt": (("kubevirt-",), "LoadBalancer", "Route"),
    "None": ((), "NodePort", "Route"),
}
PLATFORM_WEIGHTS = [("AWS", 45), ("Agent", 20), ("KubeVirt", 20), ("None", 15)]
NOISE_KINDS = {"ServiceAccount", "Role", "RoleBinding", "ServiceMonitor", "PodMonitor",
               "PodDisruptionBudget", "ControlPlaneComponent", "FeatureGate", "ImageStream",
               "PrometheusRule", "SecretProviderClass"}
SKIP_KINDS = {"Job"}  # the rendered featuregate Job has no namespace-independent name


# -- helpers ---------------------------------------------------------------------------------

def _dump(obj: Any) -> str:
    return yaml.dump(obj, Dumper=Dumper, sort_keys=False, width=1 << 16)


def _list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


def _group(obj: dict[str, Any]) -> str:
    api = obj["apiVersion"]
    return api.split("/")[0] if "/" in api else "core"


_IRREGULAR = {"NetworkPolicy": "networkpolicies", "Endpoints": "endpoints",
              "PrometheusRule": "prometheusrules", "Proxy": "proxies"}


def _plural(kind: str) -> str:
    if kind in _IRREGULAR:
        return _IRREGULAR[kind]
    lower = kind.lower()
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + ("es" if lower.endswith(("s", "x", "ch", "sh")) else "s")


def _suffix(*parts: object, length: int = 5) -> str:
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(alphabet[b % len(alphabet)] for b in digest[:length])


def _redact(secret: dict[str, Any]) -> None:
    """Secret values as must-gather writes them: ``<n> bytes long`` except certificates."""
    for field in ("data", "stringData"):
        values = secret.get(field)
        if isinstance(values, dict):
            secret[field] = {k: v if k in UNREDACTED_KEYS else f"{len(str(v))} bytes long"
                             for k, v in values.items()}


def _policy(name: str, ns: str, selector: dict[str, str] | None, *,
            ingress: list[dict[str, Any]] | None = None,
            egress: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"podSelector": {"matchLabels": selector} if selector else {}}
    types = []
    if ingress is not None:
        spec["ingress"] = ingress
        types.append("Ingress")
    if egress is not None:
        spec["egress"] = egress
        types.append("Egress")
    spec["policyTypes"] = types
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def _tcp(*ports: int) -> list[dict[str, Any]]:
    return [{"protocol": "TCP", "port": p} for p in ports]


# -- the hosted control plane template -------------------------------------------------------

class TemplateMissing(Exception):
    """The real rendered control plane the benchmark clusters are made of is not there."""


def _load_template(folder: Path | None = None) -> list[dict[str, Any]]:
    """The rendered HCP manifests each benchmark cluster copies. Without them a clone would
    silently benchmark clusters of a few dozen objects, so their absence is an error."""
    folder = folder or TEMPLATE
    paths = sorted(folder.rglob("*.yaml")) if folder.is_dir() else []
    if not paths:
        raise TemplateMissing(f"{folder}: the benchmark's template (a real HyperShift control "
                              "plane, shared/realworld/hypershift/cpo-rendered) is missing; "
                              "check out shared/ beside the project and run again")
    objects = []
    for path in paths:
        for doc in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
            if not isinstance(doc, dict) or not doc.get("kind") or doc["kind"] in SKIP_KINDS:
                continue
            meta = doc.setdefault("metadata", {})
            if not meta.get("name") or str(meta["name"]).startswith("-"):
                continue  # rendered without a HostedCluster name
            objects.append(doc)
    if not objects:
        raise TemplateMissing(f"{folder}: no HCP manifests in the benchmark's template")
    return objects


def _retarget(value: Any) -> Any:
    """Point the template's namespace and hosted-cluster names at the placeholders."""
    if isinstance(value, dict):
        return {k: _retarget(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_retarget(v) for v in value]
    if isinstance(value, str) and "hcp-namespace" in value:
        return value.replace("hcp-namespace", NS)
    return value


def _hypershift_policies(platform: str, strategy: dict[str, str]) -> list[dict[str, Any]]:
    """The NetworkPolicies HyperShift creates in an HCP namespace (DOMAIN.md §3)."""
    any_source: list[dict[str, Any]]
    policies = [
        _policy("same-namespace", NS, None, ingress=[{"from": [{"podSelector": {}}]}]),
        _policy("kas", NS, {"app": "kube-apiserver"}, ingress=[{"ports": _tcp(6443)}]),
        _policy("openshift-ingress", NS, None, ingress=[{"from": [{"namespaceSelector": {
            "matchLabels": {"network.openshift.io/policy-group": "ingress"}}}]}]),
        _policy("openshift-monitoring", NS, None, ingress=[{"from": [{"namespaceSelector": {
            "matchLabels": {"network.openshift.io/policy-group": "monitoring"}}}]}]),
    ]
    if strategy["Ignition"] == "NodePort":
        policies += [
            _policy("nodeport-ignition", NS, {"app": "ignition-server"},
                    ingress=[{"ports": _tcp(9090)}]),
            _policy("nodeport-ignition-proxy", NS, {"app": "ignition-server-proxy"},
                    ingress=[{"ports": _tcp(8443)}]),
        ]
    if strategy["Konnectivity"] == "NodePort":
        policies += [
            _policy("nodeport-konnectivity", NS, {"app": "konnectivity-server"},
                    ingress=[{"ports": _tcp(8091)}]),
            _policy("nodeport-konnectivity-kas", NS, {"app": "kube-apiserver"},
                    ingress=[{"ports": _tcp(8091)}]),
        ]
    if strategy["OAuthServer"] == "NodePort":
        policies.append(_policy("nodeport-oauth", NS, {"app": "oauth-openshift"},
                                ingress=[{"ports": _tcp(6443)}]))
    if platform == "AWS":
        any_source = [{"ipBlock": {"cidr": "0.0.0.0/0",
                                   "except": ["10.128.0.0/14", "172.30.0.1/32"]}}]
        policies.append(_policy("private-router", NS, {"app": "private-router"},
                                ingress=[{"ports": _tcp(8080, 8443)}],
                                egress=[{"to": any_source}]))
        policies.append({
            "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "management-kas", "namespace": NS},
            "spec": {"podSelector": {"matchExpressions": [{
                "key": "hypershift.openshift.io/need-management-kas-access",
                "operator": "DoesNotExist"}]},
                "policyTypes": ["Egress"],
                "egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0",
                                                "except": ["172.30.0.1/32", "10.0.0.10/32"]}}]},
                           {"to": [{"namespaceSelector": {"matchLabels": {
                               "kubernetes.io/metadata.name": "openshift-dns"}}}],
                            "ports": [{"protocol": "UDP", "port": 5353},
                                      {"protocol": "TCP", "port": 5353}]},
                           {"ports": [{"protocol": "UDP", "port": 53},
                                      {"protocol": "TCP", "port": 53}]}]}})
    if platform == "KubeVirt":
        policies.append(_policy("virt-launcher", NS, {"kubevirt.io": "virt-launcher"},
                                ingress=[{}],
                                egress=[{"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": [
                                    "10.128.0.0/14", "172.30.0.0/16"]}}]}]))
    return policies


def _published_services(strategy: dict[str, str]) -> list[dict[str, Any]]:
    """The KAS/konnectivity Services HyperShift creates for the publishing strategy: the same
    as the bundled example's (node ports stay placeholders, numbered per cluster later)."""
    konnectivity = "NodePort" if strategy["Konnectivity"] == "NodePort" else None
    return published_services(NS, strategy["APIServer"], konnectivity,
                              (NODE_PORTS[0], NODE_PORTS[1]))


def _tune_components(objects: list[dict[str, Any]], strategy: dict[str, str], proxied: bool,
                     ha: bool) -> None:
    for obj in objects:
        kind, name = obj["kind"], obj["metadata"]["name"]
        if kind == "Service" and strategy["Ignition"] == "NodePort" and name in (
                "ignition-server", "ignition-server-proxy"):
            obj["spec"]["type"] = "NodePort"
            for k, port in enumerate(obj["spec"]["ports"]):
                port["nodePort"] = NODE_PORTS[2 + k + (2 if name == "ignition-server-proxy" else 0)]
        if kind not in ("Deployment", "StatefulSet"):
            continue
        if not ha:
            obj["spec"]["replicas"] = 1
        for container in obj["spec"]["template"]["spec"]["containers"]:
            if name == "kube-apiserver" and container["name"] == "konnectivity-server":
                container.setdefault("ports", []).append(
                    {"containerPort": 8091, "name": "cluster", "protocol": "TCP"})
            if proxied and "konnectivity-https-proxy" in (container.get("command") or []):
                container.setdefault("args", []).extend([
                    f"--http-proxy={PROXY_HTTP}", f"--https-proxy={PROXY_HTTPS}",
                    f"--no-proxy=.svc,.cluster.local,{MC}"])


def _pods(workloads: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """ReplicaSets and Pods of Deployments and StatefulSets, as the API server would list them."""
    replica_sets, pods = [], []
    ip = 0
    for obj in workloads:
        meta, spec = obj["metadata"], obj["spec"]
        template = copy.deepcopy(spec["template"])
        labels = dict(template.get("metadata", {}).get("labels") or {})
        owner_kind, owner = obj["kind"], meta["name"]
        if obj["kind"] == "Deployment":
            rs_hash = _suffix(meta["namespace"], meta["name"], length=9)
            owner_kind, owner = "ReplicaSet", f"{meta['name']}-{rs_hash}"
            labels["pod-template-hash"] = rs_hash
            template.setdefault("metadata", {})["labels"] = labels
            replica_sets.append({
                "apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": owner, "namespace": meta["namespace"], "labels": labels,
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                  "name": meta["name"], "controller": True}]},
                "spec": {"replicas": spec.get("replicas", 1),
                         "selector": {"matchLabels": labels}, "template": template},
                "status": {"replicas": spec.get("replicas", 1)}})
        for r in range(int(spec.get("replicas") or 1)):
            ip += 1
            pod_name = (f"{owner}-{r}" if obj["kind"] == "StatefulSet"
                        else f"{owner}-{_suffix(owner, r)}")
            pods.append({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": pod_name, "namespace": meta["namespace"], "labels": labels,
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner_kind,
                                                  "name": owner, "controller": True}]},
                "spec": {**template.get("spec", {}), "nodeName": f"mgmt-worker-{ip % 6}"},
                "status": {"phase": "Running", "podIP": f"{IP}.{ip}",
                           "podIPs": [{"ip": f"{IP}.{ip}"}]}})
    return replica_sets, pods


def _events(ns: str, names: list[str], rng: random.Random) -> dict[str, Any]:
    reasons = ["Scheduled", "Pulled", "Created", "Started", "Killing", "BackOff", "Unhealthy"]
    items = []
    for k in range(20):
        target = names[k % len(names)] if names else ns
        items.append({"apiVersion": "v1", "kind": "Event",
                      "metadata": {"name": f"{target}.{_suffix(ns, k, length=8)}", "namespace": ns},
                      "involvedObject": {"kind": "Pod", "name": target, "namespace": ns},
                      "reason": rng.choice(reasons), "type": "Normal", "count": rng.randint(1, 9),
                      "message": f"container {target} {rng.choice(reasons).lower()}"})
    return _list(items)


def _log(pod: str, container: str, lines: int) -> str:
    return "".join(f"2026-11-20T10:{k // 60:02d}:{k % 60:02d}.{k:06d}Z I1120 {container}: "
                   f"reconciled {pod} generation {k} in {k % 97}ms\n" for k in range(lines))


class Profile:
    """The files of one HCP namespace for one (platform, proxy, availability), with placeholders."""

    def __init__(self, template: list[dict[str, Any]], platform: str, proxied: bool,
                 ha: bool) -> None:
        own, api, others = PLATFORMS[platform]
        strategy = {"APIServer": api, "OAuthServer": "Route" if others == "Route" else "NodePort",
                    "Konnectivity": others, "Ignition": others}
        self.platform, self.proxied, self.ha, self.strategy = platform, proxied, ha, strategy
        objects = []
        for obj in template:
            name = obj["metadata"]["name"]
            if obj["kind"] in ("Deployment", "Secret", "ConfigMap", "ServiceAccount", "Role",
                               "RoleBinding", "ControlPlaneComponent") and name.startswith(
                    PLATFORM_PREFIXES) and not name.startswith(own or ("\0",)):
                continue  # another platform's cloud controllers
            obj = _retarget(copy.deepcopy(obj))
            obj["metadata"]["namespace"] = NS
            obj["metadata"].pop("ownerReferences", None)
            if obj["kind"] == "Secret":
                _redact(obj)
            objects.append(obj)
        _tune_components(objects, strategy, proxied, ha)
        objects += _published_services(strategy)
        objects += _hypershift_policies(platform, strategy)
        workloads = [o for o in objects if o["kind"] in ("Deployment", "StatefulSet")]
        replica_sets, pods = _pods(workloads)
        objects += replica_sets
        self.pods = [(p["metadata"]["name"], [c["name"] for c in p["spec"]["containers"]])
                     for p in pods]
        self.files: dict[str, str] = {}
        by_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for obj in objects + pods:
            by_file[f"{_group(obj)}/{_plural(obj['kind'])}.yaml"].append(obj)
        for rel, items in sorted(by_file.items()):
            self.files[rel] = _dump(_list(items))
        for pod in pods:  # oc adm inspect also writes each pod on its own
            name = pod["metadata"]["name"]
            self.files[f"pods/{name}/{name}.yaml"] = _dump(pod)
        self.object_count = len(objects) + len(pods)
        self.noise_count = sum(1 for o in objects if o["kind"] in NOISE_KINDS)


# -- the management cluster ------------------------------------------------------------------

class ManagementCluster:
    def __init__(self, clusters: int, workload_namespaces: int, seed: int) -> None:
        self.n, self.m, self.seed = clusters, workload_namespaces, seed
        self.rng = random.Random(seed)
        self.template = _load_template()
        self.profiles: dict[tuple[str, bool, bool], Profile] = {}
        self.objects = 0
        self.files = 0
        self.bytes = 0

    def profile(self, platform: str, proxied: bool, ha: bool) -> Profile:
        key = (platform, proxied, ha)
        if key not in self.profiles:
            self.profiles[key] = Profile(self.template, platform, proxied, ha)
        return self.profiles[key]

    def write(self, root: Path) -> None:
        base = root / f"must-gather.local.{self.seed:010d}" / IMAGE_DIR
        self.root = base
        hosted, nodepools, cms, secrets = [], [], [], []
        namespaces = ["clusters", "hypershift", "openshift-config", "openshift-ingress",
                      "openshift-monitoring", "openshift-dns"]
        weights = [w for _, w in PLATFORM_WEIGHTS]
        for i in range(self.n):
            platform = self.rng.choices([p for p, _ in PLATFORM_WEIGHTS], weights)[0]
            proxied = self.rng.random() < 0.3
            ha = self.rng.random() < 0.5
            name = f"hc-{i:04d}"
            ns = f"clusters-{name}"
            namespaces.append(ns)
            profile = self.profile(platform, proxied, ha)
            machine = f"10.{64 + i // 256}.{i % 256}.0/24"
            values = {NS: ns, HC: name, MC: machine,
                      IP: f"10.{128 + i // 256}.{i % 256}"}
            first_port = 30000 + (i * 8) % 2700
            values.update({token: str(first_port + k) for k, token in enumerate(NODE_PORTS)})
            self._write_hcp(base / "namespaces" / ns, profile, values)
            hosted.append(self._hosted_cluster(name, profile, machine))
            for k in range(self.rng.randint(1, 3)):
                nodepools.append(self._nodepool(name, platform, k))
            secrets.append({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
                            "metadata": {"name": f"{name}-pull-secret", "namespace": "clusters"},
                            "data": {".dockerconfigjson": "2731 bytes long"}})
            if proxied:
                cms.append({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": f"{name}-proxy-ca", "namespace": "clusters"},
                            "data": {"ca-bundle.crt": _fake_pem(name)}})
        self._write_objects(base, hosted + nodepools + cms + secrets + self._management())
        for j in range(self.m):
            ns = f"app-{j:04d}"
            namespaces.append(ns)
            self._write_workloads(base / "namespaces" / ns, ns, j)
        for ns in namespaces:
            self._write_namespace(base, ns)
        self._write_text(root / f"must-gather.local.{self.seed:010d}" / "timestamp",
                         "2026-11-20 10:00:00 +0000 UTC start\n")

    def _write_text(self, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode()
        path.write_bytes(data)
        self.files += 1
        self.bytes += len(data)

    def _write_hcp(self, folder: Path, profile: Profile, values: dict[str, str]) -> None:
        def fill(text: str) -> str:
            return _PLACEHOLDER.sub(lambda m: values[m.group(0)], text)

        for rel, text in profile.files.items():
            self._write_text(folder / fill(rel), fill(text))
        self.objects += profile.object_count
        pods = [name for name, _ in profile.pods]
        self._write_text(folder / "core" / "events.yaml",
                         _dump(_events(values[NS], pods, self.rng)))
        for pod, containers in profile.pods:
            for container in containers:
                self._write_text(folder / "pods" / pod / container / container / "logs" /
                                 "current.log", _log(pod, container, 12))

    def _hosted_cluster(self, name: str, profile: Profile, machine: str) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "platform": {"type": profile.platform},
            "networking": {"clusterNetwork": [{"cidr": "10.132.0.0/14"}],
                           "serviceNetwork": [{"cidr": "172.31.0.0/16"}],
                           "machineNetwork": [{"cidr": machine}], "networkType": "OVNKubernetes"},
            "services": [{"service": svc, "servicePublishingStrategy": {"type": kind}}
                         for svc, kind in profile.strategy.items()],
            "release": {"image": RELEASE},
            "pullSecret": {"name": f"{name}-pull-secret"},
            "dns": {"baseDomain": "example.com"},
            "infraID": f"{name}-{_suffix(name)}",
        }
        if profile.platform == "AWS":
            spec["platform"]["aws"] = {"region": "us-east-1", "endpointAccess": "Public"}
        if profile.proxied:
            spec["configuration"] = {"proxy": {
                "httpProxy": PROXY_HTTP, "httpsProxy": PROXY_HTTPS,
                "noProxy": f".svc,.cluster.local,{machine}",
                "trustedCA": {"name": f"{name}-proxy-ca"}}}
        return {"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
                "metadata": {"name": name, "namespace": "clusters"}, "spec": spec}

    def _nodepool(self, cluster: str, platform: str, k: int) -> dict[str, Any]:
        return {"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "NodePool",
                "metadata": {"name": f"{cluster}-pool-{k}", "namespace": "clusters"},
                "spec": {"clusterName": cluster, "replicas": 2 + k,
                         "platform": {"type": platform}, "release": {"image": RELEASE}}}

    def _management(self) -> list[dict[str, Any]]:
        env = [{"name": "HTTP_PROXY", "value": PROXY_HTTP}, {"name": "HTTPS_PROXY", "value": PROXY_HTTP},
               {"name": "NO_PROXY", "value": ".cluster.local,.svc,127.0.0.1"}]
        operator = {"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": "operator", "namespace": "hypershift"},
                    "spec": {"replicas": 2, "selector": {"matchLabels": {"name": "operator"}},
                             "template": {"metadata": {"labels": {"name": "operator"}},
                                          "spec": {"containers": [{
                                              "name": "operator", "env": env,
                                              "image": "quay.io/hypershift/hypershift-operator:4.17",
                                              "ports": [{"containerPort": 9443, "name": "webhook"}]}]}}}}
        router = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "router-default", "namespace": "openshift-ingress"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "router"}},
                           "template": {"metadata": {"labels": {"app": "router"}},
                                        "spec": {"containers": [{"name": "router", "ports": [
                                            {"containerPort": 80}, {"containerPort": 443}]}]}}}}
        rs, pods = _pods([operator, router])
        for pod in pods:
            pod["status"]["podIP"] = pod["status"]["podIP"].replace(IP, "10.131.0")
            pod["status"]["podIPs"] = [{"ip": pod["status"]["podIP"]}]
        return [
            {"apiVersion": "config.openshift.io/v1", "kind": "Proxy", "metadata": {"name": "cluster"},
             "spec": {"httpProxy": PROXY_HTTP, "httpsProxy": PROXY_HTTPS,
                      "noProxy": ".corp.example.com,10.0.0.0/16", "trustedCA": {"name": "corp-proxy-ca"}},
             "status": {"httpProxy": PROXY_HTTP, "httpsProxy": PROXY_HTTPS,
                        "noProxy": ".cluster.local,.corp.example.com,.svc,10.0.0.0/16,"
                                   "10.128.0.0/14,127.0.0.1,172.30.0.0/16,localhost"}},
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "corp-proxy-ca", "namespace": "openshift-config"},
             "data": {"ca-bundle.crt": _fake_pem("corp")}},
            operator, router, *rs, *pods]

    def _write_workloads(self, folder: Path, ns: str, j: int) -> None:
        rng = random.Random(f"{self.seed}/app/{j}")
        objects: list[dict[str, Any]] = []
        apps = [f"{word}-{k}" for k, word in enumerate(
            rng.sample(["web", "api", "worker", "cache", "db", "queue", "auth", "search"],
                       rng.randint(2, 4)))]
        deployments = []
        for app in apps:
            env = []
            if rng.random() < 0.2:
                env = [{"name": "HTTPS_PROXY", "value": PROXY_HTTP},
                       {"name": "NO_PROXY", "value": ".svc,.cluster.local"}]
            deployments.append({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": app, "namespace": ns, "labels": {"app": app}},
                "spec": {"replicas": rng.randint(1, 3), "selector": {"matchLabels": {"app": app}},
                         "template": {"metadata": {"labels": {"app": app, "tier": ns}},
                                      "spec": {"containers": [{
                                          "name": app, "image": f"registry.example.com/{app}:1.{j}",
                                          "env": env,
                                          "ports": [{"containerPort": 8080, "name": "http"}]}]}}}})
            objects.append({"apiVersion": "v1", "kind": "Service",
                            "metadata": {"name": app, "namespace": ns},
                            "spec": {"selector": {"app": app},
                                     "ports": [{"port": 80, "targetPort": 8080}]}})
        rs, pods = _pods(deployments)
        for pod in pods:
            pod["status"]["podIP"] = pod["status"]["podIP"].replace(IP, f"10.130.{j % 256}")
            pod["status"]["podIPs"] = [{"ip": pod["status"]["podIP"]}]
        objects += deployments + rs + pods
        objects.append(_policy("default-deny", ns, None, ingress=[]))
        objects.append(_policy("allow-same-namespace", ns, None,
                               ingress=[{"from": [{"podSelector": {}}]}]))
        objects.append(_policy("allow-from-ingress", ns, {"app": apps[0]}, ingress=[{
            "from": [{"namespaceSelector": {"matchLabels": {
                "network.openshift.io/policy-group": "ingress"}}}], "ports": _tcp(8080)}]))
        if rng.random() < 0.3:
            objects.append(_policy("egress-dns", ns, None, egress=[
                {"ports": [{"protocol": "UDP", "port": 53}]},
                {"to": [{"namespaceSelector": {}}]}]))
        settings = {"LOG_LEVEL": "info", "FEATURE_FLAGS": "a,b,c"}
        if rng.random() < 0.1:
            settings["HTTPS_PROXY"] = "http://svc-app:Winter2026@proxy.corp.example.com:3128"
        objects.append({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": f"{apps[0]}-settings", "namespace": ns}, "data": settings})
        self._write_objects(folder.parent.parent, objects)
        self._write_text(folder / "core" / "events.yaml",
                         _dump(_events(ns, [p["metadata"]["name"] for p in pods], rng)))
        for pod in pods:
            name = pod["metadata"]["name"]
            self._write_text(folder / "pods" / name / f"{name}.yaml", _dump(pod))
            for c in pod["spec"]["containers"]:
                self._write_text(folder / "pods" / name / c["name"] / c["name"] / "logs" /
                                 "current.log", _log(name, c["name"], 12))

    def _write_objects(self, base: Path, objects: list[dict[str, Any]]) -> None:
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
        for obj in objects:
            groups[(obj["metadata"].get("namespace", ""), _group(obj), obj["kind"])].append(obj)
        for (ns, group, kind), items in sorted(groups.items()):
            folder = base / "namespaces" / ns / group if ns else base / "cluster-scoped-resources" / group
            self._write_text(folder / f"{_plural(kind)}.yaml", _dump(_list(items)))
            self.objects += len(items)

    def _write_namespace(self, base: Path, ns: str) -> None:
        labels = {"kubernetes.io/metadata.name": ns}
        if ns.startswith("clusters-"):
            labels["hypershift.openshift.io/hosted-control-plane"] = "true"
        if ns == "openshift-ingress":
            labels["network.openshift.io/policy-group"] = "ingress"
        if ns == "openshift-monitoring":
            labels["network.openshift.io/policy-group"] = "monitoring"
        self._write_text(base / "namespaces" / ns / f"{ns}.yaml", _dump(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}}))
        self.objects += 1


def _fake_pem(name: str) -> str:
    body = hashlib.sha512(name.encode()).hexdigest() * 8
    lines = [body[k:k + 64] for k in range(0, len(body), 64)]
    return "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----\n"


def generate_mgmt(clusters: int, workload_namespaces: int | None = None, seed: int = 1,
                  out: Path = OUT, tar: bool = False) -> dict[str, Any]:
    m = clusters // 2 if workload_namespaces is None else workload_namespaces
    root = out / f"mgmt-{clusters}"
    if root.exists():
        shutil.rmtree(root)
    mgmt = ManagementCluster(clusters, m, seed)
    mgmt.write(root)
    info = {"path": str(root), "clusters": clusters, "workload_namespaces": m,
            "objects": mgmt.objects, "files": mgmt.files, "bytes": mgmt.bytes}
    if tar:
        archive = out / f"mgmt-{clusters}.tar.gz"
        with tarfile.open(archive, "w:gz", compresslevel=1) as t:
            t.add(root, arcname=".")
        info["archive"] = str(archive)
    return info


# -- plain NetworkPolicy inputs (hcpscan connectivity vs nca) --------------------------------

def netpol_name(pods: int, policies: int, anps: int = 0, banp_rules: int = 0) -> str:
    tiers = f"-anp{anps}-banp{banp_rules}" if anps or banp_rules else ""
    return f"netpol-{pods}-{policies}{tiers}"


def generate_netpol(pods: int, policies: int, seed: int = 1, out: Path = OUT, anps: int = 0,
                    banp_rules: int = 0) -> dict[str, Any]:
    """``pods`` pods in namespaces of 40, ``policies`` policies spread over them: default
    deny, same-namespace, cross-namespace by label, app-to-app ports, DNS egress and
    external ipBlocks - the mix a multi-tenant cluster carries. With ``anps`` /
    ``banp_rules``, also that many AdminNetworkPolicies and a BaselineAdminNetworkPolicy
    with that many rules (``cluster-policies.yaml``); the pods and NetworkPolicies are
    the same bytes as without them, so the two runs compare."""
    rng = random.Random(f"netpol/{seed}")
    root = out / netpol_name(pods, policies, anps, banp_rules)
    if root.exists():
        shutil.rmtree(root)
    per_ns = 40
    namespaces = max(1, pods // per_ns)
    teams = ["payments", "search", "identity", "data", "edge"]
    apps = ["frontend", "api", "worker", "cache", "db", "queue", "auth", "metrics"]
    written = 0
    policy_no = 0
    for k in range(namespaces):
        ns = f"ns-{k:04d}"
        team = teams[k % len(teams)]
        docs: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": ns, "labels": {"team": team, "kubernetes.io/metadata.name": ns,
                                   "tier": "prod" if k % 3 else "dev"}}}]
        count = per_ns if k < namespaces - 1 else pods - per_ns * (namespaces - 1)
        for p in range(count):
            app = apps[p % len(apps)]
            docs.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": f"{app}-{_suffix(ns, p)}", "namespace": ns,
                                      "labels": {"app": app, "team": team,
                                                 "version": f"v{p % 2 + 1}"}},
                         "spec": {"containers": [{"name": app, "image": f"example.com/{app}:1",
                                                  "ports": [{"containerPort": 8080 + p % 4,
                                                             "name": "http", "protocol": "TCP"}]}]},
                         "status": {"podIP": f"10.{128 + k // 256}.{k % 256}.{p + 1}"}})
        share = policies // namespaces + (1 if k < policies % namespaces else 0)
        for q in range(share):
            docs.append(_netpol_policy(ns, q, rng, apps, teams, policy_no))
            policy_no += 1
        folder = root / ns
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "objects.yaml").write_text(yaml.dump_all(docs, Dumper=Dumper, sort_keys=False))
        written += len(docs)
    if anps or banp_rules:
        tiers = _admin_policies(anps, banp_rules, random.Random(f"anp/{seed}"), apps, teams)
        (root / "cluster-policies.yaml").write_text(yaml.dump_all(tiers, Dumper=Dumper,
                                                                  sort_keys=False))
        written += len(tiers)
    return {"path": str(root), "pods": pods, "policies": policy_no, "namespaces": namespaces,
            "objects": written, "anps": anps, "banp_rules": banp_rules}


def _admin_policies(anps: int, banp_rules: int, rng: random.Random, apps: list[str],
                    teams: list[str]) -> list[dict[str, Any]]:
    """ANPs a platform team writes: per team or tier, allow/deny/pass by namespace and pod
    labels, ports and port ranges, egress to networks; then a baseline of deny rules."""
    def peer(direction: str) -> dict[str, Any]:
        pick = rng.randrange(4)
        if pick == 3 and direction == "egress":
            return {"networks": [f"{rng.randrange(11, 200)}.{rng.randrange(256)}.0.0/16"]}
        if pick == 0:
            return {"namespaces": {"matchLabels": {"team": rng.choice(teams)}}}
        return {"pods": {"namespaceSelector": {"matchLabels": {"tier": rng.choice(["prod", "dev"])}},
                         "podSelector": {"matchLabels": {"app": rng.choice(apps)}}}}

    def ports() -> list[dict[str, Any]] | None:
        pick = rng.randrange(4)
        if pick == 0:
            return None
        if pick == 1:
            return [{"portRange": {"protocol": "TCP", "start": 8080, "end": 8083}}]
        if pick == 2:
            return [{"namedPort": "http"}]
        return [{"portNumber": {"protocol": rng.choice(["TCP", "UDP"]), "port": rng.choice([53, 443, 8080])}}]

    def rules(direction: str, count: int, actions: list[str]) -> list[dict[str, Any]]:
        out = []
        for r in range(count):
            rule: dict[str, Any] = {"name": f"{direction}-{r}", "action": rng.choice(actions),
                                    "to" if direction == "egress" else "from": [peer(direction)]}
            chosen = ports()
            if chosen is not None:
                rule["ports"] = chosen
            out.append(rule)
        return out

    docs: list[dict[str, Any]] = []
    for a in range(anps):
        subject = ({"namespaces": {"matchLabels": {"team": teams[a % len(teams)]}}} if a % 2 else
                   {"pods": {"namespaceSelector": {"matchLabels": {"tier": "prod"}},
                             "podSelector": {"matchLabels": {"app": apps[a % len(apps)]}}}})
        docs.append({"apiVersion": "policy.networking.k8s.io/v1alpha1", "kind": "AdminNetworkPolicy",
                     "metadata": {"name": f"anp-{a:03d}"},
                     "spec": {"priority": a * 7 % 1000, "subject": subject,
                              "ingress": rules("ingress", 2, ["Allow", "Deny", "Pass"]),
                              "egress": rules("egress", 2, ["Allow", "Deny", "Pass"])}})
    if banp_rules:
        half = banp_rules // 2
        docs.append({"apiVersion": "policy.networking.k8s.io/v1alpha1",
                     "kind": "BaselineAdminNetworkPolicy", "metadata": {"name": "default"},
                     "spec": {"subject": {"namespaces": {}},
                              "ingress": rules("ingress", banp_rules - half, ["Allow", "Deny"]),
                              "egress": rules("egress", half, ["Allow", "Deny"])}})
    return docs


def _netpol_policy(ns: str, q: int, rng: random.Random, apps: list[str], teams: list[str],
                   number: int) -> dict[str, Any]:
    name = f"policy-{q:03d}"
    app = apps[q % len(apps)]
    other = apps[(q + 1 + rng.randrange(len(apps) - 1)) % len(apps)]
    shape = q % 6
    if shape == 0:
        return _policy(f"{name}-default-deny", ns, None, ingress=[], egress=[
            {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}}],
             "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}])
    if shape == 1:
        return _policy(f"{name}-same-ns", ns, {"app": app}, ingress=[{"from": [{"podSelector": {}}]}])
    if shape == 2:
        return _policy(f"{name}-from-team", ns, {"app": app}, ingress=[{
            "from": [{"namespaceSelector": {"matchLabels": {"team": rng.choice(teams)}},
                      "podSelector": {"matchLabels": {"app": other}}}],
            "ports": _tcp(8080 + number % 4)}])
    if shape == 3:
        return _policy(f"{name}-app-to-app", ns, {"app": other}, egress=[{
            "to": [{"podSelector": {"matchLabels": {"app": app}}}],
            "ports": [{"protocol": "TCP", "port": "http"}]}])
    if shape == 4:
        block = f"{rng.randrange(11, 200)}.{rng.randrange(256)}.0.0/16"
        return _policy(f"{name}-external", ns, {"app": app}, egress=[{
            "to": [{"ipBlock": {"cidr": block}}], "ports": _tcp(443)}])
    return _policy(f"{name}-from-prod", ns, {"app": app}, ingress=[{
        "from": [{"namespaceSelector": {"matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["prod"]}]}}],
        "ports": [{"protocol": "TCP", "port": 8080, "endPort": 8083}]}])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    mgmt = sub.add_parser("mgmt", help="a management cluster in must-gather layout")
    mgmt.add_argument("--clusters", type=int, default=10, help="hosted clusters (N)")
    mgmt.add_argument("--workload-namespaces", type=int, default=None,
                      help="extra application namespaces (M, default N/2)")
    mgmt.add_argument("--tar", action="store_true", help="also write mgmt-N.tar.gz")
    netpol = sub.add_parser("netpol", help="Namespaces, Pods and NetworkPolicies")
    netpol.add_argument("--pods", type=int, default=2000)
    netpol.add_argument("--policies", type=int, default=500)
    netpol.add_argument("--anps", type=int, default=0, help="AdminNetworkPolicies to add")
    netpol.add_argument("--banp-rules", type=int, default=0,
                        help="rules of the BaselineAdminNetworkPolicy to add (0: none)")
    for p in (mgmt, netpol):
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.what == "mgmt":
        try:
            info = generate_mgmt(args.clusters, args.workload_namespaces, args.seed, args.out,
                                 args.tar)
        except TemplateMissing as exc:
            sys.exit(f"generate.py: {exc}")
    else:
        info = generate_netpol(args.pods, args.policies, args.seed, args.out, args.anps,
                               args.banp_rules)
    print(" ".join(f"{k}={v}" for k, v in info.items()))


if __name__ == "__main__":
    os.umask(0o022)
    main()
