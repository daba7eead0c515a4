"""A Kyverno MutatingPolicy (policies.kyverno.io, CEL mutations) is declared, never passed
over: PRX011 says it is not evaluable when a mutation names proxy variables (the kyverno
policies repository's add-pod-proxies, in its CEL form)."""

from __future__ import annotations

from pathlib import Path

from hcpscan.findings.model import Status
from tests.rules.harness import scan

MPOL = """\
apiVersion: policies.kyverno.io/v1alpha1
kind: MutatingPolicy
metadata:
  name: add-pod-proxies
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["pods"]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{
          spec: Object.spec{
            containers: object.spec.containers.map(c, Object.spec.containers{
              name: c.name,
              env: [Object.spec.containers.env{name: "HTTPS_PROXY",
                                               value: "http://proxy.corp.example.com:3128"}]
            })
          }
        }
"""

LABELS = MPOL.replace("name: add-pod-proxies", "name: add-team-label").replace(
    '[Object.spec.containers.env{name: "HTTPS_PROXY",\n'
    '                                               value: "http://proxy.corp.example.com:3128"}]',
    '[]')


def test_a_mutating_policy_writing_proxy_env_is_not_evaluable(tmp_path: Path):
    (tmp_path / "mpol.yaml").write_text(MPOL)
    result = scan([tmp_path], ["PRX011"]).results[0]
    assert result.status is Status.NOT_EVALUABLE
    assert "MutatingPolicy add-pod-proxies (policies.kyverno.io/v1alpha1) writes HTTPS_PROXY" \
        " through its ApplyConfiguration mutation" in result.reason


def test_a_mutating_policy_naming_no_proxy_variable_is_checked_and_passes(tmp_path: Path):
    (tmp_path / "mpol.yaml").write_text(LABELS)
    result = scan([tmp_path], ["PRX011"]).results[0]
    assert "HTTPS_PROXY" not in LABELS
    assert result.status is Status.PASS and result.objects_checked == 1


CERT_MANAGER = """\
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cert-manager
  namespace: cert-manager
  labels: {app.kubernetes.io/name: cert-manager, app.kubernetes.io/component: controller}
spec:
  selector:
    matchLabels: {app.kubernetes.io/name: cert-manager}
  template:
    metadata:
      labels: {app.kubernetes.io/name: cert-manager, app.kubernetes.io/component: controller}
    spec:
      containers:
      - name: cert-manager-controller
        image: quay.io/jetstack/cert-manager-controller:v1.14.4
"""


def test_a_mutating_policy_writing_proxy_env_says_the_installation_uses_a_proxy(tmp_path: Path):
    """PRX010: Kyverno cannot reach cert-manager's own pod spec; a MutatingPolicy that writes
    proxy env tells the installation uses a proxy, as a ClusterPolicy's mutate rule does."""
    (tmp_path / "in.yaml").write_text(MPOL + CERT_MANAGER)
    report = scan([tmp_path], ["PRX010"])
    assert report.results[0].status is Status.FAIL
    evidence = [e for f in report.findings for e in f.evidence]
    assert any("MutatingPolicy add-pod-proxies spec.mutations[0] injects HTTPS_PROXY" in e
               for e in evidence), evidence
    (tmp_path / "in.yaml").write_text(LABELS + CERT_MANAGER)
    assert scan([tmp_path], ["PRX010"]).results[0].status is not Status.FAIL
