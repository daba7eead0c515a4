"""The concise view: one line per finding, path:line:col: ID [severity] message."""

from __future__ import annotations

import re

from hcpscan.reporters import render
from tests.reporters.reports import realistic_report, small_report

LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<id>\S+) \[(?P<sev>\w+)\] (?P<msg>.+)$")


def test_one_line_per_failing_finding_in_report_order(options):
    report = realistic_report()
    lines = render("concise", report, options).splitlines()
    failing = [f for f in report.findings if f.status.value == "fail"]
    parsed = [LINE.match(line) for line in lines[:len(failing)]]
    assert all(parsed), lines
    assert [m["sev"] for m in parsed] == sorted((m["sev"] for m in parsed),
                                                key=["critical", "high", "medium", "low", "info"].index)
    first = parsed[0]
    assert (first["path"], first["line"], first["col"], first["id"]) == (
        "gitops/hcp/networkpolicies.yaml", "12", "7", "HCP-NET-001")
    assert not any("HCP-PROXY-005" in line for line in lines)  # suppressed: counted, not listed
    assert "suppressed" in lines[-3] or "suppressed" in lines[-2]


def test_input_problems_are_lines_too(small, options):
    lines = render("concise", small, options).splitlines()
    assert "gitops/broken.yaml:3:1: input [error] invalid YAML: mapping values are not allowed here " \
           "(fix the indentation)" in lines


def test_a_message_stays_on_its_line_with_invisible_characters_shown(options):
    report = small_report()
    report.findings[0].message = "two\nlines\x1b[2J and \u202eoverride"
    (line,) = [x for x in render("concise", report, options).splitlines() if "HCP-NET-001" in x]
    assert line.endswith("[critical] two\\nlines\\x1b[2J and \\u202eoverride")


def test_virtual_locations_keep_a_jumpable_path(options):
    lines = render("concise", realistic_report(), options).splitlines()
    assert any(line.startswith("cluster/prod-context/hcp-ns/NetworkPolicy/management-kas.yaml:1:1: "
                               "HCP-NET-009 [high]") for line in lines)
