"""Template: references from one object to another that must exist in the inventory."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hcpscan.inventory.fieldpath import format_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.rules.context import Context
from hcpscan.rules.templates import register
from hcpscan.rules.templates.base import NotEvaluable, Outcome, Template, Violation


@register
class ReferenceExists(Template):
    name = "reference_exists"
    analyses = frozenset[str]()
    description = "each reference (name/namespace fields under a JSONPath) names an existing object"
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["refs", "kind"],
        "properties": {
            "refs": {"type": "string", "description": "JSONPath to the reference objects"},
            "kind": {"type": "string", "description": "the kind each reference names"},
            "name_field": {"type": "string", "description": "the reference's name key (default name)"},
            "namespace_field": {"type": "string",
                                "description": "its namespace key (default namespace; "
                                               "missing: the subject's namespace)"},
        },
    }
    message_fields = {"ref_kind": "the referenced kind", "ref_namespace": "its namespace",
                      "ref_name": "its name"}

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        return (params["kind"],)  # without them every reference would look dangling

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        kind = params["kind"]
        name_field = params.get("name_field", "name")
        ns_field = params.get("namespace_field", "namespace")
        none_at_all = not ctx.inventory.of_kind(kind)
        for ref, steps in ctx.inventory.jsonpath(subject, params["refs"]):
            if not isinstance(ref, dict):
                continue
            name = ref.get(name_field)
            namespace = ref.get(ns_field) or subject.namespace
            if not name:
                yield NotEvaluable(f"{format_path(steps)} has no {name_field}")
                continue
            if ctx.inventory.get(kind, namespace, name, subject.cluster) is None:
                yield Violation(
                    field=format_path(steps + (name_field,)),
                    values={"ref_kind": kind, "ref_namespace": namespace, "ref_name": name},
                    evidence=[f"{format_path(steps)} names {kind} {namespace}/{name}, "
                              f"which is not in the input"]
                    + ([f"the input holds no {kind} at all: if it was collected without them, "
                        f"include them and scan again"] if none_at_all else []))
