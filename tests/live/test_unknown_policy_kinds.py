"""A live scan lists the policy-like resources hcpscan does not evaluate - kinds it cannot
name in advance too - so their objects make the same '# answer excludes' caveat and
warning as offline."""

from __future__ import annotations

import json

from tests.live.apiserver import Served, catalog
from tests.live.conftest import write_kubeconfig
from tests.live.test_cluster_scan import hcpscan

UNKNOWN = Served("acme.policy.example.com", "v1", "trafficrules", "TrafficRule", True)
ANTREA = Served("crd.antrea.io", "v1beta1", "clusternetworkpolicies", "ClusterNetworkPolicy", False)
TRAFFIC_RULE = {"apiVersion": "acme.policy.example.com/v1", "kind": "TrafficRule",
                "metadata": {"name": "deny-all", "namespace": "clusters-agent-prod"}}
ANTREA_POLICY = {"apiVersion": "crd.antrea.io/v1beta1", "kind": "ClusterNetworkPolicy",
                 "metadata": {"name": "isolate"}, "spec": {"priority": 5}}


def _scan(standin, pki, tmp_path, example_bodies, *select: str) -> tuple[dict, list[str]]:
    server = standin([*example_bodies, TRAFFIC_RULE, ANTREA_POLICY],
                     resources=[*catalog(), UNKNOWN, ANTREA])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    out = tmp_path / "live.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--select",
                           *select, "--format", f"json={out}")
    assert code in (0, 1), err
    return json.loads(out.read_text()), server.paths()


def test_unknown_policy_kinds_are_listed_and_declared(standin, pki, tmp_path, example_bodies):
    report, paths = _scan(standin, pki, tmp_path, example_bodies, "HCP")
    assert "/apis/acme.policy.example.com/v1/trafficrules" in {p.split("?")[0] for p in paths}
    assert "/apis/crd.antrea.io/v1beta1/clusternetworkpolicies" in {p.split("?")[0] for p in paths}
    graph_rules = [r for r in report["rules"] if r["status"] in ("pass", "fail")]
    assert graph_rules
    for rule in graph_rules:
        assert "answer excludes policy objects hcpscan does not evaluate" in rule["reason"]
        assert "TrafficRule (a acme.policy.example.com policy kind" in rule["reason"]
        assert ("ClusterNetworkPolicy of API group crd.antrea.io (crd.antrea.io/v1beta1): "
                "isolate") in rule["reason"]
    warnings = [d["message"] for d in report["diagnostics"] if d["severity"] == "warning"]
    assert any("1 TrafficRule (a acme.policy.example.com" in m and "not evaluated" in m
               for m in warnings)


def test_rules_that_do_not_answer_from_the_graph_do_not_list_them(standin, pki, tmp_path,
                                                                   example_bodies):
    report, paths = _scan(standin, pki, tmp_path, example_bodies, "PRX")
    listed = {p.split("?")[0] for p in paths}
    assert "/apis/acme.policy.example.com/v1/trafficrules" not in listed
    assert "/apis/crd.antrea.io/v1beta1/clusternetworkpolicies" not in listed
    assert not any("answer excludes" in r["reason"] for r in report["rules"])
