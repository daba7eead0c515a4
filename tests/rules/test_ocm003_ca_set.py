"""OCM003 compares the CA bytes as OCM does (reflect.DeepEqual on the decoded bytes) and
says the difference as the certificates the two kubeconfigs trust, never as the blob."""

from __future__ import annotations

from hcpscan.findings.model import Status
from tests.conftest import FIXTURES
from tests.rules.harness import scan


def test_same_cas_in_another_order_with_crlf_differ_as_ocm_compares_bytes():
    """IsHubKubeconfigValid: !reflect.DeepEqual(CertificateAuthorityData): the same two CAs
    in another order with CRLF line ends make the hub kubeconfig invalid to the agent."""
    report = scan([FIXTURES / "rules" / "OCM003" / "fail" / "same-cas-other-order-crlf.yaml"],
                  ["OCM003"])
    (finding,) = report.findings
    assert report.results[0].status is Status.FAIL
    assert "certificate-authority-data" in finding.message
    evidence = "\n".join(finding.evidence)
    assert "holds the same certificates as" in evidence
    assert "other bytes: order/line ends" in evidence
    assert "LS0tLS1CRUdJTi" not in evidence


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
