"""SARIF 2.1.0 for GitHub code scanning (and any other SARIF consumer).

What GitHub needs and how it is met:

* one run; ``run.automationDetails.id`` is the category (``sarif_category``)
  with a trailing ``/`` so the whole value is the category, as
  ``upload-sarif``'s ``category`` input does;
* every rule that ran is in ``tool.driver.rules`` with its docs as ``help``
  and ``security-severity`` for GitHub's severity (info: none, level ``note``);
* every result has a physical location with a relative URI and a region
  (see :mod:`hcpscan.reporters.locations`), and two partial fingerprints:
  ``hcpscan/v1`` (``Finding.key``: rule, cluster, object, field — no line) and
  ``primaryLocationLineHash`` (GitHub's own, when the file's text is known);
* suppressed findings carry ``suppressions`` (``inSource`` or ``external``);
* at most ``sarif_max_results`` (25,000) results: the most severe are kept
  and the cut is reported in ``invocations[0].toolExecutionNotifications``.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from typing import Any

from hcpscan.core.redact import mask_values
from hcpscan.findings.model import Finding, RuleInfo, ScanReport, Severity, Status
from hcpscan.reporters import ruledocs
from hcpscan.reporters.interface import ReportOptions
from hcpscan.reporters.linehash import LineHashCache
from hcpscan.reporters.locations import artifact_path, path_uri
from hcpscan.reporters.summary import (
    RULE_STATUSES,
    SEVERITIES,
    finding_order,
    passed_over_text,
    summarize,
)

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "hcpscan"
KEY_FINGERPRINT = "hcpscan/v1"
LINE_FINGERPRINT = "primaryLocationLineHash"
MAX_LOCATIONS_PER_RESULT = 1_000
MAX_TAGS_PER_RULE = 10  # GitHub accepts 20 but shows only 10
# GitHub code scanning rejects a rule whose short or full description is longer;
# the whole text stays in ``help`` and on the rule's page (``helpUri``).
MAX_DESCRIPTION_CHARS = 1_024

LEVEL = {Severity.CRITICAL: "error", Severity.HIGH: "error", Severity.MEDIUM: "warning",
         Severity.LOW: "note", Severity.INFO: "note"}
SECURITY_SEVERITY = {Severity.CRITICAL: "9.5", Severity.HIGH: "8.0", Severity.MEDIUM: "5.5",
                     Severity.LOW: "3.0"}
PRECISIONS = ("very-high", "high", "medium", "low")
NOTIFICATION_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


class SarifReporter:
    name = "sarif"
    media_type = "application/sarif+json"
    extension = "sarif"

    def render(self, report: ScanReport, options: ReportOptions) -> str:
        log = build_log(report, options)
        for run in log["runs"]:  # what came from the input; rule docs are ours and quote examples
            run["results"] = mask_values(run["results"])
            run["invocations"] = mask_values(run["invocations"])
        return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def build_log(report: ScanReport, options: ReportOptions) -> dict[str, Any]:
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [_run(report, options)]}


def _run(report: ScanReport, options: ReportOptions) -> dict[str, Any]:
    root = os.path.abspath(options.sarif_root or os.getcwd())
    rules = _rules_that_ran(report)
    index = {rule.id: i for i, rule in enumerate(rules)}
    kept, left_out = _select(report.findings, options.sarif_max_results)
    hashes = LineHashCache(options.read_text)
    notifications = _truncation_notes(len(report.findings), kept, left_out, options)
    notifications += _coverage_notes(report, index)
    notifications += _diagnostic_notes(report, root)
    notifications += _passed_over_notes(report)
    category = options.sarif_category or TOOL_NAME
    summary = summarize(report)
    return {
        "tool": {"driver": {
            "name": TOOL_NAME,
            "version": report.tool_version,
            "informationUri": options.information_uri,
            "rules": [_descriptor(rule) for rule in rules],
        }},
        "automationDetails": {"id": category if category.endswith("/") else f"{category}/"},
        "invocations": [_invocation(report, notifications)],
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[f.rule_id], root, hashes) for f in kept],
        "properties": {
            "rules": {status.value: summary.rule_count(status) for status in RULE_STATUSES},
            # per rule, its status and how many objects it checked (a pass checked some)
            "ruleResults": [{"id": r.rule_id, "status": r.status.value,
                             "objectsChecked": r.objects_checked}
                            for r in summary.checked_by_rule()],
            "inventory": dict(sorted(report.inventory_counts.items())),
            "passedOver": [item.to_json() for item in report.passed_over],
            **({"config": report.metadata["config"]} if "config" in report.metadata else {}),
        },
    }


def _rules_that_ran(report: ScanReport) -> list[RuleInfo]:
    """Every rule with a result or a finding, sorted by id; rules the report
    knows no docs for get a bare descriptor so ``ruleIndex`` always resolves."""
    known = {rule.id: rule for rule in report.rules}
    severity: dict[str, Severity] = {}
    for finding in report.findings:
        severity.setdefault(finding.rule_id, finding.severity)
    ids = set(known) | {r.rule_id for r in report.results} | set(severity)
    return [known.get(rule_id) or RuleInfo(rule_id, rule_id, severity.get(rule_id, Severity.INFO),
                                           "uncategorized")
            for rule_id in sorted(ids)]


def _descriptor(rule: RuleInfo) -> dict[str, Any]:
    tags: list[str] = []
    for tag in ("security" if rule.severity in SECURITY_SEVERITY else "", rule.category,
                *rule.tags):
        if tag and tag not in tags:
            tags.append(tag)
    properties: dict[str, Any] = {
        "tags": tags[:MAX_TAGS_PER_RULE],
        "precision": rule.precision if rule.precision in PRECISIONS else "high",
    }
    if rule.severity in SECURITY_SEVERITY:
        properties["security-severity"] = SECURITY_SEVERITY[rule.severity]
    properties["severity"] = rule.severity.value
    descriptor: dict[str, Any] = {
        "id": rule.id,
        "shortDescription": {"text": within_limit(rule.title or rule.id)},
        "fullDescription": {"text": within_limit((rule.docs.what or rule.title or rule.id).strip())},
        "help": {"text": ruledocs.text(rule), "markdown": ruledocs.markdown(rule)},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": properties,
    }
    if rule.help_uri:
        descriptor["helpUri"] = rule.help_uri
    return descriptor


def within_limit(text: str, limit: int = MAX_DESCRIPTION_CHARS) -> str:
    """``text`` cut to ``limit`` characters at the last sentence (else word) end that
    fits, with an ellipsis; the full text is in the rule's help."""
    if len(text) <= limit:
        return text
    head = text[:limit - 1]
    cut = max(head.rfind(". "), head.rfind(".\n"))
    if cut > limit // 2:
        return head[:cut + 1] + " …"[: limit - cut - 1]
    if text[len(head)].isspace():  # the head ends at a whole word
        return head.rstrip() + "…"
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip() + "…"


def _select(findings: list[Finding], limit: int) -> tuple[list[Finding], list[Finding]]:
    """The ``limit`` most severe findings (failing before suppressed at equal severity)."""
    ranked = sorted(findings, key=lambda f: (-f.severity.rank, f.status is Status.SUPPRESSED,
                                              finding_order(f)))
    return ranked[:limit], ranked[limit:]


def _result(finding: Finding, rule_index: int, root: str, hashes: LineHashCache) -> dict[str, Any]:
    artifact = artifact_path(finding, root)
    line = 1 if artifact.virtual else max(1, finding.location.line)
    column = 1 if artifact.virtual else max(1, finding.location.column)
    obj = finding.object
    location: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": {"uri": artifact.uri},
            "region": {"startLine": line, "startColumn": column},
        },
        "logicalLocations": [{
            "name": obj.name,
            "fullyQualifiedName": "/".join(p for p in (obj.cluster, obj.namespace, obj.kind,
                                                       obj.name) if p),
            "kind": "resource",
        }],
    }
    if artifact.archive:
        location["message"] = {"text": f"in archive {finding.location.path}"}
    fingerprints = {KEY_FINGERPRINT: finding.key}
    if not artifact.virtual:
        line_hash = hashes.get(finding.location.path, line)
        if line_hash:
            fingerprints[LINE_FINGERPRINT] = line_hash
    result: dict[str, Any] = {
        "ruleId": finding.rule_id,
        "ruleIndex": rule_index,
        "level": LEVEL[finding.severity],
        "message": {"text": _message(finding, artifact.path if artifact.virtual else None)},
        "locations": [location][:MAX_LOCATIONS_PER_RESULT],
        "partialFingerprints": fingerprints,
        "properties": _result_properties(finding, artifact.virtual),
    }
    if finding.status is Status.SUPPRESSED:
        result["suppressions"] = [_suppression(finding)]
    fixes = _fixes(finding, root)
    if fixes:
        result["fixes"] = fixes
    return result


def _fixes(finding: Finding, root: str) -> list[dict[str, Any]]:
    """SARIF ``fixes``: the file edits of an automatic fix, as replacements of line regions
    (a fix that is commands or a change by hand stays in the result's properties)."""
    fix = finding.fix
    if fix is None or not fix.changes:
        return []
    changes = []
    for change in fix.changes:
        uri = path_uri(change.path, root)
        if not uri or not change.replacements:
            return []
        changes.append({
            "artifactLocation": {"uri": uri},
            "replacements": [{
                "deletedRegion": {"startLine": r.start_line, "startColumn": r.start_column,
                                  "endLine": r.end_line, "endColumn": r.end_column},
                **({"insertedContent": {"text": r.inserted}} if r.inserted else {}),
            } for r in change.replacements],
        })
    return [{"description": {"text": fix.summary}, "artifactChanges": changes}]


def _message(finding: Finding, virtual: str | None) -> str:
    lines = [finding.message.strip() or finding.rule_id]
    if finding.evidence:
        lines.append("Evidence:")
        lines.extend(f"- {item}" for item in finding.evidence)
    lines.extend(f"Note: {note}" for note in finding.notes)
    if virtual:
        lines.append(f"Location is virtual: {finding.object} was not read from a file (live "
                     f"cluster or standard input), so this points at {virtual} line 1.")
    return "\n".join(lines)


def _result_properties(finding: Finding, virtual: bool) -> dict[str, Any]:
    props: dict[str, Any] = {
        "severity": finding.severity.value,
        "object": finding.object.to_json(),
        "field": finding.field,
        "evidence": list(finding.evidence),
        "source": finding.location.to_json(),
    }
    if virtual:
        props["virtualLocation"] = True
    if finding.facts:  # structured, for fixes (a required flow's missing connections, ...)
        props["facts"] = finding.facts
    if finding.fix is not None:
        props["fix"] = finding.fix.to_json()
    return props


def _suppression(finding: Finding) -> dict[str, Any]:
    sup = finding.suppression
    if sup is None:  # suppressed without a record: say so rather than invent one
        return {"kind": "external", "status": "accepted",
                "justification": "suppressed (no justification recorded)"}
    kind = sup.kind if sup.kind in ("inSource", "external") else (
        "inSource" if sup.source == "annotation" else "external")
    out: dict[str, Any] = {"kind": kind, "status": "accepted",
                           "justification": sup.justification or f"suppressed by {sup.source}",
                           "properties": {"source": sup.source}}
    if sup.expires:
        out["properties"]["expires"] = sup.expires
    return out


def _truncation_notes(total: int, kept: list[Finding], left_out: list[Finding],
                      options: ReportOptions) -> list[dict[str, Any]]:
    if not left_out:
        return []
    omitted = {sev.value: 0 for sev in SEVERITIES}
    for finding in left_out:
        omitted[finding.severity.value] += 1
    counts = ", ".join(f"{n} {sev}" for sev, n in omitted.items() if n)
    return [{
        "level": "warning",
        "descriptor": {"id": "hcpscan/results-truncated"},
        "message": {"text": f"{total} results exceed GitHub's limit of "
                            f"{options.sarif_max_results} per run: kept the {len(kept)} most "
                            f"severe and left out {len(left_out)} ({counts}). The JSON report "
                            f"has them all."},
        "properties": {"total": total, "kept": len(kept), "omitted": omitted},
    }]


def _coverage_notes(report: ScanReport, index: dict[str, int]) -> list[dict[str, Any]]:
    notes = []
    for result in sorted(report.results, key=lambda r: r.rule_id):
        if result.status is not Status.NOT_EVALUABLE:
            continue
        notes.append({
            "level": "warning",
            "descriptor": {"id": "hcpscan/rule-not-evaluable"},
            "associatedRule": {"id": result.rule_id, "index": index[result.rule_id]},
            "message": {"text": f"rule {result.rule_id} was not evaluated: "
                                f"{result.reason or 'no reason given'}"},
        })
    return notes


def _diagnostic_notes(report: ScanReport, root: str) -> list[dict[str, Any]]:
    notes = []
    for diag in report.diagnostics:
        path = str(diag.get("path") or "")
        line = diag.get("line")
        where = f"{path}:{line}" if path and line else path
        text = str(diag.get("message") or "input problem")
        if diag.get("hint"):
            text = f"{text} ({diag['hint']})"
        note: dict[str, Any] = {
            "level": NOTIFICATION_LEVEL.get(str(diag.get("severity")), "warning"),
            "descriptor": {"id": "hcpscan/input"},
            "message": {"text": f"{where}: {text}" if where else text},
        }
        uri = path_uri(path, root) if path else ""
        if uri:
            physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
            if isinstance(line, int) and line > 0:
                physical["region"] = {"startLine": line}
            note["locations"] = [{"physicalLocation": physical}]
        notes.append(note)
    return notes


def _passed_over_notes(report: ScanReport) -> list[dict[str, Any]]:
    """Input not read on purpose, one note per reason (counts in run.properties.passedOver)."""
    return [{"level": "note", "descriptor": {"id": "hcpscan/passed-over"},
             "message": {"text": f"passed over, not read: {passed_over_text(item)}"}}
            for item in report.passed_over]


def _invocation(report: ScanReport, notifications: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"executionSuccessful": True}
    started = _utc(report.metadata.get("started"))
    finished = _utc(report.metadata.get("finished"))
    duration = report.metadata.get("duration")
    if started and not finished and isinstance(duration, (int, float)):
        finished = started + timedelta(seconds=float(duration))
    if started:
        out["startTimeUtc"] = _stamp(started)
    if finished:
        out["endTimeUtc"] = _stamp(finished)
    out["toolExecutionNotifications"] = notifications
    return out


def _utc(value: object) -> datetime | None:
    """A metadata time stamp (ISO 8601 text or datetime) in UTC; naive means UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _stamp(value: datetime) -> str:
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond // 1000:03d}"
    return text + "Z"
