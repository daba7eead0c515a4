"""`hcpscan cluster --publish-reports`: server-side apply of the OpenReports objects, read back by kubectl."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from hcpscan.fleet.contract import decode_rules
from tests.k8sschema import errors_against_crd
from tests.live.apiserver import APPLY_PATCH, FLEET_MANAGED, POLICYREPORT_CRDS, REPORT_CRDS, catalog
from tests.live.conftest import HERE, write_kubeconfig
from tests.live.schemas import validators
from tests.live.test_cluster_scan import hcpscan
from tests.live.test_clusterrole import _grants as readonly_grants
from tests.reporters.policyreport_v1alpha2 import policyreport_crd

PUBLISHER_RBAC = HERE.parents[1] / "deploy" / "hcpscan-publisher-rbac.yaml"
REPORTS = {("openreports.io", "reports"), ("openreports.io", "clusterreports")}
POLICYREPORTS = {("wgpolicyk8s.io", "policyreports"), ("wgpolicyk8s.io", "clusterpolicyreports")}


def publishing_standin(standin, example_bodies):
    """The example served live, with the OpenReports CRDs installed and validating."""
    server = standin(example_bodies, resources=[*catalog(), *REPORT_CRDS])
    server.state.appliable |= REPORTS
    schemas = validators()
    server.state.schemas.update({k: v for k, v in schemas.items() if k[0] == "openreports.io"})
    return server


def publish(config: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--publish-reports",
                   "--format", f"openreports={out}", *extra)


def without_server_fields(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj["metadata"].items()
            if k not in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")}
    return {**obj, "metadata": meta}


def test_publish_then_kubectl_reads_the_reports_back(standin, pki, kubectl, tmp_path, example_bodies):
    server = publishing_standin(standin, example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, context="mgmt-hub")
    code, _, err = publish(config, tmp_path / "reports.yaml")
    assert code == 1, err  # findings; publishing went through
    rendered = list(yaml.safe_load_all((tmp_path / "reports.yaml").read_text()))
    assert f"published {len(rendered)} report object(s) to context mgmt-hub" in err

    namespaced = kubectl(config, "get", "reports.openreports.io", "-A", "-o", "yaml", "--show-managed-fields")
    cluster = kubectl(config, "get", "clusterreports.openreports.io", "-o", "yaml", "--show-managed-fields")
    assert namespaced.returncode == 0 and cluster.returncode == 0, namespaced.stderr + cluster.stderr
    served = [*yaml.safe_load(cluster.stdout)["items"], *yaml.safe_load(namespaced.stdout)["items"]]
    assert [without_server_fields(o) for o in served] == rendered
    assert {o["metadata"]["managedFields"][0]["manager"] for o in served} == {"hcpscan"}
    summary = kubectl(config, "get", "clusterreports.openreports.io", "hcpscan", "--no-headers")
    assert summary.returncode == 0 and summary.stdout.split()[0] == "hcpscan", summary.stderr


def test_publishing_is_the_only_write_and_reapplying_updates(standin, pki, tmp_path, example_bodies):
    server = publishing_standin(standin, example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    publish(config, tmp_path / "first.yaml")
    first = {(o["metadata"].get("namespace"), o["metadata"]["name"]): o["metadata"]["uid"]
             for items in server.state.objects.values() for o in items
             if o["apiVersion"].startswith("openreports.io/")}
    code, _, err = publish(config, tmp_path / "second.yaml")
    assert code == 1, err
    second = [o for items in server.state.objects.values() for o in items
              if o["apiVersion"].startswith("openreports.io/")]
    assert {(o["metadata"].get("namespace"), o["metadata"]["name"]): o["metadata"]["uid"]
            for o in second} == first  # the same objects, updated
    assert {o["metadata"]["generation"] for o in second} == {2}
    writes = [r for r in server.state.requests if r.method != "GET"]
    assert {r.method for r in writes} == {"PATCH"} and len(writes) == 2 * len(first)
    assert all(r.path.startswith("/apis/openreports.io/v1alpha1/") for r in writes)
    assert all(r.query == {"fieldManager": "hcpscan", "force": "true"} for r in writes)
    assert {r.status for r in writes} == {200, 201}


def test_a_namespace_whose_findings_are_gone_gets_an_empty_report(standin, pki, kubectl, tmp_path,
                                                                  example_bodies):
    server = publishing_standin(standin, example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    publish(config, tmp_path / "first.yaml")
    assert server.state.find("openreports.io", "Report", "monitoring", "hcpscan")["results"]
    # someone else's report in a namespace without findings is left alone
    server.state.store({"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
                        "metadata": {"name": "hcpscan", "namespace": "default"}, "results": []}, "kyverno")
    # the proxy credentials leave the monitoring ConfigMap (PRX008's only finding)
    configmaps = server.state.objects[("", "ConfigMap")]
    configmaps[:] = [o for o in configmaps if o["metadata"]["namespace"] != "monitoring"]
    requests_before = len(server.state.requests)
    code, _, err = publish(config, tmp_path / "second.yaml")
    assert code == 1, err
    assert "emptied 1 whose findings are gone" in err
    emptied = kubectl(config, "get", "reports.openreports.io", "hcpscan", "-n", "monitoring", "-o", "yaml")
    assert emptied.returncode == 0, emptied.stderr
    report = yaml.safe_load(emptied.stdout)
    assert report.get("results", []) == [] and set(report["summary"].values()) == {0}
    assert server.state.find("openreports.io", "Report", "default", "hcpscan")["metadata"][
        "managedFields"][0]["manager"] == "kyverno"
    second = yaml.safe_load_all((tmp_path / "second.yaml").read_text())
    with_findings = {d["metadata"].get("namespace") for d in second}
    looked_up = {r.path.split("/")[5] for r in server.state.requests[requests_before:]
                 if r.method == "GET" and "/reports/" in r.path}
    assert "monitoring" in looked_up and not looked_up & with_findings


def test_crds_not_installed_is_a_clear_error_after_the_reports(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)  # no openreports.io
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, context="edge")
    out = tmp_path / "reports.yaml"
    code, _, err = publish(config, out)
    assert code == 2
    assert ("error: cannot publish reports: context edge does not serve openreports.io/v1alpha1 "
            "(the OpenReports CRDs are not installed)") in err
    assert "hint: install the OpenReports CRDs" in err
    assert "PolicyReport CRDs" in err and "deploy/hcpscan-scansummary-crd.yaml" in err  # what else works
    assert out.read_text().startswith("---\napiVersion: openreports.io/v1alpha1")  # still written
    assert not [r for r in server.state.requests if r.method != "GET"]


def test_forbidden_names_the_role_to_grant_and_the_role_is_enough(standin, pki, tmp_path,
                                                                   example_bodies):
    server = publishing_standin(standin, example_bodies)
    server.state.allowed = readonly_grants()
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, _, err = publish(config, tmp_path / "r.yaml", "-n", "clusters")
    assert code == 2
    assert 'cannot patch resource "clusterreports" in API group "openreports.io"' in err
    assert "hint: grant create, patch and get on reports.openreports.io" in err
    assert "deploy/hcpscan-publisher-rbac.yaml" in err

    role = next(d for d in yaml.safe_load_all(PUBLISHER_RBAC.read_text()) if d["kind"] == "ClusterRole")
    granted = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    assert granted == REPORTS | POLICYREPORTS | {("hcpscan.io", "scansummaries")}
    assert all(sorted(rule["verbs"]) == ["create", "get", "patch"] for rule in role["rules"])
    server.state.allowed = readonly_grants() | granted
    code, _, err = publish(config, tmp_path / "r.yaml", "-n", "clusters")
    assert code in (0, 1), err
    assert "published 2 report object(s)" in err


def test_an_object_the_server_rejects_does_not_stop_the_others(standin, pki, tmp_path, example_bodies):
    server = publishing_standin(standin, example_bodies)
    validate = server.state.schemas[("openreports.io", "Report")]
    server.state.schemas[("openreports.io", "Report")] = lambda obj: (
        ["results: too many"] if obj["metadata"]["namespace"] == "clusters" else validate(obj))
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, _, err = publish(config, tmp_path / "r.yaml")
    assert code == 2
    assert "not published: Report clusters/hcpscan: 422 Unprocessable Entity" in err
    assert "1 of 9 report object(s) were not published" in err
    applied = [r for r in server.state.requests if r.method == "PATCH" and r.status in (200, 201)]
    assert len(applied) == 8


def test_another_managers_report_is_taken_over(standin, pki, tmp_path, example_bodies):
    server = publishing_standin(standin, example_bodies)
    server.state.store({"apiVersion": "openreports.io/v1alpha1", "kind": "ClusterReport",
                        "metadata": {"name": "hcpscan"}, "results": []}, "someone-else")
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, _, err = publish(config, tmp_path / "r.yaml")
    assert code == 1, err
    report = server.state.find("openreports.io", "ClusterReport", "", "hcpscan")
    assert report["metadata"]["managedFields"][0]["manager"] == "hcpscan" and report["results"]


def test_the_stand_in_refuses_apply_without_force_and_other_writes(standin, pki, kubectl, tmp_path,
                                                                    example_bodies):
    server = publishing_standin(standin, example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    assert publish(config, tmp_path / "r.yaml")[0] == 1
    manifest = tmp_path / "mine.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "openreports.io/v1alpha1", "kind": "ClusterReport",
                                        "metadata": {"name": "hcpscan"}, "source": "me"}))
    # --validate=false: kubectl would first download the OpenAPI document, which the
    # stand-in does not serve; the stand-in validates applied objects itself
    conflict = kubectl(config, "apply", "--server-side", "--validate=false", "-f", str(manifest))
    assert conflict.returncode != 0 and "conflict" in conflict.stderr.lower(), conflict.stderr
    assert [r.status for r in server.state.requests if r.method == "PATCH"][-1] == 409
    delete = kubectl(config, "delete", "clusterreports.openreports.io", "hcpscan", "--wait=false")
    assert delete.returncode != 0
    assert [r.status for r in server.state.requests if r.method == "DELETE"] == [405]
    assert APPLY_PATCH == "application/apply-patch+yaml"


def test_without_openreports_policyreports_go_and_the_summary_names_the_cluster(standin, pki, tmp_path,
                                                                               example_bodies):
    """Detected at run time: no OpenReports CRDs, but wgpolicyk8s.io is served."""
    server = standin(example_bodies, resources=[*catalog(), *POLICYREPORT_CRDS, *FLEET_MANAGED])
    server.state.appliable |= POLICYREPORTS | {("hcpscan.io", "scansummaries")}
    for kind in ("PolicyReport", "ClusterPolicyReport"):
        crd = policyreport_crd(kind)
        server.state.schemas[("wgpolicyk8s.io", kind)] = (
            lambda obj, crd=crd: errors_against_crd(obj, crd, "v1alpha2"))
    server.state.schemas[("hcpscan.io", "ScanSummary")] = validators()[("hcpscan.io", "ScanSummary")]
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, context="edge")
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--publish-reports",
                           "--cluster-name", "prod-east-1", "--format", "json=" + str(tmp_path / "r.json"))
    assert code == 1, err
    assert "has no OpenReports CRDs; publishing wgpolicyk8s.io/v1alpha2 PolicyReports instead" in err
    assert "and ScanSummary hcpscan for the fleet" in err
    reports = server.state.objects[("wgpolicyk8s.io", "PolicyReport")]
    assert reports and {o["metadata"]["labels"]["hcpscan.io/cluster"] for o in reports} == {"prod-east-1"}
    assert all(r["rule"] == r["policy"] and r["properties"]["cluster"] == "prod-east-1"
               for o in reports for r in o["results"])
    summary = server.state.find("hcpscan.io", "ScanSummary", "", "hcpscan")["status"]
    assert summary["cluster"] == "prod-east-1"
    assert summary["reportsPublishedTo"] == "wgpolicyk8s.io/v1alpha2"
    failing, _ = decode_rules(summary["failingRules"])
    assert set(failing) == {r["policy"] for o in reports for r in o["results"] if r["result"] == "fail"}
    assert sum(summary["findings"].values()) == sum(n for _, n in failing.values())


def test_the_name_claim_names_the_cluster_when_there_is_no_id_claim(standin, pki, tmp_path, example_bodies):
    claim = {"apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "ClusterClaim",
             "metadata": {"name": "name"}, "spec": {"value": "spoke-7"}}
    server = publishing_standin(standin, example_bodies)
    server.state.resources.extend(FLEET_MANAGED[:1])
    server.state.add(claim)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, _, err = publish(config, tmp_path / "r.yaml", "-n", "clusters")
    assert code in (0, 1), err
    assert "cluster name spoke-7 (ClusterClaim name)" in err
    report = server.state.find("openreports.io", "ClusterReport", "", "hcpscan")
    assert report["metadata"]["labels"]["hcpscan.io/cluster"] == "spoke-7"


def _fleet_member(standin, example_bodies, *objects):
    """The example served live, with the ScanSummary CRD and a klusterlet's kinds, no report CRDs."""
    server = standin([*example_bodies, *objects], resources=[*catalog(), *FLEET_MANAGED])
    server.state.appliable |= {("hcpscan.io", "scansummaries")}
    server.state.schemas[("hcpscan.io", "ScanSummary")] = validators()[("hcpscan.io", "ScanSummary")]
    return server


def test_the_klusterlet_names_the_cluster_as_the_hub_knows_it(standin, pki, tmp_path, example_bodies):
    """Plain OCM creates no ClusterClaim naming the cluster, and id.k8s.io may be a UUID
    (KEP-2149): the Klusterlet's spec.clusterName is the name the hub uses."""
    klusterlet = {"apiVersion": "operator.open-cluster-management.io/v1", "kind": "Klusterlet",
                  "metadata": {"name": "klusterlet"}, "spec": {"clusterName": "edge-4"}}
    uuid = {"apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "ClusterClaim",
            "metadata": {"name": "id.k8s.io"}, "spec": {"value": "721ab723-13bc-11e5-aec2-42010af0021e"}}
    server = _fleet_member(standin, example_bodies, klusterlet, uuid)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, context="in-cluster")
    code, _, err = publish(config, tmp_path / "r.yaml", "-n", "clusters")
    assert code in (0, 1), err
    assert "cluster name edge-4 (Klusterlet klusterlet)" in err
    assert server.state.find("hcpscan.io", "ScanSummary", "", "hcpscan")["status"]["cluster"] == "edge-4"


def test_without_a_name_the_summary_names_no_cluster_and_says_so(standin, pki, tmp_path, example_bodies):
    """Not the kubeconfig context (in a CronJob: "in-cluster"), which the hub would show as
    the name the cluster's reports carry."""
    server = _fleet_member(standin, example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, context="in-cluster")
    code, _, err = publish(config, tmp_path / "r.yaml", "-n", "clusters")
    assert code in (0, 1), err
    assert "warning: no cluster name" in err and "--cluster-name NAME" in err
    assert server.state.find("hcpscan.io", "ScanSummary", "", "hcpscan")["status"]["cluster"] == ""
