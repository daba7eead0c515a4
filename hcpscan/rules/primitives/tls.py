"""Primitives: an ``https://`` proxy needs a CA bundle its clients can use to verify it.

``https_proxy_trusted_ca`` (PRX012) follows where each API keeps the bundle — a
ConfigMap named by ``trustedCA.name`` (key ``ca-bundle.crt``) or a field holding
(base64) PEM — and reports a missing reference, a missing ConfigMap or key, and a
bundle with no readable certificate, an unreadable block or only expired
certificates. ``kubeconfig_has_proxy_ca`` (OCM002) checks that a kubeconfig's
``certificate-authority-data`` holds the proxy's CA *besides* the server's CA.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.proxy import CABundle, Certificate, ConsumerProxy, parse_bundle
from hcpscan.findings.redact import mask_credentials
from hcpscan.inventory.fieldpath import Step, format_path, get_path, parse_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.rules.context import Context
from hcpscan.rules.primitives import register
from hcpscan.rules.primitives.base import NotEvaluable, Outcome, Primitive, Violation
from hcpscan.rules.primitives.consumer_roles import (
    CONSUMERS_PARAM,
    chosen_consumers,
    consumer_reads,
    written_at,
)
from hcpscan.rules.primitives.kubeconfigs import current_cluster, kubeconfig_in_secret

CA_BUNDLE_KEY = "ca-bundle.crt"


def is_https(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower().startswith("https://")


def describe(cert: Certificate) -> str:
    return f"{cert.common_name or cert.subject} (sha256 {cert.sha256[:16]}…)"


def bundle_problems(bundle: CABundle) -> list[str]:
    """Why a CA bundle cannot make a client trust anything (or trusts less than written)."""
    problems = [p.message for p in bundle.problems]
    if bundle.certificates and len(bundle.expired()) == len(bundle):
        problems.append("every certificate has expired: " + ", ".join(
            f"{describe(c)} not after {c.not_after:%Y-%m-%d}" for c in bundle.certificates))
    return problems


# -- PRX012 ---------------------------------------------------------------------

_SOURCE = {
    "type": "object", "additionalProperties": False, "required": ["at", "urls"],
    "properties": {
        "at": {"type": "string", "description": "JSONPath to the proxy block(s)"},
        "urls": {"type": "array", "minItems": 1, "items": {"type": "string"},
                 "description": "keys of the block holding proxy URLs"},
        "configmap": {
            "type": "object", "additionalProperties": False, "required": ["name"],
            "properties": {"name": {"type": "string", "description": "key path of the name"},
                           "namespace": {"type": "string",
                                         "description": "default: the subject's namespace"}}},
        "bundle": {"type": "string", "description": "key of the block holding (base64) PEM"},
        "bundle_file": {"type": "string", "description": "key naming a CA file instead"},
        "insecure": {"type": "string", "description": "key that, when true, skips verification"},
        "absent": {"enum": ["violation", "ignore"],
                   "description": "a missing bundle/reference: report it (default) or not"},
    },
}


@register
class HttpsProxyTrustedCA(Primitive):
    name = "https_proxy_trusted_ca"
    description = "an https:// proxy comes with a readable, unexpired CA bundle (inline or ConfigMap)"
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["sources"],
        "properties": {"sources": {"type": "object",
                                   "additionalProperties": {"type": "array", "items": _SOURCE}},
                       "consumers": CONSUMERS_PARAM},
    }
    reads = ("ConfigMap",)

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        return (*self.reads, *consumer_reads(params.get("consumers", ())))

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        for source in params["sources"].get(subject.kind, ()):
            for block, steps in ctx.inventory.jsonpath(subject, source["at"]):
                if isinstance(block, dict):
                    yield from _check_block(ctx, subject, block, steps, source)
        for consumer in chosen_consumers(ctx, subject, params):
            yield from _consumer_trust(subject, consumer)


def _consumer_trust(subject: K8sObject, consumer: ConsumerProxy) -> Iterable[Outcome]:
    """An https:// proxy of a model consumer and the CA bundle the model found for it
    (KlusterletConfig trustedCABundles, an install-config's additionalTrustBundle)."""
    https = [s for s in dict.fromkeys((consumer.https_proxy, consumer.http_proxy))
             if s is not None and is_https(s.value)]
    if not https:
        return
    said = [f"{s.source.field} = {mask_credentials(str(s.value).strip())}" for s in https]
    ca = consumer.trusted_ca
    if ca is None:
        at = written_at(subject, https[0]) or (None, "")
        yield Violation(field=at[1], subject=at[0],
                        values={"problem": "https:// proxy without a trusted CA"},
                        evidence=said + [f"{consumer.name} names no CA bundle: the proxy's "
                                         "certificate is checked against the system roots only"])
    elif not ca.known:
        yield NotEvaluable(f"{consumer.name}: {ca.name} unknown ({ca.unknown})")
    elif consumer.ca_bundle is not None and bundle_problems(consumer.ca_bundle):
        at = written_at(subject, ca) or (None, "")
        yield Violation(field=at[1], subject=at[0],
                        values={"problem": f"{ca.name} trusts no usable CA"},
                        evidence=said + [f"{ca.source.field}: {p}"
                                         for p in bundle_problems(consumer.ca_bundle)])


@dataclass(frozen=True, slots=True)
class _Https:
    field: str
    url: str

    def evidence(self) -> str:
        return f"{self.field} = {mask_credentials(self.url)}"


def _check_block(ctx: Context, subject: K8sObject, block: dict[str, Any],
                 steps: tuple[Step, ...], source: dict[str, Any]) -> Iterable[Outcome]:
    https = [_Https(format_path(steps + (key,)), str(block[key]).strip())
             for key in source["urls"] if is_https(block.get(key))]
    if not https:
        return
    if source.get("insecure") and block.get(source["insecure"]) is True:
        return
    said = [h.evidence() for h in https]
    report_absent = source.get("absent", "violation") == "violation"
    if "configmap" in source:
        yield from _configmap_bundle(ctx, subject, block, steps, source, said, report_absent)
        return
    key = source.get("bundle", "")
    value = block.get(key)
    field = format_path(steps + (key,))
    if not value:
        if source.get("bundle_file") and block.get(source["bundle_file"]):
            yield NotEvaluable(f"{format_path(steps + (source['bundle_file'],))} names a CA file "
                               f"({block[source['bundle_file']]}) that is not in the input")
        elif report_absent:
            yield Violation(field=field, values={"problem": f"https:// proxy without {key}"},
                            evidence=said + [f"no {field}: the proxy's certificate is checked "
                                             "against the system roots only"])
        return
    problems = bundle_problems(parse_bundle(str(value)))
    if problems:
        yield Violation(field=field, values={"problem": f"{key} trusts no usable CA"},
                        evidence=said + [f"{field}: {p}" for p in problems])


def _configmap_bundle(ctx: Context, subject: K8sObject, block: dict[str, Any],
                      steps: tuple[Step, ...], source: dict[str, Any], said: list[str],
                      report_absent: bool) -> Iterable[Outcome]:
    name_steps = parse_path(source["configmap"]["name"])
    name = get_path(block, name_steps)
    field = format_path(steps + name_steps)
    if not name:
        if report_absent:
            yield Violation(field=field, values={"problem": "https:// proxy without a trusted CA"},
                            evidence=said + [f"no {field}: the proxy's certificate is checked "
                                             "against the system roots only"])
        return
    namespace = source["configmap"].get("namespace") or subject.namespace
    cm = ctx.inventory.get("ConfigMap", namespace, str(name), subject.cluster)
    if cm is None:
        if not ctx.inventory.query("ConfigMap", namespace=namespace, cluster=subject.cluster):
            yield NotEvaluable(f"ConfigMap {namespace}/{name} ({field}) is not in the input, "
                               f"which holds no ConfigMap of namespace {namespace} at all")
            return
        yield Violation(field=field,
                        values={"problem": f"trusted CA ConfigMap {namespace}/{name} is missing"},
                        evidence=said + [f"{field} names ConfigMap {namespace}/{name}, which is "
                                         f"not among the ConfigMaps of {namespace} in the input"])
        return
    data = cm.body.get("data") or {}
    if CA_BUNDLE_KEY not in data:
        yield Violation(field="data", subject=cm,
                        values={"problem": f"ConfigMap {namespace}/{name} has no {CA_BUNDLE_KEY}"},
                        evidence=said + [f"{field} names {cm.ref}, which has no key "
                                         f"{CA_BUNDLE_KEY}"])
        return
    problems = bundle_problems(parse_bundle(str(data[CA_BUNDLE_KEY] or "")))
    if problems:
        yield Violation(field=format_path(("data", CA_BUNDLE_KEY)), subject=cm,
                        values={"problem": f"{CA_BUNDLE_KEY} trusts no usable CA"},
                        evidence=said + [f"{field} names {cm.ref}"]
                        + [f"{CA_BUNDLE_KEY}: {p}" for p in problems])


# -- OCM002 ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class KnownProxyCA:
    certificate: Certificate
    source: str  # where the scan learnt it is the proxy's CA


def known_proxy_cas(ctx: Context) -> tuple[list[KnownProxyCA], list[str]]:
    """The proxy CAs the input and the user's config name, and reasons some cannot be read."""
    found: list[KnownProxyCA] = []
    unreadable: list[str] = []
    for path in ctx.config.proxy_ca_files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            unreadable.append(f"proxy_ca_files: cannot read {path}: {exc.strerror or exc}")
            continue
        found += [KnownProxyCA(c, f"proxy_ca_files {path}") for c in parse_bundle(data).certificates]
    for adc in ctx.inventory.of_kind("AddOnDeploymentConfig"):
        proxy = adc.get("spec.proxyConfig") or {}
        if isinstance(proxy, dict) and is_https(proxy.get("httpsProxy")) and proxy.get("caBundle"):
            found += [KnownProxyCA(c, f"{adc.ref} spec.proxyConfig.caBundle")
                      for c in parse_bundle(str(proxy["caBundle"])).certificates]
    for proxy_obj in ctx.inventory.of_kind("Proxy"):
        name = proxy_obj.get("spec.trustedCA.name")
        cm = ctx.inventory.get("ConfigMap", "openshift-config", str(name), proxy_obj.cluster) \
            if name else None
        if cm is not None:
            text = (cm.body.get("data") or {}).get(CA_BUNDLE_KEY)
            found += [KnownProxyCA(c, f"{proxy_obj.ref} trustedCA ({cm.ref})")
                      for c in parse_bundle(text).certificates]
    return found, unreadable


@register
class KubeconfigHasProxyCA(Primitive):
    name = "kubeconfig_has_proxy_ca"
    description = ("a kubeconfig Secret with an https:// proxy-url carries the proxy CA appended "
                   "to the server CA in certificate-authority-data")
    params_schema = {
        "type": "object", "additionalProperties": False,
        "properties": {"key": {"type": "string"}},
    }
    reads = ("AddOnDeploymentConfig", "Proxy", "ConfigMap")

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        key = params.get("key", "kubeconfig")
        parsed = kubeconfig_in_secret(subject, key)
        if isinstance(parsed, str):
            yield NotEvaluable(parsed)
            return
        cluster = current_cluster(parsed) or {}
        proxy_url = cluster.get("proxy-url")
        if not is_https(proxy_url) or cluster.get("insecure-skip-tls-verify") is True:
            return
        bundle = parse_bundle(cluster.get("certificate-authority-data"))
        if not bundle.certificates:
            return  # no CA data, or none readable: PRX012 reports the kubeconfig
        field = ("data." if key in (subject.body.get("data") or {}) else "stringData.") + key
        said = f"proxy-url: {proxy_url}"
        held = "certificate-authority-data holds " + ", ".join(describe(c) for c in bundle.certificates)
        if len(bundle) == 1:
            yield Violation(field=field,
                            values={"problem": "certificate-authority-data holds a single "
                                               "certificate, not the server CA and the proxy CA"},
                            evidence=[said, held])
            return
        known, unreadable = known_proxy_cas(ctx)
        if not known:
            yield NotEvaluable("input the user must supply: proxy_ca_files (the https proxy's CA), "
                               "or an AddOnDeploymentConfig caBundle / Proxy trustedCA in the input"
                               + ("; " + "; ".join(unreadable) if unreadable else ""))
            return
        have = {c.sha256 for c in bundle.certificates}
        if not any(k.certificate.sha256 in have for k in known):
            yield Violation(field=field,
                            values={"problem": "certificate-authority-data does not contain the "
                                               "proxy CA"},
                            evidence=[said, held] + [f"proxy CA {describe(k.certificate)} from "
                                                     f"{k.source}" for k in known])
