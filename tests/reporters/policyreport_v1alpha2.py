"""The ``wgpolicyk8s.io/v1alpha2`` PolicyReport / ClusterPolicyReport schema, as a CRD.

Written here from the published field list of the Kubernetes policy working
group's v1alpha2 API (kubernetes-sigs/wg-policy-prototypes,
``policy-report/apis/wgpolicyk8s.io/v1alpha2``); its CRD is not in
``../shared/conformance``. Shape, field by field:

* report: ``apiVersion``, ``kind``, ``metadata``, ``scope`` (ObjectReference),
  ``scopeSelector`` (LabelSelector), ``summary``, ``results`` — no report-level
  ``source`` (that is OpenReports'; a v1alpha2 server prunes it);
* ``summary``: integer ``pass``, ``fail``, ``warn``, ``error``, ``skip``;
* a result: ``policy`` (required), ``source``, ``rule``, ``category``,
  ``severity`` (critical, high, low, medium, info), ``timestamp`` (protobuf
  Timestamp: int64 ``seconds`` and int32 ``nanos``, both required), ``result``
  (pass, fail, warn, error, skip), ``scored`` (boolean), ``resources``
  (ObjectReferences), ``resourceSelector`` (LabelSelector), ``message``,
  ``properties`` (string to string).

It is expressed in the CRD's own dialect so :mod:`tests.k8sschema` checks it
exactly as it checks the OpenReports CRDs.
"""

from __future__ import annotations

from typing import Any

GROUP, VERSION = "wgpolicyk8s.io", "v1alpha2"


def _string() -> dict[str, Any]:
    return {"type": "string"}


def _integer(fmt: str | None = None) -> dict[str, Any]:
    return {"type": "integer", **({"format": fmt} if fmt else {})}


def _object_reference() -> dict[str, Any]:
    fields = ("apiVersion", "fieldPath", "kind", "name", "namespace", "resourceVersion", "uid")
    return {"type": "object", "properties": {f: _string() for f in fields}}


def _label_selector() -> dict[str, Any]:
    requirement = {"type": "object", "required": ["key", "operator"],
                   "properties": {"key": _string(), "operator": _string(),
                                  "values": {"type": "array", "items": _string()}}}
    return {"type": "object",
            "properties": {"matchExpressions": {"type": "array", "items": requirement},
                           "matchLabels": {"type": "object", "additionalProperties": _string()}}}


def _result() -> dict[str, Any]:
    return {"type": "object", "required": ["policy"], "properties": {
        "source": _string(),
        "policy": _string(),
        "rule": _string(),
        "category": _string(),
        "severity": {"type": "string", "enum": ["critical", "high", "low", "medium", "info"]},
        "timestamp": {"type": "object", "required": ["nanos", "seconds"],
                      "properties": {"seconds": _integer("int64"), "nanos": _integer("int32")}},
        "result": {"type": "string", "enum": ["pass", "fail", "warn", "error", "skip"]},
        "scored": {"type": "boolean"},
        "resources": {"type": "array", "items": _object_reference()},
        "resourceSelector": _label_selector(),
        "message": _string(),
        "properties": {"type": "object", "additionalProperties": _string()},
    }}


def _report_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {
        "apiVersion": _string(),
        "kind": _string(),
        "metadata": {"type": "object"},
        "scope": _object_reference(),
        "scopeSelector": _label_selector(),
        "summary": {"type": "object",
                    "properties": {k: _integer() for k in ("pass", "fail", "warn", "error", "skip")}},
        "results": {"type": "array", "items": _result()},
    }}


def policyreport_crd(kind: str) -> dict[str, Any]:
    """``PolicyReport`` (namespaced) or ``ClusterPolicyReport`` (cluster-scoped)."""
    plural = kind.lower() + "s"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Cluster" if kind.startswith("Cluster") else "Namespaced",
                     "names": {"kind": kind, "plural": plural, "singular": kind.lower(),
                               "listKind": kind + "List"},
                     "versions": [{"name": VERSION, "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": _report_schema()}}]}}
