"""The rule file format, as a JSON Schema (rule files are data: see rules/*.yaml)."""

from __future__ import annotations

SEVERITIES = ["critical", "high", "medium", "low", "info"]

RULE_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    # docs and category are required of the built-in catalog (the loader checks that);
    # a user's rule may leave them out.
    "required": ["id", "title", "severity", "check", "message"],
    "properties": {
        "id": {"type": "string", "pattern": "^[A-Z][A-Z0-9]*[0-9]{3}$"},
        "title": {"type": "string", "minLength": 5},
        "severity": {"enum": SEVERITIES},
        "category": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "precision": {"enum": ["very-high", "high", "medium", "low"]},
        "applies_to": {
            "type": "object",
            "additionalProperties": False,
            "description": "the rule's subjects; defaults to the template's subject kinds",
            "properties": {
                "kinds": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                "api_versions": {"type": "array", "items": {"type": "string"}},
                "namespaces": {"type": "array", "items": {"type": "string"}},
                "names": {"type": "array", "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "where": {"type": "string", "description": "JSONPath; the object applies when it matches"},
                "clusters": {"enum": ["all", "management", "guest"]},
            },
        },
        "needs": {"type": "array", "items": {"type": "string"},
                  "description": "deprecated: extra resources (plural names) to read, merged with the "
                                 "ones derived from the kinds the rule reads (docs/rule-resources.md)"},
        "check": {
            "type": "object",
            "additionalProperties": False,
            "oneOf": [{"required": ["template"]}, {"required": ["primitive"]}],
            "properties": {
                "template": {"type": "string", "description": "the check template (hcpscan templates list)"},
                "primitive": {"type": "string", "description": "the template's earlier name (deprecated)"},
                "params": {"type": "object"},
            },
        },
        "message": {"type": "string", "minLength": 5},
        "docs": {
            "type": "object",
            "additionalProperties": False,
            "required": ["what", "why", "failing", "passing", "fix", "references"],
            "properties": {
                "what": {"type": "string"},
                "why": {"type": "string"},
                "failing": {"type": "string"},
                "passing": {"type": "string"},
                "fix": {"type": "string"},
                "known_problems": {"type": "string"},
                "autofix": {
                    "type": "object", "additionalProperties": False, "required": ["offered"],
                    "description": "whether findings carry an automatic fix; if not, why none is safe",
                    "properties": {"offered": {"type": "boolean"},
                                   "why": {"type": "string", "minLength": 10}},
                    "if": {"properties": {"offered": {"const": False}}},
                    "then": {"required": ["offered", "why"]},
                },
                "references": {"type": "array", "minItems": 1, "items": {"type": "string"}},
            },
        },
    },
}
