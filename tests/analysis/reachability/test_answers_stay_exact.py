"""Shortcuts taken for rule time give the answers the general computation gives."""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from hcpscan.analysis.reachability.allow import EGRESS, INGRESS
from hcpscan.analysis.reachability.evaluation import PolicyEvaluation
from hcpscan.analysis.reachability.paths import Hop, PathGraph
from hcpscan.analysis.reachability.selectors import _bits_by_text, bits
from hcpscan.model.ipspace import IPSpace, cut

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


# -- bit masks: the set bits of a mask, and the atoms inside an address block ---------------

@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(0, 40_000), max_size=200), st.integers(0, 64))
def test_the_set_bits_of_a_mask_are_its_indices_dense_or_sparse(indices, low_run):
    """``bits`` reads a mask of many set bits from its binary text: it must give the indices
    the mask was made of, ascending, however many and however far apart (a low run of
    consecutive bits crosses the point where it changes how it reads)."""
    wanted = sorted(set(indices) | set(range(low_run)))
    mask = sum(1 << i for i in wanted)
    assert bits(mask) == wanted
    assert _bits_by_text(mask) == wanted


addresses = st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(8, 32))  # 10.a.b.a/n


@settings(max_examples=150, deadline=None)
@given(st.lists(addresses, min_size=1, max_size=6), st.lists(addresses, min_size=1, max_size=3),
       st.integers(0, 300))
def test_the_atoms_within_a_block_are_those_it_holds_whole(cuts, block, classes):
    """The atoms an ipBlock peer opens to are exactly those inside it, at their bits past
    the classes (the mask is made small and shifted once)."""
    def space(parts):
        return IPSpace.from_cidrs([str(ipaddress.ip_network(f"10.{a}.{b}.{a}/{n}", strict=False))
                                   for a, b, n in parts])
    atoms = cut([space([c]) for c in cuts], IPSpace.everything())
    evaluation = PolicyEvaluation([], [], {}, atoms, atoms)
    evaluation.n = classes  # the classes' bits come first; the atoms' follow them
    peer = space(block)
    wanted = sum(1 << (classes + k) for k, atom in enumerate(atoms) if peer.contains(atom))
    for direction in (INGRESS, EGRESS):
        assert evaluation._atoms_within(peer, direction) == wanted
