"""A Kyverno generate rule that makes NetworkPolicies on the cluster (the kyverno policies
repository's add-networkpolicy-dns) is declared where a rule on that kind reports: HCP004
is not evaluable, naming the ClusterPolicy's rule and line, not 'kind absent' alone."""

from __future__ import annotations

from pathlib import Path

from hcpscan.findings.model import Status
from tests.rules.harness import scan

POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-networkpolicy-dns
spec:
  rules:
  - name: add-netpol-dns
    match:
      any:
      - resources:
          kinds:
          - Namespace
    generate:
      apiVersion: networking.k8s.io/v1
      kind: NetworkPolicy
      name: allow-dns
      namespace: "{{request.object.metadata.name}}"
      synchronize: false
      data:
        spec:
          podSelector:
            matchLabels: {}
          policyTypes:
          - Egress
          egress:
          - to:
            - namespaceSelector:
                matchLabels:
                  name: kube-system
            ports:
            - protocol: UDP
              port: 53
"""


def test_generated_network_policies_make_hcp004_not_evaluable(tmp_path: Path):
    (tmp_path / "policy.yaml").write_text(POLICY)
    result = scan([tmp_path], ["HCP004"]).results[0]
    assert result.status is Status.NOT_EVALUABLE
    assert "kind absent: no NetworkPolicy in the input" in result.reason
    assert (f"ClusterPolicy add-networkpolicy-dns rule add-netpol-dns ({tmp_path}/policy.yaml:13)"
            " generates NetworkPolicy allow-dns") in result.reason
    assert "kubectl get networkpolicies -A -o yaml" in result.reason


def test_a_generate_rule_of_another_kind_leaves_hcp004_not_applicable(tmp_path: Path):
    (tmp_path / "policy.yaml").write_text(POLICY.replace("kind: NetworkPolicy", "kind: ConfigMap"))
    result = scan([tmp_path], ["HCP004"]).results[0]
    assert result.status is Status.NOT_APPLICABLE
    assert result.reason == "kind absent: no NetworkPolicy in the input"


def test_clone_list_kinds_are_generated_kinds(tmp_path: Path):
    clone = POLICY.split("    generate:")[0] + """\
    generate:
      namespace: "{{request.object.metadata.name}}"
      cloneList:
        namespace: default
        kinds:
        - networking.k8s.io/v1/NetworkPolicy
        selector:
          matchLabels:
            copy: "true"
"""
    (tmp_path / "policy.yaml").write_text(clone)
    result = scan([tmp_path], ["HCP004"]).results[0]
    assert result.status is Status.NOT_EVALUABLE
    assert "generates NetworkPolicy objects" in result.reason
