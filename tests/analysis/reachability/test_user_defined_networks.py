"""Primary UserDefinedNetworks and ClusterUserDefinedNetworks keep their pods apart, in the
connection list and in the graph's queries."""

from __future__ import annotations

from hcpscan.analysis.reachability.connlist import connection_list
from hcpscan.analysis.reachability.graph import build_reachability


def _ns(name: str, primary: bool = True) -> str:
    label = "  labels: {k8s.ovn.org/primary-user-defined-network: ''}\n" if primary else ""
    return f"---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n{label}"


def _pod(ns: str) -> str:
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: app, namespace: {ns}}}\n"
            "spec: {containers: [{name: c}]}\n")


def _udn(ns: str) -> str:
    return (f"---\napiVersion: k8s.ovn.org/v1\nkind: UserDefinedNetwork\n"
            f"metadata: {{name: net, namespace: {ns}}}\n"
            "spec: {topology: Layer2, layer2: {role: Primary, subnets: [10.200.0.0/16]}}\n")


TEXT = (_ns("blue") + _udn("blue") + _pod("blue") + _ns("green") + _udn("green") + _pod("green")
        + _ns("plain", primary=False) + _pod("plain"))


def test_each_network_is_listed_on_its_own(manifests):
    result = connection_list(manifests(TEXT))
    titles = [s.network.title for s in result.sections]
    assert titles == ["Pod network", "primary UDN blue", "primary UDN green"]
    lines = set(result.lines())
    assert "blue[udn]/app[Pod] => 0.0.0.0-255.255.255.255[External] : All Connections" in lines
    assert not [line for line in lines if "blue" in line and "green" in line]
    assert not [line for line in lines if "plain/" in line and "[udn]" in line]
    assert result.networks[("management", "green/app[Pod]")].mapping == "green[UDN]"


def test_queries_say_the_networks_keep_pods_apart(manifests):
    graph = build_reachability(manifests(TEXT))
    reach = graph.can_reach("blue/app", "green/app", 80)
    assert not reach.allowed
    blocker = reach.paths[0].blocked_by
    assert blocker.layer == "primary-network"
    assert "primary UDN blue" in blocker.summary and "primary UDN green" in blocker.summary
    assert graph.can_reach("blue/app", "blue/app", 80).allowed
    assert not [r for r in graph.who_can_reach("green/app", 80) if not r.source.is_external]


def test_a_udn_in_an_unlabelled_namespace_leaves_it_on_the_pod_network(manifests):
    result = connection_list(manifests(_ns("blue", primary=False) + _udn("blue") + _pod("blue")
                                       + _ns("plain", primary=False) + _pod("plain")))
    assert not result.sections
    assert "blue/app[Pod] => plain/app[Pod] : All Connections" in result.lines()
    assert any("lacks the label" in d.message for d in result.diagnostics)


def test_a_role_ovn_does_not_know_is_warned_about(manifests):
    text = _ns("blue") + _udn("blue").replace("role: Primary", "role: primary") + _pod("blue")
    result = connection_list(manifests(text))
    warnings = [d for d in result.diagnostics if d.severity == "warning"]
    assert any("UserDefinedNetwork blue/net has role 'primary', not Primary or Secondary" in d.message
               and d.hint == "set spec.layer2.role to Primary or Secondary" for d in warnings)


def test_a_labelled_namespace_without_its_network_is_warned_about(manifests):
    result = connection_list(manifests(TEXT + _ns("orphan") + _pod("orphan")))
    found = [d for d in result.diagnostics if "namespace orphan has the label" in d.message]
    assert len(found) == 1 and found[0].severity == "warning" and found[0].line is not None
    assert not [d for d in result.diagnostics if "namespace blue has" in d.message]
