"""Validating SARIF the way GitHub's uploader would: both schemas, with formats."""

from __future__ import annotations

import json
from functools import cache

import jsonschema

from tests.reporters.reports import SARIF_SCHEMAS

SCHEMA_FILES = ("sarif-schema-2.1.0.json", "github-codeql-action-sarif-schema-2.1.0.json")


@cache
def validator(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((SARIF_SCHEMAS / name).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    # No check_schema: GitHub's copy nests its region ``anyOf`` (startLine, charOffset
    # or byteOffset required) inside ``properties``, which its metaschema rejects and
    # which makes that one constraint a no-op; test_sarif asserts startLine itself.
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def schema_errors(log: dict, name: str) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator(name).iter_errors(log)]
