"""docs/rules/<ID>.md: one current page per built-in rule, and SARIF points at it."""

from __future__ import annotations

import importlib.util
import json

from hcpscan import RULE_PAGES_URL
from hcpscan.reporters.sarif import MAX_DESCRIPTION_CHARS, within_limit
from hcpscan.rules.loader import builtin_rules_dir, load_rule_dirs
from tests.conftest import FIXTURES, ROOT


def _generator():
    spec = importlib.util.spec_from_file_location("rule_pages", ROOT / "scripts" / "rule_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_pages_are_current():
    assert _generator().stale() == [], "run: python scripts/rule_pages.py"


def test_a_changed_rule_makes_its_page_stale(tmp_path):
    generator = _generator()
    generator.write(tmp_path)
    assert generator.stale(tmp_path) == []
    page = tmp_path / "PRX008.md"
    page.write_text(page.read_text(encoding="utf-8").replace("## Why", "## Because"), encoding="utf-8")
    (tmp_path / "OLD001.md").write_text("# a rule that is gone\n", encoding="utf-8")
    assert generator.stale(tmp_path) == ["OLD001.md", "PRX008.md"]


def test_every_builtin_rule_has_a_page_with_its_sections():
    rules = load_rule_dirs([builtin_rules_dir()])
    for rule in rules:
        page = (ROOT / "docs" / "rules" / f"{rule.id}.md").read_text(encoding="utf-8")
        assert f"# {rule.id}: {rule.info.title}" in page
        assert "## Failing example" in page and "## Passing example" in page
        assert rule.info.help_uri == f"{RULE_PAGES_URL}/{rule.id}.md"


def _sarif_rules(run_cli, *args):
    result = run_cli("scan", str(FIXTURES / "example"), "--format", "sarif", "--exit-zero", *args)
    assert result.code == 0, result.err
    return json.loads(result.out)["runs"][0]["tool"]["driver"]["rules"]


def test_sarif_help_uri_names_the_rules_page(run_cli):
    rules = _sarif_rules(run_cli)
    assert len(rules) >= 20
    for rule in rules:
        assert rule["helpUri"] == f"{RULE_PAGES_URL}/{rule['id']}.md"
        assert (ROOT / "docs" / "rules" / f"{rule['id']}.md").is_file()


def test_sarif_descriptions_fit_githubs_limit(run_cli):
    rules = {r["id"]: r for r in _sarif_rules(run_cli)}
    for rule in rules.values():
        assert len(rule["fullDescription"]["text"]) <= MAX_DESCRIPTION_CHARS
        assert len(rule["shortDescription"]["text"]) <= MAX_DESCRIPTION_CHARS
    # HCP001's "what" is longer than the limit: cut at a sentence, the whole text in help
    full = rules["HCP001"]["fullDescription"]["text"]
    assert full.endswith("…") and full[:-1].strip() in rules["HCP001"]["help"]["text"]


def test_a_users_rule_has_no_help_uri(run_cli):
    rules = {r["id"]: r for r in _sarif_rules(run_cli, "--rules", str(FIXTURES / "custom-rules" / "rules"))}
    custom = [r for r in rules.values() if not (ROOT / "rules" / f"{r['id']}.yaml").is_file()]
    assert custom and all("helpUri" not in r for r in custom)


def test_within_limit_cuts_at_a_sentence_then_a_word():
    sentences = "The ignition endpoint serves node certificates. " * 40
    cut = within_limit(sentences, 200)
    assert len(cut) <= 200 and cut.endswith("certificates. …")
    words = "word " * 100
    assert within_limit(words, 50) == "word " * 9 + "word…"
    assert within_limit("word " * 9 + "wor and more", 50) == "word " * 9 + "wor…"
    assert within_limit("word " * 9 + "wordsmith", 50) == "word " * 8 + "word…"
    assert within_limit("short", 50) == "short"
