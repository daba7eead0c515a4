"""HCP rules with the perimeter layer, user inputs and HyperShift's own rendered bundles."""

from __future__ import annotations

import json
from pathlib import Path

from hcpscan.findings.model import Status
from hcpscan.rules.config import ScanConfig
from tests.conftest import FIXTURES, REALWORLD
from tests.rules.harness import scan

HCP001 = FIXTURES / "rules" / "HCP001"
PERIMETER = HCP001 / "perimeter-workers-only.yaml"


def test_ignition_nodeport_open_to_everyone_names_policy_service_and_missing_perimeter():
    report = scan([HCP001 / "fail"], ["HCP001"])
    proxy = next(f for f in report.findings if "ignition-server-proxy" in f.message)
    finding = proxy
    assert "reachable from any address outside 10.10.0.0/24" in finding.message
    evidence = " ".join(finding.evidence)
    assert "NetworkPolicy clusters-edge/nodeport-ignition-proxy" in evidence
    assert "NodePort Service clusters-edge/ignition-server-proxy" in evidence
    assert "no perimeter file was given (--firewall)" in evidence


def test_perimeter_file_restricting_to_workers_makes_it_pass():
    report = scan([HCP001 / "fail"], ["HCP001", "HCP002"], ScanConfig(firewall=PERIMETER))
    assert {r.rule_id: r.status for r in report.results} == {
        "HCP001": Status.PASS, "HCP002": Status.PASS}


def test_worker_subnets_from_config_when_the_hostedcluster_has_none(tmp_path: Path):
    text = (HCP001 / "fail" / "hostedcluster.yaml").read_text()
    (tmp_path / "hc.yaml").write_text(text.replace("    machineNetwork:\n    - cidr: 10.10.0.0/24\n", ""))
    (tmp_path / "ns.yaml").write_text((HCP001 / "fail" / "hcp-namespace.yaml").read_text())
    unknown = scan([tmp_path], ["HCP001"])
    assert unknown.results[0].status is Status.NOT_EVALUABLE
    assert "worker_cidrs" in unknown.results[0].reason
    known = scan([tmp_path], ["HCP001"], ScanConfig(worker_cidrs=["10.10.0.0/24"]))
    assert known.results[0].status is Status.FAIL


def test_rendered_agent_bundle_without_control_plane_is_not_evaluable():
    report = scan([REALWORLD / "create-render" / "agent__minimal_flags_are_provided.yaml"],
                  ["HCP001", "HCP003", "HCP005"])
    for result in report.results:
        assert result.status is Status.NOT_EVALUABLE, result
        assert "clusters-example" in result.reason


def test_cli_firewall_option_and_bad_perimeter_file(run_cli, tmp_path: Path):
    fail = str(HCP001 / "fail")
    opened = json.loads(run_cli("scan", fail, "--select", "HCP001", "--format", "json").out)
    assert opened["rules"][0]["status"] == "fail"
    closed = run_cli("scan", fail, "--select", "HCP001", "--firewall", str(PERIMETER))
    assert closed.code == 0
    bad = tmp_path / "fw.yaml"
    bad.write_text("kind: Perimeter\nrules:\n- action: maybe\n")
    broken = run_cli("scan", fail, "--firewall", str(bad))
    assert broken.code == 2 and str(bad) in broken.err and "Traceback" not in broken.err


def test_egress_rule_without_any_listed_workload_is_not_evaluable_naming_them(tmp_path: Path):
    """HCP005 on an HCP namespace holding none of the workloads it lists judged nothing:
    not-evaluable naming them (as HCP001 does), not a pass."""
    (tmp_path / "in.yaml").write_text("""\
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata: {name: hc1, namespace: clusters}
spec: {networking: {machineNetwork: [{cidr: 10.0.0.0/16}]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: unrelated, namespace: clusters-hc1}
spec:
  selector: {matchLabels: {app: unrelated}}
  template:
    metadata: {labels: {app: unrelated}}
    spec: {containers: [{name: c, image: x}]}
""")
    [result] = scan([tmp_path / "in.yaml"], ["HCP005"]).results
    assert result.status is Status.NOT_EVALUABLE, result
    assert "no control-plane-operator, ingress-operator" in result.reason
    assert "labelled hypershift.openshift.io/need-management-kas-access=true" in result.reason
    assert "HCP namespace clusters-hc1" in result.reason
