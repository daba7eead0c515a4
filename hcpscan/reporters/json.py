"""The JSON report: everything one run found, in a documented, versioned shape.

The shape is ``hcpscan-report.schema.json`` next to this module. Versioning:
``schema_version`` is ``MAJOR.MINOR``; adding a field bumps MINOR (consumers
must ignore fields they do not know), renaming, removing or changing the
meaning of a field bumps MAJOR.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from enum import Enum
from pathlib import PurePath
from typing import Any

from hcpscan.core.redact import mask_values
from hcpscan.findings.model import ScanReport
from hcpscan.reporters.formats import JSON_DOCUMENTS
from hcpscan.reporters.interface import ReportOptions
from hcpscan.reporters.summary import RULE_STATUSES, ordered, passed_over_total, rule_index, summarize

# 1.1: passed_over, summary.passed_over; 1.2: findings[].fix; 1.3: findings[].facts and
# findings[].data (registered in formats.py)
SCHEMA_VERSION = JSON_DOCUMENTS["scan"].version
SCHEMA_FILE = "hcpscan-report.schema.json"


class JsonReporter:
    name = "json"
    media_type = "application/json"
    extension = "json"

    def render(self, report: ScanReport, options: ReportOptions) -> str:
        document = mask_values(build_document(report, options))
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def build_document(report: ScanReport, options: ReportOptions) -> dict[str, Any]:
    summary = summarize(report)
    infos = rule_index(report)
    rules = []
    for result in sorted(report.results, key=lambda r: r.rule_id):
        info = infos.get(result.rule_id)
        entry = result.to_json()
        entry["title"] = info.title if info else ""
        entry["severity"] = info.severity.value if info else None
        entry["category"] = info.category if info else ""
        rules.append(entry)
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "hcpscan", "version": report.tool_version,
                 "information_uri": options.information_uri},
        "scan": _plain(report.metadata),
        "summary": {
            "findings": {sev.value: n for sev, n in summary.failing.items()},
            "suppressed": {sev.value: n for sev, n in summary.suppressed.items()},
            "rules": {status.value: summary.rule_count(status) for status in RULE_STATUSES},
            "diagnostics": len(report.diagnostics),
            "passed_over": passed_over_total(report),
        },
        "findings": [finding.to_json() for finding in ordered(report.findings)],
        "rules": rules,
        "diagnostics": [_plain(diag) for diag in report.diagnostics],
        "passed_over": [item.to_json() for item in report.passed_over],
        "inventory": {"total": sum(report.inventory_counts.values()),
                      "kinds": dict(sorted(report.inventory_counts.items()))},
    }


def _plain(value: Any) -> Any:
    """Metadata as JSON values: times as ISO 8601, paths as text, sets sorted."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
