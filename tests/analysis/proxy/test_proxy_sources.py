"""Where proxy values come from: named and located only when shown, and containers whose
environment cannot hold a proxy variable skipped without resolving it."""

from __future__ import annotations

import base64
from typing import Any

import pytest
import yaml

from hcpscan.analysis.proxy import containers as ct
from hcpscan.analysis.proxy.settings import source_of
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.objects import SourceLocation

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster: {server: "https://hub:6443", proxy-url: "http://proxy:3128"}
"""


def _object(body: dict[str, Any], line: int = 1) -> K8sObject:
    meta = body["metadata"]
    return K8sObject("management", body["apiVersion"], body["kind"], meta.get("namespace", ""),
                     meta["name"], body, SourceLocation("m.yaml", line))


class CountingInventory(Inventory):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.located: list[tuple[str, object]] = []

    def locate(self, obj, path=()):  # type: ignore[no-untyped-def]
        self.located.append((obj.kind, path))
        return super().locate(obj, path)


def test_a_source_is_named_and_located_when_read() -> None:
    cm = _object({"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "proxy", "namespace": "monitoring"},
                  "data": {"HTTPS_PROXY": "http://proxy:3128"}}, line=5)
    inventory = CountingInventory([cm])
    source = source_of(inventory, cm, ("data", "HTTPS_PROXY"))
    assert inventory.located == []
    assert (source.ref, source.field) == ("ConfigMap monitoring/proxy", "data.HTTPS_PROXY")
    assert inventory.located == []
    assert (source.path, source.line) == ("m.yaml", 5)
    assert str(source) == "m.yaml:5 (ConfigMap monitoring/proxy data.HTTPS_PROXY)"
    assert inventory.located == [("ConfigMap", ("data", "HTTPS_PROXY"))]


def test_a_source_inside_a_secret_names_the_secret() -> None:
    secret = _object({"apiVersion": "v1", "kind": "Secret",
                      "metadata": {"name": "hub-kubeconfig", "namespace": "agent"},
                      "data": {"kubeconfig": base64.b64encode(KUBECONFIG.encode()).decode()}})
    inventory = Inventory([secret])
    (kubeconfig,) = inventory.of_kind("Kubeconfig")
    source = source_of(inventory, kubeconfig, "clusters[0].cluster.proxy-url")
    assert source.ref == "Secret agent/hub-kubeconfig"
    assert source.field == "data.kubeconfig (clusters[0].cluster.proxy-url)"
    assert source == source_of(inventory, kubeconfig, ("clusters", 0, "cluster", "proxy-url"))


CONTAINERS = """\
- {name: plain}
- {name: no-env, env: []}
- name: unrelated
  env:
  - {name: LOG_LEVEL, value: debug}
  - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
  - {name: GOMAXPROCS, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}
- name: proxy
  env: [{name: https_proxy, value: "http://proxy:3128"}]
- name: key-reference
  env: [{name: TOKEN, valueFrom: {secretKeyRef: {name: absent, key: token}}}]
- name: env-from
  envFrom: [{configMapRef: {name: absent}}]
- name: expanded
  env:
  - {name: HOST, value: proxy}
  - {name: HTTP_PROXY, value: "http://$(HOST):3128"}
"""


@pytest.fixture
def refs() -> dict[str, ct.ContainerRef]:
    pod = _object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
                   "spec": {"containers": yaml.safe_load(CONTAINERS)}})
    return {ref.name: ref for ref in ct.containers(Inventory([pod]))}


@pytest.mark.parametrize("name,may", [
    ("plain", False), ("no-env", False), ("unrelated", False), ("proxy", True),
    ("key-reference", True), ("env-from", True), ("expanded", True),
])
def test_containers_that_may_set_a_proxy(refs: dict[str, ct.ContainerRef], name: str,
                                         may: bool) -> None:
    assert ct.may_set_proxy(refs[name]) is may


def test_containers_that_may_not_resolve_to_no_proxy_variable(refs: dict[str, ct.ContainerRef]
                                                              ) -> None:
    inventory = Inventory([])
    for ref in refs.values():
        if not ct.may_set_proxy(ref):
            assert ct.proxy_variables(ct.container_env(inventory, ref)) == {}
    assert set(ct.proxy_variables(ct.container_env(inventory, refs["expanded"]))) == {"HTTP_PROXY"}
