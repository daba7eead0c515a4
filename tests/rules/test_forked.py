"""A large scan evaluates the proxy rules in a forked process beside the others
(``hcpscan.rules.forked``): the report is the one a single process gives — findings,
results, diagnostics and exposures, in the same order — whether the child answers, fails
or is killed; a fix's target is the inventory's own object; the graph built ahead counts
as built only when some rule asked for it."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

import hcpscan.rules.engine as engine
import hcpscan.rules.forked as forked
from hcpscan.analysis.reachability.scan_graph import REACHABILITY
from hcpscan.core.jobs import may_fork
from hcpscan.inventory import Inventory
from hcpscan.rules.config import ScanConfig
from hcpscan.rules.context import Context
from hcpscan.scan import RuleSelection, load_rules, resource_needs
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES, SHARED

TIMING = ("stage_seconds", "duration", "started", "finished")
RULE_FAILS = sorted(str(p) for p in (FIXTURES / "rules").glob("*/fail"))
INPUTS = {
    "example": [str(FIXTURES / "example")],
    "every rule's failing fixtures": RULE_FAILS,
    "realworld": [str(SHARED / "realworld")],
}


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _report(run_cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, paths: list[str],
            jobs: int, *extra: str) -> dict[str, Any]:
    monkeypatch.setenv("HCPSCAN_JOBS", str(jobs))
    out = tmp_path / f"report-{jobs}.json"
    result = run_cli("scan", *paths, *extra, "--format", "json", "-o", str(out))
    assert result.code in (0, 1, 2) and out.exists(), result.err  # 2: an input error reported
    return _untimed(json.loads(out.read_text()))


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Fork whatever the input's size; records whether each evaluation forked."""
    monkeypatch.setattr(engine, "FORK_MIN_OBJECTS", 0)
    monkeypatch.setenv("HCPSCAN_FORK_RULES", "1")
    monkeypatch.setattr(forked, "may_fork", lambda: True)  # a test runner may hold threads
    forks: list[bool] = []
    real = forked.evaluate_forked

    def recording(*args: Any) -> Any:
        outcomes = real(*args)
        forks.append(outcomes is not None)
        return outcomes

    monkeypatch.setattr(forked, "evaluate_forked", recording)
    return forks


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_a_forked_scan_reports_what_one_process_does(
        run_cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, forking: list[bool],
        name: str) -> None:
    one = _report(run_cli, monkeypatch, tmp_path, INPUTS[name], 1)
    assert forking == []
    two = _report(run_cli, monkeypatch, tmp_path, INPUTS[name], 2)
    assert forking == [True]
    assert two == one
    assert one["findings"], "the input fails some rules"


BROKEN_POLICY = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: broken-cidr
  namespace: clusters-aws-dev
spec:
  podSelector: {}
  policyTypes: [Ingress]
  ingress:
  - from:
    - ipBlock:
        cidr: not-a-cidr
"""


def test_the_graph_s_diagnostics_come_once_and_after_the_rules_as_in_one_process(
        run_cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, forking: list[bool]) -> None:
    policy = tmp_path / "broken.yaml"
    policy.write_text(BROKEN_POLICY)
    paths = [str(FIXTURES / "example"), str(policy)]
    one = _report(run_cli, monkeypatch, tmp_path, paths, 1)
    two = _report(run_cli, monkeypatch, tmp_path, paths, 2)
    assert forking == [True]
    assert two["diagnostics"] == one["diagnostics"]
    assert len([d for d in two["diagnostics"] if "broken-cidr" in d["message"]]) == 1
    assert two == one


def test_a_graph_only_the_child_s_rules_read_is_built_here_all_the_same(
        run_cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, forking: list[bool]) -> None:
    # PRX014 (reachable: the proxy rules' child) reads the graph, PRX015 (here) does not: a
    # graph the child built for itself would take its diagnostics and the exposures with it
    policy = tmp_path / "broken.yaml"
    policy.write_text(BROKEN_POLICY)
    paths = [str(FIXTURES / "example"), str(policy), "--select", "PRX014,PRX015"]
    one = _report(run_cli, monkeypatch, tmp_path, paths, 1)
    two = _report(run_cli, monkeypatch, tmp_path, paths, 2)
    assert forking == [True]
    assert len([d for d in one["diagnostics"] if "broken-cidr" in d["message"]]) == 1
    assert two == one


def _evaluated(select: list[str] | None = None, folders: list[Path] | None = None
               ) -> tuple[Inventory, Any, list[Any]]:
    rules = load_rules(ScanConfig(), RuleSelection(select=select or []))
    result = load_paths([str(p) for p in folders or [FIXTURES / "example"]],
                        needs=resource_needs(rules))
    inventory = Inventory(result.objects, result.diagnostics, result.skipped)
    return inventory, Context(inventory), rules


def _json(answers: tuple[list[Any], list[Any], list[Any]]) -> Any:
    findings, results, diagnostics = answers
    return ([f.to_json() for f in findings], [r.to_json() for r in results],
            [d.to_json() for d in diagnostics])


def _both(monkeypatch: pytest.MonkeyPatch, forking: list[bool]) -> tuple[Any, Any, Context]:
    inventory, ctx, rules = _evaluated()
    one = _json(engine.evaluate(rules, Context(inventory), keep={REACHABILITY}))
    two = engine.evaluate(rules, ctx, keep={REACHABILITY}, split=forked.evaluate_forked)
    return one, two, ctx


def test_a_graph_that_cannot_be_built_ahead_fails_as_in_one_process(
        monkeypatch: pytest.MonkeyPatch, forking: list[bool]) -> None:
    # in one process each check that asks for it fails (a diagnostic each, the scan goes on):
    # built ahead of the fork, its failure must not end the scan
    import hcpscan.rules.context as context

    def broken(*args: Any) -> Any:
        raise RuntimeError("graph bug")

    monkeypatch.setattr(context, "scan_graph", broken)
    one, two, _ = _both(monkeypatch, forking)
    assert any("graph bug" in d["message"] for d in one[2])
    assert _json(two) == one


def test_a_child_that_fails_leaves_its_rules_to_this_process(
        monkeypatch: pytest.MonkeyPatch, forking: list[bool]) -> None:
    monkeypatch.setattr(forked, "_child", lambda *args: os._exit(3))
    one, two, _ = _both(monkeypatch, forking)
    assert forking == [True] and _json(two) == one


def test_a_killed_child_leaves_its_rules_to_this_process_with_a_warning(
        monkeypatch: pytest.MonkeyPatch, forking: list[bool]) -> None:
    monkeypatch.setattr(forked, "_child", lambda *args: os.kill(os.getpid(), signal.SIGKILL))
    one, two, _ = _both(monkeypatch, forking)
    findings, results, diagnostics = _json(two)
    assert (findings, results) == one[:2]
    lost = [d for d in diagnostics if "signal 9" in d["message"]]
    assert len(lost) == 1 and lost[0]["severity"] == "warning"
    assert "HCPSCAN_JOBS=1" in lost[0]["hint"]
    assert [d for d in diagnostics if d not in lost] == one[2]


def test_a_fix_s_target_is_the_inventory_s_own_object(
        monkeypatch: pytest.MonkeyPatch, forking: list[bool]) -> None:
    _, _, rules = _evaluated()
    here, child = forked.split(rules)
    child_ids = {rules[i].id for i in child}
    assert here and child_ids and all(i.startswith(("PRX", "OCM")) for i in child_ids)
    one, two, ctx = _both(monkeypatch, forking)
    targets = [f.remedy.target for f in two[0] if f.rule_id in child_ids
               and getattr(f.remedy, "target", None) is not None]
    assert targets, "the example has a proxy finding with a fix"
    kept = {id(o) for o in ctx.inventory.objects}
    assert all(id(t) in kept for t in targets)


def test_a_graph_built_ahead_counts_only_once_a_rule_asks() -> None:
    inventory, ctx, _ = _evaluated(folders=[FIXTURES / "example"])
    ctx.config.firewall = Path("no-such-perimeter.yaml")
    ctx.prepare(REACHABILITY, ctx.reachability)
    assert ctx.built(REACHABILITY) is None and not ctx.diagnostics and not ctx.asked
    ctx.adopt(set())
    assert ctx.built(REACHABILITY) is None and not ctx.diagnostics
    asked = Context(inventory, ctx.config)
    asked.prepare(REACHABILITY, asked.reachability)
    graph = asked.reachability()
    assert asked.built(REACHABILITY) is graph and asked.asked == {REACHABILITY}
    assert len([d for d in asked.diagnostics if "no-such-perimeter" in d.path + d.message]) == 1
    assert REACHABILITY in asked.build_seconds


def test_no_fork_while_another_thread_runs() -> None:
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        assert not may_fork()
    finally:
        release.set()
        thread.join()


def test_a_fork_asked_for_and_refused_is_said_and_changes_nothing_else(monkeypatch: pytest.MonkeyPatch) -> None:
    """With HCPSCAN_FORK_RULES=1 and a thread alive, the rules run in one process, and
    the report says so (one info diagnostic) instead of leaving the user to wonder."""
    inventory, ctx, rules = _evaluated()
    one = _json(engine.evaluate(rules, Context(inventory), keep={REACHABILITY}))
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        two = _json(engine.evaluate(rules, ctx, keep={REACHABILITY}, split=forked.evaluate_forked))
    finally:
        release.set()
        thread.join()
    said = [d for d in two[2] if d["path"] == "HCPSCAN_FORK_RULES"]
    assert len(said) == 1 and said[0]["severity"] == "info"
    assert "one process" in said[0]["message"] and "another thread" in said[0]["message"]
    assert (two[0], two[1], [d for d in two[2] if d not in said]) == one


def test_never_forked_unless_asked_for_with_jobs_on_a_large_inventory(
        run_cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(forked, "evaluate_forked", lambda *args: calls.append(args))
    monkeypatch.setattr(engine, "FORK_MIN_OBJECTS", 0)
    _report(run_cli, monkeypatch, tmp_path, INPUTS["example"], 2)
    assert calls == []  # not asked for: the default
    monkeypatch.setenv("HCPSCAN_FORK_RULES", "1")
    _report(run_cli, monkeypatch, tmp_path, INPUTS["example"], 1)
    assert calls == []  # one job
    monkeypatch.setattr(engine, "FORK_MIN_OBJECTS", 10_000)
    _report(run_cli, monkeypatch, tmp_path, INPUTS["example"], 2)
    assert calls == []  # far below FORK_MIN_OBJECTS
    monkeypatch.setattr(engine, "FORK_MIN_OBJECTS", 0)
    _report(run_cli, monkeypatch, tmp_path, INPUTS["example"], 2)
    assert len(calls) == 1


CHILD_THAT_HANGS = """
import os, sys, time
import hcpscan.rules.engine as engine
import hcpscan.rules.forked as forked
parent = os.getpid()
real = forked.evaluate_some
def some(rules, which, ctx, suppressor, keep):
    if os.getpid() != parent:  # the child: says who it is, then takes its time
        with open(sys.argv[1], "w") as out:
            out.write(str(os.getpid()))
        time.sleep(120)
    return real(rules, which, ctx, suppressor, keep)
forked.evaluate_some = some
forked.may_fork = lambda: True
engine.FORK_MIN_OBJECTS = 0
os.environ.update(HCPSCAN_FORK_RULES="1", HCPSCAN_JOBS="2")
from hcpscan.cli.main import main
main(["scan", sys.argv[2], "--format", "json", "-o", os.devnull])
"""


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")  # ended, not reaped
    except OSError:
        return True


def test_the_child_ends_with_the_scan_when_the_scan_is_killed(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    pidfile = tmp_path / "child.pid"
    child = 0
    scan = subprocess.Popen([sys.executable, "-c", CHILD_THAT_HANGS, str(pidfile),
                             str(FIXTURES / "example")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if pidfile.exists() and pidfile.read_text():
                break
            time.sleep(0.1)
        child = int(pidfile.read_text())
        assert not _gone(child)
        scan.kill()  # SIGKILL: no handler of the scan's runs
        scan.wait()
        for _ in range(100):
            if _gone(child):
                break
            time.sleep(0.1)
        assert _gone(child)
    finally:
        scan.kill()
        scan.wait()
        if child and not _gone(child):  # this test failed: the child must not linger
            os.kill(child, signal.SIGKILL)
