"""The fixes of PRX008 (a new Secret), OCM002 (a CA appended inside a Secret key) and
PRX009 (a drop-in added to files) in SARIF and JSON: valid on both SARIF schemas and the
report schema, at the finding's file, and no proxy password in either."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from hcpscan.reporters import JSON_SCHEMA_PATH
from tests.conftest import FIXTURES
from tests.reporters.sarif_checks import SCHEMA_FILES, schema_errors

RULES = ("PRX008", "OCM002", "OCM006", "PRX009")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rule in RULES:
        shutil.copytree(FIXTURES / "rules" / rule / "fail", tmp_path / "in" / rule)
    return tmp_path / "in"


def _report(run_cli, fmt: str) -> str:
    result = run_cli("scan", "in", "--format", fmt, "--no-progress", "--no-config",
                     "--select", ",".join(RULES))
    assert result.code == 1, result.err
    return result.out


@pytest.mark.parametrize("schema", SCHEMA_FILES)
def test_new_fixes_are_valid_sarif_at_the_findings_file(run_cli, tree, schema, monkeypatch):
    monkeypatch.chdir(tree.parent)
    log = json.loads(_report(run_cli, "sarif"))
    results = json.dumps(log["runs"][0]["results"])  # (rule help shows the docs' example)
    assert "Winter2026" not in results and "****@" in results
    assert schema_errors(log, schema) == []
    fixed = [r for r in log["runs"][0]["results"] if r.get("fixes")]
    assert {r["ruleId"] for r in fixed} == set(RULES)
    for result in fixed:
        (change,) = result["fixes"][0]["artifactChanges"]
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert change["artifactLocation"]["uri"] == uri
        lines = (tree.parent / uri).read_text().splitlines(True)
        for replacement in change["replacements"]:
            region = replacement["deletedRegion"]
            assert region["startLine"] <= len(lines) + 1


def test_new_fixes_follow_the_json_schema(run_cli, tree, monkeypatch):
    monkeypatch.chdir(tree.parent)
    report = json.loads(_report(run_cli, "json"))
    schema = json.loads(JSON_SCHEMA_PATH.read_text(encoding="utf-8"))
    assert [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(report)] == []
    automatic = {f["rule_id"] for f in report["findings"] if f["fix"]["automatic"]}
    assert automatic == set(RULES)
