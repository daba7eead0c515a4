"""Objects that share one container spec (the loader shares equal pod specs between a
Deployment, its ReplicaSet and its Pods) are read once per spec and reported per object:
each gets its own consumers, sidecar and settings, found in its own file."""

from __future__ import annotations

from typing import Any

from hcpscan.analysis.proxy import containers as ct
from hcpscan.analysis.proxy.index import ProxyConsumers
from hcpscan.analysis.proxy.workloads import container_proxies
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.objects import SourceLocation

SIDECAR = {"name": "konnectivity-proxy", "image": "quay.io/openshift/konnectivity",
           "command": ["/usr/bin/control-plane-operator", "konnectivity-https-proxy"],
           "args": ["--serving-port=8092", "--https-proxy=http://proxy.corp:3128"]}
CLIENT = {"name": "oauth", "image": "quay.io/openshift/oauth",
          "env": [{"name": "HTTPS_PROXY", "value": "http://127.0.0.1:8092"}]}
QUIET = {"name": "quiet", "image": "quay.io/openshift/quiet", "env": [{"name": "A", "value": "b"}]}


def _deployment(namespace: str, spec: dict[str, Any], path: str) -> K8sObject:
    body = {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "oauth", "namespace": namespace},
            "spec": {"template": {"spec": spec}}}
    return K8sObject("management", "apps/v1", "Deployment", namespace, "oauth", body,
                     SourceLocation(path, 1))


def test_objects_sharing_a_container_spec_each_get_their_own_consumers() -> None:
    shared = {"containers": [SIDECAR, CLIENT, QUIET]}
    inventory = Inventory([_deployment("clusters-a", shared, "a.yaml"),
                           _deployment("clusters-b", shared, "b.yaml"),
                           _deployment("clusters-c", {"containers": [dict(QUIET, env=[
                               {"name": "HTTP_PROXY", "value": "http://proxy.corp:3128"}])]},
                               "c.yaml")])
    consumers = container_proxies(inventory)
    names = sorted(c.name for c in consumers)
    assert names == [f"Deployment clusters-{ns}/oauth container {name}"
                     for ns in "ab" for name in ("konnectivity-proxy", "oauth")] + [
        "Deployment clusters-c/oauth container quiet"]
    for ns in "ab":
        client = next(c for c in consumers if c.name == f"Deployment clusters-{ns}/oauth container oauth")
        assert client.via is not None and client.via.object is client.object
        assert client.object.namespace == f"clusters-{ns}"
        assert client.https_proxy is not None and client.https_proxy.source.path == f"{ns}.yaml"
    quiet = next(c for c in consumers if c.object.namespace == "clusters-c")
    assert quiet.http_proxy is not None and quiet.http_proxy.value == "http://proxy.corp:3128"


def _pod(namespace: str, spec: dict[str, Any], path: str) -> K8sObject:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "oauth-1", "namespace": namespace},
            "spec": spec}
    return K8sObject("management", "v1", "Pod", namespace, "oauth-1", body, SourceLocation(path, 1))


def test_a_pod_and_a_deployment_sharing_one_spec_each_get_their_consumers() -> None:
    # the plan read once per spec is indexed by position, whatever the kind's path to it
    shared = {"initContainers": [QUIET], "containers": [SIDECAR, CLIENT]}
    inventory = Inventory([_deployment("clusters-a", shared, "a.yaml"),
                           _pod("clusters-a", shared, "p.yaml")])
    consumers = container_proxies(inventory)
    assert [(c.object.kind, c.container, c.kind) for c in consumers] == [  # Pods come first
        ("Pod", "konnectivity-proxy", "konnectivity-sidecar"), ("Pod", "oauth", "container"),
        ("Deployment", "konnectivity-proxy", "konnectivity-sidecar"),
        ("Deployment", "oauth", "container")]
    for sidecar, client, field in ((consumers[0], consumers[1], "spec.containers[1]"),
                                   (consumers[2], consumers[3], "spec.template.spec.containers[1]")):
        assert client.via is sidecar and sidecar.object is client.object
        assert client.https_proxy is not None
        assert client.https_proxy.source.field == field + ".env[0].value"


def test_containers_of_answers_what_the_whole_list_holds() -> None:
    shared = {"containers": [SIDECAR, CLIENT, QUIET]}
    objects = [_deployment("clusters-a", shared, "a.yaml"), _pod("clusters-a", shared, "p.yaml"),
               _deployment("clusters-b", {"containers": "none"}, "b.yaml"),
               _pod("clusters-c", {"initContainers": [QUIET, "odd"], "containers": [CLIENT]},
                    "c.yaml"),
               K8sObject("management", "v1", "ConfigMap", "clusters-a", "cm",
                         {"kind": "ConfigMap", "data": {}}, SourceLocation("cm.yaml", 1))]
    inventory = Inventory(objects)
    index = ProxyConsumers(inventory)
    whole: dict[int, list[ct.ContainerRef]] = {}
    for ref in ct.containers(inventory):
        whole.setdefault(id(ref.obj), []).append(ref)
    for obj in objects:
        assert index.containers_of(obj) == whole.get(id(obj), [])
        assert index.containers_of(obj) == whole.get(id(obj), [])  # asked again
    stranger = _pod("clusters-z", shared, "z.yaml")  # not in the inventory: no containers
    assert index.containers_of(stranger) == []


def test_pod_spec_is_what_the_objects_own_path_reads() -> None:
    bodies: list[Any] = [{"spec": {"template": {"spec": {"containers": []}}}}, {"spec": None},
                         {"spec": {"template": "x"}}, {"spec": {"jobTemplate": {"spec": {
                             "template": {"spec": {"a": 1}}}}}}, {None: {"spec": 1}}, {}]
    for kind in (*ct.POD_SPEC_PATHS, "ConfigMap", "HostedCluster"):
        for body in bodies:
            obj = K8sObject("management", "v1", kind, "ns", "n", body, SourceLocation("x.yaml", 1))
            expected = obj.get(ct.POD_SPEC_PATHS[kind]) if kind in ct.POD_SPEC_PATHS else None
            assert ct.pod_spec(obj) is expected, (kind, body)
