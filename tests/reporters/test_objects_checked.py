"""Issue 12 item 5: every rule's objects_checked is shown in SARIF, Markdown and the
table, besides JSON and JUnit (the small report's rules checked 2, 3, 1 and 0 objects)."""

from __future__ import annotations

import json

from hcpscan.reporters import REPORTERS

CHECKED = {"HCP-NET-001": 2, "HCP-NET-004": 3, "HCP-PROXY-002": 1, "HCP-PROXY-005": 0}


def test_sarif_run_properties_carry_each_rules_objects_checked(small, options):
    log = json.loads(REPORTERS["sarif"].render(small, options))
    rows = log["runs"][0]["properties"]["ruleResults"]
    assert {r["id"]: r["objectsChecked"] for r in rows} == CHECKED
    assert {r["id"]: r["status"] for r in rows}["HCP-NET-004"] == "pass"


def test_markdown_coverage_lists_objects_checked_per_rule(small, options):
    text = REPORTERS["markdown"].render(small, options)
    for rule, count in CHECKED.items():
        assert f"| `{rule}` |" in text and f"| {count} |" in text.split(f"`{rule}`", 1)[1].split("\n")[0]


def test_table_coverage_shows_objects_checked(small, options):
    text = REPORTERS["table"].render(small, options)
    line = next(row for row in text.splitlines() if "objects checked:" in row)
    assert "HCP-NET-001=2, HCP-NET-004=3, HCP-PROXY-002=1, HCP-PROXY-005=0" in " ".join(
        text.split("objects checked:", 1)[1].split()), line
