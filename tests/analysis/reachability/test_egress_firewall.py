"""OVN-Kubernetes EgressFirewall: ordered rules by CIDR (and dnsName, reported), on traffic
leaving the cluster only, never for hostNetwork pods."""

from __future__ import annotations

from hcpscan.analysis.reachability.connlist import connection_list
from hcpscan.analysis.reachability.graph import build_reachability

PODS = """\
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: shop, labels: {app: app}}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: agent, namespace: shop, labels: {app: agent}}
spec: {hostNetwork: true, containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: data, labels: {app: db}}
spec: {containers: [{name: c}]}
"""

FIREWALL = """\
---
apiVersion: k8s.ovn.org/v1
kind: EgressFirewall
metadata: {name: default, namespace: shop}
spec:
  egress:
  - type: Allow
    to: {cidrSelector: 203.0.113.0/24}
    ports: [{protocol: TCP, port: 443}]
  - type: Deny
    to: {cidrSelector: 203.0.113.0/24}
  - type: Allow
    to: {dnsName: api.example.com}
  - type: Deny
    to: {cidrSelector: 0.0.0.0/0}
"""


def _conns(lines: set[str], prefix: str) -> dict[str, str]:
    return {line.split(" => ")[1].split(" : ")[0]: line.split(" : ")[1]
            for line in lines if line.startswith(prefix + " => ")}


def test_first_matching_rule_decides_traffic_out_of_the_cluster(manifests):
    result = connection_list(manifests(PODS + FIREWALL))
    app = _conns(set(result.lines()), "shop/app[Pod]")
    assert app["203.0.113.0-203.0.113.255[External]"] == "TCP 443"
    assert "0.0.0.0-203.0.112.255[External]" not in app  # the last rule denies the rest
    assert app["data/db[Pod]"] == "All Connections"  # pods in the cluster: not filtered


def test_host_network_pods_and_other_namespaces_are_not_filtered(manifests):
    lines = set(connection_list(manifests(PODS + FIREWALL)).lines())
    agent = _conns(lines, "shop/agent[Pod]")
    assert agent["0.0.0.0-203.0.112.255[External]"] == "All Connections"
    assert _conns(lines, "data/db[Pod]")["0.0.0.0-203.0.112.255[External]"] == "All Connections"


def test_dns_name_rules_are_reported_not_guessed(manifests):
    result = connection_list(manifests(PODS + FIREWALL))
    assert any("api.example.com" in d.message and d.severity == "warning"
               and "do not reflect it" in d.message for d in result.diagnostics)


def test_a_firewall_not_named_default_is_rejected(manifests):
    result = connection_list(manifests(PODS + FIREWALL.replace("name: default", "name: other")))
    assert any(d.severity == "error" and "must be named 'default'" in d.message
               for d in result.diagnostics)
    assert "0.0.0.0-255.255.255.255[External]" in _conns(set(result.lines()), "shop/app[Pod]")


def test_egress_query_names_the_firewall_rule(manifests):
    graph = build_reachability(manifests(PODS + FIREWALL, "fw.yaml"))
    egress = graph.egress_outside("shop/app", 443)
    # the last rule denies 0.0.0.0/0: IPv6 destinations match no rule, so they stay open
    assert str(egress.allowed) == "203.0.113.0/24, ::/0"
    denial = next(e for e in egress.evidence if e.layer == "egress-firewall")
    assert not denial.allows
    assert "EgressFirewall shop/default rule #4 (Deny 0.0.0.0/0) denies TCP/443" in denial.summary
    assert denial.path.endswith("fw.yaml") and denial.line
    assert str(graph.egress_outside("shop/app", 80).allowed) == "::/0"
    assert graph.egress_outside("shop/agent", 80).allowed  # hostNetwork
