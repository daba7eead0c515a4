"""One user-style rule per general template (fixtures/template-rules), run from --rules DIR.

Each rule must fire on exactly the lines marked ``# expect: ID`` of its failing case
and pass its passing case having checked at least one object.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES
from tests.rules.harness import expected_markers

BASE = FIXTURES / "template-rules"
RULE_IDS = sorted(p.stem for p in (BASE / "rules").glob("*.yaml"))


def _scan(run_cli, rule_id: str, case: str) -> dict:
    result = run_cli("scan", str(BASE / "cases" / rule_id / case), "--rules", str(BASE / "rules"),
                     "--select", rule_id, "--no-config", "--format", "json")
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_template_rule_fires_on_the_marked_lines(run_cli, rule_id):
    report = _scan(run_cli, rule_id, "fail")
    found = {(f["location"]["path"], f["location"]["line"]) for f in report["findings"]}
    assert found == expected_markers(BASE / "cases" / rule_id / "fail", rule_id)
    (result,) = report["rules"]
    assert result["status"] == "fail"


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_template_rule_passes_its_passing_case_having_checked_something(run_cli, rule_id):
    report = _scan(run_cli, rule_id, "pass")
    assert report["findings"] == []
    (result,) = report["rules"]
    assert result["status"] == "pass", result["reason"]
    assert result["objects_checked"] >= 1


def test_a_shared_value_is_one_finding_naming_every_consumer(run_cli):
    report = _scan(run_cli, "TPLV001", "fail")
    (shared,) = [f for f in report["findings"] if f["object"]["kind"] == "ConfigMap"]
    said = " ".join([shared["message"], *shared["evidence"]])
    assert "Deployment apps/api" in said and "CronJob apps/report" in said
