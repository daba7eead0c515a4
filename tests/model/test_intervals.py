"""The one interval algebra under PortSet and IPSpace, against Python's own sets."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hcpscan.model import intervals
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.ports import PortSet

LOW, HIGH = 0, 40
spans = st.lists(st.tuples(st.integers(-5, 45), st.integers(-5, 45)), max_size=6)


def _members(found: tuple[tuple[int, int], ...]) -> set[int]:
    return {v for a, b in found for v in range(a, b + 1)}


def _as_set(raw: list[tuple[int, int]]) -> set[int]:
    return {v for a, b in raw for v in range(max(a, LOW), min(b, HIGH) + 1)}


def _is_normal(found: tuple[tuple[int, int], ...]) -> bool:
    return all(a <= b for a, b in found) and all(found[k][1] + 1 < found[k + 1][0]
                                                   for k in range(len(found) - 1))


@settings(max_examples=300, deadline=None)
@given(spans, spans)
def test_operations_match_set_algebra(left, right):
    a, b = intervals.normalise(left, LOW, HIGH), intervals.normalise(right, LOW, HIGH)
    universe = set(range(LOW, HIGH + 1))
    assert _members(a) == _as_set(left) and _is_normal(a)
    for result, expected in [
        (intervals.union(a, b, LOW, HIGH), _as_set(left) | _as_set(right)),
        (intervals.intersection(a, b), _as_set(left) & _as_set(right)),
        (intervals.difference(a, b, LOW, HIGH), _as_set(left) - _as_set(right)),
        (intervals.complement(a, LOW, HIGH), universe - _as_set(left)),
    ]:
        assert _members(result) == expected and _is_normal(result)


def test_ports_and_addresses_share_it():
    assert str(PortSet.of((80, 80), (81, 90), (443, 443)) - PortSet.single(85)) == "80-84,86-90,443"
    assert str(PortSet.single(53).complement()) == "1-52,54-65535"
    both = IPSpace.from_cidrs(["10.0.0.0/8", "fd00::/8"])
    assert str(both - IPSpace.from_cidr("10.128.0.0/9")) == "10.0.0.0/9, fd00::/8"
    assert str(IPSpace.from_cidr("fd00::/8").complement() & IPSpace.all_v4()) == "0.0.0.0/0"


# IPSpace walks both range lists at once (versions 4 then 6) instead of splitting them per
# version; small per-version universes stand in for the two address families.
_SMALL = {4: 40, 6: 40}
space_spans = st.lists(st.tuples(st.sampled_from([4, 6]), st.integers(0, 40), st.integers(0, 40)),
                       max_size=6)


def _space(raw: list[tuple[int, int, int]]) -> IPSpace:
    per = {v: intervals.normalise([(a, b) for w, a, b in raw if w == v], 0, _SMALL[v]) for v in (4, 6)}
    return IPSpace(tuple((v, a, b) for v in (4, 6) for a, b in per[v]))


def _addresses(space: IPSpace) -> set[tuple[int, int]]:
    return {(v, x) for v, a, b in space.ranges for x in range(a, b + 1)}


@settings(max_examples=400, deadline=None)
@given(space_spans, space_spans)
def test_address_space_walks_match_set_algebra(left, right):
    a, b = _space(left), _space(right)
    both = _addresses(a) & _addresses(b)
    meet = a.intersection(b)
    assert _addresses(meet) == both
    assert all(meet.ranges[k][0] < meet.ranges[k + 1][0] or meet.ranges[k][2] + 1 < meet.ranges[k + 1][1]
               for k in range(len(meet.ranges) - 1))  # still merged and in order
    assert a.overlaps(b) == bool(both)
    assert a.contains(b) == (_addresses(b) <= _addresses(a))
    assert a.intersection(a) == a and b.contains(IPSpace()) and not IPSpace().overlaps(a)
