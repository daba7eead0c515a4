"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` per finding.

Printed to a job's log, each line becomes an annotation on the file and line in
the pull request's "Files changed" view, as ruff's ``--output-format github``
does. Paths are relative to ``sarif_root`` (the checkout, by default the current
directory); a finding in an archive member points at the archive, and one with no
file (live cluster, standard input) is an annotation without a file. Suppressed
findings are not annotated. Input problems are annotations too, so bad input is
never silent. GitHub shows at most 10 errors and 10 warnings per step: the SARIF
upload is the complete view.
"""

from __future__ import annotations

import os
from urllib.parse import unquote

from hcpscan.findings.model import Finding, ScanReport, Severity, Status
from hcpscan.reporters.interface import ReportOptions
from hcpscan.reporters.locations import artifact_path, path_uri
from hcpscan.reporters.markup import visible
from hcpscan.reporters.summary import ordered, rule_index, summarize

LEVEL = {Severity.CRITICAL: "error", Severity.HIGH: "error", Severity.MEDIUM: "warning",
         Severity.LOW: "notice", Severity.INFO: "notice"}
DIAGNOSTIC_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: also ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, **properties: object) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items()
                     if value not in (None, ""))
    return f"::{level} {props}::{escape_data(message)}" if props else f"::{level}::{escape_data(message)}"


class GithubReporter:
    name = "github"
    media_type = "text/plain"
    extension = "txt"

    def render(self, report: ScanReport, options: ReportOptions) -> str:
        root = os.path.abspath(options.sarif_root or os.getcwd())
        infos = rule_index(report)
        lines = []
        for finding in ordered(report.findings):
            if finding.status is not Status.FAIL:
                continue
            info = infos.get(finding.rule_id)
            title = f"{finding.rule_id} [{finding.severity.value}]" + (
                f" {info.title}" if info and info.title else "")
            lines.append(command(LEVEL[finding.severity], _message(finding), title=visible(title),
                                 **_where(finding, root)))
        for diag in report.diagnostics:
            path = str(diag.get("path") or "")
            uri = path_uri(path, root) if path else ""
            text = visible(str(diag.get("message") or "input problem"))
            if diag.get("hint"):
                text += f" ({visible(diag['hint'])})"
            line = diag.get("line") if isinstance(diag.get("line"), int) else None
            lines.append(command(DIAGNOSTIC_LEVEL.get(str(diag.get("severity")), "warning"), text,
                                 title="hcpscan input", file=unquote(uri), line=line if uri else None))
        summary = summarize(report)
        lines.append(f"hcpscan: found {summary.failing_text()}; coverage: {summary.coverage_text()}")
        return "\n".join(lines) + "\n"


def _where(finding: Finding, root: str) -> dict[str, object]:
    artifact = artifact_path(finding, root)
    if artifact.virtual:
        return {}
    if artifact.archive:  # GitHub cannot open a member: the archive itself, no line
        return {"file": artifact.archive}
    return {"file": artifact.path, "line": max(1, finding.location.line),
            "col": max(1, finding.location.column)}


def _message(finding: Finding) -> str:
    lines = [visible(finding.message)]
    lines += [f"object: {visible(str(finding.object))}"]
    if finding.location.virtual or _in_archive(finding):
        lines.append(f"at: {visible(finding.location.path)}:{finding.location.line}")
    lines += [f"evidence: {visible(item)}" for item in finding.evidence[:5]]
    if len(finding.evidence) > 5:
        lines.append(f"... and {len(finding.evidence) - 5} more (see the SARIF or JSON report)")
    return "\n".join(lines)


def _in_archive(finding: Finding) -> bool:
    """An archive member: the annotation points at the archive, the message names the member."""
    return "!" in finding.location.path
