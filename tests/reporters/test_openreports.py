"""OpenReports and PolicyReport output: valid against the CRDs, stable names, exact results."""

from __future__ import annotations

import pytest
import yaml

from hcpscan.findings.model import (
    Finding,
    Location,
    ObjectRef,
    RuleInfo,
    RuleResult,
    ScanReport,
    Severity,
    Status,
)
from hcpscan.reporters import render
from hcpscan.reporters.openreports import build_reports, dns_label, report_name
from hcpscan.reporters.policyreport import POLICYREPORT
from tests.conftest import SHARED
from tests.k8sschema import errors_against_crd, load_crd
from tests.reporters.policyreport_v1alpha2 import policyreport_crd

OPENREPORTS_CRDS = SHARED / "conformance" / "openreports"
CRDS = {
    "Report": (load_crd(OPENREPORTS_CRDS / "openreports.io_reports.yaml"), "v1alpha1"),
    "ClusterReport": (load_crd(OPENREPORTS_CRDS / "openreports.io_clusterreports.yaml"), "v1alpha1"),
    "PolicyReport": (policyreport_crd("PolicyReport"), "v1alpha2"),
    "ClusterPolicyReport": (policyreport_crd("ClusterPolicyReport"), "v1alpha2"),
}


def schema_errors(documents: list[dict]) -> list[str]:
    problems = []
    for doc in documents:
        crd, version = CRDS[doc["kind"]]
        name = f"{doc['kind']} {doc['metadata'].get('namespace', '')}/{doc['metadata']['name']}"
        problems += [f"{name}: {p}" for p in errors_against_crd(doc, crd, version)]
    return problems


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> dict[str, str]:
    """Both outputs of the bundled example as reports/regenerate.py renders them (the
    snapshots of the whole files are in tests/e2e)."""
    from tests.cli.test_example_reports import regenerate

    written = regenerate.generate(tmp_path_factory.mktemp("example"))
    return {fmt: written[fmt].read_text() for fmt in ("openreports", "policyreport")}


@pytest.mark.parametrize("fmt", ["openreports", "policyreport"])
def test_example_validates_against_the_crd_schemas(example, fmt):
    documents = list(yaml.safe_load_all(example[fmt]))
    assert len(documents) > 2
    assert schema_errors(documents) == []


def test_example_layout(example):
    documents = list(yaml.safe_load_all(example["openreports"]))
    cluster, *namespaced = documents
    assert cluster["kind"] == "ClusterReport" and cluster["metadata"]["name"] == "hcpscan"
    assert {d["kind"] for d in namespaced} == {"Report"}
    assert all(d["metadata"]["name"] == "hcpscan" for d in namespaced)
    # one Report per namespace with findings; the example has no cluster-scoped finding since
    # PRX007 leaves the Go-read Proxy alone (issue 24), so the ClusterReport names no resource
    assert [d["metadata"]["namespace"] for d in namespaced] == [
        "cluster1", "clusters", "clusters-agent-prod", "clusters-aws-dev", "hypershift", "monitoring",
        "open-cluster-management-agent", "org-acme"]
    assert [r for r in cluster["results"] if r.get("resources")] == []
    for doc in documents:
        assert doc["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "hcpscan"
        assert doc["source"] == "hcpscan"
        counted = {k: sum(r["result"] == k for r in doc["results"]) for k in doc["summary"]}
        assert doc["summary"] == counted


def test_example_policyreport_is_the_same_results(example):
    ours = list(yaml.safe_load_all(example["openreports"]))
    theirs = list(yaml.safe_load_all(example["policyreport"]))
    assert [d["kind"] for d in theirs] == ["ClusterPolicyReport"] + ["PolicyReport"] * (len(ours) - 1)
    for a, b in zip(ours, theirs):
        assert "source" not in b  # v1alpha2 has none at report level: a server would prune it
        assert all(r.pop("source") == "hcpscan" for r in b["results"])
        assert a["results"] == b["results"] and a["metadata"] == b["metadata"]


def by_policy(doc: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for result in doc["results"]:
        out.setdefault(result["policy"], []).append(result)
    return out


def test_every_rule_status_has_its_result(realistic):
    documents = build_reports(realistic)
    assert schema_errors(documents) == []
    cluster = documents[0]
    assert (cluster["kind"], cluster["metadata"]["name"]) == ("ClusterReport", "hcpscan")
    scan = by_policy(cluster)
    assert scan["HCP-NET-010"][0]["result"] == "pass"
    assert scan["HCP-NET-010"][0]["properties"]["objectsChecked"] == "3"
    assert "resources" not in scan["HCP-NET-010"][0]
    assert scan["HCP-NET-011"][0]["result"] == "error"
    assert scan["HCP-NET-011"][0]["message"] == "not evaluable: no Service objects in the input"
    # rules with findings speak through their findings only
    assert not {"HCP-NET-001", "HCP-PROXY-002"} & set(scan)
    hcp = next(d for d in documents if d["metadata"].get("namespace") == "hcp-ns")
    assert [r["result"] for r in by_policy(hcp)["HCP-NET-001"]] == ["fail", "fail"]
    clusters = next(d for d in documents if d["metadata"].get("namespace") == "clusters")
    suppressed = by_policy(clusters)["HCP-PROXY-005"][0]
    assert suppressed["result"] == "skip"
    assert suppressed["properties"]["suppressedBy"] == "baseline"
    assert suppressed["properties"]["expires"] == "2027-01-01"


def test_finding_properties_and_subject(small):
    hcp = next(d for d in build_reports(small) if d["metadata"].get("namespace") == "hcp-ns")
    (result,) = hcp["results"]
    assert result["resources"] == [{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                                    "name": "nodeport-ignition-proxy", "namespace": "hcp-ns"}]
    assert result["properties"] == {
        "field": "spec.ingress[0].ports[0].port", "file": "gitops/hcp/networkpolicies.yaml",
        "line": "12", "column": "7", "fingerprint": small.findings[0].key,
        "evidence": small.findings[0].evidence[0]}
    assert (result["policy"], result["category"], result["severity"]) == ("HCP-NET-001", "exposure",
                                                                          "critical")
    assert result["timestamp"] == {"seconds": 1770091506, "nanos": 0}  # METADATA["started"]


def test_guest_cluster_objects_get_their_own_reports(realistic):
    documents = build_reports(realistic)
    names = {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in documents}
    assert ("Report", "openshift-dns", "hcpscan-hostedcluster-prod") in names
    dns = next(d for d in documents if d["metadata"].get("namespace") == "openshift-dns")
    assert dns["metadata"]["labels"]["hcpscan.io/cluster"] == "hostedcluster-prod"


def test_names_do_not_depend_on_time(realistic):
    first = build_reports(realistic)
    realistic.metadata["started"] = "2030-01-01T00:00:00+00:00"
    later = build_reports(realistic)
    assert [d["metadata"] for d in first] == [d["metadata"] for d in later]
    assert first != later  # the time stamps did move


def test_not_applicable_rule_is_skipped_not_passed():
    rules = [RuleInfo("PRX001", "KubeVirt network missing from noProxy", Severity.HIGH, "proxy")]
    results = [RuleResult("PRX001", Status.NOT_APPLICABLE, "no NodePool matches the rule's scope")]
    (cluster,) = build_reports(ScanReport("0.1.0", rules, results, [], [], {}, {}))
    (result,) = cluster["results"]
    assert result["result"] == "skip"
    assert result["message"] == "not applicable: no NodePool matches the rule's scope"
    assert cluster["summary"] == {"pass": 0, "fail": 0, "warn": 0, "error": 0, "skip": 1}


def test_a_cluster_scoped_finding_goes_to_the_cluster_report():
    ref = ObjectRef("management", "config.openshift.io/v1", "Proxy", "", "cluster")
    finding = Finding("PRX013", Severity.MEDIUM, ref, "spec.httpProxy",
                      Location("proxies.yaml", 7), "Proxy cluster: spec.httpProxy has no scheme")
    report = ScanReport("0.1.0", [], [RuleResult("PRX013", Status.FAIL, findings=1)], [finding],
                        [], {}, {})
    (cluster,) = build_reports(report)
    assert cluster["kind"] == "ClusterReport"
    placed = [r for r in cluster["results"] if r.get("resources")]
    assert [(r["policy"], r["resources"][0]["kind"]) for r in placed] == [("PRX013", "Proxy")]


def test_odd_cluster_names_become_valid_object_names():
    odd = "default/api-ocp-example-com:6443/kube:admin"
    ref = ObjectRef(odd, "v1", "ConfigMap", "monitoring", "proxy-env")
    finding = Finding("PRX008", Severity.HIGH, ref, "data.HTTPS_PROXY",
                      Location("cluster/x/monitoring/ConfigMap/proxy-env.yaml", virtual=True), "m")
    report = ScanReport("0.1.0", [], [RuleResult("PRX008", Status.FAIL, findings=1)], [finding],
                        [], {}, {"clusters": [odd]})
    documents = build_reports(report)
    assert schema_errors(documents) == []
    (report_obj,) = [d for d in documents if d["kind"] == "Report"]
    assert report_obj["metadata"]["name"] == report_name(odd) == f"hcpscan-{dns_label(odd)}"
    assert report_obj["results"][0]["properties"]["virtualLocation"] == "true"
    assert dns_label("Default/API") != dns_label("default-api")  # cleaned names stay apart
    assert dns_label("hostedcluster-prod") == "hostedcluster-prod"


def test_policyreport_severity_and_result_values_are_the_allowed_ones(realistic):
    documents = build_reports(realistic, POLICYREPORT)
    assert schema_errors(documents) == []
    severities = {r["severity"] for d in documents for r in d["results"]}
    assert severities == {"critical", "high", "medium", "low", "info"}


def test_schema_check_catches_what_a_server_would_reject(small):
    documents = build_reports(small)
    bad = yaml.safe_load(render("openreports", small).split("---\n")[1])
    bad["results"][0]["severity"] = "warning"
    bad["results"][0]["properties"]["line"] = 12
    bad["results"][0]["owner"] = "someone"  # not in the schema: a server prunes it
    bad["metadata"]["name"] = "HCPSCAN"
    problems = "\n".join(schema_errors([bad]))
    for expected in ("'warning' is not one of", "12 is not of type 'string'",
                     "'owner' was unexpected", "metadata.name"):
        assert expected in problems
    assert schema_errors(documents) == []
    as_v1alpha2 = dict(documents[0], apiVersion="wgpolicyk8s.io/v1alpha2", kind="ClusterPolicyReport")
    assert any("'source' was unexpected" in p for p in schema_errors([as_v1alpha2]))


def test_every_report_object_names_the_config_the_run_used(realistic):
    realistic.metadata["config"] = {"path": "/repo/.hcpscan.yaml", "sha256": "ab" * 32}
    for kinds in (None, POLICYREPORT):
        objects = build_reports(realistic) if kinds is None else build_reports(realistic, kinds)
        assert objects and {o["metadata"]["annotations"]["hcpscan.io/config"] for o in objects} == {
            f"/repo/.hcpscan.yaml (sha256 {'ab' * 32})"}
    realistic.metadata["config"] = None
    assert {o["metadata"]["annotations"]["hcpscan.io/config"] for o in build_reports(realistic)} == {"none"}


def test_report_objects_say_what_input_was_passed_over(realistic):
    from hcpscan.findings.model import PassedOver

    realistic.passed_over = [PassedOver("hidden file", 3, ".git/config"),
                             PassedOver("link leaving the scanned folder", 1, "d/link.yaml")]
    (said,) = {o["metadata"]["annotations"]["hcpscan.io/passed-over"] for o in build_reports(realistic)}
    assert said == "3 hidden file; 1 link leaving the scanned folder"


@pytest.mark.parametrize("kinds_name", ["openreports", "policyreport"])
def test_results_name_their_rule_the_objects_uid_and_the_cluster(kinds_name):
    """Policy Reporter's rule column, the live object's uid, and whose cluster this is."""
    rules = [RuleInfo("PRX008", "Proxy credentials in plain text", Severity.HIGH, "proxy")]
    live = ObjectRef("management", "v1", "ConfigMap", "monitoring", "proxy-env",
                     "7d0c7b4e-1f59-4b0a-9a5c-2f1f0c8f4a11")
    guest = ObjectRef("hostedcluster-a", "v1", "ConfigMap", "monitoring", "proxy-env")
    findings = [Finding("PRX008", Severity.HIGH, obj, "data.HTTPS_PROXY", Location("cm.yaml", 3), "m")
                for obj in (live, guest)]
    report = ScanReport("0.1.0", rules, [RuleResult("PRX008", Status.FAIL, findings=2)], findings, [], {},
                        {"clusterName": "prod-east-1", "clusters": ["management", "hostedcluster-a"]})
    kinds = POLICYREPORT if kinds_name == "policyreport" else None
    documents = build_reports(report, kinds) if kinds else build_reports(report)
    namespaced = [d for d in documents if d["metadata"].get("namespace")]
    by_cluster = {d["metadata"]["labels"]["hcpscan.io/cluster"]: d for d in namespaced}
    assert set(by_cluster) == {"prod-east-1", "hostedcluster-a"}
    (mine,) = by_cluster["prod-east-1"]["results"]
    (theirs,) = by_cluster["hostedcluster-a"]["results"]
    assert mine["rule"] == mine["policy"] == "PRX008"
    assert mine["resources"][0]["uid"] == "7d0c7b4e-1f59-4b0a-9a5c-2f1f0c8f4a11"
    assert "uid" not in theirs["resources"][0]  # the input had none: none invented
    assert mine["properties"]["cluster"] == "prod-east-1"
    assert theirs["properties"]["cluster"] == "hostedcluster-a"
    for document in documents:
        crd, version = CRDS[document["kind"]]
        assert not errors_against_crd(document, crd, version)
    # without a known name, nothing changes: the label stays the input's cluster
    report.metadata.pop("clusterName")
    plain = build_reports(report)
    assert {d["metadata"]["labels"]["hcpscan.io/cluster"] for d in plain} == {"management", "hostedcluster-a"}
    assert all("cluster" not in r.get("properties", {}) for d in plain for r in d["results"])
