"""The report's per-HostedCluster ways in (what the HTML picture draws), from the HCP fixtures."""

from __future__ import annotations

from pathlib import Path

from hcpscan.rules.config import ScanConfig
from tests.conftest import FIXTURES
from tests.rules.harness import scan

HCP001 = FIXTURES / "rules" / "HCP001"


def _proxy_nodeport(report):
    (exposure,) = [e for e in report.exposures if e.hosted_cluster.kind == "HostedCluster"]
    return exposure, next(w for w in exposure.ways_in
                          if w.layer == "NodePort" and w.via.name == "ignition-server-proxy")


def test_nodeport_open_to_everyone_is_beyond_the_workers_with_its_ports_and_file():
    exposure, way = _proxy_nodeport(scan([HCP001 / "fail"], ["HCP001"]))
    assert (exposure.hosted_cluster.namespace, exposure.hosted_cluster.name) == ("clusters", "edge")
    assert exposure.control_plane_namespace == "clusters-edge"
    assert exposure.workers == ("10.10.0.0/24",)
    assert (way.entry_port, way.pod_port, way.protocol) == (30443, 8443, "TCP")
    assert way.targets == ("clusters-edge/ignition-server-proxy[Deployment]",)
    assert way.admitted == "any address"
    assert way.beyond_workers == "any address outside 10.10.0.0/24"
    text = Path(way.location.path).read_text().splitlines()
    assert "nodePort: 30443" in "\n".join(text[way.location.line - 1:way.location.line + 4])


def test_a_perimeter_admitting_only_the_workers_leaves_nothing_beyond_them():
    config = ScanConfig(firewall=HCP001 / "perimeter-workers-only.yaml")
    _, way = _proxy_nodeport(scan([HCP001 / "fail"], ["HCP001"], config))
    assert (way.admitted, way.beyond_workers) == ("10.10.0.0/24", "")


def test_a_way_networkpolicy_closes_says_so(tmp_path: Path):
    text = (HCP001 / "fail" / "hcp-namespace.yaml").read_text()
    (tmp_path / "ns.yaml").write_text(text.replace("ports: [{port: 8443, protocol: TCP}]",
                                                   "ports: [{port: 8444, protocol: TCP}]"))
    (tmp_path / "hc.yaml").write_text((HCP001 / "fail" / "hostedcluster.yaml").read_text())
    _, way = _proxy_nodeport(scan([tmp_path], ["HCP001"]))
    assert (way.admitted, way.beyond_workers) == ("", "")
    assert way.blocked_by.startswith("network-policy: ")


def test_no_picture_when_no_rule_built_the_reachability_graph():
    assert scan([HCP001 / "fail"], ["PRX008"]).exposures == []
