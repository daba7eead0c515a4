"""Effective proxy of each container, including HyperShift's control-plane proxy path.

A container's effective ``httpProxy``/``httpsProxy``/``noProxy`` follow the env
precedence of a runtime (default Go: every Kubernetes and OpenShift component).
When a container's proxy is ``http://127.0.0.1:<port>`` (or ``socks5://``) and a
``konnectivity-https-proxy`` / ``konnectivity-socks5-proxy`` sidecar of the same
pod serves that port, the request is tunnelled through konnectivity into the
data plane; the sidecar's ``--http-proxy``/``--https-proxy``/``--no-proxy`` flags
are the hosted cluster's proxy it then uses (DOMAIN.md §3). The consumer's
``via`` is that sidecar. The sidecars serve on 8090 unless ``--serving-port``
says otherwise (as the rendered CPO manifests show).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from hcpscan.analysis.proxy import containers as ct
from hcpscan.analysis.proxy.env import choose
from hcpscan.analysis.proxy.settings import (
    CONTAINER,
    KONNECTIVITY_SIDECAR,
    ConsumerProxy,
    Setting,
    source_of,
)
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.store import Inventory
from hcpscan.model.hostedcluster import hosted_cluster_for_namespace
from hcpscan.model.readers import image_program
from hcpscan.model.workloads import WORKLOAD_OWNERS, workload_name

KONNECTIVITY_COMMANDS = {"konnectivity-https-proxy": "http", "konnectivity-socks5-proxy": "socks5"}
DEFAULT_SERVING_PORT = 8090
_LOCAL_PROXY = re.compile(r"^(?:(https?|socks5h?)://)?(?:127\.0\.0\.1|localhost|\[::1\]):(\d+)/?$")
_UNKNOWN = "\x00unknown:"


def effective_settings(variables: dict[str, Setting], runtime: str = "go"
                       ) -> tuple[Setting | None, Setting | None, Setting | None]:
    """(httpProxy, httpsProxy, noProxy) a ``runtime`` client takes from these variables.

    An unknown value stands in as a non-empty placeholder, so an unknown variable
    that the client would read first makes the effective value unknown too.
    """
    env = tuple((k, v.value if v.value is not None else _UNKNOWN + k) for k, v in variables.items())
    http, no_http, https, no_https = (variables.get(name) if name else None
                                      for name in _chosen(runtime, env))
    return http, https, no_https or no_http


@lru_cache(maxsize=1024)
def _chosen(runtime: str, env: tuple[tuple[str, str], ...]
            ) -> tuple[str | None, str | None, str | None, str | None]:
    """The variables (http proxy, its no-proxy, https proxy, its no-proxy) a ``runtime``
    client takes from ``env``: asked once per distinct env (a fleet repeats a few)."""
    found: list[str | None] = []
    for scheme in ("http", "https"):
        choice = choose(runtime, dict(env), scheme)
        found += [choice.proxy_var if choice.proxy and choice.proxy_var else None,
                  choice.no_proxy_var or None]
    return found[0], found[1], found[2], found[3]


def _serves(ref: ct.ContainerRef) -> str | None:
    """What konnectivity proxy the container runs (http, socks5), if it runs one."""
    words = ct.words(ref)
    if KONNECTIVITY_COMMANDS.keys().isdisjoint(words):
        return None
    return next(KONNECTIVITY_COMMANDS[w] for w in words if w in KONNECTIVITY_COMMANDS)


def _sidecar(inventory: Inventory, ref: ct.ContainerRef, kind: str | None = None
             ) -> ConsumerProxy | None:
    """The konnectivity proxy sidecar ``ref`` is (``kind``: what ``_serves`` says of it)."""
    kind = kind or _serves(ref)
    if kind is None:
        return None
    flags = ct.flag_values(ref)
    consumer = ConsumerProxy(KONNECTIVITY_SIDECAR, f"{ref.obj.ref} container {ref.name}", ref.obj,
                             container=ref.name, serves=kind)
    for flag, attr in (("--http-proxy", "http_proxy"), ("--https-proxy", "https_proxy"),
                       ("--no-proxy", "no_proxy")):
        if flag in flags:
            value, path = flags[flag]
            setting = Setting(flag, value, source_of(inventory, ref.obj, path))
            consumer.variables[flag] = setting
            setattr(consumer, attr, setting)
    port = flags.get("--serving-port", (str(DEFAULT_SERVING_PORT), ()))[0]
    consumer.notes.append(f"{kind} proxy on 127.0.0.1:{port}, tunnelling through konnectivity "
                          "into the data plane")
    if consumer.http_proxy is None and consumer.https_proxy is None:
        consumer.notes.append("no --http-proxy/--https-proxy: connects directly from the data plane")
    consumer.variables["--serving-port"] = Setting(
        "--serving-port", port, source_of(inventory, ref.obj, flags["--serving-port"][1])
        if "--serving-port" in flags else source_of(inventory, ref.obj, ref.path))
    return consumer


def _serving(sidecar: ConsumerProxy) -> tuple[str, str]:
    return sidecar.serves, str(sidecar.variables["--serving-port"].value)


def _link(consumer: ConsumerProxy, sidecars: list[ConsumerProxy]) -> None:
    for setting in (consumer.https_proxy, consumer.http_proxy,
                    consumer.variables.get("ALL_PROXY"), consumer.variables.get("all_proxy")):
        if setting is None or setting.value is None:
            continue
        m = _LOCAL_PROXY.match(setting.value.strip())
        if not m:
            continue
        scheme = "socks5" if (m.group(1) or "http").startswith("socks") else "http"
        for sidecar in sidecars:
            if _serving(sidecar) == (scheme, m.group(2)):
                consumer.via = sidecar
                consumer.notes.append(f"{setting.name}={setting.value} is the konnectivity sidecar "
                                      f"{sidecar.container}: the HCP control-plane proxy path")
                return
        consumer.notes.append(f"{setting.name}={setting.value} points at the pod itself, but no "
                              "konnectivity sidecar serves that port")
        consumer.unserved = consumer.unserved or setting


def container_proxies(inventory: Inventory, runtime: str = "go",
                      include_unset: bool = False) -> list[ConsumerProxy]:
    """One consumer per container with proxy variables (or every container with
    ``include_unset``), plus one per konnectivity proxy sidecar."""
    out: list[ConsumerProxy] = []
    # Pods, ReplicaSets and Deployments of one template share its pod spec (the loader
    # shares equal pod specs): which of its containers run a sidecar, and which may set a
    # proxy, is read once per spec; an object whose spec has neither is passed over whole
    plans: dict[int, tuple[dict[str, Any], _Plan]] = {}
    paths: ct.Paths = {}
    for kind in ct.POD_SPEC_PATHS:
        for obj in inventory.of_kind(kind):
            pod = ct.pod_spec(obj)
            if not isinstance(pod, dict):
                continue
            known = plans.get(id(pod))
            if known is None or known[0] is not pod:
                known = plans[id(pod)] = (pod, _plan(obj, paths, include_unset))
            sidecar_at, consumer_at = known[1]
            if not sidecar_at and not consumer_at:
                continue
            sidecars = [s for s in (_sidecar(inventory, ct.container_at(obj, name, i, spec, paths),
                                             serves)
                                    for name, i, spec, serves in sidecar_at) if s is not None]
            out.extend(sidecars)
            for at in consumer_at:
                ref = ct.container_at(obj, *at, paths)
                variables = ct.proxy_variables(ct.container_env(inventory, ref))
                if not variables and not include_unset:
                    continue
                http, https, no = effective_settings(variables, runtime)
                image = str(ref.spec.get("image") or "")
                consumer = ConsumerProxy(CONTAINER, f"{obj.ref} container {ref.name}", obj,
                                         container=ref.name, http_proxy=http, https_proxy=https,
                                         no_proxy=no, variables=variables, runtime=runtime,
                                         program=image_program(image), image=image)
                _link(consumer, sidecars)
                out.append(consumer)
    return out


# Of one pod spec's containers, as (list, index, spec): those that run a konnectivity
# sidecar (with what it serves), and those to read as consumers (that may set a proxy, and
# are not named like a sidecar of the pod), in the order ``containers_in`` gives them.
_At = tuple[str, int, dict[str, Any]]
_Plan = tuple[list[tuple[str, int, dict[str, Any], str]], list[_At]]


def _plan(obj: K8sObject, paths: ct.Paths, include_unset: bool) -> _Plan:
    refs = ct.containers_in(obj, paths)
    serving = [(r, kind) for r in refs if (kind := _serves(r)) is not None]
    sidecar_names = {r.name for r, _ in serving}
    # a sidecar's flags are the hosted cluster's proxy; its env, when it has proxy variables,
    # is its own (HyperShift gives the sidecar that connects directly to cloud APIs the
    # management proxy there, konnectivity-container.go): read as a container's too
    consumer_at = [r for r in refs if ct.may_set_proxy(r) or (
        include_unset and r.name not in sidecar_names)]
    return ([(str(r.path[-2]), int(r.path[-1]), r.spec, kind) for r, kind in serving],
            [(str(r.path[-2]), int(r.path[-1]), r.spec) for r in consumer_at])


# The kinds that make the Pods, ReplicaSets and Jobs whose env the proxy rules judge at their
# maker. An owner of another kind (an OLM CatalogSource, a Node) is judged by no proxy rule,
# so the object it made is judged itself; and these are read whenever Pods, ReplicaSets or
# Jobs are (``scan.kinds_needed``), so whether an owner is in the input never depends on
# which rules were selected.
OWNED_WORKLOADS = frozenset({"Pod", "ReplicaSet", "Job"})


def controlled_pods(inventory: Inventory) -> frozenset[int]:
    """The ids of the inventory's objects ``controlled_pod`` holds, found once per scan (each
    proxy rule asks it of every subject; the inventory keeps its objects, so no id is
    reused while it lives)."""
    return inventory.derived("proxy.controlled-pods", lambda inv: frozenset(
        id(o) for o in inv.of_kind("Pod", "ReplicaSet") if controlled_pod(o, inv)))


def controlled_pod(obj: K8sObject, inventory: Inventory) -> bool:
    """A Pod (or ReplicaSet) made by a controller that is in the input: its owner is checked
    instead. Not one whose controller the input lacks (`kubectl get pods -o yaml`, a dump
    of ReplicaSets without their Deployments): nothing else would judge its env. Nor a
    static pod's mirror: the API server makes its Node its controller (``controller:
    true``), but its env is the node's manifest's, which nothing else checks."""
    if obj.kind != "Pod" and obj.kind != "ReplicaSet":
        return False  # asked of every object of many rules' kinds: most are neither
    owners = obj.metadata.get("ownerReferences")
    return isinstance(owners, list) and any(
        isinstance(o, dict) and o.get("controller") and owner_present(inventory, obj, o)
        for o in owners) and not is_static_pod(obj)


def owner_present(inventory: Inventory, obj: K8sObject, owner: dict[str, Any]) -> bool:
    """Whether the owner an ownerReference of ``obj`` names is a workload in the input
    (``WORKLOAD_OWNERS``; owners of namespaced objects are in their namespace), or, for a
    Pod's ReplicaSet the input lacks (`kubectl get deploy,pods`), the Deployment that
    ReplicaSet belongs to: the one ``workload_name`` gives (the ReplicaSet's name less the
    Pod's pod-template-hash), in the Pod's namespace. The one test every proxy rule uses
    to judge a Pod at its workload rather than twice."""
    kind, name = owner.get("kind"), owner.get("name")
    if not (isinstance(kind, str) and kind in WORKLOAD_OWNERS and isinstance(name, str)):
        return False
    if inventory.get(kind, obj.namespace, name, obj.cluster) is not None:
        return True
    if kind != "ReplicaSet" or obj.kind != "Pod" or not owner.get("controller"):
        return False
    deployment = workload_name(obj)
    return deployment != name and \
        inventory.get("Deployment", obj.namespace, deployment, obj.cluster) is not None


def is_static_pod(obj: K8sObject) -> bool:
    """A static pod (run by the kubelet from a file on its node) or its mirror in the API."""
    return obj.kind == "Pod" and (
        "kubernetes.io/config.mirror" in obj.annotations
        or obj.annotations.get("kubernetes.io/config.source") == "file")


# The labels HyperShift's control-plane pod templates carry: the colocation label (value: the
# HCP namespace; also on the cloud-network-config-controller the network operator renders
# there) and, since the v2 component framework, the component's name.
CONTROL_PLANE_POD_LABELS = ("hypershift.openshift.io/hosted-control-plane",
                            "hypershift.openshift.io/control-plane-component")


def in_control_plane(inventory: Inventory, obj: K8sObject) -> bool:
    """Whether the workload ``obj`` runs in a hosted control plane's namespace: a HostedCluster
    in the input has it as its control-plane namespace, or its pod template carries the labels
    HyperShift puts on control-plane pods. A same-named operator of the management cluster's
    own (openshift-cluster-storage-operator/cluster-storage-operator) does not."""
    if hosted_cluster_for_namespace(inventory, obj.namespace, obj.cluster) is not None:
        return True
    template = obj.get("spec.template.metadata.labels") if obj.kind != "Pod" else obj.labels
    return isinstance(template, dict) and any(k in template for k in CONTROL_PLANE_POD_LABELS)
