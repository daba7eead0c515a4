"""Proof by re-scan: every fix, applied to every fixture that fires its rule, clears the
finding and brings no new one, under every rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from hcpscan.rules.loader import builtin_rules_dir, load_rule_dirs
from tests.conftest import FIXTURES, SHARED, require
from tests.fixes.rescan import fix_copy_and_rescan

RULES = load_rule_dirs([builtin_rules_dir()])
OFFERING = [r for r in RULES if r.info.docs.autofix == "offered"]
CASES = [(r.id, folder) for r in OFFERING
         for folder in sorted((FIXTURES / "rules" / r.id).glob("**/fail"))]


def test_every_rule_says_whether_it_offers_a_fix():
    for rule in RULES:
        assert rule.info.docs.autofix in ("offered", "none"), rule.id
        if rule.info.docs.autofix == "none":
            assert len(rule.info.docs.autofix_why) > 20, rule.id


# Failing fixtures of rules that offer a fix for some shapes only, where no change is safe:
# every finding there says why (HCP001/HCP002: a NodePort, HyperShift's own reconciled
# Services, a HostedCluster from Git whose way in has no source field of its own; HCP003:
# the rendered API server Service of a dump, which the operator renders again)
NO_SAFE_CHANGE = {("HCP001", "fail"), ("HCP001", "git-alone/fail"), ("HCP002", "fail"),
                  ("HCP002", "git-alone/fail"), ("HCP003", "fail")}


@pytest.mark.parametrize(("rule_id", "folder"), CASES,
                         ids=[f"{r}-{f.relative_to(FIXTURES / 'rules' / r)}" for r, f in CASES])
def test_fix_clears_the_finding_and_adds_none(rule_id: str, folder: Path, tmp_path: Path):
    result = fix_copy_and_rescan(folder, tmp_path, rule_id)
    if (rule_id, str(folder.relative_to(FIXTURES / "rules" / rule_id))) in NO_SAFE_CHANGE:
        assert not result.outcome.applied and not result.outcome.by_hand
        assert result.outcome.none and all("firewall" in why for _, why in result.outcome.none)
        return
    assert result.outcome.applied, f"no fix of {rule_id} changed {folder}"
    assert [f.message for f in result.still_failing()] == []
    assert [(f.rule_id, f.message) for f in result.new()] == []


@pytest.mark.parametrize("rule", OFFERING, ids=[r.id for r in OFFERING])
def test_docs_failing_example_is_fixed(rule, tmp_path: Path):
    """The example `rules show` prints a diff of: its fix clears it too."""
    folder = tmp_path / "example"
    folder.mkdir()
    (folder / "failing.yaml").write_text(rule.info.docs.failing)
    result = fix_copy_and_rescan(folder, tmp_path / "work", rule.id)
    assert result.outcome.applied
    assert [f.message for f in result.still_failing()] == []
    assert [(f.rule_id, f.message) for f in result.new()] == []


REALWORLD = SHARED / "realworld"
REAL_FOLDERS = sorted(p.name for p in REALWORLD.iterdir() if p.is_dir()) if REALWORLD.is_dir() else []


@pytest.mark.parametrize("folder", REAL_FOLDERS)
def test_fixes_on_real_estates_clear_and_add_nothing(folder: str, tmp_path: Path):
    """Every failing case of ../shared/realworld with an automatic fix (all rules at once,
    as `hcpscan fix` applies them): gone after the re-scan, and no new finding. Helm
    output is not patched (its fixes name the chart template): the same files without
    Helm's markers are fixed in tests/fixes/test_fix_cli.py."""
    require(REALWORLD.is_dir(), "../shared/realworld")
    result = fix_copy_and_rescan(REALWORLD / folder, tmp_path)
    assert [f.message for f in result.still_failing()] == []
    assert [(f.rule_id, f.message) for f in result.new()] == []
    for finding, fix in result.outcome.by_hand:
        assert fix.manual or fix.commands, finding.message


def test_fixes_on_the_bundled_example_clear_and_add_nothing(tmp_path: Path):
    """The example must-gather the README scans: its fixes (the PRX009 drop-in in a List
    item of a must-gather file) clear their findings and bring none."""
    result = fix_copy_and_rescan(FIXTURES / "example", tmp_path)
    assert result.outcome.applied
    assert [f.message for f in result.still_failing()] == []
    # The one exception, and it is exact: PRX005's fix adds the API server's node-local
    # address to the HostedCluster's noProxy; the konnectivity sidecars in the dump were
    # rendered by the control-plane operator from the old spec and trail it until the CPO
    # renders them again. They are its output, so the fix does not edit them: its own text
    # names exactly them (docs/fixes.md, known problems). Nothing else may appear.
    rendered = ("oauth-openshift", "openshift-apiserver")
    assert sorted((f.rule_id, f.message) for f in result.new()) == [
        ("PRX002", f"Deployment clusters-agent-prod/{name} container konnectivity-proxy-https: "
                   "--no-proxy lacks 172.20.0.1") for name in rendered]
    hosted, = [fix for f, fix in result.outcome.applied
               if f.rule_id == "PRX005" and "HostedCluster" in fix.summary]
    assert ("renders the konnectivity sidecars' --no-proxy of "
            + ", ".join(f"Deployment clusters-agent-prod/{n}" for n in rendered)) in hosted.summary
    assert "PRX002" in hosted.summary


FLOW_INPUTS = ["vanilla-dns", "router-source-ranges"]


@pytest.mark.parametrize("name", FLOW_INPUTS)
def test_fixes_of_the_required_flow_inputs_clear_and_add_nothing(name: str, tmp_path: Path):
    """The issue-23 inputs beyond the rule fixtures (fixtures/required-flows/README.md):
    DNS allowed only to openshift-dns:5353 on a vanilla cluster, a Route behind a router
    whose allowedSourceRanges leave the workers out. Every fix (all rules at once)."""
    result = fix_copy_and_rescan(FIXTURES / "required-flows" / name, tmp_path)
    wanted = "HCP007" if name.startswith("router") else "HCP008"
    assert wanted in {f.rule_id for f, _ in result.outcome.applied}
    assert [f.message for f in result.still_failing()] == []
    assert [(f.rule_id, f.message) for f in result.new()] == []
