"""Choosing proxy consumers of the model by kind, as a rule's ``consumers`` parameter names
them, for templates that judge values where they are written (credentials, validity,
trust): one vocabulary for every template, and the kinds each choice makes the scan read."""

from __future__ import annotations

from typing import Any

from hcpscan.analysis.proxy import ConsumerProxy, Setting
from hcpscan.inventory.objects import K8sObject
from hcpscan.rules.context import Context
from hcpscan.rules.templates.proxy_config import CONSUMER_KINDS, consumer_reads, field_in

__all__ = ["CONSUMERS_PARAM", "chosen_consumers", "consumer_reads", "written_at"]

CONSUMERS_PARAM: dict[str, Any] = {
    "type": "array", "items": {"enum": sorted(CONSUMER_KINDS)},
    "description": "proxy consumers of the model whose settings are judged too, where they are "
                   "written (`hcpscan proxy` lists them)"}


def chosen_consumers(ctx: Context, subject: K8sObject, params: dict[str, Any]
                     ) -> list[ConsumerProxy]:
    """The subject's consumers of the kinds ``params['consumers']`` names (none if unset)."""
    kinds = {CONSUMER_KINDS[n] for n in params.get("consumers", ())}
    return [c for c in ctx.proxy.of(subject) if c.kind in kinds] if kinds else []


def written_at(subject: K8sObject, setting: Setting) -> tuple[K8sObject | None, str] | None:
    """Where a finding about a value the subject writes belongs: (None, the subject's field),
    or (the holder, its field) when the subject is a document inside another object (an
    install-config in ConfigMap kube-system/cluster-config-v1); None when the value is
    written in another object (a Secret a drop-in is read from), which answers for it."""
    if setting.source.ref == subject.ref:
        return None, field_in(subject, setting)
    origin, embedded = subject.origin, subject.source.embedded_in
    if origin is not None and embedded and setting.source.ref == origin.ref:
        return origin, embedded
    return None
