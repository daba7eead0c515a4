"""A hop made from evidence keeps the evidence's place and finds it only when its path or
line is read (the required flows record tens of thousands of hops; findings show the
places of a few): such a hop is the hop made with the place found, in every way a
caller can tell."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from hcpscan.analysis.reachability.answers import Evidence, Place
from hcpscan.analysis.reachability.paths import Hop, PathGraph, _hop


def _placed(path: str | None, line: int | None) -> tuple[Place, list[int]]:
    asked: list[int] = []

    def find() -> tuple[str | None, int | None]:
        asked.append(1)
        return path, line

    return Place(find=find), asked


@pytest.mark.parametrize(("path", "line"), [("np.yaml", 7), ("np.yaml", None), (None, None)])
def test_a_hop_from_evidence_is_the_hop_with_its_place_found(path, line) -> None:
    at, asked = _placed(path, line)
    evidence = Evidence("network-policy", False, "ingress of a is isolated by ns/deny", at)
    lazy = _hop("range 10.0.0.0/16", "ns/a[Deployment]", evidence)
    assert asked == []  # made without looking
    eager = Hop("range 10.0.0.0/16", "ns/a[Deployment]", "network-policy", False,
                "ingress of a is isolated by ns/deny", path, line)
    assert (lazy.path, lazy.line) == (path, line)
    assert asked == [1]  # looked once, kept by the place
    assert lazy == eager and hash(lazy) == hash(eager) and {lazy: 1}[eager] == 1
    assert str(lazy) == str(eager) and repr(lazy) == repr(eager)
    assert lazy.to_json() == eager.to_json() and lazy.where == eager.where
    assert pickle.loads(pickle.dumps(lazy)) == eager
    assert lazy != Hop(*eager._key()[:5], "other.yaml", line)
    assert asked == [1]


def test_a_hop_stays_frozen() -> None:
    hop = Hop("a", "b", "service", True, "svc", "s.yaml", 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        hop.summary = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del hop.source


def test_a_hop_takes_its_place_one_way_only() -> None:
    """A place given both ways would have been kept as ``at`` and the path and line dropped."""
    at, _ = _placed("np.yaml", 7)
    with pytest.raises(TypeError):
        Hop("a", "b", "network-policy", False, "deny", "other.yaml", 3, at=at)
    with pytest.raises(TypeError):
        Hop("a", "b", "network-policy", False, "deny", line=3, at=at)


def test_recording_and_answering_ingress_finds_no_place_until_one_is_shown() -> None:
    at, asked = _placed("svc.yaml", 12)
    paths = PathGraph()
    hop = _hop("range 10.0.0.0/16", "ns/a[Deployment]",
               Evidence("service", False, "Service ns/a admits only 192.168.0.0/16", at))
    paths.record("range 10.0.0.0/16", "TCP", 443, hop)
    answer = paths.answer("range 10.0.0.0/16", "ns/a[Deployment]", "TCP", 443)
    assert not answer.open and asked == []
    assert answer.hops[0].where == "svc.yaml:12" and asked == [1]
    edge = next(iter(paths.graph.edges(data=True)))[2]
    assert (edge["path"], edge["line"]) == ("svc.yaml", 12)
