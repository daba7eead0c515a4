"""Fixes of required-flow findings (HCP007, HCP008, HCP010, HCP011): the change opens
exactly the missing connections at the layer that blocks them — a new NetworkPolicy for
exactly the subject's pods, a new AdminNetworkPolicy Allow one priority before the Deny,
the worker ranges added to a router's allowedSourceRanges — or says why none is safe."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from hcpscan.findings.fix import AddDocument, AppendItems, NoFix, Remedy, ReplaceKey, SetField
from hcpscan.fixes.apply import fix_all
from hcpscan.rules.config import ScanConfig
from tests.conftest import FIXTURES, SHARED, require
from tests.fixes.rescan import fix_copy_and_rescan
from tests.reporters.sarif_checks import SCHEMA_FILES, schema_errors
from tests.rules.harness import scan

RULES = FIXTURES / "rules"
FLOWS = FIXTURES / "required-flows"


def _failing(paths: list[Path], rule: str, config: ScanConfig | None = None):
    return [f for f in scan(paths, [rule], config).findings
            if f.status.name == "FAIL" and f.rule_id == rule]


def _added(finding) -> dict:
    remedy = finding.remedy
    assert isinstance(remedy, Remedy), getattr(remedy, "why", remedy)
    docs = [e.body for e in remedy.edits if isinstance(e, AddDocument)]
    assert len(docs) == 1 and len(remedy.edits) == 1
    return docs[0]


def _copy(tmp_path: Path, source: Path, text_from: str = "", text_to: str = "") -> Path:
    target = tmp_path / source.name
    text = source.read_text()
    if text_from:
        assert text_from in text
        text = text.replace(text_from, text_to)
    target.write_text(text)
    return target


# -- NetworkPolicy: a new policy for exactly the subject's pods -----------------------------


def test_default_deny_ingress_gets_a_policy_for_the_router_pods_from_the_workers_only():
    """Issue 23: a default-deny ingress policy in the HCP namespace shuts the private
    router's 8080 and 8443: the new policy selects the router's pods and admits exactly
    the worker range on exactly those ports."""
    found, = _failing([RULES / "HCP007" / "fail" / "private-router.yaml"], "HCP007")
    body = _added(found)
    assert body["kind"] == "NetworkPolicy"
    assert body["metadata"]["namespace"] == "clusters-priv"
    assert body["spec"]["podSelector"] == {"matchLabels": {"app": "private-router"}}
    assert body["spec"]["policyTypes"] == ["Ingress"]
    assert body["spec"]["ingress"] == [{"from": [{"ipBlock": {"cidr": "10.40.0.0/16"}}],
                                        "ports": [{"port": 8080, "protocol": "TCP"},
                                                  {"port": 8443, "protocol": "TCP"}]}]
    # written beside the policy that blocks, not appended to it (it selects every pod)
    assert found.remedy.target.kind == "NetworkPolicy"
    assert found.remedy.target.name == "default-deny-ingress"


def test_operators_are_let_in_from_their_own_namespaces_on_the_api_server_port_only():
    found, = [f for f in _failing([RULES / "HCP011" / "fail"], "HCP011")
              if "clusters-beta/" in f.message]
    body = _added(found)
    assert body["spec"]["podSelector"] == {"matchLabels": {"app": "kube-apiserver"}}
    peers = [(r["from"][0]["namespaceSelector"]["matchLabels"], r["ports"])
             for r in body["spec"]["ingress"]]
    assert peers == [({"kubernetes.io/metadata.name": "hypershift"},
                      [{"port": 6443, "protocol": "TCP"}]),
                     ({"kubernetes.io/metadata.name": "clusters-beta"},
                      [{"port": 6443, "protocol": "TCP"}])]


def test_vanilla_cluster_dns_is_opened_to_kube_dns_on_53_not_to_openshift_dns():
    """Issue 23 (HyperShift 1905): DNS allowed only to openshift-dns:5353 on a cluster whose
    DNS is kube-system/kube-dns: the fix opens 53 on both protocols to the kube-dns pods."""
    found, = _failing([FLOWS / "vanilla-dns"], "HCP008")
    rule, = _added(found)["spec"]["egress"]
    assert rule["to"] == [{"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "kube-system"}},
        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}]
    assert rule["ports"] == [{"port": 53, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]


def test_kubevirt_workers_get_one_policy_for_every_virt_launcher_pod(tmp_path: Path):
    """Issue 23: KubeVirt workers need 443, 6443 and DNS out. Every virt-launcher pod of the
    HCP namespace is a worker of that cluster: one policy selects them all (by
    kubevirt.io=virt-launcher, not one VM's labels), written once for two findings."""
    source = RULES / "HCP008" / "fail" / "kubevirt-default-deny.yaml"
    text = source.read_text()
    pod = text[text.index("apiVersion: v1\nkind: Pod"):text.index("---\napiVersion: networking")]
    second = pod.replace("virt-launcher-kv-pool-abcde-x1", "virt-launcher-kv-pool-abcde-x2")
    folder = tmp_path / "kv"
    folder.mkdir()
    (folder / "kv.yaml").write_text(text + "---\n" + second)
    workers = [f for f in _failing([folder], "HCP008") if "KubeVirt workers" in f.message]
    assert len(workers) == 2
    bodies = [_added(f) for f in workers]
    assert bodies[0] == bodies[1]
    assert bodies[0]["spec"]["podSelector"] == {"matchLabels": {"kubevirt.io": "virt-launcher"}}
    outside, openshift_dns, kube_dns = bodies[0]["spec"]["egress"]
    assert outside == {"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}],
                       "ports": [{"port": 443, "protocol": "TCP"}, {"port": 6443, "protocol": "TCP"}]}
    # which DNS the cluster runs is not in this input: each DNS's pods at their own port
    # (OpenShift's on 5353, kube-dns's on 53), not both ports to both namespaces
    assert openshift_dns == {"to": [{"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "openshift-dns"}}, "podSelector": {}}],
        "ports": [{"port": 5353, "protocol": "TCP"}, {"port": 5353, "protocol": "UDP"}]}
    assert kube_dns == {"to": [{"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "kube-system"}}, "podSelector": {}}],
        "ports": [{"port": 53, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}
    result = fix_copy_and_rescan(folder, tmp_path / "work", "HCP008")
    written = (tmp_path / "work" / "kv" / "kv.yaml").read_text()
    assert written.count("name: kubevirt-workers-allow-kubevirt-workers-egress") == 1
    assert [f.message for f in result.still_failing()] == []
    assert [(f.rule_id, f.message) for f in result.new()] == []


def test_guest_egress_to_kas_by_name_only_gets_the_node_local_address():
    """Issue 23: a guest's egress policy allows 6443 only towards openshift-kube-apiserver,
    which a hosted cluster does not have: the fix allows exactly 172.20.0.1:6443."""
    found = [f for f in _failing([RULES / "HCP010" / "fail" / "gitops-guest-egress.yaml"],
                                 "HCP010")]
    rule, = _added(found[0])["spec"]["egress"]
    assert rule == {"to": [{"ipBlock": {"cidr": "172.20.0.1/32"}}],
                    "ports": [{"port": 6443, "protocol": "TCP"}]}


def test_a_proxy_named_by_host_name_gets_no_policy(tmp_path: Path):
    path = _copy(tmp_path, RULES / "HCP008" / "fail" / "kubevirt-proxy.yaml",
                 "10.0.50.10:3128", "proxy.corp.example:3128")
    found = [f for f in _failing([path], "HCP008") if "workers-to-proxy" in f.message]
    assert found and isinstance(found[0].remedy, NoFix)
    assert "host name proxy.corp.example" in found[0].remedy.why


# -- AdminNetworkPolicy: an Allow one priority before the Deny ------------------------------


def test_anp_deny_gets_an_allow_one_priority_before_it():
    found, = _failing([RULES / "HCP011" / "fail" / "anp-isolates-hcp.yaml"], "HCP011")
    body = _added(found)
    assert body["kind"] == "AdminNetworkPolicy"
    assert body["spec"]["priority"] == 9  # the Deny is at 10
    assert body["spec"]["subject"] == {"pods": {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "clusters-acme"}},
        "podSelector": {"matchLabels": {"app": "kube-apiserver"}}}}
    rule, = body["spec"]["ingress"]
    assert rule["action"] == "Allow"
    assert rule["ports"] == [{"portNumber": {"protocol": "TCP", "port": 6443}}]
    assert rule["from"][0]["pods"]["namespaceSelector"] == {
        "matchLabels": {"kubernetes.io/metadata.name": "hypershift"}}
    assert found.remedy.target.kind == "AdminNetworkPolicy"  # written beside the Deny


def _other_anps(priorities) -> str:
    return "".join(
        "---\napiVersion: policy.networking.k8s.io/v1alpha1\nkind: AdminNetworkPolicy\n"
        f"metadata: {{name: other-{p}}}\nspec:\n  priority: {p}\n  subject: {{namespaces: "
        "{matchLabels: {team: x}}}\n  ingress:\n  - {name: a, action: Allow, from: "
        "[{namespaces: {matchLabels: {team: x}}}]}\n" for p in priorities)


def test_anp_deny_at_priority_zero_or_with_every_priority_before_it_taken_has_no_fix(tmp_path):
    source = RULES / "HCP011" / "fail" / "anp-isolates-hcp.yaml"
    zero = _copy(tmp_path, source, "  priority: 10\n", "  priority: 0\n")
    found, = _failing([zero], "HCP011")
    assert isinstance(found.remedy, NoFix) and "below 0" in found.remedy.why
    # priority 9 taken by an unrelated ANP: the Allow takes the nearest free one before
    # the Deny (8); none before the Deny decides the one connection it names
    taken = tmp_path / "taken"
    taken.mkdir()
    shutil.copy(source, taken / source.name)
    (taken / "other.yaml").write_text(_other_anps([9]))
    found, = _failing([taken], "HCP011")
    assert _added(found)["spec"]["priority"] == 8
    assert "(priority 8, before" in found.remedy.summary
    # every priority from 0 to 9 taken: no fix, and the reason says so
    (taken / "other.yaml").write_text(_other_anps(range(10)))
    found, = _failing([taken], "HCP011")
    assert isinstance(found.remedy, NoFix)
    assert "every priority from 0 to 9 is taken" in found.remedy.why


def test_two_allows_before_one_deny_never_share_a_priority(tmp_path):
    """One Deny (priority 10) over two HCP namespaces, priority 9 held by another ANP: the
    two new Allows get 8 and 7 (free, before the Deny, apart), the re-scan passes for both
    and warns of no shared priority; with only 8 free, the second gets no fix and says
    why."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "hcp.yaml").write_text(_second_hosted_cluster(
        RULES / "HCP011" / "fail" / "anp-isolates-hcp.yaml"))
    (tree / "other.yaml").write_text(_other_anps([9]))
    found = _failing([tree], "HCP011")
    assert sorted(_added(f)["spec"]["priority"] for f in found) == [7, 8]
    outcome = fix_all(found, {})
    assert len(outcome.applied) == 2
    for path, text in outcome.changed.items():
        Path(path).write_text(text)
    assert _failing([tree], "HCP011") == []
    report = scan([tree], ["HCP011"])
    assert [d["message"] for d in report.diagnostics if "same priority" in d["message"]] == []
    (tree / "hcp.yaml").write_text(_second_hosted_cluster(
        RULES / "HCP011" / "fail" / "anp-isolates-hcp.yaml"))
    (tree / "other.yaml").write_text(_other_anps([9, *range(8)]))
    found = _failing([tree], "HCP011")
    fixed = [f for f in found if isinstance(f.remedy, Remedy)]
    refused = [f for f in found if isinstance(f.remedy, NoFix)]
    assert [_added(f)["spec"]["priority"] for f in fixed] == [8]
    assert len(refused) == 1 and "every priority from 0 to 9 is taken" in refused[0].remedy.why
    assert "other Allows this fix writes" in refused[0].remedy.why


def _second_hosted_cluster(source: Path) -> str:
    """``source`` plus a second hosted cluster ``beta`` (its HostedCluster, HCP namespace,
    workloads and HyperShift's policies), shut by the same cluster-wide ANP."""
    text = source.read_text()
    docs = text.split("\n---\n")
    beta = [d.replace("acme", "beta").replace("# expect: HCP011", "") for d in docs
            if "kind: HostedCluster" in d or "name: clusters-acme" in d
            or "namespace: clusters-acme" in d]
    return text.rstrip("\n") + "\n---\n" + "\n---\n".join(beta) + "\n"


def test_one_anp_deny_over_two_hcp_namespaces_gets_an_allow_of_its_own_for_each(tmp_path):
    """An ANP that isolates every HCP namespace shuts the HyperShift operator out of two
    hosted control planes. AdminNetworkPolicies are cluster-scoped: two new documents of
    one name would be one object once applied (the second replaces the first, and the
    first namespace stays shut). Each gets its own name; both are written and the re-scan
    passes for both."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "hcp.yaml").write_text(_second_hosted_cluster(
        RULES / "HCP011" / "fail" / "anp-isolates-hcp.yaml"))
    found = _failing([tree], "HCP011")
    assert len(found) == 2
    bodies = [_added(f) for f in found]
    names = sorted(b["metadata"]["name"] for b in bodies)
    assert names == ["allow-operators-to-hcp-clusters-acme", "allow-operators-to-hcp-clusters-beta"]
    outcome = fix_all(found, {})
    assert len(outcome.applied) == 2
    for path, text in outcome.changed.items():
        Path(path).write_text(text)
    written = [d for d in yaml.safe_load_all((tree / "hcp.yaml").read_text())
               if d["kind"] == "AdminNetworkPolicy" and d["spec"]["priority"] in (8, 9)]
    assert sorted(d["metadata"]["name"] for d in written) == names
    assert sorted(d["spec"]["priority"] for d in written) == [8, 9]  # never one shared
    assert _failing([tree], "HCP011") == []


def test_a_new_policy_never_takes_the_name_of_one_in_the_input(tmp_path):
    """A policy written by an earlier fix that no longer opens the flow (here it opens 54,
    the DNS pods listen on 53): the new one gets a name of its own instead of a second
    document of the same name, which would replace the first when applied."""
    tree = tmp_path / "vanilla"
    shutil.copytree(FLOWS / "vanilla-dns", tree)
    outcome = fix_all(_failing([tree], "HCP008"), {})
    for path, text in outcome.changed.items():
        Path(path).write_text(text.replace("- port: 53\n", "- port: 54\n"))
    found, = _failing([tree], "HCP008")
    body = _added(found)
    assert body["metadata"]["name"] == "kube-apiserver-allow-hcp-dns-2"
    assert "kube-apiserver-allow-hcp-dns-2" in found.remedy.summary


def test_a_long_flow_id_keeps_new_names_apart():
    from hcpscan.analysis.reachability.opening import _name
    long = "workers-to-the-acme-corporation-metrics-gateway-in-the-dmz-"
    a, b = _name(long + "clusters-alpha"), _name(long + "clusters-amber")
    assert a != b and len(a) <= 63 and len(b) <= 63 and a.startswith(long[:40])


KAS_LB = """\
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny-ingress
  namespace: clusters-edge
spec:
  podSelector: {}
  policyTypes: [Ingress]
---
apiVersion: v1
kind: Service
metadata:
  name: kube-apiserver
  namespace: clusters-edge
spec:
  type: LoadBalancer
  selector: {app: kube-apiserver}
  ports:
  - {name: client, port: 6443, targetPort: 6443, protocol: TCP}
"""


def test_default_deny_ingress_keeping_workers_from_the_api_server_gets_a_policy(tmp_path):
    """Issue 23's default-deny ingress in the HCP namespace with no policy admitting the
    workers: HCP003 (workers → the API server's 6443) was told the block is "what the
    HyperShift operator renders or the firewall", with no fix, though a hand-written
    NetworkPolicy blocks it. The fix is the same shape as the required flows': a new
    policy for exactly the API server's pods admitting exactly the worker range on 6443;
    applied with every other fix, the re-scan has no finding under any rule."""
    tree = tmp_path / "tree"
    tree.mkdir()
    text = (RULES / "HCP007" / "pass" / "konnectivity-lb.yaml").read_text()
    (tree / "hcp.yaml").write_text(text.rstrip("\n") + "\n" + KAS_LB)
    found, = _failing([tree], "HCP003")
    body = _added(found)
    assert body["metadata"] == {"name": "kube-apiserver-allow-workers-tcp-6443",
                                "namespace": "clusters-edge"}
    assert body["spec"]["podSelector"] == {"matchLabels": {"app": "kube-apiserver"}}
    assert body["spec"]["ingress"] == [{"from": [{"ipBlock": {"cidr": "10.10.0.0/24"}}],
                                        "ports": [{"port": 6443, "protocol": "TCP"}]}]
    # through a LoadBalancer with externalTrafficPolicy Cluster the node may SNAT them
    assert "through LoadBalancer Service clusters-edge/kube-apiserver" in found.remedy.summary
    assert "where the node SNATs the workers' addresses" in found.remedy.summary
    result = fix_copy_and_rescan(tree, tmp_path / "rescan")
    assert "HCP003" in {f.rule_id for f, _ in result.outcome.applied}
    assert [f.message for f in result.after] == []


# -- source ranges, and the layers hcpscan does not change ----------------------------------


def test_route_behind_a_bounded_router_widens_its_allowed_source_ranges_by_the_workers():
    found, = _failing([FLOWS / "router-source-ranges"], "HCP007")
    remedy = found.remedy
    assert isinstance(remedy, Remedy)
    assert remedy.target.kind == "IngressController"
    assert remedy.edits == (AppendItems(("spec", "endpointPublishingStrategy", "loadBalancer",
                                         "allowedSourceRanges"), ("10.0.0.0/16",)),)


def test_operator_reconciled_load_balancer_is_not_edited():
    found = [f for f in _failing([RULES / "HCP007" / "fail" / "konnectivity-lb.yaml"], "HCP007")]
    assert isinstance(found[0].remedy, NoFix)
    why = found[0].remedy.why
    assert "reconciled by the HyperShift operator" in why
    assert "10.10.0.0/24" in why
    # HyperShift's operator renders no source ranges for the konnectivity Service (only the
    # API server's and the router's come from allowedCIDRBlocks): the reason names the
    # Service's own field, never a place the operator would read them from
    assert "sets no loadBalancerSourceRanges" in why and "allowedCIDRBlocks" not in why
    assert "kubectl -n clusters-edge edit service konnectivity-server" in why
    assert "where the operator reads" not in why


def test_ranges_in_the_annotation_keep_the_workers_out_and_are_named(tmp_path: Path):
    """The legacy annotation holds konnectivity's ranges (the field unset): the workers are
    blocked there, and the reason says to add them to the annotation, not to the empty
    field (which would replace the annotation's ranges)."""
    lb = _copy(tmp_path, RULES / "HCP007" / "fail" / "konnectivity-lb.yaml",
               "  loadBalancerSourceRanges: [192.168.50.0/24]\n", "")
    lb.write_text(lb.read_text().replace(
        "  name: konnectivity-server\n",
        f"  name: konnectivity-server\n  annotations:\n    {ANNOTATION}: 192.168.50.0/24\n", 1))
    found = _failing([lb], "HCP007")
    assert found and isinstance(found[0].remedy, NoFix)
    why = found[0].remedy.why
    assert f"to its annotation {ANNOTATION}" in why and "10.10.0.0/24" in why


def test_a_perimeter_hop_gets_allow_rules_put_first_in_the_perimeter_file(tmp_path: Path):
    """Issue 23's first report: a security group admits the workers to 6443 only. The
    perimeter file gets one allow rule per entry port for exactly the workers kept out,
    before its other rules (first match wins), every other line as written; the re-scan
    with that file is clean, and the fix says to change the real firewall the same way."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("konnectivity-lb.yaml", "ignition-oauth-nodeport.yaml"):
        shutil.copy(RULES / "HCP007" / "pass" / name, tree / name)
    perimeter = tmp_path / "sg.yaml"
    original = (FLOWS / "sg-kas-only.yaml").read_text()
    perimeter.write_text(original)
    config = ScanConfig()
    config.firewall = perimeter
    before = {(f.rule_id, f.message) for f in scan([tree], [], config).findings
              if f.status.name == "FAIL"}
    found = _failing([tree], "HCP007", config)
    assert len(found) == 3
    for finding in found:
        remedy = finding.remedy
        assert isinstance(remedy, Remedy), remedy
        assert remedy.target.source.file == str(perimeter)
        assert "same change in the firewall" in remedy.summary
        edit, = remedy.edits
        assert isinstance(edit, AppendItems) and edit.first and edit.steps == ("rules",)
    konnectivity, = [f.remedy.edits[0].items for f in found if "konnectivity" in f.message]
    assert konnectivity == ({"name": "workers-to-konnectivity-tcp-8091", "action": "allow",
                             "sources": ["10.10.0.0/24"],
                             "ports": [{"protocol": "TCP", "port": 8091}]},)
    outcome = fix_all(found, {})
    assert len(outcome.applied) == 3
    for path, text in outcome.changed.items():
        Path(path).write_text(text)
    after = perimeter.read_text()
    head, rules = original.split("rules:\n")
    assert after.startswith(head + "rules:\n- name: ") and after.endswith(rules)
    assert _failing([tree], "HCP007", config) == []
    now = {(f.rule_id, f.message) for f in scan([tree], [], config).findings
           if f.status.name == "FAIL"}
    assert now <= before, now - before  # nothing new under any rule


def test_an_egress_firewall_is_the_cluster_admins(tmp_path: Path):
    source = RULES / "HCP008" / "fail" / "kubevirt-default-deny.yaml"
    text = source.read_text()
    start = text.index("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy")
    end = text.index("---\napiVersion: apps/v1")
    firewall = ("apiVersion: k8s.ovn.org/v1\nkind: EgressFirewall\nmetadata: {name: default, "
                "namespace: clusters-kv}\nspec:\n  egress:\n  - type: Deny\n    to: "
                "{cidrSelector: 0.0.0.0/0}\n  - type: Deny\n    to: {cidrSelector: '::/0'}\n")
    path = tmp_path / "kv.yaml"
    path.write_text(text[:start] + firewall + text[end:])
    found = [f for f in _failing([path], "HCP008") if "KubeVirt workers" in f.message]
    assert found and isinstance(found[0].remedy, NoFix)
    assert "EgressFirewall" in found[0].remedy.why


def test_the_written_policy_reads_back_in_the_file(tmp_path: Path, run_cli):
    tree = tmp_path / "t"
    shutil.copytree(RULES / "HCP007" / "fail", tree)
    before = (tree / "private-router.yaml").read_text()
    result = run_cli("fix", str(tree), "--no-progress", "--no-config", "--select", "HCP007")
    after = (tree / "private-router.yaml").read_text()
    assert after.startswith(before)  # every line as written; the policy comes after
    added = list(yaml.safe_load_all(after[len(before):]))
    assert [d["metadata"]["name"] for d in added if d] == \
        ["private-router-allow-workers-to-private-router"], result.err


# -- HCP001/HCP002: narrowing an exposure where that is safe and lasts ----------------------

EXPOSURE_LB = RULES / "HCP001" / "source-ranges" / "fail" / "user-lb.yaml"
EXPOSURE_ROUTER = RULES / "HCP002" / "source-ranges" / "fail" / "dedicated-router.yaml"


def test_a_load_balancer_nobody_reconciles_gets_the_worker_ranges():
    found, = _failing([EXPOSURE_LB], "HCP001")
    remedy = found.remedy
    assert isinstance(remedy, Remedy)
    assert (remedy.target.kind, remedy.target.name) == ("Service", "ignition-lab-lb")
    assert remedy.edits == (AppendItems(("spec", "loadBalancerSourceRanges"), ("10.60.0.0/24",)),)


ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"


def test_a_load_balancer_bounded_by_the_annotation_is_narrowed_there(tmp_path: Path):
    """The legacy annotation alone bounds the load balancer (the field is empty): the fix
    sets the annotation, not a field that would silently override it; applied, HCP001 passes."""
    lb = _copy(tmp_path, EXPOSURE_LB, "  name: ignition-lab-lb\n",
               f"  name: ignition-lab-lb\n  annotations:\n    {ANNOTATION}: 0.0.0.0/0\n")
    found, = _failing([lb], "HCP001")
    remedy = found.remedy
    assert isinstance(remedy, Remedy), remedy
    assert remedy.edits == (SetField(("metadata", "annotations", ANNOTATION), "10.60.0.0/24"),)
    outcome = fix_all([found], {})
    lb.write_text(outcome.changed[str(lb)])
    written = next(d for d in yaml.safe_load_all(lb.read_text()) if d and d["kind"] == "Service")
    assert written["metadata"]["annotations"][ANNOTATION] == "10.60.0.0/24"
    assert "loadBalancerSourceRanges" not in written["spec"]
    assert _failing([lb], "HCP001") == []


def test_narrowing_the_field_leaves_no_annotation_saying_otherwise(tmp_path: Path):
    """Both set: the field wins, and the fix writes the annotation the same ranges so the
    Service does not read two ways."""
    lb = _copy(tmp_path, EXPOSURE_LB, "  allocateLoadBalancerNodePorts: false\n",
               "  allocateLoadBalancerNodePorts: false\n  loadBalancerSourceRanges: [0.0.0.0/0]\n")
    text = lb.read_text().replace("  name: ignition-lab-lb\n", "  name: ignition-lab-lb\n"
                                  f"  annotations:\n    {ANNOTATION}: 0.0.0.0/0\n")
    lb.write_text(text)
    found, = _failing([lb], "HCP001")
    remedy = found.remedy
    assert isinstance(remedy, Remedy), remedy
    assert SetField(("metadata", "annotations", ANNOTATION), "10.60.0.0/24") in remedy.edits
    assert ReplaceKey(("spec", "loadBalancerSourceRanges"), "loadBalancerSourceRanges",
                      ["10.60.0.0/24"]) in remedy.edits


def test_a_load_balancer_with_node_ports_or_an_owner_is_not_narrowed(tmp_path: Path):
    ports = _copy(tmp_path, EXPOSURE_LB, "  allocateLoadBalancerNodePorts: false\n", "")
    found, = _failing([ports], "HCP001")
    assert isinstance(found.remedy, NoFix) and "node port" in found.remedy.why
    owned = tmp_path / "owned"
    owned.mkdir()
    _copy(owned, EXPOSURE_LB, "  name: ignition-lab-lb\n",
          "  name: ignition-lab-lb\n  ownerReferences:\n  - {apiVersion: hypershift.openshift.io/"
          "v1beta1, kind: HostedControlPlane, name: lb, uid: 1b2c}\n")
    found, = _failing([owned], "HCP001")
    assert isinstance(found.remedy, NoFix)


def test_a_router_pinned_to_the_workers_routes_is_narrowed_to_them():
    found, = _failing([EXPOSURE_ROUTER], "HCP002")
    remedy = found.remedy
    assert isinstance(remedy, Remedy)
    assert (remedy.target.kind, remedy.target.name) == ("IngressController", "hcp-workers")
    steps = ("spec", "endpointPublishingStrategy", "loadBalancer", "allowedSourceRanges")
    assert remedy.edits == (ReplaceKey(steps, "allowedSourceRanges", ["10.80.0.0/24"]),)


def test_a_shared_router_is_not_narrowed(tmp_path: Path):
    """A shard for every hosted cluster's Routes, or one that also serves OAuth (which users
    reach), or the default router: narrowing it would shut other clients out."""
    every = _copy(tmp_path, EXPOSURE_ROUTER,
                  "    matchLabels: {hypershift.openshift.io/hosted-control-plane: clusters-shard}",
                  "    matchExpressions:\n    - {key: hypershift.openshift.io/hosted-control-plane,"
                  " operator: Exists}")
    found, = _failing([every], "HCP002")
    assert isinstance(found.remedy, NoFix) and "router" in found.remedy.why
    oauth = tmp_path / "oauth"
    oauth.mkdir()
    text = EXPOSURE_ROUTER.read_text() + (
        "---\napiVersion: route.openshift.io/v1\nkind: Route\nmetadata:\n  name: oauth\n"
        "  namespace: clusters-shard\n  labels: {hypershift.openshift.io/hosted-control-plane: "
        "clusters-shard}\nspec:\n  to: {kind: Service, name: oauth-openshift}\n")
    (oauth / "shard.yaml").write_text(text)
    found, = _failing([oauth], "HCP002")
    assert isinstance(found.remedy, NoFix)
    default = _copy(tmp_path / "oauth", FLOWS / "router-source-ranges" / "hcp.yaml")
    shutil.copy(FLOWS / "router-source-ranges" / "ingresscontroller.yaml", tmp_path / "oauth")
    (tmp_path / "oauth" / "shard.yaml").unlink()
    found = _failing([default.parent], "HCP002")
    assert found and all(isinstance(f.remedy, NoFix) for f in found)


# -- on copies of real files ----------------------------------------------------------------

RENDERED = SHARED / "realworld" / "hypershift" / "cpo-rendered" / "ignition-server-proxy"
HOSTED = """\
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata:
  name: namespace
  namespace: hcp
spec:
  platform: {type: None}
  networking:
    machineNetwork:
    - cidr: 10.50.0.0/24
  services:
  - service: Ignition
    servicePublishingStrategy:
      type: NodePort
      nodePort: {address: 10.0.0.5, port: 31443}
"""
POLICIES = """\
# the platform team's hardening: nothing gets in unless a policy lets it
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny-ingress
  namespace: hcp-namespace
spec:
  podSelector: {}   # every pod of the HCP namespace
  policyTypes: [Ingress]
"""


@pytest.mark.parametrize("kustomize", [False, True], ids=["plain-gitops", "kustomize"])
def test_fix_on_the_real_rendered_ignition_proxy_is_a_readable_patch(kustomize, tmp_path,
                                                                     run_cli):
    """HyperShift's own rendered ignition-server-proxy Deployment and Service (published as
    a NodePort), a HostedCluster and a default-deny ingress policy, as a plain folder and as
    a kustomize tree: the patch only adds the new policy after the blocking one (a unified
    diff of added lines), the real files stay byte for byte, and the re-scan is clean."""
    require(RENDERED.is_dir(), str(RENDERED))
    tree = tmp_path / "tree"
    tree.mkdir()
    deployment = RENDERED / "ignition_server_proxy_deployment.yaml"
    shutil.copy(deployment, tree / deployment.name)
    service = (RENDERED / "ignition_server_proxy_service.yaml").read_text()
    service = service.replace("  type: ClusterIP\n", "  type: NodePort\n").replace(
        "    targetPort: https\n", "    targetPort: https\n    nodePort: 31443\n")
    (tree / "service.yaml").write_text(service)
    (tree / "hostedcluster.yaml").write_text(HOSTED)
    (tree / "policies.yaml").write_text(POLICIES)
    if kustomize:
        require(shutil.which("kubectl"), "kubectl")
        (tree / "kustomization.yaml").write_text(
            "resources:\n- hostedcluster.yaml\n- " + deployment.name
            + "\n- service.yaml\n- policies.yaml\n")
    pristine = {p.name: p.read_bytes() for p in tree.iterdir()}
    patch = tmp_path / "fix.patch"
    result = run_cli("fix", str(tree), "--select", "HCP007", "--diff", str(patch),
                     "--no-progress", "--no-config")
    assert result.code == 0, result.err
    text = patch.read_text()
    assert text.startswith("--- a/") and "+++ b/" in text
    changed = [line for line in text.splitlines() if line.startswith("+++ ")]
    assert len(changed) == 1 and changed[0].endswith("policies.yaml"), changed
    body = [line for line in text.splitlines()[2:] if not line.startswith("@@")]
    assert all(line.startswith(("+", " ")) for line in body), "only added lines"
    assert "+  name: ignition-server-proxy-allow-workers-to-ignition" in text
    assert "+    - ipBlock:\n+        cidr: 10.50.0.0/24" in text
    assert {p.name: p.read_bytes() for p in tree.iterdir()} == pristine, "--diff must not edit"
    result = run_cli("fix", str(tree), "--select", "HCP007", "--no-progress", "--no-config")
    assert result.code == 0, result.err
    after = (tree / "policies.yaml").read_text()
    assert after.startswith(POLICIES)  # comments and every line as written
    for name, data in pristine.items():
        if name != "policies.yaml":
            assert (tree / name).read_bytes() == data
    again = run_cli("scan", str(tree), "--no-config", "--no-progress", "--format", "json")
    assert [f["rule_id"] for f in json.loads(again.out)["findings"]
            if f["status"] == "fail" and f["rule_id"] in ("HCP007", "HCP001")] == [], again.out


def test_api_server_allowed_cidr_blocks_in_git_get_the_missing_worker_range(tmp_path, run_cli):
    """HCP003 from Git: allowedCIDRBlocks bound the API server's load balancer and leave the
    workers out; the fix adds exactly the worker range, as a new item of that list."""
    source = RULES / "HCP003" / "git-alone" / "fail" / "kubevirt-allowed-cidrs-without-workers.yaml"
    found, = _failing([source], "HCP003")
    assert isinstance(found.remedy, Remedy)
    assert found.remedy.edits == (AppendItems(
        ("spec", "networking", "apiServer", "allowedCIDRBlocks"), ("10.20.0.0/16",)),)
    path = _copy(tmp_path, source)
    before = path.read_text()
    result = run_cli("fix", str(path), "--select", "HCP003", "--no-progress", "--no-config")
    assert result.code == 0, result.err
    assert path.read_text() == before.replace("      - 192.168.50.0/24\n",
                                              "      - 192.168.50.0/24\n      - 10.20.0.0/16\n")


def test_rendered_api_server_service_names_the_hosted_cluster_field():
    found, = [f for f in _failing([RULES / "HCP003" / "fail"], "HCP003")
              if f.object.kind == "HostedCluster" and f.object.name == "edge"]
    assert isinstance(found.remedy, NoFix)
    assert "spec.networking.apiServer.allowedCIDRBlocks" in found.remedy.why


ANP_EGRESS = """\
---
apiVersion: policy.networking.k8s.io/v1alpha1
kind: AdminNetworkPolicy
metadata:
  name: hcp-egress-lockdown
spec:
  priority: 30
  subject:
    namespaces:
      matchLabels: {kubernetes.io/metadata.name: clusters-dns}
  egress:
  - name: no-dns-over-tcp
    action: Deny
    to:
    - namespaces:
        matchLabels: {kubernetes.io/metadata.name: openshift-dns}
    ports:
    - portNumber: {protocol: TCP, port: 5353}
"""


def test_anp_egress_deny_of_dns_over_tcp_gets_an_allow_to_the_dns_pods(tmp_path: Path):
    """An admin tier denies DNS over TCP out of the HCP namespace (UDP passes to the
    namespace's policy, which allows it): the new ANP one priority before it allows the
    control-plane pods DNS to the DNS pods, and the re-scan is clean under every rule."""
    text = (RULES / "HCP008" / "fail" / "dns-one-protocol.yaml").read_text()
    text = text[:text.index("---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy")]
    folder = tmp_path / "anp"
    folder.mkdir()
    (folder / "hcp.yaml").write_text(text + ANP_EGRESS)
    found, = _failing([folder], "HCP008")
    body = _added(found)
    assert body["spec"]["priority"] == 29
    rule, = body["spec"]["egress"]
    assert rule["action"] == "Allow"
    assert rule["to"] == [{"pods": {"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "openshift-dns"}}, "podSelector": {}}}]
    result = fix_copy_and_rescan(folder, tmp_path / "work", "HCP008")
    assert result.outcome.applied
    assert [f.message for f in result.still_failing()] == []
    assert [(f.rule_id, f.message) for f in result.new()] == []


OPEN_PERIMETER = """\
# the management nodes' security group: wide open except SSH
kind: Perimeter
metadata: {name: mgmt-open}
default: allow
rules:
- name: ssh-from-admins
  action: allow
  sources: [192.168.50.0/24]
  ports: [{protocol: TCP, port: 22}]
"""


def test_node_ports_open_beyond_the_workers_are_closed_first_in_the_perimeter_file(tmp_path):
    """HCP001/HCP002 on NodePorts (no Service field can narrow them): with a perimeter file,
    the fix admits only the workers and denies every other address on exactly each node
    port, first in the file; the re-scan has neither finding and nothing new."""
    tree = tmp_path / "tree"
    shutil.copytree(RULES / "HCP001" / "fail", tree,
                    ignore=shutil.ignore_patterns("hcp-namespace-only"))
    perimeter = tmp_path / "sg.yaml"
    perimeter.write_text(OPEN_PERIMETER)
    config = ScanConfig()
    config.firewall = perimeter
    before = {(f.rule_id, f.message) for f in scan([tree], [], config).findings
              if f.status.name == "FAIL"}
    found = [f for f in scan([tree], ["HCP001", "HCP002"], config).findings
             if f.status.name == "FAIL"]
    assert sorted(f.rule_id for f in found) == ["HCP001", "HCP002"]
    ignition, = [f for f in found if f.rule_id == "HCP001"]
    edit, = ignition.remedy.edits
    assert edit.first and edit.items == (
        {"name": "ignition-server-proxy-tcp-30443-workers", "action": "allow",
         "sources": ["10.10.0.0/24"], "ports": [{"protocol": "TCP", "port": 30443}]},
        {"name": "ignition-server-proxy-tcp-30443-others", "action": "deny",
         "sources": ["0.0.0.0/0", "::/0"], "ports": [{"protocol": "TCP", "port": 30443}]})
    outcome = fix_all(found, {})
    assert len(outcome.applied) == 2
    for path, text in outcome.changed.items():
        Path(path).write_text(text)
    assert perimeter.read_text().endswith(OPEN_PERIMETER.split("rules:\n")[1])
    after = {(f.rule_id, f.message) for f in scan([tree], [], config).findings
             if f.status.name == "FAIL"}
    assert not {r for r, _ in after} & {"HCP001", "HCP002"}
    assert after <= before, after - before


@pytest.mark.parametrize("schema", SCHEMA_FILES)
def test_sarif_of_required_flow_fixes_is_valid_and_inserts_the_new_policy(run_cli, tmp_path,
                                                                         schema, monkeypatch):
    for rule in ("HCP007", "HCP011"):
        shutil.copytree(RULES / rule / "fail", tmp_path / "in" / rule)
    monkeypatch.chdir(tmp_path)
    result = run_cli("scan", "in", "--format", "sarif", "--no-progress", "--no-config",
                     "--select", "HCP007,HCP011")
    log = json.loads(result.out)
    assert schema_errors(log, schema) == []
    fixed = [r for r in log["runs"][0]["results"] if r.get("fixes")]
    assert {r["ruleId"] for r in fixed} == {"HCP007", "HCP011"}
    for entry in fixed:
        (change,) = entry["fixes"][0]["artifactChanges"]
        (replacement,) = change["replacements"]
        text = (tmp_path / change["artifactLocation"]["uri"]).read_text()
        region = replacement["deletedRegion"]
        assert region["startLine"] == len(text.splitlines()) + 1  # after the last line
        inserted = replacement["insertedContent"]["text"]
        assert inserted.startswith("---\n") and yaml.safe_load(inserted)["kind"] in (
            "NetworkPolicy", "AdminNetworkPolicy")



# -- security groups read from manifests are not the perimeter file -------------------------

GROUPS = FLOWS / "security-groups"
NODE_PORT_RULE = ("        - {description: Node Port Services, protocol: tcp, fromPort: 30000, "
                  "toPort: 32767, cidrBlocks: [0.0.0.0/0]}\n      lb:\n")


@pytest.mark.parametrize(("case", "where"), [("capa-fail", "awscluster.yaml:16"),
                                             ("ack-fail", "securitygroup.yaml:9")])
def test_security_groups_from_manifests_get_no_perimeter_file_rules(case, where, tmp_path):
    """Lane 23's security groups (a CAPA status, an ACK SecurityGroup) shut the workers out
    of konnectivity's and the ignition proxy's node ports. They are not a perimeter file: a
    `rules:` key written into the AWSCluster is no security-group rule (the re-scan still
    fails) and the ACK file is several documents. No automatic change: the reason names the
    group, where it is written, the range and the port, and no file is touched."""
    tree = tmp_path / case
    shutil.copytree(GROUPS / case, tree)
    before = {p.name: p.read_text() for p in tree.iterdir()}
    found = _failing([tree], "HCP007")
    assert len(found) == 2
    for finding in found:
        assert isinstance(finding.remedy, NoFix), finding.remedy
        why = finding.remedy.why
        assert "security groups keep the workers out: 10.20.0.0/16 on TCP/3" in why
        assert f"{where}" in why and "hcpscan does not write security-group rules" in why
    assert not fix_all(found, {}).changed
    assert {p.name: p.read_text() for p in tree.iterdir()} == before


def test_with_a_perimeter_file_in_front_of_admitting_groups_the_file_gets_the_rules(tmp_path):
    """A --firewall file stacked in front of security groups that admit the node ports: the
    file is what blocks, so the allow rules go first in it (not into the AWSCluster), and
    the re-scan with the same file and groups is clean. Were the groups to block too, the
    file alone would not open the flow: no fix, the groups named."""
    perimeter = tmp_path / "sg.yaml"
    perimeter.write_text((FLOWS / "sg-kas-only.yaml").read_text()
                         .replace("10.10.0.0/24", "10.20.0.0/16"))
    config = ScanConfig()
    config.firewall = perimeter
    shut = tmp_path / "shut"
    shutil.copytree(GROUPS / "capa-fail", shut)
    for finding in _failing([shut], "HCP007", config):
        assert isinstance(finding.remedy, NoFix), finding.remedy
        assert "sg-0f00d00000000node" in finding.remedy.why
    tree = tmp_path / "tree"
    shutil.copytree(GROUPS / "capa-pass", tree)
    groups = (tree / "awscluster.yaml").read_text()
    found = _failing([tree], "HCP007", config)
    assert len(found) == 2
    for finding in found:
        assert isinstance(finding.remedy, Remedy), finding.remedy
        assert finding.remedy.target.source.file == str(perimeter)
    outcome = fix_all(found, {})
    assert set(outcome.changed) == {str(perimeter)}
    for path, text in outcome.changed.items():
        Path(path).write_text(text)
    assert (tree / "awscluster.yaml").read_text() == groups
    assert _failing([tree], "HCP007", config) == []


def test_node_ports_open_in_a_security_group_are_not_narrowed_in_its_manifest(tmp_path):
    """CAPA's node group admits every node port from every address: HCP001/HCP002 find it,
    but with no perimeter file there is nothing hcpscan may write — the AWSCluster stays as
    it is and each finding says where to close it."""
    tree = tmp_path / "tree"
    shutil.copytree(GROUPS / "capa-fail", tree)
    sg = tree / "awscluster.yaml"
    sg.write_text(sg.read_text().replace("      lb:\n", NODE_PORT_RULE, 1))
    text = sg.read_text()
    found = [f for f in scan([tree], ["HCP001", "HCP002"]).findings if f.status.name == "FAIL"]
    assert found
    for finding in found:
        assert isinstance(finding.remedy, NoFix), finding.remedy
    assert not fix_all(found, {}).changed
    assert sg.read_text() == text


def test_a_policy_fix_through_a_load_balancer_says_the_node_may_snat_the_workers(tmp_path):
    """Through a LoadBalancer Service with externalTrafficPolicy Cluster (the default) the
    load balancer forwards to node ports and kube-proxy masquerades the workers' packets,
    as through a NodePort: an ipBlock of the workers may then match nothing, and the fix
    says so. With externalTrafficPolicy Local the source is kept, and no caveat."""
    tree = tmp_path / "tree"
    tree.mkdir()
    text = (RULES / "HCP007" / "pass" / "konnectivity-lb.yaml").read_text()
    deny = KAS_LB.split("---\napiVersion: v1\nkind: Service")[0]
    (tree / "hcp.yaml").write_text(text.rstrip("\n") + "\n" + deny)
    found, = _failing([tree], "HCP007")
    assert "LoadBalancer Service clusters-edge/konnectivity-server: where the node SNATs" in \
        found.remedy.summary
    local = text.replace("  type: LoadBalancer\n", "  type: LoadBalancer\n"
                         "  externalTrafficPolicy: Local\n")
    assert local != text
    (tree / "hcp.yaml").write_text(local.rstrip("\n") + "\n" + deny)
    found, = _failing([tree], "HCP007")
    assert "SNAT" not in found.remedy.summary


def test_a_diff_touching_the_perimeter_file_beside_the_tree_applies_with_git(tmp_path, run_cli):
    """`hcpscan fix gitops/ --firewall sg.yaml --diff`: the perimeter file lies beside the
    scanned folder. Its diff was `a/../sg.yaml`, which `git apply` refuses (an invalid
    path from the folder, no such file from the root) and `patch -p1` cannot find. The
    paths are now relative to the folder both share, the note says so, and the patch
    applies there."""
    git = shutil.which("git")
    require(git, "git")
    import subprocess
    repo = tmp_path / "repo"
    tree = repo / "gitops"
    tree.mkdir(parents=True)
    shutil.copy(RULES / "HCP007" / "pass" / "ignition-oauth-nodeport.yaml", tree)
    (repo / "sg.yaml").write_text((FLOWS / "sg-kas-only.yaml").read_text())
    patch = tmp_path / "fix.patch"
    result = run_cli("fix", str(tree), "--firewall", str(repo / "sg.yaml"), "--diff", str(patch),
                     "--no-progress", "--no-config")
    assert result.code == 0, result.err
    text = patch.read_text()
    assert "../" not in text and text.startswith("--- a/sg.yaml\n+++ b/sg.yaml\n"), text[:200]
    assert "outside the scanned folder: the diff's paths are relative to" in result.err
    subprocess.run([git, "init", "-q", str(repo)], check=True)
    check = subprocess.run([git, "apply", "--check", str(patch)], cwd=repo,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


EGRESS_DENY = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny-egress
  namespace: hypershift
spec:
  podSelector: {}
  policyTypes: [Egress]
---
"""


def _operators_egress_shut(tmp_path: Path, second: bool = False) -> Path:
    """HCP011's ANP input with the ANP replaced by a default-deny egress in the
    operator's namespace: the flow into the API server is blocked at its source."""
    source = RULES / "HCP011" / "fail" / "anp-isolates-hcp.yaml"
    text = _second_hosted_cluster(source) if second else source.read_text()
    start = text.index("# A hardening AdminNetworkPolicy")
    end = text.index("---\n", start) + 4 if second else len(text)
    tree = tmp_path / "tree"
    tree.mkdir(parents=True)
    (tree / "hcp.yaml").write_text(text[:start] + EGRESS_DENY + text[end:])
    return tree


def test_a_flow_shut_at_its_source_gets_an_egress_policy_for_the_source(tmp_path):
    """The HyperShift operator's own egress is isolated (a default-deny egress in its
    namespace). The fix was an ingress policy for the API server's pods, which opens
    nothing (the operator still may not send) and, on pods not yet isolated, would shut
    every other client out. Now: an egress policy for exactly the operator's pods to
    exactly the API server's pods on 6443, beside the blocking policy; re-scan clean under
    every rule; two hosted clusters get two policies of two names."""
    tree = _operators_egress_shut(tmp_path)
    found, = _failing([tree], "HCP011")
    body = _added(found)
    assert body["metadata"] == {"name": "operator-allow-operators-to-hcp-clusters-acme",
                                "namespace": "hypershift"}
    assert body["spec"]["podSelector"] == {"matchLabels": {"name": "operator"}}
    assert body["spec"]["policyTypes"] == ["Egress"] and "ingress" not in body["spec"]
    assert body["spec"]["egress"] == [{"to": [{
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "clusters-acme"}},
        "podSelector": {"matchLabels": {"app": "kube-apiserver"}}}],
        "ports": [{"port": 6443, "protocol": "TCP"}]}]
    result = fix_copy_and_rescan(tree, tmp_path / "rescan")
    assert [f.message for f in result.still_failing()] == []
    assert [(f.rule_id, f.message) for f in result.new()] == []
    assert not [f for f in result.after if f.rule_id == "HCP011"]
    two = _operators_egress_shut(tmp_path / "two", second=True)
    found = _failing([two], "HCP011")
    assert sorted(_added(f)["metadata"]["name"] for f in found) == [
        "operator-allow-operators-to-hcp-clusters-acme",
        "operator-allow-operators-to-hcp-clusters-beta"]


def test_an_anp_denying_the_sources_egress_is_no_subject_fix(tmp_path):
    """An AdminNetworkPolicy that denies the operator's egress: an ANP Allow for the API
    server's ingress would not open it (egress is judged on the sender's side), so no
    automatic fix, and the reason names the hop."""
    source = RULES / "HCP011" / "fail" / "anp-isolates-hcp.yaml"
    text = source.read_text()
    start = text.index("# A hardening AdminNetworkPolicy")
    anp = """\
apiVersion: policy.networking.k8s.io/v1alpha1
kind: AdminNetworkPolicy
metadata:
  name: operators-stay-home
spec:
  priority: 10
  subject:
    namespaces:
      matchLabels: {kubernetes.io/metadata.name: hypershift}
  egress:
  - name: deny-hcp
    action: Deny
    to:
    - namespaces:
        matchLabels: {hypershift.openshift.io/hosted-control-plane: "true"}
"""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "hcp.yaml").write_text(text[:start] + anp)
    found, = _failing([tree], "HCP011")
    assert isinstance(found.remedy, NoFix), found.remedy
    assert "blocked on the other end: egress of hypershift/operator" in found.remedy.why


def test_a_route_behind_a_bounded_router_is_not_said_open_to_any_address():
    """HCP002 through the default router whose allowedSourceRanges admit an office range
    only: the no-fix reason said the Route is served "on 443 from any address", the
    opposite of what the finding itself reports (reachable from 192.168.0.0/24)."""
    found, = _failing([FLOWS / "router-source-ranges"], "HCP002")
    assert "reachable from 192.168.0.0/24" in found.message
    assert isinstance(found.remedy, NoFix)
    assert "any address" not in found.remedy.why
    assert "a router shared with other Routes" in found.remedy.why
