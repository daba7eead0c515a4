"""Every rule: docs complete, its docs' examples and its fixtures fire exactly where expected."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from hcpscan.findings.model import Status
from hcpscan.rules.loader import builtin_rules_dir, load_rule_dirs, load_rule_file
from tests.conftest import FIXTURES
from tests.rules.harness import expected_markers, scan

RULES = load_rule_dirs([builtin_rules_dir()])
IDS = [r.id for r in RULES]


@pytest.mark.parametrize("path", sorted(builtin_rules_dir().glob("*.y*ml")), ids=lambda p: p.stem)
def test_shipped_rule_file_passes_the_validation_a_scan_skips(path):
    """A scan loads the shipped catalog without the rule schema and the templates'
    parameter checks (so it never imports jsonschema): this is where they run."""
    checked = load_rule_file(path, builtin=True)
    assert checked == load_rule_file(path, builtin=True, schema_checked=True)


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_rule_has_fixtures_that_fire_and_pass(rule):
    base = FIXTURES / "rules" / rule.id
    assert any((base / "fail").glob("*")), f"{rule.id} needs a failing fixture"
    assert any((base / "pass").glob("*")), f"{rule.id} needs a passing fixture"


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_failing_fixture_fires_exactly_on_the_marked_lines(rule):
    folder = FIXTURES / "rules" / rule.id / "fail"
    report = scan([folder], [rule.id])
    found = {(f.location.path, f.location.line) for f in report.findings if f.rule_id == rule.id}
    assert found == expected_markers(folder, rule.id)
    assert report.results[0].status is Status.FAIL


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_passing_fixture_does_not_fire(rule):
    report = scan([FIXTURES / "rules" / rule.id / "pass"], [rule.id])
    assert [f.message for f in report.findings] == []
    assert report.results[0].status is Status.PASS, report.results[0].reason


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_docs_examples_fail_and_pass(rule, tmp_path: Path):
    (tmp_path / "failing.yaml").write_text(rule.info.docs.failing)
    (tmp_path / "passing").mkdir()
    (tmp_path / "passing" / "passing.yaml").write_text(rule.info.docs.passing)
    failing = scan([tmp_path / "failing.yaml"], [rule.id])
    assert failing.results[0].status is Status.FAIL, failing.results[0].reason
    passing = scan([tmp_path / "passing"], [rule.id])
    assert passing.results[0].status is Status.PASS, passing.results[0].reason


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_docs_references_are_public_pages(rule):
    """Each reference is `title — https://URL`, a page a user can open; never a document only
    the developers have (the seed texts, DOMAIN.md)."""
    refs = rule.info.docs.references
    assert refs
    for ref in refs:
        title, sep, url = ref.rpartition(" — ")
        assert sep and title.strip() and re.fullmatch(r"https://[^\s]+", url), ref
    docs = rule.info.docs
    said = " ".join((docs.what, docs.why, docs.fix, docs.known_problems, *refs))
    assert not re.search(r"\bseeds?\b|DOMAIN\.md", said), rule.info.id


@pytest.fixture(scope="module")
def whole_catalog_on_the_example():
    report = scan([FIXTURES / "example"], [])
    return {r.rule_id: r for r in report.results}, report.findings


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_a_rule_run_alone_judges_as_in_the_whole_catalog(rule, whole_catalog_on_the_example):
    """Alone, the loader reads only what the rule's template says it reads; a kind it
    forgot to declare would turn a reference into a dangling one (a false fail) here."""
    results, findings = whole_catalog_on_the_example
    alone = scan([FIXTURES / "example"], [rule.id])
    (result,) = alone.results
    expected = results[rule.id]
    assert (result.status, result.reason, result.objects_checked) == \
        (expected.status, expected.reason, expected.objects_checked)
    assert sorted(f.key for f in alone.findings) == sorted(f.key for f in findings if f.rule_id == rule.id)


# Issue 12: rules are data over a few general templates; only cel may serve one rule.
@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_the_rule_template_serves_two_built_in_rules_or_is_cel(rule):
    users = Counter(r.template for r in RULES)
    assert rule.template == "cel" or users[rule.template] >= 2, (rule.template, users[rule.template])


def test_no_built_in_rule_uses_a_retired_primitive_name():
    from hcpscan.rules.templates import TEMPLATES

    assert {r.template for r in RULES} <= {"agreement", "cel", "field_matches",
                                            "noproxy_coverage", "proxy_values", "reach",
                                            "required-flow", "trust"}
    assert len(TEMPLATES) <= 10, sorted(TEMPLATES)
