"""Secondary networks: pods attached to NetworkAttachmentDefinitions talk on them as the
MultiNetworkPolicies named for them allow, and NetworkPolicies do not reach there."""

from __future__ import annotations

import json

import pytest

from hcpscan.analysis.reachability.connlist import connection_list
from hcpscan.analysis.reachability.graph import build_reachability
from hcpscan.analysis.reachability.secondary import NadRef, parse_networks_annotation

NS = "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n"


def _nad(name: str, ns: str = "apps", api: str = "k8s.cni.cncf.io/v1") -> str:
    return (f"---\napiVersion: {api}\nkind: NetworkAttachmentDefinition\n"
            f"metadata: {{name: {name}, namespace: {ns}}}\nspec: {{config: '{{}}'}}\n")


def _pod(name: str, networks: str = "", host: bool = False) -> str:
    ann = f"\n  annotations: {{k8s.v1.cni.cncf.io/networks: {json.dumps(networks)}}}" if networks else ""
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: apps\n"
            f"  labels: {{app: {name}}}{ann}\n"
            f"spec: {{hostNetwork: {str(host).lower()}, containers: [{{name: c}}]}}\n")


def _mnp(name: str, policy_for: str | None, spec: str) -> str:
    ann = f"\n  annotations: {{k8s.v1.cni.cncf.io/policy-for: {policy_for}}}" if policy_for else ""
    return (f"---\napiVersion: k8s.cni.cncf.io/v1beta1\nkind: MultiNetworkPolicy\nmetadata:\n"
            f"  name: {name}\n  namespace: apps{ann}\nspec: {spec}\n")


DENY_ALL_NP = """\
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: apps}
spec: {podSelector: {}, policyTypes: [Ingress, Egress]}
"""
ONLY_FROM_A = "{podSelector: {matchLabels: {app: b}}, ingress: [{from: [{podSelector: {matchLabels: {app: a}}}]}]}"


@pytest.mark.parametrize(("text", "refs"), [
    ("net1", [NadRef("apps", "net1")]),
    ("net1, other/net2@eth3", [NadRef("apps", "net1"), NadRef("other", "net2")]),
    ('[{"name": "net1", "interface": "x"}, {"name": "net2", "namespace": "other"}]',
     [NadRef("apps", "net1"), NadRef("other", "net2")]),
])
def test_both_forms_of_the_networks_annotation(text, refs):
    assert parse_networks_annotation(text, "apps") == refs


def test_each_secondary_network_is_its_own_section(manifests):
    result = connection_list(manifests(NS + DENY_ALL_NP + _nad("blue") + _nad("red")
                                       + _pod("a", "blue,red") + _pod("b", "apps/blue")
                                       + _pod("c", '[{"name": "red"}]')))
    titles = [s.network.title for s in result.sections]
    assert titles == ["Pod network", "secondary NAD blue", "secondary NAD red"]
    blue, red = (set(str(c) for c in s.connections) for s in result.sections[1:])
    # the NetworkPolicy denying everything acts on the pod network only
    assert not result.sections[0].connections
    assert blue == {"apps/a[Pod] => apps/b[Pod] : All Connections",
                    "apps/b[Pod] => apps/a[Pod] : All Connections"}
    assert red == {"apps/a[Pod] => apps/c[Pod] : All Connections",
                   "apps/c[Pod] => apps/a[Pod] : All Connections"}
    assert result.secondary[("management", "apps/a[Pod]")] == ["blue", "red"]
    assert "\tSecondary Networks: blue[NAD],red[NAD]" in result.section_lines()
    assert not result.unevaluated  # the list evaluates NADs and MNPs: nothing to declare


def test_a_multinetworkpolicy_acts_only_on_the_networks_it_is_for(manifests):
    text = (NS + _nad("blue") + _nad("red") + _pod("a", "blue,red") + _pod("b", "blue,red")
            + _mnp("only-a", "apps/blue", ONLY_FROM_A))
    result = connection_list(manifests(text))
    blue, red = (set(str(c) for c in s.connections) for s in result.sections[1:])
    assert blue == {"apps/a[Pod] => apps/b[Pod] : All Connections",
                    "apps/b[Pod] => apps/a[Pod] : All Connections"}
    assert red == blue  # not for red: both ways stay open there
    denied = text.replace(ONLY_FROM_A, ONLY_FROM_A.replace("{app: a}", "{app: nobody}"))
    blue = {str(c) for c in connection_list(manifests(denied)).sections[1].connections}
    assert blue == {"apps/b[Pod] => apps/a[Pod] : All Connections"}


def test_policy_for_without_namespace_means_the_policys_own(manifests):
    text = (NS + _nad("blue") + _pod("a", "blue") + _pod("b", "blue")
            + _mnp("deny-b", "blue", "{podSelector: {matchLabels: {app: b}}, policyTypes: [Ingress]}"))
    blue = {str(c) for c in connection_list(manifests(text)).sections[1].connections}
    assert blue == {"apps/b[Pod] => apps/a[Pod] : All Connections"}


def test_what_cannot_be_evaluated_is_said(manifests):
    text = (NS + _nad("blue") + _pod("a", "blue,missing") + _pod("b", "[not json")
            + _pod("h", "blue", host=True)
            + _mnp("no-target", None, "{podSelector: {}}")
            + _mnp("cidr", "blue", "{podSelector: {}, ingress: [{from: [{ipBlock: {cidr: 10.0.0.0/8}}]}]}"))
    result = connection_list(manifests(text))
    messages = " | ".join(d.message for d in result.diagnostics)
    assert "NetworkAttachmentDefinition apps/missing, which is not in the input" in messages
    assert "annotation k8s.v1.cni.cncf.io/networks cannot be read" in messages
    assert "has no k8s.v1.cni.cncf.io/policy-for annotation" in messages
    assert ("ipBlock 10.0.0.0/8 is taken to match none of apps/a[Pod] (their addresses on "
            "secondary network blue are not in the input)") in messages
    # hostNetwork pods get no secondary interface
    assert ("management", "apps/h[Pod]") not in result.secondary


def test_a_nad_with_a_misspelt_group_is_read_with_a_warning(manifests):
    result = connection_list(manifests(NS + _nad("blue", api="k8s.cni.cnf.io/v1")
                                       + _pod("a", "blue") + _pod("b", "blue")))
    assert [s.network.title for s in result.sections][-1] == "secondary NAD blue"
    assert any("read as k8s.cni.cncf.io NetworkAttachmentDefinition" in d.message
               for d in result.diagnostics)


def test_queries_still_say_they_leave_secondary_networks_out(manifests):
    graph = build_reachability(manifests(NS + _nad("blue") + _pod("a", "blue") + _pod("b", "blue")))
    assert "NetworkAttachmentDefinition" in graph.exclusion_note()


def test_the_cli_lists_the_sections(run_cli, tmp_path):
    (tmp_path / "in.yaml").write_text(NS + _nad("blue") + _pod("a", "blue") + _pod("b", "blue"))
    result = run_cli("connectivity", "--no-progress", str(tmp_path))
    assert result.code == 0, result.err
    assert not result.out.startswith("#")
    assert "Permitted connectivity analyzed in secondary NAD blue:" in result.out
    csv = run_cli("connectivity", "--no-progress", str(tmp_path), "--format", "csv").out
    assert "apps/a[Pod],apps/b[Pod],All Connections,blue" in csv.splitlines()


A_OUT_TO_B = ("{podSelector: {matchLabels: {app: a}}, policyTypes: [Egress], egress: [{to: "
              "[{podSelector: {matchLabels: {app: b}}}], ports: [{port: 8080, protocol: TCP}]}]}")


def test_explain_names_the_multinetworkpolicy_rule_on_its_network(run_cli, tmp_path):
    """Beside the pod network (where a NetworkPolicy denies all), the secondary network's
    section explains its pairs by the MultiNetworkPolicy's egress rule, names no
    direction only the default decides, and the answer no longer says it leaves
    secondary networks out; with --exposure (pod network only) it still does."""
    (tmp_path / "in.yaml").write_text(NS + DENY_ALL_NP + _nad("blue") + _pod("a", "blue")
                                      + _pod("b", "blue") + _pod("c", "blue")
                                      + _mnp("a-out", "blue", A_OUT_TO_B))
    result = run_cli("connectivity", "--no-progress", str(tmp_path), "--explain")
    assert result.code == 0, result.err
    assert not result.out.startswith("#")
    _, blue = result.out.split("# Specific connections and their reasons in secondary NAD blue #")
    assert "NetworkPolicy 'apps/deny'" not in blue and "[External]" not in blue
    pairs = {b.split("\n")[0]: b for b in blue.split("Connections between ")[1:]}
    a_b = pairs["apps/a[Pod] => apps/b[Pod]:"]
    assert ("\tAllowed TCP:[8080] due to the following policies and rules:\n\t\tEgress (Allowed)\n"
            "\t\t\tMultiNetworkPolicy 'apps/a-out' allows connections by Egress rule #1\n") in a_b
    assert ("MultiNetworkPolicy 'apps/a-out' selects apps/a[Pod], and Egress rule #1 selects "
            "apps/b[Pod], but the protocols and ports do not match") in a_b
    assert "Ingress" not in a_b  # nothing on b's side decides: not named, as upstream
    a_c = pairs["apps/a[Pod] => apps/c[Pod]:"]
    assert ("MultiNetworkPolicy 'apps/a-out' selects apps/a[Pod], but apps/c[Pod] is not "
            "allowed by any Egress rule\n") in a_c
    default = blue.split("# All Connections due to the system default (Allow all) in secondary "
                         "NAD blue #")[1]
    assert "apps/b[Pod] => apps/a[Pod]" in default and "apps/a[Pod] => apps/b" not in default
    assert "*** Note" not in result.out  # secondary networks are not isolated ones
    exposure = run_cli("connectivity", "--no-progress", str(tmp_path), "--explain", "--exposure")
    assert exposure.out.startswith("# answer excludes") and "NetworkAttachmentDefinition" in \
        exposure.out.splitlines()[0]


# -- pods' addresses on a secondary network -------------------------------------------------

def _status(nad: str, ip: str) -> str:
    """The network-status annotation Multus writes: the pod network's entry, then the NAD's."""
    return json.dumps([{"name": "ovn-kubernetes", "interface": "eth0", "ips": ["10.128.0.9"],
                        "default": True},
                       {"name": f"apps/{nad}", "interface": "net1", "ips": [ip]}])


def _addressed_pod(name: str, ip: str, via: str) -> str:
    if via == "status":
        ann = {"k8s.v1.cni.cncf.io/networks": "blue",
               "k8s.v1.cni.cncf.io/network-status": _status("blue", ip)}
    else:  # the JSON networks annotation asking for a static address (with its prefix)
        ann = {"k8s.v1.cni.cncf.io/networks": json.dumps([{"name": "blue", "ips": [f"{ip}/24"]}])}
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: apps\n"
            f"  labels: {{role: db}}\n  annotations: {json.dumps(ann)}\n"
            "spec: {containers: [{name: c}]}\n")


FROM_BLOCK = ("{podSelector: {matchLabels: {role: db}}, policyTypes: [Ingress], "
              "ingress: [{from: [{ipBlock: {cidr: 192.0.2.0/30}}]}]}")


@pytest.mark.parametrize("via", ["status", "networks"])
def test_a_multinetworkpolicy_ipblock_selects_pods_by_their_address_on_the_network(manifests, via):
    """db-1 (192.0.2.1) and db-2 (192.0.2.2) are in the block, db-9 (192.0.2.9) is not: the
    three pods look alike to selectors, only their addresses tell them apart; db-9 sends
    to nobody."""
    text = (NS + _nad("blue") + _addressed_pod("db-1", "192.0.2.1", via)
            + _addressed_pod("db-2", "192.0.2.2", via) + _addressed_pod("db-9", "192.0.2.9", via)
            + _mnp("from-block", "blue", FROM_BLOCK))
    result = connection_list(manifests(text))
    blue = {str(c) for c in result.sections[-1].connections}
    assert blue == {"apps/db-1[Pod] => apps/db-2[Pod] : All Connections",
                    "apps/db-2[Pod] => apps/db-1[Pod] : All Connections",
                    "apps/db-1[Pod] => apps/db-9[Pod] : All Connections",
                    "apps/db-2[Pod] => apps/db-9[Pod] : All Connections"}
    assert not [d for d in result.diagnostics if "ipBlock" in d.message]
    # the same policy on the pod network would match no pod (ipBlock is outside by default)
    assert "10.128.0.9" not in " ".join(str(c) for c in result.connections)


def test_pods_without_addresses_on_the_network_are_named_in_the_warning(manifests):
    text = (NS + _nad("blue") + _addressed_pod("db-1", "192.0.2.1", "status") + _pod("x", "blue")
            + _mnp("from-block", "blue", FROM_BLOCK.replace("role: db", "app: x")))
    result = connection_list(manifests(text))
    blue = {str(c) for c in result.sections[-1].connections}
    assert blue == {"apps/db-1[Pod] => apps/x[Pod] : All Connections",
                    "apps/x[Pod] => apps/db-1[Pod] : All Connections"}
    (warning,) = [d for d in result.diagnostics if "ipBlock" in d.message]
    assert "match none of apps/x[Pod]" in warning.message and "db-1" not in warning.message


def _vm(name: str, network_data: str, pod_network: bool = False) -> str:
    networks = [{"name": "sec", "multus": {"networkName": "blue"}}]
    if pod_network:
        networks.insert(0, {"name": "default", "pod": {}})
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
          "metadata": {"name": name, "namespace": "apps"},
          "spec": {"template": {"metadata": {"labels": {"role": "db"}}, "spec": {
              "domain": {"devices": {"interfaces": [{"name": n["name"], "bridge": {}}
                                                    for n in networks]}},
              "networks": networks,
              "volumes": [{"name": "cloudinit", "cloudInitNoCloud": {"networkData": network_data}}],
          }}}}
    return "---\n" + json.dumps(vm) + "\n"


def test_a_vm_s_cloud_init_addresses_are_its_addresses_on_its_secondary_networks(manifests):
    v2 = "version: 2\nethernets:\n  eth0: {dhcp4: true, addresses: [192.0.2.2/24]}\n  eth1:\n    addresses: [192.0.2.1/24]\n"
    v1 = ("network:\n  version: 1\n  config:\n  - type: physical\n    name: enp2s0\n"
          "    subnets: [{type: static, address: 192.0.2.9/24}]\n")
    text = (NS + _nad("blue") + _vm("vm-in", v2, pod_network=True) + _vm("vm-out", v1)
            + _vm("vm-eth0", "version: 2\nethernets: {eth0: {addresses: [192.0.2.3/24]}}\n")
            + _mnp("from-block", "blue", FROM_BLOCK))
    result = connection_list(manifests(text))
    blue = {str(c) for c in result.sections[-1].connections}
    # vm-in: eth1 only (eth0 is its pod network); vm-eth0: no pod network, so eth0 is blue's;
    # vm-out (192.0.2.9, netplan version 1) is outside the block: it sends to nobody
    senders = {"vm-in", "vm-eth0"}
    assert blue == {f"apps/{a}[VirtualMachine] => apps/{b}[VirtualMachine] : All Connections"
                    for a in senders for b in ("vm-in", "vm-eth0", "vm-out") if a != b}


B_FROM_A_ON_8080 = ("{podSelector: {matchLabels: {app: b}}, ingress: [{from: [{podSelector: "
                    "{matchLabels: {app: a}}}], ports: [{port: 8080}]}]}")


def test_queries_evaluate_secondary_networks_between_workloads(manifests):
    """--to questions: a path per secondary network both workloads are on, decided by its
    MultiNetworkPolicies alone (the NetworkPolicy denying all acts on the pod network)."""
    text = (NS + DENY_ALL_NP + _nad("blue") + _pod("a", "blue") + _pod("b", "blue") + _pod("c")
            + _mnp("b-from-a", "blue", B_FROM_A_ON_8080))
    graph = build_reachability(manifests(text))
    reach = graph.can_reach("apps/a", "apps/b", 8080)
    assert reach.allowed
    (path,) = [p for p in reach.paths if p.allowed]
    assert path.via == "secondary network blue"
    assert any("allowed by MultiNetworkPolicy apps/b-from-a ingress rule #1" in e.summary
               for e in path.evidence)
    denied = graph.can_reach("apps/a", "apps/b", 9090)
    assert not denied.allowed
    assert {p.via for p in denied.paths} == {"pod network", "secondary network blue"}
    assert not graph.can_reach("apps/c", "apps/b", 8080).allowed  # c is not on blue
    sources = {str(r.source) for r in graph.who_can_reach("apps/b", 8080)}
    assert any("apps/a" in s for s in sources) and not any("apps/c" in s for s in sources)


def test_the_cli_question_no_longer_declares_what_it_evaluates(run_cli, tmp_path):
    (tmp_path / "in.yaml").write_text(NS + DENY_ALL_NP + _nad("blue") + _pod("a", "blue")
                                      + _pod("b", "blue") + _mnp("b-from-a", "blue", B_FROM_A_ON_8080))
    base = ("connectivity", "--no-progress", str(tmp_path), "--to", "apps/b", "--port", "8080")
    between = run_cli(*base, "--from", "apps/a")
    assert between.code == 0, between.err
    assert between.out.startswith("apps/a[Pod] CAN reach apps/b[Pod] on TCP/8080")
    assert "via secondary network blue: open" in between.out
    assert "not evaluated" not in between.err
    # with outside sources in the answer, the NAD is named for traffic from outside only
    who = run_cli(*base, "--format", "json")
    (excluded,) = json.loads(who.out)["excluded"]
    assert excluded["kind"] == "NetworkAttachmentDefinition"
    assert "evaluated between workloads" in excluded["label"]
    assert "MultiNetworkPolicy" not in who.err


def test_hostile_address_sources_give_no_addresses_not_a_traceback(manifests):
    """An alias bomb in a VM's networkData, JSON nested past Python's limit in the
    network-status annotation: read as no addresses (the ipBlock warning names them)."""
    bomb = "a: &a [x,x,x,x,x,x,x,x]\n" + "".join(
        f"{b}: &{b} [{', '.join([f'*{a}'] * 8)}]\n" for a, b in zip("abcdefg", "bcdefgh"))
    deep = "[" * 5000
    text = (NS + _nad("blue") + _vm("vm", bomb)
            + _pod("p", "blue").replace("  annotations: {", "  annotations: {k8s.v1.cni.cncf.io/"
                                        f"network-status: '{deep}', ")
            + _mnp("from-block", "blue", FROM_BLOCK.replace("role: db", "app: p")))
    result = connection_list(manifests(text))
    (warning,) = [d for d in result.diagnostics if "ipBlock" in d.message]
    assert "apps/p[Pod]" in warning.message and "apps/vm[VirtualMachine]" in warning.message


def test_the_cli_question_warns_where_its_secondary_answer_rests_on_missing_input(run_cli, tmp_path):
    """--to evaluates secondary networks between workloads, so the list's warnings about
    them hold there too: a 'blocked' over the network that rests on an ipBlock the pod's
    unknown address was taken not to match must say so (and a NAD the input lacks)."""
    (tmp_path / "in.yaml").write_text(
        NS + DENY_ALL_NP + _nad("blue") + _addressed_pod("db-1", "192.0.2.1", "status") + _pod("x", "blue")
        + _pod("y", "blue, red") + _mnp("from-block", "blue", FROM_BLOCK))
    base = ("connectivity", "--no-progress", str(tmp_path), "--to", "apps/db-1", "--port", "5432")
    for extra in (("--from", "apps/x"), ()):
        result = run_cli(*base, *extra)
        assert result.code == 0, result.err
        words = set(result.err.replace("│", " ").split())  # the table wraps its columns
        assert {"ipBlock", "192.0.2.0/30", "apps/x[Pod],", "apps/red,"} <= words, extra
    assert "via secondary network blue: blocked" in run_cli(*base, "--from", "apps/x").out


def test_a_vm_on_two_secondary_networks_is_selected_by_the_block_of_its_address_there(manifests):
    """A VM's cloud-init addresses count on each of its secondary networks (the guest's
    interface names do not say which is which), so on blue the VM holds its blue address
    and its red one: an ipBlock of blue's subnet must select it (one of them is its
    address on blue, as netpol-analyzer takes it), not deny it for the red one."""
    v2 = ("version: 2\nethernets:\n  eth0: {dhcp4: true}\n  eth1: {addresses: [192.0.2.1/24]}\n"
          "  eth2: {addresses: [198.51.100.7/24]}\n")
    vm = json.loads(_vm("vm", v2, pod_network=True).removeprefix("---\n"))
    vm["spec"]["template"]["spec"]["networks"].append({"name": "r", "multus": {"networkName": "red"}})
    text = (NS + _nad("blue") + _nad("red") + "---\n" + json.dumps(vm) + "\n"
            + _addressed_pod("db-1", "192.0.2.9", "status")
            + _addressed_pod("db-2", "192.0.3.5", "status")
            + _mnp("from-block", "blue", FROM_BLOCK.replace("192.0.2.0/30", "192.0.2.0/24")))
    result = connection_list(manifests(text))
    (blue,) = [s for s in result.sections if "blue" in str(s.network)]
    lines = {str(c) for c in blue.connections}
    assert "apps/vm[VirtualMachine] => apps/db-1[Pod] : All Connections" in lines
    # a pod whose address is outside the block is still not selected
    assert not [line for line in lines if line.startswith("apps/db-2[Pod] => ")]
    assert "apps/db-1[Pod] => apps/db-2[Pod] : All Connections" in lines
