"""Where an https proxy's clients find the CA they verify it with, and what that CA holds.

Each API keeps it its own way (DOMAIN.md §4, §5): the cluster ``Proxy`` and a
HostedCluster's ``configuration.proxy`` name a ConfigMap (``trustedCA.name``, key
``ca-bundle.crt``; in ``openshift-config``, resp. the HostedCluster's namespace);
an AddOnDeploymentConfig holds base64 PEM in ``proxyConfig.caBundle``; a
kubeconfig cluster holds it in ``certificate-authority-data`` (or names a file in
``certificate-authority``, which no manifest carries). ``resolve_ca`` follows that
to a typed answer, and ``known_proxy_cas`` gathers the proxy CAs the input and the
user's config name, so a bundle can be checked to *contain* the proxy's CA.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hcpscan.analysis.proxy.pem import CABundle, Certificate, parse_bundle, parse_bytes_field
from hcpscan.analysis.proxy.settings import (
    ADDON_CONFIG,
    CLUSTER_PROXY,
    HOSTED_CLUSTER,
    INSTALL_CONFIG,
    KLUSTERLET_CONFIG,
    KUBECONFIG,
    ConsumerProxy,
    Setting,
)
from hcpscan.inventory.fieldpath import Step
from hcpscan.inventory.objects import K8sObject, anonymized_keys
from hcpscan.inventory.store import Inventory

CA_BUNDLE_KEY = "ca-bundle.crt"
_URLS = ("httpProxy", "httpsProxy", "proxy-url")


@dataclass(frozen=True, slots=True)
class CAPlace:
    """How one API keeps its proxy CA, relative to the block holding the proxy URLs."""

    key: tuple[Step, ...]  # the field naming a ConfigMap, or holding (base64) PEM
    configmap_namespace: str | None = None  # a ConfigMap reference; "" = the object's namespace
    file_key: str = ""  # a field naming a CA file instead (not in any manifest)
    insecure_key: str = ""  # a field that, when true, skips verification


CA_PLACES = {
    CLUSTER_PROXY: CAPlace(("trustedCA", "name"), configmap_namespace="openshift-config"),
    HOSTED_CLUSTER: CAPlace(("trustedCA", "name"), configmap_namespace=""),
    ADDON_CONFIG: CAPlace(("caBundle",)),
    KUBECONFIG: CAPlace(("certificate-authority-data",), file_key="certificate-authority",
                        insecure_key="insecure-skip-tls-verify"),
}

# Consumers whose CA the proxy model resolves as it reads them, and the field that names it.
MODEL_RESOLVED = {KLUSTERLET_CONFIG: "trustedCABundles", INSTALL_CONFIG: "additionalTrustBundle"}

# CA.state values
ABSENT, UNRESOLVED, NO_KEY, NOT_COLLECTED, FILE, INSECURE, FOUND, UNKNOWN = (
    "absent", "unresolved", "no-key", "not-collected", "file", "insecure", "found", "unknown")


@dataclass(frozen=True, slots=True)
class CA:
    """The CA a consumer's clients verify its https proxy with."""

    state: str
    urls: tuple[Setting, ...]  # the https:// proxy URLs it is for
    field: tuple[Step, ...]  # in the consumer's object: where the CA (or its reference) is
    holder: K8sObject  # the object holding the bundle (a ConfigMap, or the consumer's)
    bundle_field: tuple[Step, ...] = ()
    bundle: CABundle | None = None
    detail: str = ""  # the ConfigMap or file named


# The bundle the cluster-network-operator writes itself: a Proxy's trustedCA of this name is
# read from openshift-config-managed, any other from openshift-config (validateConfigMapRef).
OPERATOR_BUNDLE, OPERATOR_BUNDLE_NAMESPACE = "trusted-ca-bundle", "openshift-config-managed"


def trusted_ca_namespace(kind: str, name: str, obj: K8sObject) -> str | None:
    """The namespace a ``kind`` consumer's CA ConfigMap ``name`` is read from (None: its API
    names no ConfigMap)."""
    place = CA_PLACES.get(kind)
    if place is None or place.configmap_namespace is None:
        return None
    if kind == CLUSTER_PROXY and name == OPERATOR_BUNDLE:
        return OPERATOR_BUNDLE_NAMESPACE
    return place.configmap_namespace or obj.namespace


def validated_ca(inventory: Inventory, consumer: ConsumerProxy) -> CA | None:
    """The trusted CA an operator validates whatever the proxy's scheme, when no https://
    URL made it ``resolve_ca``'s: the cluster-network-operator reads the ConfigMap a Proxy
    spec's ``trustedCA`` names (``validateTrustedCA``: it must exist, hold ``ca-bundle.crt``
    and a readable certificate) for an http:// proxy and for no proxy at all, and on failure
    rejects the whole Proxy."""
    if consumer.kind != CLUSTER_PROXY or consumer.part == "status":
        return None
    field: tuple[Step, ...] = ("spec", "trustedCA", "name")
    name = consumer.object.get(field)
    if not isinstance(name, str) or not name:
        return None
    return _configmap_ca(inventory, consumer.kind, consumer.object, proxy_urls(consumer, False),
                         field, name)


def namesakes(inventory: Inventory, ca: CA, obj: K8sObject) -> list[K8sObject]:
    """ConfigMaps named as the one ``ca`` names but in another namespace: where a user who
    created it in the wrong namespace left it."""
    namespace, _, name = ca.detail.partition("/")
    return [cm for cm in inventory.query("ConfigMap", name=name, cluster=obj.cluster)
            if cm.namespace != namespace]


def proxy_urls(consumer: ConsumerProxy, https_only: bool = True) -> tuple[Setting, ...]:
    return tuple(s for name in _URLS if (s := consumer.variables.get(name)) is not None
                 and (s.value or "").strip().lower().startswith("https://" if https_only else ""))


def resolve_ca(inventory: Inventory, consumer: ConsumerProxy, https_only: bool = True) -> CA | None:
    """The CA for the consumer's https proxy (any proxy unless ``https_only``); None when it
    has none or its API keeps no CA."""
    place = CA_PLACES.get(consumer.kind)
    urls = tuple(s for s in proxy_urls(consumer, https_only) if (s.value or "").strip())
    if consumer.kind in MODEL_RESOLVED:
        return _model_ca(consumer, https_only)
    if place is None or not urls or consumer.part == "status" or not urls[0].source.steps:
        return None
    obj = consumer.object
    block = urls[0].source.steps[:-1]
    field = block + place.key
    if place.insecure_key and obj.get(block + (place.insecure_key,)) is True:
        return CA(INSECURE, urls, field, obj)
    value = obj.get(field)
    if not value:
        named = obj.get(block + (place.file_key,)) if place.file_key else None
        if named:
            return CA(FILE, urls, block + (place.file_key,), obj, detail=str(named))
        return CA(ABSENT, urls, field, obj)
    if place.configmap_namespace is None:  # a Go []byte field: base64 of PEM
        return CA(FOUND, urls, field, obj, field, parse_bytes_field(str(value)))
    return _configmap_ca(inventory, consumer.kind, consumer.object, urls, field, str(value))


def _configmap_ca(inventory: Inventory, kind: str, obj: K8sObject, urls: tuple[Setting, ...],
                  field: tuple[Step, ...], value: str) -> CA:
    """The CA in the ConfigMap ``value`` that ``field`` of a ``kind`` consumer's ``obj`` names."""
    namespace = trusted_ca_namespace(kind, value, obj) or ""
    cm = inventory.get("ConfigMap", namespace, value, obj.cluster)
    detail = f"{namespace}/{value}"
    if cm is None:
        collected = bool(inventory.query("ConfigMap", namespace=namespace, cluster=obj.cluster))
        return CA(UNRESOLVED if collected else NOT_COLLECTED, urls, field, obj, detail=detail)
    data = cm.body.get("data") or {}
    if CA_BUNDLE_KEY not in data:
        return CA(NO_KEY, urls, field, cm, ("data",), detail=detail)
    if CA_BUNDLE_KEY in anonymized_keys(cm):
        return CA(UNKNOWN, urls, field, cm, detail=f"ConfigMap {detail} key {CA_BUNDLE_KEY} is "
                                                   "in the input with its certificates anonymized "
                                                   "(an Insights archive)")
    return CA(FOUND, urls, field, cm, ("data", CA_BUNDLE_KEY), parse_bundle(str(data[CA_BUNDLE_KEY] or "")),
              detail=detail)


def _model_ca(consumer: ConsumerProxy, https_only: bool) -> CA | None:
    """The CA the proxy model found for a consumer it resolves itself."""
    urls = tuple({id(s): s for s in (consumer.https_proxy, consumer.http_proxy)
                  if s is not None and (s.value or "").strip().lower().startswith(
                      "https://" if https_only else "")}.values())  # one Setting may be both
    if not urls:
        return None
    obj, ca = consumer.object, consumer.trusted_ca
    if ca is None:  # reported at the proxy URL: the CA field is not written at all
        return CA(ABSENT, urls, urls[0].source.steps, obj,
                  detail=consumer.ca_field or MODEL_RESOLVED[consumer.kind])
    holder = ca.source.holder or obj
    if not ca.known:
        return CA(UNKNOWN, urls, ca.source.steps, holder, detail=ca.unknown)
    return CA(FOUND, urls, ca.source.steps, holder, ca.source.steps, consumer.ca_bundle
              or parse_bundle(ca.value or ""))


def bundle_problems(bundle: CABundle) -> list[str]:
    """Why a CA bundle cannot make a client trust anything (or trusts less than written)."""
    problems = [p.message for p in bundle.problems]
    if bundle.certificates and len(bundle.expired()) == len(bundle):
        problems.append("every certificate has expired: " + ", ".join(
            f"{describe(c)} not after {c.not_after:%Y-%m-%d}" for c in bundle.certificates))
    return problems


def describe(cert: Certificate) -> str:
    return f"{cert.common_name or cert.subject} (sha256 {cert.sha256[:16]}…)"


@dataclass(frozen=True, slots=True)
class KnownProxyCA:
    certificate: Certificate
    source: str  # where the scan learnt it is the proxy's CA


def known_proxy_cas(inventory: Inventory, consumers: list[ConsumerProxy], ca_files: list[Path]
                    ) -> tuple[list[KnownProxyCA], list[str]]:
    """The proxy CAs the user's config names (``inputs.proxy_ca_files``) and the input
    states: the CA an AddOnDeploymentConfig or a cluster Proxy gives its https proxy. And
    why some cannot be read."""
    found: list[KnownProxyCA] = []
    unreadable: list[str] = []
    for path in ca_files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            unreadable.append(f"proxy_ca_files: cannot read {path}: {exc.strerror or exc}")
            continue
        found += [KnownProxyCA(c, f"proxy_ca_files {path}") for c in parse_bundle(data).certificates]
    for consumer in consumers:
        if consumer.kind not in (ADDON_CONFIG, CLUSTER_PROXY):
            continue
        # a cluster Proxy's trustedCA also serves an http proxy that intercepts TLS
        ca = resolve_ca(inventory, consumer, https_only=consumer.kind == ADDON_CONFIG)
        if ca is not None and ca.state == FOUND and ca.bundle is not None:
            where = f"{consumer.object.ref} " + ".".join(map(str, ca.field))
            if ca.holder is not consumer.object:
                where += f" ({ca.holder.ref})"
            found += [KnownProxyCA(c, where) for c in ca.bundle.certificates]
    return found, unreadable
