"""HCP004 on a DNS egress rule that names its port (``port: dns``): the name resolves on the
cluster's DNS pods in the input; without them the policy is not evaluable, saying which rule,
where, and what to add, never passed silently."""

from __future__ import annotations

from pathlib import Path

from hcpscan.findings.model import Status
from tests.conftest import FIXTURES
from tests.rules.harness import scan

HCP004 = FIXTURES / "rules" / "HCP004"
ALONE = HCP004 / "no-dns-pods" / "named-dns-port.yaml"


def test_a_named_dns_port_without_the_dns_pods_is_not_evaluable():
    report = scan([ALONE], ["HCP004"])
    (result,) = report.results
    assert report.findings == []
    assert result.status is Status.NOT_EVALUABLE, result.reason
    reason = result.reason
    assert "billing/allow-dns" in reason
    assert f"egress rule #1 names port 'dns' (UDP) at {ALONE}:46" in reason
    assert "oc get daemonset dns-default -n openshift-dns" in reason


def test_with_the_dns_pods_the_name_resolves_and_the_rule_judges():
    report = scan([HCP004 / "fail" / "named-dns-port.yaml"], ["HCP004"])
    assert report.results[0].status is Status.FAIL
    assert [f.object.name for f in report.findings] == ["allow-dns"]


def test_a_name_that_cannot_change_the_verdict_leaves_it_judged(tmp_path: Path):
    """Numeric rules open both protocols already: whatever "dns" means, DNS is whole."""
    text = ALONE.read_text().replace(
        "      - port: dns\n        protocol: UDP\n",
        "      - port: dns\n        protocol: UDP\n      - port: 5353\n        protocol: UDP\n"
        "      - port: 5353\n        protocol: TCP\n")
    (tmp_path / "billing.yaml").write_text(text)
    report = scan([tmp_path], ["HCP004"])
    assert report.results[0].status is Status.PASS, report.results[0].reason
