"""CI-native formats: GitHub workflow-command annotations and GitLab Code Quality."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema

from hcpscan.findings.model import Finding, Location, Severity
from hcpscan.reporters import REPORTERS, ReportOptions
from hcpscan.reporters.github import command, escape_data
from tests.conftest import FIXTURES
from tests.reporters.reports import ARCHIVE_PATH, hcp_policy, ignition_finding, report_with

GITLAB_SCHEMA = json.loads((Path(__file__).with_name("schemas") / "gitlab-codequality.schema.json")
                           .read_text(encoding="utf-8"))
# ::level key=value,key=value::message — values without raw ':' ',' or line breaks
ANNOTATION = re.compile(r"^::(error|warning|notice)( ([a-z]+=[^:,\r\n]*)(,[a-z]+=[^:,\r\n]*)*)?::[^\r\n]*$")


def github(report) -> list[str]:
    return REPORTERS["github"].render(report, ReportOptions(sarif_root=".")).splitlines()


def gitlab(report) -> list[dict]:
    return json.loads(REPORTERS["gitlab"].render(report, ReportOptions(sarif_root=".")))


def test_github_one_annotation_per_failing_finding(realistic):
    lines = github(realistic)
    annotations = [line for line in lines if line.startswith("::")]
    assert all(ANNOTATION.match(line) for line in annotations), annotations
    failing = [f for f in realistic.findings if f.status.value == "fail"]
    # one per failing finding plus the input problem; suppressed findings are not annotated
    assert len(annotations) == len(failing) + len(realistic.diagnostics)
    assert not any("Secondary network 192.168.10.0/24" in line for line in annotations)
    first = annotations[0]
    assert first.startswith("::error title=HCP-NET-001 [critical]")
    assert ",file=gitops/hcp/networkpolicies.yaml,line=12,col=7::" in first or \
        ",file=gitops/hcp/networkpolicies.yaml,line=26,col=7::" in first
    assert lines[-1].startswith("hcpscan: found ")


def test_github_levels_and_places(realistic):
    annotations = [line for line in github(realistic) if line.startswith("::")]
    info = next(a for a in annotations if "HCP-INFO-001" in a)
    assert info.startswith("::notice ")
    live = next(a for a in annotations if "management KAS" in a)
    assert "file=" not in live  # a live object has no file in the repository
    archived = next(a for a in annotations if "53/UDP but not 53/TCP" in a)
    assert f"file={ARCHIVE_PATH.split('!')[0]}" in archived and "line=" not in archived
    assert "%0Aat: " in archived  # the member and line are named in the message
    problem = next(a for a in annotations if "archive is truncated" in a)
    assert problem.startswith("::warning title=hcpscan input,file=dumps/hypershift-dump.tar.gz")


def test_github_input_cannot_forge_a_command():
    finding = ignition_finding()
    finding.message = "bad\n::error file=x::forged 100%"
    lines = github(report_with([finding]))
    assert sum(line.startswith("::") for line in lines) == 1
    assert "forged 100%25" in lines[0]
    assert escape_data("a%\r\nb") == "a%25%0D%0Ab"
    assert command("warning", "m", title="a:b,c") == "::warning title=a%3Ab%2Cc::m"


def test_gitlab_valid_against_the_code_quality_schema(realistic):
    issues = gitlab(realistic)
    jsonschema.validate(issues, GITLAB_SCHEMA)
    assert len(issues) == sum(f.status.value == "fail" for f in realistic.findings)
    fingerprints = [i["fingerprint"] for i in issues]
    assert len(set(fingerprints)) == len(fingerprints)
    by_rule = {i["check_name"]: i for i in issues}
    assert by_rule["HCP-INFO-001"]["severity"] == "info"
    assert {i["severity"] for i in issues if i["check_name"] == "HCP-NET-001"} == {"blocker"}
    archived = next(i for i in issues if "53/UDP but not 53/TCP" in i["description"])
    assert archived["location"] == {"path": ARCHIVE_PATH.split("!")[0], "lines": {"begin": 1}}
    live = next(i for i in issues if "management KAS" in i["description"])
    assert live["location"]["path"].startswith("cluster/prod-context/")


def test_gitlab_fingerprint_stable_across_lines_and_unique_for_twins():
    one = ignition_finding(line=12)
    moved = ignition_finding(line=40)
    assert gitlab(report_with([one]))[0]["fingerprint"] == gitlab(report_with([moved]))[0]["fingerprint"]
    twin = Finding(one.rule_id, Severity.CRITICAL, hcp_policy("nodeport-ignition-proxy"), one.field,
                   Location(one.location.path, 30, 7), "the same object and field again")
    prints = [i["fingerprint"] for i in gitlab(report_with([one, twin]))]
    assert len(set(prints)) == 2


def test_cli_writes_both_for_the_example(run_cli, tmp_path):
    quality = tmp_path / "gl-code-quality.json"
    result = run_cli("scan", str(FIXTURES / "example"), "--format", "github",
                     "--format", f"gitlab={quality}")
    assert result.code == 1  # the example has findings
    annotations = [line for line in result.out.splitlines() if line.startswith("::")]
    assert annotations and all(ANNOTATION.match(a) for a in annotations)
    assert all("file=" in a for a in annotations if "hcpscan input" not in a)
    issues = json.loads(quality.read_text(encoding="utf-8"))
    jsonschema.validate(issues, GITLAB_SCHEMA)
    assert len(issues) == len(annotations) - result.out.count("title=hcpscan input")
