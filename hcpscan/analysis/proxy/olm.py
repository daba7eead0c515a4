"""Proxy settings an OLM Subscription gives the operator it installs (``spec.config.env``),
with the cluster Proxy's values OLM adds unless the Subscription overrides them (the
semantics: ``hcpscan.model.olm``).

One consumer per Subscription whose ``spec.config`` sets a proxy variable (in any case):
what the operator's containers read, as the Subscription is the object the user writes.
"""

from __future__ import annotations

from hcpscan.analysis.proxy import containers as ct
from hcpscan.analysis.proxy.settings import OLM_SUBSCRIPTION, ConsumerProxy, Setting, source_of
from hcpscan.analysis.proxy.workloads import effective_settings
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.store import Inventory
from hcpscan.model.olm import INJECTED, OLM_GROUP, SUBSCRIPTION_KIND, overriding

_CONFIG = ("spec", "config")


def subscription_proxies(inventory: Inventory, runtime: str = "go") -> list[ConsumerProxy]:
    out = []
    for obj in inventory.of_kind(SUBSCRIPTION_KIND):
        config = obj.get(_CONFIG)
        if obj.group != OLM_GROUP or not isinstance(config, dict):
            continue
        variables = ct.proxy_variables(ct.container_env(inventory, ct.ContainerRef(obj, _CONFIG, config)))
        if not variables:
            continue
        names = [str(item["name"]) for item in config.get("env") or []
                 if isinstance(item, dict) and item.get("name")]
        notes = []
        overridden = overriding(names)
        if overridden:
            notes.append(f"spec.config.env sets {' and '.join(overridden)}, so OLM gives the "
                         "operator none of the cluster Proxy's HTTP_PROXY, HTTPS_PROXY and "
                         "NO_PROXY: only what the Subscription sets")
        else:
            notes += _inject_cluster_values(inventory, obj, variables)
        http, https, no = effective_settings(variables, runtime)
        out.append(ConsumerProxy(OLM_SUBSCRIPTION, f"{obj.ref} (the operator's env, spec.config.env)",
                                 obj, http_proxy=http, https_proxy=https, no_proxy=no,
                                 variables=variables, runtime=runtime, program="olm-operator",
                                 notes=notes))
    return out


def _inject_cluster_values(inventory: Inventory, obj: K8sObject,
                           variables: dict[str, Setting]) -> list[str]:
    """Add what OLM injects from the cluster Proxy's status (it replaces a same-named
    variable); what to say about it."""
    proxy = inventory.get("Proxy", "", "cluster", obj.cluster)
    status = proxy.get(("status",)) if proxy is not None and proxy.group == "config.openshift.io" \
        else None
    if proxy is None or not isinstance(status, dict):
        return ["OLM also gives the operator the cluster Proxy's status HTTP_PROXY, HTTPS_PROXY "
                "and NO_PROXY where there is one; no Proxy status is in the input"]
    added = []
    for name, field in INJECTED:
        value = status.get(field)
        if isinstance(value, str) and value:
            variables[name] = Setting(name, value, source_of(inventory, proxy, ("status", field)))
            added.append(name)
    return [f"OLM adds {', '.join(added)} from Proxy cluster's status"] if added else []
