"""What every human-facing report shows the same way: order, counts and coverage."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hcpscan.findings.model import (
    Finding,
    Location,
    PassedOver,
    RuleInfo,
    RuleResult,
    ScanReport,
    Severity,
    Status,
)

SEVERITIES: tuple[Severity, ...] = tuple(sorted(Severity, key=lambda s: -s.rank))
RULE_STATUSES: tuple[Status, ...] = (Status.FAIL, Status.PASS, Status.NOT_EVALUABLE,
                                     Status.NOT_APPLICABLE, Status.SUPPRESSED)
# Statuses whose rules a report lists with their reasons (a pass or a fail speaks for itself).
EXPLAINED_STATUSES: tuple[tuple[Status, str], ...] = (
    (Status.NOT_EVALUABLE, "not evaluable"), (Status.NOT_APPLICABLE, "not applicable"),
    (Status.SUPPRESSED, "suppressed"))


def finding_order(finding: Finding) -> tuple:
    """Most severe first; then by rule, file, line and object so output is stable."""
    loc = finding.location
    return (-finding.severity.rank, finding.rule_id, loc.path, loc.line, loc.column,
            str(finding.object), finding.field, finding.message)


def ordered(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=finding_order)


def where(location: Location) -> str:
    """``file:line`` as a person would click it; virtual paths say so."""
    text = f"{location.path}:{location.line}" if location.path else "(no file)"
    return f"{text} (virtual)" if location.virtual else text


def config_text(report: ScanReport) -> str | None:
    """``path (sha256 …)`` of the config the run used, ``none``, or None when the
    report does not say (a report built without the CLI)."""
    if "config" not in report.metadata:
        return None
    used = report.metadata["config"]
    if not isinstance(used, dict):
        return "none"
    return f"{used.get('path')} (sha256 {used.get('sha256')})"


def rule_index(report: ScanReport) -> dict[str, RuleInfo]:
    return {info.id: info for info in report.rules}


@dataclass(frozen=True, slots=True)
class Summary:
    failing: dict[Severity, int]
    suppressed: dict[Severity, int]
    rules: dict[Status, list[RuleResult]]

    @property
    def total_failing(self) -> int:
        return sum(self.failing.values())

    @property
    def total_suppressed(self) -> int:
        return sum(self.suppressed.values())

    def rule_count(self, status: Status) -> int:
        return len(self.rules[status])

    def failing_text(self) -> str:
        """``3 findings (1 critical, 2 high)`` or ``no findings``."""
        total = self.total_failing
        if not total:
            return "no findings"
        parts = ", ".join(f"{n} {sev.value}" for sev, n in self.failing.items() if n)
        return f"{total} finding{'s' if total != 1 else ''} ({parts})"

    def coverage_text(self) -> str:
        total = sum(len(v) for v in self.rules.values())
        return (f"{total} rule{'s' if total != 1 else ''}: "
                f"{self.rule_count(Status.PASS)} passed, {self.rule_count(Status.FAIL)} failed, "
                f"{self.rule_count(Status.NOT_EVALUABLE)} not evaluable, "
                f"{self.rule_count(Status.NOT_APPLICABLE)} not applicable, "
                f"{self.rule_count(Status.SUPPRESSED)} suppressed")

    def checked_by_rule(self) -> list[RuleResult]:
        """Every rule's result, by rule id: each carries how many objects it checked."""
        return sorted((r for results in self.rules.values() for r in results),
                      key=lambda r: r.rule_id)

    def checked_text(self) -> str:
        """``HCP001=3, HCP002=0, ...``: the objects each rule checked, on one line (a wrap
        falls between rules)."""
        return ", ".join(f"{r.rule_id}={r.objects_checked}" for r in self.checked_by_rule())


def summarize(report: ScanReport) -> Summary:
    failing = {sev: 0 for sev in SEVERITIES}
    suppressed = {sev: 0 for sev in SEVERITIES}
    for finding in report.findings:
        bucket = suppressed if finding.status is Status.SUPPRESSED else failing
        bucket[finding.severity] += 1
    rules: dict[Status, list[RuleResult]] = {status: [] for status in RULE_STATUSES}
    for result in sorted(report.results, key=lambda r: r.rule_id):
        rules.setdefault(result.status, []).append(result)
    return Summary(failing, suppressed, rules)


def passed_over_text(item: PassedOver) -> str:
    """``3 hidden file`` or, with a breakdown, ``170 left out (...) (apirequestcounts 160, ...)``:
    the same words in every report, whatever reasons the loader gives."""
    text = f"{item.count} {item.reason}"
    if item.by:
        parts = sorted(item.by.items(), key=lambda kv: (-kv[1], kv[0]))
        text += " (" + ", ".join(f"{name} {count}" for name, count in parts) + ")"
    return text


def passed_over_total(report: ScanReport) -> int:
    return sum(item.count for item in report.passed_over)
