"""The NetworkPolicy builder allows exactly the connection set asked for: the reachability
analysis of what it writes gives back that set and nothing more."""

from __future__ import annotations

import pytest

from hcpscan.analysis.reachability.allow import (
    EGRESS,
    INGRESS,
    NotExpressible,
    allow_rule,
    allowing_policy,
    ip_peers,
    port_entries,
)
from hcpscan.analysis.reachability.policies import parse_policy
from hcpscan.inventory.objects import K8sObject, SourceLocation
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.ports import ConnectionSet, PortSet


@pytest.mark.parametrize("wanted", [
    ConnectionSet.port("TCP", 53) | ConnectionSet.port("UDP", 53),
    ConnectionSet.of("TCP", PortSet.of((8000, 8090), (9443, 9443))),
    ConnectionSet.of("SCTP", PortSet.all()) | ConnectionSet.port("TCP", 1),
])
def test_the_policy_reads_back_as_exactly_the_connection_set(wanted):
    body = allowing_policy("p", "ns", {}, EGRESS, [{"podSelector": {}}], wanted,
                           pods_isolated=True)
    assert body["spec"]["egress"][0]["ports"] == port_entries(wanted)
    obj = K8sObject("management", body["apiVersion"], body["kind"], "ns", "p", body,
                    SourceLocation("p.yaml", 1))
    (rule,) = parse_policy(obj).rules("egress")
    assert rule.connections_to(None) == wanted


def test_an_empty_set_or_peer_list_is_refused_not_widened():
    with pytest.raises(NotExpressible):
        port_entries(ConnectionSet.none())
    with pytest.raises(NotExpressible):
        allow_rule(EGRESS, [], ConnectionSet.port("TCP", 1))
    with pytest.raises(NotExpressible):
        ip_peers(IPSpace())


def test_all_connections_write_no_ports_and_peers_none_write_no_to():
    assert allow_rule(INGRESS, None, ConnectionSet.all()) == {}
    assert allow_rule(EGRESS, [{"podSelector": {}}], ConnectionSet.port("UDP", 53)) == {
        "to": [{"podSelector": {}}], "ports": [{"port": 53, "protocol": "UDP"}]}


def test_ip_peers_cover_exactly_the_space():
    space = IPSpace.from_cidrs(["10.0.0.5/32", "10.0.0.6/31"])
    peers = ip_peers(space)
    assert IPSpace.from_cidrs(p["ipBlock"]["cidr"] for p in peers) == space


def test_a_policy_for_pods_not_yet_isolated_is_refused():
    with pytest.raises(NotExpressible):
        allowing_policy("p", "ns", {}, EGRESS, None, ConnectionSet.port("TCP", 3128),
                        pods_isolated=False)
    body = allowing_policy("p", "ns", {"matchLabels": {"app": "a"}}, EGRESS,
                           ip_peers(IPSpace.from_cidr("10.0.0.5/32")),
                           ConnectionSet.port("TCP", 3128), pods_isolated=True)
    assert body["spec"]["policyTypes"] == ["Egress"]
    assert body["spec"]["egress"] == [{"to": [{"ipBlock": {"cidr": "10.0.0.5/32"}}],
                                       "ports": [{"port": 3128, "protocol": "TCP"}]}]
