"""Validate objects as an API server validates a custom resource: the CRD's openAPIV3Schema.

A CRD schema is OpenAPI v3 with Kubernetes extensions, not JSON Schema; this
translates it so ``jsonschema`` judges what the API server would judge:

* an object schema with ``properties`` is closed (``additionalProperties:
  false``) unless it says ``x-kubernetes-preserve-unknown-fields``: the server
  *prunes* unknown fields silently, so output that relies on one would lose it;
* ``x-kubernetes-int-or-string`` is integer or string; ``nullable`` adds null;
* ``x-kubernetes-list-type: set`` is unique items, ``map`` unique
  ``x-kubernetes-list-map-keys``; ``x-kubernetes-embedded-resource`` needs
  ``apiVersion`` and ``kind``; ``x-kubernetes-map-type`` is merge strategy only;
* ``format: int32``/``int64`` bound the integer;
* ``metadata`` (a bare ``type: object`` in every CRD) is checked as ObjectMeta:
  DNS-subdomain name, DNS-label namespace, label keys and values;
* CEL rules (``x-kubernetes-validations``) cannot be evaluated here, so a schema
  holding one is refused rather than half-checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import yaml

DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
LABEL_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_KEY = rf"^({DNS_SUBDOMAIN[1:-1]}/)?{LABEL_NAME}$"

OBJECT_META: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 253, "pattern": DNS_SUBDOMAIN},
        "namespace": {"type": "string", "maxLength": 63, "pattern": DNS_LABEL},
        "labels": {"type": "object",
                   "propertyNames": {"maxLength": 316, "pattern": LABEL_KEY},
                   "additionalProperties": {"type": "string", "maxLength": 63,
                                            "pattern": LABEL_VALUE}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["name"],
}

_INT_BOUNDS = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_PLAIN_KEYWORDS = ("type", "enum", "required", "minimum", "maximum", "exclusiveMinimum",
                   "exclusiveMaximum", "minLength", "maxLength", "pattern", "minItems", "maxItems",
                   "uniqueItems", "minProperties", "maxProperties", "multipleOf")
_IGNORED = {"description", "default", "example", "externalDocs", "title",
            "x-kubernetes-map-type", "x-kubernetes-list-map-keys"}


class UnsupportedSchema(ValueError):
    """The schema uses something this translation cannot check faithfully."""


def to_json_schema(node: dict[str, Any]) -> dict[str, Any]:
    """One OpenAPI v3 (structural, Kubernetes) schema node as JSON Schema."""
    out: dict[str, Any] = {k: node[k] for k in _PLAIN_KEYWORDS if k in node}
    unknown = set(node) - set(_PLAIN_KEYWORDS) - _IGNORED - {
        "properties", "items", "additionalProperties", "allOf", "anyOf", "oneOf", "not",
        "nullable", "format", "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-list-type", "x-kubernetes-embedded-resource"}
    if unknown:
        raise UnsupportedSchema(f"cannot translate {sorted(unknown)}")
    if "properties" in node:
        out["properties"] = {k: to_json_schema(v) for k, v in node["properties"].items()}
    if "items" in node:
        out["items"] = to_json_schema(node["items"])
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = to_json_schema(extra)
    elif isinstance(extra, bool):
        out["additionalProperties"] = extra
    elif "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False  # the server would prune anything else
    for key in ("allOf", "anyOf", "oneOf"):
        if key in node:
            out[key] = [to_json_schema(n) for n in node[key]]
    if "not" in node:
        out["not"] = to_json_schema(node["not"])
    _extensions(node, out)
    return out


def _extensions(node: dict[str, Any], out: dict[str, Any]) -> None:
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [*out.get("anyOf", []), {"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if node.get("format") in _INT_BOUNDS:
        low, high = _INT_BOUNDS[node["format"]]
        out.setdefault("minimum", low)
        out.setdefault("maximum", high)
    list_type = node.get("x-kubernetes-list-type")
    if list_type == "set":
        out["uniqueItems"] = True
    elif list_type == "map":
        out["x-unique-keys"] = list(node.get("x-kubernetes-list-map-keys") or [])
    if node.get("x-kubernetes-embedded-resource"):
        out["required"] = sorted({*out.get("required", []), "apiVersion", "kind"})


def _unique_keys(validator, keys, instance, schema) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "array"):
        return
    seen: set[tuple] = set()
    for item in instance:
        key = tuple(item.get(k) for k in keys) if isinstance(item, dict) else (item,)
        if key in seen:
            yield jsonschema.ValidationError(f"duplicate list-map key {dict(zip(keys, key))}")
        seen.add(key)


CrdValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator,
                                          {"x-unique-keys": _unique_keys})


def load_crd(path: Path) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    (crd,) = [d for d in docs if d.get("kind") == "CustomResourceDefinition"]
    return crd


def crd_version_schema(crd: dict[str, Any], version: str) -> dict[str, Any]:
    """The JSON Schema of one served version, ``metadata`` checked as ObjectMeta."""
    (entry,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    schema = to_json_schema(entry["schema"]["openAPIV3Schema"])
    schema.setdefault("properties", {})["metadata"] = OBJECT_META
    return schema


def errors_against_crd(obj: dict[str, Any], crd: dict[str, Any], version: str) -> list[str]:
    """Everything an API server serving ``crd`` would object to in ``obj`` (empty: valid)."""
    spec = crd["spec"]
    problems = []
    expected_api = f"{spec['group']}/{version}"
    if obj.get("apiVersion") != expected_api or obj.get("kind") != spec["names"]["kind"]:
        problems.append(f"apiVersion/kind {obj.get('apiVersion')}/{obj.get('kind')} is not "
                        f"{expected_api}/{spec['names']['kind']}")
    namespaced = spec["scope"] == "Namespaced"
    if namespaced != bool((obj.get("metadata") or {}).get("namespace")):
        problems.append("metadata.namespace " + ("missing" if namespaced else "set on a "
                                                  "cluster-scoped object"))
    validator = CrdValidator(crd_version_schema(crd, version))
    for error in sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in error.absolute_path) or "(root)"
        problems.append(f"{where}: {error.message}")
    return problems
