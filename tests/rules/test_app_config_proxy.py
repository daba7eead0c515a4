"""PRX010 on Giant Swarm Apps: the proxy a chart gets is what the configs its App names hold
(seed layout: noProxy in the <cluster>-cluster-values ConfigMap, the URLs in the Secret)."""

from __future__ import annotations

from hcpscan.findings.model import Status
from tests.conftest import FIXTURES
from tests.rules.harness import scan

FAIL = FIXTURES / "rules" / "PRX010" / "fail" / "app-config-configmap-only.yaml"


def test_an_app_reading_only_the_cluster_values_configmap_fails_at_spec_config():
    [finding] = scan([FAIL], ["PRX010"]).findings
    assert finding.message.startswith("App org-acme/mycluster-cert-manager (cert-manager) "
                                      "spec.config has no cluster.proxy.https")
    assert "ConfigMap org-acme/mycluster-cluster-values" in finding.message
    assert any("names no Secret" in e for e in finding.evidence)


def test_an_app_whose_secret_is_not_in_the_input_is_not_evaluable(tmp_path):
    text = FAIL.read_text().replace(
        "      name: mycluster-cluster-values\n      namespace: org-acme\n",
        "      name: mycluster-cluster-values\n      namespace: org-acme\n"
        "    secret:\n      name: mycluster-proxy-values\n      namespace: org-acme\n", 1)
    lines = text.split("\n---\n")
    (tmp_path / "m.yaml").write_text("\n---\n".join(lines))
    result = scan([tmp_path], ["PRX010"]).results[0]
    assert result.status is Status.NOT_EVALUABLE, result.reason
    assert "Secret org-acme/mycluster-proxy-values, which is not in the input" in result.reason


def test_an_app_of_another_chart_is_not_judged(tmp_path):
    (tmp_path / "m.yaml").write_text(FAIL.read_text().replace("name: cert-manager-app",
                                                              "name: ingress-nginx"))
    result = scan([tmp_path], ["PRX010"]).results[0]
    assert result.status is Status.NOT_APPLICABLE and result.findings == 0
