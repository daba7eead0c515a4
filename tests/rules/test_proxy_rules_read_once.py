"""What the proxy rules read once instead of per subject gives what reading it per subject
gives: PRX008 reads a plain field's strings once per shared pod spec (Deployments of one
template share it: the loader shares equal specs) and still reports each object at its own
place; the agreement and proxy_values shortcuts (sides of bare containers, values no
condition judges) change no rule's result; what a template reads once per rule stays that
rule's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hcpscan.analysis.proxy import sides
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.objects import SourceLocation
from hcpscan.rules.config import ScanConfig
from hcpscan.rules.context import Context
from hcpscan.rules.suppress import Suppressor
from hcpscan.rules.templates import agreement
from hcpscan.rules.templates import proxy_values as pv
from hcpscan.scan import RuleSelection, load_rules, run_scan
from tests.conftest import FIXTURES
from tests.rules.harness import scan

RULES = Path(__file__).resolve().parents[2] / "rules"

SECRET_URL = "http://svc-app:Winter2026@proxy.corp.example.com:3128"
LEAKY = {"name": "app", "image": "quay.io/example/app",
         "args": ["--upstream", SECRET_URL],
         "env": [{"name": "NOTE", "value": "plain text"}, {"name": "X", "value": "mail a@b"}]}
QUIET = {"name": "quiet", "image": "quay.io/example/quiet",
         "env": [{"name": "A", "value": "b"}], "args": ["--port=8080"]}


def _deployment(namespace: str, spec: dict[str, Any], path: str, kind: str = "Deployment"
                ) -> K8sObject:
    body: dict[str, Any] = {"apiVersion": "apps/v1", "kind": kind,
                            "metadata": {"name": "app", "namespace": namespace},
                            "spec": {"template": {"spec": spec}}}
    return K8sObject("management", "apps/v1", kind, namespace, "app", body,
                     SourceLocation(path, 1))


def _scan(objects: list[K8sObject]) -> list[tuple[str, str, str]]:
    config = ScanConfig()
    rules = load_rules(config, RuleSelection(select=["PRX008"]))
    report = run_scan(Inventory(objects), rules, config, Suppressor())
    return sorted((f.object.namespace, f.location.path, f.message)
                  for f in report.findings)


def test_objects_sharing_a_pod_spec_are_each_reported_at_their_own_object() -> None:
    shared = {"containers": [QUIET, LEAKY]}
    copy = {"containers": [dict(QUIET), dict(LEAKY)]}  # equal, not shared
    found = _scan([_deployment("clusters-a", shared, "a.yaml"),
                   _deployment("clusters-b", shared, "b.yaml"),
                   _deployment("clusters-c", copy, "c.yaml"),
                   _deployment("clusters-d", {"containers": [QUIET]}, "d.yaml")])
    assert [(ns, path) for ns, path, _ in found] == [("clusters-a", "a.yaml"),
                                                     ("clusters-b", "b.yaml"),
                                                     ("clusters-c", "c.yaml")]
    assert all("svc-app:****@proxy.corp.example.com:3128" in message for _, _, message in found)


def test_a_shared_spec_read_by_two_kinds_is_read_by_each_kinds_paths() -> None:
    # a StatefulSet and a Deployment share one pod spec: each kind's own JSONPaths are
    # asked of it, and each object is reported
    shared = {"containers": [LEAKY]}
    found = _scan([_deployment("clusters-a", shared, "a.yaml"),
                   _deployment("clusters-a", shared, "s.yaml", kind="StatefulSet")])
    assert [path for _, path, _ in found] == ["a.yaml", "s.yaml"]


def test_the_memo_answers_what_a_walk_over_each_object_finds() -> None:
    shared = {"containers": [QUIET, LEAKY], "initContainers": [LEAKY]}
    odd: list[K8sObject] = [
        _deployment("clusters-a", shared, "a.yaml"),
        _deployment("clusters-b", shared, "b.yaml"),
        _deployment("clusters-c", {"containers": "not a list"}, "c.yaml"),
        _deployment("clusters-d", {"containers": [{"name": "x", "args": {"k": SECRET_URL}}]},
                    "d.yaml"),
        K8sObject("management", "apps/v1", "Deployment", "clusters-e", "app",
                  {"kind": "Deployment", "spec": {"template": None}}, SourceLocation("e.yaml", 1)),
        K8sObject("management", "apps/v1", "Deployment", "clusters-f", "app",
                  {"kind": "Deployment", "spec": ["a", SECRET_URL]}, SourceLocation("f.yaml", 1)),
        _deployment("clusters-g", {"containers": [QUIET]}, "g.yaml", kind="StatefulSet"),
    ]
    ctx = Context(Inventory(odd))
    rule = load_rules(ScanConfig(), RuleSelection(select=["PRX008"]))[0]
    memos: Any = ({}, {})
    mixed = ["$.spec.template.spec.containers[*].args[*]", "$.spec.replicas",
             {"path": "$.spec.template.spec.containers[*].env[*].value", "type": "url"},
             "$..args[*]"]  # no leading fields common to all: read per object
    for _ in range(2):  # the first pass fills the memo, the second reads it
        for obj in odd:
            for specs in (rule.params["fields"]["Deployment"], mixed):
                fields = pv._plan(specs)[0]
                walked = tuple(pv._texts(ctx.inventory.jsonpath(obj, path), kind)
                               for path, kind, _ in fields)
                assert pv.read_fields(ctx, memos, obj, specs) == (fields, walked)
    assert pv._plan(mixed)[1] == ()
    assert pv._plan(rule.params["fields"]["Deployment"])[1] == ("spec", "template", "spec")
    plans, read = memos
    assert len(read) == 4, "one entry per pod spec the specs start from (a and b share one)"
    # every kept node is held by its entry, so its id cannot name another node
    assert all(node is not None for node, _ in read.values())
    assert all(specs is not None for specs, _ in plans.values())


# -- the agreement template leaves out the sides of containers that set nothing --------------

AGREEMENT_RULES = sorted(p.parent.name for p in (FIXTURES / "rules").glob("*/fail")
                         if (RULES / f"{p.parent.name}.yaml").is_file()
                         and "template: agreement" in (RULES / f"{p.parent.name}.yaml").read_text())


def _outcome(paths: list[Path], rule: str) -> tuple[list[tuple[str, int, str]], list[Any]]:
    report = scan(paths, [rule])
    return (sorted((f.location.path, f.location.line, f.message) for f in report.findings),
            [r.to_json() for r in report.results])


@pytest.mark.parametrize("rule", AGREEMENT_RULES)
def test_leaving_bare_containers_out_changes_no_agreement_result(
        rule: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every agreement rule's fixtures give the same findings and results whether or not
    containers that set no proxy variable get a side of their own."""
    paths = [FIXTURES / "rules" / rule / "fail", FIXTURES / "rules" / rule / "pass"]
    lean = _outcome(paths, rule)
    whole = sides.consumer_sides

    def every_side(ctx: Any, subject: Any, selector: Any, case: str, bare: bool = True) -> Any:
        return whole(ctx, subject, selector, case, True)

    monkeypatch.setattr(agreement, "consumer_sides", every_side)
    assert _outcome(paths, rule) == lean
    assert lean[0] or rule in ("PRX004",), f"{rule}'s failing fixtures give findings"


# -- proxy_values leaves out, before working out their place, values no condition judges -----

VALUES_RULES = sorted(p.parent.name for p in (FIXTURES / "rules").glob("*/fail")
                      if (RULES / f"{p.parent.name}.yaml").is_file()
                      and "template: proxy_values" in (RULES / f"{p.parent.name}.yaml").read_text())


@pytest.mark.parametrize("rule", VALUES_RULES)
def test_leaving_unjudged_values_out_changes_no_proxy_values_result(
        rule: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every proxy_values rule's fixtures give the same findings and results when every
    consumer value is built (no-credentials applies to every value, and with another
    condition beside it no value is passed without being built: nothing is left out)."""
    paths = [FIXTURES / "rules" / rule / "fail", FIXTURES / "rules" / rule / "pass"]
    lean = _outcome(paths, rule)
    lean_values = pv._consumer_values

    def every_value(ctx: Any, subject: Any, roles: Any, variables: Any, conditions: Any,
                    params: Any, passed: Any) -> Any:
        return lean_values(ctx, subject, roles, variables, ["no-credentials", "valid"], params,
                           passed)

    monkeypatch.setattr(pv, "_consumer_values", every_value)
    assert _outcome(paths, rule) == lean
    assert lean[0], f"{rule}'s failing fixtures give findings"


# -- what a template reads once per rule stays that rule's ------------------------------------

FAMILIES = {"agreement": ["PRX006", "PRX010", "PRX003", "PRX017"],
            "proxy_values": ["PRX007", "PRX008", "PRX013", "PRX014"],
            "noproxy_coverage": ["PRX005", "PRX001", "OCM004"],
            "trust": ["PRX012", "PRX016", "OCM002", "OCM006"]}


@pytest.mark.parametrize("template", sorted(FAMILIES))
def test_rules_of_one_template_scanned_together_each_keep_their_own_result(template: str) -> None:
    """Rules of one template differ by their params (consumers, variables, roles): read
    once per rule, each rule's are its own, so a rule gives alone what it gives with the
    others, whichever runs first."""
    rules = FAMILIES[template]
    paths = [FIXTURES / "rules" / r / side for r in rules for side in ("fail", "pass")
             if (FIXTURES / "rules" / r / side).is_dir()]
    together = scan(paths, rules)
    for rule in rules:
        alone = scan(paths, [rule])
        assert sorted((f.location.path, f.location.line, f.message) for f in alone.findings) == \
            sorted((f.location.path, f.location.line, f.message) for f in together.findings
                   if f.rule_id == rule), rule
        assert [r.to_json() for r in alone.results] == \
            [r.to_json() for r in together.results if r.rule_id == rule], rule
    assert together.findings, f"the {template} rules fire on their failing fixtures"
