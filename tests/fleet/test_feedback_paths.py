"""The committed ManifestWorkReplicaSet's feedback rules find every value on the objects a
scan and the CronJob controller write, evaluated as OCM's work agent evaluates them.

OCM reads a ``JSONPaths`` rule from the object's root, not from its ``status``
(open-cluster-management-io/ocm `work` module, spoke/statusfeedback/reader.go:
``j.FindResults(obj.UnstructuredContent())``; its well-known rules are
``.status.readyReplicas`` and the like, its tests read ``.metadata.name``). A path
written relative to ``status`` (``.findings.high``) finds nothing there, and the hub
would hear nothing from any cluster. jsonpath-ng, not the project's simulated agent,
evaluates the paths here, so the simulation cannot hide a mismatch.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from jsonpath_ng import parse

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

MWRS = Path(__file__).resolve().parents[2] / "deploy" / "ocm" / "hcpscan-manifestworkreplicaset.yaml"


def _from_root(obj: dict, path: str) -> list:
    return [match.value for match in parse("$" + path).find(obj)]


def _configs() -> dict[str, list[dict]]:
    (mwrs,) = [d for d in yaml.safe_load_all(MWRS.read_text()) if d]
    return {c["resourceIdentifier"]["resource"]: [p for rule in c.get("feedbackRules") or []
                                                   for p in rule["jsonPaths"]]
            for c in mwrs["spec"]["manifestWorkTemplate"]["manifestConfigs"]}


def test_every_scan_summary_path_finds_a_scalar_from_the_root():
    obj = ObjectRef("management", "v1", "ConfigMap", "ns", "cm")
    report = ScanReport("0.1.0", [RuleInfo("PRX008", "t", Severity.HIGH, "proxy")],
                        [RuleResult("PRX008", Status.FAIL), RuleResult("PRX011", Status.NOT_EVALUABLE, "x")],
                        [Finding("PRX008", Severity.HIGH, obj, "data", Location("a.yaml"), "m")],
                        [], {}, {"started": "2026-03-01T10:00:00+00:00"})
    summary = contract.scan_summary(report, "edge-1", "sha256:x", "none")
    paths = _configs()[contract.PLURAL]
    assert {p["name"] for p in paths} == set(contract.SUMMARY_FEEDBACK)
    for path in paths:
        (value,) = _from_root(summary, path["path"]) or [None]
        assert isinstance(value, (str, int)), f"{path['name']}: {path['path']} finds nothing on a ScanSummary"
    (high,) = _from_root(summary, next(p["path"] for p in paths if p["name"] == "high"))
    assert high == 1


def test_the_cronjob_paths_find_the_controllers_times_from_the_root():
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "hcpscan"},
               "spec": {"schedule": "17 */6 * * *"},
               "status": {"lastScheduleTime": "2026-03-01T06:17:00Z",
                          "lastSuccessfulTime": "2026-03-01T06:19:40Z"}}
    paths = {p["name"]: p["path"] for p in _configs()["cronjobs"]}
    assert {name: _from_root(cronjob, path) for name, path in paths.items()} == {
        "lastScheduleTime": ["2026-03-01T06:17:00Z"], "lastSuccessfulTime": ["2026-03-01T06:19:40Z"]}
