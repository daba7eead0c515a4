"""A HostedCluster's noProxy fix is judged on what HyperShift computes from the fixed value
(issue 24 item 2): the cluster's networks, .svc and .cluster.local are HyperShift's to add,
so adding the node-local API server address is the whole fix."""

from __future__ import annotations

from hcpscan.findings.fix import Remedy
from tests.conftest import FIXTURES
from tests.rules.harness import scan

HC = FIXTURES / "rules" / "PRX005" / "fail" / "hosted-cluster-node-local-kas.yaml"


def test_adding_the_node_local_address_is_the_fix() -> None:
    report = scan([HC], ["PRX005"])
    assert sorted(f.object.name for f in report.findings) == ["example", "v6"]
    for finding in report.findings:
        assert isinstance(finding.remedy, Remedy), finding.remedy
        assert finding.remedy.summary.startswith(
            f"add {finding.data['missing_no_proxy'][0]} to the noProxy in "
            "spec.configuration.proxy.noProxy")
