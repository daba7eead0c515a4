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
