"""The manual's (docs/manual.md) custom rules, and one user-style rule per general template: YAML only,
run from --rules DIR as a user runs them.

Each rule in fixtures/custom-rules/rules (the manual's six) and fixtures/template-rules/rules
must fire on exactly the lines marked ``# expect: ID`` in its failing case and pass its
passing case having checked at least one object.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.rules.harness import expected_markers

BASE = FIXTURES / "custom-rules"
TEMPLATES = FIXTURES / "template-rules"
RULE_IDS = sorted(p.stem for p in (BASE / "rules").glob("*.yaml"))
CASES = [pytest.param(base, p.stem, id=p.stem) for base in (BASE, TEMPLATES)
         for p in sorted((base / "rules").glob("*.yaml"))]


def _scan(run_cli, base: Path, rule_id: str, case: str) -> dict:
    result = run_cli("scan", str(base / "cases" / rule_id / case), "--rules", str(base / "rules"),
                     "--select", rule_id, "--no-config", "--format", "json")
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


def test_there_are_six_custom_rules_with_cases():
    assert len(RULE_IDS) == 6
    for rule_id in RULE_IDS:
        assert any((BASE / "cases" / rule_id / "fail").iterdir())
        assert any((BASE / "cases" / rule_id / "pass").iterdir())


@pytest.mark.parametrize(("base", "rule_id"), CASES)
def test_custom_rule_fires_on_the_marked_lines(run_cli, base, rule_id):
    report = _scan(run_cli, base, rule_id, "fail")
    found = {(f["location"]["path"], f["location"]["line"]) for f in report["findings"]}
    assert found == expected_markers(base / "cases" / rule_id / "fail", rule_id)
    (result,) = report["rules"]
    assert result["status"] == "fail"


@pytest.mark.parametrize(("base", "rule_id"), CASES)
def test_custom_rule_passes_its_passing_case_having_checked_something(run_cli, base, rule_id):
    report = _scan(run_cli, base, rule_id, "pass")
    assert report["findings"] == []
    (result,) = report["rules"]
    assert result["status"] == "pass", result["reason"]
    assert result["objects_checked"] >= 1


def test_every_general_template_has_a_user_style_rule():
    used = {(TEMPLATES / "rules" / f"{p.stem}.yaml").read_text().split("template: ")[1].split()[0]
            for p in (TEMPLATES / "rules").glob("*.yaml")}
    assert {"proxy_values", "trust", "cel"} <= used


def test_a_shared_value_is_one_finding_naming_every_consumer(run_cli):
    report = _scan(run_cli, TEMPLATES, "TPLV001", "fail")
    (shared,) = [f for f in report["findings"] if f["object"]["kind"] == "ConfigMap"]
    said = " ".join([shared["message"], *shared["evidence"]])
    assert "Deployment apps/api" in said and "CronJob apps/report" in said
