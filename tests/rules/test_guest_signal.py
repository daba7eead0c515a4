"""HCP010 knows a hosted cluster's guest without its Infrastructure (NETOBSERV-2508): the
``default/kubernetes`` endpoints as HyperShift's hosted-cluster-config-operator writes them
(the node-local API server proxy's advertise address alone) are the one other signal, and
the answer is given once per cluster."""

from __future__ import annotations

from pathlib import Path

from hcpscan.findings.model import Status
from tests.conftest import FIXTURES
from tests.rules.harness import expected_markers, scan

FAIL = FIXTURES / "required-flows" / "guest-endpoints-fail"
PASS = FIXTURES / "required-flows" / "guest-endpoints-pass"
TEXT = (FAIL / "default-and-netobserv.yaml").read_text()


def _hcp010(path: Path):
    report = scan([path], ["HCP010"])
    return report.results[0], [f for f in report.findings if f.rule_id == "HCP010"]


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "guest.yaml").write_text(text)
    return tmp_path / "in"


def test_the_node_local_endpoints_make_the_cluster_a_guest() -> None:
    result, found = _hcp010(FAIL)
    assert result.status is Status.FAIL
    assert {(f.location.path, f.location.line) for f in found} == expected_markers(FAIL, "HCP010")
    (finding,) = found
    assert finding.object.name == "flowlogs-pipeline"
    assert any("default/kubernetes endpoints point at 172.20.0.1" in e for e in finding.evidence)


def test_the_fixed_policy_passes() -> None:
    result, found = _hcp010(PASS)
    assert (result.status, found) == (Status.PASS, [])


def test_an_endpoint_slice_alone_says_it_too(tmp_path: Path) -> None:
    start = TEXT.index("- apiVersion: v1\n  kind: Endpoints")
    end = TEXT.index("- addressType: IPv4")
    result, found = _hcp010(_write(tmp_path, TEXT[:start] + TEXT[end:]))
    assert result.status is Status.FAIL and len(found) == 1


def test_a_standalone_clusters_endpoints_are_its_control_plane_nodes(tmp_path: Path) -> None:
    masters = TEXT.replace("    - ip: 172.20.0.1\n", "    - ip: 10.0.0.10\n    - ip: 10.0.0.11\n"
                           "    - ip: 10.0.0.12\n").replace("    - 172.20.0.1\n", "    - 10.0.0.10\n")
    result, found = _hcp010(_write(tmp_path, masters))
    assert (result.status, found) == (Status.NOT_APPLICABLE, [])


def test_an_infrastructure_that_says_standalone_wins(tmp_path: Path) -> None:
    infra = ("apiVersion: config.openshift.io/v1\nkind: Infrastructure\nmetadata:\n"
             "  name: cluster\nstatus:\n  controlPlaneTopology: HighlyAvailable\n"
             "  infrastructureTopology: HighlyAvailable\n  platform: None\n---\n")
    result, found = _hcp010(_write(tmp_path, infra + TEXT))
    assert (result.status, found) == (Status.NOT_APPLICABLE, [])
    external = infra.replace("controlPlaneTopology: HighlyAvailable",
                             "controlPlaneTopology: External")
    (tmp_path / "in" / "guest.yaml").write_text(external + TEXT)
    result, found = _hcp010(tmp_path / "in")
    assert result.status is Status.FAIL and len(found) == 1  # once, at the Infrastructure
