"""Never silently wrong: policy-like objects the engine does not evaluate are named by the
connection list, the queries and every rule built on the reachability graph."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hcpscan.analysis.reachability.coverage import policy_label, unevaluated_policies
from hcpscan.inventory.objects import K8sObject, SourceLocation

from .conftest import CPO_RENDERED, FIXTURES, REPO, load

EXAMPLE = REPO / "fixtures" / "example"

CILIUM = """\
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: lockdown, namespace: hcp-namespace}
spec: {endpointSelector: {}, ingress: []}
"""


def _obj(api_version: str, kind: str) -> K8sObject:
    return K8sObject("management", api_version, kind, "ns", "x", {}, SourceLocation("f.yaml", 1))


@pytest.mark.parametrize(("api_version", "kind", "label"), [
    ("crd.projectcalico.org/v1", "NetworkPolicy", "Calico NetworkPolicy"),
    ("crd.projectcalico.org/v1", "GlobalNetworkPolicy", "Calico GlobalNetworkPolicy"),
    ("cilium.io/v2", "CiliumNetworkPolicy", "CiliumNetworkPolicy"),
    ("cilium.io/v2", "CiliumClusterwideNetworkPolicy", "CiliumClusterwideNetworkPolicy"),
    ("security.istio.io/v1", "AuthorizationPolicy", "Istio AuthorizationPolicy"),
    ("k8s.cni.cncf.io/v1beta1", "MultiNetworkPolicy", "MultiNetworkPolicy"),
    ("antrea.io/v1", "NetworkPolicy", "NetworkPolicy of API group antrea.io"),
    ("crd.antrea.io/v1beta1", "ClusterNetworkPolicy", "ClusterNetworkPolicy of API group crd.antrea.io"),
    ("acme.policy.example.com/v1", "TrafficRule",
     "TrafficRule (a acme.policy.example.com policy kind hcpscan does not know)"),
])
def test_policy_like_kinds_are_named(api_version, kind, label):
    assert policy_label(_obj(api_version, kind)) == label


@pytest.mark.parametrize(("api_version", "kind"), [
    ("networking.k8s.io/v1", "NetworkPolicy"),  # evaluated
    ("policy.networking.k8s.io/v1alpha1", "AdminNetworkPolicy"),  # evaluated
    ("policy.networking.k8s.io/v1alpha1", "BaselineAdminNetworkPolicy"),  # evaluated
    ("k8s.ovn.org/v1", "EgressFirewall"),  # evaluated (dnsName rules warn on their own)
    ("k8s.ovn.org/v1", "UserDefinedNetwork"),  # evaluated (primary networks)
    ("k8s.ovn.org/v1", "ClusterUserDefinedNetwork"),
    ("policy/v1", "PodDisruptionBudget"),  # group "policy", but no traffic filter
    ("policy.open-cluster-management.io/v1", "Policy"),  # enforced on managed clusters
    ("wgpolicyk8s.io/v1alpha2", "PolicyReport"),
    ("apps/v1", "Deployment"),
])
def test_kinds_that_filter_no_traffic_here_are_not_named(api_version, kind):
    assert policy_label(_obj(api_version, kind)) is None


def test_objects_are_grouped_per_cluster_and_kind(manifests):
    inventory = manifests(CILIUM + "---\n" + CILIUM.replace("lockdown", "second"))
    (kind,) = unevaluated_policies(inventory)
    assert kind.names == ["hcp-namespace/lockdown", "hcp-namespace/second"]


def test_connection_list_says_what_it_excludes(run_cli, tmp_path):
    (tmp_path / "cilium.yaml").write_text(CILIUM)
    result = run_cli("connectivity", "--no-progress", str(CPO_RENDERED), str(tmp_path))
    assert result.code == 0, result.err
    first, *rest = result.out.splitlines()
    assert first == ("# answer excludes policy objects hcpscan does not evaluate: "
                     "CiliumNetworkPolicy (cilium.io/v2): hcp-namespace/lockdown")
    assert rest and all(" => " in line for line in rest)
    assert "1 CiliumNetworkPolicy object (cilium.io/v2) not evaluated" in result.err

    doc = json.loads(run_cli("connectivity", "--no-progress", "--format", "json", str(CPO_RENDERED),
                             str(tmp_path)).out)
    assert doc["excluded"] == [{"cluster": "management", "kind": "CiliumNetworkPolicy",
                                "label": "CiliumNetworkPolicy", "apiVersion": "cilium.io/v2",
                                "objects": ["hcp-namespace/lockdown"]}]
    assert doc["note"] == first[2:]


def test_a_query_says_what_it_excludes(run_cli, tmp_path):
    (tmp_path / "cilium.yaml").write_text(CILIUM)
    args = ("connectivity", "--no-progress", str(CPO_RENDERED), str(FIXTURES / "hcp-nodeport"),
            str(tmp_path), "--to", "hcp-namespace/ignition-server-proxy", "--port", "8443")
    text = run_cli(*args)
    assert text.code == 0, text.err
    assert text.out.splitlines()[0].startswith("# answer excludes policy objects")
    doc = json.loads(run_cli(*args, "--format", "json").out)
    assert doc["reaches"] and doc["excluded"][0]["objects"] == ["hcp-namespace/lockdown"]


def test_nothing_excluded_means_no_header(run_cli):
    result = run_cli("connectivity", "--no-progress", str(CPO_RENDERED))
    assert not result.out.startswith("#")
    doc = json.loads(run_cli("connectivity", "--no-progress", "--format", "json",
                             str(CPO_RENDERED)).out)
    assert doc["excluded"] == [] and doc["note"] == ""


def _example_with(tmp_path: Path) -> Path:
    """The bundled must-gather plus a Cilium policy and an unknown policy CRD in the HCP
    namespace, in the dump's own layout (so a scan prunes what no rule reads)."""
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root)
    ns = next(root.glob("must-gather.local.*/*/namespaces/clusters-agent-prod"))
    (ns / "cilium.io").mkdir()
    (ns / "cilium.io" / "ciliumnetworkpolicies.yaml").write_text(
        CILIUM.replace("hcp-namespace", "clusters-agent-prod"))
    (ns / "acme.policy.example.com").mkdir()
    (ns / "acme.policy.example.com" / "trafficrules.yaml").write_text(
        "apiVersion: acme.policy.example.com/v1\nkind: TrafficRule\n"
        "metadata: {name: deny-all, namespace: clusters-agent-prod}\n")
    return root


def test_reachability_rules_say_their_answer_excludes_them(run_cli, tmp_path):
    out = tmp_path / "r.json"
    result = run_cli("scan", "--no-progress", "--no-config", "--select", "HCP", "--format",
                     f"json={out}", str(_example_with(tmp_path)))
    assert result.code == 1, result.err
    report = json.loads(out.read_text())
    graph_rules = [r for r in report["rules"] if r["status"] in ("pass", "fail")]
    assert {r["rule_id"] for r in graph_rules} >= {"HCP001", "HCP002", "HCP004"}
    for rule in graph_rules:
        assert "answer excludes policy objects hcpscan does not evaluate" in rule["reason"]
        assert "CiliumNetworkPolicy (cilium.io/v2): clusters-agent-prod/lockdown" in rule["reason"]
        assert "TrafficRule (a acme.policy.example.com policy kind" in rule["reason"]
    failing = [f for f in report["findings"] if f["rule_id"] == "HCP001"]
    assert failing and all(f["evidence"][-1].startswith("answer excludes") for f in failing)
    warnings = [d["message"] for d in report["diagnostics"] if d["severity"] == "warning"]
    assert any("1 CiliumNetworkPolicy object" in m for m in warnings)


def test_rules_that_do_not_use_the_graph_carry_no_note(run_cli, tmp_path):
    out = tmp_path / "r.json"
    run_cli("scan", "--no-progress", "--no-config", "--select", "PRX", "--format", f"json={out}",
            str(_example_with(tmp_path)))
    report = json.loads(out.read_text())
    assert report["rules"]
    assert not any("answer excludes" in r["reason"] for r in report["rules"])


def test_an_inventory_without_policy_like_objects_excludes_nothing():
    assert unevaluated_policies(load(CPO_RENDERED)) == []


CALICO = """\
apiVersion: crd.projectcalico.org/v1
kind: NetworkPolicy
metadata: {name: allow-web, namespace: clusters-agent-prod}
spec:
  selector: app == 'web'
  types: [Ingress]
  ingress: [{action: Allow, protocol: TCP, destination: {ports: [80]}}]
"""


def test_a_calico_network_policy_is_no_subject_of_network_policy_rules(run_cli, tmp_path):
    """Rules name their subjects by kind: Calico's NetworkPolicy is not the networking.k8s.io
    one, so HCP004 (applies to NetworkPolicy) still answers, and says it excludes it."""
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root)
    ns = next(root.glob("must-gather.local.*/*/namespaces/clusters-agent-prod"))
    (ns / "crd.projectcalico.org").mkdir()
    (ns / "crd.projectcalico.org" / "networkpolicies.yaml").write_text(CALICO)
    out = tmp_path / "r.json"
    run_cli("scan", "--no-progress", "--no-config", "--select", "HCP004", "--format",
            f"json={out}", str(root))
    [rule] = json.loads(out.read_text())["rules"]
    assert rule["status"] == "pass", rule["reason"]
    assert ("answer excludes policy objects hcpscan does not evaluate: Calico NetworkPolicy "
            "(crd.projectcalico.org/v1): clusters-agent-prod/allow-web") in rule["reason"]


def test_each_object_is_named_by_its_own_api_version_and_kind():
    """What a kind is called is worked out once per apiVersion and kind: objects of one
    kind name in two groups (Calico's NetworkPolicy beside the evaluated one), of two
    kinds in one group and in two clusters are still each named as they are alone."""
    from hcpscan.inventory import Inventory

    specs = [("management", "crd.projectcalico.org/v1", "NetworkPolicy"),
             ("management", "networking.k8s.io/v1", "NetworkPolicy"),
             ("guest", "crd.projectcalico.org/v1", "NetworkPolicy"),
             ("management", "crd.projectcalico.org/v1", "GlobalNetworkPolicy"),
             ("management", "cilium.io/v2", "CiliumNetworkPolicy"),
             ("management", "v1", "ConfigMap"), ("guest", "cilium.io/v2", "CiliumNetworkPolicy")]
    objects = [K8sObject(cluster, api, kind, "ns", f"x{i}", {}, SourceLocation("f.yaml", i + 1))
               for i, (cluster, api, kind) in enumerate(specs * 2)]
    found = {(k.cluster, k.label, k.api_version): [o.name for o in k.objects]
             for k in unevaluated_policies(Inventory(objects))}
    plain: dict[tuple[str, str, str], list[str]] = {}
    for obj in objects:
        if (label := policy_label(obj)) is not None:
            plain.setdefault((obj.cluster, label, obj.api_version), []).append(obj.name)
    assert found == {key: sorted(names) for key, names in plain.items()}
    assert len(found) == 5
