"""Wrongly typed fields: the same error at the same line from every command, never exit 4."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.harness import hcpscan, run_every_command, with_good

BAD = {
    "netpol-port-list.yaml": ("""\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web, namespace: shop}
spec:
  podSelector: {}
  ingress:
  - ports:
    - port: [80, 443]
""", 8, "NetworkPolicy shop/web is left out: spec.ingress[0].ports[0].port is a list, "
        "not a string or number"),
    "netpol-protocol-list.yaml": ("""\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: dns, namespace: shop}
spec:
  podSelector: {}
  egress:
  - ports:
    - {port: 53, protocol: [UDP, TCP]}
""", 8, "NetworkPolicy shop/dns is left out: spec.egress[0].ports[0].protocol is a list, "
        "not a string or number"),
    "deployment.yaml": ("""\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  template:
    spec:
      containers: {name: api, image: api:1}
""", 7, "Deployment shop/api is left out: spec.template.spec.containers is a mapping, not a list"),
    "deployment-env.yaml": ("""\
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker, namespace: shop}
spec:
  template:
    spec:
      containers:
      - name: worker
        env: {HTTPS_PROXY: "http://proxy:3128"}
""", 9, "Deployment shop/worker is left out: spec.template.spec.containers[0].env is a mapping, "
        "not a list"),
    "namespace.yaml": ("""\
apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: [team-a]
""", 5, "Namespace shop is left out: metadata.labels is a list, not a mapping"),
    "addon.yaml": ("""\
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: work-manager, namespace: cluster1}
spec:
  installNamespace: open-cluster-management-agent-addon
  configs: {name: proxy}
""", 6, "ManagedClusterAddOn cluster1/work-manager is left out: spec.configs is a mapping, not a list"),
    "vm-labels-list.yaml": ("""\
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm1, namespace: shop}
spec:
  template:
    metadata:
      labels: [a]
    spec: {domain: {}}
""", 7, "VirtualMachine shop/vm1 is left out: spec.template.metadata.labels is a list, not a mapping"),
    "anp-subject-list.yaml": ("""\
apiVersion: policy.networking.k8s.io/v1alpha1
kind: AdminNetworkPolicy
metadata: {name: deny-all}
spec:
  priority: 10
  subject:
    namespaces: [shop]
""", 7, "AdminNetworkPolicy deny-all is left out: spec.subject.namespaces is a list, not a mapping"),
    "udn-role-list.yaml": ("""\
apiVersion: k8s.ovn.org/v1
kind: UserDefinedNetwork
metadata: {name: net, namespace: shop}
spec:
  topology: Layer2
  layer2:
    role: [Primary]
""", 7, "UserDefinedNetwork shop/net is left out: spec.layer2.role is a list, not a string or number"),
    "egressfirewall-to-list.yaml": ("""\
apiVersion: k8s.ovn.org/v1
kind: EgressFirewall
metadata: {name: default, namespace: shop}
spec:
  egress:
  - type: Deny
    to: [0.0.0.0/0]
""", 7, "EgressFirewall shop/default is left out: spec.egress[0].to is a list, not a mapping"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_every_command_gives_the_same_error_at_the_field(tmp_path: Path, name: str) -> None:
    tree = with_good(tmp_path / "dump")
    text, line, message = BAD[name]
    (tree / name).write_text(text)
    runs = run_every_command(str(tree))
    expected = {"path": str(tree / name), "line": line, "message": message}
    for command in ("scan", "inventory", "connectivity"):
        found = [{k: d[k] for k in expected} for d in _diagnostics(runs[command].json())]
        assert found == [expected], command
        assert runs[command].code == 2
    for table in (hcpscan("proxy", str(tree), "--no-progress").stdout.decode(), runs["proxy"].err):
        assert f"{name}:{line}" in table and message.split(":")[0] in table


def _diagnostics(doc: dict) -> list[dict]:
    return doc["diagnostics"]
