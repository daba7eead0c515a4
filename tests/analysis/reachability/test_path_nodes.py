"""Graph nodes for what hop evidence only named before: the router shard that serves a
Route, the ClusterIP Services a workload sends through (the DNS Service, the guest's
``default/kubernetes``), and the proxy at its host and port. The flow's verdict and the
path query agree on them, and the exports carry them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import networkx as nx

from hcpscan.analysis.reachability.graph import ReachabilityGraph
from hcpscan.analysis.reachability.paths import CLUSTER_IP, ROUTER, ROUTER_NODE, PathGraph
from hcpscan.analysis.reachability.required import BLOCKED, OPEN, evaluate_flow
from hcpscan.cli.connectivity_paths import path_answers
from hcpscan.inventory import Inventory
from hcpscan.model.flows import flow_by_id, load_flows
from hcpscan.model.hostedcluster import hosted_clusters
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES

EXTRA = FIXTURES / "required-flows"
HCP008 = FIXTURES / "rules" / "HCP008"


def _inventory(*paths: Path) -> Inventory:
    result = load_paths([str(p) for p in paths])
    return Inventory(result.objects, result.diagnostics, result.skipped)


def _flow(inventory: Inventory, flow: str) -> tuple[list, PathGraph]:
    """The results of one required flow for the input's one HostedCluster, and the path
    graph it recorded its hops in."""
    (hc,) = hosted_clusters(inventory)
    paths = PathGraph()
    return evaluate_flow(inventory, ReachabilityGraph(inventory), paths, hc,
                         flow_by_id(flow, load_flows()), []), paths


def _open_router(tmp_path: Path) -> Path:
    """router-source-ranges with the default router's allowedSourceRanges admitting the
    workers (10.0.0.0/16): konnectivity is open through Route → router → pod."""
    folder = tmp_path / "routed"
    shutil.copytree(EXTRA / "router-source-ranges", folder)
    ic = folder / "ingresscontroller.yaml"
    ic.write_text(ic.read_text().replace("192.168.0.0/24", "10.0.0.0/16"))
    return folder


def test_the_router_that_serves_a_route_is_a_node_with_its_ingresscontroller(tmp_path: Path):
    folder = _open_router(tmp_path)
    inventory = _inventory(folder)
    (result,), paths = _flow(inventory, "workers-to-konnectivity")
    assert result.status == OPEN
    (answer,) = result.answers
    layers = [h.layer for h in answer.hops]
    assert layers == ["service", ROUTER, "network-policy"]
    router = answer.hops[1]
    assert router.source == "Route clusters-r/konnectivity-server"
    assert router.target == "router IngressController openshift-ingress-operator/default"
    assert router.path is not None and router.path.endswith("ingresscontroller.yaml")
    assert answer.hops[2].source == router.target  # the policy after it sees the router
    assert paths.graph.nodes[router.target]["kind"] == ROUTER_NODE
    # the path query takes the same hops
    graph = ReachabilityGraph(inventory)
    (query,) = path_answers(inventory, graph, PathGraph(inventory), "workers",
                            "clusters-r/kube-apiserver", 8091, "TCP")
    assert query.open and [str(h) for h in query.hops] == [str(h) for h in answer.hops]


def test_a_blocked_route_is_blocked_before_the_router_in_flow_and_query():
    inventory = _inventory(EXTRA / "router-source-ranges")
    (result,), _ = _flow(inventory, "workers-to-konnectivity")
    assert result.status == BLOCKED
    (query,) = path_answers(inventory, ReachabilityGraph(inventory), PathGraph(inventory), "workers",
                            "clusters-r/kube-apiserver", 8091, "TCP")
    assert not query.open
    assert query.blocked_by == result.first_block.blocked_by
    assert query.blocked_by.line == 9  # allowedSourceRanges


def test_dns_goes_through_the_dns_service_node_and_the_policy_after_it_decides():
    inventory = _inventory(EXTRA / "vanilla-dns")
    results, paths = _flow(inventory, "hcp-dns")
    kas = next(r for r in results if r.workload and r.workload.name == "kube-apiserver")
    assert kas.status == BLOCKED
    for answer in kas.answers:
        service, policy = answer.hops
        assert service.target.startswith("Service kube-system/kube-dns")
        assert service.layer == "service" and service.allows
        assert "the DNS pods on 53" in service.summary
        assert policy.source == service.target and not policy.allows
        assert answer.blocked_by is policy and "kas-egress" in policy.summary
        assert paths.graph.nodes[service.target]["kind"] == CLUSTER_IP


def test_guest_pods_reach_their_api_server_through_default_kubernetes():
    from hcpscan.analysis.reachability.required import evaluate_guest_flow

    inventory = _inventory(FIXTURES / "rules" / "HCP010" / "fail" / "gitops-guest-egress.yaml")
    infra = next(o for o in inventory.of_kind("Infrastructure"))
    results = evaluate_guest_flow(inventory, ReachabilityGraph(inventory), PathGraph(), infra, None,
                                  flow_by_id("guest-pods-to-kas", load_flows()))
    blocked = [r for r in results if r.status == BLOCKED]
    assert blocked
    service, policy = blocked[0].answers[0].hops
    assert service.target == "Service default/kubernetes"
    assert "172.20.0.1 port 6443" in service.summary and "not in the input" in service.summary
    assert not policy.allows and policy.source == service.target


def test_the_proxy_is_a_node_at_its_host_and_port():
    inventory = _inventory(HCP008 / "fail" / "kubevirt-proxy.yaml")
    (result,), paths = _flow(inventory, "workers-to-proxy")
    assert result.first_block.target == "proxy 10.0.50.10:3128"
    assert "proxy 10.0.50.10:3128" in paths.graph


def test_the_exports_carry_the_new_nodes(run_cli, tmp_path: Path):
    folder = _open_router(tmp_path)
    out = tmp_path / "paths.json"
    result = run_cli("connectivity", "--no-progress", str(folder), "--path", "--from", "workers",
                     "--to", "clusters-r/kube-apiserver", "--port", "8091", "--paths-out", str(out))
    assert result.code == 0, result.err
    assert "router IngressController openshift-ingress-operator/default" in result.out
    graph = nx.node_link_graph(json.loads(out.read_text()), edges="edges")
    kinds = dict(graph.nodes(data="kind"))
    assert kinds["router IngressController openshift-ingress-operator/default"] == ROUTER_NODE
    dns = tmp_path / "dns.graphml"
    assert run_cli("connectivity", "--no-progress", str(EXTRA / "vanilla-dns"), "--flow", "hcp-dns",
                   "--paths-out", str(dns)).code == 1
    back = nx.read_graphml(dns)
    assert any(k == CLUSTER_IP for _, k in back.nodes(data="kind"))


def test_from_git_alone_the_router_shard_is_the_node_a_route_goes_through():
    """A HostedCluster without its HCP namespace: its Route-published Konnectivity goes
    through the `hcp` shard (its selectors pick HyperShift's Routes), not the default router."""
    inventory = _inventory(EXTRA / "router-shard")
    (result,), paths = _flow(inventory, "workers-to-konnectivity")
    assert result.status == OPEN
    (answer,) = result.answers
    assert [h.target for h in answer.hops][0] == "router IngressController openshift-ingress-operator/hcp"
    router = answer.hops[1]
    assert router.layer == ROUTER and router.line == 35  # the hcp IngressController
    assert paths.graph.nodes[router.source]["kind"] == ROUTER_NODE
