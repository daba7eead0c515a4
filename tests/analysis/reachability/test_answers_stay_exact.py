"""Shortcuts taken for rule time give the answers the general computation gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hcpscan.analysis.reachability.paths import Hop, PathGraph

from .test_path_search import _networkx_answer

NODES = ["range 10.0.0.0/24", "perimeter fw", "Route ns/x", "ns/target"]
ORIGIN, TARGET = NODES[0], NODES[-1]

hops = st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(NODES), st.booleans(),
                          st.integers(0, 3)), max_size=7)


def _graph(raw: list[tuple[str, str, bool, int]], one_hop: bool) -> PathGraph:
    paths = PathGraph()
    for source, target, allows, n in raw:
        source = ORIGIN if one_hop else source
        if source == target:
            continue
        paths.record(ORIGIN, "TCP", 443, Hop(source, target, "network-policy", allows, f"hop {n}",
                                             "np.yaml", n + 1))
    return paths


@settings(max_examples=300, deadline=None)
@given(hops, st.booleans(), st.sampled_from(NODES[1:]))
def test_an_answer_is_what_networkx_finds(raw, one_hop, target):
    """Questions are answered without building a networkx graph (one-hop ones, a
    workload's egress, without any search); the answer must be the one networkx gives
    over the same hops, open or blocked."""
    paths = _graph(raw, one_hop)
    asked = list(paths._asked.get((ORIGIN, "TCP", 443), {}).values())
    quick = paths.answer(ORIGIN, target, "TCP", 443)
    assert quick == _networkx_answer(ORIGIN, target, "TCP", 443, asked)


def test_a_one_hop_answer_names_the_first_hop_that_opens_else_the_first():
    paths = PathGraph()
    shut = Hop(ORIGIN, TARGET, "network-policy", False, "denied by ns/deny", "np.yaml", 3)
    opened = Hop(ORIGIN, TARGET, "network-policy", True, "allowed by ns/allow", "np.yaml", 9)
    elsewhere = Hop(ORIGIN, "ns/other", "network-policy", True, "to another target")
    for hop in (elsewhere, shut):
        paths.record(ORIGIN, "TCP", 443, hop)
    blocked = paths.answer(ORIGIN, TARGET, "TCP", 443)
    assert (blocked.open, blocked.hops) == (False, (shut,))
    paths.record(ORIGIN, "TCP", 443, opened)
    open_now = paths.answer(ORIGIN, TARGET, "TCP", 443)
    assert (open_now.open, open_now.hops) == (True, (opened,))
    assert paths.answer(ORIGIN, TARGET, "UDP", 53).hops == ()


MIDDLE = "ClusterIP Service default/kubernetes"
_LEGS = st.lists(st.tuples(st.sampled_from([(ORIGIN, MIDDLE), (MIDDLE, TARGET), (ORIGIN, TARGET),
                                            (MIDDLE, ORIGIN), (TARGET, MIDDLE)]),
                           st.booleans(), st.integers(0, 3)), max_size=8)


@settings(max_examples=400, deadline=None)
@given(_LEGS, st.booleans())
def test_an_answer_through_one_node_is_what_networkx_finds(raw, legs_only):
    """A workload's egress through a ClusterIP Service (origin → Service → destination)
    is answered without the search when every hop is on one of the two legs; the
    answer, open or blocked, must be networkx's over the same hops, and any other
    shape (a direct hop, a hop back) must still be searched."""
    paths = PathGraph()
    for (source, target), allows, n in raw:
        if legs_only and (source, target) not in ((ORIGIN, MIDDLE), (MIDDLE, TARGET)):
            continue
        paths.record(ORIGIN, "TCP", 443, Hop(source, target, "network-policy", allows,
                                             f"hop {n}", "np.yaml", n + 1))
    asked = list(paths._asked.get((ORIGIN, "TCP", 443), {}).values())
    assert paths.answer(ORIGIN, TARGET, "TCP", 443) == _networkx_answer(ORIGIN, TARGET, "TCP",
                                                                         443, asked)
