"""Required flows: the catalog covers the seed tables, the path graph decides each flow
with the exact engines, and the rules and the path query give the same answer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import networkx as nx
import pytest

from hcpscan.analysis.reachability.graph import ReachabilityGraph
from hcpscan.analysis.reachability.paths import PathGraph
from hcpscan.analysis.reachability.perimeter import load_perimeter
from hcpscan.analysis.reachability.required import BLOCKED, OPEN, UNKNOWN, evaluate_flow
from hcpscan.cli.connectivity_paths import path_answers
from hcpscan.findings.model import Status
from hcpscan.inventory import Inventory
from hcpscan.model.flows import FlowError, flow_by_id, load_flows
from hcpscan.model.hostedcluster import hosted_clusters
from hcpscan.rules.config import ScanConfig
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES
from tests.rules.harness import scan

HCP007 = FIXTURES / "rules" / "HCP007"
HCP008 = FIXTURES / "rules" / "HCP008"
EXTRA = FIXTURES / "required-flows"


def _inventory(*paths: Path) -> Inventory:
    result = load_paths([str(p) for p in paths])
    return Inventory(result.objects, result.diagnostics, result.skipped)


# -- the catalog ------------------------------------------------------------------------


def test_every_port_of_the_seed_tables_has_a_flow():
    """Seed 001 Tables 14.1-14.5 and seed 002: each (port, protocol) a flow must carry."""
    flows = load_flows()
    ports: set[tuple[object, str]] = set()
    for flow in flows:
        for target in flow.targets:
            protocols = flow.dns_protocols if target.named == "dns" else flow.protocols
            for protocol in protocols:
                ports.add((target.port if target.named != "dns" else 53, protocol))
    for needed in [("kas", "TCP"), (9090, "TCP"), (8443, "TCP"), (8091, "TCP"), (8080, "TCP"),
                   (443, "TCP"), (6443, "TCP"), (9440, "TCP"), (8081, "TCP"), (53, "TCP"), (53, "UDP")]:
        assert needed in ports, needed
    for flow in flows:
        assert flow.seed, flow.id
        assert flow.check != "none" or flow.reason, flow.id


def test_every_checkable_flow_is_checked_by_a_built_in_rule():
    from hcpscan.rules.loader import builtin_rules_dir, load_rule_dirs

    rules = {r.id: r for r in load_rule_dirs([builtin_rules_dir()])}
    for flow in load_flows():
        if flow.check == "none":
            continue
        rule = rules[flow.checked_by]
        if rule.template == "required-flow":
            assert flow.id in rule.params["flows"], (flow.id, rule.id)


def test_a_users_catalog_with_a_mistake_names_file_and_line(tmp_path: Path):
    path = tmp_path / "flows.yaml"
    path.write_text("flows:\n- id: a\n  title: t\n  from: workers\n  to: [{app: x}]\n"
                    "  check: ingress\n  seed: [mine]\n")
    with pytest.raises(FlowError, match=r"flows.yaml:2: `to` app 'x' needs a port"):
        load_flows(path)
    path.write_text("flows: [\n")
    with pytest.raises(FlowError, match=r"flows.yaml:\d+: not YAML"):
        load_flows(path)


def test_a_users_flow_is_judged_like_a_built_in_one(tmp_path: Path):
    path = tmp_path / "flows.yaml"
    path.write_text("flows:\n- id: workers-to-kas-metrics\n  title: t\n  from: workers\n"
                    "  to: [{app: kube-apiserver, port: 8091}]\n  check: ingress\n  seed: [mine]\n")
    (flow,) = load_flows(path)
    inventory = _inventory(HCP007 / "fail" / "konnectivity-lb.yaml")
    (hc,) = hosted_clusters(inventory)
    (result,) = evaluate_flow(inventory, ReachabilityGraph(inventory), PathGraph(), hc, flow, [])
    assert result.status == BLOCKED
    assert result.missing == ["TCP 8091 from 10.10.0.0/24"]


# -- verdicts and the path query agree ---------------------------------------------------


@pytest.mark.parametrize("folder", [HCP007 / "fail", HCP007 / "pass"], ids=["fail", "pass"])
def test_a_flows_verdict_and_the_path_query_agree(folder: Path):
    inventory = _inventory(folder)
    rule_graph = ReachabilityGraph(inventory)
    flows = [f for f in load_flows() if f.check == "ingress"]
    asked = 0
    for hc in hosted_clusters(inventory):
        for flow in flows:
            for result in evaluate_flow(inventory, rule_graph, PathGraph(), hc, flow, []):
                if result.status not in (OPEN, BLOCKED):
                    continue
                for answer in result.answers:  # asked again, from scratch, as the CLI does
                    query = path_answers(inventory, ReachabilityGraph(inventory), PathGraph(),
                                         answer.origin.removeprefix("range "),
                                         f"{result.workload.namespace}/{result.workload.name}",
                                         answer.port, answer.protocol)
                    assert [(q.open, q.blocked_by) for q in query] == \
                        [(answer.open, answer.blocked_by)]
                    asked += 1
    assert asked >= 4


def test_the_fail_fixtures_name_the_blocking_object_and_line():
    report = scan([HCP007 / "fail"], ["HCP007"])
    by_flow = {f.facts["flow"]: f for f in report.findings
               if not f.location.path.endswith("-annotation.yaml")}
    lb = by_flow["workers-to-konnectivity"]
    hop = lb.facts["blocking_hop"]
    assert hop["layer"] == "service" and hop["path"].endswith("konnectivity-lb.yaml")
    assert hop["line"] == 48  # the loadBalancerSourceRanges line, not the port entry
    assert lb.facts["missing"] == ["TCP 8091 from 10.10.0.0/24"]
    assert lb.facts["workload"] == "clusters-edge/kube-apiserver[Deployment]"
    assert "workers cannot reach clusters-edge/kube-apiserver[Deployment] port 8091" in lb.message
    router = by_flow["workers-to-private-router"]
    assert router.facts["missing"] == ["TCP 8443 from 10.40.0.0/16", "TCP 8080 from 10.40.0.0/16"]
    assert "default-deny-ingress" in router.facts["blocking_hop"]["summary"]
    # the ranges in the legacy annotation: the hop is written at the annotation's line
    annotated, = [f for f in report.findings if f.location.path.endswith("-annotation.yaml")]
    hop = annotated.facts["blocking_hop"]
    assert hop["layer"] == "service" and hop["line"] == 45
    assert annotated.facts["missing"] == ["TCP 8091 from 10.11.0.0/24"]


def test_dns_on_one_protocol_says_which_is_blocked_and_which_open():
    report = scan([HCP008 / "fail" / "dns-one-protocol.yaml"], ["HCP008"])
    (finding,) = report.findings
    assert finding.facts["missing"] == ["TCP 5353 to dns"]
    assert finding.facts["allowed"] == ["UDP 5353 to dns"]
    assert finding.facts["blocking_hop"]["line"] == 35  # NetworkPolicy egress-allowlist


# -- the perimeter and the reports -------------------------------------------------


def test_a_security_group_admitting_workers_to_6443_only_shuts_konnectivity_and_ignition():
    config = ScanConfig(firewall=EXTRA / "sg-kas-only.yaml")
    folder = HCP007 / "pass"  # the HostedClusters' files (not their copies' namespace dumps)
    report = scan(sorted(folder.glob("*.yaml")), ["HCP007"], config)
    flows = sorted(f.facts["flow"] for f in report.findings)
    # the private cluster's workers (10.40.0.0/16) are not in the group at all
    assert flows == ["workers-to-ignition", "workers-to-konnectivity", "workers-to-oauth",
                     "workers-to-private-router"]
    for finding in report.findings:
        assert finding.facts["blocking_hop"]["layer"] == "perimeter"
        assert finding.facts["blocking_hop"]["path"].endswith("sg-kas-only.yaml")
    without = scan([folder], ["HCP007"])
    assert without.results[0].status is Status.PASS


def test_dns_only_to_openshift_dns_is_blocked_on_a_vanilla_management_cluster():
    """HyperShift issue 1905: kube-dns pods listen on 53, the policy opens 5353 only."""
    report = scan([EXTRA / "vanilla-dns"], ["HCP008"])
    by_workload = {f.facts["workload"]: f for f in report.findings}
    kas = by_workload["clusters-vanilla/kube-apiserver[Deployment]"]
    assert kas.facts["missing"] == ["TCP 53 to dns", "UDP 53 to dns"]
    assert "kas-egress" in kas.facts["blocking_hop"]["summary"]


_DNS_EGRESS = """
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: kas-egress
  namespace: clusters-vanilla
spec:
  podSelector:
    matchLabels: {app: kube-apiserver}
  policyTypes: [Egress]
  egress:
  - to: [%s]
    ports:
    - {port: 53, protocol: UDP}
    - {port: 53, protocol: TCP}
"""

_DENY_DNS = """
---
apiVersion: policy.networking.k8s.io/v1alpha1
kind: AdminNetworkPolicy
metadata:
  name: no-dns
spec:
  priority: 10
  subject:
    namespaces: {matchLabels: {kubernetes.io/metadata.name: clusters-vanilla}}
  egress:
  - name: deny-dns
    action: Deny
    to:
    - namespaces: {}
    ports:
    - portNumber: {protocol: UDP, port: 53}
    - portNumber: {protocol: TCP, port: 53}
"""


@pytest.mark.parametrize(("extra", "missing", "blocker"), [
    # port 53 is right, but openshift-dns does not exist on a vanilla management cluster
    (_DNS_EGRESS % "{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: openshift-dns}}}",
     ["TCP 53 to dns", "UDP 53 to dns"], "kas-egress"),
    # a podSelector alone selects the HCP namespace's own pods, not kube-system's DNS pods
    (_DNS_EGRESS % "{podSelector: {}}", ["TCP 53 to dns", "UDP 53 to dns"], "kas-egress"),
    # an AdminNetworkPolicy denies DNS before any NetworkPolicy has a say
    (_DENY_DNS, ["TCP 53 to dns", "UDP 53 to dns"], "AdminNetworkPolicy no-dns"),
    # towards kube-system (or every namespace) DNS gets through
    (_DNS_EGRESS % "{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}},"
                   " podSelector: {matchLabels: {k8s-app: kube-dns}}}", [], ""),
    (_DNS_EGRESS % "{namespaceSelector: {}}", [], ""),
], ids=["openshift-dns-namespace", "own-namespace", "anp-deny", "kube-system", "any-namespace"])
def test_dns_counts_only_rules_whose_peers_select_the_dns_pods(tmp_path: Path, extra: str,
                                                               missing: list[str], blocker: str):
    """The egress rule must select the DNS pods (their namespace and labels), in every
    tier: a rule on port 53 towards another namespace, or the policy's own, lets no DNS
    through, and an AdminNetworkPolicy Deny shuts it whatever NetworkPolicy says."""
    text = (EXTRA / "vanilla-dns" / "hcp.yaml").read_text()
    (tmp_path / "hcp.yaml").write_text(text[:text.index("---\napiVersion: networking.k8s.io/v1")]
                                       + extra.lstrip("\n-").join(["---\n", ""]))
    report = scan([tmp_path], ["HCP008"])
    found = {f.facts["workload"]: f for f in report.findings if f.facts.get("flow") == "hcp-dns"}
    kas = found.get("clusters-vanilla/kube-apiserver[Deployment]")
    if not missing:
        assert kas is None
        return
    assert kas is not None
    assert kas.facts["missing"] == missing
    assert blocker in kas.facts["blocking_hop"]["summary"]
    assert kas.facts["blocking_hop"]["path"].endswith("hcp.yaml")


def test_a_flow_without_its_input_is_not_evaluable_naming_it(tmp_path: Path):
    hc = (HCP008 / "fail" / "dns-one-protocol.yaml").read_text().split("---")[0]
    (tmp_path / "hc.yaml").write_text(hc)
    report = scan([tmp_path], ["HCP008"])
    assert report.results[0].status is Status.NOT_EVALUABLE
    assert "HCP namespace clusters-dns is not in the input" in report.results[0].reason
    inventory = _inventory(tmp_path)
    (result,) = evaluate_flow(inventory, ReachabilityGraph(inventory), PathGraph(),
                              hosted_clusters(inventory)[0], flow_by_id("hcp-dns"), [])
    assert result.status == UNKNOWN


def test_from_git_alone_the_declared_way_and_the_perimeter_decide(tmp_path: Path):
    """A HostedCluster without its HCP namespace: the LoadBalancer HyperShift makes for
    Konnectivity admits anyone, so the workers get in unless the perimeter shuts them."""
    hc = (HCP007 / "fail" / "konnectivity-lb.yaml").read_text().split("---")[0]
    (tmp_path / "hc.yaml").write_text(hc)
    assert scan([tmp_path], ["HCP007"]).results[0].status is Status.PASS
    walled = scan([tmp_path], ["HCP007"], ScanConfig(firewall=EXTRA / "sg-kas-only.yaml"))
    (finding,) = walled.findings
    assert finding.facts["blocking_hop"]["layer"] == "perimeter"
    assert finding.facts["missing"] == ["TCP 8091 from 10.10.0.0/24"]
    assert finding.location.line == 17  # the Konnectivity entry of spec.services


# -- the graph and its export --------------------------------------------------------------


def test_the_path_graph_exports_through_networkx_writers(tmp_path: Path):
    inventory = _inventory(HCP007 / "fail")
    paths = PathGraph()
    graph = ReachabilityGraph(inventory, load_perimeter(EXTRA / "sg-kas-only.yaml"))
    for hc in hosted_clusters(inventory):
        for flow in load_flows():
            evaluate_flow(inventory, graph, paths, hc, flow, [])
    assert paths.graph.number_of_edges() > 0
    paths.write(tmp_path / "g.graphml")
    back = nx.read_graphml(tmp_path / "g.graphml")
    assert back.number_of_edges() == paths.graph.number_of_edges()
    paths.write(tmp_path / "g.json")
    doc = json.loads((tmp_path / "g.json").read_text())
    assert nx.node_link_graph(doc, edges="edges").number_of_nodes() == paths.graph.number_of_nodes()
    paths.write(tmp_path / "g.dot")
    dot = (tmp_path / "g.dot").read_text()
    assert dot.startswith("digraph paths {") and "color=red" in dot


def test_the_path_graph_is_built_only_when_a_rule_asks(tmp_path: Path):
    from hcpscan.rules.context import REQUIRED_FLOWS, Context

    ctx = Context(_inventory(HCP007 / "fail"))
    assert ctx.built(REQUIRED_FLOWS) is None
    assert ctx.flow_index().paths.graph.number_of_edges() == 0


def test_hcp002_asks_the_same_graph_the_other_way_round():
    """The issue's report: the load balancer admits the admins' network, not the workers.
    HCP002 (who gets in) says the workers cannot reach konnectivity, as HCP007 does."""
    report = scan([HCP007 / "fail" / "konnectivity-lb.yaml"], ["HCP002", "HCP007"])
    by_rule = {f.rule_id: f for f in report.findings}
    assert "is reachable from 192.168.50.0/24" in by_rule["HCP002"].message
    assert "workers cannot reach konnectivity (TCP 8091 from 10.10.0.0/24)" in by_rule["HCP002"].message
    assert by_rule["HCP007"].facts["blocking_hop"]["line"] == 48  # loadBalancerSourceRanges
    # the flow's first table row, with its public document named (never a bare number)
    assert ("workers-to-konnectivity: Worker nodes open the konnectivity tunnel; documented in "
            "OpenShift 'Networking for hosted control planes' §14.1.2 Table 14.5") in by_rule["HCP007"].evidence[0]
    passing = scan([HCP007 / "pass" / "konnectivity-lb.yaml"], ["HCP002"])
    assert all("workers cannot reach" not in f.message for f in passing.findings)


def test_a_router_shard_that_selects_the_hcp_routes_is_the_router_judged(tmp_path: Path):
    """The default router's namespaceSelector leaves the HCP namespaces out; the `hcp`
    shard's routeSelector picks HyperShift's Routes: its allowedSourceRanges decide."""
    folder = EXTRA / "router-shard"
    assert scan([folder], ["HCP001", "HCP002"]).results[0].status is Status.PASS
    opened = (folder / "hostedcluster.yaml").read_text().replace(
        "      allowedSourceRanges: [10.70.0.0/24]\n", "")
    (tmp_path / "hc.yaml").write_text(opened)
    report = scan([tmp_path], ["HCP001"])
    (finding,) = report.findings
    assert "router shard hcp serves it" in " ".join(finding.evidence)
    assert "IngressController openshift-ingress-operator/hcp" in " ".join(finding.evidence)


def test_the_routers_allowed_source_ranges_bound_a_route(tmp_path: Path):
    folder = EXTRA / "router-source-ranges"
    report = scan([folder], ["HCP007"])
    (finding,) = report.findings
    assert "IngressController openshift-ingress-operator/default" in finding.facts["blocking_hop"]["summary"]
    assert "admits only 192.168.0.0/24" in finding.facts["blocking_hop"]["summary"]
    # the hop is written where the ranges are to widen: the router's allowedSourceRanges
    assert finding.facts["blocking_hop"]["path"].endswith("ingresscontroller.yaml")
    assert finding.facts["blocking_hop"]["line"] == 9
    for name in ("hcp.yaml", "ingresscontroller.yaml"):
        (tmp_path / name).write_text((folder / name).read_text().replace(
            "allowedSourceRanges: [192.168.0.0/24]", "allowedSourceRanges: [192.168.0.0/24, 10.0.0.0/16]"))
    assert scan([tmp_path], ["HCP007"]).results[0].status is Status.PASS


def test_a_user_adds_a_flow_in_a_rule_of_their_own(tmp_path: Path):
    config = ScanConfig(rule_dirs=[EXTRA / "user-rules"])
    fixture = (HCP008 / "fail" / "dns-one-protocol.yaml").read_text()
    (tmp_path / "blocked").mkdir()
    (tmp_path / "blocked" / "hcp.yaml").write_text(fixture)
    report = scan([tmp_path / "blocked"], ["ACMEFLOW001"], config)
    (finding,) = report.findings
    assert finding.facts["flow"] == "cpo-to-proxy"
    assert finding.facts["missing"] == ["TCP 3128 to outside"]
    (tmp_path / "open").mkdir()
    (tmp_path / "open" / "hcp.yaml").write_text(fixture.replace(
        "    - {port: 443, protocol: TCP}\n", "    - {port: 443, protocol: TCP}\n    - {port: 3128, protocol: TCP}\n"))
    assert scan([tmp_path / "open"], ["ACMEFLOW001"], config).results[0].status is Status.PASS


def test_a_users_flow_definition_with_a_mistake_is_refused():
    from hcpscan.rules.templates import TEMPLATES

    template = TEMPLATES["required-flow"]
    problems = template.problems({"flows": ["mine"], "define": [
        {"id": "mine", "title": "t", "from": "workers", "to": [{"app": "x"}], "check": "ingress",
         "seed": ["s"]}]})
    assert any("needs a port" in text for _, text in problems)
    problems = template.problems({"flows": ["hcp-dns"], "define": [
        {"id": "hcp-dns", "title": "t", "from": "workers", "to": [{"named": "dns"}],
         "check": "egress", "seed": ["s"]}]})
    assert any("is the catalog's" in text for _, text in problems)


@pytest.mark.parametrize("folder", [FIXTURES / "rules" / "HCP003" / "fail",
                                    FIXTURES / "rules" / "HCP003" / "pass",
                                    FIXTURES / "rules" / "HCP003" / "git-alone" / "fail",
                                    FIXTURES / "rules" / "HCP003" / "git-alone" / "pass"],
                         ids=["fail", "pass", "git-alone-fail", "git-alone-pass"])
def test_hcp003_and_the_workers_to_kas_flow_never_disagree(folder: Path):
    """HCP003 (reach, all-allowed) and the catalog's workers-to-kas flow on the path graph
    answer the same question: blocked exactly where HCP003 fails."""
    report = scan([folder], ["HCP003"])
    failing = {f.object.name for f in report.findings}
    inventory = _inventory(folder)
    graph, flow = ReachabilityGraph(inventory), flow_by_id("workers-to-kas")
    judged = 0
    for hc in hosted_clusters(inventory):
        for result in evaluate_flow(inventory, graph, PathGraph(), hc, flow, []):
            if result.status in (OPEN, BLOCKED):
                assert (result.status == BLOCKED) == (hc.name in failing), hc.name
                judged += 1
    assert judged


def test_from_git_alone_a_route_behind_a_private_router_is_blocked_naming_it(tmp_path: Path):
    """Route publishing, the default router published Private, no HCP namespace in the
    input: the workers have no way in (not an AttributeError of the unpublished way)."""
    folder = EXTRA / "router-source-ranges"
    (tmp_path / "hc.yaml").write_text((folder / "hcp.yaml").read_text().split("\n---")[0] + "\n")
    (tmp_path / "ingresscontroller.yaml").write_text(
        (folder / "ingresscontroller.yaml").read_text().split("  endpointPublishingStrategy:")[0]
        + "  endpointPublishingStrategy:\n    type: Private\n")
    report = scan([tmp_path], ["HCP007"])
    assert not report.diagnostics
    (finding,) = report.findings
    assert "(not published outside)" in finding.message and "TCP 8091" in finding.message
    hop = finding.facts["blocking_hop"]
    assert "IngressController openshift-ingress-operator/default is published Private" in hop["summary"]
    assert finding.location.line == 12  # the Konnectivity entry's publishing strategy


_PRIVATE_KAS = """
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata: {name: priv, namespace: clusters}
spec:
  platform:
    type: AWS
    aws: {region: us-east-1, endpointAccess: Private}
  networking:
    machineNetwork: [{cidr: 10.40.0.0/16}]
  services:
  - service: APIServer
    servicePublishingStrategy: {type: LoadBalancer}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: kube-apiserver, namespace: clusters-priv}
spec:
  selector: {matchLabels: {app: kube-apiserver}}
  template:
    metadata: {labels: {app: kube-apiserver}}
    spec:
      containers:
      - name: kube-apiserver
        image: hyperkube
        ports: [{containerPort: 6443, name: client, protocol: TCP}]
---
apiVersion: v1
kind: Service
metadata:
  name: kube-apiserver-private
  namespace: clusters-priv
  annotations: {%s}
spec:
  type: LoadBalancer
  selector: {app: kube-apiserver}
  ports:
  - {name: client, port: 6443, targetPort: 6443, protocol: TCP}
"""

_SG_LB_PORT = """
apiVersion: hcpscan.io/v1
kind: Perimeter
metadata: {name: mgmt-sg}
default: deny
rules:
- name: load-balancer-port
  action: allow
  sources: [0.0.0.0/0]
  ports: [{protocol: TCP, port: 6443}]
"""


@pytest.mark.parametrize(("annotation", "status"), [
    ('service.beta.kubernetes.io/aws-load-balancer-internal: "true"', Status.PASS),
    ("service.beta.kubernetes.io/aws-load-balancer-scheme: internal", Status.PASS),
    ('service.beta.kubernetes.io/azure-load-balancer-internal: "true"', Status.PASS),
    ('service.beta.kubernetes.io/aws-load-balancer-internal: "false"', Status.FAIL),
    ("", Status.FAIL),
], ids=["aws-internal", "aws-lbc-scheme", "azure-internal", "aws-internal-false", "public"])
def test_an_internal_load_balancer_is_not_open_to_every_address(tmp_path: Path, annotation: str,
                                                                status: Status):
    """A Private HostedCluster's kube-apiserver-private is an internal load balancer: it
    has a private address, so the internet does not reach it whatever the security group
    admits on 6443 (HCP009 judged it open to every address)."""
    (tmp_path / "hcp.yaml").write_text(_PRIVATE_KAS % annotation)
    (tmp_path / "sg.yaml").write_text(_SG_LB_PORT)
    report = scan([tmp_path / "hcp.yaml"], ["HCP009"], ScanConfig(firewall=tmp_path / "sg.yaml"))
    assert report.results[0].status is status


@pytest.mark.parametrize(("ranges", "status"), [
    ("[0.0.0.0/0]", Status.FAIL), ('[0.0.0.0/0, "::/0"]', Status.FAIL),
    ("[0.0.0.0/1]", Status.PASS), ("[203.0.113.0/24]", Status.PASS),
], ids=["ipv4-all", "both-families", "half", "office"])
def test_a_source_range_of_the_whole_ipv4_internet_is_open_to_every_address(
        tmp_path: Path, ranges: str, status: Status):
    """loadBalancerSourceRanges / allowedCIDRBlocks of 0.0.0.0/0 narrow nothing: an IPv4
    load balancer has no IPv6 address to admit. HCP009 passed it, as if '::/0' missing
    were a restriction."""
    text = (_PRIVATE_KAS % "").replace("endpointAccess: Private", "endpointAccess: Public")
    text = text.replace("  type: LoadBalancer\n", "  type: LoadBalancer\n  allocateLoadBalancerNodePorts: "
                        f"false\n  loadBalancerSourceRanges: {ranges}\n")
    (tmp_path / "hcp.yaml").write_text(text)
    assert scan([tmp_path], ["HCP009"]).results[0].status is status
    hc = text.split("---")[0].replace("machineNetwork:", f"apiServer: {{allowedCIDRBlocks: {ranges}}}\n"
                                      "    machineNetwork:")
    (tmp_path / "hcp.yaml").write_text(hc)  # from Git alone: the HostedCluster's allowlist
    alone = scan([tmp_path], ["HCP009"])  # (not evaluable beside: no OAuthServer entry)
    assert (alone.results[0].status is Status.FAIL) == (status is Status.FAIL)
    assert all("APIServer" in f.message for f in alone.findings)


def test_a_router_with_an_internal_load_balancer_admits_private_addresses_only(tmp_path: Path):
    """IngressController endpointPublishingStrategy.loadBalancer.scope: Internal: the
    router's load balancer has a private address, so the internet does not get in."""
    folder = EXTRA / "router-source-ranges"
    (tmp_path / "hcp.yaml").write_text((folder / "hcp.yaml").read_text())
    (tmp_path / "ingresscontroller.yaml").write_text((folder / "ingresscontroller.yaml").read_text()
        .replace("scope: External", "scope: Internal")
        .replace("allowedSourceRanges: [192.168.0.0/24]", "allowedSourceRanges: [0.0.0.0/0]"))
    inventory = _inventory(tmp_path)
    graph = ReachabilityGraph(inventory)
    outside = graph.can_reach("8.8.8.0/24", "clusters-r/kube-apiserver", 8091)
    assert not any(p.allowed and p.via != "pod network" for p in outside.paths)
    workers = graph.can_reach("10.0.0.0/16", "clusters-r/kube-apiserver", 8091)
    assert any(p.allowed and p.via != "pod network" for p in workers.paths)


def test_dns_labels_the_input_does_not_show_never_block(tmp_path: Path):
    """Without the openshift-dns Namespace object its labels beyond the name are unknown,
    and without the DNS Service so are the pods': a selector on them may match, so DNS
    is not judged blocked on a guess."""
    hc = (HCP008 / "fail" / "dns-one-protocol.yaml").read_text().split("---")[0]
    (tmp_path / "hcp.yaml").write_text(hc + """---
apiVersion: v1
kind: Service
metadata: {name: dns-default, namespace: openshift-dns}
spec:
  selector: {dns.operator.openshift.io/daemonset-dns: default}
  ports: [{name: dns, port: 53, targetPort: 5353, protocol: UDP}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: kube-apiserver, namespace: clusters-dns}
spec:
  selector: {matchLabels: {app: kube-apiserver}}
  template:
    metadata: {labels: {app: kube-apiserver}}
    spec: {containers: [{name: kube-apiserver, image: hyperkube}]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: kas-egress, namespace: clusters-dns}
spec:
  podSelector: {matchLabels: {app: kube-apiserver}}
  policyTypes: [Egress]
  egress:
  - to:
    - namespaceSelector: {matchLabels: {name: openshift-dns}}
      podSelector: {matchLabels: {dns.operator.openshift.io/daemonset-dns: default, tier: dns}}
    ports: [{port: 5353, protocol: UDP}, {port: 5353, protocol: TCP}]
  - to:
    - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: openshift-dns}}
      podSelector: {matchLabels: {dns.operator.openshift.io/daemonset-dns: other}}
    ports: [{port: 5353, protocol: SCTP}]
""")
    inventory = _inventory(tmp_path)
    (result,) = evaluate_flow(inventory, ReachabilityGraph(inventory), PathGraph(),
                              hosted_clusters(inventory)[0], flow_by_id("hcp-dns"), [])
    assert result.status == OPEN, [str(a.blocked_by) for a in result.answers]
    # a label the input does show still decides: the SCTP rule selects other pods
    (tmp_path / "hcp.yaml").write_text((tmp_path / "hcp.yaml").read_text().replace(
        "name: openshift-dns}}\n      podSelector: {matchLabels: {dns.operator.openshift.io/daemonset-dns: default, tier: dns}}",
        "name: openshift-dns}}\n      podSelector: {matchLabels: {dns.operator.openshift.io/daemonset-dns: other}}"))
    inventory = _inventory(tmp_path)
    (result,) = evaluate_flow(inventory, ReachabilityGraph(inventory), PathGraph(),
                              hosted_clusters(inventory)[0], flow_by_id("hcp-dns"), [])
    assert result.status == BLOCKED


# -- guest pods → the hosted API server (guest-egress) -----------------------------------

HCP010 = FIXTURES / "rules" / "HCP010"


def test_a_standalone_egress_allowlist_shuts_guest_pods_out_of_the_hosted_api_server():
    """6443 only to openshift-kube-apiserver: the hosted cluster's API server is outside the
    guest, behind the node-local proxy at 172.20.0.1 (seed 001 §14.2.3)."""
    report = scan([HCP010 / "fail" / "gitops-guest-egress.yaml"], ["HCP010"])
    (finding,) = report.findings
    assert finding.facts["flow"] == "guest-pods-to-kas"
    assert finding.facts["workload"] == "payments/operator[Deployment]"
    assert finding.facts["missing"] == ["TCP 6443 to hosted-kas"]
    hop = finding.facts["blocking_hop"]
    assert hop["path"].endswith("gitops-guest-egress.yaml") and hop["line"] == 36
    assert "172.20.0.1 port 6443" in finding.message
    passing = scan([HCP010 / "pass" / "gitops-guest-egress.yaml"], ["HCP010"])
    assert passing.findings == [] and passing.results[0].status is Status.PASS


def test_the_kubernetes_cluster_ip_does_not_count_after_dnat_in_a_dump_guest():
    report = scan([HCP010 / "fail" / "hypershift-dump"], ["HCP010"])
    (finding,) = report.findings
    assert finding.facts["workload"] == "monitoring/metrics-exporter[Deployment]"
    assert "HostedCluster clusters/acme spec.networking.apiServer.advertiseAddress" in finding.message
    assert scan([HCP010 / "pass" / "hypershift-dump"], ["HCP010"]).findings == []


def test_a_guest_uses_the_hosted_clusters_advertise_address_and_port(tmp_path: Path):
    folder = tmp_path / "dump"
    shutil.copytree(HCP010 / "pass" / "hypershift-dump", folder)
    hc = folder / "namespaces/clusters/hypershift.openshift.io/hostedclusters.yaml"
    hc.write_text(hc.read_text().replace("advertiseAddress: 172.20.0.1, port: 6443",
                                         "advertiseAddress: 172.20.0.9, port: 6443"))
    (finding,) = scan([folder], ["HCP010"]).findings  # 172.20.0.1 is open, .9 is not
    assert "172.20.0.9 port 6443" in finding.message


def test_a_standalone_cluster_is_not_judged_as_a_guest(tmp_path: Path):
    text = (HCP010 / "fail" / "gitops-guest-egress.yaml").read_text()
    (tmp_path / "standalone.yaml").write_text(
        text.replace("controlPlaneTopology: External", "controlPlaneTopology: HighlyAvailable"))
    report = scan([tmp_path], ["HCP010"])
    assert report.findings == [] and report.results[0].status is Status.NOT_APPLICABLE


# -- the operators that reconcile the control plane → its API server (operator-ingress) ---

HCP011 = FIXTURES / "rules" / "HCP011"


def test_an_admin_deny_shuts_the_hypershift_operator_out_and_the_path_query_agrees(run_cli):
    report = scan([HCP011 / "fail" / "anp-isolates-hcp.yaml"], ["HCP011"])
    (finding,) = report.findings
    assert finding.facts["flow"] == "operators-to-hcp"
    assert finding.facts["missing"] == ["TCP 6443 from hypershift/operator[Deployment]"]
    assert finding.facts["allowed"] == ["TCP 6443 from clusters-acme/control-plane-operator[Deployment]"]
    hop = finding.facts["blocking_hop"]
    assert hop["layer"] == "admin-network-policy" and hop["line"] == 113
    args = ("connectivity", "--no-progress", "--path", "--from", "hypershift/operator",
            "--to", "clusters-acme/kube-apiserver", "--port", "6443", "--format", "json")
    shut = run_cli(*args[:2], str(HCP011 / "fail" / "anp-isolates-hcp.yaml"), *args[2:])
    assert shut.code == 1 and json.loads(shut.out)["answers"][0]["blocked_by"]["line"] == 113
    opened = run_cli(*args[:2], str(HCP011 / "pass" / "anp-isolates-hcp.yaml"), *args[2:])
    assert opened.code == 0 and json.loads(opened.out)["answers"][0]["open"] is True


def test_a_hand_written_default_deny_shuts_both_operators_out():
    report = scan([HCP011 / "fail" / "default-deny-ingress.yaml",
                   HCP011 / "fail" / "anp-isolates-hcp.yaml"], ["HCP011"])
    beta = next(f for f in report.findings if "clusters-beta" in f.facts["workload"])
    assert beta.facts["missing"] == ["TCP 6443 from hypershift/operator[Deployment]",
                                     "TCP 6443 from clusters-beta/control-plane-operator[Deployment]"]
    assert scan([HCP011 / "pass"], ["HCP011"]).findings == []


def test_without_the_hypershift_operator_in_the_input_the_flow_names_what_to_add(tmp_path: Path):
    text = (HCP011 / "fail" / "default-deny-ingress.yaml").read_text()
    (tmp_path / "hcp.yaml").write_text(text)
    report = scan([tmp_path], ["HCP011"])
    assert report.findings == [] and report.results[0].status is Status.NOT_EVALUABLE
    assert "oc get deployment operator -n hypershift" in report.results[0].reason


def test_a_management_source_that_is_not_namespace_slash_name_is_refused(tmp_path: Path):
    mine = tmp_path / "flows.yaml"
    mine.write_text("flows:\n- id: mine\n  title: t\n  from: {management: [operator]}\n"
                    "  to: [{app: kube-apiserver, port: 6443}]\n  check: operator-ingress\n"
                    "  seed: [mine]\n")
    with pytest.raises(FlowError, match="namespace/name"):
        load_flows(mine)


def test_kubevirt_workers_must_reach_the_hosted_clusters_proxy():
    """Seed 001 §14.2: traffic goes through the data plane to the configured proxy."""
    report = scan([HCP008 / "fail" / "kubevirt-proxy.yaml"], ["HCP008"])
    (finding,) = report.findings
    assert finding.facts["flow"] == "workers-to-proxy"
    assert finding.facts["missing"] == ["TCP 3128 to proxy 10.0.50.10:3128"]  # its own node
    assert "the proxy 10.0.50.10:3128 (spec.configuration.proxy.httpsProxy)" in finding.message
    assert finding.facts["blocking_hop"]["line"] == 31
    assert scan([HCP008 / "pass" / "kubevirt-proxy.yaml"], ["HCP008"]).findings == []


def test_without_a_proxy_the_proxy_flow_does_not_apply():
    inventory = _inventory(HCP008 / "fail" / "kubevirt-default-deny.yaml")
    graph = ReachabilityGraph(inventory)
    (hc,) = hosted_clusters(inventory)
    flow = flow_by_id("workers-to-proxy")
    assert flow is not None
    (result,) = evaluate_flow(inventory, graph, PathGraph(), hc, flow, [])
    assert result.status == "not-applicable" and "names no usable proxy" in result.reason


def test_host_network_pods_of_a_guest_are_not_judged(tmp_path: Path):
    """The node-local proxy itself (kube-system/kube-apiserver-proxy) runs on the node's
    network, which NetworkPolicy does not filter: a namespace-wide egress policy leaves it."""
    (tmp_path / "guest.yaml").write_text("""\
apiVersion: config.openshift.io/v1
kind: Infrastructure
metadata: {name: cluster}
status: {controlPlaneTopology: External}
---
apiVersion: v1
kind: Pod
metadata:
  name: kube-apiserver-proxy-worker-0
  namespace: kube-system
  labels: {k8s-app: kube-apiserver-proxy}
spec:
  hostNetwork: true
  containers: [{name: haproxy, image: haproxy}]
---
apiVersion: v1
kind: Pod
metadata:
  name: metrics
  namespace: kube-system
  labels: {app: metrics}
spec:
  containers: [{name: metrics, image: metrics}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-egress, namespace: kube-system}
spec:
  podSelector: {}
  policyTypes: [Egress]
""")
    report = scan([tmp_path], ["HCP010"])
    assert [f.facts["workload"] for f in report.findings] == ["kube-system/metrics[Pod]"]
