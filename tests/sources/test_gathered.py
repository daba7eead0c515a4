"""A kind a must-gather never gathers is "not collected", not "none in the input"."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import SHARED
from tests.sources.dumps import write_tree

IMAGE = "must-gather.local.3141/quay-io-openshift-must-gather-sha256-9a8b/"
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-dns\n"
SERVICES = ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n"
            "    name: dns-default\n    namespace: openshift-dns\n  spec:\n    ports:\n"
            "    - {name: dns, port: 53, protocol: UDP}\n")


def _dump(root: Path, timestamp: bool, extra: dict[str, str] | None = None) -> Path:
    files = {IMAGE + "namespaces/openshift-dns/openshift-dns.yaml": NAMESPACE,
             IMAGE + "namespaces/openshift-dns/core/services.yaml": SERVICES, **(extra or {})}
    if timestamp:
        files["must-gather.local.3141/timestamp"] = "2026-11-24 09:00:00 start\n"
    write_tree(root, files)
    return root


def _reason(run_cli, path: Path, rule: str) -> str:
    """The rule's status and reason, as one line."""
    result = run_cli("scan", str(path), "--format", "json", "--select", rule)
    (entry,) = json.loads(result.out)["rules"]
    return f"{entry['status']}: {entry['reason']}"


def test_networkpolicies_absent_from_a_must_gather_were_not_collected(tmp_path, run_cli):
    reason = _reason(run_cli, _dump(tmp_path, timestamp=True), "HCP004")
    # the cluster may have some that were not looked at: not evaluable, not "nothing to check"
    assert reason.startswith("not-evaluable: not collected: the must-gather does not gather "
                             "networkpolicies")
    assert "oc get networkpolicies -A -o yaml" in reason
    assert "no NetworkPolicy in the input" not in reason


def test_a_tree_without_timestamp_is_not_taken_for_a_must_gather(tmp_path, run_cli):
    # hcpscan cluster --save-dump writes the same layout, for every kind it listed
    assert _reason(run_cli, _dump(tmp_path, timestamp=False), "HCP004") == \
        "not-applicable: kind absent: no NetworkPolicy in the input"


def test_a_collected_but_empty_resource_is_absent(tmp_path, run_cli):
    empty = {IMAGE + "namespaces/openshift-dns/networking.k8s.io/networkpolicies.yaml":
             "apiVersion: v1\nkind: List\nitems: []\n"}
    assert _reason(run_cli, _dump(tmp_path, timestamp=True, extra=empty), "HCP004") == \
        "not-applicable: kind absent: no NetworkPolicy in the input"


def test_the_real_must_gather_says_what_it_did_not_collect(run_cli):
    path = SHARED / "realworld" / "must-gather-aws"
    result = run_cli("scan", str(path), "--format", "json")
    report = json.loads(result.out)
    assert (result.code, report["diagnostics"]) == (0, [])  # a valid dump, read in full
    reasons = {r["rule_id"]: r["reason"] for r in report["rules"]}
    assert "must-gather does not gather networkpolicies" in reasons["HCP004"]
    assert {r["rule_id"]: r["status"] for r in report["rules"]}["HCP004"] == "not-evaluable"
    assert not [r for r in reasons.values() if "in the input" in r and "kind absent" in r]
    # and what the scan left out for want of a rule reading it, per resource
    (left_out,) = [p for p in report["passed_over"] if p["reason"].startswith("left out")]
    assert left_out["by"]["apirequestcounts"] >= 1 and "configmaps" not in left_out["by"]


CRDS = IMAGE + "cluster-scoped-resources/apiextensions.k8s.io/customresourcedefinitions/"
CRD = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
       "  name: {name}\n")


def _crds(*names: str) -> dict[str, str]:
    return {CRDS + f"{name}.yaml": CRD.format(name=name) for name in names}


def test_a_kind_whose_crd_the_must_gather_does_not_list_is_not_applicable(tmp_path, run_cli):
    # a plain OpenShift must-gather: its CRD list has config.openshift.io, no HyperShift
    extra = _crds("proxies.config.openshift.io", "networks.config.openshift.io")
    reason = _reason(run_cli, _dump(tmp_path, timestamp=True, extra=extra), "HCP001")
    assert reason == ("not-applicable: not installed: the must-gather's CRD list has no "
                      "hostedclusters.hypershift.openshift.io, so the cluster has no HostedCluster")


def test_a_kind_whose_crd_is_listed_but_not_gathered_was_not_collected(tmp_path, run_cli):
    extra = _crds("proxies.config.openshift.io", "hostedclusters.hypershift.openshift.io")
    reason = _reason(run_cli, _dump(tmp_path, timestamp=True, extra=extra), "HCP001")
    assert reason.startswith("not-evaluable: not collected: the must-gather does not gather "
                             "hostedclusters")


def test_a_built_in_kind_is_not_judged_by_the_crd_list(tmp_path, run_cli):
    # NetworkPolicy has no CRD: absent from the CRD list, it may still exist
    extra = _crds("proxies.config.openshift.io")
    reason = _reason(run_cli, _dump(tmp_path, timestamp=True, extra=extra), "HCP004")
    assert reason.startswith("not-evaluable: not collected: the must-gather does not gather "
                             "networkpolicies")


def test_a_plain_must_gather_has_no_not_evaluable_result_for_an_uninstalled_crd(run_cli):
    path = SHARED / "realworld" / "must-gather-aws"
    report = json.loads(run_cli("scan", str(path), "--format", "json").out)
    not_evaluable = {r["rule_id"]: r["reason"] for r in report["rules"]
                     if r["status"] == "not-evaluable"}
    assert list(not_evaluable) == ["HCP004"]  # NetworkPolicies: built in, not gathered
    reasons = {r["rule_id"]: r["reason"] for r in report["rules"]}
    assert "hostedclusters.hypershift.openshift.io" in reasons["HCP001"]
    assert "clusterpolicies.kyverno.io" in reasons["PRX011"]


def test_node_files_are_said_not_gathered_only_for_a_must_gather(tmp_path, run_cli):
    # PRX009 reads systemd drop-ins, which no must-gather holds: said so for a must-gather
    gathered = _reason(run_cli, _dump(tmp_path / "mg", timestamp=True), "PRX009")
    assert "a must-gather holds no systemd drop-ins" in gathered
    # a plain folder of manifests is no must-gather: the plain reason, no must-gather named
    write_tree(tmp_path / "plain", {"ns.yaml": NAMESPACE})
    plain = _reason(run_cli, tmp_path / "plain", "PRX009")
    assert "must-gather" not in plain
    assert plain.startswith("not-applicable: kind absent:") and "SystemdDropIn" in plain
