"""Objects that share one container spec (the loader shares equal pod specs between a
Deployment, its ReplicaSet and its Pods) are read once per spec and reported per object:
each gets its own consumers, sidecar and settings, found in its own file."""

from __future__ import annotations

from typing import Any

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
