"""PRX005 on a kube-apiserver static pod that got proxy env (kubeadm#666), in a dump with no
Cluster or Network: its own flags say the service network and its address."""

from __future__ import annotations

from hcpscan.findings.model import Status
from tests.conftest import FIXTURES
from tests.rules.harness import scan

CASE = FIXTURES / "static-pods" / "kubeadm-apiserver-proxy-env"


def test_the_service_range_and_advertise_address_of_its_flags_are_asked():
    report = scan([CASE / "bad"], ["PRX005"])
    [finding] = report.findings
    assert finding.message == (
        "Pod kube-system/kube-apiserver-cp1 container kube-apiserver uses a proxy but its noProxy "
        "misses service network 10.96.0.0/12, KAS service IP 10.96.0.1, .svc, .cluster.local, "
        "its advertise address 10.10.0.11")
    assert any("--service-cluster-ip-range" in e for e in finding.evidence)
    # judged on its flags: not "the cluster's networks are not in the input"
    assert report.results[0].status is Status.FAIL and "not in the input" not in \
        report.results[0].reason


def test_a_no_proxy_covering_its_flags_passes():
    result = scan([CASE / "good"], ["PRX005"]).results[0]
    assert result.status is Status.PASS, result.reason


def test_the_kubeadm_annotation_gives_the_address_without_the_flag(tmp_path):
    text = (CASE / "bad" / "namespaces" / "kube-system" / "core" / "pods.yaml").read_text()
    (tmp_path / "pods.yaml").write_text(
        text.replace("      - --advertise-address=10.10.0.11\n", "")
        .replace("10.10.0.11:6443", "10.10.0.12:6443"))
    [finding] = scan([tmp_path], ["PRX005"]).findings
    assert finding.message.endswith("its advertise address 10.10.0.12")
