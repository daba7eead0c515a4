"""Evidence names the file and line that decided, found only when the evidence is shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from hcpscan.analysis.reachability.answers import NETWORK_POLICY, SERVICE, Evidence, Place
from hcpscan.analysis.reachability.graph import build_reachability
from hcpscan.inventory import Inventory
from hcpscan.sources.loader import load_paths

from .conftest import IGNITION_NODEPORT

MANIFESTS = IGNITION_NODEPORT


class Lookups:
    def __init__(self, found: tuple[str, int] = ("hcp.yaml", 7)) -> None:
        self.found, self.count = found, 0

    def __call__(self) -> tuple[str, int]:
        self.count += 1
        return self.found


def test_a_place_looks_up_its_file_and_line_once_and_only_when_read() -> None:
    lookups = Lookups()
    place = Place(find=lookups)
    evidence = Evidence(SERVICE, True, "NodePort Service", place)
    assert lookups.count == 0
    assert str(evidence) == "service allows: NodePort Service (hcp.yaml:7)"
    assert (evidence.path, evidence.line) == ("hcp.yaml", 7)
    assert lookups.count == 1


def test_evidence_hashes_without_looking_up_its_place() -> None:
    lookups = Lookups()
    evidence = Evidence(NETWORK_POLICY, True, "allowed by rule #1", Place(find=lookups))
    assert len({evidence, evidence}) == 1
    assert lookups.count == 0


def test_evidence_is_equal_when_file_and_line_are() -> None:
    known = Evidence(SERVICE, True, "x", Place("hcp.yaml", 7))
    assert Evidence(SERVICE, True, "x", Place(find=Lookups())) == known
    assert Evidence(SERVICE, True, "x", Place(find=Lookups(("hcp.yaml", 8)))) != known
    assert Evidence(SERVICE, True, "x") != known
    assert hash(Evidence(SERVICE, True, "x", Place(find=Lookups()))) == hash(known)


@pytest.fixture
def inventory(tmp_path: Path) -> Inventory:
    (tmp_path / "hcp.yaml").write_text(MANIFESTS, encoding="utf-8")
    result = load_paths([str(tmp_path / "hcp.yaml")])
    return Inventory(result.objects, result.diagnostics, result.skipped)


def test_queries_locate_only_the_evidence_that_is_shown(inventory: Inventory,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    located: list[tuple[str, object]] = []
    locate = inventory.locate

    def counting(obj, path=()):  # type: ignore[no-untyped-def]
        located.append((obj.kind, path))
        return locate(obj, path)

    monkeypatch.setattr(inventory, "locate", counting)
    graph = build_reachability(inventory)
    reach = graph.can_reach("203.0.113.9", "clusters-edge/ignition-server", 9090)
    assert reach.allowed and located == []
    shown = [str(e) for p in reach.paths for e in p.evidence]
    assert "service allows: Service clusters-edge/ignition-server type NodePort: every node " \
           "address, port 30090 -> pod port 9090 (" in shown[-2]
    assert shown[-2].endswith("hcp.yaml:16)")  # spec.ports[0]
    assert shown[-1].endswith("hcp.yaml:24)")  # spec.ingress[0]
    assert sorted(kind for kind, _ in located) == ["NetworkPolicy", "Service"]
