"""A dump of a hosted control plane's namespace alone (`oc adm inspect ns/clusters-<name>`,
`hypershift dump` of the HCP namespace, a GitOps folder of it) holds the HostedControlPlane
the HyperShift operator writes from the HostedCluster, and no HostedCluster. The
HostedControlPlane stands in for it: every rule judges it as it judges the HostedCluster,
and its findings name the HostedControlPlane, the object in the input. When both are in the
input they are one cluster, judged once, at the HostedCluster."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hcpscan.findings.model import Finding, ScanReport
from hcpscan.rules.loader import builtin_rules_dir, load_rule_dirs
from tests.conftest import FIXTURES
from tests.rules.harness import scan
from tests.rules.hcp_copy import add_control_planes, copy_as_hcp_namespace_only

HOSTED = ("HostedCluster", "HostedControlPlane")
CATALOG = load_rule_dirs([builtin_rules_dir()])
# every rule that judges a HostedCluster, as the catalog says
RULES = sorted(r.id for r in CATALOG if "HostedCluster" in r.applies_to.kinds)
# every rule whose fixtures hold a HostedCluster (those that read one for other subjects too)
CASES = [(rule.id, side) for rule in CATALOG for side in ("fail", "pass")
         if any("kind: HostedCluster" in p.read_text()
                for p in (FIXTURES / "rules" / rule.id / side).rglob("*.yaml"))]
_HOSTED_REF = re.compile(r"\b(HostedCluster|HostedControlPlane) [\w.-]+/[\w.-]+")
_PLACE = re.compile(r"\[[^\[\]]*\.ya?ml:\d+\]|\S+\.ya?ml:\d+")
_CONFIGMAP = re.compile(r"ConfigMap [\w.-]+/")  # the proxy's trustedCA, in the HCP namespace


def _said(report: ScanReport, rule_id: str) -> tuple[str, list[tuple[str, str, str, str]]]:
    """The rule's status and findings, with the hosted cluster's object and files unnamed."""
    def one(f: Finding) -> tuple[str, str, str, str]:
        kind = "hosted" if f.object.kind in HOSTED else f.object.kind
        name = "" if f.object.kind in HOSTED else f"{f.object.namespace}/{f.object.name}"
        message = _CONFIGMAP.sub("ConfigMap ", _PLACE.sub("<file>", _HOSTED_REF.sub(
            "<hosted>", f.message)))
        return kind, name, f.field, message
    (result,) = [r for r in report.results if r.rule_id == rule_id]
    return result.status.value, sorted(one(f) for f in report.findings if f.rule_id == rule_id)


def test_the_rules_that_judge_a_hosted_cluster_judge_its_control_plane_copy() -> None:
    rules = {r.id: r for r in CATALOG}
    assert RULES and all("HostedControlPlane" in rules[i].applies_to.kinds for i in RULES)


@pytest.mark.parametrize(("rule_id", "side"), CASES, ids=[f"{r}-{s}" for r, s in CASES])
def test_hcp_namespace_alone_judged_as_with_its_hosted_cluster(rule_id: str, side: str,
                                                               tmp_path: Path) -> None:
    folder = FIXTURES / "rules" / rule_id / side
    copy_as_hcp_namespace_only(folder, tmp_path / "hcp-only")
    whole = scan([folder], [rule_id])
    alone = scan([tmp_path / "hcp-only"], [rule_id])
    assert _said(alone, rule_id) == _said(whole, rule_id)
    for f in alone.findings:  # evidence names what the input holds, never the HostedCluster
        assert f.object.kind != "HostedCluster"
        assert "HostedCluster " not in f.message, f.message
        assert f.location.path.startswith(str(tmp_path))


@pytest.mark.parametrize(("rule_id", "side"), CASES, ids=[f"{r}-{s}" for r, s in CASES])
def test_a_control_plane_copy_beside_its_hosted_cluster_is_not_judged_twice(
        rule_id: str, side: str, tmp_path: Path) -> None:
    folder = FIXTURES / "rules" / rule_id / side
    assert add_control_planes(folder, tmp_path / "copies")
    whole = scan([folder], [rule_id])
    both = scan([folder, tmp_path / "copies"], [rule_id])
    assert [f for f in both.findings if f.location.path.startswith(str(tmp_path))] == []
    assert _said(both, rule_id)[1] == _said(whole, rule_id)[1]


ODD_COPIES = """\
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedControlPlane
metadata:
  name: x
  namespace: x
  annotations: {hypershift.openshift.io/cluster: 42}
spec:
  platform: {type: None, agent: [1]}
  services: [{service: Ignition, servicePublishingStrategy: {type: NodePort}}]
  configuration: {proxy: {httpsProxy: "http://p:3128"}}
---
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedControlPlane
metadata:
  name: y
  namespace: clusters-y
  annotations: {hypershift.openshift.io/cluster: clusters/y/z}
spec:
  networking: {machineNetwork: [{cidr: 10.0.0.0/33}]}
  services: [{service: APIServer, servicePublishingStrategy: {type: LoadBalancer}}]
  configuration: {proxy: {httpsProxy: "https://proxy:3129", trustedCA: {name: ca}}}
"""


def test_odd_copies_are_judged_without_a_failed_check(tmp_path: Path) -> None:
    """An annotation that is no `<namespace>/<name>`, a namespace not named after the
    HostedCluster, a platform.agent that is no mapping: read, never a failed check."""
    (tmp_path / "hcp.yaml").write_text(ODD_COPIES)
    report = scan([tmp_path / "hcp.yaml"], [])
    assert [d.message for d in report.diagnostics if "check failed" in d.message] == []
    hosted = {(f.rule_id, f.object.name) for f in report.findings}
    assert ("PRX005", "x") in hosted and ("PRX005", "y") in hosted


def test_cel_hcp_namespace_of_a_hosted_control_plane_is_its_own_namespace() -> None:
    from hcpscan.rules.templates.cel import _hcp_namespace

    assert _hcp_namespace({"kind": "HostedCluster",
                           "metadata": {"name": "a.b", "namespace": "clusters"}}) == "clusters-a-b"
    assert _hcp_namespace({"kind": "HostedControlPlane",
                           "metadata": {"name": "a.b", "namespace": "clusters-a-b"}}) == \
        "clusters-a-b"


def test_a_flow_query_names_the_hosted_control_plane(run_cli) -> None:  # type: ignore[no-untyped-def]
    """`hcpscan connectivity --flow` on an HCP namespace alone: one result per stand-in,
    named by the HostedControlPlane, chosen by either name."""
    import json

    dump = FIXTURES / "rules" / "HCP007" / "fail" / "hcp-namespace-only"
    for chosen in ([], ["--hosted-cluster", "clusters-bm-b/bm-b"],
                   ["--hosted-cluster", "clusters/bm-b"]):
        result = run_cli("connectivity", "--flow", "workers-to-ignition", "--format", "json",
                         *chosen, str(dump))
        found = json.loads(result.out)["results"]
        assert [(r["hosted_cluster"], r["status"]) for r in found] == [
            ("clusters-bm-b/bm-b", "blocked")], chosen


def test_a_stand_in_without_workloads_says_its_workloads_are_missing_not_its_namespace() -> None:
    """The HCP namespace of a HostedControlPlane is in the input (the copy is there): what
    is missing is its workloads, and the reason says so."""
    report = scan([FIXTURES / "rules" / "PRX013" / "fail" / "hcp-namespace-only"], ["HCP005"])
    (result,) = report.results
    assert result.status.value == "not-evaluable"
    assert "the workloads of HCP namespace clusters-example-b are not in the input" in result.reason
    assert "HCP namespace clusters-example-b is not in the input" not in result.reason
