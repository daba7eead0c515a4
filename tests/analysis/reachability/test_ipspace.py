"""IPSpace algebra, notation and cutting the external space."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hcpscan.model.ipspace import AddressError, IPSpace, cut


def test_except_leaves_two_ranges():
    space = IPSpace.from_cidr("10.0.0.0/8") - IPSpace.from_cidr("10.10.0.0/16")
    assert space.range_strings() == ["10.0.0.0-10.9.255.255", "10.11.0.0-10.255.255.255"]


def test_ipv4_and_ipv6_never_mix():
    both = IPSpace.everything()
    assert both - IPSpace.all_v4() == IPSpace.all_v6()
    assert str(both) == "0.0.0.0/0, ::/0"
    assert not IPSpace.from_cidr("::/0").overlaps(IPSpace.from_cidr("0.0.0.0/0"))


def test_cut_places_boundaries_only_where_membership_changes():
    blocks = [IPSpace.from_cidr("0.0.0.0/0") - IPSpace.from_cidr("10.0.0.0/8"),
              IPSpace.from_cidr("10.0.0.0/8")]
    pieces = cut(blocks, IPSpace.all_v4())
    assert [p.range_strings()[0] for p in pieces] == [
        "0.0.0.0-9.255.255.255", "10.0.0.0-10.255.255.255", "11.0.0.0-255.255.255.255"]


def test_cut_covers_the_universe_without_overlap():
    pieces = cut([IPSpace.from_cidr("192.168.0.0/16"), IPSpace.from_cidr("2001:db8::/32")],
                 IPSpace.everything())
    total = IPSpace()
    for piece in pieces:
        assert not total.overlaps(piece)
        total = total | piece
    assert total == IPSpace.everything()
    assert len(pieces) == 6


def test_host_bits_are_rejected():
    with pytest.raises(AddressError):
        IPSpace.from_cidr("10.0.0.1/8")


def test_contains_is_exact():
    big = IPSpace.from_cidr("10.0.0.0/8")
    assert big.contains(IPSpace.from_cidr("10.1.0.0/16"))
    assert not big.contains(IPSpace.from_cidr("10.0.0.0/7"))


def test_union_of_many_spaces_is_their_union_one_by_one():
    spaces = [IPSpace.from_cidr(c) for c in ("10.0.2.0/24", "10.0.0.0/24", "10.0.1.0/24",
                                             "2001:db8::/64", "10.0.1.128/25", "192.168.0.0/16")]
    one_by_one = IPSpace()
    for space in spaces:
        one_by_one = one_by_one.union(space)
    assert IPSpace.union_of(spaces) == one_by_one
    assert IPSpace.union_of(spaces).range_strings()[0] == "10.0.0.0-10.0.2.255"
    assert IPSpace.union_of([]) == IPSpace()


_V4 = st.tuples(st.just(4), st.integers(0, (1 << 32) - 1), st.integers(0, 4096))
_V6 = st.tuples(st.just(6), st.integers(0, (1 << 128) - 1), st.integers(0, 1 << 70))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_V4, _V6), max_size=4))
def test_a_sets_cidrs_asked_again_are_its_own_summary(pieces):
    """A set's CIDR blocks are worked out once per distinct set: each answer must be the
    summary of that set's own ranges, whatever was asked before, and a caller changing
    the list it got changes no later answer."""
    import ipaddress

    top = {4: (1 << 32) - 1, 6: (1 << 128) - 1}
    space = IPSpace.union_of(IPSpace(((v, lo, min(lo + n, top[v])),)) for v, lo, n in pieces)
    address = {4: ipaddress.IPv4Address, 6: ipaddress.IPv6Address}
    plain = [str(n) for v, lo, hi in space.ranges
             for n in ipaddress.summarize_address_range(address[v](lo), address[v](hi))]
    first = space.cidrs()
    assert first == plain == [str(n) for n in space.networks()]
    first.append("changed")
    space.networks().clear()
    assert space.cidrs() == plain and IPSpace(space.ranges).cidrs() == plain


def test_a_cidr_read_again_is_its_own_set_and_a_bad_one_fails_each_time():
    for _ in range(2):
        assert IPSpace.from_cidr("10.1.0.0/16") == IPSpace(((4, 0x0A010000, 0x0A01FFFF),))
        assert IPSpace.from_cidr("fd00::/8").ranges[0][:2] == (6, 0xFD << 120)
        assert IPSpace.from_cidr(" 192.168.0.1 ") == IPSpace(((4, 0xC0A80001, 0xC0A80001),))
        with pytest.raises(AddressError, match="host bits"):
            IPSpace.from_cidr("10.0.0.1/8")
