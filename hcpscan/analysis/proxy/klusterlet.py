"""Proxy settings of OCM's klusterlet and ACM's add-on agents (DOMAIN.md §5, seed 004).

* ``KlusterletConfig`` (config.open-cluster-management.io, cluster-scoped):
  ``spec.hubKubeAPIServerConfig.proxyURL`` is the one proxy the klusterlet uses for
  every request to the hub, verified with the ConfigMaps its ``trustedCABundles``
  name (keys ``ca-bundle.crt``, ``ca.crt`` or ``tls.crt``) unless
  ``serverVerificationStrategy`` is ``UseSystemTruststore``. The deprecated
  ``spec.hubKubeAPIServerProxyConfig`` (``httpProxy``, ``httpsProxy`` — chosen when
  both are set — and an inline ``caBundle``) is read when ``proxyURL`` is not set.
  It has no noProxy: only the hub connection goes through it.
* ``KlusterletAddonConfig`` (agent.open-cluster-management.io): ``spec.proxyConfig``
  (``httpProxy``, ``httpsProxy``, ``noProxy``) is handed to the add-on agents of the
  cluster as their proxy environment.

Both are read by Go programs (the klusterlet, the add-on agents).
"""

from __future__ import annotations

from typing import Any

from hcpscan.analysis.proxy.pem import parse_bundle
from hcpscan.analysis.proxy.settings import (
    KLUSTERLET_ADDON_CONFIG,
    KLUSTERLET_CONFIG,
    ConsumerProxy,
    Setting,
    read_block,
    setting_text,
    source_of,
)
from hcpscan.inventory.fieldpath import Step
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.store import Inventory

KLUSTERLET_CONFIG_GROUP = "config.open-cluster-management.io"
ADDON_AGENT_GROUP = "agent.open-cluster-management.io"
HUB_CONFIG: tuple[Step, ...] = ("spec", "hubKubeAPIServerConfig")
LEGACY_PROXY: tuple[Step, ...] = ("spec", "hubKubeAPIServerProxyConfig")
CA_KEYS = ("ca-bundle.crt", "ca.crt", "tls.crt")  # what the import controller reads, in order
SYSTEM_TRUSTSTORE = "UseSystemTruststore"


def klusterlet_proxies(inventory: Inventory) -> list[ConsumerProxy]:
    out = []
    for obj in inventory.of_kind("KlusterletConfig"):
        if obj.group != KLUSTERLET_CONFIG_GROUP:
            continue
        consumer = ConsumerProxy(KLUSTERLET_CONFIG, obj.ref, obj, program="klusterlet",
                                 runtime="go")
        if obj.get(HUB_CONFIG + ("proxyURL",)):
            _set(inventory, consumer, HUB_CONFIG + ("proxyURL",), ("http_proxy", "https_proxy"))
            _trusted_bundles(inventory, consumer)
        elif isinstance(obj.get(LEGACY_PROXY), dict):
            _legacy(inventory, consumer)
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


def _legacy(inventory: Inventory, consumer: ConsumerProxy) -> None:
    block: dict[str, Any] = consumer.object.get(LEGACY_PROXY)
    # the klusterlet uses httpsProxy when both are set (OCM KubeAPIServerProxyConfig)
    chosen = "httpsProxy" if block.get("httpsProxy") else "httpProxy" if block.get(
        "httpProxy") else None
    if chosen is None:
        return
    _set(inventory, consumer, LEGACY_PROXY + (chosen,), ("http_proxy", "https_proxy"))
    ca = block.get("caBundle")
    if ca:
        consumer.trusted_ca = Setting("caBundle", str(ca), source_of(
            inventory, consumer.object, LEGACY_PROXY + ("caBundle",)))
        consumer.ca_bundle = parse_bundle(str(ca))


def _trusted_bundles(inventory: Inventory, consumer: ConsumerProxy) -> None:
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
    if first is not None:
        consumer.trusted_ca = Setting("trustedCABundles", "\n".join(pem), first)
        consumer.ca_bundle = parse_bundle("\n".join(pem))


def _bundle_text(inventory: Inventory, obj: K8sObject, ref: dict[str, Any]) -> str | None:
    """The PEM a trustedCABundles entry names ('' when its ConfigMap holds none of the keys
    the klusterlet reads), or None when the ConfigMap is not in the inventory."""
    cm = inventory.get("ConfigMap", str(ref.get("namespace") or ""), str(ref.get("name") or ""),
                       obj.cluster)
    if cm is None:
        return None
    data = cm.body.get("data") or {}
    return next((str(data[k]) for k in CA_KEYS if data.get(k)), "")
