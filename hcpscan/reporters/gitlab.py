"""GitLab Code Quality: the JSON array GitLab shows in merge requests and pipelines.

Declared in ``.gitlab-ci.yml`` as ``artifacts: reports: codequality: hcpscan.json``.
One issue per failing finding (suppressed findings are left out, as they are
accepted): ``description``, ``check_name`` (the rule id), a ``fingerprint``
unique within the report and stable across runs (from ``Finding.key``: rule,
cluster, object and field, never the line), ``severity`` on GitLab's five-step
scale, and ``location.path`` relative to the checkout with ``lines.begin``.
A finding in an archive member points at the archive; one with no file (live
cluster, standard input) at its virtual path ``cluster/<context>/...``.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from hcpscan.core.redact import mask_values
from hcpscan.findings.model import Finding, ScanReport, Severity, Status
from hcpscan.reporters.interface import ReportOptions
from hcpscan.reporters.locations import artifact_path
from hcpscan.reporters.markup import visible
from hcpscan.reporters.summary import ordered

SEVERITY = {Severity.CRITICAL: "blocker", Severity.HIGH: "critical", Severity.MEDIUM: "major",
            Severity.LOW: "minor", Severity.INFO: "info"}


class GitlabReporter:
    name = "gitlab"
    media_type = "application/json"
    extension = "json"

    def render(self, report: ScanReport, options: ReportOptions) -> str:
        root = os.path.abspath(options.sarif_root or os.getcwd())
        seen: dict[str, int] = {}
        issues = []
        for finding in ordered(report.findings):
            if finding.status is not Status.FAIL:
                continue
            issues.append(_issue(finding, root, _fingerprint(finding, seen)))
        return json.dumps(mask_values(issues), indent=2, ensure_ascii=False) + "\n"


def _fingerprint(finding: Finding, seen: dict[str, int]) -> str:
    """sha256 of the finding's key; a second finding with the same key (same rule,
    object and field) gets its ordinal appended, so GitLab shows both."""
    base = hashlib.sha256(finding.key.encode("utf-8")).hexdigest()
    count = seen.get(base, 0)
    seen[base] = count + 1
    return base if count == 0 else hashlib.sha256(f"{finding.key}\0{count}".encode()).hexdigest()


def _issue(finding: Finding, root: str, fingerprint: str) -> dict[str, Any]:
    artifact = artifact_path(finding, root)
    line = 1 if artifact.virtual or artifact.archive else max(1, finding.location.line)
    description = f"{finding.rule_id}: {visible(finding.message)} ({visible(str(finding.object))})"
    if artifact.archive:
        description += f" in {visible(finding.location.path)}:{finding.location.line}"
    issue: dict[str, Any] = {
        "type": "issue",
        "description": description,
        "check_name": finding.rule_id,
        "fingerprint": fingerprint,
        "severity": SEVERITY[finding.severity],
        "categories": ["Security"],  # exposure and proxy reach, in Code Climate's categories
        "location": {"path": artifact.archive or artifact.path, "lines": {"begin": line}},
    }
    if finding.evidence:
        issue["content"] = {"body": "\n".join(f"- {visible(item)}" for item in finding.evidence)}
    return issue
