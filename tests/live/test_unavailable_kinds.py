"""Engine: kinds a live source could not list make exactly the rules that need them not evaluable."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import pytest

from hcpscan.findings.model import RuleInfo, Severity, Status
from hcpscan.inventory.objects import K8sObject, SourceLocation
from hcpscan.inventory.store import Inventory, UnavailableKind
from hcpscan.rules.context import Context
from hcpscan.rules.engine import evaluate
from hcpscan.rules.model import AppliesTo, Rule
from hcpscan.rules.templates import TEMPLATES, Template, Violation

FORBIDDEN_SECRETS = UnavailableKind("forbidden: grant list on secrets", may_exist=True)
NO_HOSTEDCLUSTERS = UnavailableKind("kind not served: the API server serves no HostedCluster "
                                    "(its CRD is not installed)", may_exist=False)


class _ReadsSecrets(Template):
    """Flags every subject; stands for a check that also looks up Secrets."""

    name = "test_reads_secrets"
    description = "test primitive"
    reads: ClassVar[tuple[str, ...]] = ("Secret",)

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Violation]:
        yield Violation(field="data")


@pytest.fixture(autouse=True)
def _primitive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(TEMPLATES, _ReadsSecrets.name, _ReadsSecrets())


def _rule(rule_id: str, kinds: tuple[str, ...], primitive: str = "field_matches") -> Rule:
    params = {"path": "$.metadata.name", "pattern": "\\S"} if primitive == "field_matches" else {}
    return Rule(RuleInfo(rule_id, rule_id, Severity.HIGH, "proxy"), AppliesTo(kinds), primitive, params,
                "{object} fails")


def _configmap(name: str = "proxy-env") -> K8sObject:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "team-a"}}
    return K8sObject("management", "v1", "ConfigMap", "team-a", name, body,
                     SourceLocation(f"cluster/ctx/team-a/ConfigMap/{name}.yaml", 1))


def _results(inventory: Inventory, *rules: Rule) -> dict[str, tuple[Status, str]]:
    _, results, _ = evaluate(list(rules), Context(inventory))
    return {r.rule_id: (r.status, r.reason) for r in results}


def test_forbidden_subject_kind_makes_the_rule_not_evaluable():
    inventory = Inventory([_configmap()], unavailable={"Secret": FORBIDDEN_SECRETS})
    results = _results(inventory, _rule("T1", ("Secret", "ConfigMap")))
    assert results["T1"] == (Status.NOT_EVALUABLE, "forbidden: grant list on secrets")


def test_forbidden_kind_a_check_reads_makes_the_rule_not_evaluable():
    inventory = Inventory([_configmap()], unavailable={"Secret": FORBIDDEN_SECRETS})
    results = _results(inventory, _rule("T2", ("ConfigMap",), _ReadsSecrets.name))
    assert results["T2"] == (Status.NOT_EVALUABLE, "forbidden: grant list on secrets")


def test_rules_that_do_not_need_the_kind_are_evaluated():
    inventory = Inventory([_configmap()], unavailable={"Secret": FORBIDDEN_SECRETS})
    results = _results(inventory, _rule("T3", ("ConfigMap",)))
    assert results["T3"] == (Status.PASS, "")


def test_kind_not_served_replaces_kind_absent():
    # Not served: no such object can exist, so there is nothing to check (not a pass either).
    inventory = Inventory([_configmap()], unavailable={"HostedCluster": NO_HOSTEDCLUSTERS})
    results = _results(inventory, _rule("T4", ("HostedCluster",)), _rule("T5", ("HostedCluster", "Proxy")))
    assert results["T4"] == (Status.NOT_APPLICABLE, NO_HOSTEDCLUSTERS.reason)
    assert results["T5"] == (Status.NOT_APPLICABLE,
                             f"{NO_HOSTEDCLUSTERS.reason}; kind absent: no Proxy in the input")


def test_a_kind_not_served_does_not_block_rules_with_subjects():
    # Not served means none can exist: the same as a dump without such objects.
    inventory = Inventory([_configmap()], unavailable={"Secret": UnavailableKind("kind not served", False)})
    results = _results(inventory, _rule("T6", ("ConfigMap",), _ReadsSecrets.name))
    assert results["T6"][0] is Status.FAIL


def test_offline_inventories_are_unchanged():
    results = _results(Inventory([_configmap()]), _rule("T7", ("HostedCluster",)))
    assert results["T7"] == (Status.NOT_APPLICABLE, "kind absent: no HostedCluster in the input")


def _hosted_cluster() -> K8sObject:
    body = {"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
            "metadata": {"name": "edge", "namespace": "clusters"}, "spec": {}}
    return K8sObject("management", body["apiVersion"], "HostedCluster", "clusters", "edge", body,
                     SourceLocation("cluster/ctx/clusters/HostedCluster/edge.yaml", 1))


FORBIDDEN_HCPS = UnavailableKind("forbidden: grant list on hostedcontrolplanes", may_exist=True)


def test_a_forbidden_stand_in_kind_does_not_block_rules_on_the_listed_kind():
    """Every HostedControlPlane is written from a HostedCluster: listed in full, the
    HostedClusters say all a HostedControlPlane would."""
    inventory = Inventory([_hosted_cluster()], unavailable={"HostedControlPlane": FORBIDDEN_HCPS})
    results = _results(inventory, _rule("T8", ("HostedCluster", "HostedControlPlane")))
    assert results["T8"] == (Status.PASS, "")  # judged, not "not evaluable"


def test_a_forbidden_stand_in_kind_blocks_when_its_source_is_forbidden_too():
    inventory = Inventory([], unavailable={
        "HostedControlPlane": FORBIDDEN_HCPS,
        "HostedCluster": UnavailableKind("forbidden: grant list on hostedclusters", may_exist=True)})
    results = _results(inventory, _rule("T9", ("HostedCluster", "HostedControlPlane")))
    assert results["T9"] == (Status.NOT_EVALUABLE, "forbidden: grant list on hostedclusters; "
                                                   "forbidden: grant list on hostedcontrolplanes")
