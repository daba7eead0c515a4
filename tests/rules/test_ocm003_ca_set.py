"""OCM003 compares the certificates the two kubeconfigs trust, not how they are written."""

from __future__ import annotations

from hcpscan.findings.model import Status
from tests.conftest import FIXTURES
from tests.rules.harness import scan


def test_same_cas_in_another_order_with_crlf_agree():
    report = scan([FIXTURES / "rules" / "OCM003" / "pass" / "same-cas-other-order-crlf.yaml"],
                  ["OCM003"])
    assert report.findings == [] and report.results[0].status is Status.PASS


def test_a_missing_ca_is_named_by_its_certificate_never_by_the_blob():
    report = scan([FIXTURES / "rules" / "OCM003" / "fail" / "hub-kubeconfig-lacks-proxy-ca.yaml"],
                  ["OCM003"])
    (finding,) = report.findings
    assert "certificate-authority-data" in finding.message
    evidence = "\n".join(finding.evidence)
    assert "holds 2 certificates: hub-ca (sha256 " in evidence
    assert "holds 1 certificate: hub-ca (sha256 " in evidence
    assert "certificate-authority-data lacks proxy-ca (sha256 " in evidence
    assert "LS0tLS1CRUdJTi" not in evidence
