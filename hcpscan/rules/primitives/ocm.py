"""Primitives for OCM agents behind a proxy: the klusterlet's hub kubeconfig (OCM001) and the
add-on agents' AddOnDeploymentConfig noProxy (OCM004).

Whether a managed cluster *uses* a proxy is read from its ``config.openshift.io``
Proxy and from the proxy env of the OCM agent Deployments
(``open-cluster-management*`` / ``klusterlet*`` namespaces). When the input holds
neither, the answer is unknown and the rules say so instead of passing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hcpscan.analysis.proxy import bypasses, effective_proxies
from hcpscan.analysis.proxy.settings import CLUSTER_PROXY, CONTAINER, ConsumerProxy, Setting
from hcpscan.findings.redact import mask_credentials
from hcpscan.inventory.objects import K8sObject
from hcpscan.rules.context import Context
from hcpscan.rules.primitives import register
from hcpscan.rules.primitives.base import NotEvaluable, Outcome, Primitive, Violation
from hcpscan.rules.primitives.kubeconfigs import current_cluster, kubeconfig_in_secret

AGENT_NAMESPACES = ("open-cluster-management", "klusterlet")
WORKLOAD_KINDS = ("Deployment", "DaemonSet", "StatefulSet")


@dataclass(slots=True)
class ManagedClusterProxy:
    """What the input says about a managed cluster's proxy for one target URL."""

    known: bool = False  # the input says something (a Proxy object or agent Deployments)
    proxy: Setting | None = None  # the proxy the target goes through, None = direct
    no_proxy: Setting | None = None
    said_by: list[str] = field(default_factory=list)  # what the answer rests on


def _is_agent_namespace(namespace: str) -> bool:
    return namespace.startswith(AGENT_NAMESPACES)


def _proxy_for(consumer: ConsumerProxy, scheme: str) -> Setting | None:
    setting = consumer.https_proxy if scheme == "https" else consumer.http_proxy
    if setting is None or (setting.known and not (setting.value or "").strip()):
        return None
    return setting


def managed_cluster_proxy(ctx: Context, cluster: str, target: str) -> ManagedClusterProxy:
    """The proxy a managed cluster's agents use for ``target`` (a URL), from the input."""
    scheme = "https" if target.lower().startswith("https://") else "http"
    answer = ManagedClusterProxy()
    consumers = [c for c in ctx.analysis("proxy", effective_proxies) if c.cluster == cluster]
    for consumer in consumers:
        if consumer.kind == CLUSTER_PROXY and consumer.part == "spec":
            answer.known = True
            _consider(answer, consumer, scheme, target)
    agents = [o for o in ctx.inventory.of_kind(*WORKLOAD_KINDS)
              if o.cluster == cluster and _is_agent_namespace(o.namespace)]
    if agents:
        answer.known = True
        answer.said_by.append("OCM agent workloads " + ", ".join(sorted(o.ref for o in agents)))
        for consumer in consumers:
            if consumer.kind == CONTAINER and consumer.object in agents:
                _consider(answer, consumer, scheme, target)
    return answer


def _consider(answer: ManagedClusterProxy, consumer: ConsumerProxy, scheme: str,
              target: str) -> None:
    proxy = _proxy_for(consumer, scheme)
    if proxy is None:
        if consumer.kind == CLUSTER_PROXY:
            answer.said_by.append(f"{consumer.name} sets no {scheme} proxy")
        return
    if answer.proxy is not None:
        return
    no_proxy = consumer.no_proxy
    if no_proxy is not None and no_proxy.value and bypasses("go", no_proxy.value, target).bypass:
        answer.said_by.append(f"{consumer.name}: {target} is in noProxy")
        return
    answer.proxy, answer.no_proxy = proxy, no_proxy
    answer.said_by.append(f"{consumer.name} uses {_show(proxy)}")


def _show(setting: Setting) -> str:
    where = f"{setting.source.ref} {setting.source.field}"
    if setting.value is None:
        return f"a proxy ({setting.name} at {where}: {setting.unknown})"
    return f"{mask_credentials(setting.value)} ({setting.name} at {where})"


@register
class HubKubeconfigProxyUrl(Primitive):
    name = "hub_kubeconfig_proxy_url"
    description = ("the klusterlet's bootstrap kubeconfig has a proxy-url when the managed "
                   "cluster reaches the hub through a proxy")
    params_schema = {
        "type": "object", "additionalProperties": False,
        "properties": {"key": {"type": "string"}},
    }
    reads = ("Proxy", "Deployment", "DaemonSet", "StatefulSet", "ConfigMap", "Secret")

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        key = params.get("key", "kubeconfig")
        parsed = kubeconfig_in_secret(subject, key)
        if isinstance(parsed, str):
            yield NotEvaluable(parsed)
            return
        cluster = current_cluster(parsed) or {}
        if cluster.get("proxy-url"):
            return
        server = str(cluster.get("server") or "")
        if not server:
            yield NotEvaluable(f"{subject.ref} key {key!r}: the current cluster has no server")
            return
        answer = managed_cluster_proxy(ctx, subject.cluster, server)
        if not answer.known:
            yield NotEvaluable("nothing in the input says whether the managed cluster uses a "
                               "proxy: include its config.openshift.io Proxy 'cluster' or the "
                               "klusterlet agent Deployments")
            return
        if answer.proxy is None:
            return
        field_name = ("data." if key in (subject.body.get("data") or {}) else "stringData.") + key
        yield Violation(field=field_name,
                        values={"server": server, "proxy": _show(answer.proxy)},
                        evidence=[f"server {server} has no proxy-url"] + answer.said_by)
