"""One line per finding, ruff-style: ``path:line:col: ID [severity] message``.

The view for logs, pipes and editors' quick-fix lists: each line starts with a
location a terminal or editor can jump to. Findings come in the same order as
in every other report (most severe first); suppressed findings are counted,
not listed. Input problems are lines too (``input [error]``), so bad input is
never silent. Messages are one line, invisible characters shown escaped.

After the findings: the totals, the coverage and the config when one was used;
``verbosity`` 1 (``-v``) adds which rules were not checked and what input was
passed over, -1 (``-q``) leaves only the findings and input problems (a hook's
exit code says the rest).
"""

from __future__ import annotations

from hcpscan.findings.model import Finding, Location, ScanReport, Status
from hcpscan.reporters.interface import ReportOptions
from hcpscan.reporters.locations import virtual_path
from hcpscan.reporters.markup import visible
from hcpscan.reporters.summary import (
    EXPLAINED_STATUSES,
    Summary,
    config_text,
    ordered,
    passed_over_total,
    summarize,
)

_UNCHECKED = (Status.NOT_EVALUABLE, Status.NOT_APPLICABLE)


class ConciseReporter:
    name = "concise"
    media_type = "text/plain"
    extension = "txt"

    def render(self, report: ScanReport, options: ReportOptions) -> str:
        summary = summarize(report)
        lines = [_finding_line(f) for f in ordered(report.findings) if f.status is Status.FAIL]
        lines += [_diagnostic_line(d) for d in report.diagnostics]
        if options.verbosity < 0:
            return "".join(line + "\n" for line in lines)
        found = f"Found {summary.failing_text()}"
        if summary.total_suppressed:
            found += f", {summary.total_suppressed} suppressed"
        lines += [found + ".", f"Coverage: {summary.coverage_text()}."]
        config = config_text(report)
        if config is not None and (config != "none" or options.verbosity > 0):
            lines.append(f"Config: {visible(config)}")
        missing = _needs_cel(report)
        if missing:  # a default Linux install leaves cel out: say so, not only a count
            lines.append(f"Not evaluated without the CEL runtime: {', '.join(missing)} "
                         "(pip install 'hcpscan[cel]').")
        if options.verbosity > 0:
            lines += _details(report, summary)
        elif report.passed_over:  # counted, never silent; the reasons on request
            lines.append(f"Passed over, not read: {passed_over_total(report)} (-v: the reasons).")
        return "\n".join(lines) + "\n"


def _needs_cel(report: ScanReport) -> list[str]:
    """The rules not evaluable only because cel-expr-python is not installed."""
    from hcpscan.rules.templates.cel import CEL_MISSING

    return sorted(r.rule_id for r in report.results
                  if r.status is Status.NOT_EVALUABLE and CEL_MISSING in r.reason)


def _details(report: ScanReport, summary: Summary) -> list[str]:
    lines = []
    unchecked = [f"{r.rule_id} {label}" for status, label in EXPLAINED_STATUSES
                 if status in _UNCHECKED for r in summary.rules[status]]
    if unchecked:
        lines.append(f"Not checked: {', '.join(unchecked)} (reasons: --output-format full).")
    if report.passed_over:
        counts = ", ".join(f"{item.count} {visible(item.reason)}" for item in report.passed_over)
        lines.append(f"Passed over, not read: {passed_over_total(report)} ({counts}).")
    return lines


def _position(location: Location, finding: Finding | None = None) -> str:
    path = location.path or (virtual_path(finding.object) if finding else "-")
    return f"{visible(path)}:{location.line}:{location.column}"


def _finding_line(finding: Finding) -> str:
    return (f"{_position(finding.location, finding)}: {finding.rule_id} "
            f"[{finding.severity.value}] {visible(finding.message)}")


def _diagnostic_line(diag: dict) -> str:
    where = Location(str(diag.get("path") or "-"), int(diag.get("line") or 1), 1)
    hint = f" ({visible(diag['hint'])})" if diag.get("hint") else ""
    return (f"{_position(where)}: input [{diag.get('severity') or 'error'}] "
            f"{visible(diag.get('message') or '')}{hint}")
