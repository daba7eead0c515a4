"""Markdown PR comment: counts table, coverage, top findings, always under GitHub's limit."""

from __future__ import annotations

import re

from hcpscan.reporters import REPORTERS, ReportOptions
from tests.reporters.reports import ignition_finding, many_findings, report_with


def markdown(report, **options) -> str:
    return REPORTERS["markdown"].render(report, ReportOptions(**options))


def test_table_of_counts_and_coverage(realistic):
    text = markdown(realistic)
    assert text.startswith("## hcpscan: 6 findings (2 critical, 3 high, 1 info), 2 suppressed")
    assert "| critical | 2 | 0 |" in text
    assert "| medium | 0 | 1 |" in text
    assert "**Coverage:** 8 rules: 1 passed, 4 failed, 1 not evaluable, 0 not applicable, 2 suppressed." in text
    assert "`HCP-NET-011`: no Service objects in the input" in text


def test_top_findings_most_severe_first_with_evidence(realistic):
    text = markdown(realistic)
    top = text.split("### Top findings")[1]
    severities = re.findall(r"^\d+\. \*\*(\w+)\*\*", top, flags=re.M)
    assert severities == ["critical", "critical", "high", "high", "high", "info"]
    assert "0.0.0.0/0 → 8443/TCP allowed by NetworkPolicy hcp-ns/nodeport-ignition-proxy" in top
    assert "`gitops/hcp/networkpolicies.yaml:12`" in top


def test_suppressed_findings_are_not_top_findings(realistic):
    assert "is not in noProxy" not in markdown(realistic)


def test_many_findings_stay_under_the_limit_with_a_note():
    report = report_with(many_findings(5_000))
    text = markdown(report, markdown_top_findings=10_000)
    assert len(text) < 65_000
    shown = len(re.findall(r"^\d+\. \*\*", text, flags=re.M))
    assert 50 < shown < 5_000
    assert f"…and {5_000 - shown} more findings not shown" in text
    assert "size limit" in text


def test_top_findings_are_capped_by_count_too():
    text = markdown(report_with(many_findings(80)), markdown_top_findings=10)
    assert len(re.findall(r"^\d+\. \*\*", text, flags=re.M)) == 10
    assert "…and 70 more findings not shown here;" in text


def test_a_huge_message_is_cut_and_table_cells_escape_pipes():
    finding = ignition_finding()
    finding.message = "a|b " + "x" * 100_000
    text = markdown(report_with([finding]))
    assert len(text) < 65_000
    assert "a\\|b" in text


def test_an_image_or_link_in_a_value_stays_text():
    finding = ignition_finding()
    finding.message = "see ![x](https://evil.example/p.png) and [here](https://evil.example)"
    text = markdown(report_with([finding]))
    assert "![x](" not in text and "[here](" not in text
    assert "!\\[x\\](https://evil.example/p.png)" in text


def test_no_findings_says_so():
    assert markdown(report_with([])).startswith("## hcpscan: no findings")
