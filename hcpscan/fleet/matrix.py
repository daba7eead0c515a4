"""The fleet matrix: per managed cluster, the state of its scan and its results per rule.

Built from what OCM brought back to the hub (:mod:`hcpscan.fleet.hub` reads it);
nothing here reads a network or a clock, so every state is a pure function of the
objects and ``now``. A cluster's scan is one of:

* ``ok``: the last scheduled run succeeded and its ScanSummary is recent;
* ``stale``: the last scan is older than ``stale_after`` (the CronJob has not run,
  or the cluster stopped reporting: see ``available``);
* ``failed``: a run started after the last success and its deadline has passed;
* ``never-reported``: the ManifestWork is applied but no ScanSummary came back yet;
* ``not-applied``: the ManifestWork exists but the work agent has not applied it;
* ``no-work``: the Placement chose the cluster but it has no ManifestWork;
* ``not-placed``: a ManagedCluster hcpscan is not meant to run on (not an error).

Everything but ``ok`` and ``not-placed`` makes the fleet's answer incomplete.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from hcpscan.core.redact import mask_credentials
from hcpscan.core.userinfo import find_credentials, split_outside_credentials
from hcpscan.findings.model import Severity
from hcpscan.fleet import contract

# The CronJob's activeDeadlineSeconds (deploy/hcpscan-cronjob.yaml): a run scheduled
# longer ago than this without a success after it has failed, not "still running".
RUN_DEADLINE = dt.timedelta(seconds=1800)


class ScanState(str, Enum):
    OK = "ok"
    STALE = "stale"
    FAILED = "failed"
    NEVER_REPORTED = "never-reported"
    NOT_APPLIED = "not-applied"
    NO_WORK = "no-work"
    NOT_PLACED = "not-placed"

    @property
    def complete(self) -> bool:
        return self in (ScanState.OK, ScanState.NOT_PLACED)


@dataclass(slots=True)
class ClusterRow:
    name: str
    state: ScanState
    reason: str = ""
    available: bool | None = None  # the ManagedCluster's ManagedClusterConditionAvailable
    last_scan: dt.datetime | None = None
    last_schedule: dt.datetime | None = None
    last_success: dt.datetime | None = None
    findings: dict[str, int] = field(default_factory=dict)  # severity -> count
    rules: dict[str, tuple[str, int]] = field(default_factory=dict)  # rule -> (severity, count)
    not_evaluable: list[str] = field(default_factory=list)
    reported_as: str = ""  # the name the cluster's own scan gave itself (ClusterClaim, --cluster-name)
    digest: str = ""
    version: str = ""
    published_to: str = ""
    unreadable: list[str] = field(default_factory=list)  # feedback values that did not parse

    def worst(self) -> Severity | None:
        ranked = [Severity(s) for s, n in self.findings.items() if n]
        return max(ranked, key=lambda s: s.rank) if ranked else None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "state": self.state.value, "reason": self.reason,
            "available": self.available,
            "lastScan": iso(self.last_scan), "lastSchedule": iso(self.last_schedule),
            "lastSuccess": iso(self.last_success),
            "findings": dict(self.findings),
            "rules": {rule: {"severity": sev, "count": n} for rule, (sev, n) in sorted(self.rules.items())},
            "notEvaluable": list(self.not_evaluable),
            "reportedAs": self.reported_as, "reportDigest": self.digest, "hcpscanVersion": self.version,
            "reportsPublishedTo": self.published_to, "unreadable": list(self.unreadable),
        }


@dataclass(slots=True)
class FleetMatrix:
    hub: str  # the hub's kubeconfig context
    read_at: dt.datetime
    stale_after: dt.timedelta
    clusters: list[ClusterRow]
    notes: list[str] = field(default_factory=list)  # what could not be read, and why

    @property
    def rules(self) -> list[str]:
        """Rules failing on some cluster, the most severe first, then by id."""
        worst: dict[str, int] = {}
        for row in self.clusters:
            for rule, (severity, _) in row.rules.items():
                worst[rule] = max(worst.get(rule, -1), Severity(severity).rank)
        return sorted(worst, key=lambda r: (-worst[r], r))

    def failing(self, at_least: Severity) -> list[ClusterRow]:
        return [row for row in self.clusters
                if any(Severity(s).at_least(at_least) and n for s, n in row.findings.items())]

    def incomplete(self) -> list[ClusterRow]:
        return [row for row in self.clusters if not row.state.complete]

    def counts(self) -> dict[str, int]:
        out = {state.value: 0 for state in ScanState}
        for row in self.clusters:
            out[row.state.value] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {"hub": self.hub, "readAt": iso(self.read_at),
                "staleAfterHours": self.stale_after.total_seconds() / 3600,
                "states": self.counts(), "rules": self.rules,
                "clusters": [row.to_json() for row in self.clusters], "notes": list(self.notes)}


def parse_time(value: object) -> dt.datetime | None:
    """RFC 3339 (``...Z`` or an offset) as an aware datetime; anything else None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def iso(when: dt.datetime | None) -> str | None:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if when else None


def as_dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def feedback(work: dict[str, Any], group: str, resource: str) -> dict[str, Any] | None:
    """The feedback values (name -> value) OCM synced for one manifest of ``work``, or
    None when the work's status has no entry for that manifest. A status of another
    shape reads as no entry (whoever can write the hub's ManifestWorks wrote it)."""
    for entry in as_list(as_dict(as_dict(work.get("status")).get("resourceStatus")).get("manifests")):
        meta = as_dict(as_dict(entry).get("resourceMeta"))
        if meta.get("group") == group and meta.get("resource") == resource:
            values = as_list(as_dict(entry.get("statusFeedback")).get("values"))
            return {v["name"]: _value(as_dict(v.get("fieldValue"))) for v in values
                    if isinstance(v, dict) and isinstance(v.get("name"), str)}
    return None


def _value(field_value: dict[str, Any]) -> Any:
    kind = field_value.get("type")
    return {"Integer": field_value.get("integer"), "String": field_value.get("string"),
            "Boolean": field_value.get("boolean"), "JsonRaw": field_value.get("jsonRaw")}.get(str(kind))


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for cond in as_list(as_dict(obj.get("status")).get("conditions")):
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return None


def available(managed_cluster: dict[str, Any] | None) -> bool | None:
    cond = _condition(managed_cluster or {}, "ManagedClusterConditionAvailable")
    return None if cond is None else cond.get("status") == "True"


def classify(name: str, managed_cluster: dict[str, Any] | None, work: dict[str, Any] | None,
             placed: bool, now: dt.datetime, stale_after: dt.timedelta) -> ClusterRow:
    """One cluster's row from its ManagedCluster, its hcpscan ManifestWork and whether the
    Placement chose it."""
    row = ClusterRow(name, ScanState.OK, available=available(managed_cluster))
    if work is None:
        row.state = ScanState.NO_WORK if placed else ScanState.NOT_PLACED
        row.reason = ("the Placement chose it; no ManifestWork yet" if placed
                      else "not chosen by the Placement, no ManifestWork")
        return row
    cron = feedback(work, "batch", "cronjobs") or {}
    summary = feedback(work, contract.GROUP, contract.PLURAL) or {}
    row.last_schedule = parse_time(cron.get("lastScheduleTime"))
    row.last_success = parse_time(cron.get("lastSuccessfulTime"))
    _read_summary(row, summary)
    applied = _condition(work, "Applied")
    if row.last_scan is None:
        if applied is None or applied.get("status") != "True":
            row.state = ScanState.NOT_APPLIED
            row.reason = ("the work agent has not applied the ManifestWork: "
                          f"{_text((applied or {}).get('message')) or 'no Applied condition yet'}")
        elif row.last_schedule and (now - row.last_schedule) > RUN_DEADLINE:
            row.state = ScanState.FAILED
            row.reason = f"ran at {iso(row.last_schedule)} and never published a ScanSummary"
        else:
            row.state = ScanState.NEVER_REPORTED
            row.reason = "applied; no ScanSummary came back yet"
        return row
    if (row.last_schedule and (row.last_success is None or row.last_schedule > row.last_success)
            and now - row.last_schedule > RUN_DEADLINE):
        row.state = ScanState.FAILED
        row.reason = (f"the run of {iso(row.last_schedule)} did not succeed; results are of "
                      f"{iso(row.last_scan)}")
    elif now - row.last_scan > stale_after:
        row.state = ScanState.STALE
        hours = (now - row.last_scan).total_seconds() / 3600
        row.reason = f"last scan {hours:.0f} h ago"
        if row.available is False:
            row.reason += "; the cluster is not available to the hub"
    return row


# What a matrix repeats of a value a managed cluster fed back: whoever can write the hub's
# ManifestWork status wrote it, so a 10 MB string is shown shortened, not 10 MB per cell.
MAX_SHOWN = 200
MAX_ITEMS = 500  # failing / not-evaluable rules and unreadable items per cluster


def _short(text: str) -> str:
    """A fed-back text as shown: its passwords masked first (a cut could split a URL so
    that no masking recognises it), then shortened, never inside a masked URL."""
    text = mask_credentials(text)
    if len(text) <= MAX_SHOWN:
        return text
    cut = MAX_SHOWN
    for credential in find_credentials(text):
        if credential.start < cut < credential.end:
            cut = credential.start
    return f"{text[:cut]}... ({len(text) - cut} more characters)"


def _said(value: object) -> str:
    """A fed-back value as a message repeats it: its repr, shortened (a huge int's repr
    would pass Python's digit limit, so it is said by its size)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** 100:
        return f"an integer of {len(str(abs(value))) if abs(value) < 10 ** 4000 else 'over 4000'} digits"
    return _short(repr(value))


def _text(value: object) -> str:
    return _short(value) if isinstance(value, str) else ""


def _read_summary(row: ClusterRow, summary: dict[str, Any]) -> None:
    row.last_scan = parse_time(summary.get("scanTime"))
    if summary.get("scanTime") and row.last_scan is None:
        row.unreadable.append(f"scanTime={_said(summary.get('scanTime'))}")
    for severity in contract.SEVERITIES:
        value = summary.get(severity)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10 ** 9:
            row.findings[severity] = value
        elif value is not None:
            row.unreadable.append(f"{severity}={_said(value)}")
    failing = summary.get("failingRules")
    if isinstance(failing, str):
        rules, bad = contract.decode_rules(failing)
        row.rules = dict(sorted(rules.items())[:MAX_ITEMS])
        row.unreadable += [f"failingRules item {_said(item)}" for item in bad[:MAX_ITEMS]]
        if len(rules) > MAX_ITEMS or len(bad) > MAX_ITEMS:
            row.unreadable.append(f"failingRules: {len(rules)} rules and {len(bad)} items not read; "
                                  f"the first {MAX_ITEMS} of each shown")
    evaluable = summary.get("notEvaluableRules")
    if isinstance(evaluable, str):
        items = [r for r in split_outside_credentials(evaluable, ",") if r][:MAX_ITEMS]
        row.not_evaluable = [_short(r) for r in items]
    row.reported_as = _text(summary.get("cluster"))
    row.digest = _text(summary.get("reportDigest"))
    row.version = _text(summary.get("hcpscanVersion"))
    row.published_to = _text(summary.get("reportsPublishedTo"))
