"""Security groups from manifests: the perimeter in front of the management cluster's
machines, read from Cluster API AWS, ACK and Crossplane objects, with each rule's place.

The issue's first report, written twice (CAPA status, ACK SecurityGroup) with a passing
twin each: a group admits the hosted cluster's workers to 6443 only, so konnectivity
(8091) and the ignition proxy (its node port) are unreachable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hcpscan.analysis.reachability.cloud_perimeter import manifest_perimeter
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.findings.model import Status
from hcpscan.inventory import Inventory
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.ports import ConnectionSet, PortSet
from hcpscan.model.securitygroups import _connections, security_groups
from hcpscan.rules.config import ScanConfig
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES
from tests.rules.harness import scan

SG = FIXTURES / "required-flows" / "security-groups"
WORKERS = "sg-0a1b2c3d4e5f60001"


def _inventory(*paths: Path) -> Inventory:
    result = load_paths([str(p) for p in paths])
    return Inventory(result.objects, result.diagnostics, result.skipped)


def _copy(name: str, tmp_path: Path) -> Path:
    folder = tmp_path / name
    shutil.copytree(SG / name, folder)
    return folder


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize(("case", "group", "file", "anchor"), [
    ("capa", "sg-0f00d00000000node", "awscluster.yaml", "      node:"),
    ("ack", "sg-0ac0000000000mgmt", "securitygroup.yaml", "spec:"),
])
def test_a_group_admitting_the_workers_to_6443_only_shuts_konnectivity_and_ignition(
        case: str, group: str, file: str, anchor: str):
    report = scan([SG / f"{case}-fail"], ["HCP007", "HCP003"])
    by_flow = {f.facts["flow"]: f for f in report.findings if f.rule_id == "HCP007"}
    assert sorted(by_flow) == ["workers-to-ignition", "workers-to-konnectivity"]
    konnectivity = by_flow["workers-to-konnectivity"]
    assert konnectivity.facts["missing"] == ["TCP 8091 from 10.20.0.0/16"]
    hop = konnectivity.facts["blocking_hop"]
    assert hop["layer"] == "perimeter"
    assert group in hop["summary"] and "no ingress rule admits it" in hop["summary"]
    assert hop["path"].endswith(file)
    assert hop["line"] == _line_of(SG / f"{case}-fail" / file, anchor)
    assert "TCP/32091" in hop["summary"]  # the node port is where traffic meets the group
    ignition = by_flow["workers-to-ignition"]
    assert "TCP/31443" in ignition.facts["blocking_hop"]["summary"]
    # the API server's own flow is open (its load balancer is the cloud provider's): HCP003 passes
    assert not [f for f in report.findings if f.rule_id == "HCP003"]
    assert {r.rule_id: r.status for r in report.results}["HCP003"] is Status.PASS


@pytest.mark.parametrize("case", ["capa", "ack"])
def test_the_passing_twin_admits_every_flow(case: str):
    report = scan([SG / f"{case}-pass"], ["HCP007", "HCP003", "HCP001", "HCP002"])
    assert not report.findings
    assert all(r.status is Status.PASS for r in report.results)


def test_without_the_group_the_workers_get_in_and_with_it_the_rule_that_admits_them_is_named():
    """The path query through the open twin names the rule and its line; the same
    question on the failing one is blocked at the group (the flow's verdict agrees)."""
    from hcpscan.analysis.reachability.graph import ReachabilityGraph
    from hcpscan.analysis.reachability.paths import PathGraph
    from hcpscan.cli.connectivity_paths import path_answers

    for case, expect in (("capa-pass", True), ("capa-fail", False)):
        inventory = _inventory(SG / case)
        said: list[Diagnostic] = []
        graph = ReachabilityGraph(inventory, manifest_perimeter(inventory, said))
        (answer,) = path_answers(inventory, graph, PathGraph(), "workers",
                                 "clusters-shop/kube-apiserver", 8091, "TCP")
        assert answer.open is expect
        perimeter_hops = [h for h in answer.hops if h.layer == "perimeter"]
        assert perimeter_hops, answer.lines()
        if expect:
            assert "ingressRule/1" in perimeter_hops[0].summary  # the rule, by its place
            assert "konnectivity" in perimeter_hops[0].summary
            assert perimeter_hops[0].line == _line_of(SG / case / "awscluster.yaml",
                                                      "description: hosted workers to konnectivity")
        else:
            assert answer.blocked_by is perimeter_hops[0]
        assert not said


def test_hcp002_says_the_workers_cannot_reach_konnectivity_when_the_group_admits_others(tmp_path: Path):
    """The issue's report the other way round: the group admits an admins' range to 8091
    but not the workers — HCP002 names the admins and says the workers cannot get in."""
    folder = _copy("capa-fail", tmp_path)
    sg = folder / "awscluster.yaml"
    sg.write_text(sg.read_text().replace(
        "      lb:\n", "      lb:\n        ingressRule:\n        - {protocol: tcp, fromPort: 32091, "
        "toPort: 32091, cidrBlocks: [192.168.50.0/24]}\n", 1))
    report = scan([folder], ["HCP002", "HCP007"])
    (hcp002,) = [f for f in report.findings if f.rule_id == "HCP002"]
    assert "reachable from 192.168.50.0/24" in hcp002.message
    assert "workers cannot reach konnectivity (TCP 8091 from 10.20.0.0/16)" in hcp002.message
    assert "sg-0f00d00000000node" in hcp002.message


def test_a_node_is_in_the_union_of_its_groups(tmp_path: Path):
    """The lb group (attached to every machine, as CAPA does) admits konnectivity's node
    port: konnectivity is open though the node group admits 6443 only."""
    folder = _copy("capa-fail", tmp_path)
    sg = folder / "awscluster.yaml"
    sg.write_text(sg.read_text().replace(
        "      lb:\n", "      lb:\n        ingressRule:\n        - {protocol: tcp, fromPort: 32000, "
        f"toPort: 32100, sourceSecurityGroupIDs: [{WORKERS}]}}\n", 1))
    report = scan([folder], ["HCP007"])
    assert [f.facts["flow"] for f in report.findings] == ["workers-to-ignition"]


def test_the_apiserver_lb_and_bastion_groups_front_no_hosted_cluster_flow(tmp_path: Path):
    """Only node and lb are attached to every machine; a rule of apiserver-lb opening
    everything changes nothing."""
    folder = _copy("capa-fail", tmp_path)
    sg = folder / "awscluster.yaml"
    sg.write_text(sg.read_text().replace("protocol: tcp, fromPort: 6443, toPort: 6443, cidrBlocks",
                                         "protocol: '-1', cidrBlocks"))
    flows = sorted(f.facts["flow"] for f in scan([folder], ["HCP007"]).findings)
    assert flows == ["workers-to-ignition", "workers-to-konnectivity"]


def test_a_nodepool_group_is_the_workers_group(tmp_path: Path):
    """The workers are members of their NodePool's security groups too: a rule naming that
    group admits the HostedCluster's machine network."""
    folder = _copy("capa-pass", tmp_path)
    hc = folder / "hcp.yaml"
    hc.write_text(hc.read_text().replace("defaultWorkerSecurityGroupID: sg-0a1b2c3d4e5f60001",
                                         "defaultWorkerSecurityGroupID: sg-0000000000000other"))
    report = scan([folder], ["HCP007"])
    assert sorted(f.facts["flow"] for f in report.findings) == ["workers-to-ignition",
                                                                  "workers-to-konnectivity"]
    (folder / "nodepool.yaml").write_text(f"""apiVersion: hypershift.openshift.io/v1beta1
kind: NodePool
metadata:
  name: shop-a
  namespace: clusters
spec:
  clusterName: shop
  platform:
    type: AWS
    aws:
      securityGroups:
      - id: {WORKERS}
""")
    assert not scan([folder], ["HCP007"]).findings


def test_a_group_attached_but_not_described_makes_the_flow_not_evaluable(tmp_path: Path):
    folder = _copy("ack-fail", tmp_path)
    sg = folder / "securitygroup.yaml"
    sg.write_text(sg.read_text().split("---\n", 1)[1])  # the AWSCluster's overrides alone
    report = scan([folder], ["HCP007", "HCP003"])
    assert not report.findings
    reasons = {r.rule_id: (r.status, r.reason) for r in report.results}
    status, reason = reasons["HCP007"]
    assert status is Status.NOT_EVALUABLE
    assert "sg-0ac0000000000mgmt" in reason and "--firewall" in reason
    # the API server's load balancer is the cloud provider's, not the machines' groups
    assert reasons["HCP003"][0] is Status.PASS
    # a perimeter file then says what gets in (it admits 10.10.0.0/24 and 10.50.0.0/24
    # only): the flows are judged on it alone
    walled = scan([folder], ["HCP007"], ScanConfig(firewall=FIXTURES / "required-flows" / "sg-kas-only.yaml"))
    assert walled.findings
    assert all(f.facts["blocking_hop"]["path"].endswith("sg-kas-only.yaml") for f in walled.findings)


def test_several_capa_clusters_are_not_guessed(tmp_path: Path):
    folder = _copy("capa-fail", tmp_path)
    sg = folder / "awscluster.yaml"
    text = sg.read_text()
    sg.write_text(text + "---\n" + text.split("apiVersion:", 1)[1].join(["apiVersion:", ""])
                  .replace("name: mgmt\n", "name: other\n", 1))
    inventory = _inventory(folder)
    said: list[Diagnostic] = []
    assert manifest_perimeter(inventory, said) is None
    assert "which one is this management cluster" in said[0].message
    assert not scan([folder], ["HCP007"]).findings


def test_crossplane_rules_attach_to_their_group_by_reference(tmp_path: Path):
    (tmp_path / "sg.yaml").write_text(f"""apiVersion: ec2.aws.upbound.io/v1beta1
kind: SecurityGroup
metadata:
  name: mgmt-nodes
  labels: {{role: mgmt-nodes}}
spec:
  forProvider: {{name: mgmt-nodes, region: eu-west-1}}
status:
  atProvider: {{id: sg-0c0000000000000xp}}
---
apiVersion: ec2.aws.upbound.io/v1beta1
kind: SecurityGroupIngressRule
metadata:
  name: workers-kas
spec:
  forProvider:
    region: eu-west-1
    ipProtocol: tcp
    fromPort: 6443
    toPort: 6443
    referencedSecurityGroupId: {WORKERS}
    securityGroupIdRef: {{name: mgmt-nodes}}
---
apiVersion: ec2.aws.upbound.io/v1beta1
kind: SecurityGroupRule
metadata:
  name: workers-konnectivity
spec:
  forProvider:
    region: eu-west-1
    type: ingress
    protocol: tcp
    fromPort: 8091
    toPort: 8091
    cidrBlocks: [10.20.0.0/16]
    securityGroupIdSelector:
      matchLabels: {{role: mgmt-nodes}}
---
apiVersion: ec2.aws.upbound.io/v1beta1
kind: SecurityGroupRule
metadata:
  name: egress-everything
spec:
  forProvider:
    region: eu-west-1
    type: egress
    protocol: "-1"
    fromPort: 0
    toPort: 0
    cidrBlocks: [0.0.0.0/0]
    securityGroupId: sg-0c0000000000000xp
""")
    inventory = _inventory(tmp_path)
    group = security_groups(inventory).find("sg-0c0000000000000xp")
    assert group is not None and group.origin == "Crossplane"
    assert [r.obj.name for r in group.rules if r.obj] == ["workers-kas", "workers-konnectivity"]
    assert group.rules[0].source_groups == (WORKERS,)
    assert group.rules[1].connections == ConnectionSet.of("TCP", PortSet.of((8091, 8091)))


def test_protocols_and_ports_read_exactly_as_aws_does():
    said: list[str] = []
    assert _connections("-1", None, None, said) == ConnectionSet.all()
    assert _connections("tcp", 30000, 32767, said) == ConnectionSet.of("TCP", PortSet.of((30000, 32767)))
    assert _connections("6", 443, 443, said) == ConnectionSet.of("TCP", PortSet.of((443, 443)))
    assert _connections("udp", -1, -1, said) == ConnectionSet.of("UDP", PortSet.all())
    assert _connections("tcp", 0, 65535, said) == ConnectionSet.of("TCP", PortSet.all())
    assert _connections("icmp", 3, 4, said) == ConnectionSet.none()  # type/code, not ports
    assert _connections("50", None, None, said) == ConnectionSet.none()  # ESP
    assert not said
    assert _connections("tcp", 9000, 8000, said) == ConnectionSet.none()
    assert _connections(None, 1, 2, said) == ConnectionSet.none()
    assert len(said) == 2


def test_the_groups_stack_behind_a_perimeter_file():
    """A firewall file in front of the groups: traffic passes both."""
    report = scan([SG / "capa-pass"], ["HCP007"],
                  ScanConfig(firewall=FIXTURES / "required-flows" / "sg-kas-only.yaml"))
    # the file admits 10.10.0.0/24 and 10.50.0.0/24 only: the workers 10.20.0.0/16 are shut there
    hops = {f.facts["blocking_hop"]["path"] for f in report.findings}
    assert hops and all(h.endswith("sg-kas-only.yaml") for h in hops)


def test_path_query_from_the_cli_agrees_with_the_flow(run_cli):
    args = ("--path", "--from", "workers", "--to", "clusters-shop/kube-apiserver", "--port", "8091",
            "--format", "json")
    shut = run_cli("connectivity", "--no-progress", str(SG / "ack-fail"), *args)
    assert shut.code == 1, shut.err
    (answer,) = json.loads(shut.out)["answers"]
    assert "sg-0ac0000000000mgmt" in answer["blocked_by"]["summary"]
    assert answer["blocked_by"]["path"].endswith("securitygroup.yaml")
    opened = run_cli("connectivity", "--no-progress", str(SG / "ack-pass"), *args)
    assert opened.code == 0, opened.err
    flow = run_cli("connectivity", "--no-progress", str(SG / "ack-fail"), "--flow",
                   "workers-to-konnectivity", "--format", "json")
    assert flow.code == 1
    assert {r["status"] for r in json.loads(flow.out)["results"]} == {"blocked"}


def test_member_addresses_are_the_workers_machine_network():
    inventory = _inventory(SG / "capa-fail")
    said: list[Diagnostic] = []
    perimeter = manifest_perimeter(inventory, said)
    assert perimeter is not None
    (rule,) = perimeter.rules
    assert rule.sources == IPSpace.from_cidrs(["10.20.0.0/16"])
    assert any("HostedCluster clusters/shop" in s for s in rule.source_cidrs)


_NODE = """---
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-3-10.eu-west-1.compute.internal
spec:
  providerID: aws:///eu-west-1a/i-0aaaaaaaaaaaaaaa1
"""
_MACHINE = """---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: AWSMachine
metadata:
  name: mgmt-md-0-abcde
  namespace: capi-mgmt
  labels: {cluster.x-k8s.io/cluster-name: mgmt}
spec:
  instanceID: i-0aaaaaaaaaaaaaaa1
"""


def test_with_nodes_in_the_input_only_the_cluster_of_those_machines_is_the_management_cluster(
        tmp_path: Path):
    """A CAPA management cluster holds its workload clusters' AWSClusters: when the input
    shows the management cluster's Nodes, a CAPA cluster fronts them only when its
    AWSMachines are those Nodes' instances."""
    folder = _copy("capa-fail", tmp_path)
    (folder / "node.yaml").write_text(_NODE)
    assert manifest_perimeter(_inventory(folder), []) is None  # a workload cluster's groups
    assert not scan([folder], ["HCP007"]).findings
    (folder / "node.yaml").write_text(_NODE + _MACHINE)
    assert manifest_perimeter(_inventory(folder), []) is not None
    assert len(scan([folder], ["HCP007"]).findings) == 2


def test_values_of_the_wrong_type_are_warnings_at_their_rule_and_admit_nothing(tmp_path: Path):
    """Hostile or broken groups: no traceback, each value said at its rule's line, the rule
    read as admitting nothing where its ports or protocol cannot be read; CIDRs with host
    bits are canonicalised as AWS does."""
    folder = _copy("capa-fail", tmp_path)
    sg = folder / "awscluster.yaml"
    sg.write_text(sg.read_text().replace(
        "        - description: hosted workers to the API servers\n",
        "        - \"a string\"\n"
        "        - {protocol: tcp, fromPort: \"32091\", toPort: 32091, cidrBlocks: [10.20.0.0/16]}\n"
        "        - {protocol: tcp, fromPort: 31443, toPort: 31443, cidrBlocks: [10.20.0.7/16, nope, 7]}\n"
        "        - description: hosted workers to the API servers\n", 1))
    inventory = _inventory(folder)
    said: list[Diagnostic] = []
    perimeter = manifest_perimeter(inventory, said)
    assert perimeter is not None
    messages = [(d.line, d.message) for d in said]
    assert any("not a mapping" in m for _, m in messages)
    assert any("fromPort '32091' is not a number" in m for _, m in messages)
    assert any("nope is not a CIDR" in m for _, m in messages)
    assert any("7 is not a string" in m for _, m in messages)
    assert all(line and line > 1 for line, _ in messages)
    report = scan([folder], ["HCP007"])
    # the node-port rule still admits the workers (10.20.0.7/16 is 10.20.0.0/16): ignition
    # opens, konnectivity's rule could not be read
    assert [f.facts["flow"] for f in report.findings] == ["workers-to-konnectivity"]
    assert any("is not a number" in d["message"] for d in report.diagnostics)


def test_a_group_of_workers_whose_addresses_are_not_given_is_not_evaluable(tmp_path: Path):
    """The rule admits the workers' group, but the HostedCluster has no machineNetwork (the
    workers are given by worker_cidrs): which addresses the group holds is unknown."""
    folder = _copy("capa-fail", tmp_path)
    hc = folder / "hcp.yaml"
    hc.write_text(hc.read_text().replace("  networking:\n    machineNetwork:\n    - cidr: 10.20.0.0/16\n", ""))
    report = scan([folder], ["HCP007"], ScanConfig(worker_cidrs=["10.20.0.0/16"]))
    assert not report.findings
    (result,) = report.results
    assert result.status is Status.NOT_EVALUABLE
    assert "spec.networking.machineNetwork" in result.reason and WORKERS in result.reason


def test_a_machine_group_named_by_filters_is_attached_but_not_described(tmp_path: Path):
    folder = _copy("capa-fail", tmp_path)
    (folder / "machines.yaml").write_text("""apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: AWSMachineTemplate
metadata:
  name: mgmt-md-0
  namespace: capi-mgmt
spec:
  template:
    spec:
      instanceType: m6i.xlarge
      additionalSecurityGroups:
      - filters:
        - {name: "tag:role", values: [hcp-ingress]}
""")
    report = scan([folder], ["HCP007"])
    assert not report.findings
    (result,) = report.results
    assert result.status is Status.NOT_EVALUABLE
    assert "matched by filters tag:role=hcp-ingress" in result.reason


def test_a_load_balancer_is_not_behind_the_machines_groups(tmp_path: Path):
    """The cloud provider opens the machines' groups to a LoadBalancer Service's load
    balancer (rules the CAPA status never lists) and bounds it by loadBalancerSourceRanges:
    konnectivity published as a LoadBalancer is judged on those, not on the node group."""
    folder = _copy("capa-fail", tmp_path)
    hc = folder / "hcp.yaml"
    text = hc.read_text().replace("""  - service: Konnectivity
    servicePublishingStrategy:
      type: NodePort
      nodePort: {address: 10.0.3.10}""", """  - service: Konnectivity
    servicePublishingStrategy: {type: LoadBalancer}""").replace("""  type: NodePort
  selector: {app: kube-apiserver}
  ports:
  - {port: 8091, targetPort: 8091, nodePort: 32091, protocol: TCP}""", """  type: LoadBalancer
  allocateLoadBalancerNodePorts: false
  loadBalancerSourceRanges: [10.20.0.0/16]
  selector: {app: kube-apiserver}
  ports:
  - {port: 8091, targetPort: 8091, protocol: TCP}""")
    hc.write_text(text)
    flows = [f.facts["flow"] for f in scan([folder], ["HCP007"]).findings]
    assert flows == ["workers-to-ignition"]  # the node port still meets the group
    hc.write_text(text.replace("loadBalancerSourceRanges: [10.20.0.0/16]",
                               "loadBalancerSourceRanges: [192.168.50.0/24]"))
    (finding,) = [f for f in scan([folder], ["HCP007"]).findings
                  if f.facts["flow"] == "workers-to-konnectivity"]
    assert finding.facts["blocking_hop"]["layer"] == "service"  # its source ranges


def test_sarif_and_json_of_a_security_group_finding_validate(run_cli):
    import jsonschema

    from tests.reporters.sarif_checks import SCHEMA_FILES, schema_errors

    folder = str(SG / "capa-fail")
    log = json.loads(run_cli("scan", "--no-progress", folder, "--select", "HCP007,HCP002",
                             "--format", "sarif").out)
    for name in SCHEMA_FILES:
        assert schema_errors(log, name) == []
    report = json.loads(run_cli("scan", "--no-progress", folder, "--select", "HCP007",
                                "--format", "json").out)
    schema = json.loads((Path(__file__).resolve().parents[3] / "hcpscan" / "reporters"
                         / "hcpscan-report.schema.json").read_text())
    jsonschema.validate(report, schema)
    assert {f["facts"]["blocking_hop"]["path"].rsplit("/", 1)[-1] for f in report["findings"]} == {
        "awscluster.yaml"}


_INFRA = """---
apiVersion: config.openshift.io/v1
kind: Infrastructure
metadata:
  name: cluster
status:
  infrastructureName: mgmt-7xk2p
"""


@pytest.mark.parametrize("case", ["ack-fail", "ack-pass"])
def test_a_group_declared_alone_that_admits_the_workers_to_the_api_server_is_only_a_guess(
        case: str, tmp_path: Path):
    """A GitOps estate with the ACK group and the HostedCluster but no Cluster API object:
    the group admits the workers to 6443, a port the control plane publishes, so it is
    guessed to be in front of it — a guess: the flows it would shut are not evaluable,
    naming the group and what would say so; what it admits stays open."""
    folder = _copy(case, tmp_path)
    sg = folder / "securitygroup.yaml"
    sg.write_text(sg.read_text().split("---\n", 1)[0])  # the ACK group alone
    report = scan([folder], ["HCP007"])
    assert not report.findings
    (result,) = report.results
    if case == "ack-pass":
        assert result.status is Status.PASS
        return
    assert result.status is Status.NOT_EVALUABLE
    assert "sg-0ac0000000000mgmt is only guessed" in result.reason
    assert "kubernetes.io/cluster/<infrastructureName>" in result.reason


def test_a_group_admitting_the_workers_to_6443_is_not_guessed_in_front_of_a_routed_api_server(
        tmp_path: Path):
    """The API server published as a Route, not a LoadBalancer: no load balancer listens
    on its port, so a group admitting the workers to 6443 alone is not guessed to be the
    management machines' (it judges nothing; the rule passes on what the input says)."""
    folder = _copy("ack-fail", tmp_path)
    sg = folder / "securitygroup.yaml"
    sg.write_text(sg.read_text().split("---\n", 1)[0])  # the ACK group alone
    hcp = folder / "hcp.yaml"
    text = hcp.read_text()
    routed = text.replace("    servicePublishingStrategy: {type: LoadBalancer}\n",
                          "    servicePublishingStrategy:\n      type: Route\n"
                          "      route: {hostname: api.shop.example.com}\n", 1)
    routed = routed.replace("spec:\n  type: LoadBalancer\n  allocateLoadBalancerNodePorts: false\n",
                            "spec:\n  type: ClusterIP\n")
    assert routed.count("type: LoadBalancer") == text.count("type: LoadBalancer") - 2
    hcp.write_text(routed)
    report = scan([folder], ["HCP007"])
    (result,) = report.results
    assert "guessed" not in (result.reason or "")
    assert result.status is Status.PASS, result.reason


@pytest.mark.parametrize("mark", ["tag", "name", "machine"])
def test_a_group_the_input_says_is_the_management_machines_decides(mark: str, tmp_path: Path):
    """The same group with evidence of its attachment — the cloud provider's cluster tag
    for the management cluster's infrastructure name, the installer's name for its node
    group, or an AWSMachine of a management Node naming it — decides: HCP007 fails at it."""
    folder = _copy("ack-fail", tmp_path)
    sg = folder / "securitygroup.yaml"
    text = sg.read_text().split("---\n", 1)[0]
    if mark == "tag":
        text = text.replace("  ingressRules:", "  tags:\n  - {key: kubernetes.io/cluster/mgmt-7xk2p, value: owned}\n"
                                               "  ingressRules:") + _INFRA
    elif mark == "name":
        text = text.replace("  name: mgmt-workers\n  description", "  name: mgmt-7xk2p-node\n  description") + _INFRA
    else:
        text += """---
apiVersion: v1
kind: Node
metadata: {name: ip-10-0-1-5.ec2.internal}
spec: {providerID: "aws:///eu-west-1a/i-0123456789abcdef0"}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: AWSMachine
metadata: {name: mgmt-worker-a, namespace: capi-mgmt}
spec:
  instanceID: i-0123456789abcdef0
  additionalSecurityGroups: [{id: sg-0ac0000000000mgmt}]
"""
    sg.write_text(text)
    report = scan([folder], ["HCP007"])
    assert sorted(f.facts["flow"] for f in report.findings) == ["workers-to-ignition",
                                                                "workers-to-konnectivity"]
    hop = report.findings[0].facts["blocking_hop"]
    assert hop["path"].endswith("securitygroup.yaml") and "sg-0ac0000000000mgmt" in hop["summary"]
    assert "guessed" not in hop["summary"]
    assert {"tag": "tag kubernetes.io/cluster/mgmt-7xk2p=owned", "name": "name mgmt-7xk2p-node",
            "machine": "AWSMachine capi-mgmt/mgmt-worker-a additionalSecurityGroups"}[mark] in hop["summary"]


def test_a_tag_for_another_cluster_is_no_evidence(tmp_path: Path):
    folder = _copy("ack-fail", tmp_path)
    sg = folder / "securitygroup.yaml"
    sg.write_text(sg.read_text().split("---\n", 1)[0].replace(
        "  ingressRules:", "  tags:\n  - {key: kubernetes.io/cluster/other-9zz, value: owned}\n  ingressRules:")
        + _INFRA)
    report = scan([folder], ["HCP007"])
    assert not report.findings and report.results[0].status is Status.NOT_EVALUABLE


def test_a_group_for_something_else_is_not_taken_as_the_control_planes(tmp_path: Path):
    """A database's group admits the workers to 5432 only: not a port the control plane
    publishes, so it says nothing about the management machines."""
    folder = _copy("ack-fail", tmp_path)
    sg = folder / "securitygroup.yaml"
    sg.write_text(sg.read_text().split("---\n", 1)[0].replace("fromPort: 6443", "fromPort: 5432")
                  .replace("toPort: 6443", "toPort: 5432"))
    assert manifest_perimeter(_inventory(folder), []) is None
    assert not scan([folder], ["HCP007"]).findings


def test_hcp001_asks_the_same_groups_who_gets_in(tmp_path: Path):
    """CAPA's default node group admits node ports from every address (its "Node Port
    Services" rule, nodePortIngressRuleCidrBlocks unset): the ignition proxy's node port is
    open to the internet — HCP001 names the rule — while HCP007 passes for ignition."""
    folder = _copy("capa-fail", tmp_path)
    sg = folder / "awscluster.yaml"
    sg.write_text(sg.read_text().replace(
        "      lb:\n", "        - {description: Node Port Services, protocol: tcp, fromPort: 30000, "
        "toPort: 32767, cidrBlocks: [0.0.0.0/0]}\n      lb:\n", 1))
    report = scan([folder], ["HCP001", "HCP007"])
    assert not [f for f in report.findings if f.rule_id == "HCP007"]
    (hcp001,) = [f for f in report.findings if f.rule_id == "HCP001"]
    assert "Node Port Services" in " ".join(hcp001.evidence)
    assert "sg-0f00d00000000node" in " ".join(hcp001.evidence)


def test_a_perimeter_file_default_deny_names_its_line_on_every_way_in(tmp_path: Path):
    """The issue's first report with a --firewall file, konnectivity published as a
    LoadBalancer: the file stands in front of every way in (the security groups only of
    node ports), and the hop its default blocks is named by file:line, as a group's is."""
    folder = _copy("capa-fail", tmp_path)
    hcp = folder / "hcp.yaml"
    hcp.write_text(hcp.read_text().replace(
        "type: NodePort\n  selector: {app: kube-apiserver}", "type: LoadBalancer\n  selector: "
        "{app: kube-apiserver}", 1))
    firewall = tmp_path / "fw.yaml"
    firewall.write_text("kind: Perimeter\nmetadata: {name: workers-sg}\ndefault: deny\nrules:\n"
                        "- {name: kas, action: allow, sources: [10.20.0.0/16], "
                        "ports: [{protocol: TCP, port: 6443}]}\n")
    report = scan([folder], ["HCP007"], ScanConfig(firewall=firewall))
    flows = {f.facts["flow"]: f.facts["blocking_hop"] for f in report.findings}
    assert sorted(flows) == ["workers-to-ignition", "workers-to-konnectivity"]
    for hop in flows.values():
        assert hop["layer"] == "perimeter"
        assert (Path(hop["path"]).name, hop["line"]) == ("fw.yaml", 3)  # `default: deny`


def test_path_query_agrees_with_the_flow_when_a_group_is_not_described(tmp_path: Path, run_cli):
    """A machine group named by id but not described: the flow is unknown (naming the
    group), and the path query on the same connection says so too, not "blocked"."""
    folder = _copy("capa-fail", tmp_path)
    sg = folder / "awscluster.yaml"
    sg.write_text(sg.read_text() + "---\napiVersion: infrastructure.cluster.x-k8s.io/v1beta2\n"
                  "kind: AWSMachineTemplate\nmetadata: {name: workers, namespace: capi-mgmt}\n"
                  "spec:\n  template:\n    spec:\n      additionalSecurityGroups: [{id: sg-0extra}]\n")
    flow = run_cli("connectivity", "--no-progress", str(folder), "--flow", "workers-to-konnectivity",
                   "--format", "json")
    assert {r["status"] for r in json.loads(flow.out)["results"]} == {"unknown"}
    path = run_cli("connectivity", "--no-progress", str(folder), "--path", "--from", "workers", "--to",
                   "clusters-shop/kube-apiserver", "--port", "8091", "--format", "json")
    (answer,) = json.loads(path.out)["answers"]
    assert "sg-0extra" in answer["unknown"]
    assert path.code == flow.code == 0
    text = run_cli("connectivity", "--no-progress", str(folder), "--path", "--from", "workers", "--to",
                   "clusters-shop/kube-apiserver", "--port", "8091")
    assert "TCP 8091: unknown (security group sg-0extra is attached" in text.out


def test_the_rule_does_not_say_no_perimeter_was_given_when_groups_were_read():
    """HCP007's reason said "no perimeter was given … taken as open" beside findings the
    security groups of the manifests decided; it says what they bound instead."""
    report = scan([SG / "capa-fail"], ["HCP007"])
    (result,) = report.results
    assert result.status is Status.FAIL
    assert "no perimeter was given" not in result.reason
    assert "security groups read from the manifests bound the node ports" in result.reason
    plain = scan([FIXTURES / "rules" / "HCP007" / "fail"], ["HCP007"])
    assert "no perimeter was given" in plain.results[0].reason


def test_who_gets_in_is_not_known_while_a_group_in_front_is_not_described(tmp_path: Path):
    """HCP001/HCP002 passed ("nobody beyond the workers gets in") where the flow into the
    same node ports is not evaluable: an attached group the input does not describe
    might admit anyone. Described (an ACK group admitting nothing more), they pass."""
    folder = _copy("capa-fail", tmp_path)
    sg = folder / "awscluster.yaml"
    sg.write_text(sg.read_text() + "---\napiVersion: infrastructure.cluster.x-k8s.io/v1beta2\n"
                  "kind: AWSMachineTemplate\nmetadata: {name: workers, namespace: capi-mgmt}\n"
                  "spec:\n  template:\n    spec:\n      additionalSecurityGroups: [{id: sg-0extra}]\n")
    report = scan([folder], ["HCP001", "HCP002", "HCP007"])
    reasons = {r.rule_id: (r.status, r.reason) for r in report.results}
    for rule in ("HCP001", "HCP002", "HCP007"):
        assert reasons[rule][0] is Status.NOT_EVALUABLE, (rule, reasons[rule])
        assert "sg-0extra" in reasons[rule][1]
    (folder / "extra.yaml").write_text(
        "apiVersion: ec2.services.k8s.aws/v1alpha1\nkind: SecurityGroup\nmetadata: {name: extra, "
        "namespace: capi-mgmt}\nspec:\n  name: extra\n  ingressRules:\n  - {ipProtocol: tcp, "
        "fromPort: 22, toPort: 22, ipRanges: [{cidrIP: 192.168.50.0/24}]}\nstatus: {id: sg-0extra}\n")
    described = scan([folder], ["HCP001", "HCP002"])
    assert {r.status for r in described.results} == {Status.PASS}


_STATUS = """status:
  platform:
    aws:
      defaultWorkerSecurityGroupID: sg-0a1b2c3d4e5f60001
"""


@pytest.mark.parametrize("case", ["capa-pass", "capa-fail"])
def test_a_gitops_hosted_cluster_without_status_does_not_shut_its_workers_out(case: str, tmp_path: Path):
    """From Git the HostedCluster has no status, so which group its workers are in is not
    in the input. A rule admitting that group to the node ports then decides nothing:
    the passing twin was a false "workers cannot reach konnectivity" (high); now it is not
    evaluable, naming the group and what to give. The failing twin (no rule opens the node
    ports to anyone) still fails."""
    folder = _copy(case, tmp_path)
    hcp = folder / "hcp.yaml"
    assert _STATUS in hcp.read_text()
    hcp.write_text(hcp.read_text().replace(_STATUS, ""))
    report = scan([folder], ["HCP007"])
    (result,) = report.results
    if case == "capa-fail":
        assert sorted(f.facts["flow"] for f in report.findings) == ["workers-to-ignition",
                                                                      "workers-to-konnectivity"]
        return
    assert not report.findings
    assert result.status is Status.NOT_EVALUABLE
    assert "members of security group sg-0a1b2c3d4e5f60001" in result.reason
    assert "defaultWorkerSecurityGroupID" in result.reason


def test_from_git_alone_the_declared_node_ports_are_asked_too(tmp_path: Path):
    """The same from the HostedCluster alone (no HCP namespace): its spec.services
    NodePort ports are the ports the rule opens to a group nobody is placed in."""
    folder = tmp_path / "gitops"
    folder.mkdir()
    shutil.copy(SG / "capa-pass" / "awscluster.yaml", folder)
    hc = (SG / "capa-pass" / "hcp.yaml").read_text().split("---")[0].replace(_STATUS, "")
    hc = hc.replace("nodePort: {address: 10.0.3.10}", "nodePort: {address: 10.0.3.10, port: 32091}", 1)
    hc = hc.replace("nodePort: {address: 10.0.3.10}", "nodePort: {address: 10.0.3.10, port: 31443}", 1)
    (folder / "hc.yaml").write_text(hc)
    report = scan([folder], ["HCP007"])
    assert not report.findings
    assert report.results[0].status is Status.NOT_EVALUABLE
    assert "members of security group sg-0a1b2c3d4e5f60001" in report.results[0].reason


def test_a_prefix_list_opening_the_node_ports_is_not_read_as_admitting_nobody(tmp_path: Path):
    """ACK's passing twin with the workers given by a managed prefix list instead of their
    group: its addresses are the cloud's, so the flows are not evaluable (not a false
    "cannot reach"); a prefix list on a port no control plane publishes changes nothing."""
    folder = _copy("ack-pass", tmp_path)
    sg = folder / "securitygroup.yaml"
    text = sg.read_text()
    assert "    - groupID: sg-0a1b2c3d4e5f60001\n" in text
    sg.write_text(text.replace("userIDGroupPairs:\n    - groupID: sg-0a1b2c3d4e5f60001\n",
                               "prefixListIDs:\n    - prefixListID: pl-0workers\n"))
    report = scan([folder], ["HCP007"])
    assert not report.findings
    assert report.results[0].status is Status.NOT_EVALUABLE
    assert "prefix list pl-0workers" in report.results[0].reason
    assert scan([SG / "ack-fail"], ["HCP007"]).findings  # unchanged without prefix lists


@pytest.mark.parametrize("case", ["capa-fail", "ack-fail"])
def test_hcpscan_fix_never_writes_perimeter_rules_into_a_security_group_manifest(
        case: str, tmp_path: Path, run_cli):
    """The opening for a perimeter hop was written into the file the perimeter came from:
    for security groups that is the AWSCluster (or ACK object), which got a top-level
    `rules:` list of perimeter-file rules. No automatic fix; the text says where to open."""
    folder = _copy(case, tmp_path)
    before = {p.name: p.read_text() for p in folder.iterdir()}
    done = run_cli("fix", "--no-progress", str(folder))
    assert {p.name: p.read_text() for p in folder.iterdir()} == before, done.out
    assert "security groups keep the workers out" in done.out + done.err


def test_behind_a_perimeter_file_the_fix_goes_to_the_file_when_the_groups_admit_it(
        tmp_path: Path, run_cli):
    """The file in front of groups that already admit the workers to the node ports: the
    opening is written in the file, as before (the groups need no change); in front of
    groups that shut them too, it is no automatic fix."""
    firewall = tmp_path / "fw.yaml"
    text = ("kind: Perimeter\nmetadata: {name: workers-sg}\ndefault: deny\nrules:\n"
            "- {name: kas, action: allow, sources: [10.20.0.0/16], ports: [{protocol: TCP, port: 6443}]}\n")
    for case, written in (("capa-pass", True), ("capa-fail", False)):
        firewall.write_text(text)
        folder = _copy(case, tmp_path)
        before = (folder / "awscluster.yaml").read_text()
        run_cli("fix", "--no-progress", "--no-config", "--select", "HCP007", "--firewall", str(firewall),
                str(folder))
        assert (folder / "awscluster.yaml").read_text() == before
        assert ("32091" in firewall.read_text()) is written, case


def test_eks_managed_node_groups_are_in_the_cluster_group(tmp_path: Path):
    """On EKS the managed node groups are in the EKS cluster group (CAPA's `cluster` role of
    AWSManagedControlPlane), which opens the node ports here: the flows are open."""
    folder = _copy("capa-fail", tmp_path)
    sg = folder / "awscluster.yaml"
    sg.write_text(sg.read_text().replace(
        "apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: AWSCluster",
        "apiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: AWSManagedControlPlane", 1).replace(
        "      lb:\n", "      cluster:\n        id: sg-0eks0000000cluster\n        ingressRule:\n"
        "        - {protocol: tcp, fromPort: 30000, toPort: 32767, sourceSecurityGroupIDs: "
        "[sg-0a1b2c3d4e5f60001]}\n      lb:\n", 1))
    assert "AWSManagedControlPlane" in sg.read_text()
    assert not scan([folder], ["HCP007"]).findings


@pytest.mark.parametrize(("router", "port"), [("hostnetwork", 443), ("nodeport", 30443)])
def test_a_route_through_a_router_on_the_machines_meets_their_groups(router: str, port: int):
    """A router published HostNetwork takes Route traffic on 443 of the machines, a
    NodePortService router on its Service's https node port: the machines' groups decide
    the workers' Route way in, at that port; the twin whose group admits it passes."""
    report = scan([SG / f"router-{router}-fail"], ["HCP007", "HCP001", "HCP002"])
    by_flow = {f.facts["flow"]: f for f in report.findings if f.rule_id == "HCP007"}
    assert sorted(by_flow) == ["workers-to-ignition", "workers-to-konnectivity"]
    for finding in by_flow.values():
        hop = finding.facts["blocking_hop"]
        assert hop["layer"] == "perimeter" and f"TCP/{port}" in hop["summary"]
        assert hop["path"].endswith("awscluster.yaml")
    # nobody outside gets through the groups either: who-gets-in agrees
    assert not [f for f in report.findings if f.rule_id != "HCP007"]
    passing = scan([SG / f"router-{router}-pass"], ["HCP007", "HCP001", "HCP002"])
    assert not passing.findings
    assert all(r.status is Status.PASS for r in passing.results)


def test_a_route_through_a_load_balanced_router_is_not_behind_the_machines_groups(tmp_path: Path):
    """The same estate with the default router behind a LoadBalancerService: the cloud's
    load balancer, not the machines' groups, is the Route's way in (as before)."""
    folder = _copy("router-hostnetwork-fail", tmp_path)
    ic = folder / "ingresscontroller.yaml"
    ic.write_text(ic.read_text().replace("type: HostNetwork", "type: LoadBalancerService"))
    report = scan([folder], ["HCP007"])
    assert not report.findings


def test_a_host_network_router_on_other_ports_is_judged_at_those(tmp_path: Path):
    folder = _copy("router-hostnetwork-pass", tmp_path)
    ic = folder / "ingresscontroller.yaml"
    ic.write_text(ic.read_text().replace("type: HostNetwork",
                                         "type: HostNetwork\n    hostNetwork: {httpsPort: 8443}"))
    report = scan([folder], ["HCP007"])
    hops = [f.facts["blocking_hop"]["summary"] for f in report.findings]
    assert len(hops) == 2 and all("TCP/8443" in h for h in hops)


def test_a_node_port_router_whose_service_is_absent_is_asked_on_every_node_port(tmp_path: Path):
    """Without Service router-nodeport-default the node port is not known: the group that
    admits none of the node-port range still shuts the way (every port of it is shut)."""
    folder = _copy("router-nodeport-fail", tmp_path)
    ic = folder / "ingresscontroller.yaml"
    ic.write_text(ic.read_text().split("---\n", 1)[0])
    report = scan([folder], ["HCP007"])
    assert sorted(f.facts["flow"] for f in report.findings) == ["workers-to-ignition",
                                                                "workers-to-konnectivity"]


LB_SG = "service.beta.kubernetes.io/aws-load-balancer-security-groups: hcp-konnectivity-lb"


def test_a_load_balancers_annotated_group_admitting_the_workers_to_6443_only_shuts_konnectivity():
    """The Service's aws-load-balancer-security-groups puts its Classic load balancer in a
    group (named by its name, declared with ACK) that admits the workers to 6443 only:
    HCP007 fails for konnectivity at the group's line; the twin admitting 8091 passes."""
    report = scan([SG / "lb-annotation-fail"], ["HCP007", "HCP001", "HCP002", "HCP003"])
    (finding,) = report.findings
    assert finding.rule_id == "HCP007" and finding.facts["flow"] == "workers-to-konnectivity"
    hop = finding.facts["blocking_hop"]
    assert hop["layer"] == "perimeter" and "sg-0ac00000000konnlb" in hop["summary"]
    assert "TCP/8091" in hop["summary"] and "instead of the group the cloud provider makes" in hop["summary"]
    assert hop["path"].endswith("securitygroup.yaml")
    assert hop["line"] == _line_of(SG / "lb-annotation-fail" / "securitygroup.yaml", "spec:")
    passing = scan([SG / "lb-annotation-pass"], ["HCP007", "HCP001", "HCP002", "HCP003"])
    assert not passing.findings and all(r.status is Status.PASS for r in passing.results)


def test_the_load_balancers_group_is_not_taken_as_the_machines(tmp_path: Path):
    """Without the CAPA object, the annotated group admits the workers to 6443 (a port the
    control plane publishes) yet is the load balancer's: it is not guessed in front of the
    machines (the ignition node port is not judged on it)."""
    folder = _copy("lb-annotation-fail", tmp_path)
    (folder / "awscluster.yaml").unlink()
    assert manifest_perimeter(_inventory(folder), []) is None
    flows = [f.facts["flow"] for f in scan([folder], ["HCP007"]).findings]
    assert flows == ["workers-to-konnectivity"]


def test_extra_groups_add_to_the_group_the_cloud_provider_makes(tmp_path: Path):
    """aws-load-balancer-extra-security-groups: the provider's own group stays and admits
    loadBalancerSourceRanges on the Service's ports; the extra group only adds."""
    folder = _copy("lb-annotation-fail", tmp_path)
    hc = folder / "hcp.yaml"
    text = hc.read_text().replace("aws-load-balancer-security-groups:", "aws-load-balancer-extra-security-groups:")
    hc.write_text(text)
    assert not scan([folder], ["HCP007"]).findings  # no source ranges: the provider's group admits all
    hc.write_text(text.replace("  allocateLoadBalancerNodePorts: false\n",
                               "  allocateLoadBalancerNodePorts: false\n"
                               "  loadBalancerSourceRanges: [192.168.50.0/24]\n"))
    (finding,) = scan([folder], ["HCP007"]).findings
    assert finding.facts["flow"] == "workers-to-konnectivity"
    assert "extra-security-groups" in finding.facts["blocking_hop"]["summary"]


def test_an_annotated_group_not_in_the_input_makes_the_flow_not_evaluable_naming_it(tmp_path: Path):
    folder = _copy("lb-annotation-fail", tmp_path)
    (folder / "securitygroup.yaml").unlink()
    report = scan([folder], ["HCP007"])
    assert not report.findings
    (result,) = report.results
    assert result.status is Status.NOT_EVALUABLE
    assert "hcp-konnectivity-lb" in result.reason and "aws-load-balancer-security-groups" in result.reason


def test_an_nlb_of_the_cloud_provider_does_not_read_the_annotation(tmp_path: Path):
    """The cloud provider makes an NLB without groups and ignores the annotation (it opens
    the nodes' groups instead): the Service is judged on its source ranges, with a warning
    at the annotation; the AWS Load Balancer Controller's NLB reads it, and the evidence
    says AWS sets an NLB's groups only at creation."""
    folder = _copy("lb-annotation-fail", tmp_path)
    hc = folder / "hcp.yaml"
    text = hc.read_text()
    hc.write_text(text.replace(f"    {LB_SG}\n",
                               f"    {LB_SG}\n    service.beta.kubernetes.io/aws-load-balancer-type: nlb\n"))
    report = scan([folder], ["HCP007"])
    assert not report.findings
    assert any("does not read service.beta.kubernetes.io/aws-load-balancer-security-groups" in str(d)
               for d in report.diagnostics)
    hc.write_text(text.replace(f"    {LB_SG}\n",
                               f"    {LB_SG}\n    service.beta.kubernetes.io/aws-load-balancer-type: external\n"))
    (finding,) = scan([folder], ["HCP007"]).findings
    assert "only when it was created with some" in finding.facts["blocking_hop"]["summary"]


def test_path_query_through_the_annotated_group_agrees_with_the_flow(run_cli):
    for case, code in (("lb-annotation-fail", 1), ("lb-annotation-pass", 0)):
        result = run_cli("connectivity", "--no-progress", str(SG / case), "--path", "--from", "workers",
                         "--to", "clusters-shop/kube-apiserver", "--port", "8091")
        assert result.code == code, result.out
        assert "sg-0ac00000000konnlb" in result.out


def test_an_undescribed_load_balancer_group_leaves_only_its_own_way_unknown(tmp_path: Path):
    """The load balancer's group is not in the input (konnectivity: unknown) while the
    machines' node group shuts the ignition node port: ignition still fails at the node
    group, not unknown for a group that is not in front of it."""
    folder = _copy("lb-annotation-fail", tmp_path)
    (folder / "securitygroup.yaml").unlink()
    shutil.copy(SG / "capa-fail" / "awscluster.yaml", folder / "awscluster.yaml")
    report = scan([folder], ["HCP007"])
    (finding,) = report.findings
    assert finding.facts["flow"] == "workers-to-ignition"
    assert "sg-0f00d00000000node" in finding.facts["blocking_hop"]["summary"]
    assert "hcp-konnectivity-lb" not in finding.facts["blocking_hop"]["summary"]


def test_the_fix_text_names_only_the_load_balancers_groups_that_shut_it(tmp_path: Path, run_cli):
    folder = _copy("lb-annotation-fail", tmp_path)
    before = {p.name: p.read_text() for p in folder.iterdir()}
    done = run_cli("fix", "--no-progress", str(folder), "--select", "HCP007")
    said = done.out + done.err
    assert {p.name: p.read_text() for p in folder.iterdir()} == before
    assert "security group sg-0ac00000000konnlb (hcp-konnectivity-lb) of the load balancer" in said
    assert "sg-0f00d00000000node" not in said  # the machines' groups do not front the load balancer


def test_a_group_admitting_part_of_the_workers_says_which_part_is_shut(tmp_path: Path):
    """A node group rule that admits 10.20.0.0/24 of the workers' 10.20.0.0/16 to the node
    ports leaves the flow blocked for the rest, and the blocking hop says so: "no ingress rule
    admits it" alone read as if no rule admitted any worker."""
    folder = _copy("capa-fail", tmp_path)
    aws = folder / "awscluster.yaml"
    text = aws.read_text()
    anchor = "          sourceSecurityGroupIDs: [sg-0a1b2c3d4e5f60001]\n"
    assert anchor in text
    aws.write_text(text.replace(anchor, anchor + (
        "        - description: node ports\n          protocol: tcp\n          fromPort: 30000\n"
        "          toPort: 32767\n          cidrBlocks: [10.20.0.0/24]\n"), 1))
    report = scan([folder], ["HCP007"])
    by_flow = {f.facts["flow"]: f for f in report.findings if f.rule_id == "HCP007"}
    assert sorted(by_flow) == ["workers-to-ignition", "workers-to-konnectivity"]
    summary = by_flow["workers-to-konnectivity"].facts["blocking_hop"]["summary"]
    assert "(for 10.20.1.0-10.20.255.255; 10.20.0.0/24 of the range gets through)" in summary
