"""IPSpace algebra, notation and cutting the external space."""

import pytest

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
