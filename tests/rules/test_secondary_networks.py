"""PRX001 on secondary networks whose CIDR no manifest states (issue 13): the result says
which network and which input to set; once the user states the CIDRs, the rule judges them."""

from __future__ import annotations

import json

from tests.conftest import FIXTURES

BASE = FIXTURES / "secondary-networks"


def _prx001(run_cli, *args: str) -> tuple[int, dict]:
    result = run_cli("scan", *args, "--select", "PRX001", "--format", "json")
    return result.code, json.loads(result.out)


def test_unstated_cidrs_are_not_evaluable_naming_each_network_and_the_input(run_cli):
    _code, report = _prx001(run_cli, str(BASE / "unstated"), "--no-config")
    (result,) = report["rules"]
    assert result["status"] == "not-evaluable" and report["findings"] == []
    reason = result["reason"]
    # the NAD with an empty ipam: which network, why, and both ways out
    assert "NodePool clusters/storage-workers: vm-networks/storage-net" in reason
    assert "empty ipam" in reason and "give the NAD an ipam range" in reason
    assert 'secondary_networks: {"vm-networks/storage-net": [<CIDR>, ...]}' in reason
    # the ClusterUserDefinedNetwork with IPAM disabled
    assert "NodePool clusters/tenant-workers: vm-networks/tenant-localnet" in reason
    assert "spec.network.localnet.ipam.mode: Disabled" in reason
    assert 'secondary_networks: {"vm-networks/tenant-localnet": [<CIDR>, ...]}' in reason


def test_stated_cidrs_are_judged_and_pass_when_covered(run_cli):
    code, report = _prx001(run_cli, str(BASE / "stated" / "nodepools.yaml"),
                           "--config", str(BASE / "stated" / "hcpscan.yaml"))
    (result,) = report["rules"]
    assert (result["status"], result["objects_checked"], code) == ("pass", 2, 0)


def test_stated_cidr_the_noproxy_misses_is_a_finding_at_the_network(run_cli):
    _code, report = _prx001(run_cli, str(BASE / "stated" / "nodepools.yaml"),
                            "--config", str(BASE / "uncovered.yaml"))
    (finding,) = report["findings"]
    assert finding["object"]["name"] == "tenant-workers"
    assert finding["field"] == "spec.platform.kubevirt.additionalNetworks[0].name"
    assert "10.230.0.0/16" in finding["message"]
    assert any("config inputs.secondary_networks" in e for e in finding["evidence"])
