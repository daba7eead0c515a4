"""SARIF: valid against both schemas, and every rule GitHub code scanning enforces."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from hcpscan.findings.model import Finding, Location, ObjectRef, Severity, Status
from hcpscan.reporters import REPORTERS, ReportOptions
from hcpscan.reporters.linehash import line_hashes
from hcpscan.reporters.locations import split_archive_path
from hcpscan.reporters.sarif import build_log
from tests.reporters.reports import (
    ARCHIVE_MEMBER_YAML,
    HOSTED_CLUSTER_PATH,
    HOSTED_CLUSTER_YAML,
    POLICIES_PATH,
    POLICIES_YAML,
    ignition_finding,
    many_findings,
    report_with,
)
from tests.reporters.sarif_checks import SCHEMA_FILES, schema_errors


def sarif(report, options: ReportOptions) -> dict:
    """Render through the registry and parse, as an uploader would read the file."""
    return json.loads(REPORTERS["sarif"].render(report, options))


@pytest.fixture
def log(realistic, options):
    return sarif(realistic, options)


@pytest.fixture
def run(log):
    return log["runs"][0]


def results_by_object(run) -> dict[str, dict]:
    return {r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]: r
            for r in run["results"]}


@pytest.mark.parametrize("schema", SCHEMA_FILES)
def test_realistic_report_is_valid_against_the_schema(log, schema):
    assert schema_errors(log, schema) == []


@pytest.mark.parametrize("schema", SCHEMA_FILES)
def test_the_schemas_do_catch_a_broken_log(log, schema):
    del log["runs"][0]["tool"]["driver"]["name"]
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert len(schema_errors(log, schema)) >= 2


@pytest.mark.parametrize("schema", SCHEMA_FILES)
def test_an_empty_scan_is_valid_too(options, schema):
    assert schema_errors(sarif(report_with([]), options), schema) == []


def test_log_header_and_one_run(log):
    assert log["version"] == "2.1.0"
    assert log["$schema"].startswith("https://")
    assert len(log["runs"]) == 1


def test_category_is_the_automation_id_with_a_trailing_slash(realistic):
    default = sarif(realistic, ReportOptions(read_text=lambda p: None))
    assert default["runs"][0]["automationDetails"]["id"] == "hcpscan/"
    custom = sarif(realistic, ReportOptions(sarif_category="hcpscan/prod-hub",
                                            read_text=lambda p: None))
    assert custom["runs"][0]["automationDetails"]["id"] == "hcpscan/prod-hub/"
    kept = sarif(realistic, ReportOptions(sarif_category="mgmt/", read_text=lambda p: None))
    assert kept["runs"][0]["automationDetails"]["id"] == "mgmt/"


def test_driver_names_the_tool(run):
    driver = run["tool"]["driver"]
    assert driver["name"] == "hcpscan"
    assert driver["version"] == "0.1.0"
    assert driver["informationUri"].startswith("https://")


def test_every_rule_that_ran_is_described(realistic, run):
    ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert set(ids) == {r.rule_id for r in realistic.results}
    assert ids == sorted(ids)


def test_rule_descriptors_carry_docs_level_tags_precision(run):
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert isinstance(rule["properties"]["tags"], list)
        assert len(rule["properties"]["tags"]) <= 10
        assert rule["properties"]["precision"] in ("very-high", "high", "medium", "low")


def test_help_markdown_has_the_ruff_style_sections_with_yaml(run):
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "HCP-NET-001")
    markdown = rule["help"]["markdown"]
    headings = re.findall(r"^## (.+)$", markdown, flags=re.M)
    assert headings == ["What it does", "Why is this bad?", "Failing example",
                        "Passing example", "How to fix", "Known problems", "References"]
    assert markdown.count("```yaml\n") == 2
    assert "ipBlock" in markdown.split("## Passing example")[1].split("## How to fix")[0]
    assert "Why is this bad?" in rule["help"]["text"]


@pytest.mark.parametrize(("rule_id", "score", "level"), [
    ("HCP-NET-001", "9.5", "error"),      # critical
    ("HCP-NET-004", "8.0", "error"),      # high
    ("HCP-PROXY-002", "5.5", "warning"),  # medium
    ("HCP-PROXY-005", "3.0", "note"),     # low
])
def test_security_severity_per_severity(run, rule_id, score, level):
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == rule_id)
    assert rule["properties"]["security-severity"] == score
    assert rule["defaultConfiguration"]["level"] == level
    assert "security" in rule["properties"]["tags"]


def test_info_is_a_note_without_security_severity(run):
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "HCP-INFO-001")
    assert "security-severity" not in rule["properties"]
    assert "security" not in rule["properties"]["tags"]
    assert rule["defaultConfiguration"]["level"] == "note"
    result = next(r for r in run["results"] if r["ruleId"] == "HCP-INFO-001")
    assert result["level"] == "note"


def test_every_result_has_rule_index_level_message_and_a_location(run):
    rules = run["tool"]["driver"]["rules"]
    assert run["results"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note")
        assert result["message"]["text"].strip()
        assert 1 <= len(result["locations"]) <= 1000
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"]
        assert physical["region"]["startLine"] >= 1
        assert "uriBaseId" not in physical["artifactLocation"]


def test_uris_are_relative_references(run):
    for result in run["results"]:
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert not uri.startswith("/")
        assert "://" not in uri and not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", uri)
        assert "!" not in uri and " " not in uri and "\\" not in uri
        # RFC 3986 relative reference: unreserved, sub-delims, '@', '/' and %XX only
        assert re.fullmatch(r"(?:[A-Za-z0-9\-._~$&'()*+,;=@/]|%[0-9A-F]{2})+", uri), uri


def test_region_starts_at_the_offending_field(run):
    result = results_by_object(run)["management/hcp-ns/NetworkPolicy/nodeport-ignition"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == POLICIES_PATH
    assert physical["region"] == {"startLine": 26, "startColumn": 7}
    assert POLICIES_YAML.splitlines()[25].strip() == "- port: 9090"


def test_archive_member_is_a_folder_named_after_the_archive(run):
    result = results_by_object(run)["hostedcluster-prod/openshift-dns/NetworkPolicy/allow-dns"]
    location = result["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == (
        "dumps/hypershift-dump.tar.gz/hostedcluster-prod/namespaces/openshift-dns/dns.yaml")
    assert location["physicalLocation"]["region"]["startLine"] == 9
    assert "dumps/hypershift-dump.tar.gz!" in location["message"]["text"]
    assert result["partialFingerprints"]["primaryLocationLineHash"] == (
        line_hashes(ARCHIVE_MEMBER_YAML)[8])


def test_live_cluster_finding_has_a_virtual_location_and_says_so(run):
    result = results_by_object(run)["prod-context/hcp-ns/NetworkPolicy/management-kas"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == (
        "cluster/prod-context/hcp-ns/NetworkPolicy/management-kas.yaml")
    assert physical["region"]["startLine"] == 1
    assert "virtual" in result["message"]["text"]
    assert result["properties"]["virtualLocation"] is True
    assert "primaryLocationLineHash" not in result["partialFingerprints"]


def test_standard_input_is_anchored_to_a_virtual_path(run):
    result = results_by_object(run)["management/hcp-ns/NetworkPolicy/from-stdin"]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "cluster/management/hcp-ns/NetworkPolicy/from-stdin.yaml"


def test_cluster_scoped_object_without_file_uses_a_reserved_namespace(options):
    finding = Finding("HCP-NET-001", Severity.HIGH,
                      ObjectRef("live", "config.openshift.io/v1", "Proxy", "", "cluster"),
                      "spec.noProxy", Location(""), "noProxy lacks the service network")
    result = sarif(report_with([finding]), options)["runs"][0]["results"][0]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "cluster/live/_cluster/Proxy/cluster.yaml"


def test_absolute_paths_become_relative_to_the_sarif_root(tmp_path):
    manifest = tmp_path / "repo" / "deploy" / "my policies.yaml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(POLICIES_YAML, encoding="utf-8")
    finding = replace(ignition_finding(), location=Location(str(manifest), 12, 7))
    options = ReportOptions(sarif_root=str(tmp_path / "repo"))  # default read_text: the disk
    result = sarif(report_with([finding]), options)["runs"][0]["results"][0]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "deploy/my%20policies.yaml"
    assert result["partialFingerprints"]["primaryLocationLineHash"] == line_hashes(
        POLICIES_YAML)[11]


def test_a_file_outside_the_root_is_never_absolute(tmp_path):
    finding = replace(ignition_finding(), location=Location(str(tmp_path / "elsewhere.yaml"), 3))
    options = ReportOptions(sarif_root=str(tmp_path / "repo"), read_text=lambda p: None)
    result = sarif(report_with([finding]), options)["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "../elsewhere.yaml")


def test_member_names_cannot_climb_out_of_their_archive(options):
    finding = replace(ignition_finding(),
                      location=Location("dump.zip!../../etc/./passwd.yaml", 2))
    result = sarif(report_with([finding]), options)["runs"][0]["results"][0]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "dump.zip/etc/passwd.yaml"


def test_only_an_archive_name_before_a_bang_splits_the_path():
    assert split_archive_path("a.tar.gz!x/b.zip!c.yaml") == ["a.tar.gz", "x/b.zip", "c.yaml"]
    assert split_archive_path("weird!name.yaml") == ["weird!name.yaml"]


def test_fingerprints_hold_our_key_and_githubs_line_hash(realistic, run):
    by_key = {f.key: f for f in realistic.findings}
    texts = {POLICIES_PATH: POLICIES_YAML, HOSTED_CLUSTER_PATH: HOSTED_CLUSTER_YAML}
    for result in run["results"]:
        finding = by_key[result["partialFingerprints"]["hcpscan/v1"]]
        assert finding.rule_id == result["ruleId"]
        if finding.location.path in texts:
            expected = line_hashes(texts[finding.location.path])[finding.location.line - 1]
            assert result["partialFingerprints"]["primaryLocationLineHash"] == expected


def test_our_fingerprint_ignores_the_line(options):
    moved = replace(ignition_finding(), location=Location(POLICIES_PATH, 40, 1))
    first = sarif(report_with([ignition_finding()]), options)["runs"][0]["results"][0]
    second = sarif(report_with([moved]), options)["runs"][0]["results"][0]
    assert first["partialFingerprints"]["hcpscan/v1"] == second["partialFingerprints"][
        "hcpscan/v1"]


def test_unreadable_file_gets_no_line_hash_but_keeps_our_key(realistic):
    run = sarif(realistic, ReportOptions(read_text=lambda path: None))["runs"][0]
    for result in run["results"]:
        assert set(result["partialFingerprints"]) == {"hcpscan/v1"}


def test_suppressed_findings_are_emitted_with_their_kind_and_justification(run):
    suppressed = {r["ruleId"]: r["suppressions"] for r in run["results"] if "suppressions" in r}
    assert suppressed["HCP-PROXY-002"] == [{
        "kind": "inSource", "status": "accepted",
        "justification": "secondary network is reached without the proxy",
        "properties": {"source": "annotation"}}]
    baseline = suppressed["HCP-PROXY-005"][0]
    assert baseline["kind"] == "external"
    assert baseline["justification"] == "accepted in baseline"
    assert baseline["properties"] == {"source": "baseline", "expires": "2027-01-01"}
    assert len(suppressed) == 2


def test_failing_findings_have_no_suppressions(realistic, run):
    failing = sum(1 for f in realistic.findings if f.status is Status.FAIL)
    assert sum(1 for r in run["results"] if "suppressions" not in r) == failing


def test_message_carries_the_evidence(run):
    result = results_by_object(run)["management/hcp-ns/NetworkPolicy/nodeport-ignition-proxy"]
    assert ("0.0.0.0/0 → 8443/TCP allowed by NetworkPolicy hcp-ns/nodeport-ignition-proxy "
            "(any source), no perimeter rule") in result["message"]["text"]


def test_not_evaluable_rules_and_input_problems_are_notifications(run):
    notes = run["invocations"][0]["toolExecutionNotifications"]
    not_evaluable = [n for n in notes if n.get("associatedRule")]
    assert [n["associatedRule"]["id"] for n in not_evaluable] == ["HCP-NET-011"]
    rules = run["tool"]["driver"]["rules"]
    assert rules[not_evaluable[0]["associatedRule"]["index"]]["id"] == "HCP-NET-011"
    assert "no Service objects" in not_evaluable[0]["message"]["text"]
    assert any("archive is truncated" in n["message"]["text"] for n in notes)


def test_times_come_from_the_report_metadata(run):
    invocation = run["invocations"][0]
    assert invocation["startTimeUtc"] == "2026-02-03T04:05:06Z"
    assert invocation["endTimeUtc"] == "2026-02-03T04:05:07.500Z"
    assert invocation["executionSuccessful"] is True


def test_no_time_stamps_without_metadata(realistic, options):
    realistic.metadata.clear()
    invocation = sarif(realistic, options)["runs"][0]["invocations"][0]
    assert "startTimeUtc" not in invocation and "endTimeUtc" not in invocation


class TestTruncation:
    LIMIT = 25_000

    @pytest.fixture(scope="class")
    @classmethod
    def big(cls):
        findings = many_findings(cls.LIMIT + 3_000)
        report = report_with(findings)
        return findings, build_log(report, ReportOptions(read_text=lambda p: None))["runs"][0]

    def test_keeps_at_most_the_limit(self, big):
        _, run = big
        assert len(run["results"]) == self.LIMIT

    def test_keeps_the_highest_severities(self, big):
        findings, run = big
        per_severity = {sev: sum(1 for f in findings if f.severity is sev) for sev in Severity}
        kept = [r["properties"]["severity"] for r in run["results"]]
        # 28,000 findings, 5,600 per severity: everything above low survives
        for sev in (Severity.CRITICAL, Severity.HIGH, Severity.MEDIUM, Severity.LOW):
            assert kept.count(sev.value) == per_severity[sev]
        assert kept.count("info") == self.LIMIT - 4 * per_severity[Severity.CRITICAL]
        ranks = [Severity(s).rank for s in kept]
        assert ranks == sorted(ranks, reverse=True)

    def test_records_the_truncation(self, big):
        _, run = big
        notes = run["invocations"][0]["toolExecutionNotifications"]
        cut = [n for n in notes if n.get("descriptor", {}).get("id") == "hcpscan/results-truncated"]
        assert len(cut) == 1
        assert cut[0]["level"] == "warning"
        assert cut[0]["properties"] == {"total": 28_000, "kept": 25_000, "omitted": {
            "critical": 0, "high": 0, "medium": 0, "low": 0, "info": 3_000}}
        assert "3000" in cut[0]["message"]["text"]

    def test_a_small_run_records_no_truncation(self, run):
        notes = run["invocations"][0]["toolExecutionNotifications"]
        assert not any(n.get("descriptor", {}).get("id") == "hcpscan/results-truncated"
                       for n in notes)

    def test_failing_beats_suppressed_at_equal_severity(self):
        failing = ignition_finding()
        hidden = replace(ignition_finding("other"), status=Status.SUPPRESSED)
        options = ReportOptions(read_text=lambda p: None, sarif_max_results=1)
        run = build_log(report_with([hidden, failing]), options)["runs"][0]
        assert [r["partialFingerprints"]["hcpscan/v1"] for r in run["results"]] == [failing.key]
