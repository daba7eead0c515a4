"""A live scan of a cluster that serves HostedControlPlanes and no HostedCluster the user
may list (a namespace-scoped role on the HCP namespace, a cluster whose HostedClusters live
on another management cluster): the HostedControlPlane stands in, as it does offline."""

from __future__ import annotations

import json

from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES
from tests.live.conftest import write_kubeconfig
from tests.live.test_cluster_scan import hcpscan

DUMP = FIXTURES / "rules" / "HCP001" / "fail" / "hcp-namespace-only"


def test_a_served_hosted_control_plane_is_judged_live(standin, pki, tmp_path):
    result = load_paths([str(DUMP)])
    bodies = [obj.body for obj in result.objects]
    assert "HostedControlPlane" in {b["kind"] for b in bodies}
    assert "HostedCluster" not in {b["kind"] for b in bodies}
    server = standin(bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, context="mgmt")
    report = tmp_path / "live.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--select",
                           "HCP001", "--format", f"json={report}")
    assert code == 1, err
    live = json.loads(report.read_text())
    (finding,) = live["findings"]
    assert (finding["object"]["kind"], finding["object"]["namespace"],
            finding["object"]["name"]) == ("HostedControlPlane", "clusters-edge-b", "edge-b")
    assert finding["field"] == "spec.services[1].servicePublishingStrategy"
