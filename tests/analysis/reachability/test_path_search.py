"""The path graph answers without building a networkx graph per question: the same
answer networkx gives (a shortest open path, else the first simple path up to its
first blocking hop), and the same exported graph, built only when it is read."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from hcpscan.analysis.reachability.paths import Hop, PathAnswer, PathGraph, _answer_on_hops


def _networkx_answer(origin: str, target: str, protocol: str, port: int,
                     hops: list[Hop]) -> PathAnswer:
    """The answer as networkx gives it (what PathGraph computed before it searched alone)."""
    view = nx.MultiDiGraph()
    for i, hop in enumerate(hops):
        view.add_edge(hop.source, hop.target, key=i, hop=hop)
    if origin not in view or target not in view:
        return PathAnswer(origin, target, protocol, port, False, ())
    opened = nx.DiGraph()
    opened.add_nodes_from(view)
    for u, v, data in view.edges(data=True):
        if data["hop"].allows and not opened.has_edge(u, v):
            opened.add_edge(u, v, hop=data["hop"])
    try:
        nodes = nx.shortest_path(opened, origin, target)
    except nx.NetworkXNoPath:
        nodes = None
    if nodes is not None:
        return PathAnswer(origin, target, protocol, port, True,
                          tuple(opened.edges[u, v]["hop"] for u, v in zip(nodes, nodes[1:], strict=False)))
    for edges in nx.all_simple_edge_paths(view, origin, target):
        walked: list[Hop] = []
        for u, v, k in edges:
            walked.append(view.edges[u, v, k]["hop"])
            if not walked[-1].allows:
                return PathAnswer(origin, target, protocol, port, False, tuple(walked))
    return PathAnswer(origin, target, protocol, port, False, ())


def _random_hops(rng: random.Random, nodes: int, edges: int) -> list[Hop]:
    names = [f"n{i}" for i in range(nodes)]
    return [Hop(rng.choice(names), rng.choice(names), rng.choice(["network-policy", "service"]),
                rng.random() < 0.6, f"hop {i}") for i in range(edges)]


@pytest.mark.parametrize("seed", range(40))
def test_the_answer_is_the_one_networkx_gives(seed: int) -> None:
    rng = random.Random(seed)
    hops = _random_hops(rng, rng.randint(2, 9), rng.randint(1, 24))
    for origin in ("n0", "n1", "n5"):
        for target in ("n0", "n1", "n3", "n8"):
            expected = _networkx_answer(origin, target, "TCP", 443, hops)
            assert _answer_on_hops(origin, target, "TCP", 443, hops) == expected, (origin, target)


def test_a_blocked_answer_stops_at_the_first_blocking_hop_of_the_first_way() -> None:
    hops = [Hop("a", "svc", "service", True, "svc"), Hop("svc", "b", "network-policy", False, "deny"),
            Hop("a", "c", "network-policy", False, "deny c"), Hop("c", "b", "network-policy", True, "ok")]
    answer = _answer_on_hops("a", "b", "TCP", 80, hops)
    assert not answer.open
    assert [h.summary for h in answer.hops] == ["svc", "deny"]
    assert answer.blocked_by == hops[1]


def test_an_open_way_is_found_past_a_blocked_one() -> None:
    hops = [Hop("a", "svc", "service", True, "svc"), Hop("svc", "b", "network-policy", False, "deny"),
            Hop("a", "c", "network-policy", True, "via c"), Hop("c", "b", "network-policy", True, "ok")]
    answer = _answer_on_hops("a", "b", "TCP", 80, hops)
    assert answer.open
    assert [h.summary for h in answer.hops] == ["via c", "ok"]


def _recorded(paths: PathGraph) -> None:
    paths.record("10.0.0.0/16", "TCP", 6443, Hop("10.0.0.0/16", "perimeter sg-1", "perimeter", True, "open"))
    paths.record("10.0.0.0/16", "TCP", 6443, Hop("perimeter sg-1", "way NodePort", "publishing", True, "np",
                                                 "hc.yaml", 3))
    paths.add_egress("ns/client", "dns", "UDP", 53, False, (), "egress denied")
    paths.record("10.0.0.0/16", "TCP", 6443, Hop("10.0.0.0/16", "perimeter sg-1", "perimeter", True, "open"))


def test_the_exported_graph_is_built_when_read_and_kept_in_step() -> None:
    early, late = PathGraph(), PathGraph()
    early.graph  # read before any hop: later hops are added to it as they come  # noqa: B018
    _recorded(early)
    _recorded(late)
    assert late._graph is None  # nothing read it yet
    for paths in (early, late):
        assert paths.graph.number_of_edges() == 3  # the repeated hop is recorded once
    assert list(early.graph.nodes(data=True)) == list(late.graph.nodes(data=True))
    assert list(early.graph.edges(keys=True, data=True)) == list(late.graph.edges(keys=True, data=True))
    assert late.graph.nodes["perimeter sg-1"]["kind"] == "perimeter"
    edge = late.graph.edges["perimeter sg-1", "way NodePort",
                            "10.0.0.0/16|TCP/6443|publishing|np"]
    assert (edge["path"], edge["line"], edge["allows"]) == ("hc.yaml", 3, True)
    assert late.answer("10.0.0.0/16", "way NodePort", "TCP", 6443).open
