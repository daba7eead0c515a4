"""HyperShift from Git alone: a HostedCluster (and NodePool) without its HCP namespace is
judged from its spec — publishing strategies, allowedCIDRBlocks, the management router's
IngressController, the perimeter file — or says exactly what is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hcpscan.findings.model import Status
from hcpscan.rules.config import ScanConfig
from tests.conftest import FIXTURES, SHARED
from tests.rules.harness import expected_markers, scan

RULES = FIXTURES / "rules"
CASES = [(rule_id, RULES / rule_id / "git-alone") for rule_id in ("HCP001", "HCP002", "HCP003")]
PERIMETER = RULES / "HCP001" / "perimeter-workers-only.yaml"
HOSTED_CLUSTER = """\
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata: {name: edge, namespace: clusters}
spec:
  platform: %(platform)s
  networking: {machineNetwork: [{cidr: 10.10.0.0/24}]}
  services:
  - service: APIServer
    servicePublishingStrategy: {type: LoadBalancer}
  - service: Ignition
    servicePublishingStrategy: %(ignition)s
"""


def _write(tmp_path: Path, text: str, name: str = "hc.yaml") -> Path:
    (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(("rule_id", "folder"), CASES, ids=[c[0] for c in CASES])
def test_the_spec_alone_fails_on_the_marked_field(rule_id: str, folder: Path):
    report = scan([folder / "fail"], [rule_id])
    found = {(f.location.path, f.location.line) for f in report.findings}
    assert found == expected_markers(folder / "fail", rule_id)
    assert report.results[0].status is Status.FAIL
    for finding in report.findings:  # evidence names HostedCluster fields, not rendered objects
        assert finding.evidence[0].startswith("spec.services[")
        assert "ignition-server" not in " ".join(finding.evidence)


@pytest.mark.parametrize(("rule_id", "folder"), CASES, ids=[c[0] for c in CASES])
def test_the_spec_alone_passes_having_checked_the_hostedclusters(rule_id: str, folder: Path):
    report = scan([folder / "pass"], [rule_id])
    assert report.findings == []
    assert report.results[0].status is Status.PASS, report.results[0].reason
    assert report.results[0].objects_checked >= 1


def test_a_perimeter_admitting_only_the_workers_closes_a_known_node_port(tmp_path: Path):
    text = (RULES / "HCP001" / "git-alone" / "fail" / "agent-nodeport.yaml").read_text()
    report = scan([_write(tmp_path, text)], ["HCP001"], ScanConfig(firewall=PERIMETER))
    assert report.results[0].status is Status.PASS


def test_an_unallocated_node_port_the_perimeter_opens_in_part_is_not_evaluable(tmp_path: Path):
    (tmp_path / "fw.yaml").write_text(
        "kind: Perimeter\ndefault: deny\nrules:\n- action: allow\n  sources: [0.0.0.0/0]\n"
        "  ports: [{protocol: TCP, port: 31000, endPort: 31999}]\n")
    hc = HOSTED_CLUSTER % {"platform": "{type: Agent}",
                           "ignition": "{type: NodePort, nodePort: {address: a.example.com}}"}
    (tmp_path / "in").mkdir()
    report = scan([_write(tmp_path / "in", hc)], ["HCP001"], ScanConfig(firewall=tmp_path / "fw.yaml"))
    assert report.results[0].status is Status.NOT_EVALUABLE
    assert "set nodePort.port" in report.results[0].reason


@pytest.mark.parametrize(("platform", "ignition", "missing"), [
    ("{type: KubeVirt}", "{type: Route}",
     "IngressController openshift-ingress-operator/default, not in the input (`oc get "
     "ingresscontroller default -n openshift-ingress-operator -o yaml`)"),
    ("{type: AWS, aws: {endpointAccess: Private}}", "{type: Route}",
     "own router (spec.platform.aws.endpointAccess is Private): its Service router in "
     "clusters-edge is not in the input"),
])
def test_what_the_spec_cannot_say_is_named(tmp_path: Path, platform: str, ignition: str,
                                           missing: str):
    report = scan([_write(tmp_path, HOSTED_CLUSTER % {"platform": platform, "ignition": ignition})],
                  ["HCP001"])
    assert report.results[0].status is Status.NOT_EVALUABLE
    assert "HCP namespace clusters-edge is not in the input" in report.results[0].reason
    assert missing in report.results[0].reason


def test_a_private_api_server_is_not_judged_from_its_load_balancer(tmp_path: Path):
    hc = HOSTED_CLUSTER % {"platform": "{type: AWS, aws: {endpointAccess: Private}}",
                           "ignition": "{type: Route}"}
    report = scan([_write(tmp_path, hc)], ["HCP003"])
    assert report.results[0].status is Status.NOT_EVALUABLE
    assert "private cluster (spec.platform.aws.endpointAccess: Private)" in report.results[0].reason


def test_hcp006_names_the_namespace_to_scan(tmp_path: Path):
    hc = HOSTED_CLUSTER % {"platform": "{type: Agent}", "ignition": "{type: NodePort}"}
    report = scan([_write(tmp_path, hc)], ["HCP006"])
    (result,) = report.results
    assert result.status is Status.NOT_EVALUABLE
    assert "spec.services publishes none of ports 8081/9440/8080" in result.reason
    assert "oc get deployments,statefulsets,services,routes -n clusters-edge" in result.reason


def test_hypershift_renders_give_no_finding_and_say_what_is_missing():
    report = scan([SHARED / "realworld" / "hypershift"], ["HCP001", "HCP002", "HCP003", "HCP006"])
    assert report.findings == []
    results = {r.rule_id: r for r in report.results}
    assert "IngressController openshift-ingress-operator/default" in results["HCP001"].reason
    assert "worker_cidrs" in results["HCP002"].reason
    assert results["HCP003"].objects_checked == 7  # AWS, OpenStack, PowerVS: machine network known


def test_cli_on_a_gitops_tree(run_cli):
    folder = str(RULES / "HCP001" / "git-alone" / "fail")
    result = run_cli("scan", folder, "--select", "HCP001", "--no-config", "--format", "json")
    assert result.code == 1
    (finding,) = [f for f in json.loads(result.out)["findings"] if "NodePort" in f["message"]]
    assert finding["field"] == "spec.services[1].servicePublishingStrategy"
