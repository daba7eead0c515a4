"""Primitives over field values: credentials in plain sight, values that must (not) match."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from hcpscan.findings.redact import HOST_WITH_PASSWORD as _HOST_WITH_PASSWORD
from hcpscan.findings.redact import URL_WITH_PASSWORD as _URL_WITH_PASSWORD
from hcpscan.findings.redact import mask_credentials
from hcpscan.inventory.fieldpath import format_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.rules.context import Context
from hcpscan.rules.primitives import register
from hcpscan.rules.primitives.base import NotApplicable, Outcome, Primitive, Violation
from hcpscan.rules.primitives.consumer_roles import (
    CONSUMERS_PARAM,
    chosen_consumers,
    consumer_reads,
    written_at,
)

_JSONPATHS = {"type": "array", "minItems": 1, "items": {"type": "string"}}


def _strings(value: Any, steps: tuple, seen: set[int] | None = None
             ) -> Iterable[tuple[str, tuple]]:
    """Every string below a matched value, with its field path. YAML aliases make one
    object appear at many paths (an alias bomb, at exponentially many): each is walked once."""
    seen = set() if seen is None else seen
    if isinstance(value, str):
        yield value, steps
        return
    if not isinstance(value, dict | list) or id(value) in seen:
        return
    seen.add(id(value))
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, sub in items:
        yield from _strings(sub, steps + ((str(key) if isinstance(value, dict) else key),), seen)


def _credentials(text: str) -> list[re.Match[str]]:
    with_scheme = list(_URL_WITH_PASSWORD.finditer(text))
    taken = [(m.start(), m.end()) for m in with_scheme]
    bare = [m for m in _HOST_WITH_PASSWORD.finditer(text)
            if not any(a <= m.start() < b for a, b in taken)]
    return sorted(with_scheme + bare, key=lambda m: m.start())


@register
class NoCredentials(Primitive):
    name = "no_credentials"
    description = "URLs with user:password@ in the fields given per kind (values outside Secrets)"
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["fields"],
        "properties": {"fields": {"type": "object", "additionalProperties": _JSONPATHS},
                       "consumers": CONSUMERS_PARAM},
    }

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        return consumer_reads(params.get("consumers", ()))

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        seen: set[tuple[str, str]] = set()
        for expr in params["fields"].get(subject.kind, ()):
            for value, steps in ctx.inventory.jsonpath(subject, expr):
                texts = ((value, steps),) if isinstance(value, str) else _strings(value, steps)
                for text, path in texts:
                    yield from _plain_credentials(format_path(path), text, seen)
        yield from self._consumers(ctx, subject, params, seen)

    @staticmethod
    def _consumers(ctx: Context, subject: K8sObject, params: dict[str, Any],
                   seen: set[tuple[str, str]]) -> Iterable[Outcome]:
        """Proxy values of the model's consumers (decoded drop-ins, chart values) that the
        subject itself writes: a value read from a Secret (contentFrom, an install-config
        kept in one) is where it belongs, one read from a ConfigMap is that ConfigMap's."""
        if subject.kind == "Secret":
            return
        for consumer in chosen_consumers(ctx, subject, params):
            for setting in consumer.variables.values():
                at = written_at(subject, setting) if setting.value else None
                if at is not None and at[0] is None:  # a holder (ConfigMap) answers itself
                    yield from _plain_credentials(at[1], str(setting.value), seen,
                                                  f"{setting.name} at {setting.source.field}")


def _plain_credentials(field: str, text: str, seen: set[tuple[str, str]],
                       what: str = "") -> Iterable[Violation]:
    """One violation per user:password@ URL of ``text`` not yet reported at ``field``."""
    if "@" not in text:
        return  # no user:password@ in it
    # with a scheme, or without one as Go, curl and Python accept a proxy
    # (user:password@host:port reads as http://): the forms the masking knows
    for m in _credentials(text):
        url = mask_credentials(m.group(0))
        if (field, url) in seen:
            continue
        seen.add((field, url))
        masked = m["password"].strip("*") == ""
        yield Violation(field=field, values={"url": url, "user": m["user"]},
                        evidence=[f"{what or field} holds {url}"
                                  + (" (password masked in this dump)" if masked else "")])


@register
class FieldMatches(Primitive):
    name = "field_matches"
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
