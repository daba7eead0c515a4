"""Primitives about how different HTTP clients read the same proxy settings.

* ``proxy_variable_cases`` (PRX006): upper- and lower-case variables that
  disagree, or a drop-in that sets only one case (whether noProxy entries mean
  the same to every client is ``proxy_values``' ``portable`` condition).

Which variable each client reads, and how it matches an entry, comes from the
proxy model (``env.choose`` and ``bypasses``), so the evidence names the
runtimes exactly as the model knows them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hcpscan.analysis.proxy import ConsumerProxy, Setting
from hcpscan.analysis.proxy.env import choose
from hcpscan.analysis.proxy.portability import ENV_RUNTIMES
from hcpscan.analysis.proxy.settings import KONNECTIVITY_SIDECAR
from hcpscan.inventory.objects import K8sObject
from hcpscan.rules.context import Context
from hcpscan.rules.primitives import register
from hcpscan.rules.primitives.base import NotEvaluable, Outcome, Primitive, Violation
from hcpscan.rules.primitives.proxy_config import (
    CONSUMER_KINDS,
    consumers_of,
    controlled_pod,
    field_in,
    same_url,
    split_entries,
)

# (upper, lower, scheme whose choice tells who reads it, proxy or no_proxy choice)
PAIRS = (("HTTP_PROXY", "http_proxy", "http", "proxy"),
         ("HTTPS_PROXY", "https_proxy", "https", "proxy"),
         ("NO_PROXY", "no_proxy", "https", "no_proxy"))


def readers(env: dict[str, str], scheme: str, which: str) -> dict[str, list[str]]:
    """variable -> runtimes that take their value from it ("(none)" for runtimes that
    read neither)."""
    out: dict[str, list[str]] = {}
    for rt in ENV_RUNTIMES:
        choice = choose(rt, env, scheme)
        var = choice.proxy_var if which == "proxy" else choice.no_proxy_var
        out.setdefault(var or "(none)", []).append(rt)
    return out


def _readers_text(groups: dict[str, list[str]]) -> str:
    return "; ".join(f"{var}: {', '.join(rts)}" for var, rts in groups.items())


def _same(upper: str, lower: str, which: str) -> bool:
    if which == "no_proxy":
        return split_entries(upper) == split_entries(lower)
    return same_url(upper, lower)


@register
class ProxyVariableCases(Primitive):
    name = "proxy_variable_cases"
    description = ("HTTP(S)_PROXY/NO_PROXY and their lower-case twins agree; consumers named in "
                   "both_cases set both")
    params_schema = {
        "type": "object", "additionalProperties": False,
        "properties": {
            "consumers": {"type": "array", "items": {"enum": ["container", "systemd-dropin",
                                                              "kubeadm-file"]}},
            "both_cases": {"type": "array", "items": {"enum": ["container", "systemd-dropin",
                                                               "kubeadm-file"]},
                           "description": "consumers that must set both cases"},
        },
    }
    reads = ("ConfigMap", "Secret")

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        kinds = {CONSUMER_KINDS[k] for k in params.get("consumers", ["container", "systemd-dropin",
                                                                     "kubeadm-file"])}
        both = {CONSUMER_KINDS[k] for k in params.get("both_cases", [])}
        if controlled_pod(subject):
            return
        for c in consumers_of(ctx, subject):
            if c.kind not in kinds or c.kind == KONNECTIVITY_SIDECAR:
                continue
            yield from self._consumer(subject, c, c.kind in both)

    def _consumer(self, subject: K8sObject, c: ConsumerProxy, need_both: bool
                  ) -> Iterable[Outcome]:
        for upper, lower, scheme, which in PAIRS:
            hi, lo = c.variables.get(upper), c.variables.get(lower)
            if hi is None and lo is None:
                continue
            if any(s is not None and not s.known for s in (hi, lo)):
                unknown = next(s for s in (hi, lo) if s is not None and not s.known)
                yield NotEvaluable(f"{c.name}: {unknown.name} unknown ({unknown.unknown})")
                continue
            if hi is not None and lo is not None:
                if _same(hi.value or "", lo.value or "", which):
                    continue
                env = {upper: hi.value or "", lower: lo.value or ""}
                yield Violation(
                    field=field_in(subject, lo),
                    values={"consumer": c.name, "problem": f"{upper} and {lower} differ"},
                    evidence=[f"{upper} = {hi.value!r} at {hi.source}",
                              f"{lower} = {lo.value!r} at {lo.source}",
                              "each client takes: " + _readers_text(readers(env, scheme, which))])
            elif need_both:
                present: Setting = hi or lo  # type: ignore[assignment]
                other = lower if hi is not None else upper
                env = {present.name: present.value or ""}
                groups = readers(env, scheme, which)
                yield Violation(
                    field=field_in(subject, present),
                    values={"consumer": c.name,
                            "problem": f"only {present.name} is set, not {other}"},
                    evidence=[f"{present.name} = {present.value!r} at {present.source}",
                              "each client takes: " + _readers_text(groups),
                              "seed 003: a systemd drop-in sets HTTP_PROXY/http_proxy, "
                              "HTTPS_PROXY/https_proxy and NO_PROXY/no_proxy in both cases"])
