"""Terminal table: grouped by severity then rule, summary and coverage, no ANSI when plain."""

from __future__ import annotations

import io
import re

from hcpscan.reporters import REPORTERS, ReportOptions

ANSI = re.compile(r"\x1b\[")


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def table(report, options: ReportOptions) -> str:
    return REPORTERS["table"].render(report, options)


def test_no_ansi_when_not_a_tty(realistic, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    options = ReportOptions.for_stream(io.StringIO(), environ={})
    assert options.color is False
    assert not ANSI.search(table(realistic, options))


def test_no_ansi_with_no_color_even_on_a_tty(realistic, monkeypatch):
    assert ReportOptions.for_stream(FakeTty(), environ={"NO_COLOR": "1"}).color is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert not ANSI.search(table(realistic, ReportOptions(color=True)))


def test_colour_on_a_tty(realistic, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    options = ReportOptions.for_stream(FakeTty(), environ={"COLUMNS": "120"})
    assert options.color is True and options.width == 120
    assert ANSI.search(table(realistic, options))


def test_grouped_by_severity_then_rule(realistic, options):
    text = table(realistic, options)
    headings = re.findall(r"^(CRITICAL|HIGH|MEDIUM|LOW|INFO|SUPPRESSED) \(\d+\)$", text,
                          flags=re.M)
    assert headings == ["CRITICAL", "HIGH", "INFO", "SUPPRESSED"]
    high = text.split("HIGH (3)")[1].split("INFO (1)")[0]
    assert high.index("HCP-NET-004") < high.index("HCP-NET-009")


def test_finding_shows_object_location_message_and_evidence(realistic):
    text = table(realistic, ReportOptions(width=200))
    assert "NetworkPolicy hcp-ns/nodeport-ignition-proxy" in text
    assert "at gitops/hcp/networkpolicies.yaml:12  spec.ingress[0].ports[0].port" in text
    assert "Ignition port 8443/TCP is open to any source" in text
    assert ("0.0.0.0/0 → 8443/TCP allowed by NetworkPolicy hcp-ns/nodeport-ignition-proxy "
            "(any source), no perimeter rule") in text
    assert "management-kas.yaml:1 (virtual)" in text


def test_summary_counts_and_coverage_with_reasons(realistic, options):
    text = table(realistic, options)
    assert re.search(r"critical\s+2\s+0", text)
    assert re.search(r"total\s+6\s+2", text)
    assert "Coverage: 8 rules: 1 passed, 4 failed, 1 not evaluable, 0 not applicable, 2 suppressed" in text
    assert "not evaluable: HCP-NET-011: no Service objects in the input" in text
    assert "by baseline (external): accepted in baseline (until 2027-01-01)" in text


def test_lines_fit_the_width_and_have_no_trailing_blanks(realistic):
    text = table(realistic, ReportOptions(width=60))
    assert all(len(line) <= 60 for line in text.splitlines())
    assert all(line == line.rstrip() for line in text.splitlines())


def test_past_the_detailed_findings_each_finding_is_one_plain_line(realistic, monkeypatch):
    from hcpscan.reporters import table as table_module

    failing = [f for f in realistic.findings if f.status.value == "fail"]
    assert len(failing) > 2
    monkeypatch.setattr(table_module, "DETAILED_FINDINGS", 2)
    text = table(realistic, ReportOptions.for_stream(io.StringIO(), environ={}))
    assert f"{len(failing) - 2} MORE FINDINGS, one line each" in text
    tail = text.split("MORE FINDINGS", 1)[1].splitlines()[1:len(failing) - 1]
    assert all(re.match(r"  \S+:\d+( \(virtual\))?: \S+ \[\w+\] ", line) for line in tail), tail


def test_a_long_shared_folder_is_said_once():
    import dataclasses

    from hcpscan.findings.model import Location
    from hcpscan.reporters import REPORTERS, ReportOptions
    from tests.reporters.reports import ignition_finding, report_with

    root = "dumps/must-gather.local.4242/quay-io-openshift-must-gather-sha256-5be0c0ffee"
    findings = []
    for name, line, ns in (("nodeport-ignition", 12, "hcp-ns"), ("nodeport-ignition-proxy", 30, "other")):
        finding = ignition_finding(name, line)
        finding.location = Location(f"{root}/namespaces/{ns}/networkpolicies.yaml", line, 7)
        finding.evidence = [f"allowed by rule #1 ({root}/namespaces/{ns}/networkpolicies.yaml:{line})"]
        findings.append(dataclasses.replace(finding))
    text = REPORTERS["table"].render(report_with(findings), ReportOptions(width=200))
    assert text.count(root) == 1 and f"Files below are under {root}/namespaces/" in text
    assert "at hcp-ns/networkpolicies.yaml:12" in text
    assert "(other/networkpolicies.yaml:30)" in text


def test_the_shared_folder_breaks_after_a_slash_at_80_columns():
    """The header names a ~100-character must-gather folder: at 80 columns it breaks
    between folders, never inside one (rich alone cut '...sha256-5be|0c0ffee')."""
    from hcpscan.findings.model import Location
    from hcpscan.reporters import REPORTERS, ReportOptions
    from tests.reporters.reports import ignition_finding, report_with

    root = "fixtures/example/must-gather.local.4242/quay-io-openshift-must-gather-sha256-5be0c0ffee"
    findings = []
    for name, line, ns in (("nodeport-ignition", 12, "hcp-ns"), ("nodeport-ignition-proxy", 30, "other")):
        finding = ignition_finding(name, line)
        finding.location = Location(f"{root}/namespaces/{ns}/networkpolicies.yaml", line, 7)
        findings.append(finding)
    text = REPORTERS["table"].render(report_with(findings), ReportOptions(width=80))
    head = text.split("\n\n", 1)[0].splitlines()
    assert all(len(line) <= 80 for line in head)
    assert [line.strip() for line in head] == [
        "Files below are under fixtures/example/must-gather.local.4242/",
        "quay-io-openshift-must-gather-sha256-5be0c0ffee/namespaces/"]
