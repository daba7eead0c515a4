"""Every report counts the input passed over on purpose, per reason, whatever the reasons are."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from hcpscan.findings.model import PassedOver
from hcpscan.reporters import JSON_SCHEMA_PATH, REPORTERS, ReportOptions
from tests.reporters.reports import realistic_report

PASSED_OVER = [
    PassedOver("hidden file", 2, "gitops/.env"),
    PassedOver("left out (files): no selected rule reads the resource", 5,
               "mg/namespaces/a/core/events.yaml", {"apirequestcounts": 4, "leases": 1}),
    # a reason no reporter knows: reporting must not depend on the list of reasons
    PassedOver("special file (FIFO)", 1, "gitops/pipe"),
]


@pytest.fixture
def report():
    report = realistic_report()
    report.passed_over = list(PASSED_OVER)
    return report


def _render(name: str, report, verbosity: int = 0) -> str:
    return REPORTERS[name].render(report, ReportOptions(width=200, verbosity=verbosity))


def test_json_lists_each_reason_and_matches_the_schema(report):
    doc = json.loads(_render("json", report))
    schema = json.loads(JSON_SCHEMA_PATH.read_text(encoding="utf-8"))
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(doc)) == []
    assert doc["summary"]["passed_over"] == 8
    assert doc["passed_over"][1] == {
        "reason": "left out (files): no selected rule reads the resource", "count": 5,
        "example": "mg/namespaces/a/core/events.yaml", "by": {"apirequestcounts": 4, "leases": 1}}
    assert doc["passed_over"][2]["reason"] == "special file (FIFO)"


def test_sarif_carries_counts_in_run_properties_and_notifications(report):
    run = json.loads(_render("sarif", report))["runs"][0]
    assert [p["count"] for p in run["properties"]["passedOver"]] == [2, 5, 1]
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]
             if n["descriptor"]["id"] == "hcpscan/passed-over"]
    assert notes == ["passed over, not read: 2 hidden file",
                     "passed over, not read: 5 left out (files): no selected rule reads the "
                     "resource (apirequestcounts 4, leases 1)",
                     "passed over, not read: 1 special file (FIFO)"]


def test_table_says_how_much_was_passed_over_and_why(report):
    text = _render("table", report)
    assert "Passed over, not read: 8" in text
    assert "  2 hidden file" in text
    assert "(apirequestcounts 4, leases 1)" in text
    assert "  1 special file (FIFO)" in text


def test_markdown_has_a_passed_over_section(report):
    text = _render("markdown", report)
    assert "<summary>Passed over, not read (8)</summary>" in text
    assert "- 1 special file (FIFO)" in text


def test_junit_has_a_skipped_case_per_reason(report):
    root = ET.fromstring(_render("junit", report))
    (suite,) = [s for s in root if s.get("name") == "hcpscan input passed over"]
    assert suite.get("skipped") == "3" and suite.get("tests") == "3"
    messages = [case.find("skipped").get("message") for case in suite]
    assert messages[0] == "passed over, not read: 2 hidden file"
    assert sum(int(s.get("skipped")) for s in root.findall("testsuite")) >= 3


def test_html_has_a_passed_over_section(report):
    text = _render("html", report)
    assert "<h2>Passed over, not read (8)</h2>" in text
    assert "<td>1 special file (FIFO)</td><td><code>gitops/pipe</code></td>" in text


def test_concise_ends_with_a_passed_over_line(report):
    assert _render("concise", report).splitlines()[-1] == (
        "Passed over, not read: 8 (-v: the reasons).")
    last = _render("concise", report, verbosity=1).splitlines()[-1]
    assert last == ("Passed over, not read: 8 (2 hidden file, 5 left out (files): no selected rule "
                    "reads the resource, 1 special file (FIFO)).")
    assert "Passed over" not in _render("concise", report, verbosity=-1)


def test_nothing_passed_over_adds_nothing(report):
    report.passed_over = []
    assert "Passed over" not in _render("table", report)
    assert "Passed over" not in _render("concise", report)
    assert "Passed over" not in _render("html", report)
    assert "Passed over" not in _render("markdown", report)
    assert "passed over" not in _render("junit", report)
    assert json.loads(_render("json", report))["passed_over"] == []


def test_a_scan_reports_what_the_loader_passed_over(tmp_path, run_cli):
    (tmp_path / "svc.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: a}\n")
    (tmp_path / ".hidden.yaml").write_text("kind: Secret\n")
    (tmp_path / "NOTES.md").write_text("# notes\n")
    (tmp_path / ".git").mkdir()
    sarif = tmp_path.parent / "out.sarif"
    result = run_cli("scan", str(tmp_path), "--format", "json", "--format", f"sarif={sarif}")
    doc = json.loads(result.out)
    assert {p["reason"]: p["count"] for p in doc["passed_over"]} == {
        "hidden file": 1, "hidden folder": 1, "not a manifest (.md)": 1}
    props = json.loads(sarif.read_text())["runs"][0]["properties"]["passedOver"]
    assert sum(p["count"] for p in props) == 3
    table = run_cli("scan", str(tmp_path), "-v").out
    assert "Passed over, not read: 3" in table and "1 not a manifest (.md)" in table


def test_names_from_the_input_are_shown_escaped(report):
    # a folder named with a terminal escape becomes a resource name of the breakdown
    report.passed_over = [PassedOver("left out (files): no selected rule reads the resource", 1,
                                     "mg/namespaces/a/x/evil.yaml", {"evil\x1b[2K": 1})]
    for name in ("table", "concise", "markdown", "junit", "html"):
        assert "\x1b" not in _render(name, report), name
