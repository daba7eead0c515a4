"""The whole fleet loop through stand-in API servers: hub applies the ManifestWorkReplicaSet,
each managed cluster runs the CronJob's command against its own API, the feedback lands on
the hub's ManifestWork status, and `hcpscan fleet` shows it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from hcpscan.fleet import contract
from hcpscan.sources.live import ClusterTarget, connect
from tests.live import ocm
from tests.live.apiserver import BUILTINS, DEPLOY_RESOURCES, FLEET_HUB, FLEET_MANAGED, REPORT_CRDS, catalog
from tests.live.conftest import HERE, write_kubeconfig
from tests.live.schemas import validators
from tests.live.test_cluster_scan import hcpscan

DEPLOY = HERE.parents[1] / "deploy"
OCM_FILES = (DEPLOY / "ocm" / "hcpscan-placement.yaml", DEPLOY / "ocm" / "hcpscan-manifestworkreplicaset.yaml")
CLAIM = "cluster.open-cluster-management.io/v1alpha1"


def _claim(name: str, value: str) -> dict[str, Any]:
    return {"apiVersion": CLAIM, "kind": "ClusterClaim", "metadata": {"name": name}, "spec": {"value": value}}


def carried_grants(hub, cluster: str) -> set[tuple[str, str, str]]:
    """(group, resource, verb) the ClusterRoles of the cluster's ManifestWork grant."""
    work = hub.state.find("work.open-cluster-management.io", "ManifestWork", cluster, "hcpscan")
    return {(g, r, v) for m in work["spec"]["workload"]["manifests"] if m["kind"] == "ClusterRole"
            for rule in m["rules"] for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


def ungranted(requests, grants: set[tuple[str, str, str]]) -> list[str]:
    """Resource requests (not discovery) no grant allows."""
    out = []
    for request in requests:
        parts = [p for p in request.path.split("/") if p]
        if parts[:1] not in (["api"], ["apis"]) or len(parts) < 3:
            continue  # /version, /api, /apis: discovery, allowed to every authenticated user
        rest = parts[2:] if parts[0] == "api" else parts[3:]
        group = "" if parts[0] == "api" else parts[1]
        if not rest:
            continue  # discovery: allowed to every authenticated user
        if rest[0] == "namespaces" and len(rest) >= 3:
            rest = rest[2:]
        resource = rest[0]
        verb = {"PATCH": "patch"}.get(request.method, "get" if len(rest) == 2 else "list")
        if (group, resource, verb) not in grants:
            out.append(f"{request.method} {request.path}")
    return out


def _appliable(server) -> None:
    server.state.appliable |= {(r.group, r.plural) for r in server.state.resources if "/" not in r.plural}
    server.state.schemas.update(validators())


@pytest.fixture
def fleet(standin, pki, tmp_path, example_bodies, monkeypatch):
    """A hub with three ManagedClusters; two of them (edge-1: the example, with the
    OpenReports CRDs; edge-2: an empty cluster with neither report API) run the loop."""
    claims_kind = [r for r in FLEET_MANAGED if r.kind == "ClusterClaim"]
    hub = standin([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
                   for n in ("edge-1", "edge-2", "edge-3", "lab-9")]
                  + [ocm.managed_cluster(n) for n in ("edge-1", "edge-2", "edge-3", "lab-9")],
                  resources=[*catalog(), *DEPLOY_RESOURCES, *FLEET_HUB])
    _appliable(hub)
    hub_config = write_kubeconfig(tmp_path / "hub.kubeconfig", hub.url, pki.ca_pem, context="hub")
    managed = {}
    bodies = {"edge-1": example_bodies, "edge-2": []}
    for name, objects in bodies.items():
        resources = [*catalog(), *DEPLOY_RESOURCES, *claims_kind]
        if name == "edge-1":
            resources += REPORT_CRDS
        else:
            resources = [*BUILTINS, *DEPLOY_RESOURCES, *claims_kind]
        server = standin([*objects, _claim("id.k8s.io", name)], resources=resources)
        _appliable(server)
        config = write_kubeconfig(tmp_path / f"{name}.kubeconfig", server.url, pki.ca_pem,
                                  context=f"{name}-sa")

        def run(args: list[str], config: Path = config) -> int:
            monkeypatch.setenv("KUBECONFIG", str(config))
            monkeypatch.chdir(tmp_path)
            code, _, err = hcpscan(*args)
            (tmp_path / f"{config.stem}.stderr").write_text(err)
            return code

        conn = connect(ClusterTarget(str(config)))
        managed[name] = ocm.ManagedCluster(name, ocm.Api(conn, server.state), run)
    hub_api = ocm.Api(connect(ClusterTarget(str(hub_config))), hub.state)
    return hub, hub_api, hub_config, managed


def test_the_whole_loop_from_hub_to_managed_clusters_and_back(fleet, kubectl, tmp_path):
    hub, hub_api, hub_config, managed = fleet
    now = dt.datetime.now(dt.UTC)
    # 1. the hub applies the Placement and the ManifestWorkReplicaSet (real kubectl)
    files = [arg for path in OCM_FILES for arg in ("-f", str(path))]
    done = kubectl(hub_config, "apply", "--server-side", "--validate=false", *files)
    assert done.returncode == 0, done.stderr
    # 2. OCM chooses edge-1, edge-2 and edge-3 (lab-9 is not placed) and makes their works
    ocm.place(hub_api, "hcpscan-fleet", "hcpscan-fleet", ["edge-1", "edge-2", "edge-3"])
    assert ocm.replicate(hub_api, "hcpscan-fleet", "hcpscan") == ["edge-1", "edge-2", "edge-3"]
    # 3. the work agents of edge-1 and edge-2 apply their works (edge-3's agent never does)
    for cluster in managed.values():
        ocm.agent_apply(hub_api, cluster, "hcpscan", now)
        assert cluster.api.state.find("batch", "CronJob", "hcpscan", "hcpscan") is not None
        assert cluster.api.state.find("apiextensions.k8s.io", "CustomResourceDefinition", "",
                                      contract.CRD_NAME) is not None
    # 4. each CronJob runs `hcpscan cluster --publish-reports ...` against its own cluster,
    # needing no permission beyond the two ClusterRoles the work carried
    for cluster in managed.values():
        before = len(cluster.api.state.requests)
        code = ocm.run_cronjob(cluster, "hcpscan", "hcpscan", now)
        assert code == 0, (tmp_path / f"{cluster.name}.stderr").read_text()
        made = cluster.api.state.requests[before + 1:-1]  # not the CronJob controller's GET, PATCH
        assert made and {r.status for r in made} <= {200, 201, 404}  # 404: what is not served
        assert all(r.method == "GET" for r in made if r.status == 404)
        assert any(r.method == "PATCH" and "/scansummaries/" in r.path for r in made)
        assert not ungranted(made, carried_grants(hub, cluster.name))
        assert ungranted(made, carried_grants(hub, cluster.name) - {("hcpscan.io", "scansummaries", "patch")})
    # 5. the agents feed the CronJob's and the ScanSummary's status back to the hub
    for cluster in managed.values():
        ocm.agent_feedback(hub_api, cluster, "hcpscan")

    edge1 = managed["edge-1"].api.state
    summary = edge1.find(contract.GROUP, contract.KIND, "", contract.NAME)["status"]
    assert summary["cluster"] == "edge-1" and summary["reportsPublishedTo"] == "openreports.io/v1alpha1"
    report = edge1.find("openreports.io", "ClusterReport", "", "hcpscan")
    assert report["metadata"]["labels"]["hcpscan.io/cluster"] == "edge-1"
    namespaced = [o for o in edge1.objects[("openreports.io", "Report")]]
    results = [r for o in namespaced for r in o["results"]]
    assert results and all(r["rule"] == r["policy"] and r["properties"]["cluster"] == "edge-1"
                           for r in results)
    for result in results:  # the uid is the live object's own
        (ref,) = result["resources"]
        group = ref["apiVersion"].rpartition("/")[0] if "/" in ref["apiVersion"] else ""
        live = edge1.find(group, ref["kind"], ref.get("namespace", ""), ref["name"])
        assert ref["uid"] == live["metadata"]["uid"]
    published = [*edge1.objects[("openreports.io", "ClusterReport")], *namespaced]
    assert summary["reportDigest"].startswith("sha256:")
    edge2 = managed["edge-2"].api.state.find(contract.GROUP, contract.KIND, "", contract.NAME)["status"]
    assert edge2["reportsPublishedTo"] == "none"  # neither report API: the summary still went

    work = hub.state.find("work.open-cluster-management.io", "ManifestWork", "edge-1", "hcpscan")
    values = {v["name"]: v["fieldValue"] for m in work["status"]["resourceStatus"]["manifests"]
              for v in (m.get("statusFeedback") or {}).get("values", [])}
    assert values["high"] == {"type": "Integer", "integer": summary["findings"]["high"]}
    assert values["lastSuccessfulTime"]["string"] == ocm.stamp(now)

    # 6. `hcpscan fleet` on the hub
    out = tmp_path / "fleet.json"
    code, _, err = hcpscan("fleet", "--kubeconfig", str(hub_config), "--format", "json", "-o", str(out),
                           "--fail-on", "critical")
    fleet = json.loads(out.read_text())
    rows = {row["name"]: row for row in fleet["clusters"]}
    assert {n: r["state"] for n, r in rows.items()} == {
        "edge-1": "ok", "edge-2": "ok", "edge-3": "not-applied", "lab-9": "not-placed"}
    assert rows["edge-1"]["findings"] == summary["findings"]
    failing = {f"{r['policy']}": r["severity"] for o in published for r in o["results"]
               if r["result"] == "fail"}
    assert set(rows["edge-1"]["rules"]) == set(failing)
    assert rows["edge-1"]["reportDigest"] == summary["reportDigest"]
    assert rows["edge-1"]["reportedAs"] == "edge-1" and not fleet["notes"]
    assert rows["edge-1"]["lastScan"] is not None and rows["edge-3"]["lastScan"] is None
    expected = 1 if summary["findings"]["critical"] else 0
    assert code == expected, err
    code, _, err = hcpscan("fleet", "--kubeconfig", str(hub_config), "--fail-on", "info",
                           "--format", "table")
    assert code == 1 and "1 cluster(s) with findings at or above info" in err
    code, _, err = hcpscan("fleet", "--kubeconfig", str(hub_config), "--fail-on", "critical",
                           "--fail-on-incomplete", "--format", "markdown")
    assert code == (1 if expected else 3), err  # findings decide first, then the incomplete scans
    assert "1 placed cluster(s) without a current scan: edge-3 (not-applied)" in err


def test_the_fleet_matrix_reads_yaml_the_kubectl_way(fleet, kubectl):
    """kubectl reads the same ManifestWork status hcpscan fleet reads (no private shape)."""
    hub, hub_api, hub_config, managed = fleet
    now = dt.datetime.now(dt.UTC)
    kubectl(hub_config, "apply", "--server-side", "--validate=false",
            *[arg for path in OCM_FILES for arg in ("-f", str(path))])
    ocm.place(hub_api, "hcpscan-fleet", "hcpscan-fleet", ["edge-2"])
    ocm.replicate(hub_api, "hcpscan-fleet", "hcpscan")
    cluster = managed["edge-2"]
    ocm.agent_apply(hub_api, cluster, "hcpscan", now)
    ocm.run_cronjob(cluster, "hcpscan", "hcpscan", now)
    ocm.agent_feedback(hub_api, cluster, "hcpscan")
    got = kubectl(hub_config, "get", "manifestworks", "-n", "edge-2", "hcpscan", "-o", "yaml")
    assert got.returncode == 0, got.stderr
    status = yaml.safe_load(got.stdout)["status"]
    names = {v["name"] for m in status["resourceStatus"]["manifests"]
             for v in (m.get("statusFeedback") or {}).get("values", [])}
    assert {"lastScheduleTime", "lastSuccessfulTime", "scanTime", "critical", "reportDigest"} <= names
