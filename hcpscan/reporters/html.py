"""A one-page HTML report: one self-contained file a manager can open anywhere.

No script and no external reference of any kind (fonts, images, styles): the
page works offline, in a CI artifact viewer, and under a strict Content
Security Policy. It even states its own: ``default-src 'none'`` with the one
inline style sheet allowed by its SHA-256 hash, so a browser refuses anything
else the page might ever try to load. Rule documentation opens on demand with
``<details>``; the pictures of what each hosted cluster exposes are inline SVG
(:mod:`hcpscan.reporters.exposure_svg`). Every value from the input passes
through :func:`~hcpscan.reporters.markup.escape_html`.
"""

from __future__ import annotations

import base64
import hashlib
from itertools import groupby

from hcpscan.findings.model import Finding, HostedClusterExposure, RuleInfo, ScanReport, Status
from hcpscan.reporters.exposure_svg import entry, exposure_svg, ordered_ways, verdict
from hcpscan.reporters.html_style import CSS
from hcpscan.reporters.interface import ReportOptions
from hcpscan.reporters.markup import escape_html as esc
from hcpscan.reporters.ruledocs import sections
from hcpscan.reporters.summary import (
    EXPLAINED_STATUSES,
    RULE_STATUSES,
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

STATUS_LABEL = {Status.FAIL: "failed", Status.PASS: "passed", Status.NOT_EVALUABLE: "not evaluable",
                Status.NOT_APPLICABLE: "not applicable", Status.SUPPRESSED: "suppressed"}


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
    return f"default-src 'none'; style-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"


class HtmlReporter:
    name = "html"
    media_type = "text/html"
    extension = "html"

    def render(self, report: ScanReport, options: ReportOptions) -> str:
        summary = summarize(report)
        body = [_header(report, summary), _severity_cards(summary),
                _coverage(summary, config_text(report)),
                _exposures(report.exposures), _findings(report), _suppressed(report),
                _diagnostics(report), _passed_over(report)]
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f'<meta http-equiv="Content-Security-Policy" content="{_csp()}">'
                '<meta name="viewport" content="width=device-width, initial-scale=1">'
                f"<title>hcpscan report: {esc(summary.failing_text())}</title>"
                f"<style>{CSS}</style></head>\n<body><main>\n"
                + "\n".join(part for part in body if part) + "\n</main></body></html>\n")


def _header(report: ScanReport, summary: Summary) -> str:
    meta = report.metadata
    inputs = ", ".join(str(p) for p in meta.get("paths") or []) or str(meta.get("context") or "")
    facts = [("Scanned", inputs or "(standard input)"), ("Mode", str(meta.get("mode") or "")),
             ("Objects read", str(sum(report.inventory_counts.values()))),
             ("Started", _when(meta.get("started"))),
             ("hcpscan", report.tool_version)]
    dl = "".join(f"<div><dt>{esc(k)}</dt><dd>{esc(v)}</dd></div>" for k, v in facts if v)
    return (f'<header><h1>hcpscan report</h1><p class="headline" id="headline">'
            f"{esc(summary.failing_text())}</p>{_exposure_headline(report.exposures)}"
            f'<dl class="facts">{dl}</dl></header>')


def _when(value: object) -> str:
    """A time stamp to the second, in UTC when it says its zone (no microseconds)."""
    from datetime import UTC, datetime

    if not value:
        return ""
    try:
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    if moment.tzinfo is not None:
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _exposure_headline(exposures: list[HostedClusterExposure]) -> str:
    """One sentence on the hosted control planes, for readers who stop at the top."""
    if not exposures:
        return ""
    ways = [way for e in exposures for way in e.ways_in]
    beyond = sum(1 for way in ways if way.beyond_workers)
    planes = f"{len(exposures)} hosted control plane{'s' if len(exposures) != 1 else ''}"
    if not ways:  # nothing seen is not nothing open: the control planes' objects may be absent
        return (f'<p class="exposure-line unknown" id="exposure-line">no way into {planes} '
                "found in the input: see the rules not evaluated below</p>")
    css = "alert" if beyond else "calm"
    return (f'<p class="exposure-line {css}" id="exposure-line">{beyond} of {len(ways)} ways into '
            f"{planes} reachable beyond the worker subnets</p>")


def _severity_cards(summary: Summary) -> str:
    cards = []
    for sev in SEVERITIES:
        sup = summary.suppressed[sev]
        note = f'<span class="sup">+{sup} suppressed</span>' if sup else ""
        cards.append(f'<div class="card sev-{sev.value}"><span class="count" data-severity='
                     f'"{sev.value}">{summary.failing[sev]}</span><span class="label">'
                     f"{sev.value}</span>{note}</div>")
    return ('<section class="summary" aria-label="Findings by severity"><h2>Findings by severity'
            f'</h2><div class="cards">{"".join(cards)}</div></section>')


REASONS_SHOWN = 6  # more rules not checked than this: their reasons are folded


def _coverage(summary: Summary, config: str | None = None) -> str:
    """``config``: the config the run used (``config_text``), shown under the coverage."""
    total = sum(len(v) for v in summary.rules.values()) or 1
    bar, legend, x = [], [], 0.0
    for status in RULE_STATUSES:
        count = summary.rule_count(status)
        css = status.value
        if count:
            width = 1000 * count / total
            bar.append(f'<rect class="st-{css}" x="{x:.1f}" y="0" width="{width:.1f}" height="22">'
                       f"<title>{count} {STATUS_LABEL[status]}</title></rect>")
            x += width
        legend.append(f'<li class="st-{css}"><span class="swatch"></span><b data-rules="{css}">'
                      f"{count}</b> {STATUS_LABEL[status]}</li>")
    reasons = []
    for status, label in EXPLAINED_STATUSES:
        for result in summary.rules[status]:
            reasons.append(f"<tr><td>{esc(label)}</td><td><code>{esc(result.rule_id)}</code></td>"
                           f"<td>{esc(result.reason or 'no reason given')}</td></tr>")
    table = ('<table class="reasons"><thead><tr><th>status</th><th>rule</th><th>why</th></tr>'
             f'</thead><tbody>{"".join(reasons)}</tbody></table>') if reasons else ""
    if reasons:  # a long list would push the findings below the first screen: folded
        opened = " open" if len(reasons) <= REASONS_SHOWN else ""
        table = (f'<details class="reasons"{opened}><summary>Why {len(reasons)} rule'
                 f'{"s were" if len(reasons) != 1 else " was"} not checked</summary>{table}</details>')
    used = f'<p id="config">Config: {esc(config)}</p>' if config is not None else ""
    return ('<section class="coverage"><h2>Rule coverage</h2>'
            f'<p id="coverage">{esc(summary.coverage_text())}</p>{used}'
            f'<svg class="bar" viewBox="0 0 1000 22" preserveAspectRatio="none" role="img" '
            f'aria-label="rules by status">{"".join(bar)}</svg>'
            f'<ul class="legend">{"".join(legend)}</ul>{table}</section>')


def _exposures(exposures: list[HostedClusterExposure]) -> str:
    if not exposures:
        return ""
    parts = ['<section class="exposures"><h2>What each hosted cluster exposes to outside '
             'addresses</h2><ul class="key"><li class="open">reachable beyond the worker subnets'
             '</li><li class="workers">reachable from the worker subnets only</li>'
             '<li class="blocked">no outside address gets through</li></ul>']
    for number, exposure in enumerate(exposures):
        hc = exposure.hosted_cluster
        cluster = "" if hc.cluster == "management" else f"{hc.cluster}: "
        parts.append(f'<article class="hc"><h3>{esc(cluster)}{esc(hc.kind)} {esc(hc.namespace)}/'
                     f'{esc(hc.name)} <span class="n">{esc(_exposure_count(exposure))}</span></h3>'
                     f"{exposure_svg(exposure, number)}{_ways_table(exposure)}</article>")
    parts.append("</section>")
    return "".join(parts)


def _exposure_count(exposure: HostedClusterExposure) -> str:
    ways = len(exposure.ways_in)
    beyond = sum(1 for way in exposure.ways_in if way.beyond_workers)
    return (f"{ways} way{'s' if ways != 1 else ''} in from outside, {beyond} reachable beyond "
            "the worker subnets")


def _ways_table(exposure: HostedClusterExposure) -> str:
    rows = []
    for way in ordered_ways(exposure):
        v = verdict(way)
        kind = "Route" if way.layer == "Route" else "Service"
        rows.append(f'<tr class="{v.css}"><td>{esc(entry(way))}</td><td>{esc(kind)} '
                    f"{esc(way.via.namespace)}/{esc(way.via.name)}</td><td>"
                    f"{esc(', '.join(way.targets))} :{way.pod_port}/{esc(way.protocol)}</td>"
                    f"<td>{esc(way.admitted or way.blocked_by or 'no outside address')}</td>"
                    f"<td><code>{esc(where(way.location))}</code></td></tr>")
    if not rows:
        return ""
    return ('<details class="ways"><summary>Ways in, with files</summary><table><thead><tr>'
            "<th>layer</th><th>through</th><th>to</th><th>outside addresses let through</th>"
            f'<th>where</th></tr></thead><tbody>{"".join(rows)}</tbody></table></details>')


def _findings(report: ScanReport) -> str:
    failing = [f for f in report.findings if f.status is Status.FAIL]
    if not failing:
        return '<section class="findings"><h2>Findings</h2><p>No findings.</p></section>'
    rules = rule_index(report)
    parts = ['<section class="findings"><h2>Findings by cluster and rule</h2>']
    by_cluster = sorted(failing, key=lambda f: (f.object.cluster != "management", f.object.cluster))
    for cluster, group in groupby(by_cluster, key=lambda f: f.object.cluster):
        parts.append(f"<h3>Cluster {esc(cluster)}</h3>")
        for rule_id, items in groupby(ordered(group), key=lambda f: f.rule_id):
            parts.append(_rule_block(rule_id, rules.get(rule_id), list(items)))
    parts.append("</section>")
    return "".join(parts)


def _rule_block(rule_id: str, info: RuleInfo | None, findings: list[Finding]) -> str:
    sev = findings[0].severity.value
    title = info.title if info else ""
    docs = _rule_docs(info) if info else ""
    items = "".join(_finding(f) for f in findings)
    return (f'<details class="rule" open><summary><span class="badge sev-{sev}">{esc(sev)}</span> '
            f"<code>{esc(rule_id)}</code> {esc(title)} <span class=\"n\">({len(findings)})</span>"
            f"</summary>{docs}<ol class=\"items\">{items}</ol></details>")


def _rule_docs(info: RuleInfo) -> str:
    body = []
    for head, text, is_yaml in sections(info):
        content = (f"<pre>{esc(text, keep_layout=True)}</pre>" if is_yaml
                   else f"<p>{esc(text, keep_layout=True)}</p>")
        body.append(f"<h4>{esc(head)}</h4>{content}")
    return f'<details class="docs"><summary>About {esc(info.id)}</summary>{"".join(body)}</details>'


def _finding(finding: Finding) -> str:
    field = f' <span class="field">{esc(finding.field)}</span>' if finding.field else ""
    evidence = "".join(f"<li>{esc(item)}</li>" for item in finding.evidence)
    notes = "".join(f'<p class="note">note: {esc(n)}</p>' for n in finding.notes)
    return (f'<li class="finding"><p class="obj">{esc(finding.object)}</p>'
            f'<p class="at"><code>{esc(where(finding.location))}</code>{field}</p>'
            f'<p class="msg">{esc(finding.message)}</p>'
            + (f'<ul class="evidence">{evidence}</ul>' if evidence else "") + f"{notes}"
            f"{_fix(finding)}</li>")


def _fix(finding: Finding) -> str:
    """The fix as a diff block (added and removed lines marked), the change by hand or the
    commands; or why no automatic change is safe."""
    fix = finding.fix
    if fix is None:
        return ""
    if not fix.automatic:
        return f'<p class="nofix">No automatic fix: {esc(fix.summary)}</p>'
    if fix.changes:
        lines = []
        for line in fix.diff.splitlines():
            kind = ("add" if line.startswith("+") and not line.startswith("+++") else
                    "del" if line.startswith("-") and not line.startswith("---") else "ctx")
            lines.append(f'<span class="{kind}">{esc(line, keep_layout=True)}</span>')
        body = "".join(lines)  # each line a block of its own
    else:
        body = esc(fix.manual or "\n".join(fix.commands), keep_layout=True)
    return (f'<details class="fix"><summary>Fix: {esc(fix.summary)}</summary>'
            f'<pre class="diff">{body}</pre></details>')


def _suppressed(report: ScanReport) -> str:
    items = []
    for f in ordered(x for x in report.findings if x.status is Status.SUPPRESSED):
        sup = f.suppression
        why = (f"by {sup.source} ({sup.kind}): {sup.justification}"
               + (f" (until {sup.expires})" if sup.expires else "")) if sup else "no justification"
        items.append(f"<tr><td><code>{esc(f.rule_id)}</code></td><td>{esc(f.severity.value)}</td>"
                     f"<td>{esc(f.object)}</td><td><code>{esc(where(f.location))}</code></td>"
                     f"<td>{esc(why)}</td></tr>")
    if not items:
        return ""
    return (f'<section><h2>Suppressed ({len(items)})</h2><table><thead><tr><th>rule</th>'
            "<th>severity</th><th>object</th><th>where</th><th>why</th></tr></thead><tbody>"
            f'{"".join(items)}</tbody></table></section>')


def _diagnostics(report: ScanReport) -> str:
    rows = []
    for diag in report.diagnostics:
        path, line = str(diag.get("path") or ""), diag.get("line")
        rows.append(f"<tr><td>{esc(diag.get('severity') or 'error')}</td><td><code>"
                    f"{esc(f'{path}:{line}' if line else path)}</code></td><td>"
                    f"{esc(diag.get('message') or '')}</td><td>{esc(diag.get('hint') or '')}</td></tr>")
    if not rows:
        return ""
    return (f'<section><h2>Could not read or evaluate ({len(rows)})</h2><table><thead><tr>'
            "<th>severity</th><th>where</th><th>problem</th><th>what to do</th></tr></thead>"
            f'<tbody>{"".join(rows)}</tbody></table></section>')


def _passed_over(report: ScanReport) -> str:
    rows = "".join(f"<tr><td>{esc(passed_over_text(item))}</td><td><code>{esc(item.example)}</code>"
                   "</td></tr>" for item in report.passed_over)
    if not rows:
        return ""
    return (f"<section><h2>Passed over, not read ({passed_over_total(report)})</h2><table><thead>"
            f"<tr><th>how many, and why</th><th>for example</th></tr></thead><tbody>{rows}</tbody>"
            "</table></section>")
