"""A fix in every report format: JSON data, SARIF fixes valid on both schemas at the
field's lines, Markdown and HTML diff blocks that input cannot break out of; and `rules
show` says whether a rule offers a fix, with the diff of its failing example."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

from hcpscan.reporters import JSON_SCHEMA_PATH
from tests.conftest import FIXTURES
from tests.reporters.sarif_checks import SCHEMA_FILES, schema_errors

CASES = [FIXTURES / "rules" / r / "fail" for r in ("HCP004", "OCM004", "PRX001", "PRX007")]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for case in CASES:
        shutil.copytree(case, tmp_path / "in" / case.parent.name)
    return tmp_path / "in"


def _report(run_cli, tree: Path, fmt: str) -> str:
    result = run_cli("scan", str(tree), "--format", fmt, "--no-progress", "--no-config",
                     "--select", "HCP004,OCM004,PRX001,PRX007")
    assert result.code == 1, result.err
    return result.out


def test_json_findings_carry_the_fix_or_why_none(run_cli, tree):
    report = json.loads(_report(run_cli, tree, "json"))
    schema = json.loads(JSON_SCHEMA_PATH.read_text(encoding="utf-8"))
    errors = jsonschema.Draft202012Validator(schema).iter_errors(report)
    assert [e.message for e in errors] == []
    findings = report["findings"]
    by_rule = {f["rule_id"]: f["fix"] for f in findings}
    hcp004 = by_rule["HCP004"]
    assert hcp004["automatic"] and hcp004["summary"].startswith("open TCP 5353 in egress rule #1")
    (change,) = hcp004["changes"]
    assert change["replacements"] == [{"start": {"line": 44, "column": 1},
                                       "end": {"line": 44, "column": 1}, "deleted": "",
                                       "inserted": "    - {port: 5353, protocol: TCP}\n"}]
    assert "+    - {port: 5353, protocol: TCP}" in change["diff"]
    assert by_rule["PRX007"]["automatic"] is False and "portable spelling" in \
        by_rule["PRX007"]["summary"]


@pytest.mark.parametrize("schema", SCHEMA_FILES)
def test_sarif_fixes_are_valid_and_point_at_the_file_and_lines(run_cli, tree, schema, monkeypatch):
    monkeypatch.chdir(tree.parent)
    log = json.loads(_report(run_cli, Path("in"), "sarif"))
    assert schema_errors(log, schema) == []
    results = log["runs"][0]["results"]
    fixed = [r for r in results if r.get("fixes")]
    assert {r["ruleId"] for r in fixed} == {"HCP004", "OCM004", "PRX001"}
    for result in fixed:
        (fix,) = result["fixes"]
        (change,) = fix["artifactChanges"]
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        if result["ruleId"] != "PRX001":  # PRX001 points at the NodePool, fixes the Proxy
            assert change["artifactLocation"]["uri"] == uri
        for replacement in change["replacements"]:
            region = replacement["deletedRegion"]
            lines = (tree.parent / change["artifactLocation"]["uri"]).read_text().splitlines(True)
            deleted = "".join(lines[region["startLine"] - 1:region["endLine"] - 1])
            assert deleted == result["properties"]["fix"]["changes"][0]["replacements"][
                change["replacements"].index(replacement)]["deleted"]
    nofix = [r for r in results if r["ruleId"] == "PRX007"]
    assert nofix and all("fixes" not in r and not r["properties"]["fix"]["automatic"]
                         for r in nofix)


def test_markdown_shows_the_diff_in_a_fence_no_line_closes(run_cli, tree):
    policy = tree / "HCP004" / "payments-egress.yaml"
    policy.write_text(policy.read_text().replace(
        "ports:  # expect: HCP004", "ports:  # ```` </details> <!--"))
    text = _report(run_cli, tree, "markdown")
    block = text[text.index("Fix: open TCP 5353 in egress rule #1 of NetworkPolicy "
                            "payments/allow-dns"):]
    fence = re.search(r"^   (`{3,})diff$", block, re.M)
    assert fence and len(fence[1]) == 5, "the fence must outgrow the 4 backticks inside"
    assert "   +    - {port: 5353, protocol: TCP}" in block
    assert block.index("</details> <!--") < block.index("   " + fence[1] + "\n", fence.end())


def test_html_marks_added_lines_and_escapes_them(run_cli, tree):
    policy = tree / "HCP004" / "payments-egress.yaml"
    policy.write_text(policy.read_text().replace("ports:  # expect: HCP004",
                                                 "ports:  # <script>x</script>"))
    text = _report(run_cli, tree, "html")
    assert '<span class="add">+    - {port: 5353, protocol: TCP}</span>' in text
    assert "<script>x</script>" not in text and "&lt;script&gt;x&lt;/script&gt;" in text
    assert 'No automatic fix: The portable spelling' in text


def test_rules_show_says_whether_a_fix_is_offered(run_cli):
    offered = run_cli("rules", "show", "HCP004", "--format", "markdown")
    assert "## Automatic fix" in offered.out and "Offered" in offered.out
    assert "+    - {port: 5353, protocol: TCP}" in offered.out
    none = run_cli("rules", "show", "PRX013", "--format", "markdown")
    assert "None: What a malformed proxy value was meant to be" in none.out
