"""`hcpscan fleet` against a simulated fleet of 1,050 managed clusters on the stand-in hub.

Correctness at scale (every cluster's state and counts, the same three lists whatever
the size, paged); speed is measured by bench/fleet.py, never asserted here.
"""

from __future__ import annotations

import datetime as dt
import json
import math

from tests.live import ocm
from tests.live.apiserver import DEPLOY_RESOURCES, FLEET_HUB, catalog
from tests.live.conftest import HERE, write_kubeconfig
from tests.live.test_cluster_scan import hcpscan

MWRS = HERE.parents[1] / "deploy" / "ocm" / "hcpscan-manifestworkreplicaset.yaml"
PLAN = ocm.FleetPlan(size=1050, stale=40, failed=30, never_reported=20, no_work=10, not_placed=50)


def test_a_thousand_cluster_fleet(standin, pki, tmp_path):
    now = dt.datetime.now(dt.UTC)
    objects, expected = ocm.simulated_fleet(PLAN, ocm.load_template(MWRS), now)
    server = standin(objects, resources=[*catalog(), *DEPLOY_RESOURCES, *FLEET_HUB])
    config = write_kubeconfig(tmp_path / "hub.kubeconfig", server.url, pki.ca_pem, context="hub")
    out = tmp_path / "fleet.json"
    code, _, err = hcpscan("fleet", "--kubeconfig", str(config), "--format", "json", "-o", str(out),
                           "--fail-on", "critical")
    assert code == 1, err  # clusters with OCM002 (critical) findings
    fleet = json.loads(out.read_text())
    rows = {row["name"]: row for row in fleet["clusters"]}
    assert len(rows) == PLAN.size
    assert {n: r["state"] for n, r in rows.items()} == {n: e["state"] for n, e in expected.items()}
    for name, want in expected.items():
        if want["findings"]:
            assert rows[name]["findings"] == want["findings"], name
            assert {r: (v["severity"], v["count"]) for r, v in rows[name]["rules"].items()} == want["rules"]
    assert fleet["states"] == {"ok": 900, "stale": 40, "failed": 30, "never-reported": 20,
                               "not-applied": 0, "no-work": 10, "not-placed": 50}
    # four lists, paged by 500, whatever the size: no request per cluster; half the works
    # have OCM 1.3+'s generated names, found by the replica set's label
    gets = [r for r in server.state.requests if r.method == "GET" and r.path.startswith("/apis/")]
    works = 1050 - 60
    named = sum(1 for w in server.state.objects[("work.open-cluster-management.io", "ManifestWork")]
                if w["metadata"]["name"] == "hcpscan")
    assert 0 < named < works
    assert len(gets) == math.ceil(1050 / 500) + math.ceil(works / 500) + math.ceil(named / 500) + 1
    assert {(r.query.get("fieldSelector"), r.query.get("labelSelector")) for r in gets
            if "manifestworks" in r.path} == {
        ("metadata.name=hcpscan", None),
        (None, "work.open-cluster-management.io/manifestworkreplicaset=hcpscan-fleet.hcpscan")}
    assert "hcpscan: 100 placed cluster(s) without a current scan: cluster-0000 (stale)" in err
    critical = sum(1 for e in expected.values() if e["findings"].get("critical"))
    assert f"hcpscan: {critical} cluster(s) with findings at or above critical" in err
    # without findings at the threshold, incomplete scans decide the exit code
    server.state.objects[("work.open-cluster-management.io", "ManifestWork")] = [
        w for w in server.state.objects[("work.open-cluster-management.io", "ManifestWork")]
        if not expected[w["metadata"]["namespace"]]["findings"].get("critical")]
    code, _, err = hcpscan("fleet", "--kubeconfig", str(config), "--fail-on", "critical",
                           "--format", "table", "--fail-on-incomplete")
    assert code == 3, err
    now_without = sum(1 for e in expected.values() if e["findings"].get("critical") and e["state"] == "ok")
    assert f"hcpscan: {100 + now_without} placed cluster(s) without a current scan" in err
