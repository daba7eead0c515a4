"""The fleet matrix as a table, JSON, Markdown or HTML.

Every format shows the same things: per cluster its scan state (and why), the
time of its last scan, its findings per severity, and the cluster x rule matrix
(a cell is the severity's initial and the count of findings, ``?`` for a rule the
cluster could not evaluate). Values come from the hub, which each managed cluster
writes to, so text is escaped for the format (and invisible characters shown).
"""

from __future__ import annotations

import json

from hcpscan.fleet.contract import SEVERITIES
from hcpscan.fleet.matrix import ClusterRow, FleetMatrix, iso
from hcpscan.reporters.formats import json_document
from hcpscan.reporters.markup import escape_html, visible

FORMATS = ("table", "json", "markdown", "html")
_INITIAL = {"critical": "C", "high": "H", "medium": "M", "low": "L", "info": "I"}


def render(matrix: FleetMatrix, fmt: str) -> str:
    return {"table": table, "json": as_json, "markdown": markdown, "html": html}[fmt](matrix)


def cell(row: ClusterRow, rule: str) -> str:
    if rule in row.rules:
        severity, count = row.rules[rule]
        return f"{_INITIAL[severity]}{count}"
    if rule in row.not_evaluable:
        return "?"
    return "" if row.last_scan is None else "."


def _headline(matrix: FleetMatrix) -> str:
    states = ", ".join(f"{n} {state}" for state, n in matrix.counts().items() if n)
    return (f"hcpscan fleet: {len(matrix.clusters)} managed cluster(s) on hub {matrix.hub}"
            f" ({states or 'none'}); read {iso(matrix.read_at)}, stale after "
            f"{matrix.stale_after.total_seconds() / 3600:g} h")


def _status_cells(row: ClusterRow) -> list[str]:
    counts = [str(row.findings.get(s, 0)) if row.last_scan else "-" for s in SEVERITIES]
    avail = {True: "yes", False: "NO", None: "?"}[row.available]
    return [row.name, row.state.value, iso(row.last_scan) or "-", *counts, avail, row.reason]


STATUS_HEADER = ["CLUSTER", "STATE", "LAST SCAN", *(s.upper() for s in SEVERITIES), "AVAILABLE",
                 "REASON"]


def _columns(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def table(matrix: FleetMatrix) -> str:
    out = [visible(_headline(matrix)), ""]
    out.append(_columns([STATUS_HEADER, *([visible(c) for c in _status_cells(r)]
                                          for r in matrix.clusters)]))
    rules = matrix.rules
    if rules:
        out += ["", "cluster x rule (C/H/M/L/I: severity and findings; ?: not evaluable; "
                ".: passed or not applicable; blank: no scan)", ""]
        out.append(_columns([["CLUSTER", *(visible(r) for r in rules)],
                             *([visible(r.name), *(cell(r, rule) for rule in rules)]
                               for r in matrix.clusters)]))
    else:
        out += ["", "no rule fails on any cluster that reported"]
    out += [f"note: {visible(n)}" for n in matrix.notes]
    return "\n".join(out) + "\n"


def as_json(matrix: FleetMatrix) -> str:
    return json.dumps(json_document("fleet", matrix.to_json()), indent=2, sort_keys=False) + "\n"


def _md(text: str) -> str:
    return visible(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def markdown(matrix: FleetMatrix) -> str:
    out = ["# hcpscan fleet", "", _md(_headline(matrix)), "", "## Clusters", ""]
    out.append("| " + " | ".join(h.title() for h in STATUS_HEADER) + " |")
    out.append("|" + "---|" * len(STATUS_HEADER))
    out += ["| " + " | ".join(_md(c) for c in _status_cells(r)) + " |" for r in matrix.clusters]
    rules = matrix.rules
    out += ["", "## Cluster x rule", ""]
    if rules:
        out.append("C/H/M/L/I: severity and number of findings; `?`: not evaluable; `.`: "
                   "passed or not applicable; blank: no scan.")
        out += ["", "| Cluster | " + " | ".join(_md(r) for r in rules) + " |",
                "|" + "---|" * (len(rules) + 1)]
        out += ["| " + _md(r.name) + " | " + " | ".join(cell(r, rule) for rule in rules) + " |"
                for r in matrix.clusters]
    else:
        out.append("No rule fails on any cluster that reported.")
    if matrix.notes:
        out += ["", "## Notes", "", *(f"* {_md(n)}" for n in matrix.notes)]
    return "\n".join(out) + "\n"


def html(matrix: FleetMatrix) -> str:
    def row_html(cells: list[str], tag: str = "td", cls: str = "") -> str:
        attr = f' class="{cls}"' if cls else ""
        return f"<tr{attr}>" + "".join(f"<{tag}>{escape_html(c)}</{tag}>" for c in cells) + "</tr>"

    rules = matrix.rules
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             "<title>hcpscan fleet</title>",
             "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px}tr.ok td:nth-child(2){color:#060}"
             "tr.bad td:nth-child(2){color:#a00;font-weight:bold}</style></head><body>",
             "<h1>hcpscan fleet</h1>", f"<p>{escape_html(_headline(matrix))}</p>",
             "<h2>Clusters</h2><table>", row_html(STATUS_HEADER, "th")]
    parts += [row_html(_status_cells(r), cls="ok" if r.state.complete else "bad")
              for r in matrix.clusters]
    parts.append("</table><h2>Cluster &times; rule</h2>")
    if rules:
        parts += ["<table>", row_html(["CLUSTER", *rules], "th")]
        parts += [row_html([r.name, *(cell(r, rule) for rule in rules)]) for r in matrix.clusters]
        parts.append("</table>")
    else:
        parts.append("<p>No rule fails on any cluster that reported.</p>")
    if matrix.notes:
        parts += ["<h2>Notes</h2><ul>", *(f"<li>{escape_html(n)}</li>" for n in matrix.notes), "</ul>"]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
