"""The terminal report: findings grouped by severity then rule, then a summary.

Colour only when ``options.color`` is set and ``NO_COLOR`` is not; without
colour the output holds no escape codes at all, so logs and pipes stay clean.
Rich never sees the real environment (width, colour and terminal type come
from the options), so the same report renders the same everywhere.
"""

from __future__ import annotations

import io
import os
import re
from itertools import groupby

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from hcpscan.core.redact import shown
from hcpscan.findings.model import Finding, Location, ScanReport, Severity, Status
from hcpscan.reporters.interface import ReportOptions
from hcpscan.reporters.summary import (
    EXPLAINED_STATUSES,
    SEVERITIES,
    Summary,
    config_text,
    ordered,
    passed_over_text,
    passed_over_total,
    rule_index,
    summarize,
    where,
)

STYLE = {Severity.CRITICAL: "bold white on red", Severity.HIGH: "bold red",
         Severity.MEDIUM: "yellow", Severity.LOW: "cyan", Severity.INFO: "dim"}


# Findings shown in full (wrapped, with evidence); the rest get one plain line each: a
# terminal of 100,000 wrapped findings helps nobody, and rich's wrapping costs ~0.3 ms each.
DETAILED_FINDINGS = 1000


class _Plain(list[str]):
    """Lines written as they are, past rich (already escaped and masked)."""


class TableReporter:
    name = "table"
    media_type = "text/plain"
    extension = "txt"

    def render(self, report: ScanReport, options: ReportOptions) -> str:
        color = options.color and not os.environ.get("NO_COLOR")
        buffer = io.StringIO()
        console = Console(file=buffer, width=max(40, options.width), force_terminal=color,
                          color_system="standard" if color else None, no_color=not color,
                          highlight=False, markup=False, emoji=False, soft_wrap=False,
                          force_interactive=False, _environ={})
        for block in _blocks(report, max(40, options.width), options.verbosity):
            if isinstance(block, _Plain):
                console.file.write("".join(line + "\n" for line in block))
            else:
                console.print(block)
        # rich pads wrapped blocks to their width; trailing blanks only clutter logs
        return "\n".join(line.rstrip() for line in buffer.getvalue().split("\n"))


def _blocks(report: ScanReport, width: int = 100, verbosity: int = 0) -> list[RenderableType | _Plain]:
    summary = summarize(report)
    blocks: list[RenderableType | _Plain] = []
    failing = [f for f in report.findings if f.status is not Status.SUPPRESSED]
    suppressed = [f for f in report.findings if f.status is Status.SUPPRESSED]
    titles = {rule_id: info.title for rule_id, info in rule_index(report).items()}
    failing = ordered(failing)
    root = _shared_folder([f.location for f in report.findings])
    if root:  # a must-gather's 100-character prefix, said once instead of on every line
        blocks.append(Text("\n".join(_at_slashes(f"Files below are under {shown(root)}/", width)),
                           style="dim"))
        blocks.append(Text(""))
    failing, rest = failing[:DETAILED_FINDINGS], failing[DETAILED_FINDINGS:]
    for severity, by_severity in groupby(failing, key=lambda f: f.severity):
        group = list(by_severity)
        blocks.append(Text(f"{severity.value.upper()} ({len(group)})", style=STYLE[severity]))
        for rule_id, by_rule in groupby(group, key=lambda f: f.rule_id):
            items = list(by_rule)
            title = shown(titles.get(rule_id, ""))
            heading = Text(f"  {shown(rule_id)}", style="bold")
            heading.append(f"  {title}" if title else "")
            heading.append(f"  ({len(items)})", style="dim")
            blocks.append(heading)
            blocks.extend(_finding(f, root) for f in items)
        blocks.append(Text(""))
    if rest:
        blocks.append(Text(f"{len(rest)} MORE FINDINGS, one line each (all of them in full: "
                           "--format json or markdown)", style="bold"))
        blocks.append(_Plain(f"  {shown(where(f.location))}: {shown(f.rule_id)} [{f.severity.value}] "
                             f"{shown(f.object)}: {shown(f.message)}" for f in rest))
        blocks.append(Text(""))
    if verbosity < 0:  # -q: the findings and input problems only, as the concise view
        return [*blocks, _diagnostics_table(report)] if report.diagnostics else blocks
    if suppressed:
        blocks.append(_suppressed(ordered(suppressed)))
    if report.diagnostics:
        blocks.append(_diagnostics_table(report))
    if report.passed_over:
        blocks.append(_passed_over(report))
    blocks.append(_summary_table(summary))
    blocks.append(_coverage(summary))
    config = config_text(report)
    if config is not None:
        blocks.append(Text(f"Config: {shown(config)}"))
    return blocks


def _indented(text: Text, left: int) -> Padding:
    return Padding(text, (0, 0, 0, left), expand=False)


def _at_slashes(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width``, a long path broken after its slashes (rich
    would cut it mid-name)."""
    lines, line = [], ""
    for piece in re.findall(r"[^ /]*/|[^ /]+ ?| ", text):
        if line and len(line) + len(piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = "  " + piece
        else:
            line += piece
    return [*lines, line.rstrip()]


SHARED_FOLDER_AT = 40  # a folder prefix at least this long is printed once


def _shared_folder(locations: list[Location]) -> str:
    """The folder every finding's file lies in, when long enough to be worth saying once."""
    folders = {os.path.dirname(loc.path) for loc in locations
               if loc.path and not loc.virtual and "!" not in loc.path and not loc.path.startswith("<")}
    if not folders:
        return ""
    try:
        root = os.path.commonpath(sorted(folders))
    except ValueError:
        return ""
    return root if len(root) >= SHARED_FOLDER_AT else ""


def _finding(finding: Finding, root: str = "") -> RenderableType:
    """The object, then where and which field, the message and the evidence;
    wrapped lines stay indented under their block. ``root``: the shared folder, left
    out of paths (said once above)."""
    def short(text: str) -> str:
        return text.replace(root + "/", "") if root else text

    details = Text()
    details.append(f"at {shown(short(where(finding.location)))}", style="dim")
    if finding.field:
        details.append(f"  {shown(finding.field)}", style="dim")
    details.append(f"\n{shown(finding.message)}")
    for item in finding.evidence:
        details.append(f"\n- {shown(short(item))}", style="italic")
    for note in finding.notes:
        details.append(f"\nnote: {shown(short(note))}", style="dim")
    return Group(_indented(Text(shown(finding.object), style="bold"), 4), _indented(details, 6))


def _suppressed(findings: list[Finding]) -> RenderableType:
    parts: list[RenderableType] = [Text(f"SUPPRESSED ({len(findings)})", style="bold")]
    for f in findings:
        head = Text(f"{shown(f.rule_id)}  {f.severity.value}  {shown(f.object)}", style="dim")
        sup = f.suppression
        detail = Text(f"at {shown(where(f.location))}", style="dim")
        if sup:
            detail.append(f"\nby {shown(sup.source)} ({sup.kind}): {shown(sup.justification)}")
            if sup.expires:
                detail.append(f" (until {shown(sup.expires)})")
        else:
            detail.append("\nno justification recorded")
        parts += [_indented(head, 2), _indented(detail, 6)]
    parts.append(Text(""))
    return Group(*parts)


# Input problems shown as table rows; the others are counted under the table (laying out
# 200,000 rows took minutes). JSON, SARIF and the concise view list all of them.
MAX_DIAGNOSTIC_ROWS = 200


def more_diagnostics(count: int, everything: str = "--format json (or --output-format concise)"
                     ) -> str | None:
    """What the table says of the input problems it does not show, and where all are."""
    hidden = count - MAX_DIAGNOSTIC_ROWS
    if hidden <= 0:
        return None
    return (f"…and {hidden:,} more input problem{'s' if hidden != 1 else ''} not shown here; "
            f"all of them: {everything}")


def _diagnostics_table(report: ScanReport) -> Table:
    table = Table(title="Could not read or evaluate", title_justify="left", box=box.SIMPLE_HEAD,
                  caption=more_diagnostics(len(report.diagnostics)), caption_justify="left")
    for column in ("severity", "where", "problem", "what to do"):
        table.add_column(column, overflow="fold")
    for diag in report.diagnostics[:MAX_DIAGNOSTIC_ROWS]:
        path, line = str(diag.get("path") or ""), diag.get("line")
        table.add_row(shown(diag.get("severity") or "error"),
                      shown(f"{path}:{line}" if line else path),
                      shown(diag.get("message") or ""), shown(diag.get("hint") or ""))
    return table


def _passed_over(report: ScanReport) -> RenderableType:
    parts: list[RenderableType] = [Text(f"Passed over, not read: {passed_over_total(report)}",
                                        style="bold")]
    parts += [_indented(Text(shown(passed_over_text(item)), style="dim"), 2) for item in report.passed_over]
    parts.append(Text(""))
    return Group(*parts)


def _summary_table(summary: Summary) -> Table:
    table = Table(title="Summary", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("severity")
    table.add_column("findings", justify="right")
    table.add_column("suppressed", justify="right")
    for severity in SEVERITIES:
        table.add_row(Text(severity.value, style=STYLE[severity]),
                      str(summary.failing[severity]), str(summary.suppressed[severity]))
    table.add_row(Text("total", style="bold"), str(summary.total_failing),
                  str(summary.total_suppressed))
    return table


def _coverage(summary: Summary) -> RenderableType:
    parts: list[RenderableType] = [Text(f"Coverage: {summary.coverage_text()}", style="bold")]
    if summary.checked_by_rule():
        parts.append(Text(f"  objects checked: {shown(summary.checked_text())}"))
    for status, label in EXPLAINED_STATUSES:
        for result in summary.rules[status]:
            reason = shown(result.reason or "no reason given")
            parts.append(Text(f"  {label}: {shown(result.rule_id)}: {reason}"))
    return Group(*parts)
