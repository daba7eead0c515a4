"""Proxy settings in Helm chart values: Flux HelmRelease ``spec.values`` and
``spec.valuesFrom``, Giant Swarm App ``spec.config`` / ``spec.userConfig`` /
``spec.extraConfigs`` (ConfigMaps and Secrets, key ``values``) and the
``<name>-user-values`` ConfigMaps and Secrets users write for them.

Each values document that holds a proxy block is one consumer, at the object where
the values are written (one value, one finding, however many releases read it); the
releases that read it are named in its notes. Where the charts keep the block
(DOMAIN.md §6, seed 003):

* ``global.connectivity.proxy`` (``httpProxy``/``httpsProxy``/``noProxy``, used only
  when ``enabled``): the cluster charts (giantswarm/cluster and the cluster-<provider>
  charts built on it), which write it into the nodes' containerd, kubelet and teleport
  drop-ins after their own entries — 127.0.0.1, localhost, svc, local, the cluster's
  service and pod CIDRs —, so its noProxy answers only for what the user must add;
* ``cluster.proxy`` (``http``/``https``/``noProxy``): what cluster-apps-operator hands
  every app of a workload cluster (chart-operator, cert-manager, ...);
* ``proxy`` (``http``/``https`` or ``httpProxy``/``httpsProxy``, ``noProxy``): apps
  whose chart takes the proxy at the top level.

``<cluster>-cluster-values`` documents are the ``cluster-values`` consumers of
``effective.py`` and are not read again here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.proxy.settings import (
    CHART_VALUES,
    ConsumerProxy,
    Setting,
    setting_text,
    source_in_text,
    source_of,
)
from hcpscan.core.yamldocs import YamlSyntaxError, load_one
from hcpscan.inventory.fieldpath import Step
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.secrets import secret_values
from hcpscan.inventory.store import Inventory
from hcpscan.model.capi import release_clusters

HELM_GROUP = "helm.toolkit.fluxcd.io"
APP_GROUP = "application.giantswarm.io"
USER_VALUES_SUFFIX = "-user-values"
CLUSTER_VALUES_SUFFIX = "-cluster-values"
APP_VALUES_KEY = "values"  # the key app-operator reads from every App config object
FLUX_VALUES_KEY = "values.yaml"  # HelmRelease valuesFrom[].valuesKey default

# (keys a chart may use for the value, in the order it reads them, consumer attribute)
PROXY_KEYS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("http", "httpProxy"), "http_proxy"), (("https", "httpsProxy"), "https_proxy"),
    (("noProxy",), "no_proxy"))
CLUSTER_CHART_BLOCK = ("global", "connectivity", "proxy")
# Where charts keep their proxy block, first match wins.
PROXY_BLOCKS: tuple[tuple[str, ...], ...] = (CLUSTER_CHART_BLOCK, ("cluster", "proxy"), ("proxy",))
CLUSTER_CHART_COMPLETES = ("the cluster chart, which puts 127.0.0.1, localhost, svc, local and "
                           "the cluster's service and pod CIDRs before it")


@dataclass(frozen=True, slots=True)
class ProxyBlock:
    steps: tuple[str, ...]  # where the block is in the values
    values: dict[str, Any]


def proxy_block(values: Any) -> ProxyBlock | None:
    """The proxy block of a chart's values, or None (none, or ``enabled: false``)."""
    if not isinstance(values, dict):
        return None
    for steps in PROXY_BLOCKS:
        block: Any = values
        for step in steps:
            block = block.get(step) if isinstance(block, dict) else None
        if isinstance(block, dict):
            if block.get("enabled") is False or (steps == CLUSTER_CHART_BLOCK
                                                 and not block.get("enabled")):
                return None  # the chart renders no proxy from it
            return ProxyBlock(steps, block)
    return None


def chart_values_proxies(inventory: Inventory) -> list[ConsumerProxy]:
    readers = _readers(inventory)
    out = [c for c in _inline_values(inventory) if c is not None]
    seen: set[tuple[int, str]] = set()
    for obj, key, why in _documents(inventory, readers):
        if (id(obj), key) in seen:
            continue
        seen.add((id(obj), key))
        found = _document_consumer(inventory, obj, key)
        if found is not None:
            consumer, values = found
            read_by = readers.get((id(obj), key), [])
            consumer.notes += [f"read by {r.ref} ({f})" for r, f in read_by] or [why]
            consumer.workload_clusters = frozenset(release_clusters(obj, values).union(
                *(release_clusters(r, None) for r, _f in read_by)))
            out.append(consumer)
    return out


def _inline_values(inventory: Inventory) -> Iterator[ConsumerProxy | None]:
    for obj in inventory.of_kind("HelmRelease"):
        if obj.group != HELM_GROUP:
            continue
        block = proxy_block(obj.get("spec.values"))
        if block is None:
            continue
        base: tuple[Step, ...] = ("spec", "values", *block.steps)
        consumer = _consumer(obj, f"{obj.ref} spec.values", block,
                             lambda key, base=base, obj=obj: source_of(inventory, obj, base + (key,)))
        if consumer is not None:
            consumer.workload_clusters = frozenset(release_clusters(obj, obj.get("spec.values")))
        yield consumer


def _readers(inventory: Inventory) -> dict[tuple[int, str], list[tuple[K8sObject, str]]]:
    """(values object, key) -> the releases that read it, with the field that says so."""
    out: dict[tuple[int, str], list[tuple[K8sObject, str]]] = {}
    for obj, ref_field, kind, name, namespace, key in _references(inventory):
        target = inventory.get(kind, namespace, name, obj.cluster)
        if target is not None:
            out.setdefault((id(target), key), []).append((obj, ref_field))
    return out


def _references(inventory: Inventory) -> Iterator[tuple[K8sObject, str, str, str, str, str]]:
    """(release, field, kind, name, namespace, key) of every values object a release reads."""
    for obj in inventory.of_kind("App"):
        if obj.group != APP_GROUP:
            continue
        for part in ("config", "userConfig"):
            for kind in ("configMap", "secret"):
                ref = obj.get(("spec", part, kind))
                if isinstance(ref, dict) and ref.get("name"):
                    yield (obj, f"spec.{part}.{kind}", kind[0].upper() + kind[1:],
                           str(ref["name"]), str(ref.get("namespace") or obj.namespace),
                           APP_VALUES_KEY)
        extra = obj.get("spec.extraConfigs")
        for i, ref in enumerate(extra if isinstance(extra, list) else []):
            if isinstance(ref, dict) and ref.get("name"):
                kind = "Secret" if str(ref.get("kind", "configMap")).lower() == "secret" \
                    else "ConfigMap"
                yield (obj, f"spec.extraConfigs[{i}]", kind, str(ref["name"]),
                       str(ref.get("namespace") or obj.namespace), APP_VALUES_KEY)
    for obj in inventory.of_kind("HelmRelease"):
        sources = obj.get("spec.valuesFrom") if obj.group == HELM_GROUP else None
        for i, ref in enumerate(sources if isinstance(sources, list) else []):
            if not isinstance(ref, dict) or ref.get("targetPath") or \
                    ref.get("kind") not in ("ConfigMap", "Secret") or not ref.get("name"):
                continue  # a targetPath sets one value, not a values document
            yield (obj, f"spec.valuesFrom[{i}]", str(ref["kind"]), str(ref["name"]),
                   obj.namespace, str(ref.get("valuesKey") or FLUX_VALUES_KEY))


def _documents(inventory: Inventory, readers: dict[tuple[int, str], list[tuple[K8sObject, str]]]
               ) -> Iterator[tuple[K8sObject, str, str]]:
    """(object, key, why it is read) of every values document to look into."""
    keys_of: dict[int, list[str]] = {}
    for oid, key in readers:
        keys_of.setdefault(oid, []).append(key)
    for obj in inventory.of_kind("ConfigMap", "Secret"):
        if obj.name.endswith(CLUSTER_VALUES_SUFFIX):
            continue  # a cluster-values consumer already
        keys = keys_of.get(id(obj), [])
        for key in keys:
            yield obj, key, "read by a release"
        if obj.name.endswith(USER_VALUES_SUFFIX) and APP_VALUES_KEY not in keys:
            yield obj, APP_VALUES_KEY, f"user values ({USER_VALUES_SUFFIX}) of a release"


def _document_text(obj: K8sObject, key: str) -> tuple[str, str] | None:
    """(field, text) of a values document in a ConfigMap or Secret."""
    if obj.kind == "ConfigMap":
        text = (obj.body.get("data") or {}).get(key)
        return ("data", text) if isinstance(text, str) else None
    value = secret_values(obj).get(key)
    if value is None or value.text is None:
        return None
    return ("data" if key in (obj.body.get("data") or {}) else "stringData"), value.text


def _document_consumer(inventory: Inventory, obj: K8sObject, key: str
                       ) -> tuple[ConsumerProxy, Any] | None:
    """The consumer of a values document with a proxy block, and the values it reads."""
    found = _document_text(obj, key)
    if found is None:
        return None
    field, text = found
    try:
        values = load_one(text)
    except YamlSyntaxError:
        return None
    block = proxy_block(values)
    if block is None:
        return None
    origin = source_of(inventory, obj, (field, key))
    consumer = _consumer(obj, f"{obj.ref} key {key}", block,
                         lambda name: source_in_text(origin, text, (*block.steps, name)))
    return (consumer, values) if consumer is not None else None


def _consumer(obj: K8sObject, name: str, block: ProxyBlock, where: Any) -> ConsumerProxy | None:
    consumer = ConsumerProxy(CHART_VALUES, name, obj)
    for keys, attr in PROXY_KEYS:
        key = next((k for k in keys if block.values.get(k) is not None), None)
        if key is None:
            continue
        consumer.record(Setting(key, setting_text(block.values[key]), where(key)), attr)
    if not consumer.variables:
        return None  # a block that only switches the proxy on (kyverno-policies-connectivity)
    if block.steps == CLUSTER_CHART_BLOCK:
        consumer.completed_by = CLUSTER_CHART_COMPLETES
        consumer.program = "containerd"  # and the kubelet and teleport: Go programs all
        consumer.runtime = "go"
        consumer.notes.append("the cluster chart writes it into the containerd, kubelet and "
                              "teleport drop-ins of every node")
    return consumer


# The App fields whose ConfigMap/Secret app-operator merges into the chart's values (key
# ``values``): the cluster's level (``spec.config``, cluster-apps-operator's
# ``<cluster>-cluster-values``), then the user's (``spec.userConfig``), then extraConfigs.
APP_CONFIG_REFS = (("config", "configMap"), ("config", "secret"),
                   ("userConfig", "configMap"), ("userConfig", "secret"))
_FIELD_OF = {"http_proxy": "httpProxy", "https_proxy": "httpsProxy", "no_proxy": "noProxy"}


@dataclass(slots=True)
class AppValues:
    """The proxy an App's chart gets from the configs it names: per field (httpProxy,
    httpsProxy, noProxy) the setting a later config leaves, with where it is written."""

    settings: dict[str, Setting]
    read: list[str]  # "spec.config.configMap: ConfigMap ns/name" for each config read
    unread: list[str]  # why a named config could not be read


def app_proxy_values(inventory: Inventory, app: K8sObject) -> AppValues:
    found = AppValues({}, [], [])
    refs: list[tuple[str, str, Any]] = [(f"spec.{part}.{kind}", kind[0].upper() + kind[1:],
                                         app.get(("spec", part, kind)))
                                        for part, kind in APP_CONFIG_REFS]
    extra = app.get("spec.extraConfigs")
    for i, ref in enumerate(extra if isinstance(extra, list) else []):
        if isinstance(ref, dict):
            kind = "Secret" if str(ref.get("kind", "configMap")).lower() == "secret" else "ConfigMap"
            refs.append((f"spec.extraConfigs[{i}]", kind, ref))
    for field, kind, ref in refs:
        if not isinstance(ref, dict) or not ref.get("name"):
            continue
        name, namespace = str(ref["name"]), str(ref.get("namespace") or app.namespace)
        target = inventory.get(kind, namespace, name, app.cluster)
        if target is None:
            found.unread.append(f"{field} names {kind} {namespace}/{name}, which is not in the input")
            continue
        if kind == "Secret":
            value = secret_values(target).get(APP_VALUES_KEY)
            if value is not None and value.redacted:
                found.unread.append(f"{field}: {target.ref} key {APP_VALUES_KEY} is redacted")
                continue
        found.read.append(f"{field}: {target.ref}")
        document = _document_text(target, APP_VALUES_KEY)
        if document is None:
            continue
        where, text = document
        try:
            block = proxy_block(load_one(text))
        except YamlSyntaxError:
            found.unread.append(f"{field}: {target.ref} key {APP_VALUES_KEY} is not valid YAML")
            continue
        if block is None:
            continue
        origin = source_of(inventory, target, (where, APP_VALUES_KEY))
        for keys, attr in PROXY_KEYS:
            key = next((k for k in keys if block.values.get(k) is not None), None)
            if key is not None:
                found.settings[_FIELD_OF[attr]] = Setting(
                    ".".join((*block.steps, key)), setting_text(block.values[key]),
                    source_in_text(origin, text, (*block.steps, key)))
    return found
