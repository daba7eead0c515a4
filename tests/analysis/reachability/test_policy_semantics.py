"""NetworkPolicy semantics, one corner per test, through the connection list."""

from __future__ import annotations

from hcpscan.analysis.reachability.connlist import connection_list

NS = """\
apiVersion: v1
kind: Namespace
metadata: {name: %s, labels: {team: %s}}
---
"""


def pod(name: str, ns: str = "default", labels: str = "", ports: str = "", extra: str = "") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {ns}
  labels: {{app: {name}{', ' + labels if labels else ''}}}
spec:
  {extra}
  containers:
  - name: main
    image: example
    ports: [{ports}]
---
"""


def policy(name: str, spec: str, ns: str = "default") -> str:
    return f"""\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {{name: {name}, namespace: {ns}}}
spec:
{spec}
---
"""


CLIENT_SERVER = pod("client") + pod("server", ports="{containerPort: 8080, name: http}")
EXTERNAL = "0.0.0.0-255.255.255.255[External]"


def test_no_policy_means_everything_is_open(connections):
    assert connections(CLIENT_SERVER) == {
        "default/client[Pod] => default/server[Pod] : All Connections",
        "default/server[Pod] => default/client[Pod] : All Connections",
        f"{EXTERNAL} => default/client[Pod] : All Connections",
        f"{EXTERNAL} => default/server[Pod] : All Connections",
        f"default/client[Pod] => {EXTERNAL} : All Connections",
        f"default/server[Pod] => {EXTERNAL} : All Connections",
    }


def test_policy_without_policy_types_isolates_ingress_only(connections):
    deny = policy("deny", "  podSelector: {matchLabels: {app: server}}")
    lines = connections(CLIENT_SERVER + deny)
    assert "default/client[Pod] => default/server[Pod] : All Connections" not in lines
    assert f"default/server[Pod] => {EXTERNAL} : All Connections" in lines
    assert "default/server[Pod] => default/client[Pod] : All Connections" in lines


def test_policy_with_egress_rules_and_no_policy_types_isolates_egress_too(connections):
    spec = """\
  podSelector: {matchLabels: {app: client}}
  egress:
  - to: [{podSelector: {matchLabels: {app: server}}}]
    ports: [{port: 8080}]"""
    lines = connections(CLIENT_SERVER + policy("egress-only", spec))
    assert "default/client[Pod] => default/server[Pod] : TCP 8080" in lines
    assert f"default/client[Pod] => {EXTERNAL} : All Connections" not in lines
    # ingress of the client is isolated too (policyTypes default includes Ingress)
    assert "default/server[Pod] => default/client[Pod] : All Connections" not in lines


def test_explicit_egress_policy_type_ignores_ingress_rules(connections):
    spec = """\
  podSelector: {matchLabels: {app: server}}
  policyTypes: [Egress]
  ingress:
  - ports: [{port: 1}]"""
    lines = connections(CLIENT_SERVER + policy("egress-type", spec))
    assert "default/client[Pod] => default/server[Pod] : All Connections" in lines
    assert f"default/server[Pod] => {EXTERNAL} : All Connections" not in lines


def test_connection_needs_egress_of_source_and_ingress_of_destination(connections):
    egress = """\
  podSelector: {matchLabels: {app: client}}
  policyTypes: [Egress]
  egress:
  - to: [{podSelector: {matchLabels: {app: server}}}]
    ports: [{port: 8080}, {port: 9090}]"""
    ingress = """\
  podSelector: {matchLabels: {app: server}}
  ingress:
  - from: [{podSelector: {matchLabels: {app: client}}}]
    ports: [{port: 8080}, {port: 7070}]"""
    lines = connections(CLIENT_SERVER + policy("out", egress) + policy("in", ingress))
    assert "default/client[Pod] => default/server[Pod] : TCP 8080" in lines
    assert not any(line.startswith("default/client[Pod] =>") and "9090" in line for line in lines)


def test_allow_rules_add_up_across_policies_so_an_except_can_be_reallowed(connections):
    narrow = """\
  podSelector: {matchLabels: {app: server}}
  ingress:
  - from: [{ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}}]"""
    wide = """\
  podSelector: {matchLabels: {app: server}}
  ingress:
  - from: [{ipBlock: {cidr: 10.1.0.0/16}}]
    ports: [{port: 8080}]"""
    lines = connections(CLIENT_SERVER + policy("narrow", narrow) + policy("wide", wide))
    assert "10.0.0.0-10.0.255.255[External] => default/server[Pod] : All Connections" in lines
    assert "10.1.0.0-10.1.255.255[External] => default/server[Pod] : TCP 8080" in lines
    assert "10.2.0.0-10.255.255.255[External] => default/server[Pod] : All Connections" in lines
    assert not any(line.startswith("0.0.0.0-9.255.255.255") and "server" in line for line in lines)


def test_udp_only_policy_isolates_tcp(connections):
    spec = """\
  podSelector: {matchLabels: {app: server}}
  ingress:
  - ports: [{port: 53, protocol: UDP}]"""
    lines = connections(CLIENT_SERVER + policy("dns-only", spec))
    assert "default/client[Pod] => default/server[Pod] : UDP 53" in lines
    assert f"{EXTERNAL} => default/server[Pod] : UDP 53" in lines


def test_named_port_resolves_with_matching_protocol_only(connections):
    server = pod("server", ports="{containerPort: 5353, name: dns, protocol: UDP}, "
                                 "{containerPort: 8080, name: web}")
    spec = """\
  podSelector: {matchLabels: {app: server}}
  ingress:
  - ports: [{port: dns, protocol: TCP}, {port: dns, protocol: UDP}, {port: web, protocol: SCTP}]"""
    lines = connections(pod("client") + server + policy("named", spec))
    assert "default/client[Pod] => default/server[Pod] : UDP 5353" in lines


def test_named_port_with_no_match_allows_nothing(connections):
    spec = """\
  podSelector: {matchLabels: {app: server}}
  ingress:
  - ports: [{port: https}]"""
    lines = connections(CLIENT_SERVER + policy("named", spec))
    assert not any("=> default/server[Pod]" in line for line in lines)


def test_end_port_range_and_sctp(connections):
    spec = """\
  podSelector: {matchLabels: {app: server}}
  ingress:
  - ports: [{port: 30000, endPort: 30010}, {port: 7000, protocol: SCTP}]"""
    lines = connections(CLIENT_SERVER + policy("range", spec))
    assert "default/client[Pod] => default/server[Pod] : SCTP 7000,TCP 30000-30010" in lines


def test_both_selectors_in_one_peer_intersect_separate_peers_unite(connections):
    base = NS % ("prod", "a") + NS % ("dev", "b") + pod("server", "prod") + pod(
        "api", "prod") + pod("api", "dev") + pod("web", "dev")
    together = """\
  podSelector: {matchLabels: {app: server}}
  ingress:
  - from:
    - namespaceSelector: {matchLabels: {team: b}}
      podSelector: {matchLabels: {app: api}}"""
    lines = connections(base + policy("together", together, "prod"))
    sources = {line.split(" => ")[0] for line in lines if "=> prod/server[Pod]" in line}
    assert sources == {"dev/api[Pod]"}
    apart = """\
  podSelector: {matchLabels: {app: server}}
  ingress:
  - from:
    - namespaceSelector: {matchLabels: {team: b}}
    - podSelector: {matchLabels: {app: api}}"""
    lines = connections(base + policy("apart", apart, "prod"))
    sources = {line.split(" => ")[0] for line in lines if "=> prod/server[Pod]" in line}
    assert sources == {"dev/api[Pod]", "dev/web[Pod]", "prod/api[Pod]"}


def test_empty_namespace_selector_means_every_namespace_but_no_outside(connections):
    base = NS % ("prod", "a") + NS % ("dev", "b") + pod("server", "prod") + pod("api", "dev")
    spec = """\
  podSelector: {}
  ingress:
  - from: [{namespaceSelector: {}}]"""
    lines = connections(base + policy("cluster-only", spec, "prod"))
    assert "dev/api[Pod] => prod/server[Pod] : All Connections" in lines
    assert not any(line.endswith("prod/server[Pod] : All Connections") and "External" in line
                   for line in lines)


def test_namespace_selector_sees_the_automatic_name_label(connections):
    base = pod("server", "prod") + pod("api", "dev")
    spec = """\
  podSelector: {}
  ingress:
  - from: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: dev}}}]"""
    lines = connections(base + policy("by-name", spec, "prod"))
    assert "dev/api[Pod] => prod/server[Pod] : All Connections" in lines


def test_ipblock_does_not_select_pods_unless_asked(connections):
    server = pod("server", ports="{containerPort: 8080}")
    client = pod("client").replace("spec:\n", "spec:\n  hostNetwork: false\n", 1) + (
        "status: {podIP: 10.128.0.5, podIPs: [{ip: 10.128.0.5}]}\n---\n")
    client = client.replace("---\nstatus", "status", 1)
    spec = """\
  podSelector: {matchLabels: {app: server}}
  ingress:
  - from: [{ipBlock: {cidr: 10.128.0.0/14}}]"""
    text = client + server + policy("pods-by-ip", spec)
    assert not any(line.startswith("default/client[Pod] => default/server") for line in connections(text))
    assert "default/client[Pod] => default/server[Pod] : All Connections" in connections(
        text, ipblock_selects_pods=True)


def test_host_network_pods_can_be_exempted(connections):
    node_agent = pod("agent", extra="hostNetwork: true")
    spec = "  podSelector: {}\n  policyTypes: [Ingress]"
    text = pod("client") + node_agent + policy("deny-all", spec)
    assert not any("=> default/agent[Pod]" in line for line in connections(text))
    assert "default/client[Pod] => default/agent[Pod] : All Connections" not in connections(text)
    assert f"{EXTERNAL} => default/agent[Pod] : All Connections" in connections(
        text, host_network_exempt=True)


def test_rule_without_from_admits_outside_and_every_namespace(connections):
    base = pod("server", "prod", ports="{containerPort: 6443}") + pod("api", "dev")
    spec = """\
  podSelector: {matchLabels: {app: server}}
  ingress:
  - ports: [{port: 6443}]"""
    lines = connections(base + policy("kas", spec, "prod"))
    assert f"{EXTERNAL} => prod/server[Pod] : TCP 6443" in lines
    assert "dev/api[Pod] => prod/server[Pod] : TCP 6443" in lines


def test_invalid_policies_become_diagnostics_and_are_ignored(manifests):
    bad = policy("bad-operator", """\
  podSelector: {matchExpressions: [{key: app, operator: Equals, values: [server]}]}
  ingress: []""") + policy("mixed-peer", """\
  podSelector: {}
  ingress:
  - from: [{ipBlock: {cidr: 10.0.0.0/8}, podSelector: {}}]""") + policy("except-outside", """\
  podSelector: {}
  ingress:
  - from: [{ipBlock: {cidr: 10.0.0.0/8, except: [192.168.0.0/16]}}]""") + policy("named-range", """\
  podSelector: {}
  ingress:
  - ports: [{port: http, endPort: 90}]""") + policy("icmp", """\
  podSelector: {}
  ingress:
  - ports: [{port: 1, protocol: ICMP}]""")
    text = CLIENT_SERVER + bad
    result = connection_list(manifests(text))
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert len(errors) == 5
    assert all("is invalid and is ignored" in d.message for d in errors)
    operator = next(d for d in errors if "bad-operator" in d.message)
    assert "unknown operator 'Equals'" in operator.message
    operator_line = next(i for i, line in enumerate(text.splitlines(), 1) if "Equals" in line)
    assert operator.line == operator_line  # the field's own line, not the document start
    # ignored policies isolate nothing
    assert "default/client[Pod] => default/server[Pod] : All Connections" in result.lines()


def test_policies_of_another_api_group_are_not_evaluated(manifests):
    calico = """\
apiVersion: crd.projectcalico.org/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: default}
spec: {selector: all()}
"""
    result = connection_list(manifests(CLIENT_SERVER + calico))
    # not silently: a warning, and the list says what it leaves out
    assert any(d.severity == "warning" and "1 Calico NetworkPolicy object" in d.message
               and "default/deny" in d.message for d in result.diagnostics)
    assert "Calico NetworkPolicy (crd.projectcalico.org/v1): default/deny" in result.exclusion_note
    assert "default/client[Pod] => default/server[Pod] : All Connections" in result.lines()
