"""PRX014: a proxy named by host name must first be resolved, through the cluster's DNS pods on
the port they listen on after the DNS Service's DNAT (OCPBUGS-94072, kubernetes-nmstate PR
776: DNS allowed on 53 to openshift-dns, whose pods listen on 5353)."""

from __future__ import annotations

from pathlib import Path

from hcpscan.findings.model import Status
from tests.conftest import FIXTURES
from tests.rules.harness import scan

FAIL = FIXTURES / "rules" / "PRX014" / "fail" / "proxy-by-name-dns-on-53.yaml"
TEXT = FAIL.read_text()


def _prx014(tmp_path: Path, text: str):
    (tmp_path / "in.yaml").write_text(text)
    report = scan([tmp_path / "in.yaml"], ["PRX014"])
    return report.results[0].status, report.findings


def test_dns_on_53_to_openshift_dns_leaves_the_proxy_name_unresolved() -> None:
    (found,) = scan([FAIL], ["PRX014"]).findings
    assert "cannot resolve the proxy's host name proxy.corp.example.com" in found.message
    assert "UDP 5353" in found.message and "openshift-dns" in found.message
    assert any("openshift-nmstate/allow-webhook-egress" in e and "UDP/5353" in e
               for e in found.evidence)
    assert "5353" in found.remedy.why


def test_a_proxy_given_as_an_address_needs_no_dns(tmp_path: Path) -> None:
    status, found = _prx014(tmp_path, TEXT.replace("http://proxy.corp.example.com:3128",
                                                   "http://10.0.88.4:3128"))
    assert (status, found) == (Status.PASS, [])


def test_a_pod_that_asks_another_resolver_is_not_judged_on_the_dns_pods(tmp_path: Path) -> None:
    text = TEXT.replace("      spec:\n        containers:\n        - env:",
                        "      spec:\n        dnsPolicy: Default\n        containers:\n        - env:")
    assert "dnsPolicy: Default\n        containers:\n        - env:" in text
    status, found = _prx014(tmp_path, text)
    assert found == []


def test_dns_on_5353_udp_resolves(tmp_path: Path) -> None:
    status, found = _prx014(tmp_path, TEXT.replace("      - port: 53\n", "      - port: 5353\n"))
    assert (status, found) == (Status.PASS, [])
