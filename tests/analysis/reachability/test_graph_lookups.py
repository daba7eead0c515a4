"""Lookups the rules make per HostedCluster and per workload: indexed, same answers."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hcpscan.analysis.reachability.graph import build_reachability
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.objects import SourceLocation
from hcpscan.model.hostedcluster import hosted_cluster_for_namespace
from hcpscan.rules.context import Context
from hcpscan.scan import RunClock

from .conftest import IGNITION_NODEPORT

MANIFESTS = """
apiVersion: v1
kind: Namespace
metadata: {name: clusters-edge}
---
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata: {name: edge, namespace: clusters}
spec: {platform: {type: Agent}}
---
""" + IGNITION_NODEPORT + """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: client, namespace: clusters-edge}
spec:
  template:
    metadata: {labels: {app: client}}
    spec: {containers: [{name: c}]}
"""


def _inventory(text: str = MANIFESTS) -> Inventory:
    objects = []
    for i, body in enumerate(yaml.safe_load_all(text)):
        meta = body["metadata"]
        objects.append(K8sObject("management", body["apiVersion"], body["kind"],
                                 meta.get("namespace", ""), meta["name"], body,
                                 SourceLocation("m.yaml", i + 1)))
    return Inventory(objects)


def test_who_can_reach_can_leave_out_workloads():
    graph = build_reachability(_inventory())
    target = "clusters-edge/ignition-server"
    everyone = graph.who_can_reach(target, 9090)
    outside = graph.who_can_reach(target, 9090, workloads=False)
    assert any(not r.source.is_external for r in everyone)
    assert outside == [r for r in everyone if r.source.is_external]


def test_workload_lookups_by_namespace():
    graph = build_reachability(_inventory())
    names = [w.name for w in graph.workloads("management", "clusters-edge")]
    assert names == ["client", "ignition-server"]
    assert [w.name for w in graph.select_workloads("management", "clusters-edge",
                                                   {"app": "client"})] == ["client"]
    assert graph.select_workloads("management", "elsewhere", {}) == []


def test_hosted_cluster_of_a_control_plane_namespace():
    inventory = _inventory()
    hc = hosted_cluster_for_namespace(inventory, "clusters-edge")
    assert hc is not None and hc.obj.name == "edge"
    assert hosted_cluster_for_namespace(inventory, "clusters-other") is None
    assert [o.name for o in inventory.in_namespace("Deployment", "clusters-edge")] == [
        "ignition-server", "client"]


def test_graph_build_is_its_own_stage(monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    ctx = Context(_inventory())
    ctx.analysis("reachability", build_reachability)
    assert set(ctx.build_seconds) == {"reachability"}
    clock = RunClock()
    clock.stage("load")
    clock.stage("rules", within={"graph": 0.0})
    assert list(clock.metadata()["stage_seconds"]) == ["load", "graph", "rules"]


def test_a_source_that_is_a_broken_address_is_named_so():
    """`--from 10.0.0.0/33` is a mistyped CIDR, not a workload `10.0.0.0` / `33`."""
    import pytest

    from hcpscan.analysis.reachability.graph import TargetNotFound

    graph = build_reachability(_inventory())
    for source in ("10.0.0.0/33", "10.0.0.300", "fd00::/129"):
        with pytest.raises(TargetNotFound) as raised:
            graph.can_reach(source, "clusters-edge/ignition-server", 9090)
        assert "not an address or CIDR" in str(raised.value), source
        assert "no workload" not in str(raised.value)
    with pytest.raises(TargetNotFound, match="no workload elsewhere/x in the inputs"):
        graph.can_reach("elsewhere/x", "clusters-edge/ignition-server", 9090)


POLICIES = """
---
apiVersion: v1
kind: Namespace
metadata: {name: clusters-other}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: client, namespace: clusters-other}
spec:
  template:
    metadata: {labels: {app: client}}
    spec: {containers: [{name: c}]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: only-client, namespace: clusters-edge}
spec: {podSelector: {matchLabels: {app: client}}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: only-client, namespace: clusters-other}
spec: {podSelector: {matchLabels: {app: client}}}
"""


def test_lookups_asked_again_keep_each_namespace_and_question_apart():
    """The lookups rules repeat (per HostedCluster, per rule) are answered once each:
    the same labels in another namespace, the same policy name in another namespace, a
    changed answer list, never give another's answer."""
    inventory = _inventory(MANIFESTS + POLICIES)
    graph = build_reachability(inventory)
    for _ in range(2):
        edge = graph.select_workloads("management", "clusters-edge", {"app": "client"})
        other = graph.select_workloads("management", "clusters-other", {"app": "client"})
        assert [(w.namespace, w.name) for w in edge] == [("clusters-edge", "client")]
        assert [(w.namespace, w.name) for w in other] == [("clusters-other", "client")]
        edge.clear()  # a caller's list is its own
        assert [w.name for w in graph.workloads("management", "clusters-other")] == ["client"]
        graph.workloads("management", "clusters-other").clear()
        for ns in ("clusters-edge", "clusters-other"):
            policy = inventory.get("NetworkPolicy", ns, "only-client", "management")
            assert [(w.namespace, w.name) for w in graph.selected_by(policy)] == [(ns, "client")]
        _view, workload, indices = graph.index.resolve("clusters-other/client")
        assert workload.namespace == "clusters-other" and indices
        indices.clear()
    assert graph.selected_by(inventory.get("Deployment", "clusters-other", "client", "management")) == []


def test_the_atoms_a_range_overlaps_are_those_of_that_range():
    from hcpscan.model.ipspace import IPSpace

    view = build_reachability(_inventory()).index.views[0]
    for cidr in ("10.0.0.0/8", "192.168.0.0/24", "10.0.0.0/8", "0.0.0.0/0"):
        space = IPSpace.from_cidr(cidr)
        expected = [k for k, atom in enumerate(view.atoms) if space.overlaps(atom)]
        assert view.atoms_overlapping(space) == expected
    assert len(view.atoms) > 1


def test_the_dns_pods_and_cluster_ip_hops_are_each_clusters_own():
    """Read once per cluster, the DNS each cluster runs and the Service hops into it stay
    that cluster's (a guest with kube-dns beside a management cluster with openshift-dns)."""
    from hcpscan.analysis.reachability.required import cluster_ip_hop, dns_pods

    def obj(cluster: str, kind: str, namespace: str, name: str, spec: dict) -> K8sObject:
        body = {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": namespace},
                "spec": spec}
        return K8sObject(cluster, "v1", kind, namespace, name, body, SourceLocation(f"{cluster}.yaml", 1))

    inventory = Inventory([
        obj("management", "Service", "openshift-dns", "dns-default",
            {"clusterIP": "172.30.0.10", "selector": {"dns.operator.openshift.io/daemonset-dns": "default"}}),
        obj("guest", "Service", "kube-system", "kube-dns", {"clusterIP": "10.96.0.10",
                                                            "selector": {"k8s-app": "kube-dns"}})])
    for _ in range(2):
        mgmt, guest = dns_pods(inventory, "management"), dns_pods(inventory, "guest")
        assert (mgmt[0], [p.namespace for p in mgmt[2]]) == ((5353,), ["openshift-dns"])
        assert (guest[0], [p.namespace for p in guest[2]]) == ((53,), ["kube-system"])
        mgmt[2].clear()  # a caller's list is its own
        hops = [cluster_ip_hop(inventory, cluster, ns, name, 53, "the DNS pods")
                for cluster, ns, name in (("management", "openshift-dns", "dns-default"),
                                          ("guest", "kube-system", "kube-dns"))]
        assert [h.target for h in hops] == ["Service openshift-dns/dns-default (172.30.0.10)",
                                            "Service kube-system/kube-dns (10.96.0.10)"]
        assert [h.path for h in hops] == ["management.yaml", "guest.yaml"]


EGRESS = """
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: dns-udp, namespace: clusters-edge}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress: [{ports: [{protocol: UDP, port: 53}]}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: dns-tcp, namespace: clusters-other}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress: [{ports: [{protocol: TCP, port: 53}]}]
"""


def test_what_a_workloads_egress_rules_open_is_its_own():
    graph = build_reachability(_inventory(MANIFESTS + POLICIES + EGRESS))
    for _ in range(2):
        edge = graph.egress_rules_open("management:clusters-edge/client")
        other = graph.egress_rules_open("management:clusters-other/client")
        assert edge[0] and other[0]
        assert (edge[1].allows("UDP", 53), edge[1].allows("TCP", 53)) == (True, False)
        assert (other[1].allows("UDP", 53), other[1].allows("TCP", 53)) == (False, True)


def test_whether_a_workload_has_a_way_in_is_its_own_asked_again():
    """``has_way_in`` reads a name resolved before in place: each workload's answer is
    still whether a Service or Route leads to its own classes, asked in any order."""
    graph = build_reachability(_inventory())
    names = [f"management:clusters-edge/{w.name}[{w.kind}]"
             for w in graph.workloads("management", "clusters-edge")]

    def plain(name: str) -> bool:
        view, _, indices = graph.index.resolve(name)
        return any(view.paths.get(i) for i in indices)

    expected = {name: plain(name) for name in names}
    assert sorted(expected.values()) == [False, True]  # the client has none, ignition does
    for name in [*names, *reversed(names)]:
        assert graph.has_way_in(name) == expected[name]
    assert not graph.has_workload("management:clusters-edge/nothing[Deployment]")


_BLOCKS = ["10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/24", "10.1.2.3/32", "192.168.0.0/24",
           "172.16.0.0/12", "0.0.0.0/1", "255.255.255.255/32", "fd00::/8", "fd00:1::/32",
           "::/0", "2001:db8::/32", "0.0.0.0/32"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_BLOCKS), max_size=8),
       st.lists(st.sampled_from(_BLOCKS), min_size=1, max_size=4), st.booleans())
def test_the_atoms_a_space_overlaps_are_found_by_address_as_by_asking_each(cuts, asked, shuffled):
    """A fleet cuts outside addresses into thousands of atoms: the atoms a space overlaps
    are found from its ranges' places among them; the answer must be every atom the
    space overlaps, in order (atoms out of address order are each asked)."""
    import dataclasses
    import random

    from hcpscan.model.ipspace import IPSpace, cut

    atoms = cut([IPSpace.from_cidr(c) for c in cuts], IPSpace.everything())
    if shuffled:
        random.Random(len(cuts)).shuffle(atoms)
    view = dataclasses.replace(build_reachability(_inventory()).index.views[0], atoms=atoms,
                               _overlapping={}, _starts=None)
    space = IPSpace.from_cidrs(asked)
    expected = [k for k, atom in enumerate(atoms) if space.overlaps(atom)]
    assert view.atoms_overlapping(space) == expected
    assert view.atoms_overlapping(space) == expected  # kept


def test_what_a_workloads_egress_opens_to_described_pods_is_its_own_side_and_peers():
    """What an egress side opens to described pods (the DNS pods) is kept by side and
    pods: each workload still gets its own side's answer, and other pods their own."""
    from hcpscan.analysis.reachability.evaluation import tiered_connections
    from hcpscan.analysis.reachability.queries import PodPeer, _rule_selects
    from hcpscan.model.ports import union_all

    to_dns = """
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: to-dns-pods, namespace: clusters-edge}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
  - to: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: openshift-dns}}}]
    ports: [{protocol: TCP, port: 5353}]
"""
    graph = build_reachability(_inventory(MANIFESTS + POLICIES + EGRESS + to_dns))
    dns = (PodPeer("openshift-dns", {"kubernetes.io/metadata.name": "openshift-dns"}, {}),)
    other = (PodPeer("elsewhere", {"kubernetes.io/metadata.name": "elsewhere"}, {"app": "x"}),)
    names = [f"management:{ns}/client" for ns in ("clusters-edge", "clusters-other")]

    def plain(name: str, peers: tuple[PodPeer, ...]) -> str:
        view, _, indices = graph.index.resolve(name)
        opened = None
        for src in indices:
            side = view.evaluation.egress_side(src)
            if side.isolated:
                reach = union_all(tiered_connections([r for r in side.rules if _rule_selects(r, p)],
                                                     None, side.np_isolated) for p in peers)
                opened = reach if opened is None else opened.intersection(reach)
        return str(opened)

    described = (dns, other)  # PodPeer holds dicts: asked by position
    expected = {(n, i): plain(n, p) for n in names for i, p in enumerate(described)}
    assert expected[(names[0], 0)] != expected[(names[1], 0)]
    assert expected[(names[0], 0)] != expected[(names[0], 1)]  # the edge opens 5353 to DNS only
    for name, i in [*expected, *reversed(expected)]:
        isolated, opened = graph.egress_to_pods(name, described[i])
        assert isolated and str(opened) == expected[(name, i)]


_LABELLED = "".join(f"""
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: w{i}, namespace: clusters-edge}}
spec:
  template:
    metadata: {{labels: {labels}}}
    spec: {{containers: [{{name: c}}]}}
""" for i, labels in enumerate(["{app: a}", "{app: a, tier: x}", "{app: b, tier: x}", "{tier: y}",
                                "{}", "{app: a, tier: y}"]))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["app", "tier", "none"]),
                       st.one_of(st.sampled_from(["a", "b", "x", "y", "client", ""]),
                                 st.none(), st.integers(0, 2)), max_size=3))
def test_workloads_picked_by_labels_are_those_whose_pods_carry_them(labels):
    """A namespace's classes are indexed by label pair for picking by labels; the
    workloads picked must be those of every class carrying all the labels, whatever
    the values (None equals a missing label, a number no label)."""
    graph = build_reachability(_inventory(MANIFESTS + _LABELLED))
    classes = graph.index.namespace_classes("management", "clusters-edge")
    plain = sorted({w for k in classes if all(k.labels.get(n) == v for n, v in labels.items())
                    for w in k.workloads}, key=lambda w: (w.name, w.kind))
    for _ in range(2):
        assert graph.select_workloads("management", "clusters-edge", labels) == plain


def test_labels_picked_across_more_namespaces_than_are_kept_indexed_stay_each_namespaces():
    """Only the last few namespaces stay indexed by label pair: asked round a fleet of
    namespaces twice, each pick is still that namespace's own."""
    from hcpscan.analysis.reachability import index

    count = index._LABELLED_KEPT + 4
    text = "".join(f"""
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: w{i}, namespace: ns-{n}}}
spec:
  template:
    metadata: {{labels: {{app: {'a' if (i + n) % 2 else 'b'}}}}}
    spec: {{containers: [{{name: c}}]}}
""" for n in range(count) for i in range(3))
    graph = build_reachability(_inventory(MANIFESTS + text))
    for _ in range(2):
        for n in range(count):
            for app in ("a", "b"):
                picked = [w.name for w in graph.select_workloads("management", f"ns-{n}", {"app": app})]
                assert picked == [f"w{i}" for i in range(3) if ((i + n) % 2 == 1) == (app == "a")]
    assert len(graph.index._labelled) == index._LABELLED_KEPT
