"""Reporters: turn a :class:`~hcpscan.findings.model.ScanReport` into text.

Usage from the CLI::

    from hcpscan.reporters import REPORTERS, ReportOptions, render

    options = ReportOptions.for_stream(sys.stdout, sarif_category="hcpscan/prod")
    text = render("sarif", report, options)

Each reporter is pure (no clock, no environment besides ``NO_COLOR`` for the
table, no file access besides ``options.read_text``) and depends only on the
findings model.
"""

from __future__ import annotations

from pathlib import Path

from hcpscan.findings.model import ScanReport
from hcpscan.reporters.concise import ConciseReporter
from hcpscan.reporters.github import GithubReporter
from hcpscan.reporters.gitlab import GitlabReporter
from hcpscan.reporters.html import HtmlReporter
from hcpscan.reporters.interface import Reporter, ReportOptions, color_wanted, read_file_text
from hcpscan.reporters.json import SCHEMA_VERSION, JsonReporter
from hcpscan.reporters.junit import JunitReporter
from hcpscan.reporters.markdown import MarkdownReporter
from hcpscan.reporters.openreports import OpenReportsReporter
from hcpscan.reporters.policyreport import PolicyReportReporter
from hcpscan.reporters.sarif import SarifReporter
from hcpscan.reporters.table import TableReporter

REPORTERS: dict[str, Reporter] = {
    reporter.name: reporter
    for reporter in (TableReporter(), JsonReporter(), SarifReporter(), JunitReporter(),
                     MarkdownReporter(), HtmlReporter(), ConciseReporter(), OpenReportsReporter(),
                     PolicyReportReporter(), GithubReporter(), GitlabReporter())
}

JSON_SCHEMA_PATH = Path(__file__).with_name("hcpscan-report.schema.json")


def render(name: str, report: ScanReport, options: ReportOptions | None = None) -> str:
    """Render ``report`` in format ``name`` (a key of :data:`REPORTERS`)."""
    try:
        reporter = REPORTERS[name]
    except KeyError:
        known = ", ".join(sorted(REPORTERS))
        raise ValueError(f"unknown report format {name!r} (known: {known})") from None
    return reporter.render(report, options or ReportOptions())


__all__ = ["JSON_SCHEMA_PATH", "REPORTERS", "SCHEMA_VERSION", "ReportOptions", "Reporter",
           "color_wanted", "read_file_text", "render"]
