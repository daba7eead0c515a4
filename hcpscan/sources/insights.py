"""The Insights Operator archive: what it gathers, where, and what hcpscan makes of it.

Layout (openshift/insights-operator ``docs/gathered-data.md``, read at 8494b69b):

* ``config/<name>.json`` - cluster config objects without ``kind``/``apiVersion``
  (typed clients drop TypeMeta): ``proxy.json``, ``network.json``, ``infrastructure.json``,
  ``ingress.json``, ``authentication.json``, ``featuregate.json``, ``apiserver.json``,
  ``image.json``, ``oauth.json``; the file name says the kind (``documents.insights_typed``);
* ``config/pod/<namespace>/<pod>.json`` - Pods of failing operators, without TypeMeta;
* ``config/configmaps/<namespace>/<name>/<key>`` - every ConfigMap of ``openshift-config``
  (the Proxy's ``trustedCA`` bundle among them), ``kube-system/cluster-config-v1``'s
  ``install-config`` and a few others, **one file per key** with the key's text; the
  Operator anonymizes the inside of every PEM block (``ANONYMIZED``), so a CA bundle is
  there but its certificates are not (``CONFIGMAP_ANONYMIZED`` names those keys);
* ``config/clusteroperator/<group>/<kind>/[<namespace>/]<name>.json`` - the operator
  resources of ``operator.openshift.io`` (an ``IngressController``) with ``kind`` and
  ``apiVersion`` but their name at the top level, not in ``metadata``;
* ``config/clusteroperator/<name>.json`` (ClusterOperators), ``config/node/<node>.json``,
  ``config/crd/<name>.json``, webhook configurations ... - full objects, read as they are.

Not read, and why (each is passed over with its reason, never silently): logs
(``config/pod/<ns>/logs/``, ``config/nodes/logs/``, ``events/``), metrics, alerts and
other API answers that are no objects (``config/metrics``, ``config/alerts.json``,
``config/version.json``, ``config/running_containers.json``, ``insights-operator/``), and
``config/secrets/...`` (anonymized ``data.json`` digests of a Secret, not the Secret).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hcpscan.inventory.objects import CONFIGMAP_ANONYMIZED, K8sObject, SourceLocation, anonymized
from hcpscan.sources.interface import Entry
from hcpscan.sources.layout import cluster_of


def configmap_key(parts: tuple[str, ...]) -> tuple[tuple[str, ...], str, str, str] | None:
    """(the parts before ``config``, namespace, name, key) of a ConfigMap key file of an
    Insights archive: ``.../config/configmaps/<namespace>/<name>/<key>``."""
    if len(parts) < 5 or parts[-5:-3] != ("config", "configmaps"):
        return None
    return parts[:-5], parts[-3], parts[-2], parts[-1]


@dataclass(slots=True)
class _Map:
    cluster: str
    namespace: str
    name: str
    source: SourceLocation
    data: dict[str, str] = field(default_factory=dict)
    hidden: list[str] = field(default_factory=list)


class InsightsConfigMaps:
    """The ConfigMap key files of Insights archives, put back together as ConfigMaps."""

    def __init__(self) -> None:
        self._maps: dict[tuple, _Map] = {}

    def take(self, entry: Entry, data: bytes) -> bool:
        """Keep the entry's text as a key of its ConfigMap; False when it is no such file."""
        found = configmap_key(entry.parts)
        if found is None:
            return False
        root, namespace, name, key = found
        text = data.decode("utf-8", errors="replace")
        where = (root, namespace, name)
        cm = self._maps.get(where)
        if cm is None:
            cm = self._maps[where] = _Map(cluster_of(entry.parts), namespace, name, SourceLocation(
                entry.display, 1, 1, entry.file, entry.member))
        cm.data[key] = text
        if anonymized(text):
            cm.hidden.append(key)
        return True

    def objects(self) -> list[K8sObject]:
        out = []
        for cm in self._maps.values():
            meta: dict[str, object] = {"name": cm.name, "namespace": cm.namespace}
            if cm.hidden:
                meta["annotations"] = {CONFIGMAP_ANONYMIZED: ",".join(sorted(cm.hidden))}
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                    "data": dict(sorted(cm.data.items()))}
            out.append(K8sObject(cm.cluster, "v1", "ConfigMap", cm.namespace, cm.name, body,
                                 cm.source))
        return out


def operator_resource(parts: tuple[str, ...], body: dict[str, object]) -> dict[str, object] | None:
    """An ``operator.openshift.io`` resource gathered under ``config/clusteroperator/`` with
    its name at the top level and no ``metadata``: the object with metadata from the name and
    the path (``.../<kind>/<namespace>/<name>.json`` for a namespaced one)."""
    if "metadata" in body or not isinstance(body.get("kind"), str) or "clusteroperator" not in parts:
        return None
    at = len(parts) - 1 - parts[::-1].index("clusteroperator")
    rest = parts[at + 1:]
    if len(rest) not in (3, 4) or not rest[-1].endswith(".json"):
        return None
    name = body.get("name") if isinstance(body.get("name"), str) else rest[-1].removesuffix(".json")
    meta: dict[str, object] = {"name": name}
    if len(rest) == 4:
        meta["namespace"] = rest[2]
    return {**{k: v for k, v in body.items() if k != "name"}, "metadata": meta}
