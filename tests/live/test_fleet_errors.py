"""`hcpscan fleet` against hubs it cannot read: a clear message, exit 2, no traceback."""

from __future__ import annotations

import datetime as dt
import json

import yaml

from tests.live import ocm
from tests.live.apiserver import BUILTINS, DEPLOY_RESOURCES, FLEET_HUB, catalog
from tests.live.conftest import HERE, write_kubeconfig
from tests.live.test_cluster_scan import hcpscan


def test_a_cluster_that_is_no_hub(standin, pki, tmp_path):
    server = standin([], resources=list(BUILTINS))
    config = write_kubeconfig(tmp_path / "k", server.url, pki.ca_pem, context="plain")
    code, out, err = hcpscan("fleet", "--kubeconfig", str(config))
    assert code == 2 and not out
    assert "context plain serves no ManagedClusters" in err and "not an Open Cluster Management hub" in err
    assert "Traceback" not in err


def test_forbidden_names_the_role_and_missing_decisions_are_a_note(standin, pki, tmp_path):
    server = standin([ocm.managed_cluster("edge-1")], resources=[*catalog(), *DEPLOY_RESOURCES, *FLEET_HUB])
    server.state.allowed = {("cluster.open-cluster-management.io", "managedclusters")}
    config = write_kubeconfig(tmp_path / "k", server.url, pki.ca_pem, context="hub")
    code, _, err = hcpscan("fleet", "--kubeconfig", str(config))
    assert code == 2
    assert "cannot list ManifestWorks on context hub: 403" in err
    assert "deploy/ocm/hcpscan-fleet-reader-rbac.yaml" in err
    server.state.allowed |= {("work.open-cluster-management.io", "manifestworks")}
    code, out, err = hcpscan("fleet", "--kubeconfig", str(config))
    assert code == 0, err
    assert "note: placement hcpscan-fleet/hcpscan-fleet: PlacementDecisions not read (403" in out
    assert "edge-1" in out and "not-placed" in out


def test_bad_arguments_are_usage_errors(standin, pki, tmp_path):
    config = tmp_path / "missing"
    for args, message in [(["--placement", "nope"], "is not NAMESPACE/NAME"),
                          (["--stale-after", "0"], "--stale-after must be more than 0 hours"),
                          (["--stale-after", "inf"], "--stale-after must be more than 0 hours"),
                          (["--stale-after", "1e300"], "--stale-after must be more than 0 hours"),
                          (["--work-name", " "], "--work-name needs a name"),
                          (["--placement", "ns/a/b"], "is not NAMESPACE/NAME")]:
        code, _, err = hcpscan("fleet", "--kubeconfig", str(config), *args)
        assert code == 2 and message in err and "internal error" not in err, err


def test_the_fleet_reader_role_is_enough(standin, pki, tmp_path):
    role = yaml.safe_load((HERE.parents[1] / "deploy" / "ocm" / "hcpscan-fleet-reader-rbac.yaml").read_text())
    assert all(set(rule["verbs"]) == {"get", "list"} for rule in role["rules"])
    server = standin([ocm.managed_cluster("edge-1")], resources=[*catalog(), *DEPLOY_RESOURCES, *FLEET_HUB])
    server.state.allowed = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    config = write_kubeconfig(tmp_path / "k", server.url, pki.ca_pem, context="hub")
    code, out, err = hcpscan("fleet", "--kubeconfig", str(config))
    assert code == 0, err
    assert "403" not in out and {r.status for r in server.state.requests} == {200}


def test_a_cluster_whose_reports_use_another_name_is_a_note(standin, pki, tmp_path):
    now = dt.datetime.now(dt.UTC)
    work = ocm.simulated_work("edge-1", {}, {"cluster": "prod-east-1", "scanTime": ocm.stamp(now)}, None, now)
    server = standin([ocm.managed_cluster("edge-1"), work], resources=[*catalog(), *DEPLOY_RESOURCES, *FLEET_HUB])
    config = write_kubeconfig(tmp_path / "k", server.url, pki.ca_pem, context="hub")
    code, out, err = hcpscan("fleet", "--kubeconfig", str(config), "--placement", "none")
    assert code == 0, err
    assert "note: edge-1: its reports name the cluster 'prod-east-1'" in out


def test_several_formats_at_once_and_exit_zero(standin, pki, tmp_path):
    now = dt.datetime.now(dt.UTC)
    work = ocm.simulated_work("edge-1", {}, {"scanTime": ocm.stamp(now), "critical": 1,
                                             "failingRules": "OCM002=critical:1"}, None, now)
    server = standin([ocm.managed_cluster("edge-1"), work], resources=[*catalog(), *DEPLOY_RESOURCES, *FLEET_HUB])
    config = write_kubeconfig(tmp_path / "k", server.url, pki.ca_pem, context="hub")
    code, out, err = hcpscan("fleet", "--kubeconfig", str(config), "--format", "table",
                             "--format", f"html={tmp_path / 'f.html'}", "--format", "json", "-o",
                             str(tmp_path / "f.json"))
    assert code == 2 and "more than one --format without a file" in err
    code, out, err = hcpscan("fleet", "--kubeconfig", str(config), "--format", "table",
                             "--format", f"html={tmp_path / 'f.html'}", "--format",
                             f"markdown={tmp_path / 'f.md'}")
    assert code == 1 and "OCM002" in out
    assert "<td>C1</td>" in (tmp_path / "f.html").read_text()
    assert "| edge-1 | C1 |" in (tmp_path / "f.md").read_text()
    code, _, err = hcpscan("fleet", "--kubeconfig", str(config), "--exit-zero", "--format", "json")
    assert code == 0 and "1 cluster(s) with findings at or above high" in err


def test_works_with_generated_names_are_found_by_the_replica_sets_label(standin, pki, tmp_path):
    """OCM 1.3+ names a ManifestWorkReplicaSet's works hcpscan<random> (generateName, ocm
    #1421); a ManifestWork applied by hand (no replica set feature) is named hcpscan."""
    now = dt.datetime.now(dt.UTC)
    summary = {"cluster": "edge-1", "scanTime": ocm.stamp(now), "high": 0}
    generated = ocm.simulated_work("edge-1", {}, summary, None, now, ocm.generated_name(1))
    by_hand = ocm.simulated_work("edge-2", {}, dict(summary, cluster="edge-2"), None, now)
    by_hand["metadata"]["labels"] = {}
    other_set = ocm.simulated_work("edge-3", {}, dict(summary, cluster="edge-3"), None, now, "hcpscanzzzzz")
    other_set["metadata"]["labels"] = {ocm.MWRS_LABEL: "elsewhere.hcpscan"}
    server = standin([*(ocm.managed_cluster(n) for n in ("edge-1", "edge-2", "edge-3")),
                      generated, by_hand, other_set],
                     resources=[*catalog(), *DEPLOY_RESOURCES, *FLEET_HUB])
    config = write_kubeconfig(tmp_path / "k", server.url, pki.ca_pem, context="hub")
    code, out, err = hcpscan("fleet", "--kubeconfig", str(config), "--placement", "none", "--format", "json")
    assert code == 0, err
    states = {row["name"]: row["state"] for row in json.loads(out)["clusters"]}
    assert states == {"edge-1": "ok", "edge-2": "ok", "edge-3": "not-placed"}
    code, out, err = hcpscan("fleet", "--kubeconfig", str(config), "--placement", "none", "--format", "json",
                             "--replicaset", "none")
    states = {row["name"]: row["state"] for row in json.loads(out)["clusters"]}
    assert states == {"edge-1": "not-placed", "edge-2": "ok", "edge-3": "not-placed"}
    code, _, err = hcpscan("fleet", "--kubeconfig", str(config), "--replicaset", "x")
    assert code == 2 and "--replicaset 'x' is not NAMESPACE/NAME" in err


def test_a_hub_whose_paging_goes_round_in_a_circle(standin, pki, tmp_path):
    """The lister's cycle check (issue 22) ends a list with its own exception: the fleet
    matrix must say so as for any unreadable list, not stop with an internal error."""
    server = standin([ocm.managed_cluster("edge-1")], resources=[*catalog(), *DEPLOY_RESOURCES, *FLEET_HUB])
    server.state.misbehave["/apis/cluster.open-cluster-management.io/v1/managedclusters"] = "cyclic-continue"
    config = write_kubeconfig(tmp_path / "k", server.url, pki.ca_pem, context="hub")
    code, out, err = hcpscan("fleet", "--kubeconfig", str(config), "--page-size", "1")
    assert code == 2 and "internal error" not in err, err
    assert "cannot list ManagedClusters on context hub" in err and "circle" in err


def test_fed_back_passwords_are_masked_in_every_format(standin, pki, tmp_path):
    """`hcpscan fleet` printed what a cluster fed back (failing rules, messages) as it
    came, cut to 200 characters, which could split a URL so no masking recognised it."""
    now = dt.datetime.now(dt.UTC)
    url = "socks5h://jdoe@corp.example.com:Zq9;http://:Kx7@proxy.corp.example.com:1080"
    feedback = {"scanTime": ocm.stamp(now), "high": 1, "cluster": "c" * 130 + " " + url,
                "failingRules": "HCP001=high:1," + "x" * 170 + url,
                "notEvaluableRules": "q" * 195 + url}
    work = ocm.simulated_work("edge-1", {}, feedback, None, now)
    server = standin([ocm.managed_cluster("edge-1"), work], resources=[*catalog(), *DEPLOY_RESOURCES, *FLEET_HUB])
    config = write_kubeconfig(tmp_path / "k", server.url, pki.ca_pem, context="hub")
    for fmt in ("table", "json", "markdown", "html"):
        code, out, err = hcpscan("fleet", "--kubeconfig", str(config), "--placement", "none",
                                 "--format", fmt, "--exit-zero")
        assert code == 0, err
        assert "****@proxy.corp.example.com:1080" in out, (fmt, out)  # the note names it
        assert "Zq9" not in out + err and "Kx7" not in out + err, (fmt, out)
