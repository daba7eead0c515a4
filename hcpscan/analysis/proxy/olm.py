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
from hcpscan.model.clusters import openshift_computed_no_proxy, openshift_networks
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
    if proxy is not None and not isinstance(status, dict) and isinstance(proxy.get(("spec",)), dict):
        return _inject_from_spec(inventory, proxy, variables)
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


def _inject_from_spec(inventory: Inventory, proxy: K8sObject, variables: dict[str, Setting]
                      ) -> list[str]:
    """A Proxy with a spec and no status in the input: the network operator writes the status
    from the spec (httpProxy and httpsProxy as written, noProxy computed), and OLM injects
    that status. The computed noProxy where the input gives what the operator reads
    (hcpscan.model.clusters), else an unknown NO_PROXY (read before no_proxy by Go)."""
    spec = proxy.get(("spec",))
    if not isinstance(spec, dict) or not (spec.get("httpProxy") or spec.get("httpsProxy")):
        return []  # the status would set none of the three: OLM injects nothing
    added = []
    for name, field in INJECTED[:2]:
        value = spec.get(field)
        if isinstance(value, str) and value:
            variables[name] = Setting(name, value, source_of(inventory, proxy, ("spec", field)))
            added.append(name)
    computed, where, why = openshift_computed_no_proxy(
        inventory, proxy.cluster, spec, openshift_networks(inventory, proxy.cluster))
    at = source_of(inventory, proxy, ("spec", "noProxy") if "noProxy" in spec else ("spec",))
    if computed:
        variables["NO_PROXY"] = Setting("NO_PROXY", computed, at)
        return [f"OLM adds {', '.join(added)} and NO_PROXY from Proxy cluster's status, which "
                "the input lacks: the network operator writes it from the spec (noProxy "
                f"computed {computed!r} from {where})"]
    variables["NO_PROXY"] = Setting(
        "NO_PROXY", None, at,
        unknown=f"OLM injects NO_PROXY from {proxy.ref}'s status, which the input lacks and "
                f"hcpscan cannot compute from the spec ({why}); Go reads NO_PROXY before "
                "no_proxy")
    return [f"OLM adds {', '.join(added + ['NO_PROXY'])} from Proxy cluster's status, which the "
            "input lacks (the network operator writes it from the spec)"]
