"""OVN-Kubernetes applies policies after DNAT: answers about OpenShift DNS (the dns-default
Service on 53 in front of pods listening on 5353) say which port policies see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import FIXTURES

DNS = FIXTURES / "openshift-dns"
DNS_SERVICE = "---\n" + (DNS / "dns-service.yaml").read_text()
DNS_PODS = "---\n" + (DNS / "dns-pods.yaml").read_text()
UDP_ONLY = "---\n" + (DNS / "payments.yaml").read_text()  # HCP004's failing example
NOTE = ("# policies apply after DNAT: Service openshift-dns/dns-default 53 → pods 5353 "
        "(UDP, TCP), so rules towards the pods must name 5353")


def _input(tmp_path: Path, text: str) -> str:
    (tmp_path / "in.yaml").write_text(text)
    return str(tmp_path)


def test_the_list_says_policies_see_the_pod_port(run_cli, tmp_path):
    path = _input(tmp_path, DNS_SERVICE + DNS_PODS + UDP_ONLY)
    result = run_cli("connectivity", "--no-progress", path)
    assert result.code == 0, result.err
    assert result.out.splitlines()[0] == NOTE
    assert "9154" not in result.out.splitlines()[0]  # same port on both sides: nothing to say
    doc = json.loads(run_cli("connectivity", "--no-progress", path, "--format", "json").out)
    assert doc["notes"] == [NOTE[2:]]


@pytest.mark.parametrize("text", [DNS_PODS + UDP_ONLY, DNS_SERVICE + UDP_ONLY],
                         ids=["no dns-default Service", "no DNS pods to resolve its ports"])
def test_no_note_without_the_service_and_its_pods(run_cli, tmp_path, text):
    path = _input(tmp_path, text)
    result = run_cli("connectivity", "--no-progress", path)
    assert result.code == 0, result.err
    assert "DNAT" not in result.out
    assert "notes" not in json.loads(run_cli("connectivity", "--no-progress", path,
                                             "--format", "json").out)


def test_a_question_about_the_dns_pods_says_so_and_others_do_not(run_cli, tmp_path):
    path = _input(tmp_path, DNS_SERVICE + DNS_PODS + UDP_ONLY)
    dns = run_cli("connectivity", "--no-progress", path, "--to", "openshift-dns/dns-default",
                  "--port", "5353", "--protocol", "UDP", "--from", "payments/api")
    assert dns.code == 0, dns.err
    assert dns.out.splitlines()[0] == NOTE
    api = run_cli("connectivity", "--no-progress", path, "--to", "payments/api", "--port", "80")
    assert api.code == 0, api.err
    assert "DNAT" not in api.out


def _hcp004(run_cli, tmp_path: Path, text: str) -> list[dict]:
    out = tmp_path / "r.json"
    result = run_cli("scan", "--no-progress", "--no-config", "--select", "HCP004", "--format",
                     f"json={out}", _input(tmp_path, text))
    assert result.code in (0, 1), result.err  # a medium finding does not fail the scan
    return [f for f in json.loads(out.read_text())["findings"] if f["rule_id"] == "HCP004"]


def test_hcp004_evidence_names_the_dnat(run_cli, tmp_path):
    (finding,) = _hcp004(run_cli, tmp_path, DNS_SERVICE + DNS_PODS + UDP_ONLY)
    assert NOTE[2:] in finding["evidence"]


def test_hcp004_without_the_dns_service_has_no_dnat_evidence(run_cli, tmp_path):
    (finding,) = _hcp004(run_cli, tmp_path, UDP_ONLY)
    assert not any("DNAT" in e for e in finding["evidence"])
