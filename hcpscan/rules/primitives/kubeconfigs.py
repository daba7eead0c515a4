"""Primitive: two kubeconfigs stored in Secrets must point at the same cluster the same way."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.secrets import secret_values
from hcpscan.rules.context import Context
from hcpscan.rules.primitives import register
from hcpscan.rules.primitives.base import NotEvaluable, Outcome, Primitive, Violation
from hcpscan.sources.yamldocs import YamlSyntaxError, node_overrun, parse_documents

CLUSTER_FIELDS = ("server", "certificate-authority-data", "proxy-url")


def current_cluster(kubeconfig: dict[str, Any]) -> dict[str, Any] | None:
    """The `cluster` entry the current context uses (else the only/first one)."""
    clusters = {c.get("name"): c.get("cluster") or {} for c in kubeconfig.get("clusters") or []
                if isinstance(c, dict)}
    contexts = {c.get("name"): c.get("context") or {} for c in kubeconfig.get("contexts") or []
                if isinstance(c, dict)}
    current = contexts.get(kubeconfig.get("current-context"), {}).get("cluster")
    if current in clusters:
        return clusters[current]
    return next(iter(clusters.values()), None)


def kubeconfig_in_secret(secret: K8sObject, key: str) -> dict[str, Any] | str:
    """The parsed kubeconfig, or why it cannot be read."""
    value = secret_values(secret).get(key)
    if value is None:
        return f"{secret.ref} has no key {key!r}"
    if value.redacted:
        return f"{secret.ref} key {key!r} is redacted in this dump"
    if value.text is None:
        return f"{secret.ref} key {key!r} cannot be decoded ({value.error or 'not text'})"
    try:
        overrun = node_overrun(value.text)
        if overrun is not None:
            raise overrun
        docs = list(parse_documents(value.text))
    except YamlSyntaxError as exc:
        return f"{secret.ref} key {key!r} is not valid YAML: {exc.message}"
    if not docs or not isinstance(docs[0].body, dict):
        return f"{secret.ref} key {key!r} is not a kubeconfig"
    return docs[0].body


@register
class KubeconfigsAgree(Primitive):
    name = "kubeconfigs_agree"
    description = "a kubeconfig Secret matches a reference kubeconfig Secret in chosen cluster fields"
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["reference"],
        "properties": {
            "key": {"type": "string"},
            "reference": {"type": "object", "additionalProperties": False, "required": ["name"],
                          "properties": {"name": {"type": "string"}, "key": {"type": "string"}}},
            "fields": {"type": "array", "items": {"enum": list(CLUSTER_FIELDS)}},
        },
    }
    reads = ("Secret",)

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        key = params.get("key", "kubeconfig")
        ref = params["reference"]
        other = ctx.inventory.get("Secret", subject.namespace, ref["name"], subject.cluster)
        if other is None:
            yield NotEvaluable(f"Secret {subject.namespace}/{ref['name']} is not in the input")
            return
        mine = kubeconfig_in_secret(subject, key)
        theirs = kubeconfig_in_secret(other, ref.get("key", "kubeconfig"))
        for parsed in (mine, theirs):
            if isinstance(parsed, str):
                yield NotEvaluable(parsed)
                return
        assert isinstance(mine, dict) and isinstance(theirs, dict)
        a, b = current_cluster(mine) or {}, current_cluster(theirs) or {}
        differ = [f for f in params.get("fields", CLUSTER_FIELDS) if a.get(f) != b.get(f)]
        if differ:
            field = "data." + key if key in (subject.body.get("data") or {}) else "stringData." + key
            yield Violation(
                field=field,
                values={"fields": ", ".join(differ), "reference": other.ref},
                evidence=[f"{f}: {_show(a.get(f))} here, {_show(b.get(f))} in {other.ref}"
                          for f in differ])


def _show(value: Any) -> str:
    if value is None:
        return "(unset)"
    text = str(value)
    return text if len(text) <= 60 else f"{text[:28]}…{text[-12:]} ({len(text)} chars)"
