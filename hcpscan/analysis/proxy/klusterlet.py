"""Proxy settings of OCM's klusterlet and ACM's add-on agents (DOMAIN.md §5, seed 004).

* ``KlusterletConfig`` (config.open-cluster-management.io, cluster-scoped): the import
  controller writes the klusterlet's bootstrap kubeconfig from it (``hub_proxy`` is that
  computation, the one place it lives). When ``spec.hubKubeAPIServerConfig`` is present
  (even ``{}``), its ``proxyURL`` is the one proxy the klusterlet uses for every request
  to the hub, verified with the ConfigMaps its ``trustedCABundles`` name (keys
  ``ca-bundle.crt``, ``ca.crt`` or ``tls.crt``) unless ``serverVerificationStrategy`` is
  ``UseSystemTruststore``, and the deprecated ``spec.hubKubeAPIServerProxyConfig`` is
  ignored, but for one case: when ``proxyURL`` equals its ``httpsProxy`` (what merging a
  deprecated KlusterletConfig into a new one writes), its ``caBundle`` is added to the
  trustedCABundles (still not with ``UseSystemTruststore``). Without ``proxyURL`` there is
  no proxy at all. Only when
  ``hubKubeAPIServerConfig`` is absent is the deprecated block read: ``httpsProxy`` (chosen
  when both are set) with its CA in the block's own ``caBundle`` (base64 PEM), else
  ``httpProxy`` with no CA. It has no noProxy: only the hub connection goes through it.
* ``KlusterletAddonConfig`` (agent.open-cluster-management.io): ``spec.proxyConfig``
  (``httpProxy``, ``httpsProxy``, ``noProxy``) is handed to the add-on agents of the
  cluster as their proxy environment.

Both are read by Go programs (the klusterlet, the add-on agents).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.proxy.pem import CABundle, parse_bundle
from hcpscan.analysis.proxy.settings import (
    KLUSTERLET_ADDON_CONFIG,
    KLUSTERLET_CONFIG,
    ConsumerProxy,
    Setting,
    read_block,
    setting_text,
    source_of,
)
from hcpscan.inventory.fieldpath import Step, format_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.store import Inventory
from hcpscan.model.kubeconfig import current_cluster, kubeconfig_in_secret
from hcpscan.model.ocm import (
    AGENT_NAMESPACE_PREFIX,
    BOOTSTRAP_HUB_KUBECONFIG,
    HUB_KUBECONFIG_SECRET,
    OWN_NAME_READS,
    klusterlet_configs_of,
    own_managed_names,
)

KLUSTERLET_CONFIG_GROUP = "config.open-cluster-management.io"
ADDON_AGENT_GROUP = "agent.open-cluster-management.io"
HUB_CONFIG: tuple[Step, ...] = ("spec", "hubKubeAPIServerConfig")
LEGACY_PROXY: tuple[Step, ...] = ("spec", "hubKubeAPIServerProxyConfig")
CA_KEYS = ("ca-bundle.crt", "ca.crt", "tls.crt")  # what the import controller reads, in order
SYSTEM_TRUSTSTORE = "UseSystemTruststore"
TRUSTED_BUNDLES = "spec.hubKubeAPIServerConfig.trustedCABundles"
LEGACY_CA = "spec.hubKubeAPIServerProxyConfig.caBundle"


@dataclass(frozen=True, slots=True)
class HubProxy:
    """The proxy and proxy CA a KlusterletConfig gives the klusterlet's hub connection."""

    proxy: tuple[Step, ...] | None  # the field whose URL becomes the kubeconfig's proxy-url
    ca: tuple[Step, ...] | None  # the field holding (or naming) its CA; None: no CA is read
    ca_field: str  # where the proxy's CA must be written for this proxy to be verified
    # deprecated proxy fields written but ignored, the klusterlet then using no proxy at all
    dropped: tuple[tuple[Step, ...], ...] = ()
    # the deprecated caBundle read beside trustedCABundles (proxyURL equal to its httpsProxy)
    also_ca: tuple[Step, ...] | None = None


def hub_proxy(obj: K8sObject) -> HubProxy:
    """The import controller's choice (managedcluster-import-controller GetProxySettings):
    hubKubeAPIServerConfig, when present, wins; the deprecated block is read without it, and
    its caBundle also beside a proxyURL equal to its httpsProxy (two configs merged)."""
    legacy = obj.get(LEGACY_PROXY)
    legacy = legacy if isinstance(legacy, dict) else {}
    if isinstance(obj.get(HUB_CONFIG), dict):
        url = obj.get(HUB_CONFIG + ("proxyURL",))
        if url:
            merged = url == legacy.get("httpsProxy") and legacy.get("caBundle")
            return HubProxy(HUB_CONFIG + ("proxyURL",), HUB_CONFIG + ("trustedCABundles",),
                            TRUSTED_BUNDLES,
                            also_ca=LEGACY_PROXY + ("caBundle",) if merged else None)
        return HubProxy(None, None, "", tuple(
            LEGACY_PROXY + (k,) for k in ("httpsProxy", "httpProxy") if legacy.get(k)))
    if legacy.get("httpsProxy"):
        return HubProxy(LEGACY_PROXY + ("httpsProxy",), LEGACY_PROXY + ("caBundle",),
                        LEGACY_CA)
    if legacy.get("httpProxy"):  # its CA is never read: caBundle goes with httpsProxy only
        return HubProxy(LEGACY_PROXY + ("httpProxy",), None,
                        f"{LEGACY_CA} beside an httpsProxy (caBundle is read only with it)")
    return HubProxy(None, None, "")


def merged_hub_proxy(configs: list[K8sObject]) -> tuple[K8sObject, tuple[Step, ...]] | None:
    """The KlusterletConfig and field whose URL is the hub proxy when the import controller
    merges ``configs`` (the bound one first, then ``global``; stolostron cluster-lifecycle-api
    helpers/klusterletconfig MergeKlusterletConfigs, global the base):
    hubKubeAPIServerConfig merged field by field (the bound one's proxyURL, else global's),
    the deprecated block taken whole from the bound one when it sets any field, else from
    global; then ``hub_proxy``'s choice on the result."""
    hub = [c for c in configs if isinstance(c.get(HUB_CONFIG), dict)]
    if hub:
        chosen = next((c for c in hub if c.get(HUB_CONFIG + ("proxyURL",))), None)
        return (chosen, HUB_CONFIG + ("proxyURL",)) if chosen is not None else None
    for config in configs:
        legacy = config.get(LEGACY_PROXY)
        if isinstance(legacy, dict) and any(legacy.values()):
            steps = hub_proxy(config).proxy
            return (config, steps) if steps is not None else None
    return None


def klusterlet_proxies(inventory: Inventory) -> list[ConsumerProxy]:
    out = []
    for obj in inventory.of_kind("KlusterletConfig"):
        if obj.group != KLUSTERLET_CONFIG_GROUP:
            continue
        consumer = ConsumerProxy(KLUSTERLET_CONFIG, obj.ref, obj, program="klusterlet",
                                 runtime="go")
        hub = hub_proxy(obj)
        consumer.ca_field = hub.ca_field
        if hub.proxy is not None:
            _set(inventory, consumer, hub.proxy, ("http_proxy", "https_proxy"))
        if hub.ca == HUB_CONFIG + ("trustedCABundles",):
            _trusted_bundles(inventory, consumer, hub.also_ca)
        elif hub.ca is not None and obj.get(hub.ca):
            consumer.trusted_ca = Setting("caBundle", str(obj.get(hub.ca)),
                                          source_of(inventory, obj, hub.ca))
            consumer.ca_bundle = parse_bundle(str(obj.get(hub.ca)))
        for steps in hub.dropped:  # kept as written (credentials, syntax), never effective
            _set(inventory, consumer, steps, ())
        consumer.dropped = tuple(consumer.variables[str(s[-1])] for s in hub.dropped)
        if consumer.variables:
            out.append(consumer)
    for obj in inventory.of_kind("KlusterletAddonConfig"):
        block = obj.get("spec.proxyConfig") if obj.group == ADDON_AGENT_GROUP else None
        if not isinstance(block, dict):
            continue
        consumer = ConsumerProxy(KLUSTERLET_ADDON_CONFIG, obj.ref, obj,
                                 program="ocm-addon-agent", runtime="go")
        read_block(inventory, obj, ("spec", "proxyConfig"), consumer)
        if consumer.variables:
            out.append(consumer)
    return out


def _set(inventory: Inventory, consumer: ConsumerProxy, steps: tuple[Step, ...],
         attrs: tuple[str, ...]) -> None:
    consumer.record(Setting(str(steps[-1]), setting_text(consumer.object.get(steps)),
                            source_of(inventory, consumer.object, steps)), *attrs)


def _trusted_bundles(inventory: Inventory, consumer: ConsumerProxy,
                     also_ca: tuple[Step, ...] | None = None) -> None:
    obj = consumer.object
    strategy = obj.get(HUB_CONFIG + ("serverVerificationStrategy",))
    if strategy == SYSTEM_TRUSTSTORE:
        consumer.trusted_ca = Setting(
            "serverVerificationStrategy", None,
            source_of(inventory, obj, HUB_CONFIG + ("serverVerificationStrategy",)),
            unknown=f"{SYSTEM_TRUSTSTORE}: the managed cluster's system trust store, which no "
                    "manifest holds, decides")
        return
    bundles = obj.get(HUB_CONFIG + ("trustedCABundles",))
    pem: list[str] = []
    first = None
    for i, item in enumerate(bundles if isinstance(bundles, list) else []):
        ref = item.get("caBundle") if isinstance(item, dict) else None
        if not isinstance(ref, dict):
            continue
        where = source_of(inventory, obj, HUB_CONFIG + ("trustedCABundles", i, "caBundle"))
        first = first or where
        found = _bundle_text(inventory, obj, ref)
        if found is None:
            consumer.trusted_ca = Setting(
                "trustedCABundles", None, where,
                unknown=f"ConfigMap {ref.get('namespace')}/{ref.get('name')} is not in the "
                        "inventory")
            return
        pem.append(found)
    bundle = parse_bundle("\n".join(pem)) if first is not None else None
    if also_ca is not None:  # the deprecated caBundle, merged in by the import controller
        legacy = parse_bundle(str(obj.get(also_ca)))
        if bundle is None:
            first = source_of(inventory, obj, also_ca)
            bundle = legacy
        else:
            bundle = CABundle(bundle.certificates + legacy.certificates,
                              bundle.problems + legacy.problems)
        pem.append(str(obj.get(also_ca)))
    if first is not None and bundle is not None:
        consumer.trusted_ca = Setting("trustedCABundles" if len(pem) > 1 or also_ca is None
                                      else "caBundle", "\n".join(pem), first)
        consumer.ca_bundle = bundle


def _bundle_text(inventory: Inventory, obj: K8sObject, ref: dict[str, Any]) -> str | None:
    """The PEM a trustedCABundles entry names ('' when its ConfigMap holds none of the keys
    the klusterlet reads), or None when the ConfigMap is not in the inventory."""
    cm = inventory.get("ConfigMap", str(ref.get("namespace") or ""), str(ref.get("name") or ""),
                       obj.cluster)
    if cm is None:
        return None
    data = cm.body.get("data") or {}
    return next((str(data[k]) for k in CA_KEYS if data.get(k)), "")


# -- does the klusterlet of a managed cluster reach the hub through a proxy ----------------

# the kinds ``klusterlet_hub_proxy_of`` reads
KLUSTERLET_PROXY_READS = ("ManagedCluster", "KlusterletConfig", *OWN_NAME_READS)


@dataclass(frozen=True, slots=True)
class KlusterletHubProxy:
    """The proxy a managed cluster's klusterlet reaches the hub through, and where it is set."""

    url: str
    where: str  # "KlusterletConfig http-proxy spec.hubKubeAPIServerConfig.proxyURL"
    at: str  # file:line


def klusterlet_hub_proxy_of(inventory: Inventory, cluster_name: str, cluster: str
                            ) -> KlusterletHubProxy | None:
    """The hub proxy of managed cluster ``cluster_name``'s klusterlet, as the hub ``cluster``
    gives it (``merged_hub_proxy`` of the KlusterletConfig bound to its ManagedCluster and
    ``global``), else as the input shows it when the input is that managed cluster
    (``proxy-url`` of the current cluster of ``hub-kubeconfig-secret`` or
    ``bootstrap-hub-kubeconfig`` in an agent namespace). None: no proxy is known."""
    configs = [c for c in klusterlet_configs_of(inventory, cluster_name, cluster)
               if c.group == KLUSTERLET_CONFIG_GROUP]
    found = merged_hub_proxy(configs)
    if found is not None:
        config, steps = found
        loc = inventory.locate(config, steps)
        return KlusterletHubProxy(setting_text(config.get(steps)),
                                  f"{config.ref} {format_path(steps)}", f"{loc.path}:{loc.line}")
    own = {o.cluster for o in own_managed_names(inventory) if o.name == cluster_name}
    for secret in inventory.of_kind("Secret"):
        if secret.cluster not in own or secret.name not in (HUB_KUBECONFIG_SECRET,
                                                            BOOTSTRAP_HUB_KUBECONFIG) \
                or not secret.namespace.startswith(AGENT_NAMESPACE_PREFIX):
            continue
        kubeconfig = kubeconfig_in_secret(secret, "kubeconfig")
        entry = current_cluster(kubeconfig) if isinstance(kubeconfig, dict) else None
        url = entry.get("proxy-url") if isinstance(entry, dict) else None
        if isinstance(url, str) and url.strip():
            held = "stringData" if isinstance(secret.get("stringData.kubeconfig"), str) \
                else "data"
            loc = inventory.locate(secret, (held, "kubeconfig"))
            return KlusterletHubProxy(url.strip(), f"{secret.ref} key kubeconfig proxy-url",
                                      f"{loc.path}:{loc.line}")
    return None
