"""A Markdown summary for a pull-request comment: counts, coverage, top findings.

GitHub refuses comments over 65,536 characters, so the report is built within
``options.markdown_max_chars`` (65,000): long messages and evidence are cut,
and findings that do not fit are counted in a closing note instead of shown.
"""

from __future__ import annotations

import re

from hcpscan.core.redact import shown as _shown  # `shown` counts findings below
from hcpscan.findings.model import Finding, ScanReport, Status
from hcpscan.reporters.interface import ReportOptions
from hcpscan.reporters.summary import (
    EXPLAINED_STATUSES,
    SEVERITIES,
    config_text,
    ordered,
    passed_over_text,
    passed_over_total,
    rule_index,
    summarize,
    where,
)

MAX_FIELD_CHARS = 500
MAX_EVIDENCE_ITEMS = 5
MAX_FIX_LINES = 40
_TICKS = re.compile(r"`+")
_CLOSING_RESERVE = 400  # room always kept for the closing note


class MarkdownReporter:
    name = "markdown"
    media_type = "text/markdown"
    extension = "md"

    def render(self, report: ScanReport, options: ReportOptions) -> str:
        return build_markdown(report, options)


def _cut(text: str, limit: int = MAX_FIELD_CHARS) -> str:
    """One line of input-derived text: control characters (newlines included) shown
    as escapes, so a value cannot start a line of its own; runs of spaces folded."""
    text = " ".join(_shown(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell(text: str) -> str:
    """Table cell text: one line, pipes escaped, and no HTML: a value holding `<!--` or
    `<details>` would otherwise hide the rest of the comment from its reader; and no link
    or image syntax: `![x](https://...)` in an object name must not load a remote image
    (a tracking pixel) into the pull request that shows the report."""
    text = _cut(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")
    return text.replace("[", "\\[").replace("]", "\\]")


def _code(text: str) -> str:
    """Inline code that survives backticks inside."""
    text = _cut(text)
    ticks = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _header(report: ScanReport) -> list[str]:
    summary = summarize(report)
    headline = f"## hcpscan: {summary.failing_text()}"
    if summary.total_suppressed:
        headline += f", {summary.total_suppressed} suppressed"
    lines = [headline, "", "| Severity | Findings | Suppressed |", "|---|---:|---:|"]
    for sev in SEVERITIES:
        lines.append(f"| {sev.value} | {summary.failing[sev]} | {summary.suppressed[sev]} |")
    lines += ["", f"**Coverage:** {summary.coverage_text()}."]
    checked = summary.checked_by_rule()
    if checked:
        lines += ["", f"<details><summary>Objects checked per rule ({len(checked)})</summary>",
                  "", "| Rule | Status | Objects checked |", "|---|---|---:|"]
        lines += [f"| {_code(r.rule_id)} | {r.status.value} | {r.objects_checked} |" for r in checked]
        lines += ["", "</details>"]
    config = config_text(report)
    if config is not None:
        lines += ["", f"**Config:** {_cell(config)}"]
    for status, label in EXPLAINED_STATUSES:
        results = summary.rules[status]
        if results:
            lines += ["", f"<details><summary>{label.capitalize()} ({len(results)})</summary>", ""]
            lines += [f"- {_code(r.rule_id)}: {_cell(r.reason or 'no reason given')}"
                      for r in results]
            lines += ["", "</details>"]
    if report.diagnostics:
        lines += ["", f"**Input problems:** {len(report.diagnostics)} (see the full report)."]
    if report.passed_over:
        lines += ["", f"<details><summary>Passed over, not read ({passed_over_total(report)})"
                      "</summary>", ""]
        lines += [f"- {_cell(passed_over_text(item))}" for item in report.passed_over]
        lines += ["", "</details>"]
    return lines


def _finding_block(number: int, finding: Finding, title: str) -> str:
    heading = f"{number}. **{finding.severity.value}** {_code(finding.rule_id)}"
    if title:
        heading += f" {_cell(title)}"
    lines = [heading,
             f"   {_code(str(finding.object))} at {_code(where(finding.location))}"
             + (f", field {_code(finding.field)}" if finding.field else ""),
             f"   {_cell(finding.message)}"]
    for item in finding.evidence[:MAX_EVIDENCE_ITEMS]:
        lines.append(f"   - {_cell(item)}")
    if len(finding.evidence) > MAX_EVIDENCE_ITEMS:
        lines.append(f"   - … {len(finding.evidence) - MAX_EVIDENCE_ITEMS} more")
    lines += _fix_lines(finding)
    return "\n".join(lines)


def _fix_lines(finding: Finding) -> list[str]:
    """The fix: its diff (or the change by hand, or the commands) in a fenced block."""
    fix = finding.fix
    if fix is None:
        return []
    if not fix.automatic:
        return [f"   No automatic fix: {_cell(fix.summary)}"]
    body, lang = ((fix.diff, "diff") if fix.changes else (fix.manual, "text") if fix.manual
                  else ("\n".join(fix.commands), "sh"))
    return [f"   Fix: {_cell(fix.summary)}", "", *_fenced(body, lang)]


def _fenced(text: str, lang: str) -> list[str]:
    """A fenced block no line of ``text`` can close (the fence outgrows every backtick run),
    cut to MAX_FIX_LINES lines."""
    lines = [_shown(line) for line in text.splitlines()]
    if len(lines) > MAX_FIX_LINES:
        lines = lines[:MAX_FIX_LINES] + [f"… {len(lines) - MAX_FIX_LINES} more lines"]
    longest = max((len(run) for line in lines for run in _TICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"   {fence}{lang}", *(f"   {line}" for line in lines), f"   {fence}"]


def build_markdown(report: ScanReport, options: ReportOptions) -> str:
    budget = options.markdown_max_chars - _CLOSING_RESERVE
    out = "\n".join(_header(report)) + "\n"
    if len(out) > budget:  # a header this long means absurd reasons; keep it short
        out = out[:budget] + "\n"
    failing = ordered(f for f in report.findings if f.status is Status.FAIL)
    titles = {rule_id: info.title for rule_id, info in rule_index(report).items()}
    shown = 0
    top = min(len(failing), max(0, options.markdown_top_findings))
    if top:
        out += "\n### Top findings\n\n"
        for finding in failing[:top]:
            block = _finding_block(shown + 1, finding, titles.get(finding.rule_id, "")) + "\n"
            if len(out) + len(block) > budget:
                break
            out += block
            shown += 1
    if shown < len(failing):
        out += (f"\n_…and {len(failing) - shown} more finding"
                f"{'s' if len(failing) - shown != 1 else ''} not shown here"
                f"{' to keep this comment under the size limit' if shown < top else ''}; "
                "see the full report (JSON or SARIF)._\n")
    return out
