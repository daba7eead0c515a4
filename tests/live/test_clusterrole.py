"""deploy/hcpscan-readonly-clusterrole.yaml: read-only, and enough for every built-in rule."""

from __future__ import annotations

import json

import yaml

from hcpscan.inventory.objects import IGNITION_CONFIG, INSTALL_CONFIG_KIND, KUBECONFIG, SYSTEMD_DROPIN
from hcpscan.rules.config import ScanConfig
from hcpscan.scan import RuleSelection, kinds_needed, load_rules
from tests.live.apiserver import catalog
from tests.live.conftest import HERE, write_kubeconfig
from tests.live.test_cluster_scan import hcpscan

CLUSTERROLE = HERE.parents[1] / "deploy" / "hcpscan-readonly-clusterrole.yaml"


def _grants() -> set[tuple[str, str]]:
    role = yaml.safe_load(CLUSTERROLE.read_text())
    assert role["kind"] == "ClusterRole" and role["apiVersion"] == "rbac.authorization.k8s.io/v1"
    grants = set()
    for rule in role["rules"]:
        assert set(rule["verbs"]) == {"get", "list"}, rule  # read-only, no watch
        assert "*" not in rule["apiGroups"] and "*" not in rule["resources"], rule
        grants.update((group, resource) for group in rule["apiGroups"] for resource in rule["resources"])
    return grants


def test_clusterrole_grants_every_kind_the_rules_need():
    served = catalog()
    missing = []
    for kind in sorted(kinds_needed(load_rules(ScanConfig(), RuleSelection()))
                       - {KUBECONFIG, IGNITION_CONFIG, SYSTEMD_DROPIN, INSTALL_CONFIG_KIND}):
        resources = [(r.group, r.plural) for r in served if r.kind == kind and "/" not in r.plural]
        assert resources, f"the stand-in serves no {kind}: add it to CRDS in tests/live/apiserver.py"
        missing += [f"{plural} in group {group!r}" for group, plural in resources
                    if (group, plural) not in _grants()]
    assert not missing, f"add to {CLUSTERROLE.name}: {missing}"


def test_a_scan_with_only_the_clusterroles_grants_is_complete(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    server.state.allowed = _grants()
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    out = tmp_path / "r.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "-n", "clusters,cluster1",
                           "--format", f"json={out}")
    assert code in (0, 1), err
    report = json.loads(out.read_text())
    assert not [r for r in report["rules"] if "forbidden" in r["reason"]]
    assert not report["diagnostics"]
    assert {r.status for r in server.state.requests} == {200}
