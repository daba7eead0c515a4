"""The ``reach`` template beyond the built-in rules' fixtures: the out direction to a CIDR,
protocols that must agree on a workload, listeners given as two args, its parameter
checks, and that HCP001-HCP006 all stand on it (no one-rule templates)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from hcpscan.rules.loader import builtin_rules_dir, load_rule_dirs
from hcpscan.rules.templates import TEMPLATES

HCP_RULES = [r for r in load_rule_dirs([builtin_rules_dir()]) if r.id.startswith("HCP")]

HOSTED_CLUSTER = """\
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata: {name: edge, namespace: clusters}
spec: {platform: {type: Agent}}
"""
DEPLOYMENT = """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %(name)s, namespace: clusters-edge}
spec:
  selector: {matchLabels: {app: %(name)s}}
  template:
    metadata: {labels: {app: %(name)s}}
    spec:
      containers:
      - name: main
        image: example
        args: %(args)s
"""
EGRESS = """\
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: egress, namespace: clusters-edge}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
  - to: [{ipBlock: {cidr: %(cidr)s}}]
    ports: %(ports)s
"""


def _rule(folder: Path, rule_id: str, body: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / f"{rule_id}.yaml").write_text(
        f"id: {rule_id}\ntitle: A reach check for this test\nseverity: medium\nmessage: \"{{object}} {{workload}} "
        f"{{blocked}} {{have}} {{missing}} {{ports}} {{via}}\"\n{body}")
    return folder


def _scan(run_cli, tmp_path: Path, rules: Path, rule_id: str, manifest: str) -> dict:
    (tmp_path / "in.yaml").write_text(manifest)
    result = run_cli("scan", str(tmp_path / "in.yaml"), "--rules", str(rules), "--select", rule_id,
                     "--no-config", "--format", "json")
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


def test_every_hcp_rule_stands_on_a_template_shared_with_another_rule():
    used = Counter(rule.template for rule in HCP_RULES)
    assert set(used) == {"reach", "required-flow"}  # who gets in / what must be open
    everyone = Counter(rule.template for rule in load_rule_dirs([builtin_rules_dir()]))
    assert all(everyone[name] >= 2 for name in used if name != "cel")
    for gone in ("dns_both_protocols", "egress_open", "plain_http_endpoints"):
        assert gone not in TEMPLATES


OUT_TO_CIDR = """\
check:
  template: reach
  params:
    direction: out
    sources: [{app: api}]
    to: 10.40.0.0/16
    ports: [5432]
"""


@pytest.mark.parametrize(("cidr", "status"), [("10.40.0.0/24", "fail"), ("10.0.0.0/8", "pass")])
def test_out_to_a_cidr_needs_every_address_of_it(run_cli, tmp_path: Path, cidr: str, status: str):
    rules = _rule(tmp_path / "rules", "ACME101", OUT_TO_CIDR)
    manifest = (HOSTED_CLUSTER + DEPLOYMENT % {"name": "api", "args": "[]"}
                + EGRESS % {"cidr": cidr, "ports": "[{port: 5432}]"})
    report = _scan(run_cli, tmp_path, rules, "ACME101", manifest)
    assert report["rules"][0]["status"] == status
    if status == "fail":
        (finding,) = report["findings"]
        assert "10.40.1.0-10.40.255.255" in finding["message"] or "10.40.128.0/17" in finding["message"]
        assert finding["field"] == "spec.template.spec"


AGREE_ON_WORKLOADS = """\
applies_to: {kinds: [Deployment]}
check:
  template: reach
  params: {direction: out, to: dns, ports: [53], protocols: [UDP, TCP], expect: all-protocols-if-any}
"""


def test_protocols_must_agree_per_workload_when_the_subject_is_a_workload(run_cli, tmp_path: Path):
    rules = _rule(tmp_path / "rules", "ACME102", AGREE_ON_WORKLOADS)
    udp_only = (HOSTED_CLUSTER + DEPLOYMENT % {"name": "api", "args": "[]"}
                + EGRESS % {"cidr": "10.0.0.10/32", "ports": "[{port: 53, protocol: UDP}]"})
    report = _scan(run_cli, tmp_path, rules, "ACME102", udp_only)
    (finding,) = report["findings"]
    assert "UDP TCP" in finding["message"] and finding["field"] == "spec.template.spec"
    both = udp_only.replace("[{port: 53, protocol: UDP}]",
                            "[{port: 53, protocol: UDP}, {port: 53, protocol: TCP}]")
    assert _scan(run_cli, tmp_path, rules, "ACME102", both)["rules"][0]["status"] == "pass"


LOOPBACK = """\
applies_to: {kinds: [Deployment]}
check:
  template: reach
  params:
    expect: none
    ports: [8080]
    listeners: {flags: [--metrics-addr], default: ":8080"}
"""


@pytest.mark.parametrize(("args", "status"), [
    ('["--metrics-addr", "0.0.0.0:8080"]', "fail"),
    ('["--metrics-addr", "127.0.0.1:8080"]', "pass"),
    ('["--metrics-addr=localhost:8080"]', "pass"),
    ("[]", "fail"),
])
def test_a_listener_on_loopback_is_read_from_the_args(run_cli, tmp_path: Path, args: str,
                                                        status: str):
    rules = _rule(tmp_path / "rules", "ACME103", LOOPBACK)
    report = _scan(run_cli, tmp_path, rules, "ACME103",
                   HOSTED_CLUSTER + DEPLOYMENT % {"name": "metrics", "args": args})
    assert report["rules"][0]["status"] == status
    if args.startswith('["--metrics-addr",') and status == "fail":
        assert report["findings"][0]["field"] == "spec.template.spec.containers[0].args[1]"


def test_parameters_of_the_other_direction_are_refused_with_their_line(run_cli, tmp_path: Path):
    rules = _rule(tmp_path / "rules", "ACME104", """\
check:
  template: reach
  params:
    direction: out
    allowed: [10.0.0.0/8]
    expect: only-allowed
    sources: [{port: 443}]
""")
    (tmp_path / "in.yaml").write_text(HOSTED_CLUSTER)
    result = run_cli("scan", str(tmp_path / "in.yaml"), "--rules", str(rules), "--no-config")
    assert result.code == 2 and "Traceback" not in result.err
    for text in ("allowed is for direction in", "expect only-allowed is not for direction out",
                 "a selector needs app or labels"):
        assert text in result.err
