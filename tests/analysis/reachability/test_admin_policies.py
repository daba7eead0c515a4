"""AdminNetworkPolicy and BaselineAdminNetworkPolicy: tiers, priorities, actions, peers, ports,
and evidence naming the tier, the object and the rule that decided."""

from __future__ import annotations

from hcpscan.analysis.reachability.connlist import connection_list
from hcpscan.analysis.reachability.graph import build_reachability

PODS = """\
apiVersion: v1
kind: Namespace
metadata: {name: a, labels: {team: x}}
---
apiVersion: v1
kind: Namespace
metadata: {name: b, labels: {team: y}}
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: a, labels: {app: client}}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: server, namespace: b, labels: {app: server}}
spec:
  containers:
  - name: s
    ports: [{containerPort: 8080, name: web}, {containerPort: 53, protocol: UDP, name: dns}]
"""

A_TO_B = "a/client[Pod] => b/server[Pod]"
B_TO_A = "b/server[Pod] => a/client[Pod]"


def anp(name: str, priority: int, ingress: str = "", egress: str = "",
        subject: str = "{namespaces: {matchLabels: {team: y}}}") -> str:
    body = (f"---\napiVersion: policy.networking.k8s.io/v1alpha1\nkind: AdminNetworkPolicy\n"
            f"metadata: {{name: {name}}}\nspec:\n  priority: {priority}\n  subject: {subject}\n")
    if ingress:
        body += "  ingress:\n" + ingress
    if egress:
        body += "  egress:\n" + egress
    return body


def banp(ingress: str = "", egress: str = "", name: str = "default") -> str:
    body = (f"---\napiVersion: policy.networking.k8s.io/v1alpha1\nkind: BaselineAdminNetworkPolicy\n"
            f"metadata: {{name: {name}}}\nspec:\n  subject: {{namespaces: {{}}}}\n")
    if ingress:
        body += "  ingress:\n" + ingress
    if egress:
        body += "  egress:\n" + egress
    return body


FROM_A = "    from: [{namespaces: {matchLabels: {team: x}}}]\n"


def rule(name: str, action: str, peers: str = FROM_A, ports: str = "") -> str:
    return f"  - name: {name}\n    action: {action}\n{peers}" + (f"    ports: {ports}\n" if ports else "")


DENY_ALL_NP = """\
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-all, namespace: b}
spec: {podSelector: {}, policyTypes: [Ingress]}
"""

ALLOW_8080_NP = """\
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-8080, namespace: b}
spec:
  podSelector: {}
  ingress: [{ports: [{port: 8080}]}]
"""


def conns(lines: set[str], pair: str) -> str | None:
    return next((line.split(" : ")[1] for line in lines if line.startswith(pair + " : ")), None)


def test_anp_deny_overrides_a_networkpolicy_allow(connections):
    lines = connections(PODS + ALLOW_8080_NP + anp("deny", 10, rule("deny-a", "Deny")))
    assert conns(lines, A_TO_B) is None
    assert conns(lines, B_TO_A) == "All Connections"


def test_anp_allow_overrides_a_networkpolicy_deny(connections):
    lines = connections(PODS + DENY_ALL_NP + anp("allow", 10, rule("allow-a", "Allow",
                                                                    ports="[{portNumber: {protocol: TCP, port: 9000}}]")))
    assert conns(lines, A_TO_B) == "TCP 9000"


def test_lower_priority_number_wins(connections):
    text = (PODS + anp("second", 20, rule("allow-a", "Allow"))
            + anp("first", 5, rule("deny-a", "Deny", ports="[{portRange: {protocol: TCP, start: 1, end: 100}}]")))
    assert conns(connections(text), A_TO_B) == "SCTP 1-65535,TCP 101-65535,UDP 1-65535"


def test_rules_of_one_anp_are_ordered(connections):
    text = PODS + anp("ordered", 10, rule("allow-80", "Allow", ports="[{portNumber: {port: 80, protocol: TCP}}]")
                      + rule("deny-rest", "Deny"))
    assert conns(connections(text), A_TO_B) == "TCP 80"


def test_pass_delegates_to_networkpolicy_then_baseline(connections):
    passing = anp("pass", 10, rule("pass-a", "Pass"))
    # a NetworkPolicy selects the pod: it decides what was passed
    assert conns(connections(PODS + ALLOW_8080_NP + passing), A_TO_B) == "TCP 8080"
    # none selects it: the baseline decides
    text = PODS + passing + banp(rule("deny-a", "Deny", ports="[{portNumber: {port: 22, protocol: TCP}}]"))
    assert conns(connections(text), A_TO_B) == "SCTP 1-65535,TCP 1-21,23-65535,UDP 1-65535"


def test_baseline_applies_only_where_no_networkpolicy_selects(connections):
    deny_all = banp(rule("deny-a", "Deny"))
    assert conns(connections(PODS + deny_all), A_TO_B) is None
    assert conns(connections(PODS + ALLOW_8080_NP + deny_all), A_TO_B) == "TCP 8080"


def test_named_port_takes_the_container_ports_protocol(connections):
    text = PODS + anp("named", 10, rule("allow-dns", "Allow", ports="[{namedPort: dns}]")
                      + rule("deny-rest", "Deny"))
    assert conns(connections(text), A_TO_B) == "UDP 53"


def test_egress_networks_and_pod_peers(connections):
    egress = rule("deny-net", "Deny", peers="    to: [{networks: [192.0.2.0/24]}]\n") + rule(
        "deny-b", "Deny", peers="    to: [{pods: {namespaceSelector: {matchLabels: {team: y}}, "
                                "podSelector: {matchLabels: {app: server}}}}]\n")
    lines = connections(PODS + anp("egress", 10, egress=egress,
                                   subject="{pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: client}}}}"))
    assert conns(lines, A_TO_B) is None
    assert conns(lines, "a/client[Pod] => 192.0.2.0-192.0.2.255[External]") is None
    assert conns(lines, "a/client[Pod] => 0.0.0.0-192.0.1.255[External]") == "All Connections"
    assert conns(lines, B_TO_A) == "All Connections"


def test_nodes_peer_matches_the_addresses_of_matching_nodes(connections):
    node = ("---\napiVersion: v1\nkind: Node\nmetadata: {name: w1, labels: {role: infra}}\n"
            "status: {addresses: [{type: InternalIP, address: 10.0.0.7}]}\n")
    egress = rule("deny-infra", "Deny", peers="    to: [{nodes: {matchLabels: {role: infra}}}]\n")
    lines = connections(PODS + node + anp("nodes", 10, egress=egress,
                                          subject="{namespaces: {matchLabels: {team: x}}}"))
    assert conns(lines, "a/client[Pod] => 10.0.0.7-10.0.0.7[External]") is None
    assert conns(lines, "a/client[Pod] => 10.0.0.8-255.255.255.255[External]") == "All Connections"


def test_nodes_peer_without_nodes_in_the_input_matches_nothing_and_warns(manifests):
    egress = rule("deny-infra", "Deny", peers="    to: [{nodes: {matchLabels: {role: infra}}}]\n")
    result = connection_list(manifests(PODS + anp("nodes", 10, egress=egress,
                                                  subject="{namespaces: {matchLabels: {team: x}}}")))
    assert "a/client[Pod] => 0.0.0.0-255.255.255.255[External] : All Connections" in result.lines()
    assert any("holds no Node objects" in d.message for d in result.diagnostics)


def test_invalid_policies_are_reported_and_ignored(manifests):
    text = (PODS + anp("bad-action", 10, rule("r", "Reject"))
            + anp("bad-priority", 1001, rule("r", "Deny"))
            + banp(rule("r", "Deny"), name="not-default"))
    result = connection_list(manifests(text))
    errors = sorted(d.message for d in result.diagnostics if d.severity == "error")
    assert len(errors) == 3
    assert any("action 'Reject' is not one of Allow, Deny, Pass" in e for e in errors)
    assert any("priority 1001 is outside 0-1000" in e for e in errors)
    assert any("must be named 'default'" in e for e in errors)
    assert f"{A_TO_B} : All Connections" in result.lines()


def test_equal_priorities_warn(manifests):
    text = PODS + anp("one", 10, rule("r", "Deny")) + anp("two", 10, rule("r", "Allow"))
    result = connection_list(manifests(text))
    assert any("same priority 10" in d.message for d in result.diagnostics)
    assert f"{A_TO_B} : All Connections" not in result.lines()  # "one" comes first


def test_evidence_names_the_tier_the_object_and_the_rule(manifests):
    inventory = manifests(PODS + ALLOW_8080_NP + anp("guard", 10, rule("pass-a", "Pass")
                                                     + rule("deny-b", "Deny")))
    graph = build_reachability(inventory)
    reach = graph.can_reach("a/client", "b/server", 8080)
    assert reach.allowed
    ingress = next(e for e in reach.evidence if "ingress" in e.summary)
    assert ingress.layer == "network-policy"
    assert "allowed by NetworkPolicy b/allow-8080 ingress rule #1" in ingress.summary
    assert "passed on by AdminNetworkPolicy guard (priority 10) ingress rule 'pass-a' (Pass)" in ingress.summary

    inventory = manifests(PODS + anp("guard", 10, rule("deny-a", "Deny")), "deny.yaml")
    reach = build_reachability(inventory).can_reach("a/client", "b/server", 8080)
    assert not reach.allowed
    blocker = reach.paths[0].blocked_by
    assert blocker.layer == "admin-network-policy"
    assert ("ingress of b/server[Pod] denied for a/client[Pod] on TCP/8080 by AdminNetworkPolicy "
            "guard (priority 10) ingress rule 'deny-a' (Deny)") in blocker.summary
    assert blocker.path.endswith("deny.yaml") and blocker.line


def test_baseline_evidence(manifests):
    inventory = manifests(PODS + banp(rule("deny-a", "Deny")))
    blocker = build_reachability(inventory).can_reach("a/client", "b/server", 80).paths[0].blocked_by
    assert blocker.layer == "baseline-admin-network-policy"
    assert "BaselineAdminNetworkPolicy default ingress rule 'deny-a' (Deny)" in blocker.summary


def test_query_from_the_cli_names_the_anp(run_cli, tmp_path):
    (tmp_path / "m.yaml").write_text(PODS + anp("guard", 10, rule("deny-a", "Deny")))
    result = run_cli("connectivity", "--no-progress", str(tmp_path), "--to", "b/server",
                     "--port", "8080", "--from", "a/client")
    assert result.code == 0, result.err
    assert "CANNOT reach" in result.out
    assert "admin-network-policy blocks" in result.out and "'deny-a'" in result.out
