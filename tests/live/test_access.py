"""RBAC-forbidden and absent kinds: not evaluable for exactly the rules that need them, never a crash."""

from __future__ import annotations

import json

from hcpscan.rules.config import ScanConfig
from hcpscan.scan import RuleSelection, load_rules
from tests.live.apiserver import catalog
from tests.live.conftest import write_kubeconfig
from tests.live.test_cluster_scan import hcpscan

MISSING_GROUPS = ("hypershift.openshift.io", "addon.open-cluster-management.io")
MISSING_KINDS = {"HostedCluster", "HostedControlPlane", "NodePool", "AddOnDeploymentConfig", "ManagedClusterAddOn",
                 "ClusterManagementAddOn"}


def _group(body: dict) -> str:
    return str(body.get("apiVersion", "")).rpartition("/")[0]


def test_forbidden_and_absent_kinds_make_exactly_their_rules_not_evaluable(standin, pki, tmp_path,
                                                                          example_bodies):
    served = [b for b in example_bodies if _group(b) not in MISSING_GROUPS]
    server = standin(served, resources=catalog(without=MISSING_GROUPS))
    server.state.forbidden.add("secrets")
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    out = tmp_path / "r.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--format", f"json={out}")
    assert code in (0, 1), err  # a permission gap is coverage, not an input error
    report = json.loads(out.read_text())
    results = {r["rule_id"]: r for r in report["rules"]}
    buckets: dict[str, list[str]] = {"forbidden": [], "not served": [], "evaluated": []}
    for rule in load_rules(ScanConfig(), RuleSelection()):
        result = results[rule.id]
        needs = set(rule.reads)
        if needs & {"Secret", "Kubeconfig"}:  # kubeconfigs are read out of Secrets
            assert result["status"] == "not-evaluable", rule.id
            assert result["reason"] == "forbidden: grant list on secrets", rule.id
            buckets["forbidden"].append(rule.id)
        elif set(rule.applies_to.kinds) <= MISSING_KINDS:  # no such objects: nothing to check
            assert result["status"] == "not-applicable", rule.id
            assert result["reason"].startswith("kind not served: the API server serves no "), rule.id
            buckets["not served"].append(rule.id)
        else:
            assert "forbidden" not in result["reason"] and "not served" not in result["reason"], rule.id
            buckets["evaluated"].append(rule.id)
    assert all(buckets.values()), buckets
    (warning,) = [d for d in report["diagnostics"] if "secrets" in d["message"]]
    assert warning["severity"] == "warning"
    assert "cannot read Secret: forbidden: grant list on secrets" in warning["message"]
    assert "deploy/hcpscan-readonly-clusterrole.yaml" in warning["hint"]
    assert not [r for r in server.state.requests if "hostedclusters" in r.path]


def test_incomplete_coverage_exit_code(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    server.state.forbidden.add("configmaps")
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--fail-on", "critical",
                             "--fail-on-incomplete", "--format", "table")
    assert code == 3, err
    assert "forbidden: grant list on configmaps" in out


def test_forbidden_in_one_namespace_names_the_namespace(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    server.state.forbidden.add("secrets")
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    out = tmp_path / "r.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "-n", "org-acme",
                           "--select", "PRX009", "--format", f"json={out}")
    assert code in (0, 1), err
    (result,) = json.loads(out.read_text())["rules"]
    assert result["status"] == "not-evaluable"
    assert result["reason"] == "forbidden: grant list on secrets in namespace org-acme"


def test_a_saved_dump_keeps_what_the_live_read_could_not_list(standin, pki, tmp_path, example_bodies):
    served = [b for b in example_bodies if _group(b) not in MISSING_GROUPS]
    server = standin(served, resources=catalog(without=MISSING_GROUPS))
    server.state.forbidden.add("secrets")
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    dump, live, offline = tmp_path / "dump", tmp_path / "live.json", tmp_path / "offline.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--save-dump", str(dump),
                           "--format", f"json={live}")
    assert code in (0, 1), err
    assert (dump / "hcpscan-unavailable-kinds.yaml").is_file()
    offline_code, _, err = hcpscan("scan", str(dump), "--no-config", "--no-progress",
                                   "--format", f"json={offline}")
    assert offline_code == code, err
    results = [{r["rule_id"]: (r["status"], r["reason"]) for r in json.loads(p.read_text())["rules"]}
               for p in (live, offline)]
    assert results[0] == results[1]
    assert results[1]["PRX009"] == ("not-evaluable", "forbidden: grant list on secrets")
    assert "UnavailableKinds" not in json.loads(offline.read_text())["inventory"]["kinds"]
