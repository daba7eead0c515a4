"""The fleet matrix: each cluster's scan state from what OCM fed back, and the formats."""

from __future__ import annotations

import datetime as dt
import json

from hcpscan.findings.model import (
    Finding,
    Location,
    ObjectRef,
    RuleInfo,
    RuleResult,
    ScanReport,
    Severity,
    Status,
)
from hcpscan.fleet import contract
from hcpscan.fleet.matrix import FleetMatrix, ScanState, classify
from hcpscan.fleet.render import render
from tests.live.ocm import managed_cluster, simulated_work, stamp

NOW = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
STALE = dt.timedelta(hours=13)


def ago(**delta: float) -> str:
    return stamp(NOW - dt.timedelta(**delta))


def summary(scanned: str, failing: str = "", **counts: int) -> dict:
    values = {"scanTime": scanned, "failingRules": failing, "notEvaluableRules": "PRX011",
              "reportDigest": "sha256:" + "0" * 64, "hcpscanVersion": "0.1.0",
              "reportsPublishedTo": "openreports.io/v1alpha1"}
    values.update({s: counts.get(s, 0) for s in contract.SEVERITIES})
    return values


def row(name="edge-1", feedback=None, cron=None, placed=True, work=True, available=True):
    obj = simulated_work(name, {}, feedback, cron, NOW) if work else None
    return classify(name, managed_cluster(name, available), obj, placed, NOW, STALE)


def test_a_recent_successful_scan_is_ok_and_carries_its_counts():
    r = row(feedback=summary(ago(hours=2), "HCP001=high:2,PRX003=medium:1", high=2, medium=1),
            cron={"lastScheduleTime": ago(hours=2), "lastSuccessfulTime": ago(hours=2)})
    assert r.state is ScanState.OK
    assert r.findings["high"] == 2 and r.rules == {"HCP001": ("high", 2), "PRX003": ("medium", 1)}
    assert r.not_evaluable == ["PRX011"] and r.worst() is Severity.HIGH


def test_an_old_scan_is_stale_and_says_when_the_cluster_is_unreachable():
    r = row(feedback=summary(ago(hours=30)), available=False,
            cron={"lastScheduleTime": ago(hours=30), "lastSuccessfulTime": ago(hours=30)})
    assert r.state is ScanState.STALE
    assert r.reason == "last scan 30 h ago; the cluster is not available to the hub"


def test_a_run_after_the_last_success_past_its_deadline_failed():
    r = row(feedback=summary(ago(hours=8)),
            cron={"lastScheduleTime": ago(hours=2), "lastSuccessfulTime": ago(hours=8)})
    assert r.state is ScanState.FAILED and "did not succeed" in r.reason


def test_a_run_still_within_its_deadline_is_not_a_failure():
    r = row(feedback=summary(ago(hours=6)),
            cron={"lastScheduleTime": ago(minutes=5), "lastSuccessfulTime": ago(hours=6)})
    assert r.state is ScanState.OK


def test_runs_that_never_published_are_failed_and_no_run_yet_is_never_reported():
    assert row(cron={"lastScheduleTime": ago(hours=3)}).state is ScanState.FAILED
    assert row(cron={}).state is ScanState.NEVER_REPORTED


def test_placement_without_a_work_and_no_placement_at_all():
    assert row(work=False).state is ScanState.NO_WORK
    unplaced = row(work=False, placed=False)
    assert unplaced.state is ScanState.NOT_PLACED and unplaced.state.complete


def test_a_work_the_agent_has_not_applied():
    work = simulated_work("edge-9", {}, None, None, NOW)
    del work["status"]
    r = classify("edge-9", managed_cluster("edge-9"), work, True, NOW, STALE)
    assert r.state is ScanState.NOT_APPLIED


def test_feedback_that_does_not_parse_is_reported_not_dropped():
    bad = summary(ago(hours=1), "HCP001=high:2,<script>,PRX003=urgent:1", high=2)
    bad["medium"] = "many"
    r = row(feedback=bad)
    assert r.rules == {"HCP001": ("high", 2)}
    assert r.unreadable == ["medium='many'", "failingRules item '<script>'",
                            "failingRules item 'PRX003=urgent:1'"]


def test_the_rule_list_round_trips():
    rules = {"HCP001": ("high", 2), "PRX003": ("medium", 10)}
    assert contract.decode_rules(contract.encode_rules(rules)) == (rules, [])


def test_summary_counts_failing_findings_only():
    where = Location("a.yaml")
    obj = ObjectRef("management", "v1", "ConfigMap", "ns", "cm")
    findings = [Finding("PRX008", Severity.HIGH, obj, "data", where, "m"),
                Finding("PRX008", Severity.CRITICAL, obj, "data.x", where, "m"),
                Finding("PRX003", Severity.MEDIUM, obj, "data", where, "m", status=Status.SUPPRESSED)]
    report = ScanReport("0.1.0", [RuleInfo("PRX008", "t", Severity.HIGH, "proxy")],
                        [RuleResult("PRX008", Status.FAIL), RuleResult("PRX001", Status.PASS),
                         RuleResult("PRX011", Status.NOT_EVALUABLE, "kind not served")],
                        findings, [], {}, {"started": "2026-03-01T10:00:00+00:00"})
    status = contract.scan_summary(report, "edge-1", "sha256:x", "none")["status"]
    assert status["findings"] == {"critical": 1, "high": 1, "medium": 0, "low": 0, "info": 0}
    assert status["failingRules"] == "PRX008=critical:2"
    assert status["notEvaluableRules"] == "PRX011"
    assert status["rules"] == {"passed": 1, "failed": 1, "notEvaluable": 1}


def matrix() -> FleetMatrix:
    rows = [row("edge-1", summary(ago(hours=1), "HCP001=high:2", high=2),
                {"lastScheduleTime": ago(hours=1), "lastSuccessfulTime": ago(hours=1)}),
            row("edge-<b>|2", summary(ago(hours=1), "PRX007=low:1,A|B=critical:1", low=1)),
            row("lab-9", work=False, placed=False)]
    return FleetMatrix("hub", NOW, STALE, rows, ["placement x/y: no PlacementDecision found"])


def test_fail_on_counts_clusters_across_the_fleet():
    m = matrix()
    assert [r.name for r in m.failing(Severity.HIGH)] == ["edge-1"]
    assert [r.name for r in m.failing(Severity.LOW)] == ["edge-1", "edge-<b>|2"]
    assert m.rules == ["HCP001", "PRX007"]  # "A|B" is no rule id: not read


def test_every_format_shows_the_matrix_and_escapes_what_clusters_wrote():
    m = matrix()
    table = render(m, "table")
    lines = [line.split() for line in table.splitlines()]
    assert ["CLUSTER", "HCP001", "PRX007"] in lines and ["edge-1", "H2", "."] in lines
    assert ["edge-<b>|2", ".", "L1"] in lines and ["lab-9"] in lines
    assert "note: placement x/y: no PlacementDecision found" in table
    data = json.loads(render(m, "json"))
    assert data["states"]["ok"] == 2 and data["clusters"][0]["rules"]["HCP001"] == {"severity": "high",
                                                                                  "count": 2}
    md = render(m, "markdown")
    assert "| edge-&lt;b>\\|2 |" in md and "| edge-1 | H2 | . |" in md
    page = render(m, "html")
    assert "edge-&lt;b&gt;|2" in page and "<b>|2" not in page


def test_a_work_status_of_any_shape_reads_as_no_feedback_never_a_traceback():
    shapes = [None, "x", [], {"resourceStatus": "x"}, {"resourceStatus": {"manifests": {"a": 1}}},
              {"resourceStatus": {"manifests": ["x", {"resourceMeta": "x"},
                                                {"resourceMeta": {"group": "hcpscan.io",
                                                                  "resource": "scansummaries"},
                                                 "statusFeedback": ["x"]}]}},
              {"conditions": "x", "resourceStatus": {"manifests": [
                  {"resourceMeta": {"group": "hcpscan.io", "resource": "scansummaries"},
                   "statusFeedback": {"values": ["x", {"name": 3}, {"name": "high", "fieldValue": "x"},
                                                 {"name": "critical",
                                                  "fieldValue": {"type": "Boolean", "boolean": True}}]}}]}}]
    for status in shapes:
        work = simulated_work("edge-1", {}, None, None, NOW)
        work["status"] = status
        r = classify("edge-1", {"status": "x"}, work, True, NOW, STALE)
        assert r.state is ScanState.NOT_APPLIED and r.last_scan is None
    assert r.unreadable == ["critical=True"]  # a boolean is not a count


def test_the_digest_changes_with_the_results_not_with_the_time_of_the_scan():
    from hcpscan.reporters.openreports import build_reports

    where = Location("a.yaml")
    obj = ObjectRef("management", "v1", "ConfigMap", "ns", "cm", uid="u-1")

    def report(started: str, severity: Severity) -> ScanReport:
        return ScanReport("0.1.0", [RuleInfo("PRX008", "t", Severity.HIGH, "proxy")],
                          [RuleResult("PRX008", Status.FAIL)],
                          [Finding("PRX008", severity, obj, "data", where, "m")], [], {},
                          {"started": started})

    first = contract.report_digest(build_reports(report("2026-03-01T06:17:00+00:00", Severity.HIGH)))
    again = contract.report_digest(build_reports(report("2026-03-01T12:17:00+00:00", Severity.HIGH)))
    other = contract.report_digest(build_reports(report("2026-03-01T12:17:00+00:00", Severity.CRITICAL)))
    assert first == again != other


def test_the_json_matrix_is_the_registered_versioned_document():
    import jsonschema

    from hcpscan.reporters.formats import JSON_DOCUMENTS

    data = json.loads(render(matrix(), "json"))
    fleet = JSON_DOCUMENTS["fleet"]
    assert data["schema_version"] == fleet.version and next(iter(data)) == "schema_version"
    validator = jsonschema.Draft202012Validator(fleet.load_schema())
    assert [e.message for e in validator.iter_errors(data)] == []
    assert {row["state"] for row in data["clusters"]} >= {"ok", "not-placed"}
    assert not validator.is_valid({k: v for k, v in data.items() if k != "schema_version"})


def test_garbage_feedback_from_a_hub_is_said_shortened_never_a_traceback():
    """Huge strings, huge numbers, wrong types and endless rule lists in what a managed
    cluster fed back (whoever can write the hub's ManifestWork status wrote it): the row
    says what it could not read, each value shortened, and the fleet still renders."""
    from hcpscan.fleet.matrix import MAX_ITEMS, MAX_SHOWN

    bad = summary(ago(hours=1), "HCP001=high:" + "9" * 5000 + ",PRX003=medium:1," + "x" * 100_000,
                  high=2)
    bad["medium"] = 10 ** 3000
    bad["low"] = "y" * 1_000_000
    bad["critical"] = True
    bad["cluster"] = "c" * 1_000_000
    bad["hcpscanVersion"] = {"a": 1}
    bad["notEvaluableRules"] = ",".join(f"R{i}" for i in range(10_000))
    r = row(feedback=bad)
    assert r.rules == {"PRX003": ("medium", 1)}  # the one item that reads
    assert r.findings["high"] == 2
    assert any(u.startswith("failingRules item 'HCP001=high:999") for u in r.unreadable)
    assert "medium=an integer of 3001 digits" in r.unreadable and "critical=True" in r.unreadable
    assert all(len(u) < MAX_SHOWN + 80 for u in r.unreadable), r.unreadable
    assert len(r.reported_as) < MAX_SHOWN + 40 and r.version == ""
    assert len(r.not_evaluable) == MAX_ITEMS
    many = summary(ago(hours=1), ",".join(f"R{i}=high:1" for i in range(2000)))
    r2 = row("edge-2", feedback=many)
    assert len(r2.rules) == MAX_ITEMS and "2000 rules" in r2.unreadable[-1]
    matrix = FleetMatrix("hub", NOW, STALE, [r, r2])
    for fmt in ("table", "json", "markdown", "html"):
        text = render(matrix, fmt)
        assert len(text) < 400_000 and "y" * (MAX_SHOWN + 1) not in text, fmt


def _leaked(text: str) -> list[str]:
    return [p for p in ("Zq9", "Kx7", "s3cr") if p in text]


def test_fed_back_values_are_masked_before_they_are_shortened():
    """A managed cluster's status feedback (failing rules, not-evaluable rules, its name)
    and the work agent's Applied message go through the masker before the 200-character
    cut: a cut first split 'http://u:Zq9...@proxy' so that no masking saw a URL, and the
    shortened text never ends inside a masked URL."""
    from hcpscan.fleet.matrix import MAX_SHOWN

    url = "http://jdoe@corp.example.com:Zq9;http://:Kx7@proxy.corp.example.com:3128"
    for pad in range(MAX_SHOWN - 60, MAX_SHOWN + 5, 7):  # the cut falls before, in and after it
        bad = summary(ago(hours=1), "HCP001=high:2," + "x" * pad + " " + url + " " + "y" * 300,
                      high=2)
        bad["notEvaluableRules"] = "PRX011," + "z" * pad + "=" + url
        bad["cluster"] = "c" * pad + " " + url
        r = row(feedback=bad)
        shown = r.unreadable + r.not_evaluable + [r.reported_as]
        assert not any(_leaked(text) for text in shown), (pad, shown)
        for text in shown:
            kept = text.split("... (")[0]
            assert "http://" not in kept or url.replace("Zq9;http://:Kx7", "****") in kept, (pad, kept)
        matrix = FleetMatrix("hub", NOW, STALE, [r])
        for fmt in ("table", "json", "markdown", "html"):
            assert not _leaked(render(matrix, fmt)), (pad, fmt)
    work = simulated_work("edge-9", {}, None, None, NOW)
    work["status"] = {"conditions": [{"type": "Applied", "status": "False", "reason": "Failed",
                                      "message": f"pull {'m' * 190}https://svc:s3cr=et@registry:5000/x"}]}
    r = classify("edge-9", managed_cluster("edge-9"), work, True, NOW, STALE)
    assert r.state is ScanState.NOT_APPLIED and not _leaked(r.reason), r.reason
    assert "svc:****@registry:5000" in r.reason or "https://" not in r.reason


def test_fed_back_lists_are_not_split_inside_a_password():
    """failingRules and notEvaluableRules are comma lists: split at every ',' a password
    holding one left 'http://u:Zq9' as an item, a fragment no masking recognises."""
    url = "http://svc:Zq9,Kx7@proxy.corp.example.com:3128"
    bad = summary(ago(hours=1), f"{url},HCP001=high:2,PRX003=medium:1", high=2)
    bad["notEvaluableRules"] = f"PRX011,{url},PRX012"
    r = row(feedback=bad)
    assert r.rules == {"HCP001": ("high", 2), "PRX003": ("medium", 1)}
    assert r.unreadable == ["failingRules item 'http://svc:****@proxy.corp.example.com:3128'"]
    assert r.not_evaluable == ["PRX011", "http://svc:****@proxy.corp.example.com:3128", "PRX012"]
    matrix = FleetMatrix("hub", NOW, STALE, [r])
    for fmt in ("table", "json", "markdown", "html"):
        assert not _leaked(render(matrix, fmt)), fmt

