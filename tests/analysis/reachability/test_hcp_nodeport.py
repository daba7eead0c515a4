"""HyperShift's NodePort policies on the rendered HCP namespace: which layer opens
ignition-server-proxy 8443, and what a perimeter changes."""

from __future__ import annotations

import pytest

from hcpscan.analysis.reachability.graph import TargetNotFound, build_reachability
from hcpscan.analysis.reachability.perimeter import load_perimeter
from hcpscan.model.ipspace import IPSpace

from .conftest import CPO_RENDERED, FIXTURES, load

PROXY = "hcp-namespace/ignition-server-proxy"
WORKERS = IPSpace.from_cidr("10.0.128.0/20")


@pytest.fixture(scope="module")
def hcp():
    return load(CPO_RENDERED, FIXTURES / "hcp-nodeport")


@pytest.fixture(scope="module")
def perimeter():
    return load_perimeter(FIXTURES / "perimeter-workers-only.yaml")


def outside_sources(reaches):
    return [r for r in reaches if r.source.is_external]


def test_proxy_port_is_open_to_the_whole_internet_via_the_nodeport_policy(hcp):
    graph = build_reachability(hcp)
    outside = outside_sources(graph.who_can_reach(PROXY, 8443))
    reachable = IPSpace()
    for reach in outside:
        reachable = reachable | reach.source.addresses
    assert reachable.contains(IPSpace.from_cidr("0.0.0.0/0"))
    direct = next(r for r in outside if any(p.via == "pod network" for p in r.paths))
    policy = [e for e in direct.evidence if e.layer == "network-policy"]
    assert any("hcp-namespace/nodeport-ignition-proxy ingress rule #1" in e.summary for e in policy)
    assert any(e.path.endswith("network-policies.yaml") and e.line for e in policy)


def test_perimeter_restricts_the_proxy_port_to_the_worker_subnet(hcp, perimeter):
    graph = build_reachability(hcp, perimeter)
    outside = outside_sources(graph.who_can_reach(PROXY, 8443))
    assert [str(r.source.addresses) for r in outside] == ["10.0.128.0/20"]
    layers = {e.layer for e in outside[0].evidence}
    assert layers == {"perimeter", "network-policy"}
    gate = next(e for e in outside[0].evidence if e.layer == "perimeter")
    assert gate.allows and "workers-to-ignition-and-konnectivity" in gate.summary


def test_a_blocked_flow_names_the_blocking_layer(hcp, perimeter):
    graph = build_reachability(hcp, perimeter)
    reach = graph.can_reach("203.0.113.9", PROXY, 8443)
    assert not reach.allowed
    blockers = {p.blocked_by.layer for p in reach.paths}
    assert blockers == {"perimeter"}
    assert graph.can_reach("10.0.130.1", PROXY, 8443).allowed


def test_same_namespace_pods_reach_the_proxy_through_the_pod_network(hcp):
    graph = build_reachability(hcp)
    reach = graph.can_reach("hcp-namespace/kube-apiserver", PROXY, 8443)
    assert reach.allowed
    assert any("same-namespace" in e.summary for e in reach.evidence)


def test_ingress_isolation_blocks_other_ports_from_outside(hcp):
    graph = build_reachability(hcp)
    reach = graph.can_reach("198.51.100.7", PROXY, 9999)
    assert not reach.allowed
    assert {p.blocked_by.layer for p in reach.paths} == {"network-policy"}


def test_exposed_ports_of_the_proxy(hcp, perimeter):
    open_ports = build_reachability(hcp).exposed_ports(PROXY)
    direct = [e for e in open_ports if e.via == "pod network"]
    assert [str(e.connections) for e in direct] == ["TCP 8443"]
    fenced = build_reachability(hcp, perimeter).exposed_ports(PROXY)
    assert {str(e.sources) for e in fenced if e.via == "pod network"} == {"10.0.128.0/20"}


def test_graph_nodes_are_classes_and_ranges_with_connection_sets(hcp, perimeter):
    graph = build_reachability(hcp, perimeter).graph()
    kinds = {data["kind"] for _, data in graph.nodes(data=True)}
    assert kinds == {"class", "external"}
    proxy = next(n for n, d in graph.nodes(data=True)
                 if d["kind"] == "class" and f"{PROXY}[Deployment]" in d["workloads"])
    inbound = [(u, d) for u, _, d in graph.in_edges(proxy, data=True)
               if graph.nodes[u]["kind"] == "external"]
    assert inbound and all(str(d["connections"]) == "TCP 8443" for _, d in inbound)
    assert {graph.nodes[u]["addresses"].cidrs()[0] for u, _ in inbound} == {"10.0.128.0/20"}


def test_unknown_target_is_a_lookup_error(hcp):
    with pytest.raises(TargetNotFound):
        build_reachability(hcp).who_can_reach("hcp-namespace/no-such-thing", 443)


def test_services_and_routes_are_ways_in(perimeter):
    graph = build_reachability(load(FIXTURES / "nodeport-service"))
    open_ports = {(e.via, str(e.connections)): e for e in graph.exposed_ports("shop/storefront")}
    assert ("NodePort Service shop/storefront-nodeport", "TCP 8080") in open_ports
    partners = open_ports[("LoadBalancer Service shop/storefront-partners", "TCP 8443")]
    assert str(partners.sources) == "203.0.113.0/24"
    route = open_ports[("Route shop/storefront", "TCP 8080")]
    assert str(route.sources) == "0.0.0.0/0, ::/0"  # the router is the client the pod sees
    # checkout admits only the storefront: no way in from outside
    assert graph.exposed_ports("shop/checkout") == []
    fenced = build_reachability(load(FIXTURES / "nodeport-service"), perimeter)
    reach = fenced.can_reach("10.0.130.9", "shop/storefront", 8080)
    nodeport = next(p for p in reach.paths if p.via.startswith("NodePort"))
    # the perimeter lets workers in on node port 30080, but the pod's policy excepts 10.0.0.0/8
    assert any(e.layer == "perimeter" and e.allows for e in nodeport.evidence)
    assert not nodeport.allowed and nodeport.blocked_by.layer == "network-policy"
