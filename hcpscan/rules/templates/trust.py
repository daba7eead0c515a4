"""Template ``trust``: an https proxy's clients can verify it.

For every selected consumer whose proxy URL is ``https://``, the proxy model
(``hcpscan.analysis.proxy.trust``) finds the CA its clients verify the proxy with,
wherever its API keeps it, and the rule's conditions judge it:

* ``present``: a CA is given (else only the system roots are trusted);
* ``resolvable``: the ConfigMap it names exists and has ``ca-bundle.crt``;
* ``parseable``: every PEM block is a readable certificate, and there is one;
* ``unexpired``: not every certificate has expired;
* ``contains``: the bundle holds the proxy's CA — known from ``inputs.proxy_ca_files``,
  an AddOnDeploymentConfig's caBundle or a cluster Proxy's trustedCA — and, with
  ``with_server_ca``, also another CA (a kubeconfig verifies the proxy and, inside the
  tunnel, the server with one bundle).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from hcpscan.analysis.proxy import ConsumerProxy
from hcpscan.analysis.proxy.settings import ROLES
from hcpscan.analysis.proxy.trust import (
    ABSENT,
    CA,
    FILE,
    INSECURE,
    NO_KEY,
    NOT_COLLECTED,
    UNKNOWN,
    UNRESOLVED,
    KnownProxyCA,
    bundle_problems,
    describe,
    known_proxy_cas,
    resolve_ca,
)
from hcpscan.findings.redact import mask_credentials
from hcpscan.inventory.fieldpath import format_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.secrets import secret_values
from hcpscan.rules.context import Context
from hcpscan.rules.templates import register
from hcpscan.rules.templates.base import (
    NotApplicable,
    NotEvaluable,
    Outcome,
    Template,
    Violation,
    conditions_param,
    roles_param,
)
from hcpscan.rules.templates.proxy_config import consumers, consumers_of

CONDITIONS = ("present", "resolvable", "parseable", "unexpired", "contains")


def _consumers_for(ctx: Context, subject: K8sObject) -> list[ConsumerProxy]:
    """The subject's consumers, and those of documents stored in it (a kubeconfig in a Secret)."""
    index: dict[int, list[ConsumerProxy]] = ctx.analysis("proxy-by-holder", lambda _inv: _by_holder(
        consumers(ctx)))
    return [*consumers_of(ctx, subject), *index.get(id(subject), [])]


def _by_holder(found: list[ConsumerProxy]) -> dict[int, list[ConsumerProxy]]:
    out: dict[int, list[ConsumerProxy]] = {}
    for c in found:
        if c.object.origin is not None and c.object.source.embedded_in:
            out.setdefault(id(c.object.origin), []).append(c)
    return out


def _known(ctx: Context) -> tuple[list[KnownProxyCA], list[str]]:
    return ctx.analysis("known-proxy-cas", lambda inv: known_proxy_cas(  # type: ignore[no-any-return]
        inv, consumers(ctx), list(ctx.config.proxy_ca_files)))


@register
class Trust(Template):
    name = "trust"
    description = ("the CA an https:// proxy's clients verify it with is present, resolvable, "
                   "parseable, unexpired, and contains the proxy's CA")
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["conditions"],
        "properties": {
            "conditions": conditions_param(
                CONDITIONS, "present: a CA is given; resolvable: the ConfigMap it names exists "
                            "with ca-bundle.crt; parseable: its PEM reads; unexpired: not all "
                            "expired; contains: it holds the proxy's CA"),
            "consumers": roles_param(
                ROLES, "consumers judged (those whose API keeps a proxy CA: Proxy, "
                       "HostedCluster, addon-config, kubeconfig, klusterlet-config, "
                       "install-config)"),
            "absent_ok": roles_param(
                ROLES, "present: roles whose missing CA this rule does not report (another "
                       "rule does)"),
            "with_server_ca": {"type": "boolean",
                               "description": "contains: the bundle must also hold a CA besides "
                                              "the proxy's (a kubeconfig's server CA)"},
        },
    }
    subject_kinds = ("Proxy", "HostedCluster", "AddOnDeploymentConfig", "Kubeconfig", "Secret",
                     "KlusterletConfig", "InstallConfig", "ConfigMap")
    message_fields = {"problem": "what is wrong with the CA", "consumer": "the consumer",
                      "url": "the https:// proxy URL, password masked"}

    def reads_whole(self, params: dict[str, Any], subjects: tuple[str, ...]) -> tuple[str, ...]:
        return ()  # of pods and workloads: containers, templates, owners (inventory/kept.py)

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        known = ("AddOnDeploymentConfig", "Proxy") if "contains" in params.get("conditions", ()) else ()
        return ("ConfigMap", *known)

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        roles = {ROLES[r] for r in params.get("consumers", ("Proxy", "HostedCluster", "addon-config",
                                                            "kubeconfig"))}
        judged = False
        for c in _consumers_for(ctx, subject):
            ca = resolve_ca(ctx.inventory, c) if c.kind in roles else None
            if ca is None:
                continue
            judged = True
            yield from _judge(ctx, subject, c, ca, params)
        if judged:
            return
        if subject.kind == "Secret" and any(v.redacted for v in secret_values(subject).values()):
            yield NotEvaluable(f"{subject.ref} is redacted in this dump")
        else:
            yield NotApplicable("no https:// proxy in scope")


def _judge(ctx: Context, subject: K8sObject, c: ConsumerProxy, ca: CA, params: dict[str, Any]
           ) -> Iterator[Outcome]:
    conditions = params["conditions"]
    said = [f"{format_path(u.source.steps)} = {mask_credentials(u.value or '')}" for u in ca.urls]
    at = _Place(subject, c, ca)
    key = ".".join(map(str, ca.field[-1:]))
    if ca.state == INSECURE:
        return
    if ca.state == UNKNOWN:
        yield NotEvaluable(f"{c.name}: {ca.detail}")
        return
    if ca.state == FILE:
        yield NotEvaluable(f"{c.name}: {format_path(ca.field)} names a CA file ({ca.detail}) that "
                           "is not in the input")
        return
    if ca.state == ABSENT:
        if "present" in conditions and c.kind not in {ROLES[r] for r in params.get("absent_ok", ())}:
            what = ca.detail or ("a trusted CA" if key == "name" else key)
            yield at.violation(ca.field, c.object, f"https:// proxy without {what}",
                               said + [f"no {ca.detail or format_path(ca.field)}: the proxy's "
                                       "certificate is checked against the system roots only"])
        return
    if ca.state in (UNRESOLVED, NOT_COLLECTED, NO_KEY):
        if "resolvable" in conditions:
            yield from _unresolved(at, c, ca, said)
        return
    assert ca.bundle is not None
    problems = [p for cond, p in _bundle_problems(ca) if cond in conditions]
    if problems:
        name = ca.bundle_field[-1]
        yield at.violation(ca.bundle_field, ca.holder, f"{name} trusts no usable CA",
                           said + ([f"{format_path(ca.field)} names {ca.holder.ref}"]
                                   if ca.holder is not c.object else [])
                           + [f"{name}: {p}" for p in problems])
    if "contains" in conditions:
        yield from _contains(ctx, at, c, ca, said, bool(params.get("with_server_ca")))


def _bundle_problems(ca: CA) -> list[tuple[str, str]]:
    assert ca.bundle is not None
    parse = [p.message for p in ca.bundle.problems]
    return [("parseable", p) for p in parse] + [
        ("unexpired", p) for p in bundle_problems(ca.bundle) if p not in parse]


def _unresolved(at: _Place, c: ConsumerProxy, ca: CA, said: list[str]) -> Iterator[Outcome]:
    field = format_path(ca.field)
    if ca.state == NOT_COLLECTED:
        namespace = ca.detail.partition("/")[0]
        yield NotEvaluable(f"ConfigMap {ca.detail} ({field}) is not in the input, which holds no "
                           f"ConfigMap of namespace {namespace} at all")
    elif ca.state == UNRESOLVED:
        yield at.violation(ca.field, c.object, f"trusted CA ConfigMap {ca.detail} is missing",
                           said + [f"{field} names ConfigMap {ca.detail}, which is not among the "
                                   f"ConfigMaps of {ca.detail.partition('/')[0]} in the input"])
    else:
        yield at.violation(ca.bundle_field, ca.holder, f"ConfigMap {ca.detail} has no ca-bundle.crt",
                           said + [f"{field} names {ca.holder.ref}, which has no key ca-bundle.crt"])


def _contains(ctx: Context, at: _Place, c: ConsumerProxy, ca: CA, said: list[str],
              with_server: bool) -> Iterator[Outcome]:
    assert ca.bundle is not None
    certs = ca.bundle.certificates
    if not certs:
        return  # nothing readable: parseable says so
    name = ca.bundle_field[-1]
    held = f"{name} holds " + ", ".join(describe(cert) for cert in certs)
    if with_server and len(certs) == 1:
        yield at.violation(ca.bundle_field, ca.holder, f"{name} holds a single certificate, not "
                           "the server CA and the proxy CA", said + [held])
        return
    known, unreadable = _known(ctx)
    if not known:
        yield NotEvaluable(f"{c.name}: input the user must supply: proxy_ca_files (the https "
                           "proxy's CA), or an AddOnDeploymentConfig caBundle / Proxy trustedCA "
                           "in the input" + ("; " + "; ".join(unreadable) if unreadable else ""))
        return
    have = {cert.sha256 for cert in certs}
    if not any(k.certificate.sha256 in have for k in known):
        yield at.violation(ca.bundle_field, ca.holder, f"{name} does not contain the proxy CA",
                           said + [held] + [f"proxy CA {describe(k.certificate)} from {k.source}"
                                            for k in known])


class _Place:
    """Where a finding about a consumer's CA goes: at the field of the object holding it, or,
    for a document stored in the subject (a kubeconfig in a Secret), at the subject's key."""

    def __init__(self, subject: K8sObject, consumer: ConsumerProxy, ca: CA) -> None:
        self.subject, self.consumer, self.ca = subject, consumer, ca

    def violation(self, steps: tuple[Any, ...], holder: K8sObject, problem: str,
                  evidence: list[str]) -> Violation:
        values = {"problem": problem, "consumer": self.consumer.name,
                  "url": mask_credentials(self.ca.urls[0].value or "")}
        if holder.origin is self.subject and holder.source.embedded_in:
            return Violation(field=holder.source.embedded_in, values=values, evidence=evidence)
        if holder is self.subject and holder.held_in is not None:
            # the subject is a document stored in a key (an install-config in a ConfigMap)
            container, key = holder.held_in
            return Violation(field=key, values=values, evidence=evidence, subject=container)
        return Violation(field=format_path(steps), values=values, evidence=evidence,
                         subject=None if holder is self.subject else holder)
