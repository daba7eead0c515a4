"""A rule run alone (`--select`) judges what it judges in a whole scan: loading reads only
the resources the selected rules read, so a kind a rule's judgement rests on and its
template does not declare is missed only when the rule runs alone (PRX014's proxy
reachability rests on the cluster's networks, the Network config of a must-gather)."""

from __future__ import annotations

import pytest

from hcpscan.rules.loader import builtin_rules_dir, load_rule_dirs
from tests.conftest import FIXTURES, SHARED, require
from tests.rules.harness import scan

RULE_IDS = sorted(r.id for r in load_rule_dirs([builtin_rules_dir()]))
INPUTS = {"prx014-must-gather": FIXTURES / "select" / "prx014-must-gather",
          "must-gather-aws": SHARED / "realworld" / "must-gather-aws",
          # `oc adm inspect` of HCP namespaces alone: the HostedControlPlane stands in
          "hcp-namespace-proxy": FIXTURES / "rules" / "PRX016" / "fail" / "hcp-namespace-only",
          "hcp-namespace-flows": FIXTURES / "rules" / "HCP007" / "fail" / "hcp-namespace-only",
          "hcp-namespace-ignition": FIXTURES / "rules" / "HCP001" / "fail" / "hcp-namespace-only"}


def _results(report, rule_id):  # type: ignore[no-untyped-def]
    found = sorted((f.object.kind, f.object.namespace or "", f.object.name, f.message)
                   for f in report.findings if f.rule_id == rule_id)
    (result,) = [r for r in report.results if r.rule_id == rule_id]
    return found, result.status


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_each_rule_alone_judges_what_the_whole_scan_does(name) -> None:
    folder = INPUTS[name]
    require(folder.is_dir(), f"{folder} is missing")
    whole = scan([folder], [])
    differ = {rule_id: (_results(scan([folder], [rule_id]), rule_id), _results(whole, rule_id))
              for rule_id in RULE_IDS}
    assert {k: v for k, v in differ.items() if v[0] != v[1]} == {}


def test_proxy_reachability_alone_reads_the_clusters_networks() -> None:
    """Without the Network config the cainjector's proxy is judged not evaluable."""
    found, status = _results(scan([INPUTS["prx014-must-gather"]], ["PRX014"]), "PRX014")
    assert [name for _, _, name, _ in found] == ["cert-manager-cainjector", "billing"]
