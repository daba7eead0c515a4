"""Without cel-expr-python (Alpine/musl, old glibc, a Linux install without [cel]) hcpscan
still loads every rule and scans; cel rules are not evaluable and say how to add the runtime."""

from __future__ import annotations

import json

import pytest

from hcpscan.rules.templates import cel as cel_template
from tests.conftest import FIXTURES


@pytest.fixture
def no_cel(monkeypatch):
    monkeypatch.setattr(cel_template, "cel", None)
    cel_template.compile_expression.cache_clear()
    yield
    cel_template.compile_expression.cache_clear()


def test_scan_runs_and_cel_rules_say_what_to_install(run_cli, no_cel):
    result = run_cli("scan", str(FIXTURES / "example"), "--format", "json", "--no-progress")
    assert result.code == 1, result.err  # the other rules' findings still fail the run
    report = json.loads(result.out)
    rules = {r["rule_id"]: r for r in report["rules"]}
    assert rules["OCM005"]["status"] == "not-evaluable"
    assert "pip install 'hcpscan[cel]'" in rules["OCM005"]["reason"]
    assert rules["HCP001"]["status"] == "fail" and report["findings"]


def test_a_users_cel_rule_loads_and_is_not_evaluable(run_cli, no_cel, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "X001.yaml").write_text("""\
id: X001
title: every ConfigMap names an owner
severity: low
message: "{expression}"
applies_to: {kinds: [ConfigMap]}
check:
  template: cel
  params:
    expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels"
""")
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b}\n")
    result = run_cli("scan", str(tmp_path / "cm.yaml"), "--rules", str(rules), "--select", "X001",
                     "--format", "json", "--no-progress")
    assert result.code == 0, result.err
    (rule,) = json.loads(result.out)["rules"]
    assert rule["status"] == "not-evaluable" and "hcpscan[cel]" in rule["reason"]
