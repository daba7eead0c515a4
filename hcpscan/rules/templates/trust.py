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
  stub's ``certificateAuthorities``, the files a container's runtime reads; see
  ``hcpscan.analysis.proxy.loaded_ca`` and ``hcpscan.model.truststores``) holds the CA its
  https:// proxy presents, or its http:// proxy when a trustedCA names a CA for that proxy
  (one that intercepts TLS).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator
from typing import Any

from hcpscan.analysis.proxy import ConsumerProxy
from hcpscan.analysis.proxy.loaded_ca import (
    HUB_CA_BESIDE,
    LoadedCA,
    ProxyCA,
    checked_proxy_cas,
    configured_proxy_ca,
    container_loaded,
    hosted_proxy,
    ignition_loaded,
    missing_ca,
    node_loaded,
    proxy_ca_elsewhere,
    proxy_ca_for,
    trust_runtimes,
    trusts,
)
from hcpscan.analysis.proxy.pem import NOT_BASE64, CABundle, Certificate
from hcpscan.analysis.proxy.settings import (
    ADDON_CONFIG,
    CLUSTER_PROXY,
    CONTAINER,
    HOSTED_CLUSTER,
    IGNITION,
    KONNECTIVITY_SIDECAR,
    KUBEADM_FILE,
    KUBECONFIG,
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
    namesakes,
    resolve_ca,
    validated_ca,
)
from hcpscan.analysis.proxy.workloads import controlled_pod, owner_present
from hcpscan.core.redact import mask_credentials
from hcpscan.core.yamldocs import load_json
from hcpscan.findings.fix import NoFix, Remedy, SetField
from hcpscan.inventory.fieldpath import format_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.secrets import secret_values
from hcpscan.inventory.store import Inventory
from hcpscan.model.clusters import install_config
from hcpscan.model.hostedcluster import (
    HOSTED_KINDS,
    hosted_cluster_for_namespace,
    is_user_data,
    synced_from,
    unknown_hosted_cluster,
)
from hcpscan.rules.context import PROXY_ANALYSES, Context
from hcpscan.rules.templates import register
from hcpscan.rules.templates.base import (
    NotApplicable,
    NotEvaluable,
    Outcome,
    Settled,
    Template,
    Violation,
    conditions_param,
    roles_param,
)
from hcpscan.rules.templates.noproxy_coverage import per_rule

CONDITIONS = ("present", "resolvable", "parseable", "unexpired", "contains", "matches", "loaded")
# The consumers whose loaded bundle the model follows (condition ``loaded``).
USERS = (IGNITION, KONNECTIVITY_SIDECAR, KUBEADM_FILE, CONTAINER)


def _consumers_for(ctx: Context, subject: K8sObject) -> list[ConsumerProxy]:
    """The subject's consumers, and those of documents stored in it (a kubeconfig in a Secret)."""
    return ctx.proxy.held_by(subject)


def _known(ctx: Context) -> tuple[list[KnownProxyCA], list[str]]:
    return ctx.analysis("known-proxy-cas", lambda inv: checked_proxy_cas(
        inv, ctx.proxy.all, list(ctx.config.proxy_ca_files)))


def _roles(params: dict[str, Any]) -> frozenset[str]:
    """The consumer kinds a trust rule judges."""
    return frozenset(ROLES[r] for r in params.get("consumers", ("Proxy", "HostedCluster",
                                                                 "addon-config", "kubeconfig")))


@register
class Trust(Template):
    name = "trust"
    analyses = PROXY_ANALYSES
    description = ("the CA an https:// proxy's clients verify it with is present, resolvable, "
                   "parseable, unexpired, and contains the proxy's CA")
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["conditions"],
        "properties": {
            "conditions": conditions_param(
                CONDITIONS, "present: a CA is given; resolvable: the ConfigMap it names exists "
                            "with ca-bundle.crt; parseable: its PEM reads; unexpired: not all "
                            "expired; contains: it holds the proxy's CA; matches: it holds the "
                            "proxy's CA as other sources state it (never itself); loaded: the "
                            "bundle the "
                            "consumer really loads holds the proxy's CA (ignition, "
                            "konnectivity-sidecar, kubeadm-file, container)"),
            "consumers": roles_param(
                ROLES, "consumers judged (those whose API keeps a proxy CA: Proxy, "
                       "HostedCluster, addon-config, kubeconfig, klusterlet-config, "
                       "install-config; for loaded: ignition, konnectivity-sidecar, container, "
                       "kubeadm-file)"),
            "absent_ok": roles_param(
                ROLES, "present: roles whose missing CA this rule does not report (another "
                       "rule does)"),
            "with_server_ca": {"type": "boolean",
                               "description": "contains: the bundle must also hold a CA besides "
                                              "the proxy's (a kubeconfig's server CA)"},
        },
    }
    subject_kinds = ("Proxy", "HostedCluster", "HostedControlPlane", "AddOnDeploymentConfig",
                     "Kubeconfig", "Secret",
                     "KlusterletConfig", "InstallConfig", "ConfigMap", "Deployment",
                     "StatefulSet", "DaemonSet", "Pod", "KubeadmConfig", "KubeadmConfigTemplate",
                     "KubeadmControlPlane", "KubeadmControlPlaneTemplate")
    message_fields = {"problem": "what is wrong with the CA", "consumer": "the consumer",
                      "url": "the https:// proxy URL, password masked",
                      "loads": "loaded: how the consumer loads its CA bundle",
                      "ca": "loaded: the proxy's CA it lacks"}

    def reads_whole(self, params: dict[str, Any], subjects: tuple[str, ...]) -> tuple[str, ...]:
        return ()  # of pods and workloads: containers, templates, owners (inventory/kept.py)

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        conditions = params.get("conditions", ())
        known = ("AddOnDeploymentConfig", "Proxy") if "contains" in conditions else ()
        if "matches" in conditions:  # the proxy's CA as other sources state it
            known = (*known, "Proxy", *HOSTED_KINDS, "KlusterletConfig", "Secret")
        loaded = (*HOSTED_KINDS, "Secret", "Proxy", *MIRROR_KINDS) if "loaded" in conditions \
            else ()
        return ("ConfigMap", *known, *loaded)

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        judged = False
        direct: list[str] = []
        consumers = _consumers_for(ctx, subject)
        roles = per_rule(ctx, params, "trust", _roles) if consumers else frozenset()
        for c in consumers:
            if c.kind == CONTAINER and _all_direct(c):
                direct.append(c.name)
            if c.kind in USERS:
                if c.kind not in roles or "loaded" not in params["conditions"]:
                    continue
                if c.kind in (CONTAINER, KONNECTIVITY_SIDECAR) and \
                        _controller_made(subject, ctx.inventory):
                    continue  # its controller (Deployment, CronJob ...) is judged, once
                if c.kind == CONTAINER:
                    target = _container_target(ctx, subject, c)
                    if target is not None:
                        judged = True
                        yield from _judge_loaded(ctx, subject, c, *target)
                    continue
                url = _https_url(c)
                if url is not None:
                    judged = True
                    yield from _judge_loaded(ctx, subject, c, url)
                continue
            if c.dropped and c.kind in roles and "present" in params["conditions"]:
                dropped = list(_dropped_https(c))
                judged = judged or bool(dropped)
                yield from dropped
            ca = resolve_ca(ctx.inventory, c) if c.kind in roles else None
            if ca is None and c.kind in roles:
                validated = validated_ca(ctx.inventory, c)
                conditions = [x for x in params["conditions"] if x in _VALIDATED]
                if validated is not None and conditions:  # whatever the proxy's scheme
                    judged = True
                    if validated.bundle is None or _operator_rejects(validated.bundle):
                        yield from _judge(ctx, subject, c, validated,
                                          {**params, "conditions": conditions})
                continue
            if ca is None:
                continue
            judged = True
            yield from _judge(ctx, subject, c, ca, params)
        if judged:
            return
        if _may_hide_consumer(subject, params):
            yield NotEvaluable(f"{subject.ref} is redacted in this dump")
        elif direct:
            yield NotApplicable(f"{', '.join(direct)}: noProxy '*' sends every request direct, "
                                "never through the proxy")
        else:
            yield NotApplicable(_NO_HTTPS_PROXY)

    def settle(self, ctx: Context, subjects: list[K8sObject], params: dict[str, Any]
               ) -> Settled | None:
        # check's last answer, for subjects that hold no consumer (most of a fleet's)
        if not subjects:
            return Settled([])  # (the proxy model is not built for none)
        holding = {id(o) for o in ctx.proxy.holding(subjects)}
        settled = Settled([s for s in subjects if id(s) in holding
                           or (s.kind == "Secret" and _may_hide_consumer(s, params))])
        if len(settled.rest) < len(subjects):
            settled.inapplicable[_NO_HTTPS_PROXY] = len(subjects) - len(settled.rest)
        return settled


_NO_HTTPS_PROXY = "no https:// proxy in scope"
# What an operator checks of a trusted CA it validates whatever the proxy's scheme (the
# cluster-network-operator: the ConfigMap, its key and a readable certificate; not expiry)
_VALIDATED = ("resolvable", "parseable")


def _may_hide_consumer(subject: K8sObject, params: dict[str, Any]) -> bool:
    """A redacted Secret may hold a consumer; for ``loaded`` only an ignition stub can."""
    if subject.kind != "Secret" or not any(v.redacted for v in secret_values(subject).values()):
        return False
    return set(params["conditions"]) != {"loaded"} or is_user_data(subject)


def _dropped_https(c: ConsumerProxy) -> Iterator[Violation]:
    """An https:// proxy written where the program ignores it (a KlusterletConfig's deprecated
    hubKubeAPIServerProxyConfig once hubKubeAPIServerConfig is present): its CA, wherever it
    is given, verifies nothing, and the client goes without the proxy."""
    for s in c.dropped:
        url = (s.value or "").strip()
        if not url.lower().startswith("https://"):
            continue
        where = format_path(s.source.steps)
        block = format_path(s.source.steps[:-1])
        yield Violation(
            field=where, values={"problem": f"https:// proxy in {block} is ignored, so the "
                                            "proxy is dropped", "consumer": c.name,
                                 "url": mask_credentials(url)},
            evidence=[f"{where} = {mask_credentials(url)}",
                      "spec.hubKubeAPIServerConfig is present without proxyURL: OCM ignores "
                      f"the deprecated {block} and the klusterlet connects to the hub "
                      "without a proxy"],
            remedy=NoFix(f"set spec.hubKubeAPIServerConfig.proxyURL to {mask_credentials(url)} "
                         f"and remove {block} (its CA goes in "
                         "spec.hubKubeAPIServerConfig.trustedCABundles); or, to keep the "
                         "deprecated fields, remove spec.hubKubeAPIServerConfig"))


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
            violation = at.violation(ca.field, c.object, f"https:// proxy without {what}",
                                     said + [f"no {ca.detail or format_path(ca.field)}: the "
                                             "proxy's certificate is checked against the "
                                             "system roots only"])
            violation.remedy = (_set_proxy_ca(ca, _known(ctx)[0]) if c.kind == ADDON_CONFIG
                                else _no_ca_fix(ctx, c, ca))
            yield violation
        return
    if ca.state in (UNRESOLVED, NOT_COLLECTED, NO_KEY):
        if "resolvable" in conditions:
            for outcome in _unresolved(ctx, at, c, ca, said):
                if isinstance(outcome, Violation):
                    outcome.remedy = _no_ca_fix(ctx, c, ca)
                yield outcome
        return
    bundle = ca.bundle
    if bundle is None:  # every state but the ones above comes with the bundle read
        yield NotEvaluable(f"{c.name}: the CA bundle {format_path(ca.field)} names was not read")
        return
    problems = [p for cond, p in _bundle_problems(bundle) if cond in conditions]
    if problems:
        name = ca.bundle_field[-1]
        effect = _REJECTED if c.kind == CLUSTER_PROXY and _operator_rejects(bundle) else ""
        undecodable = any(p.startswith(NOT_BASE64) for p in problems)
        said_of = (f"{name} {NOT_BASE64}: " + ("the kubeconfig fails to load" if c.kind == KUBECONFIG
                                                else "no client reads it")
                   if undecodable else f"{name} trusts no usable CA{effect}")
        violation = at.violation(ca.bundle_field, ca.holder, said_of,
                                 said + ([f"{format_path(ca.field)} names {ca.holder.ref}"]
                                         if ca.holder is not c.object else [])
                                 + [f"{name}: {p}" for p in problems])
        violation.remedy = _no_ca_fix(ctx, c, ca)
        yield violation
    if "contains" in conditions:
        yield from _contains(ctx, at, c, ca, bundle, said, bool(params.get("with_server_ca")))
    if "matches" in conditions:
        yield from _matches(ctx, at, c, ca, bundle, said)


def _bundle_problems(bundle: CABundle) -> list[tuple[str, str]]:
    parse = [p.message for p in bundle.problems]
    return [("parseable", p) for p in parse] + [
        ("unexpired", p) for p in bundle_problems(bundle) if p not in parse]


def _unresolved(ctx: Context, at: _Place, c: ConsumerProxy, ca: CA, said: list[str]
                ) -> Iterator[Outcome]:
    field = format_path(ca.field)
    namespace = ca.detail.partition("/")[0]
    effect = _REJECTED if c.kind == CLUSTER_PROXY else ""
    elsewhere = [cm.ref for cm in namesakes(ctx.inventory, ca, c.object)] \
        if ca.state in (NOT_COLLECTED, UNRESOLVED) else []
    cause = (f"; {', '.join(elsewhere)} has that name in another namespace, where it is not "
             f"read: likely created in the wrong namespace (create it in {namespace})"
             ) if elsewhere else ""
    if ca.state == NOT_COLLECTED:
        yield NotEvaluable(f"ConfigMap {ca.detail} ({field}) is not in the input, which holds no "
                           f"ConfigMap of namespace {namespace} at all (add the output of `oc get "
                           f"configmaps -n {namespace} -o yaml` to the input){cause}")
    elif ca.state == UNRESOLVED:
        yield at.violation(ca.field, c.object,
                           f"trusted CA ConfigMap {ca.detail} is missing{effect}{cause}",
                           said + [f"{field} names ConfigMap {ca.detail}, which is not among the "
                                   f"ConfigMaps of {namespace} in the input"]
                           + [f"{ref} has the name but is in another namespace"
                              for ref in elsewhere])
    else:
        yield at.violation(ca.bundle_field, ca.holder,
                           f"ConfigMap {ca.detail} has no ca-bundle.crt{effect}",
                           said + [f"{field} names {ca.holder.ref}, which has no key ca-bundle.crt"])


def _operator_rejects(bundle: CABundle) -> bool:
    """Whether the cluster-network-operator refuses a Proxy's trustedCA bundle (library-go's
    CertsFromPEM): no certificate at all, or a certificate block it cannot read; other PEM
    blocks it passes over, and it does not look at expiry."""
    return not bundle.certificates or any(p.index is not None for p in bundle.problems)


# What the cluster-network-operator does when it cannot read a Proxy's trustedCA.
_REJECTED = (": the cluster-network-operator rejects the whole Proxy (Degraded, "
             "InvalidProxyConfig) and its status keeps the previous proxy settings")


def _contains(ctx: Context, at: _Place, c: ConsumerProxy, ca: CA, bundle: CABundle,
              said: list[str], with_server: bool) -> Iterator[Outcome]:
    certs = bundle.certificates
    if not certs:  # nothing readable: parseable says so; a rule without it says why not here
        name = ca.bundle_field[-1]
        yield NotEvaluable(f"{c.name}: {name} holds no readable certificate ("
                            + "; ".join(p.message for p in bundle.problems) + "): PRX012 reports it")
        return
    name = ca.bundle_field[-1]
    held = f"{name} holds " + ", ".join(describe(cert) for cert in certs)
    known, unreadable = _known(ctx)
    if with_server and len(certs) == 1:
        violation = at.violation(ca.bundle_field, ca.holder, f"{name} holds a single certificate, "
                                 "not the server CA and the proxy CA", said + [held])
        violation.remedy = _at_source(c, ca, _append_proxy_ca(ca, known, certs[0]))
        yield violation
        return
    if not known:
        yield NotEvaluable(f"{c.name}: input the user must supply: proxy_ca_files (the https "
                           "proxy's CA), or an AddOnDeploymentConfig caBundle / Proxy trustedCA "
                           "in the input" + ("; " + "; ".join(unreadable) if unreadable else ""))
        return
    have = {cert.sha256 for cert in certs}
    if not any(k.certificate.sha256 in have for k in known):
        violation = at.violation(ca.bundle_field, ca.holder, f"{name} does not contain the proxy CA",
                                 said + [held] + [f"proxy CA {describe(k.certificate)} from "
                                                  f"{k.source}" for k in known])
        violation.remedy = _at_source(c, ca, _append_proxy_ca(ca, known))
        yield violation


def _matches(ctx: Context, at: _Place, c: ConsumerProxy, ca: CA, bundle: CABundle,
             said: list[str]) -> Iterator[Outcome]:
    """The bundle holds the proxy's CA as the other sources of the same proxy state it (the
    Proxy's or a HostedCluster's trustedCA, a KlusterletConfig, the klusterlet's hub
    kubeconfig, ``inputs.proxy_ca_files``), never the bundle itself. When no other source
    names it, the bundle cannot be cross-checked and today's verdict stands."""
    certs = bundle.certificates
    if not certs:
        return
    files = [k for k in _known(ctx)[0] if k.source.startswith("proxy_ca_files")]
    known = proxy_ca_elsewhere(ctx.inventory, ctx.proxy.all, c, files)
    if not known:
        return
    have = {cert.sha256 for cert in certs}
    if any(k.certificate.sha256 in have for k in known):
        return
    name = ca.bundle_field[-1]
    by_source: dict[str, list[Certificate]] = {}
    for k in known:
        if k.certificate.sha256 not in {x.sha256 for x in by_source.get(k.source, [])}:
            by_source.setdefault(k.source, []).append(k.certificate)
    # a kubeconfig alone does not tell which of its CAs is the proxy's: a disagreement
    problem = (f"{name} holds none of the CAs the klusterlet's kubeconfig trusts for this proxy "
               "(one of the two is wrong)" if all(HUB_CA_BESIDE in k.source for k in known)
               else f"{name} holds another CA than the proxy's")
    violation = at.violation(
        ca.bundle_field, ca.holder, problem,
        said + [f"{name} holds " + ", ".join(describe(cert) for cert in certs)]
        + [("the proxy's CA is one of " if HUB_CA_BESIDE in source else "the proxy's CA is ")
           + ", ".join(describe(cert) for cert in cas) + f" ({source})"
           for source, cas in list(by_source.items())[:4]])
    violation.data = {"missing_ca": [{"sha256": k.certificate.sha256,
                                      "subject": k.certificate.subject, "source": k.source}
                                     for k in known]}
    # a kubeconfig's bundle holds the hub's CA too: the proxy's alone is written only from a
    # source that states nothing else
    alone = [k for k in known if HUB_CA_BESIDE not in k.source] or known
    violation.remedy = _set_proxy_ca(ca, alone) if c.kind == ADDON_CONFIG else \
        _at_source(c, ca, _append_proxy_ca(ca, alone))
    yield violation


def _at_source(c: ConsumerProxy, ca: CA, fix: Remedy | NoFix) -> Remedy | NoFix:
    """``fix`` of the CA ConfigMap of a HostedControlPlane that stands in for its
    HostedCluster: that ConfigMap is the operator's copy of one in the HostedCluster's
    namespace, so the change is named there (an edit of the copy is undone)."""
    if ca.holder.kind == "ConfigMap":
        namespace, name = ca.holder.namespace, ca.holder.name
    else:
        namespace, _, name = ca.detail.rpartition("/")
    source = synced_from(c.object, namespace, name) if name else None
    if source is None:
        return fix
    home = source[0] if source[0] is not None else "<its namespace>"
    copy, origin = f"ConfigMap {namespace}/{name}", f"ConfigMap {home}/{source[1]}"
    why = (fix.summary + ": not in this copy" if isinstance(fix, Remedy) else
           fix.why.replace(copy, origin).replace(f"{namespace}/{name}", f"{home}/{name}"))
    command = (f"oc -n {home} create configmap {name} --from-file=ca-bundle.crt=<PEM>"
               if ca.state in (UNRESOLVED, NOT_COLLECTED) else
               f"oc -n {home} edit configmap {name}")
    where = ("the HostedCluster's namespace" if source[0] is not None else
             f"the namespace of {unknown_hosted_cluster(c.object)}")
    return NoFix(f"{why} ({origin}, in {where}, is what to change: the "
                 f"HyperShift operator copies it into {namespace} as {copy} and undoes an edit "
                 f"of the copy; `{command}`)")


def _no_ca_fix(ctx: Context, c: ConsumerProxy, ca: CA) -> Remedy | NoFix:
    return _at_source(c, ca, _no_ca_fix_here(ctx, c, ca))


def _no_ca_fix_here(ctx: Context, c: ConsumerProxy, ca: CA) -> NoFix:
    """Why a proxy CA that is absent, missing or unusable is not written automatically, and
    the exact change to make."""
    field = format_path(ca.field)
    proxy = _one_proxy_ca(_known(ctx)[0], "it")
    known = (f" (the input names one valid proxy CA: {describe(proxy.certificate)} from "
             f"{proxy.source})" if not isinstance(proxy, NoFix) else
             " (the proxy's CA is not in the input; inputs.proxy_ca_files names it for hcpscan)")
    if ca.bundle is not None and any(p.message.startswith(NOT_BASE64) for p in ca.bundle.problems):
        return NoFix(f"base64-encode what {field} holds (e.g. base64 -w0 < ca.pem): the field is "
                     "bytes, written as standard base64 of the PEM; hcpscan does not re-encode "
                     "a value it cannot read as the author meant it")
    if c.kind == "kubeconfig":
        return NoFix(f"{field} replaces the system roots for both TLS sessions, the proxy's and "
                     "the server's inside the tunnel, so it must hold the server's CA and the "
                     "proxy's; the server's CA is not in the input: set it to both, base64 PEM"
                     + known)
    if ca.state == ABSENT and ca.field[-1:] != ("name",):
        pem = "base64 of PEM" if (ca.detail or field).endswith("caBundle") else "PEM"
        return NoFix(f"add {ca.detail or field} holding the proxy's CA ({pem}) to {c.object.ref}; "
                     "which CA the proxy presents is its owner's to say" + known)
    if ca.state == ABSENT:
        return NoFix(f"naming a trusted CA in {field} takes a ConfigMap (key ca-bundle.crt) "
                     "whose name and owner are the cluster admin's choice: create it with the "
                     "proxy's CA (PEM) and name it there" + known)
    if ca.state in (UNRESOLVED, NOT_COLLECTED):
        return NoFix(f"create ConfigMap {ca.detail} with key ca-bundle.crt holding the proxy's "
                     "CA (PEM); hcpscan does not write a ConfigMap another team may already "
                     "keep elsewhere (an operator, a sealed or external source)" + known)
    if ca.state == NO_KEY:
        return NoFix(f"add key ca-bundle.crt with the proxy's CA (PEM) to {ca.holder.ref}"
                     + known)
    return NoFix(f"replace the certificates of {format_path(ca.bundle_field)} that cannot be "
                 "used (unreadable or expired) with the proxy's current CA; which certificate "
                 "the proxy presents now is its owner's to say" + known)


def _one_proxy_ca(known: list[KnownProxyCA], field: str) -> KnownProxyCA | NoFix:
    """The proxy CA a fix writes: the one known CA that is still valid and readable as PEM
    (expired ones help no client verify); else why none is chosen."""
    cas = list({k.certificate.sha256: k for k in known}.values())
    valid = [k for k in cas if not k.certificate.expired() and k.certificate.pem]
    if not cas:
        return NoFix("no proxy CA is in the input: name it with inputs.proxy_ca_files (a PEM "
                     f"file) and hcpscan writes it into {field}")
    if not valid:
        return NoFix("every known proxy CA has expired (" + "; ".join(
            f"{describe(k.certificate)} from {k.source}" for k in cas) + "): get the proxy's "
            "current CA from its owner")
    if len(valid) > 1:
        return NoFix("the input names several valid proxy CAs (" + "; ".join(
            f"{describe(k.certificate)} from {k.source}" for k in valid) + "): which one this "
            f"proxy presents cannot be told; add it to {field} by hand")
    return valid[0]


def _append_proxy_ca(ca: CA, known: list[KnownProxyCA], only: Certificate | None = None
                     ) -> Remedy | NoFix:
    """The bundle as written with the proxy's CA appended (as PEM, or base64 of PEM when the
    field holds base64: certificate-authority-data, caBundle), when the input or the config
    names exactly one proxy CA that is still valid. ``only``: the bundle's one certificate,
    for a kubeconfig that must hold the server CA too."""
    name = ca.bundle_field[-1]
    proxy = _one_proxy_ca(known, str(name))
    if isinstance(proxy, NoFix):
        return proxy
    if only is not None and only.sha256 == proxy.certificate.sha256:
        return NoFix(f"{name} holds only the proxy CA; the server's CA is not in the input: "
                     "append the hub's CA by hand")
    written = ca.holder.get(ca.bundle_field)
    if not isinstance(written, str):
        return NoFix(f"{name} is not written as text")
    pem = written if "-----BEGIN" in written else _base64_text(written)
    if pem is None:
        return NoFix(f"{name} is neither PEM nor base64 of PEM")
    longer = pem + ("" if pem.endswith("\n") or not pem else "\n") + proxy.certificate.pem.strip() + "\n"
    value = longer if "-----BEGIN" in written else base64.b64encode(longer.encode()).decode()
    return Remedy(ca.holder, f"append the proxy CA {describe(proxy.certificate)} (from "
                             f"{proxy.source}) to {format_path(ca.bundle_field)} of "
                             f"{ca.holder.ref}", (SetField(ca.bundle_field, value),))


def _set_proxy_ca(ca: CA, known: list[KnownProxyCA]) -> Remedy | NoFix:
    """An AddOnDeploymentConfig without ``caBundle``: it set to base64 of the one known,
    unexpired proxy CA (OCM reads caBundle only to verify the https proxy)."""
    proxy = _one_proxy_ca(known, "caBundle")
    if isinstance(proxy, NoFix):
        return proxy
    pem = proxy.certificate.pem.strip() + "\n"
    return Remedy(ca.holder, f"set {format_path(ca.field)} of {ca.holder.ref} to the proxy CA "
                             f"{describe(proxy.certificate)} (from {proxy.source})",
                  (SetField(ca.field, base64.b64encode(pem.encode()).decode()),))


def _base64_text(value: str) -> str | None:
    try:
        return base64.b64decode("".join(value.split()), validate=True).decode()
    except ValueError:  # not base64, or not text
        return None


class _Place:
    """Where a finding about a consumer's CA goes: at the field of the object holding it, or,
    for a document stored in the subject (a kubeconfig in a Secret), at the subject's key."""

    def __init__(self, subject: K8sObject, consumer: ConsumerProxy, ca: CA) -> None:
        self.subject, self.consumer, self.ca = subject, consumer, ca

    def violation(self, steps: tuple[Any, ...], holder: K8sObject, problem: str,
                  evidence: list[str]) -> Violation:
        values = {"problem": problem, "consumer": self.consumer.name,
                  "url": mask_credentials(self.ca.urls[0].value or "") if self.ca.urls else ""}
        if holder.origin is self.subject and holder.source.embedded_in:
            return Violation(field=holder.source.embedded_in, values=values, evidence=evidence)
        if holder is self.subject and holder.held_in is not None:
            # the subject is a document stored in a key (an install-config in a ConfigMap)
            container, key = holder.held_in
            return Violation(field=key, values=values, evidence=evidence, subject=container)
        return Violation(field=format_path(steps), values=values, evidence=evidence,
                         subject=None if holder is self.subject else holder)


# -- loaded: trust where it is used ---------------------------------------------------------


def _controller_made(subject: K8sObject, inventory: Inventory) -> bool:
    """A Pod or ReplicaSet a controller in the input made, or a Job a CronJob in the input
    made: the controller's template is what the user writes and what is judged (as the
    other proxy rules do)."""
    owners = subject.metadata.get("ownerReferences")
    return controlled_pod(subject, inventory) or (
        subject.kind == "Job" and isinstance(owners, list) and any(
            isinstance(o, dict) and o.get("controller") and o.get("kind") == "CronJob"
            and owner_present(inventory, subject, o) for o in owners))


MIRROR_KINDS = ("ImageDigestMirrorSet", "ImageContentSourcePolicy", "ImageTagMirrorSet")


def _mirror_registries(ctx: Context, subject: K8sObject) -> str:
    """What in the input says the cluster pulls from mirror registries ('' when nothing): a
    mirror set object, or the install-config's imageContentSources / imageDigestSources."""
    for kind in MIRROR_KINDS:
        found = next((o for o in ctx.inventory.of_kind(kind) if o.cluster == subject.cluster), None)
        if found is not None:
            return f"the cluster pulls from mirror registries ({found.ref})"
    hosted = hosted_cluster_for_namespace(ctx.inventory, subject.namespace, subject.cluster)
    if hosted is not None and hosted.obj.get(("spec", "imageContentSources")):
        return (f"the hosted cluster pulls from mirror registries ({hosted.obj.ref} "
                "spec.imageContentSources)")
    installed = install_config(ctx.inventory, subject.cluster)
    if installed is not None:
        key = next((k for k in ("imageDigestSources", "imageContentSources")
                    if installed[0].get(k)), None)
        if key is not None:
            return f"the cluster pulls from mirror registries ({installed[1]} {key})"
    return ""


def _all_direct(c: ConsumerProxy) -> bool:
    """noProxy ``*``: every client (Go, curl, Python, Node) sends every request direct."""
    return c.no_proxy is not None and (c.no_proxy.value or "").strip() == "*"


def _container_target(ctx: Context, subject: K8sObject, c: ConsumerProxy
                      ) -> tuple[Setting, ProxyCA, str] | None:
    """A container's proxy URL, the CA that proxy presents and why it is judged; None when
    the container needs no CA for it: a plain http:// proxy that does not intercept TLS.

    An ``https://`` proxy is a TLS server: every client needs its CA. An ``http://`` proxy
    re-signs the client's TLS only when it intercepts; hcpscan knows that from the
    configuration of that proxy (same host and port) naming a CA for it — the cluster
    ``Proxy``'s or the HostedCluster's ``trustedCA``, which exists for exactly that."""
    if c.via is not None or c.unserved is not None:
        return None  # the konnectivity sidecar dials the proxy (judged as the sidecar)
    if _all_direct(c):
        return None  # every request goes direct: the proxy is never dialled
    dialled = c.https_proxy or c.http_proxy
    owners = ctx.analysis("proxy-configuring-objects", lambda _inv: [
        o for o in ctx.proxy.all if o.kind in (CLUSTER_PROXY, HOSTED_CLUSTER)])
    configured, unreadable = (configured_proxy_ca(ctx.inventory, owners, subject, dialled)
                              if dialled is not None else ([], ""))
    url = _https_url(c)
    if url is not None:
        known = [k for k in _known(ctx)[0] if k.source.startswith("proxy_ca_files")]
        found = known + configured
        if found:
            return url, ProxyCA(found), ""
        return url, ProxyCA([], unreadable or "the proxy's CA is not known: name it in "
                            "inputs.proxy_ca_files (PEM files of the proxy's CA, in the hcpscan "
                            "config), or in the trustedCA of the Proxy or HostedCluster that "
                            "configures this proxy"), ""
    # an intercepting proxy re-signs the https:// requests sent through it: those go through
    # HTTPS_PROXY; with HTTP_PROXY alone they go direct (Go, curl, Python) and only plain
    # http:// requests, which carry no TLS, use the proxy
    url = c.https_proxy if c.https_proxy is not None and c.https_proxy.value else None
    said = ctx.config.proxy_intercepts_tls
    if url is None or said is False:
        return None  # the user says the http:// proxy does not intercept TLS
    if said:
        found = [k for k in _known(ctx)[0] if k.source.startswith("proxy_ca_files")] + configured
        # the user says it intercepts: without its CA the container cannot be judged
        return url, ProxyCA(found, "" if found else unreadable or (
            "inputs.proxy_intercepts_tls says the http:// proxy intercepts TLS, but its CA is "
            "not known: name it in inputs.proxy_ca_files (PEM files of the proxy's CA, in the "
            "hcpscan config), or in the trustedCA of the Proxy or HostedCluster that configures "
            "this proxy")), ("inputs.proxy_intercepts_tls: the http:// proxy intercepts TLS "
                             "(re-signs the servers' certificates with its CA)")
    if not configured and unreadable:
        # a trustedCA is named for this proxy (it intercepts) but cannot be read
        return url, ProxyCA([], unreadable), ""
    if not configured:
        return None
    mirrors = _mirror_registries(ctx, subject)
    if mirrors:
        # a disconnected install copies the mirror registry's CA into the trustedCA: the
        # bundle may name no CA of this proxy at all
        return url, ProxyCA(configured, doubt=(
            f"a trustedCA is named for this http:// proxy, but {mirrors}: the bundle may carry "
            "only the mirror registries' CA, so whether the proxy intercepts TLS is not known; "
            "set inputs.proxy_intercepts_tls (true or false)")), ""
    return url, ProxyCA(configured), (
        "a trustedCA is named for this http:// proxy, so it intercepts TLS (re-signs the "
        "servers' certificates with its CA; set inputs.proxy_intercepts_tls: false if it does "
        "not)")


def _judge_loaded(ctx: Context, subject: K8sObject, c: ConsumerProxy, url: Setting,
                  given: ProxyCA | None = None, intercepts: str = "") -> Iterator[Outcome]:
    known, _unreadable = _known(ctx)
    proxy_ca = given or proxy_ca_for(ctx.inventory, subject, known,
                                     hosted_proxy(ctx.inventory, ctx.proxy, subject))
    if proxy_ca.unknown:
        yield NotEvaluable(f"{c.name}: {proxy_ca.unknown}")
        return
    every = _loaded(ctx, subject, c)
    if isinstance(every, NotEvaluable):
        yield every
        return
    if any(trusts(loaded, proxy_ca) for loaded in every):
        return
    unknown = next((loaded.unknown for loaded in every if loaded.unknown), "")
    if unknown:
        yield NotEvaluable(f"{c.name}: {unknown}")
        return
    if proxy_ca.doubt:
        yield NotEvaluable(f"{c.name}: {proxy_ca.doubt}")
        return
    loaded = every[0]
    if len(every) > 1:  # the runtime is not known: what each would load
        loaded = LoadedCA("; ".join(x.loads_at.partition(": ")[2] or x.loads_at for x in every),
                          loaded.field, [c for x in every for c in x.certificates],
                          list(dict.fromkeys(s for x in every for s in x.sources)))
        loaded.loads_at = f"{c.object.ref} container {c.container}: {loaded.loads_at}"
    shown = mask_credentials(url.value or "")
    cas = ", ".join(describe(k.certificate) for k in proxy_ca.certificates[:2])
    held = (", ".join(f"{s}" for s in loaded.sources) + " hold "
            + ", ".join(describe(cert) for cert in loaded.certificates)
            if loaded.certificates else "it loads no CA besides the system roots, which hold "
                                        "no private CA")
    yield Violation(
        field=_field(subject, c, loaded),
        values={"consumer": c.name, "url": shown, "loads": loaded.loads_at, "ca": cas},
        evidence=[f"{url.name} {shown!r} at {url.source}", *([intercepts] if intercepts else []),
                  *([f"runtime: {_runtime_note(ctx, subject, c)}"] if c.kind == CONTAINER else []),
                  f"loads: {loaded.loads_at}", held,
                  *(f"proxy CA {describe(k.certificate)} from {k.source}"
                    for k in proxy_ca.certificates[:3])],
        data={"missing_ca": missing_ca(proxy_ca),
              "consumer": {"object": c.object.ref, "container": c.container or "",
                           "field": _field(subject, c, loaded)},
              "loads_bundle_at": loaded.loads_at, "proxy_url": shown})


def _loaded(ctx: Context, subject: K8sObject, c: ConsumerProxy) -> list[LoadedCA] | NotEvaluable:
    """What the consumer loads; for a container whose runtime the input does not say, what
    each runtime it may be would load (it trusts the proxy if any of them does)."""
    if c.kind == IGNITION:
        stub = _stub_loaded(subject, c)
        return stub if isinstance(stub, NotEvaluable) else [stub]
    if c.kind == KUBEADM_FILE:
        return [node_loaded(ctx.inventory, c.object)]
    ref = next((r for r in ctx.proxy.containers_of(subject) if r.name == c.container), None)
    if ref is None:
        return NotEvaluable(f"{c.name}: container {c.container} not found in {subject.ref}")
    if c.kind == KONNECTIVITY_SIDECAR:  # the control-plane-operator binary: Go
        return [container_loaded(ctx.inventory, ref)]
    runtimes, _why = trust_runtimes(ctx.inventory, ref)
    return [container_loaded(ctx.inventory, ref, runtime) for runtime in runtimes]


def _runtime_note(ctx: Context, subject: K8sObject, c: ConsumerProxy) -> str:
    ref = next((r for r in ctx.proxy.containers_of(subject) if r.name == c.container), None)
    if ref is None:
        return "unknown"
    runtimes, why = trust_runtimes(ctx.inventory, ref)
    return f"{', '.join(runtimes)} ({why})"


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
