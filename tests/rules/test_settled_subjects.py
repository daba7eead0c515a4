"""What a template tells of a rule's subjects in bulk (``Template.settle``) is what asking
``check`` of each of them gives: every built-in rule whose template settles subjects, over
every rule fixture, the real-world folders and a generated management cluster, has each
subject it settled asked of ``check`` again (only NotApplicable outcomes, their reasons
counted alike, or none at all); and scans with the shortcut undone give the same findings
and results."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.objects import SourceLocation
from hcpscan.rules import engine
from hcpscan.rules.config import ScanConfig
from hcpscan.rules.context import Context
from hcpscan.rules.engine import subjects_of
from hcpscan.rules.model import Rule
from hcpscan.rules.suppress import Suppressor
from hcpscan.rules.templates import TEMPLATES, NotApplicable, Template
from hcpscan.scan import RuleSelection, load_rules, run_scan
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES, ROOT, SHARED, require

# the built-in rules and the user rules of the manual's and the templates' fixtures (other
# params on the same templates: custom consumers, fields, roles, relations)
USER_RULES = [FIXTURES / "custom-rules" / "rules", FIXTURES / "template-rules" / "rules"]
RULES = [r for r in load_rules(ScanConfig(), RuleSelection(rule_dirs=USER_RULES))
         if type(TEMPLATES[r.template]).settle is not Template.settle]
SETTLING = sorted({r.template for r in RULES})


def _inventory(paths: list[Path]) -> Inventory:
    result = load_paths([str(p) for p in paths])
    return Inventory(result.objects, result.diagnostics, result.skipped)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small management cluster of the benchmark's generator (3 hosted clusters)."""
    spec = importlib.util.spec_from_file_location("bench_generate", ROOT / "bench" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path_factory.mktemp("generated")
    module.main(["mgmt", "--clusters", "3", "--out", str(out)])
    return out / "mgmt-3"


def _inputs(generated: Path) -> list[list[Path]]:
    realworld = sorted(p for p in (SHARED / "realworld").iterdir() if p.is_dir())
    require(realworld, "../shared/realworld")
    rule_folders = sorted(p for p in (FIXTURES / "rules").glob("*/*") if p.is_dir())
    cases = sorted(p for rules in USER_RULES for p in (rules.parent / "cases").glob("*")
                   if p.is_dir())
    return [[p] for p in [*rule_folders, *cases, *realworld, generated]]


def held_to_check(template: Template, ctx: Context, rule: Rule) -> tuple[int, int]:
    """Asks ``check`` of every subject ``settle`` answered for; (subjects, settled)."""
    subjects = subjects_of(rule.applies_to, ctx)
    settled = template.settle(ctx, subjects, rule.params)
    if settled is None:
        return len(subjects), 0
    rest = {id(s) for s in settled.rest}
    assert [s for s in subjects if id(s) in rest] == settled.rest, \
        f"{rule.id}: the subjects left to check are the rule's, in order"
    inapplicable: Counter[str] = Counter()
    passed = 0
    for subject in subjects:
        if id(subject) in rest:
            continue
        outcomes = list(template.check(ctx, subject, rule.params))
        assert all(isinstance(o, NotApplicable) for o in outcomes), (rule.id, subject.ref, outcomes)
        inapplicable.update(o.reason for o in outcomes)  # type: ignore[union-attr]
        passed += not outcomes
    assert (settled.inapplicable, settled.passed) == (inapplicable, passed), rule.id
    return len(subjects), len(subjects) - len(rest)


def test_every_settled_subject_is_answered_as_check_answers_it(generated: Path) -> None:
    assert set(SETTLING) >= {"agreement", "noproxy_coverage", "proxy_values", "trust"}
    settled_by: Counter[str] = Counter()
    kept_by: Counter[str] = Counter()
    for paths in _inputs(generated):
        ctx = Context(_inventory(paths))
        for rule in RULES:
            total, settled = held_to_check(TEMPLATES[rule.template], ctx, rule)
            settled_by[rule.template] += settled
            kept_by[rule.template] += total - settled
    for template in SETTLING:  # each shortcut was taken, and each left subjects to check
        assert settled_by[template] > 0 and kept_by[template] > 0, template


def _outcome(paths: list[Path]) -> tuple[Any, ...]:
    config = ScanConfig()
    rules = load_rules(config, RuleSelection(rule_dirs=USER_RULES,
                                             select=sorted({r.id for r in RULES})))
    report = run_scan(_inventory(paths), rules, config, Suppressor())
    return (sorted((f.rule_id, f.location.path, f.location.line, f.message, tuple(f.evidence))
                   for f in report.findings),
            [r.to_json() for r in report.results])


def test_a_scan_without_the_shortcut_gives_the_same_findings_and_results(
        generated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folders = [[generated], sorted((FIXTURES / "rules").glob("PRX*/fail")),
               sorted((FIXTURES / "rules").glob("PRX*/pass")),
               sorted(p for rules in USER_RULES for p in (rules.parent / "cases").glob("*")),
               sorted(p for p in (SHARED / "realworld").iterdir() if p.is_dir())]
    settled = [_outcome(paths) for paths in folders]
    monkeypatch.setattr(engine, "settle", lambda template, ctx, subjects, params: None)
    assert [_outcome(paths) for paths in folders] == settled
    assert any(findings for findings, _ in settled)


# -- the cases each shortcut turns on, written out ----------------------------------------

PROXY_ENV = [{"name": "HTTPS_PROXY", "value": "http://proxy.corp.example.com:3128"},
             {"name": "NO_PROXY", "value": ".cluster.local"}]


def _obj(kind: str, name: str, body: dict[str, Any], namespace: str = "apps") -> K8sObject:
    api = {"Pod": "v1", "Secret": "v1", "ConfigMap": "v1"}.get(kind, "apps/v1")
    body = {"apiVersion": api, "kind": kind, **body}
    body.setdefault("metadata", {}).update({"name": name, "namespace": namespace})
    return K8sObject("management", api, kind, namespace, name, body,
                     SourceLocation(f"{kind}-{name}.yaml", 1))


def _pod_spec(env: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "quay.io/example/app"}
    if env is not None:
        container["env"] = env
    return {"containers": [container]}


def _cases() -> list[K8sObject]:
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "app-1", "uid": "u",
             "controller": True}
    node = {"apiVersion": "v1", "kind": "Node", "name": "node-a", "uid": "n", "controller": True}
    return [
        _obj("Deployment", "proxied", {"spec": {"template": {"spec": _pod_spec(PROXY_ENV)}}}),
        _obj("Deployment", "bare", {"spec": {"template": {"spec": _pod_spec()}}}),
        _obj("ReplicaSet", "app-1", {"metadata": {"ownerReferences": [
            {**owner, "kind": "Deployment", "name": "proxied"}]},
            "spec": {"template": {"spec": _pod_spec(PROXY_ENV)}}}),
        _obj("Pod", "made", {"metadata": {"ownerReferences": [owner]}, "spec": _pod_spec(PROXY_ENV)}),
        _obj("Pod", "owned-not-controlled", {"metadata": {"ownerReferences": [
            {**owner, "controller": False}]}, "spec": _pod_spec(PROXY_ENV)}),
        _obj("Pod", "mirror", {"metadata": {
            "annotations": {"kubernetes.io/config.mirror": "x"}, "ownerReferences": [node]},
            "spec": _pod_spec(PROXY_ENV)}, namespace="kube-system"),
        _obj("Pod", "alone", {"spec": _pod_spec(PROXY_ENV)}),
        _obj("Pod", "quiet", {"spec": _pod_spec([{"name": "A", "value": "b"}])}),
        # a dump's redacted Secret may hide a consumer: check says it is not evaluable
        _obj("Secret", "redacted", {"type": "Opaque", "data": {"kubeconfig": "2048 bytes long"}}),
        _obj("Secret", "user-data-np-1", {"type": "Opaque", "data": {"value": "512 bytes long"}}),
        _obj("Secret", "plain", {"type": "Opaque", "data": {"note": "aGVsbG8="}}),
        _obj("ConfigMap", "values", {"data": {"url": "http://u:Winter2026@proxy.example.com:3128"}}),
    ]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_each_written_out_case_is_settled_as_check_answers_it(rule: Rule) -> None:
    ctx = Context(Inventory(_cases()))
    held_to_check(TEMPLATES[rule.template], ctx, rule)


def test_a_pod_its_controller_stands_for_is_settled_and_one_alone_is_checked() -> None:
    rule = next(r for r in RULES if r.id == "PRX007")
    cases = _cases()
    ctx = Context(Inventory(cases))
    settled = TEMPLATES[rule.template].settle(ctx, subjects_of(rule.applies_to, ctx), rule.params)
    assert settled is not None
    kept = {s.name for s in settled.rest}
    # a mirror pod's Node decides nothing about its env: the mirror pod is judged itself
    assert {"proxied", "alone", "owned-not-controlled", "mirror"} <= kept
    assert not kept & {"made", "app-1", "bare", "quiet"}
    assert settled.inapplicable["a controller-owned pod: its controller is checked"] == 1  # "made" (PRX007 takes no ReplicaSet)


def test_the_objects_judged_at_their_owner_are_found_as_one_by_one() -> None:
    """``judged_at_owner`` starts from the controller-made pods and asks only the other Pods:
    it holds exactly the Pods and ReplicaSets ``_judged_at_owner`` holds one by one (a
    controller, an owner that is no controller, a mirror pod's Node, no owner)."""
    from hcpscan.analysis.proxy.sides import _judged_at_owner, judged_at_owner

    lone_set = _obj("ReplicaSet", "alone-rs", {"spec": {"template": {"spec": _pod_spec()}}})
    cases = [*_cases(), lone_set]
    inventory = Inventory(cases)
    found = judged_at_owner(inventory)
    assert found == {id(o) for o in inventory.of_kind("Pod", "ReplicaSet") if _judged_at_owner(o, inventory)}
    # a mirror pod is judged itself (its Node, though its controller, decides nothing about
    # its env); so is a ReplicaSet no one makes
    assert {o.name for o in cases if id(o) in found} == {"app-1", "made", "owned-not-controlled"}


@pytest.mark.parametrize("only_made", [True, False], ids=["controller-made pods", "all cases"])
def test_settling_builds_no_analysis_that_checking_each_subject_would_not(only_made: bool) -> None:
    """A rule whose subjects are all pods their controllers stand for never reads the proxy
    model in ``check``: settling them must not build it either (nor anything else)."""
    cases = [c for c in _cases() if not only_made or c.name in ("made", "app-1")]
    for rule in RULES:
        template = TEMPLATES[rule.template]
        plain, settling = Context(Inventory(cases)), Context(Inventory(cases))
        for subject in subjects_of(rule.applies_to, plain):
            list(template.check(plain, subject, rule.params))
        subjects = subjects_of(rule.applies_to, settling)
        settled = template.settle(settling, subjects, rule.params)
        for subject in settled.rest if settled is not None else subjects:
            list(template.check(settling, subject, rule.params))
        assert set(settling.built_names()) == set(plain.built_names()), rule.id
