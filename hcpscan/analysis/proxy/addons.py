"""OCM add-on agents' proxy: AddOnDeploymentConfig ``spec.proxyConfig``, and which of them
each ManagedClusterAddOn gets (DOMAIN.md §5, seed 004) — by the add-on manager's precedence,
whose one home is ``model.ocm.applied_addon_configs`` (own configs, then a selecting
placement's, then the ClusterManagementAddOn's default).
"""

from __future__ import annotations

from dataclasses import dataclass

from hcpscan.analysis.proxy.settings import (
    MANAGED_CLUSTER_ADDON,
    ConsumerProxy,
    Setting,
    Source,
    source_of,
)
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.store import Inventory
from hcpscan.model.ocm import OWN_CONFIGS, applied_addon_configs


@dataclass(frozen=True, slots=True)
class ConfigRef:
    """The AddOnDeploymentConfig an add-on gets, and the field that says so."""

    namespace: str
    name: str
    where: Source
    how: str  # "its own spec.configs", "placement p of ...", "default of ..."


def addon_consumers(inventory: Inventory, configs: dict[tuple[str, str, str], ConsumerProxy]
                    ) -> list[ConsumerProxy]:
    """One consumer per ManagedClusterAddOn and AddOnDeploymentConfig it gets, delegating
    to that config's consumer in ``configs`` (by cluster, namespace, name)."""
    out = []
    for obj in inventory.of_kind("ManagedClusterAddOn"):
        notes: list[str] = []
        for applied in applied_addon_configs(inventory, obj, notes):
            ref = ConfigRef(applied.namespace, applied.name,
                            source_of(inventory, applied.holder, applied.steps), applied.how)
            key = (obj.cluster, ref.namespace, ref.name)
            exists = key in configs or inventory.get("AddOnDeploymentConfig", ref.namespace,
                                                     ref.name, obj.cluster) is not None
            out.append(_addon_consumer(obj, ref, configs.get(key), exists, notes))
    return out


def _addon_consumer(addon: K8sObject, ref: ConfigRef, target: ConsumerProxy | None, exists: bool,
                    notes: list[str]) -> ConsumerProxy:
    consumer = ConsumerProxy(MANAGED_CLUSTER_ADDON, addon.ref, addon, notes=list(notes))
    if ref.how != OWN_CONFIGS:
        consumer.notes.append(f"AddOnDeploymentConfig {ref.namespace}/{ref.name} from {ref.how}")
    if target is None and exists:
        consumer.notes.append(f"AddOnDeploymentConfig {ref.namespace}/{ref.name} sets no "
                              "proxyConfig: the add-on's agents get no proxy from it")
        return consumer
    if target is None:
        consumer.notes.append(f"references AddOnDeploymentConfig {ref.namespace}/{ref.name}, "
                              "which is not in the inventory")
        for attr, name in (("http_proxy", "httpProxy"), ("https_proxy", "httpsProxy"),
                           ("no_proxy", "noProxy")):
            setattr(consumer, attr, Setting(name, None, ref.where,
                                            unknown="AddOnDeploymentConfig not in the inventory"))
        return consumer
    consumer.via = target
    for attr in ("http_proxy", "https_proxy", "no_proxy"):
        setting = getattr(target, attr)
        if setting is not None:
            setattr(consumer, attr, Setting(setting.name, setting.value, setting.source,
                                            (ref.where,) + setting.via, setting.unknown))
    consumer.ca_bundle = target.ca_bundle
    return consumer
