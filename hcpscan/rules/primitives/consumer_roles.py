"""Choosing proxy consumers of the model by kind, as a rule's ``consumers`` parameter names
them, for templates that judge values where they are written (credentials, validity,
trust): one vocabulary for every template, and the kinds each choice makes the scan read."""

from __future__ import annotations

from typing import Any

from hcpscan.analysis.proxy import ConsumerProxy
from hcpscan.inventory.objects import K8sObject
from hcpscan.rules.context import Context
from hcpscan.rules.primitives.proxy_config import CONSUMER_KINDS, consumer_reads, consumers_of

__all__ = ["CONSUMERS_PARAM", "chosen_consumers", "consumer_reads"]

CONSUMERS_PARAM: dict[str, Any] = {
    "type": "array", "items": {"enum": sorted(CONSUMER_KINDS)},
    "description": "proxy consumers of the model whose settings are judged too, where they are "
                   "written (`hcpscan proxy` lists them)"}


def chosen_consumers(ctx: Context, subject: K8sObject, params: dict[str, Any]
                     ) -> list[ConsumerProxy]:
    """The subject's consumers of the kinds ``params['consumers']`` names (none if unset)."""
    kinds = {CONSUMER_KINDS[n] for n in params.get("consumers", ())}
    return [c for c in consumers_of(ctx, subject) if c.kind in kinds] if kinds else []
