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


# HCP008's control-plane DNS flow, its policy naming the DNS ports as OpenShift's pods do
HCP008_UDP_ONLY = FIXTURES / "rules" / "HCP008" / "fail" / "dns-one-protocol.yaml"
DNS_DAEMONSET = """\
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dns-default, namespace: openshift-dns}
spec:
  selector:
    matchLabels: {dns.operator.openshift.io/daemonset-dns: default}
  template:
    metadata:
      labels: {dns.operator.openshift.io/daemonset-dns: default}
    spec:
      containers:
      - name: dns
        image: quay.io/openshift/origin-coredns:4.16
        ports:
        - {containerPort: 5353, name: dns, protocol: UDP}
        - {containerPort: 5353, name: dns-tcp, protocol: TCP}
"""


def _named_hcp(tmp_path: Path, pods: str) -> Path:
    text = HCP008_UDP_ONLY.read_text().replace(
        "    - {port: 5353, protocol: UDP}\n",
        "    - {port: dns, protocol: UDP}\n    - {port: dns-tcp, protocol: TCP}\n")
    (tmp_path / "hcp.yaml").write_text(text + pods)
    return tmp_path


def test_the_control_plane_dns_flow_resolves_names_on_the_dns_pods(tmp_path: Path):
    report = scan([_named_hcp(tmp_path, DNS_DAEMONSET)], ["HCP008"])
    assert report.results[0].status is Status.PASS, [f.message for f in report.findings]


def test_a_name_the_dns_pods_lack_opens_nothing(tmp_path: Path):
    pods = DNS_DAEMONSET.replace("        - {containerPort: 5353, name: dns-tcp, protocol: TCP}\n", "")
    report = scan([_named_hcp(tmp_path, pods)], ["HCP008"])
    assert report.results[0].status is Status.FAIL
    assert any("TCP" in f.message for f in report.findings)


def test_the_control_plane_dns_flow_without_the_dns_pods_is_not_known(tmp_path: Path):
    report = scan([_named_hcp(tmp_path, "")], ["HCP008"])
    (result,) = report.results
    assert report.findings == [] and result.status is Status.NOT_EVALUABLE, result.reason
    assert "clusters-dns/egress-allowlist egress rule #1 names port 'dns' (UDP), 'dns-tcp' (TCP)" \
        in result.reason
    assert "oc get daemonset dns-default -n openshift-dns" in result.reason


# a named port counts only where it could open what a workload lacks: on a rule whose peers
# may be the DNS pods, in a protocol DNS is missing
OWN_NAMESPACE = HCP004 / "fail" / "own-namespace-named-port.yaml"
NOT_DNS = HCP004 / "fail" / "named-ports-not-dns.yaml"


def test_a_named_port_to_the_policys_own_pods_leaves_missing_tcp_a_failure():
    report = scan([OWN_NAMESPACE], ["HCP004"])
    (result,) = report.results
    assert result.status is Status.FAIL, result.reason
    (finding,) = report.findings
    assert finding.object.name == "allow-egress" and "TCP" in finding.message


def test_names_of_a_protocol_not_missing_or_to_other_namespaces_leave_it_a_failure():
    report = scan([NOT_DNS], ["HCP004"])
    (result,) = report.results
    assert result.status is Status.FAIL, result.reason
    assert [f.object.name for f in report.findings] == ["allow-egress"]


def test_a_tcp_name_to_any_namespace_may_be_dns_so_it_is_not_evaluable(tmp_path: Path):
    text = NOT_DNS.read_text().replace(
        "          matchLabels:\n            kubernetes.io/metadata.name: ledger\n", "")
    text = text.replace("      - namespaceSelector:\n    podSelector:",
                        "      - namespaceSelector: {}\n    podSelector:")
    assert "ledger" not in text.split("items:")[1]
    (tmp_path / "billing.yaml").write_text(text)
    report = scan([tmp_path], ["HCP004"])
    (result,) = report.results
    assert report.findings == [] and result.status is Status.NOT_EVALUABLE, result.reason
    assert "egress rule #3 names port 'https' (TCP)" in result.reason
    assert "'syslog'" not in result.reason  # UDP DNS is open: that name changes nothing


def test_the_control_plane_dns_flow_with_a_name_only_of_the_open_protocol_is_blocked(tmp_path: Path):
    """UDP open by number, TCP by nothing: a UDP name cannot open TCP, whatever it means."""
    text = HCP008_UDP_ONLY.read_text()
    assert "    - {port: 5353, protocol: UDP}\n" in text
    (tmp_path / "hcp.yaml").write_text(text.replace(
        "    - {port: 5353, protocol: UDP}\n",
        "    - {port: 5353, protocol: UDP}\n    - {port: dns, protocol: UDP}\n"))
    report = scan([tmp_path], ["HCP008"])
    assert report.results[0].status is Status.FAIL, report.results[0].reason
    assert any("TCP" in f.message for f in report.findings)
