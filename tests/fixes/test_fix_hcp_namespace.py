"""Fixes of findings on a HostedControlPlane that stands in for its HostedCluster (a dump
of the HCP namespace alone): the HyperShift operator writes the HostedControlPlane from
the HostedCluster and undoes an edit of it, so the fix names the HostedCluster and the
same fields to change there, and writes no file."""

from __future__ import annotations

from pathlib import Path

from hcpscan.fixes.plan import fix_for
from tests.conftest import FIXTURES
from tests.rules.harness import scan

RULES = FIXTURES / "rules"


def _fixes(folder: Path, rule: str):  # type: ignore[no-untyped-def]
    found = [f for f in scan([folder], [rule]).findings if f.rule_id == rule]
    assert found
    return [(f, fix_for(f, None)) for f in found]


def test_a_noproxy_fix_of_a_stand_in_is_made_on_its_hosted_cluster() -> None:
    fixes = {f.object.name: fix for f, fix in
             _fixes(RULES / "PRX005" / "fail" / "hcp-namespace-only", "PRX005")}
    fix = fixes["example-b"]
    assert fix is not None and fix.changes == ()
    assert fix.manual.splitlines() == [
        "change HostedCluster clusters/example-b, not HostedControlPlane "
        "clusters-example-b/example-b (the HyperShift operator writes the HostedControlPlane "
        "from its HostedCluster and undoes an edit of it; `oc -n clusters edit hostedcluster "
        "example-b`, or the HostedCluster's manifest in Git), the same fields:",
        "  set spec.configuration.proxy.noProxy to .corp.example.com,172.20.0.1"]


def test_the_hosted_cluster_itself_is_still_patched_in_place() -> None:
    fixes = [fix for f, fix in _fixes(RULES / "PRX005" / "fail", "PRX005")
             if f.object.kind == "HostedCluster"]
    assert fixes and all(fix is not None and fix.changes and not fix.manual for fix in fixes)


def test_allowed_cidr_blocks_named_on_the_hosted_cluster_a_stand_in_copies() -> None:
    ((finding, fix),) = _fixes(RULES / "HCP003" / "fail" / "hcp-namespace-only", "HCP003")
    assert finding.object.kind == "HostedControlPlane"
    assert fix is not None and not fix.automatic
    assert "HostedCluster clusters/edge-b's spec.networking.apiServer.allowedCIDRBlocks" \
        in fix.summary


def test_a_missing_ca_config_map_of_a_stand_in_is_created_in_the_hosted_clusters_namespace(
        ) -> None:
    fixes = {f.object.name: fix for f, fix in
             _fixes(RULES / "PRX012" / "fail" / "hcp-namespace-only", "PRX012")}
    fix = fixes["payments-b"]
    assert fix is not None and not fix.automatic
    assert fix.summary.startswith("create ConfigMap clusters/payments-proxy-ca with key "
                                  "ca-bundle.crt")
    assert "copies it into clusters-payments-b as ConfigMap clusters-payments-b/payments-proxy-ca" \
        in fix.summary
    assert "`oc -n clusters create configmap payments-proxy-ca --from-file=ca-bundle.crt=<PEM>`" \
        in fix.summary


def test_the_hosted_clusters_own_ca_config_map_is_named_where_it_is() -> None:
    fixes = {f.object.name: fix for f, fix in _fixes(RULES / "PRX012" / "fail", "PRX012")
             if f.object.kind == "HostedCluster"}
    assert fixes["payments"] is not None
    assert fixes["payments"].summary.startswith("create ConfigMap clusters/payments-proxy-ca ")
    assert "HyperShift operator copies" not in fixes["payments"].summary


def test_an_expired_ca_in_a_stand_ins_config_map_is_replaced_at_its_source(tmp_path: Path) -> None:
    """The trusted-CA ConfigMap of the HCP namespace is synced from the HostedCluster's
    namespace: the fix names that ConfigMap (an edit of the copy is undone)."""
    import yaml

    proxy, configmap = yaml.safe_load_all(
        (RULES / "PRX012" / "fail" / "cluster-proxy-expired-ca.yaml").read_text())
    configmap["metadata"]["namespace"] = "clusters-lab"
    hcp = {"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedControlPlane",
           "metadata": {"name": "lab", "namespace": "clusters-lab",
                        "annotations": {"hypershift.openshift.io/cluster": "clusters/lab"}},
           "spec": {"platform": {"type": "AWS"}, "configuration": {"proxy": {
               "httpsProxy": proxy["spec"]["httpsProxy"], "trustedCA": {"name": "user-ca-bundle"}}}}}
    (tmp_path / "hcp.yaml").write_text(yaml.safe_dump_all([hcp, configmap]))
    ((finding, fix),) = _fixes(tmp_path / "hcp.yaml", "PRX012")
    assert (finding.object.kind, finding.object.namespace) == ("ConfigMap", "clusters-lab")
    assert fix is not None and not fix.automatic and not fix.changes
    assert fix.summary.endswith(
        "(ConfigMap clusters/user-ca-bundle, in the HostedCluster's namespace, is what to change: "
        "the HyperShift operator copies it into clusters-lab as ConfigMap "
        "clusters-lab/user-ca-bundle and undoes an edit of the copy; "
        "`oc -n clusters edit configmap user-ca-bundle`)")


def test_the_hosted_cluster_of_a_stand_in_in_an_odd_namespace_is_not_guessed(
        tmp_path: Path) -> None:
    """No hypershift.openshift.io/cluster annotation and an HCP namespace that is not
    <namespace>-<name>: the HostedCluster's namespace is unknown, and said to be so."""
    source = RULES / "PRX005" / "fail" / "hcp-namespace-only"
    text = "".join(p.read_text() for p in sorted(source.rglob("*.yaml")))
    text = text.replace("clusters-example-b", "hosted-cp")
    assert "hosted-cp" in text
    lines = [line for line in text.splitlines()
             if "hypershift.openshift.io/cluster:" not in line]
    (tmp_path / "in.yaml").write_text("\n".join(lines) + "\n")
    fixes = {f.object.name: fix for f, fix in _fixes(tmp_path, "PRX005")}
    manual = fixes["example-b"].manual
    assert manual.startswith("change the HostedCluster whose control-plane namespace is "
                             "hosted-cp (named example-b;")
    assert "oc -n hosted-cp edit" not in manual and "hosted-cp/example-b, not" not in manual
    assert "not HostedControlPlane hosted-cp/example-b" in manual
