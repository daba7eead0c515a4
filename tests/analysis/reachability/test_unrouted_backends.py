"""Route and Ingress backends that send to no pod port: a port of the Service it does not
have (by number or by name), or a Service the input lacks. Kubernetes routes nothing
there, so the list has no {ingress-controller} line for it, and a warning at the backend
says so, whichever object and port it is (netpol-analyzer matches such a number against
the Service's targetPorts instead: the documented deviation)."""

from __future__ import annotations

import pytest

from hcpscan.analysis.reachability.connlist import connection_list
from hcpscan.analysis.reachability.diff import connectivity_diff
from hcpscan.analysis.reachability.evaluation import DEFAULT_OPTIONS
from hcpscan.analysis.reachability.explain import explain

APP = """\
---
apiVersion: v1
kind: Pod
metadata: {name: api, namespace: shop, labels: {app: api}}
spec: {containers: [{name: c, ports: [{containerPort: 9000, name: web}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec:
  selector: {app: api}
  ports: [{name: http, port: 80, targetPort: 9000}]
"""


def _ingress(port: str, service: str = "api") -> str:
    return ("---\napiVersion: networking.k8s.io/v1\nkind: Ingress\n"
            "metadata: {name: front, namespace: shop}\nspec:\n  rules:\n  - http:\n"
            "      paths:\n      - path: /\n        pathType: Prefix\n        backend:\n"
            f"          service: {{name: {service}, port: {port}}}\n")


def _route(target: str | None, service: str = "api") -> str:
    port = f"\n  port: {{targetPort: {target}}}" if target is not None else ""
    return ("---\napiVersion: route.openshift.io/v1\nkind: Route\n"
            f"metadata: {{name: front, namespace: shop}}\nspec:\n  to: {{kind: Service, name: {service}}}"
            f"{port}\n")


@pytest.mark.parametrize(("backend", "problem"), [
    (_ingress("{number: 9000}"), "names port 9000 of Service shop/api, which has no such port"),
    (_ingress("{name: grpc}"), "names port grpc of Service shop/api, which has no such port"),
    (_ingress("{number: 80}", service="gone"), "sends to Service shop/gone, which is not in the input"),
    (_route("grpc"), "names port grpc of Service shop/api, which has no such port"),
    (_route("8443"), "names port 8443 of Service shop/api, which has no such port"),
    (_route(None, service="gone"), "sends to Service shop/gone, which is not in the input"),
])
def test_a_backend_that_reaches_no_pod_port_is_warned_about(manifests, backend, problem):
    inventory = manifests(APP + backend)
    listed = connection_list(inventory)
    assert not [c for c in listed.connections if c.source == "{ingress-controller}"]
    (warning,) = [d for d in listed.diagnostics if problem in d.message]
    assert warning.severity == "warning" and warning.path.endswith("manifests.yaml")
    assert warning.line is not None and warning.line > APP.count("\n")  # at the backend
    assert "its ports: 80 (http) -> 9000" in warning.message or "not in the input" in problem
    # the same warning where the explanation and the diff leave the pair out
    assert [d for d in explain(inventory, DEFAULT_OPTIONS).diagnostics if problem in d.message]
    assert [d for d in connectivity_diff(manifests(APP, "old.yaml"), inventory).diagnostics
            if problem in d.message]


@pytest.mark.parametrize("backend", [
    _ingress("{number: 80}"), _ingress("{name: http}"),
    _route(None), _route("http"), _route("9000"),
])
def test_a_backend_naming_a_port_of_its_service_is_listed_without_warning(manifests, backend):
    listed = connection_list(manifests(APP + backend))
    assert "{ingress-controller} => shop/api[Pod] : TCP 9000" in listed.lines()
    assert not [d for d in listed.diagnostics if "Service" in d.message]
