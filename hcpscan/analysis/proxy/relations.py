"""Which proxy settings a consumer must agree with: the domain's pairings between objects.

A control-plane workload answers to the HostedCluster whose HCP namespace it is in; a
Cluster API bootstrap config to its cluster's ``<cluster>-cluster-values`` (or, without
it, to what the input states about that cluster); an OCM agent to its managed cluster's
Proxy and agents. Each function returns a ``Related``: the consumers of the proxy model
that answer, in order of authority, or why nothing does. Templates (``agreement``) only
compare; they reach these through the rule context (``ctx.relations``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hcpscan.analysis.proxy.index import ProxyConsumers
from hcpscan.analysis.proxy.settings import (
    CHART_VALUES,
    CLUSTER_PROXY,
    CLUSTER_VALUES,
    CONTAINER,
    HOSTED_CLUSTER,
    INFRASTRUCTURE_CLUSTER,
    KUBEADM_FILE,
    ConsumerProxy,
    meant_proxy,
)
from hcpscan.core.yamldocs import YamlSyntaxError, load_one
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.secrets import secret_values
from hcpscan.inventory.store import Inventory
from hcpscan.model.capi import CAPI_NAME_LABEL, GS_CLUSTER_LABEL, VALUES_SUFFIX, capi_cluster_of
from hcpscan.model.hostedcluster import (
    HOSTED_KINDS,
    HostedCluster,
    hosted_cluster,
    hosted_cluster_for_namespace,
)
from hcpscan.model.ocm import agent_workloads


@dataclass(slots=True)
class Related:
    """The consumers a relation names (first = most authoritative), or why none can be said."""

    consumers: list[ConsumerProxy] = field(default_factory=list)
    holder: K8sObject | None = None  # the object that answers when it sets nothing
    name: str = ""  # how the one answer is named ("HostedCluster ns/n spec..."; '': each its own)
    empty: str = ""  # how the answer is named when no consumer sets anything
    unknown: str = ""  # why the input cannot tell
    hosted: HostedCluster | None = None  # hosted-cluster: its model (computed noProxy ...)
    cluster: str = ""  # cluster-values: the Cluster API cluster's name
    how: str = ""  # cluster-values: how the cluster was found
    stated: bool = False  # cluster-values: stated by other objects than the values Secret
    evidence: list[str] = field(default_factory=list)
    uses_proxy: bool | None = None  # installation: a statement without values


class Relations:
    """The relations of one scan, over its inventory and proxy consumers."""

    def __init__(self, inventory: Inventory, proxy: ProxyConsumers) -> None:
        self.inventory = inventory
        self.proxy = proxy
        self._per_cluster: dict[str, Related] = {}
        self._installation: Related | None = None

    def hosted_cluster(self, subject: K8sObject, obj: K8sObject) -> Related:
        """The HostedCluster whose HCP namespace holds ``obj`` (a HostedCluster subject is
        its own): its ``spec.configuration.proxy``."""
        if subject.kind in HOSTED_KINDS:
            model = hosted_cluster(subject)
        else:
            found = hosted_cluster_for_namespace(self.inventory, obj.namespace, obj.cluster)
            if found is None:
                return Related(unknown=f"no HostedCluster (or HostedControlPlane) whose HCP "
                                       f"namespace is {obj.namespace} is in the input: nothing "
                                       "to compare with")
            model = found
        hc = model.obj
        proxy = [c for c in self.proxy.of(hc) if c.kind == HOSTED_CLUSTER][:1]
        return Related(proxy, hc, f"{hc.ref} spec.configuration.proxy", hosted=model,
                       evidence=[f"HCP namespace {model.control_plane_namespace}"])

    def management_proxy(self, found: tuple[K8sObject, str, Any] | None) -> Related:
        """The management cluster's Proxy ``cluster`` block that counts (status or spec)."""
        if found is None:
            return Related(unknown="the management cluster Proxy 'cluster' (config.openshift.io/v1) "
                                   "is not in the input")
        obj, part, _block = found
        proxy = [c for c in self.proxy.of(obj) if c.kind == CLUSTER_PROXY and c.part == part][:1]
        return Related(proxy, obj, f"{obj.ref} {part}")

    def cluster_values(self, obj: K8sObject) -> Related:
        """A Cluster API bootstrap config's ``<cluster>-cluster-values`` Secret, or what the
        input states about its cluster without it."""
        found = capi_cluster_of(self.inventory, obj)
        if found is None:
            return Related(unknown=f"no {CAPI_NAME_LABEL} label and no <cluster>{VALUES_SUFFIX} "
                                   f"Secret in {obj.namespace} whose name prefixes {obj.name}")
        cluster, how = found
        secret = self.inventory.get("Secret", obj.namespace, cluster + VALUES_SUFFIX, obj.cluster)
        if secret is None:
            return self._stated_proxy(obj, cluster, how)
        value = secret_values(secret).get("values")
        why = ("has no key 'values'" if value is None else
               "key 'values' is redacted in this dump" if value.redacted else "")
        if not why:
            try:
                load_one(value.text or "") if value is not None else None
            except YamlSyntaxError as exc:
                why = f"key 'values' is not valid YAML: {exc.message}"
        if why:
            return Related(unknown=f"{secret.ref} {why}")
        values = [c for c in self.proxy.of(secret) if c.kind == CLUSTER_VALUES][:1]
        return Related(values, secret, f"{secret.ref} key values", cluster=cluster, how=how)

    def _stated_proxy(self, obj: K8sObject, cluster: str, how: str) -> Related:
        """Without the ``<cluster>-cluster-values`` Secret (a GitOps tree never holds it):
        the chart values of the cluster's releases, then every proxy file its bootstrap
        configs write (a drop-in, /etc/environment: CAPV, CAPZ, BYOH, azimuth)."""
        values = [c for c in self.proxy.all if c.kind == CHART_VALUES and c.cluster == obj.cluster
                  and cluster in c.workload_clusters]
        files = [c for c in self.proxy.all if (c.kind == KUBEADM_FILE or (
                     c.kind == INFRASTRUCTURE_CLUSTER and c.object.kind == "VCDCluster"))
                 and c.cluster == obj.cluster
                 and c.object.namespace == obj.namespace
                 and (capi_cluster_of(self.inventory, c.object) or ("",))[0] == cluster
                 and (any(s is not None and s.known and (s.value or "").strip()
                          for s in (c.http_proxy, c.https_proxy)) or meant_proxy(c))]
        if not values and not files:
            return Related(unknown=(
                f"nothing in the input says whether cluster {cluster} uses a proxy: include Secret "
                f"{obj.namespace}/{cluster}{VALUES_SUFFIX}, the chart values of its cluster release "
                f"(App or HelmRelease named {cluster} or labelled {GS_CLUSTER_LABEL}={cluster}: "
                "global.connectivity.proxy), or its bootstrap configs' proxy files (a systemd "
                "drop-in or /etc/environment)"))
        return Related(values + files, cluster=cluster, how=how, stated=True)

    def managed_cluster(self, cluster: str) -> Related:
        """The managed cluster's proxy: its Proxy ``cluster`` spec, then the env of its OCM
        agent workloads (built once per cluster)."""
        if cluster not in self._per_cluster:
            self._per_cluster[cluster] = self._managed_cluster_of(cluster)
        return self._per_cluster[cluster]

    def _managed_cluster_of(self, cluster: str) -> Related:
        proxies = [c for c in self.proxy.all if c.cluster == cluster and c.kind == CLUSTER_PROXY
                   and c.part == "spec"]
        agents = {id(o): o for o in agent_workloads(self.inventory, cluster)}
        if not proxies and not agents:
            return Related(unknown="nothing in the input says whether the managed cluster uses a "
                                   "proxy: include its config.openshift.io Proxy 'cluster' or the "
                                   "klusterlet agent Deployments")
        found = proxies + [c for c in self.proxy.all if c.kind == CONTAINER and id(c.object) in agents]
        said = ([f"OCM agent workloads {', '.join(sorted(o.ref for o in agents.values()))}"]
                if agents else [])
        return Related(found, empty="the managed cluster's agents", evidence=said)

    def installation(self, policies: Callable[[], list[tuple[K8sObject, str, list[str]]]]
                     ) -> Related:
        """Whether the installation uses a proxy: any ``<cluster>-cluster-values``, a Proxy,
        or a Kyverno policy injecting proxy env (``policies``; built once per scan)."""
        if self._installation is None:
            self._installation = self._installation_of(policies())
        return self._installation

    def _installation_of(self, policies: list[tuple[K8sObject, str, list[str]]]) -> Related:
        known = any(o.name.endswith(VALUES_SUFFIX)
                    for o in self.inventory.of_kind("Secret", "ConfigMap"))
        said: list[str] = []
        for c in self.proxy.all:
            if c.kind == CLUSTER_PROXY and c.part == "spec":
                known = True
            if c.kind not in (CLUSTER_VALUES, CLUSTER_PROXY):
                continue
            setting = next((s for s in (c.https_proxy, c.http_proxy) if s is not None and s.value
                            and s.value.strip()), None)
            if setting is not None:
                said.append(f"{c.name} sets {setting.name}={setting.value or ''}")  # masked in reports
        for policy, where, variables in policies:
            known = True
            said.append(f"{policy.ref} {where} injects {', '.join(variables)}")
        if not known:
            return Related(unknown="nothing in the input says whether the installation uses a "
                                   "proxy: include the <cluster>-cluster-values Secret, the Proxy "
                                   "object or the Kyverno proxy policy")
        return Related(name="the installation", uses_proxy=bool(said), evidence=said[:3])
