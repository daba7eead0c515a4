"""Primitives over field values: credentials in plain sight, values that must (not) match."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from hcpscan.inventory.fieldpath import format_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.rules.context import Context
from hcpscan.rules.templates import register
from hcpscan.rules.templates.base import NotApplicable, Outcome, Template, Violation

_JSONPATHS = {"type": "array", "minItems": 1, "items": {"type": "string"}}


@register
class FieldMatches(Template):
    name = "field_matches"
    analyses = frozenset[str]()
    description = "every value at a JSONPath must (or must not) match a regular expression"
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["path", "pattern"],
        "properties": {
            "path": {"type": "string"},
            "pattern": {"type": "string"},
            "must": {"enum": ["match", "not_match"]},
            "required": {"type": "boolean", "description": "a missing value is a violation"},
            "when": {"type": "object", "additionalProperties": False, "required": ["path", "pattern"],
                     "properties": {"path": {"type": "string"}, "pattern": {"type": "string"}},
                     "description": "check only objects where a value at path matches pattern"},
        },
    }

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        when = params.get("when")
        if when:
            condition = re.compile(when["pattern"])
            if not any(isinstance(v, str) and condition.search(v)
                       for v, _ in ctx.inventory.jsonpath(subject, when["path"])):
                yield NotApplicable(f"no value at {when['path']} matches {when['pattern']!r}")
                return
        pattern = re.compile(params["pattern"])
        want = params.get("must", "match") == "match"
        found = ctx.inventory.jsonpath(subject, params["path"])
        if not found and params.get("required"):
            anchor = _parent_path(params["path"])
            yield Violation(field=anchor, values={"value": "(missing)"},
                            evidence=[f"no value at {params['path']}"])
        for value, steps in found:
            text = value if isinstance(value, str) else str(value)
            if bool(pattern.search(text)) != want:
                yield Violation(field=format_path(steps), values={"value": text},
                                evidence=[f"{format_path(steps)} = {text!r}"])


def _parent_path(expr: str) -> str:
    """`$.spec.proxyConfig.caBundle` -> `spec.proxyConfig.caBundle` (located at its nearest
    present parent when missing). Only plain dotted JSONPaths map to a field path."""
    plain = expr[2:] if expr.startswith("$.") else expr
    while plain.endswith("[*]"):  # every item of a list that is missing: the list's place
        plain = plain[:-3]
    return plain if re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+", plain) else ""
