"""Proxy variables of containers, resolved the way the kubelet builds a container's env.

Order (Kubernetes): every ``envFrom`` source in turn (a later source overrides an
earlier one), then ``env`` entries in turn (a later entry of the same name
wins, and ``env`` overrides ``envFrom``). ``valueFrom`` references are followed
into ConfigMaps and Secrets of the inventory; what cannot be known offline
(a missing object, a must-gather redaction, a fieldRef) is recorded as
*unknown* with the reason, never as empty.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.proxy.settings import Setting, Source, source_of
from hcpscan.inventory.fieldpath import Step
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.secrets import secret_values
from hcpscan.inventory.store import Inventory

PROXY_VARIABLE = re.compile(r"^(?:https?|no|all|ftp|socks)_proxy$", re.IGNORECASE)
# What an unreadable envFrom source may define (for every client's precedence).
_COMMON_NAMES = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY",
                 "no_proxy", "ALL_PROXY", "all_proxy")
_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)|\$\$")

# Where each workload kind keeps its pod spec.
POD_SPEC_PATHS: dict[str, tuple[Step, ...]] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "DeploymentConfig": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
CONTAINER_LISTS = ("initContainers", "containers")


@dataclass(frozen=True, slots=True)
class ContainerRef:
    obj: K8sObject
    path: tuple[Step, ...]  # the container's own field path
    spec: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    @property
    def pod_path(self) -> tuple[Step, ...]:
        return self.path[:-2]


# (kind, container list, index) -> the container's field path, shared
Paths = dict[tuple[str, str, int], tuple[Step, ...]]


def containers(inventory: Inventory) -> list[ContainerRef]:
    """Every container (and init container) of every pod and pod template, read once
    per inventory (the proxy model plans per pod spec and rules ask ``containers_of`` per
    workload: neither needs this whole list)."""
    return inventory.derived("proxy.containers", lambda inv: list(_containers(inv)))


def _containers(inventory: Inventory) -> Iterator[ContainerRef]:
    # one path tuple per kind, list and position, shared by every object's container there
    # (hundreds of thousands of containers in a large fleet, a handful of distinct paths)
    paths: Paths = {}
    for kind in POD_SPEC_PATHS:
        for obj in inventory.of_kind(kind):
            yield from containers_in(obj, paths)


def pod_spec(obj: K8sObject) -> Any:
    """The pod spec of a pod or pod template (``obj.get`` of its path, the path not parsed):
    None for another kind or where a step is missing."""
    steps = POD_SPEC_PATHS.get(obj.kind)
    if steps is None:
        return None
    node: Any = obj.body
    for step in steps:
        if not isinstance(node, dict) or step not in node:
            return None
        node = node[step]
    return node


def containers_in(obj: K8sObject, paths: Paths) -> list[ContainerRef]:
    """The containers (and init containers) of one pod or pod template, in order."""
    pod = pod_spec(obj)
    if not isinstance(pod, dict):
        return []
    out = []
    for list_name in CONTAINER_LISTS:
        items = pod.get(list_name)
        if not isinstance(items, list):
            continue
        for i, spec in enumerate(items):
            if isinstance(spec, dict):
                out.append(container_at(obj, list_name, i, spec, paths))
    return out


def container_at(obj: K8sObject, list_name: str, i: int, spec: dict[str, Any],
                 paths: Paths) -> ContainerRef:
    """The container ``spec`` at ``list_name[i]`` of ``obj``'s pod spec, its path shared."""
    path = paths.get((obj.kind, list_name, i))
    if path is None:
        path = paths[(obj.kind, list_name, i)] = POD_SPEC_PATHS[obj.kind] + (list_name, i)
    return ContainerRef(obj, path, spec)


def _lookup(inventory: Inventory, obj: K8sObject, kind: str, name: str) -> K8sObject | None:
    return inventory.get(kind, obj.namespace, name, obj.cluster)


def _from_configmap(inventory: Inventory, ref: ContainerRef, cm_name: str, key: str,
                    via: Source, var: str, optional: bool) -> Setting | None:
    cm = _lookup(inventory, ref.obj, "ConfigMap", cm_name)
    if cm is None:
        return Setting(var, None, via, unknown=f"ConfigMap {ref.obj.namespace}/{cm_name} is "
                                                "not in the inventory")
    data = cm.body.get("data") or {}
    if key not in data:
        if optional:
            return None
        return Setting(var, None, via, unknown=f"key {key!r} missing from ConfigMap "
                                                f"{cm_name}: the container cannot start")
    return Setting(var, str(data[key]), source_of(inventory, cm, ("data", key)), (via,))


def _from_secret(inventory: Inventory, ref: ContainerRef, secret_name: str, key: str,
                 via: Source, var: str, optional: bool) -> Setting | None:
    secret = _lookup(inventory, ref.obj, "Secret", secret_name)
    if secret is None:
        return Setting(var, None, via, unknown=f"Secret {ref.obj.namespace}/{secret_name} is "
                                                "not in the inventory")
    values = secret_values(secret)
    value = values.get(key)
    if value is None:
        if optional:
            return None
        return Setting(var, None, via, unknown=f"key {key!r} missing from Secret "
                                                f"{secret_name}: the container cannot start")
    field = "data" if key in (secret.body.get("data") or {}) else "stringData"
    where = source_of(inventory, secret, (field, key))
    if value.redacted:
        return Setting(var, None, where, (via,), unknown="redacted in the dump")
    if value.text is None:
        return Setting(var, None, where, (via,), unknown=value.error or "not UTF-8 text")
    return Setting(var, value.text, where, (via,))


def _env_from(inventory: Inventory, ref: ContainerRef, out: dict[str, Setting]) -> None:
    for i, item in enumerate(ref.spec.get("envFrom") or []):
        if not isinstance(item, dict):
            continue
        prefix = str(item.get("prefix") or "")
        via = source_of(inventory, ref.obj, ref.path + ("envFrom", i))
        for kind, key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            spec = item.get(key)
            if not isinstance(spec, dict) or not spec.get("name"):
                continue
            source = _lookup(inventory, ref.obj, kind, str(spec["name"]))
            if source is None:
                why = f"envFrom {kind} {ref.obj.namespace}/{spec['name']} is not in the inventory"
                for name in _COMMON_NAMES:  # prefix + some key could spell any of these
                    if name.startswith(prefix):
                        out[name] = Setting(name, None, via, unknown=why)
                continue
            _env_from_object(inventory, source, kind, prefix, via, out)


def _env_from_object(inventory: Inventory, source: K8sObject, kind: str, prefix: str,
                     via: Source, out: dict[str, Setting]) -> None:
    if kind == "ConfigMap":
        for key, value in (source.body.get("data") or {}).items():
            out[prefix + str(key)] = Setting(prefix + str(key), str(value),
                                             source_of(inventory, source, ("data", str(key))),
                                             (via,))
        return
    field_of = {k: ("data" if k in (source.body.get("data") or {}) else "stringData")
                for k in secret_values(source)}
    for key, value in secret_values(source).items():
        where = source_of(inventory, source, (field_of[key], key))
        if value.redacted or value.text is None:
            out[prefix + key] = Setting(prefix + key, None, where, (via,),
                                        unknown="redacted in the dump" if value.redacted
                                        else value.error or "not UTF-8 text")
        else:
            out[prefix + key] = Setting(prefix + key, value.text, where, (via,))


def _expand(value: str, env: dict[str, Setting]) -> str:
    """``$(VAR)`` references to variables defined before, as the kubelet expands them."""
    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        ref = env.get(m.group(1))
        return ref.value if ref is not None and ref.value is not None else m.group(0)

    return _REF.sub(sub, value) if "$" in value else value


def container_env(inventory: Inventory, ref: ContainerRef) -> dict[str, Setting]:
    """Every environment variable of the container (proxy-related or not), resolved."""
    env: dict[str, Setting] = {}
    _env_from(inventory, ref, env)
    for i, item in enumerate(ref.spec.get("env") or []):
        if not isinstance(item, dict) or not item.get("name"):
            continue
        name = str(item["name"])
        path = ref.path + ("env", i)
        if "valueFrom" in item and isinstance(item["valueFrom"], dict):
            setting = _value_from(inventory, ref, name, item["valueFrom"], path)
            if setting is None:
                env.pop(name, None)
            else:
                env[name] = setting
            continue
        value = item.get("value")
        text = "" if value is None else str(value)
        env[name] = Setting(name, _expand(text, env), source_of(inventory, ref.obj, path + ("value",)))
    return env


def _value_from(inventory: Inventory, ref: ContainerRef, name: str, spec: dict[str, Any],
                path: tuple[Step, ...]) -> Setting | None:
    via = source_of(inventory, ref.obj, path + ("valueFrom",))
    for key, resolve in (("configMapKeyRef", _from_configmap), ("secretKeyRef", _from_secret)):
        sel = spec.get(key)
        if isinstance(sel, dict):
            return resolve(inventory, ref, str(sel.get("name", "")), str(sel.get("key", "")),
                           via, name, bool(sel.get("optional")))
    which = next(iter(spec), "valueFrom")
    return Setting(name, None, via, unknown=f"set at run time from {which}")


def proxy_variables(env: dict[str, Setting]) -> dict[str, Setting]:
    return {k: v for k, v in env.items() if PROXY_VARIABLE.match(k)}


def may_set_proxy(ref: ContainerRef) -> bool:
    """False when ``proxy_variables(container_env(...))`` is certainly empty: no
    ``envFrom``, no ``env`` entry named like a proxy variable, and nothing in the
    other entries that resolving could stumble on (a ConfigMap or Secret key
    reference). Most containers set no proxy; their env need not be resolved."""
    if ref.spec.get("envFrom"):
        return True
    env = ref.spec.get("env")
    if not env:
        return False
    if not isinstance(env, list):
        return True
    for item in env:
        if not isinstance(item, dict) or not item.get("name"):
            continue
        if PROXY_VARIABLE.match(str(item["name"])):
            return True
        source = item.get("valueFrom")
        if isinstance(source, dict) and any(isinstance(source.get(key), dict)
                                            for key in ("configMapKeyRef", "secretKeyRef")):
            return True
    return False


def flag_values(ref: ContainerRef) -> dict[str, tuple[str, tuple[Step, ...]]]:
    """``--flag=value`` / ``--flag value`` of command and args: flag -> (value, field path)."""
    out: dict[str, tuple[str, tuple[Step, ...]]] = {}
    for list_name in ("command", "args"):
        words = ref.spec.get(list_name)
        if not isinstance(words, list):
            continue
        for i, word in enumerate(words):
            word = str(word)
            if not word.startswith("--"):
                continue
            flag, eq, value = word.partition("=")
            if eq:
                out[flag] = (value, ref.path + (list_name, i))
            elif i + 1 < len(words) and not str(words[i + 1]).startswith("--"):
                out[flag] = (str(words[i + 1]), ref.path + (list_name, i + 1))
    return out


def words(ref: ContainerRef) -> list[str]:
    out: list[str] = []
    for key in ("command", "args"):
        items = ref.spec.get(key) or []
        if isinstance(items, list):
            out.extend(map(str, items))
        else:
            iter(items)  # a mapping or string has no words; a number is an error (TypeError)
    return out
