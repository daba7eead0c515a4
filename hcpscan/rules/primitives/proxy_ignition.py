"""Primitive ``ignition_stub_has_proxy`` (PRX004): a NodePool's user-data stub carries the
hosted cluster's proxy when nodes need it to fetch their ignition.

The stub is JSON in the user-data Secret (key ``value``) of the HCP namespace:
``ignition.config.merge[].source`` is the ignition endpoint and ``ignition.proxy``
the proxy the node uses to reach it (seed 000; DOMAIN.md §3).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from hcpscan.analysis.proxy import bypasses
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.secrets import secret_values
from hcpscan.model.hostedcluster import hosted_cluster_for_namespace
from hcpscan.rules.context import Context
from hcpscan.rules.primitives import register
from hcpscan.rules.primitives.base import NotApplicable, NotEvaluable, Outcome, Primitive, Violation
from hcpscan.rules.primitives.proxy_config import GO
from hcpscan.sources.yamldocs import load_json


@register
class IgnitionStubHasProxy(Primitive):
    name = "ignition_stub_has_proxy"
    description = ("a user-data ignition stub of a hosted cluster with a proxy carries "
                   "ignition.proxy unless its ignition endpoint is in noProxy")
    params_schema = {
        "type": "object", "additionalProperties": False,
        "properties": {"key": {"type": "string", "description": "Secret key of the stub"}},
    }
    reads = ("HostedCluster",)

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        key = params.get("key", "value")
        value = secret_values(subject).get(key)
        if value is None:
            yield NotApplicable(f"no {key} key: not a user-data stub")
            return
        model = hosted_cluster_for_namespace(ctx.inventory, subject.namespace, subject.cluster)
        if model is None:
            yield NotEvaluable(f"no HostedCluster whose HCP namespace is {subject.namespace} is in "
                               "the input: cannot tell whether the nodes need a proxy")
            return
        hc, proxy = model.obj, model.proxy
        if not (proxy.get("httpsProxy") or proxy.get("httpProxy")):
            yield NotApplicable("the hosted cluster sets no proxy")
            return
        if value.redacted:
            yield NotEvaluable(f"{key} is redacted in the dump: scan a dump taken with secrets, "
                               "or the live cluster")
            return
        try:
            stub = load_json(value.text or "")
        except ValueError:
            stub = None
        ignition = stub.get("ignition") if isinstance(stub, dict) else None
        if not isinstance(ignition, dict):
            yield NotApplicable(f"{key} is not an ignition stub")
            return
        carried = ignition.get("proxy")
        if isinstance(carried, dict) and (carried.get("httpsProxy") or carried.get("httpProxy")):
            return
        no_proxy = model.computed_no_proxy
        merge = (ignition.get("config") or {}).get("merge") if isinstance(
            ignition.get("config"), dict) else None
        sources = [m.get("source") for m in merge or [] if isinstance(m, dict)
                   and isinstance(m.get("source"), str)]
        proxied = [s for s in sources if not bypasses(GO, no_proxy, s).bypass]
        if not proxied:
            return
        field = "data" if key in (subject.body.get("data") or {}) else "stringData"
        want = proxy.get("httpsProxy") or proxy.get("httpProxy")
        yield Violation(
            field=f"{field}.{key}",
            values={"hc": hc.ref, "endpoint": proxied[0], "proxy": want},
            evidence=[f"{hc.ref} spec.configuration.proxy: httpsProxy={proxy.get('httpsProxy')!r}"
                      f", httpProxy={proxy.get('httpProxy')!r}",
                      f"ignition endpoint(s) {', '.join(proxied)} are not in the computed "
                      f"noProxy {no_proxy!r} (Go rules)",
                      "the stub has no ignition.proxy" if carried is None
                      else f"ignition.proxy = {json.dumps(carried)} names no proxy",
                      f"HCP namespace {model.control_plane_namespace}"])
