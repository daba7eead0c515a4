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


def _vm(name: str) -> str:
    return (f"---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\n"
            f"metadata: {{name: {name}, namespace: lab}}\n"
            "spec: {template: {metadata: {labels: {kubevirt.io/domain: " + name + "}}, "
            "spec: {domain: {devices: {}}, networks: [{name: default, pod: {}}]}}}\n")


def test_vms_on_the_pod_network_are_mapped_to_it(run_cli, tmp_path):
    """With KubeVirt VMs the answer names each workload's network even when no UDN or NAD
    splits the cluster: the list ends with the mapping, the explanation's headers say
    `in pod-network`; the connections are the same. Pods alone get neither."""
    (tmp_path / "in.yaml").write_text(_ns("lab", primary=False) + _vm("db") + _vm("web"))
    listed = run_cli("connectivity", "--no-progress", str(tmp_path))
    assert listed.code == 0, listed.err
    lines = listed.out.splitlines()
    assert "lab/db[VirtualMachine] => lab/web[VirtualMachine] : All Connections" in lines
    assert "Permitted connectivity analyzed in Pod network:" not in lines
    assert lines[lines.index("Workload-to-Networks Mapping:") - 1] == ""
    assert lines[lines.index("Workload-to-Networks Mapping:"):] == [
        "Workload-to-Networks Mapping:", "lab/db[VirtualMachine]: ", "\tPrimary Network: pod-network",
        "lab/web[VirtualMachine]: ", "\tPrimary Network: pod-network"]
    explained = run_cli("connectivity", "--no-progress", str(tmp_path), "--explain").out
    assert "# All Connections due to the system default (Allow all) in pod-network #" in explained
    one = run_cli("connectivity", "--no-progress", str(tmp_path), "--focus-conn", "tcp-80").out
    assert "Mapping" not in one  # focused on one connection: pairs only, as upstream
    (tmp_path / "in.yaml").write_text(_ns("lab", primary=False) + _pod("lab")
                                      + _pod("lab").replace("name: app", "name: other"))
    plain = run_cli("connectivity", "--no-progress", str(tmp_path), "--explain").out
    assert "lab/app[Pod] => lab/other[Pod]" in plain and "in pod-network" not in plain
    assert "Mapping" not in run_cli("connectivity", "--no-progress", str(tmp_path)).out


SERVED = """\
---
apiVersion: v1
kind: Service
metadata: {name: shop, namespace: green}
spec:
  selector: {tier: web}
  ports: [{port: 80, targetPort: 8080}, {port: 443, targetPort: 8443}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: green}
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: shop, port: {number: 80}}}}
---
apiVersion: v1
kind: Pod
metadata: {name: front, namespace: green, labels: {tier: web}}
spec: {containers: [{name: c, ports: [{containerPort: 8080}]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: legacy, namespace: green, labels: {tier: web}}
spec: {containers: [{name: c, ports: [{containerPort: 9000}]}]}
"""


def test_the_ingress_controller_reaches_every_endpoint_of_the_service_in_a_udn(manifests):
    """Documented deviation from netpol-analyzer: the router forwards to a primary UDN's pods
    through the Service (OVN-Kubernetes' design: the ingress namespace may reach every
    Service; the Service's load balancer sends to targetPort on every selected pod), and a
    container port list opens nothing and closes nothing. So `legacy`, which declares only
    9000, is reached on 8080 like `front`; netpol-analyzer keeps only declared TCP ports."""
    for udn in (True, False):
        text = _ns("green", primary=udn) + (_udn("green") if udn else "") + SERVED
        lines = connection_list(manifests(text)).lines()
        name = "green[udn]" if udn else "green"
        assert f"{{ingress-controller}} => {name}/front[Pod] : TCP 8080" in lines
        assert f"{{ingress-controller}} => {name}/legacy[Pod] : TCP 8080" in lines
        assert not [line for line in lines if "8443" in line]  # the Ingress names port 80 only


def test_a_cluster_without_networks_beside_one_with_udns_keeps_its_lines(run_cli, tmp_path):
    """Several clusters, one with UDN sections: the other's list is its pod-network
    section (its lines were left out of the text answer before)."""
    (tmp_path / "mgmt.yaml").write_text(TEXT)
    guest = tmp_path / "hostedcluster-guest"
    guest.mkdir()
    (guest / "pods.yaml").write_text(_pod("apps") + _pod("apps").replace("name: app", "name: db"))
    result = run_cli("connectivity", "--no-progress", str(tmp_path))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    header = [line for line in lines if line.endswith("Permitted connectivity analyzed in Pod network:")
              and "management" not in line]
    assert len(header) == 1
    start = lines.index(header[0])
    assert "apps/app[Pod] => apps/db[Pod] : All Connections" in lines[start:start + 8]
    assert any(line.startswith("management: Permitted connectivity analyzed in primary UDN blue")
               for line in lines)
