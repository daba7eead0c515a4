"""The realistic end-to-end fixture (fixtures/example: a management-cluster must-gather with an
Agent/NodePort hosted cluster behind an HTTPS proxy, an AWS/Route one, an OCM managed cluster
and a CAPI workload cluster), scanned from the CLI into every format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.reporters.sarif_checks import SCHEMA_FILES, schema_errors

# The golden reports are the committed reports/example.* (one copy of each):
# tests/cli/test_example_reports.py regenerates them and fails when one is stale, and
# the checks below read them as a user would.
FORMATS = ("table", "json", "sarif", "junit", "markdown", "openreports", "policyreport")


def _golden_names() -> dict[str, str]:
    from tests.cli.test_example_reports import regenerate

    return dict(regenerate.FORMATS)


@pytest.fixture(scope="module")
def reports() -> dict[str, str]:
    names = _golden_names()
    return {fmt: (ROOT / "reports" / names[fmt]).read_text(encoding="utf-8") for fmt in FORMATS}


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_of_the_example_has_one_golden_file(reports, fmt):
    assert reports[fmt].strip(), f"reports/{_golden_names()[fmt]} is empty"


def test_example_covers_every_area_of_the_catalog(reports):
    report = json.loads(reports["json"])
    failing = {f["rule_id"] for f in report["findings"] if f["status"] == "fail"}
    assert {"HCP001", "HCP002", "PRX002", "PRX003", "PRX008", "OCM002", "OCM005", "PRX009"} <= failing
    clusters = {f["object"]["namespace"] for f in report["findings"]}
    assert {"clusters-agent-prod", "clusters", "open-cluster-management-agent", "org-acme"} <= clusters
    statuses = {r["rule_id"]: r["status"] for r in report["rules"]}
    assert statuses["OCM003"] == "not-evaluable"  # hub kubeconfig redacted by must-gather
    assert len(statuses) == len(list((ROOT / "rules").glob("*.yaml")))


@pytest.mark.parametrize("schema", SCHEMA_FILES)
def test_example_sarif_is_valid_against_both_schemas(reports, schema):
    assert schema_errors(json.loads(reports["sarif"]), schema) == []


def test_example_sarif_regions_start_at_the_offending_field(reports):
    log = json.loads(reports["sarif"])
    run = log["runs"][0]
    assert run["automationDetails"]["id"].startswith("hcpscan")
    rules = run["tool"]["driver"]["rules"]
    findings = {(f["rule_id"], f["field"], f["object"]["namespace"], f["object"]["name"]): f
                for f in json.loads(reports["json"])["findings"]}
    assert run["results"], "the example must produce results"
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert {"hcpscan/v1", "primaryLocationLineHash"} <= set(result["partialFingerprints"])
        location = result["locations"][0]["physicalLocation"]
        uri = location["artifactLocation"]["uri"]
        assert not uri.startswith("/") and "uriBaseId" not in location["artifactLocation"]
        line = location["region"]["startLine"]
        text = (ROOT / uri).read_text().splitlines()
        assert 1 <= line <= len(text)
        # the line holds the offending field (or, for a missing one, its nearest present
        # parent, where it would be added): one of the path's keys, or its list item
        matching = [f for f in findings.values() if f["rule_id"] == result["ruleId"]
                    and f["location"]["line"] == line and uri.endswith(
                        Path(f["location"]["path"]).name)]
        assert matching, (result["ruleId"], uri, line)
        from hcpscan.inventory.fieldpath import parse_path

        field = matching[0]["field"]
        keys = [k for k in parse_path(field) if isinstance(k, str)]
        if keys:
            here = text[line - 1]
            assert any(f"{k}:" in here or f"{k}=" in here for k in keys) or here.lstrip().startswith(
                "-"), (result["ruleId"], field, here)
