"""OCM add-on agents' proxy: AddOnDeploymentConfig ``spec.proxyConfig``, and which of them
each ManagedClusterAddOn gets (DOMAIN.md §5, seed 004).

The add-on manager picks one config of each type (group ``addon.open-cluster-management.io``,
resource exactly ``addondeploymentconfigs``) per add-on of a cluster, first found wins:

1. the ManagedClusterAddOn's own ``spec.configs[]``;
2. the ``configs[]`` of a ``spec.installStrategy.placements[]`` entry of the
   ClusterManagementAddOn of the same name whose Placement selected the cluster (its
   PlacementDecisions' ``status.decisions[].clusterName``);
3. that ClusterManagementAddOn's ``spec.supportedConfigs[].defaultConfig``.

A reference spelled otherwise (``AddonDeploymentConfig``) or written outside ``spec`` is
never read (OCM007/OCM008 report those): the add-on then has no proxy from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.proxy.settings import (
    MANAGED_CLUSTER_ADDON,
    ConsumerProxy,
    Setting,
    Source,
    source_of,
)
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.store import Inventory

ADDON_GROUP = "addon.open-cluster-management.io"
ADDON_CONFIG_RESOURCE = "addondeploymentconfigs"
PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"


@dataclass(frozen=True, slots=True)
class ConfigRef:
    """The AddOnDeploymentConfig an add-on gets, and the field that says so."""

    namespace: str
    name: str
    where: Source
    how: str  # "its own spec.configs", "placement p of ...", "default of ..."


def is_addon_config_ref(ref: Any) -> bool:
    """A config reference the add-on manager reads as an AddOnDeploymentConfig."""
    return (isinstance(ref, dict) and ref.get("resource") == ADDON_CONFIG_RESOURCE
            and ref.get("group", ADDON_GROUP) == ADDON_GROUP)


def addon_consumers(inventory: Inventory, configs: dict[tuple[str, str, str], ConsumerProxy]
                    ) -> list[ConsumerProxy]:
    """One consumer per ManagedClusterAddOn and AddOnDeploymentConfig it gets, delegating
    to that config's consumer in ``configs`` (by cluster, namespace, name)."""
    out = []
    for obj in inventory.of_kind("ManagedClusterAddOn"):
        notes: list[str] = []
        for ref in _refs_for(inventory, obj, notes):
            key = (obj.cluster, ref.namespace, ref.name)
            exists = key in configs or inventory.get("AddOnDeploymentConfig", ref.namespace,
                                                     ref.name, obj.cluster) is not None
            out.append(_addon_consumer(obj, ref, configs.get(key), exists, notes))
    return out


def _refs_for(inventory: Inventory, addon: K8sObject, notes: list[str]) -> list[ConfigRef]:
    """The AddOnDeploymentConfig references that decide ``addon``'s proxy, in the add-on
    manager's order of precedence."""
    own = addon.get("spec.configs")
    found = [ConfigRef(str(r.get("namespace") or addon.namespace), str(r.get("name")),
                       source_of(inventory, addon, ("spec", "configs", i)), "its own spec.configs")
             for i, r in enumerate(own if isinstance(own, list) else []) if is_addon_config_ref(r)]
    if found:
        return found
    cma = inventory.get("ClusterManagementAddOn", "", addon.name, addon.cluster)
    if cma is None:
        return []
    placed = _placement_refs(inventory, cma, addon.namespace, notes)
    return placed or _default_refs(inventory, cma)


def _placement_refs(inventory: Inventory, cma: K8sObject, cluster_name: str,
                    notes: list[str]) -> list[ConfigRef]:
    placements = cma.get("spec.installStrategy.placements")
    for i, placement in enumerate(placements if isinstance(placements, list) else []):
        if not isinstance(placement, dict) or not isinstance(placement.get("configs"), list):
            continue
        name, namespace = str(placement.get("name")), str(placement.get("namespace") or "")
        selected = _selects(inventory, cma.cluster, namespace, name, cluster_name)
        if selected is None:
            notes.append(f"{cma.ref} placement {namespace}/{name} has configs, but no "
                         "PlacementDecision of it is in the input: whether it selects "
                         f"cluster {cluster_name} is not known")
            continue
        if not selected:
            continue
        refs = [ConfigRef(str(r.get("namespace") or ""), str(r.get("name")),
                          source_of(inventory, cma, ("spec", "installStrategy", "placements", i,
                                                     "configs", j)),
                          f"placement {namespace}/{name} of {cma.ref}")
                for j, r in enumerate(placement["configs"]) if is_addon_config_ref(r)]
        if refs:
            return refs
    return []


def _selects(inventory: Inventory, cluster: str, namespace: str, placement: str,
             cluster_name: str) -> bool | None:
    """Whether the PlacementDecisions of a Placement name ``cluster_name`` (None: none in
    the input)."""
    decisions = [d for d in inventory.query("PlacementDecision", namespace=namespace,
                                            cluster=cluster)
                 if d.labels.get(PLACEMENT_LABEL) == placement]
    if not decisions:
        return None
    for decision in decisions:
        entries = decision.get("status.decisions")
        if any(isinstance(e, dict) and e.get("clusterName") == cluster_name
               for e in (entries if isinstance(entries, list) else [])):
            return True
    return False


def _default_refs(inventory: Inventory, cma: K8sObject) -> list[ConfigRef]:
    supported = cma.get("spec.supportedConfigs")
    out = []
    for i, entry in enumerate(supported if isinstance(supported, list) else []):
        default = entry.get("defaultConfig") if is_addon_config_ref(entry) else None
        if isinstance(default, dict) and default.get("name"):
            out.append(ConfigRef(str(default.get("namespace") or ""), str(default["name"]),
                                 source_of(inventory, cma, ("spec", "supportedConfigs", i,
                                                            "defaultConfig")),
                                 f"the default of {cma.ref}"))
    return out


def _addon_consumer(addon: K8sObject, ref: ConfigRef, target: ConsumerProxy | None, exists: bool,
                    notes: list[str]) -> ConsumerProxy:
    consumer = ConsumerProxy(MANAGED_CLUSTER_ADDON, addon.ref, addon, notes=list(notes))
    if ref.how != "its own spec.configs":
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
