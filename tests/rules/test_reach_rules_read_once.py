"""What the reachability rules answer once instead of per question gives what asking each
time gives: every HCP rule's fixture folders scanned with the family's shortcuts (answers
kept per workload, side, set or field; the egress through one ClusterIP Service answered
without the search; the atoms of a range found by address; a pod spec's ports read once;
workloads no way in leads to passed over before their ports)
and with each undone give the same findings, places, evidence, results and exposures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hcpscan.analysis.reachability import endpoints, paths
from hcpscan.analysis.reachability.evaluation import tiered_connections
from hcpscan.analysis.reachability.index import ClusterView, ReachabilityIndex
from hcpscan.analysis.reachability.queries import ReachabilityQueries, _rule_selects
from hcpscan.inventory.locator import Locator
from hcpscan.model import ipspace
from hcpscan.model.ports import ConnectionSet, normalise_protocol, union_all
from hcpscan.rules.templates import reach
from tests.conftest import FIXTURES
from tests.rules.harness import scan

RULES = Path(__file__).resolve().parents[2] / "rules"
FAMILY = sorted(p.name for p in (FIXTURES / "rules").glob("HCP*") if p.is_dir()
                and ("template: reach" in (RULES / f"{p.name}.yaml").read_text()
                     or "template: required-flow" in (RULES / f"{p.name}.yaml").read_text()))
FOLDERS = sorted(d for rule in FAMILY for d in (FIXTURES / "rules" / rule).iterdir() if d.is_dir())


def _outcome(folder: Path) -> tuple[Any, ...]:
    report = scan([folder], FAMILY)
    return (sorted((f.rule_id, f.location.path, f.location.line, f.location.column, f.message,
                    tuple(f.evidence)) for f in report.findings),
            [r.to_json() for r in report.results], repr(report.exposures))


def _undo_shortcuts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every shortcut of the family replaced by the plain computation it stands for."""
    monkeypatch.setattr(ConnectionSet, "allows",
                        lambda self, protocol, port: port in self.ports(normalise_protocol(protocol)))
    monkeypatch.setattr(paths, "_through_one_node", lambda origin, target, hops: None)
    monkeypatch.setattr(endpoints._PortsOf, "__call__", lambda self, spec: endpoints.container_ports(spec))
    monkeypatch.setattr(Locator, "field", Locator._field)
    monkeypatch.setattr(ipspace, "_cidrs_of", ipspace._cidrs_of.__wrapped__)
    monkeypatch.setattr(ipspace, "_networks_of", ipspace._networks_of.__wrapped__)
    monkeypatch.setattr(ipspace, "_from_cidr", ipspace._from_cidr.__wrapped__)

    def has_way_in(self: ReachabilityIndex, target: str) -> bool:
        view, _workload, indices = self.resolve(target)
        return any(view.paths.get(i) for i in indices)

    def select(self: ReachabilityIndex, cluster: str, namespace: str,
               labels: dict[str, str]) -> list[Any]:
        return sorted({w for k in self.namespace_classes(cluster, namespace)
                       if all(k.labels.get(n) == v for n, v in labels.items())
                       for w in k.workloads}, key=lambda w: (w.name, w.kind))

    def overlapping(self: ClusterView, space: ipspace.IPSpace) -> list[int]:
        return [k for k, atom in enumerate(self.atoms) if space.overlaps(atom)]

    def to_pods(self: ReachabilityQueries, side: Any, peers: Any, cluster: str) -> ConnectionSet:
        return union_all(tiered_connections([r for r in side.rules if _rule_selects(r, p)],
                                            klass, side.np_isolated)
                         for p in peers for klass in self._peer_targets(cluster, p))

    def protocols_open(self: ReachabilityQueries, source: str, ports: tuple[int, ...],
                       protocols: tuple[str, ...]) -> tuple[str, ...]:
        opened = self.egress_rules_open(source)[1]
        return tuple(p for p in protocols if any(opened.allows(p, port) for port in ports))

    monkeypatch.setattr(ReachabilityIndex, "has_way_in", has_way_in)
    monkeypatch.setattr(reach, "_no_way_in", lambda graph, scope, workloads: False)
    monkeypatch.setattr(ReachabilityIndex, "_select_workloads", select)
    monkeypatch.setattr(ClusterView, "atoms_overlapping", overlapping)
    monkeypatch.setattr(ReachabilityQueries, "_side_to_pods", to_pods)
    monkeypatch.setattr(ReachabilityQueries, "protocols_open", protocols_open)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda d: f"{d.parent.name}/{d.name}")
def test_the_family_gives_what_it_gives_with_its_shortcuts_undone(
        folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    quick = _outcome(folder)
    _undo_shortcuts(monkeypatch)
    assert _outcome(folder) == quick
    if folder.name == "fail":
        assert quick[0], f"{folder.parent.name}'s failing fixtures give findings"


def test_the_family_and_its_folders_are_found() -> None:
    assert {"HCP001", "HCP004", "HCP008", "HCP009"} <= set(FAMILY)
    assert len(FOLDERS) >= 2 * len(FAMILY)
