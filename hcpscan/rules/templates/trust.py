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
  tunnel, the server with one bundle);
* ``loaded``: trust where it is used - the bundle the consumer really loads (an ignition
  stub's ``certificateAuthorities``, the files a container's Go program reads; see
  ``hcpscan.analysis.proxy.loaded_ca``) holds the CA its https:// proxy presents.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from hcpscan.analysis.proxy import ConsumerProxy
from hcpscan.analysis.proxy.loaded_ca import (
    LoadedCA,
    container_loaded,
    hosted_proxy,
    ignition_loaded,
    missing_ca,
    node_loaded,
    proxy_ca_for,
    trusts,
)
from hcpscan.analysis.proxy.settings import (
    IGNITION,
    KONNECTIVITY_SIDECAR,
    KUBEADM_FILE,
    ROLES,
    Setting,
)
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
from hcpscan.core.redact import mask_credentials
from hcpscan.core.yamldocs import load_json
from hcpscan.inventory.fieldpath import format_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.secrets import secret_values
from hcpscan.model.hostedcluster import is_user_data
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

CONDITIONS = ("present", "resolvable", "parseable", "unexpired", "contains", "loaded")
# The consumers whose loaded bundle the model follows (condition ``loaded``).
USERS = (IGNITION, KONNECTIVITY_SIDECAR, KUBEADM_FILE)


def _consumers_for(ctx: Context, subject: K8sObject) -> list[ConsumerProxy]:
    """The subject's consumers, and those of documents stored in it (a kubeconfig in a Secret)."""
    return ctx.proxy.held_by(subject)


def _known(ctx: Context) -> tuple[list[KnownProxyCA], list[str]]:
    return ctx.analysis("known-proxy-cas", lambda inv: known_proxy_cas(  # type: ignore[no-any-return]
        inv, ctx.proxy.all, list(ctx.config.proxy_ca_files)))


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
                            "expired; contains: it holds the proxy's CA; loaded: the bundle the "
                            "consumer really loads holds the proxy's CA (ignition, "
                            "konnectivity-sidecar)"),
            "consumers": roles_param(
                ROLES, "consumers judged (those whose API keeps a proxy CA: Proxy, "
                       "HostedCluster, addon-config, kubeconfig, klusterlet-config, "
                       "install-config; for loaded: ignition, konnectivity-sidecar, "
                       "kubeadm-file)"),
            "absent_ok": roles_param(
                ROLES, "present: roles whose missing CA this rule does not report (another "
                       "rule does)"),
            "with_server_ca": {"type": "boolean",
                               "description": "contains: the bundle must also hold a CA besides "
                                              "the proxy's (a kubeconfig's server CA)"},
        },
    }
    subject_kinds = ("Proxy", "HostedCluster", "AddOnDeploymentConfig", "Kubeconfig", "Secret",
                     "KlusterletConfig", "InstallConfig", "ConfigMap", "Deployment",
                     "StatefulSet", "DaemonSet", "Pod", "KubeadmConfig", "KubeadmConfigTemplate",
                     "KubeadmControlPlane", "KubeadmControlPlaneTemplate")
    message_fields = {"problem": "what is wrong with the CA", "consumer": "the consumer",
                      "url": "the https:// proxy URL, password masked",
                      "loads": "loaded: how the consumer loads its CA bundle",
                      "ca": "loaded: the proxy's CA it lacks"}

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        conditions = params.get("conditions", ())
        known = ("AddOnDeploymentConfig", "Proxy") if "contains" in conditions else ()
        loaded = ("HostedCluster", "Secret") if "loaded" in conditions else ()
        return ("ConfigMap", *known, *loaded)

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        roles = {ROLES[r] for r in params.get("consumers", ("Proxy", "HostedCluster", "addon-config",
                                                            "kubeconfig"))}
        judged = False
        for c in _consumers_for(ctx, subject):
            if c.kind in USERS:
                url = _https_url(c) if c.kind in roles and "loaded" in params["conditions"] else None
                if url is not None:
                    judged = True
                    yield from _judge_loaded(ctx, subject, c, url)
                continue
            ca = resolve_ca(ctx.inventory, c) if c.kind in roles else None
            if ca is None:
                continue
            judged = True
            yield from _judge(ctx, subject, c, ca, params)
        if judged:
            return
        # a redacted Secret may hold a consumer; for ``loaded`` only an ignition stub can
        stub_only = set(params["conditions"]) == {"loaded"}
        if subject.kind == "Secret" and any(v.redacted for v in secret_values(subject).values()) \
                and (not stub_only or is_user_data(subject)):
            yield NotEvaluable(f"{subject.ref} is redacted in this dump")
        else:
            yield NotApplicable("no https:// proxy in scope")


def _https_url(c: ConsumerProxy) -> Setting | None:
    return next((s for s in (c.https_proxy, c.http_proxy) if s is not None
                 and (s.value or "").strip().lower().startswith("https://")), None)


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


# -- loaded: trust where it is used ---------------------------------------------------------


def _judge_loaded(ctx: Context, subject: K8sObject, c: ConsumerProxy, url: Setting) -> Iterator[Outcome]:
    known, _unreadable = _known(ctx)
    proxy_ca = proxy_ca_for(ctx.inventory, subject, known,
                            hosted_proxy(ctx.inventory, ctx.proxy.all, subject))
    if proxy_ca.unknown:
        yield NotEvaluable(f"{c.name}: {proxy_ca.unknown}")
        return
    loaded = _loaded(ctx, subject, c)
    if isinstance(loaded, NotEvaluable):
        yield loaded
        return
    if trusts(loaded, proxy_ca):
        return
    if loaded.unknown:
        yield NotEvaluable(f"{c.name}: {loaded.unknown}")
        return
    shown = mask_credentials(url.value or "")
    cas = ", ".join(describe(k.certificate) for k in proxy_ca.certificates[:2])
    held = (", ".join(f"{s}" for s in loaded.sources) + " hold "
            + ", ".join(describe(cert) for cert in loaded.certificates)
            if loaded.certificates else "it loads no CA besides the system roots, which hold "
                                        "no private CA")
    yield Violation(
        field=_field(subject, c, loaded),
        values={"consumer": c.name, "url": shown, "loads": loaded.loads_at, "ca": cas},
        evidence=[f"{url.name} {shown!r} at {url.source}", f"loads: {loaded.loads_at}", held,
                  *(f"proxy CA {describe(k.certificate)} from {k.source}"
                    for k in proxy_ca.certificates[:3])],
        data={"missing_ca": missing_ca(proxy_ca),
              "consumer": {"object": c.object.ref, "container": c.container or "",
                           "field": _field(subject, c, loaded)},
              "loads_bundle_at": loaded.loads_at, "proxy_url": shown})


def _loaded(ctx: Context, subject: K8sObject, c: ConsumerProxy) -> LoadedCA | NotEvaluable:
    if c.kind == IGNITION:
        return _stub_loaded(subject, c)
    if c.kind == KUBEADM_FILE:
        return node_loaded(ctx.inventory, c.object)
    ref = next((r for r in ctx.proxy.containers_of(subject) if r.name == c.container), None)
    if ref is None:
        return NotEvaluable(f"{c.name}: container {c.container} not found in {subject.ref}")
    return container_loaded(ctx.inventory, ref)


def _stub_loaded(subject: K8sObject, c: ConsumerProxy) -> LoadedCA | NotEvaluable:
    if subject.kind != "Secret":
        return ignition_loaded(subject.body, subject.ref)
    for key, value in secret_values(subject).items():
        if value.redacted:
            return NotEvaluable(f"{subject.ref} key {key} is redacted in this dump")
        try:
            body = load_json(value.text or "")
        except ValueError:
            continue
        if isinstance(body, dict) and isinstance(body.get("ignition"), dict):
            loaded = ignition_loaded(body, f"{subject.ref} key {key}")
            loaded.field = (_secret_key_field(subject, key),)
            return loaded
    return NotEvaluable(f"{c.name}: the ignition stub cannot be read")


def _secret_key_field(secret: K8sObject, key: str) -> str:
    return ("data." if key in (secret.body.get("data") or {}) else "stringData.") + key


def _field(subject: K8sObject, c: ConsumerProxy, loaded: LoadedCA) -> str:
    if c.kind == IGNITION:
        return str(loaded.field[0]) if subject.kind == "Secret" else format_path(loaded.field)
    if c.kind == KUBEADM_FILE:
        return format_path(loaded.field)
    path = loaded.field if subject.get(loaded.field) is not None else loaded.field[:-1]
    return format_path(path)
