"""PortSet and ConnectionSet algebra and notation."""

from hypothesis import given, settings
from hypothesis import strategies as st

from hcpscan.model.ports import ConnectionSet, PortSet, normalise_protocol


def test_port_sets_merge_adjacent_and_overlapping_ranges():
    ports = PortSet.of((80, 80), (81, 90), (85, 100), (443, 443))
    assert ports.intervals == ((80, 100), (443, 443))
    assert str(ports) == "80-100,443"


def test_port_set_difference_and_complement():
    assert str(PortSet.all() - PortSet.single(5353)) == "1-5352,5354-65535"
    assert PortSet.of((1, 10)).complement() == PortSet.of((11, 65535))
    assert not (PortSet.single(1) & PortSet.single(2))


def test_connection_set_union_of_every_protocol_is_all_connections():
    every = ConnectionSet.none()
    for proto in ("UDP", "TCP", "SCTP"):
        every = every | ConnectionSet.of(proto, PortSet.of((1, 65535)))
    assert every.is_all
    assert str(every) == "All Connections"


def test_connection_set_notation_orders_protocols_and_ports():
    conns = ConnectionSet.port("UDP", 8080) | ConnectionSet.port("TCP", 9090) | ConnectionSet.port("tcp", 8080)
    assert str(conns) == "TCP 8080,9090,UDP 8080"
    assert conns.allows("tcp", 9090)
    assert not conns.allows("SCTP", 8080)


def test_connection_set_intersection_keeps_only_common_ports():
    a = ConnectionSet.of("TCP", PortSet.of((1, 100)))
    b = ConnectionSet.of("TCP", PortSet.of((50, 200))) | ConnectionSet.port("UDP", 53)
    assert str(a & b) == "TCP 50-100"
    assert not (ConnectionSet.port("UDP", 53) & ConnectionSet.port("TCP", 53))


# ``ConnectionSet.allows`` reads the protocol's intervals in place (asked hundreds of
# thousands of times per large scan); it must say what the plain membership says.
_PROTOCOL_ASKED = st.one_of(st.sampled_from(["TCP", "UDP", "SCTP", "tcp", "Udp", "", None,
                                              "ICMP", 6, ["TCP"], "TCP "]), st.text(max_size=4))
_RANGES = st.lists(st.tuples(st.integers(-5, 70000), st.integers(-5, 70000)), max_size=5)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["TCP", "UDP", "SCTP"]), _RANGES, max_size=3),
       _PROTOCOL_ASKED,
       st.one_of(st.integers(-2, 70000), st.sampled_from([True, False, "80", 80.0, None])))
def test_allows_is_membership_of_the_protocols_ports(ranges, protocol, port):
    conns = ConnectionSet.from_mapping({p: PortSet.of(*r) for p, r in ranges.items()})
    assert conns.allows(protocol, port) == (port in conns.ports(normalise_protocol(protocol)))
