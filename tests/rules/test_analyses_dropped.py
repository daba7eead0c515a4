"""A scan drops each shared analysis (the flow results, the proxy model) once no rule left
may read it, so the next is built in the memory it held: each template declares what it
reads, the declaration holds what its checks really ask, and the answers are the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hcpscan.analysis.reachability.scan_graph import REACHABILITY
from hcpscan.inventory import Inventory
from hcpscan.rules.config import ScanConfig
from hcpscan.rules.context import REQUIRED_FLOWS, Context
from hcpscan.rules.engine import evaluate
from hcpscan.rules.templates import TEMPLATES
from hcpscan.scan import RuleSelection, load_rules, resource_needs
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES
from tests.rules.harness import scan

RULE_FIXTURES = sorted(p.parent.name for p in (FIXTURES / "rules").glob("*/fail"))


def test_every_builtin_template_says_what_it_reads() -> None:
    assert all(t.analyses is not None for t in TEMPLATES.values())


@pytest.mark.parametrize("rule_id", RULE_FIXTURES)
def test_a_rule_reads_only_the_analyses_its_template_declares(
        monkeypatch: pytest.MonkeyPatch, rule_id: str) -> None:
    asked: set[str] = set()
    build = Context.analysis

    def recording(self: Context, name: str, *args: Any) -> Any:
        asked.add(name)
        return build(self, name, *args)

    monkeypatch.setattr(Context, "analysis", recording)
    scan([FIXTURES / "rules" / rule_id / "fail"], [rule_id])
    template = TEMPLATES[load_rules(ScanConfig(), RuleSelection(select=[rule_id]))[0].template]
    assert asked <= (template.analyses or set()), f"{template.name} reads {sorted(asked)}"


def _load(folders: list[Path], select: list[str]) -> tuple[Inventory, list[Any]]:
    rules = load_rules(ScanConfig(), RuleSelection(select=select))
    result = load_paths([str(p) for p in folders], needs=resource_needs(rules))
    return Inventory(result.objects, result.diagnostics, result.skipped), rules


def _answers(ctx: Context, rules: list[Any], keep: set[str] | None) -> tuple[list[Any], list[Any]]:
    findings, results, _ = evaluate(rules, ctx, keep=keep)
    return [f.to_json() for f in findings], [r.to_json() for r in results]


def test_the_flow_results_are_dropped_before_the_proxy_rules_with_the_same_answers() -> None:
    folders = [FIXTURES / "rules" / "HCP008" / "fail", FIXTURES / "rules" / "PRX002" / "fail"]
    inventory, rules = _load(folders, ["HCP008", "PRX002"])
    assert [r.id for r in rules] == ["HCP008", "PRX002"]
    kept = Context(inventory)
    expected = _answers(kept, rules, None)
    assert kept.built(REQUIRED_FLOWS) is not None and kept.built("proxy") is not None
    dropping = Context(inventory)
    assert _answers(dropping, rules, {REACHABILITY}) == expected
    assert expected[0], "the fixtures fail both rules"
    assert dropping.built(REQUIRED_FLOWS) is None  # HCP008 was its last reader
    assert dropping.built("proxy") is None  # PRX002 was
    assert dropping.built(REACHABILITY) is not None  # read after the rules (exposures)


def test_a_template_that_may_read_anything_keeps_every_analysis_until_it_ran(
        monkeypatch: pytest.MonkeyPatch) -> None:
    folders = [FIXTURES / "rules" / "HCP008" / "fail", FIXTURES / "rules" / "PRX002" / "fail"]
    inventory, rules = _load(folders, ["HCP008", "PRX002"])
    seen: list[str | None] = []
    prx002 = TEMPLATES["agreement"]  # PRX002's
    check = type(prx002).check

    def looking(self: Any, ctx: Context, subject: Any, params: dict[str, Any]) -> Any:
        seen.append("present" if ctx.built(REQUIRED_FLOWS) is not None else None)
        return check(self, ctx, subject, params)

    monkeypatch.setattr(type(prx002), "analyses", None)  # a template that declares nothing
    monkeypatch.setattr(type(prx002), "check", looking)
    ctx = Context(inventory)
    evaluate(rules, ctx, keep={REACHABILITY})
    assert seen and set(seen) == {"present"}
    assert ctx.built(REQUIRED_FLOWS) is None  # dropped once that template had run


@pytest.mark.parametrize("folders", [
    [FIXTURES / "example"],
    [FIXTURES / "rules" / rule / "fail" for rule in ("HCP004", "HCP008", "PRX002", "PRX005", "OCM006", "PRX016")],
])
def test_every_builtin_rule_together_gives_the_same_answers_and_builds_each_analysis_once(
        monkeypatch: pytest.MonkeyPatch, folders: list[Path]) -> None:
    """All the built-in rules (and a custom folder's) in their scan order: dropping changes no
    answer, and no analysis is read after it was dropped (built again at a cost, or, for one
    that gathers across rules like same-value-roots, with what earlier rules put in it lost)."""
    rules = load_rules(ScanConfig(), RuleSelection(rule_dirs=[FIXTURES / "custom-rules" / "rules"]))
    result = load_paths([str(p) for p in folders], needs=resource_needs(rules))
    inventory = Inventory(result.objects, result.diagnostics, result.skipped)
    expected = _answers(Context(inventory), rules, None)
    built: list[str] = []
    build = Context.analysis

    def counting(self: Context, name: str, *args: Any) -> Any:
        if self.built(name) is None:
            built.append(name)
        return build(self, name, *args)

    monkeypatch.setattr(Context, "analysis", counting)
    assert _answers(Context(inventory), rules, {REACHABILITY}) == expected
    assert expected[0], "the inputs fail some rules"
    assert sorted(built) == sorted(set(built)), f"built again after a drop: {built}"
