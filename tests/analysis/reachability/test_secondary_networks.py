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
    assert "ipBlock 10.0.0.0/8 is taken to match no workload" in messages
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
