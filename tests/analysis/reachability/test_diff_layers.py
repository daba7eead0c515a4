"""`connectivity diff` applies every layer the connection list applies.

The property: for any two inputs A and B, the diff of A and B is exactly the difference
of their connection lists - pair by pair, address by address - for generated inputs
with primary UserDefinedNetworks and ClusterUserDefinedNetworks, secondary networks with
MultiNetworkPolicies, AdminNetworkPolicies, BaselineAdminNetworkPolicies,
NetworkPolicies with ipBlocks, and Routes (the {ingress-controller} lines). Workloads are compared under the names they have outside
a network's section (``ns/name[Kind]``), changes on a secondary network by network.
"""

from __future__ import annotations

import ipaddress
import os

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hcpscan.analysis.reachability.connlist import ConnectionList, connection_list, plain_name
from hcpscan.analysis.reachability.diff import ConnectivityDiff, connectivity_diff
from hcpscan.inventory import Inventory
from hcpscan.model.ports import ConnectionSet
from hcpscan.sources.loader import load_paths

EXAMPLES = int(os.environ.get("HCPSCAN_PROPERTY_EXAMPLES", "60"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])

NAMESPACES = ("blue", "green", "red")
APPS = ("a", "b")
NADS = ("flat", "storage")
CIDRS = ("10.0.0.0/8", "10.1.0.0/16", "192.168.0.0/24", "0.0.0.0/0")
UDN_LABEL = "k8s.ovn.org/primary-user-defined-network"


# -- generated inputs ---------------------------------------------------------------------

ports = st.lists(st.fixed_dictionaries({"protocol": st.sampled_from(["TCP", "UDP"]),
                                        "port": st.sampled_from([53, 80, 8080])}),
                 max_size=2)
pod_selector = st.one_of(st.just({}), st.builds(lambda a: {"matchLabels": {"app": a}},
                                                st.sampled_from(APPS)))
ns_selector = st.one_of(st.just({}), st.builds(
    lambda n: {"matchLabels": {"kubernetes.io/metadata.name": n}}, st.sampled_from(NAMESPACES)))


@st.composite
def peer(draw, ip_blocks: bool = True):
    kind = draw(st.sampled_from(["pod", "ns", "both", "ip"] if ip_blocks else ["pod", "ns", "both"]))
    if kind == "pod":
        return {"podSelector": draw(pod_selector)}
    if kind == "ns":
        return {"namespaceSelector": draw(ns_selector)}
    if kind == "both":
        return {"namespaceSelector": draw(ns_selector), "podSelector": draw(pod_selector)}
    return {"ipBlock": {"cidr": draw(st.sampled_from(CIDRS))}}


@st.composite
def policy_spec(draw, ip_blocks: bool = True):
    types = draw(st.sampled_from([["Ingress"], ["Egress"], ["Ingress", "Egress"]]))
    spec = {"podSelector": draw(pod_selector), "policyTypes": types}
    for direction, side in (("Ingress", "from"), ("Egress", "to")):
        if direction in types:
            rules = draw(st.lists(st.fixed_dictionaries({
                side: st.lists(peer(ip_blocks), min_size=1, max_size=2), "ports": ports}),
                max_size=2))
            spec[direction.lower()] = [{k: v for k, v in r.items() if v} for r in rules]
    return spec


@st.composite
def admin_rule(draw, banp: bool):
    actions = ["Allow", "Deny"] if banp else ["Allow", "Deny", "Pass"]
    rule = {"name": f"r{draw(st.integers(0, 9))}", "action": draw(st.sampled_from(actions))}
    peers = draw(st.lists(st.one_of(
        st.builds(lambda s: {"namespaces": s}, ns_selector),
        st.builds(lambda s, p: {"pods": {"namespaceSelector": s, "podSelector": p}},
                  ns_selector, pod_selector)), min_size=1, max_size=2))
    port_list = draw(st.lists(st.builds(
        lambda p, n: {"portNumber": {"protocol": p, "port": n}},
        st.sampled_from(["TCP", "UDP"]), st.sampled_from([53, 80, 8080])), max_size=1))
    return rule, peers, port_list


@st.composite
def admin_policy(draw, banp: bool):
    spec: dict = {"subject": {"namespaces": draw(ns_selector)}}
    if not banp:
        spec["priority"] = draw(st.integers(0, 3))
    for direction, side in (("ingress", "from"), ("egress", "to")):
        rules = []
        for i, (rule, peers, port_list) in enumerate(draw(st.lists(admin_rule(banp), max_size=2))):
            rule = {**rule, "name": f"{direction}-{i}", side: peers}
            if port_list:
                rule["ports"] = port_list
            rules.append(rule)
        if rules:
            spec[direction] = rules
    return spec


@st.composite
def estate(draw) -> list[dict]:
    """One input: namespaces (some on a primary UDN or CUDN), pods (some attached to
    secondary networks), NADs, NetworkPolicies, MultiNetworkPolicies, ANPs, a BANP, and
    Services with Routes."""
    docs: list[dict] = []
    udn = draw(st.sets(st.sampled_from(NAMESPACES)))
    cudn = draw(st.sets(st.sampled_from(NAMESPACES))) - udn
    for ns in NAMESPACES:
        labels = {"kubernetes.io/metadata.name": ns}
        if ns in udn | cudn:
            labels[UDN_LABEL] = ""
        if ns in cudn:
            labels["net"] = "shared"
        docs.append({"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": ns, "labels": labels}})
        if ns in udn:
            docs.append({"apiVersion": "k8s.ovn.org/v1", "kind": "UserDefinedNetwork",
                         "metadata": {"name": "primary", "namespace": ns},
                         "spec": {"topology": "Layer2", "layer2": {
                             "role": "Primary", "subnets": ["10.200.0.0/16"]}}})
        for nad in NADS:
            docs.append({"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
                         "metadata": {"name": nad, "namespace": ns},
                         "spec": {"config": '{"cniVersion": "0.3.1", "type": "ovn-k8s-cni-overlay", '
                                            f'"name": "{nad}", "topology": "layer2"}}'}})
        for app in APPS:
            if not draw(st.booleans()) and app == "b":
                continue  # a workload present in one input only
            attached = sorted(draw(st.sets(st.sampled_from(NADS))))
            meta: dict = {"name": app, "namespace": ns, "labels": {"app": app}}
            if attached:
                meta["annotations"] = {"k8s.v1.cni.cncf.io/networks": ",".join(attached)}
            docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                         "spec": {"containers": [{"name": "c", "ports": [
                             {"containerPort": 8080, "name": "http"}]}]}})
    for ns in sorted(draw(st.sets(st.sampled_from(NAMESPACES), max_size=2))):  # ingress
        docs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": ns},
                     "spec": {"selector": {"app": "a"},
                              "ports": [{"port": 80, "targetPort": draw(st.sampled_from(
                                  [8080, "http"]))}]}})
        docs.append({"apiVersion": "route.openshift.io/v1", "kind": "Route",
                     "metadata": {"name": "web", "namespace": ns},
                     "spec": {"to": {"kind": "Service", "name": "web"}}})
    if cudn:
        docs.append({"apiVersion": "k8s.ovn.org/v1", "kind": "ClusterUserDefinedNetwork",
                     "metadata": {"name": "shared"},
                     "spec": {"namespaceSelector": {"matchLabels": {"net": "shared"}},
                              "network": {"topology": "Layer2", "layer2": {
                                  "role": "Primary", "subnets": ["10.100.0.0/16"]}}}})
    for i, (ns, spec) in enumerate(draw(st.lists(st.tuples(st.sampled_from(NAMESPACES),
                                                            policy_spec()), max_size=3))):
        docs.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                     "metadata": {"name": f"np{i}", "namespace": ns}, "spec": spec})
    for i, (ns, nad, spec) in enumerate(draw(st.lists(st.tuples(
            st.sampled_from(NAMESPACES), st.sampled_from(NADS), policy_spec(ip_blocks=False)),
            max_size=2))):
        docs.append({"apiVersion": "k8s.cni.cncf.io/v1beta1", "kind": "MultiNetworkPolicy",
                     "metadata": {"name": f"mnp{i}", "namespace": ns,
                                  "annotations": {"k8s.v1.cni.cncf.io/policy-for": nad}},
                     "spec": spec})
    for i, spec in enumerate(draw(st.lists(admin_policy(banp=False), max_size=2))):
        docs.append({"apiVersion": "policy.networking.k8s.io/v1alpha1",
                     "kind": "AdminNetworkPolicy", "metadata": {"name": f"anp{i}"},
                     "spec": {**spec, "priority": spec["priority"] * 10 + i}})
    if draw(st.booleans()):
        docs.append({"apiVersion": "policy.networking.k8s.io/v1alpha1",
                     "kind": "BaselineAdminNetworkPolicy", "metadata": {"name": "default"},
                     "spec": draw(admin_policy(banp=True))})
    return docs


# -- comparing address by address ---------------------------------------------------------

EXTERNAL = "[External]"
Key = tuple[str, str, str]


def _range(peer: str) -> tuple[int, int] | None:
    if not peer.endswith(EXTERNAL):
        return None
    first, last = peer.removesuffix(EXTERNAL).split("-")
    return int(ipaddress.ip_address(first)), int(ipaddress.ip_address(last))


def _bounds(peers: set[str]) -> list[int]:
    """Every range start of the outputs, and one past every range end: the elementary
    pieces all of them are made of."""
    out = set()
    for peer in peers:
        span = _range(peer)
        if span is not None:
            out |= {span[0], span[1] + 1}
    return sorted(out)


def _pieces(peer: str, bounds: list[int]) -> list[str]:
    span = _range(peer)
    if span is None:
        return [plain_name(peer)]
    starts = [b for b in bounds if span[0] <= b <= span[1]]
    return [f"{lo}-{hi}" for lo, hi in zip(starts, [*starts[1:], span[1] + 1]) if lo < hi]


def _list_rows(result: ConnectionList, bounds: list[int]) -> dict[Key, ConnectionSet]:
    rows: dict[Key, ConnectionSet] = {}
    for c in result.connections:
        network = c.network if c.secondary else ""
        for src in _pieces(c.source, bounds):
            for dst in _pieces(c.destination, bounds):
                key = (src, dst, network)
                rows[key] = rows[key].union(c.connections) if key in rows else c.connections
    return {k: v for k, v in rows.items() if v}


def _diff_rows(diff: ConnectivityDiff, bounds: list[int]
               ) -> dict[Key, tuple[ConnectionSet, ConnectionSet]]:
    rows = {}
    for c in diff.changes:
        for src in _pieces(c.source, bounds):
            for dst in _pieces(c.destination, bounds):
                key = (src, dst, c.network)
                assert key not in rows, f"{key} changed twice"
                rows[key] = (c.old, c.new)
    return rows


def _inventory(tmp_path, name: str, docs: list[dict]) -> Inventory:
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    path = folder / "input.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    loaded = load_paths([str(path)])
    return Inventory(loaded.objects, loaded.diagnostics, loaded.skipped)


def assert_diff_is_the_lists_difference(old: Inventory, new: Inventory) -> ConnectivityDiff:
    before, after = connection_list(old), connection_list(new)
    diff = connectivity_diff(old, new)
    peers = {p for r in (before, after) for c in r.connections for p in (c.source, c.destination)}
    peers |= {p for c in diff.changes for p in (c.source, c.destination)}
    bounds = _bounds(peers)
    was, now = _list_rows(before, bounds), _list_rows(after, bounds)
    expected = {key: (was.get(key, ConnectionSet.none()), now.get(key, ConnectionSet.none()))
                for key in was.keys() | now.keys() if was.get(key) != now.get(key)}
    assert _diff_rows(diff, bounds) == expected
    return diff


@SETTINGS
@given(old=estate(), new=estate())
def test_the_diff_of_two_inputs_is_the_difference_of_their_lists(tmp_path, old, new):
    assert_diff_is_the_lists_difference(_inventory(tmp_path, "old", old),
                                        _inventory(tmp_path, "new", new))


@SETTINGS
@given(docs=estate())
def test_an_input_against_itself_has_no_diff(tmp_path, docs):
    same = _inventory(tmp_path, "same", docs)
    assert not connectivity_diff(same, same).changes


# -- the cases the property is made of, on inputs written out -----------------------------

def _ns(name: str, udn: bool) -> str:
    label = f"  labels: {{{UDN_LABEL}: ''}}\n" if udn else ""
    return f"---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n{label}"


def _udn(ns: str) -> str:
    return (f"---\napiVersion: k8s.ovn.org/v1\nkind: UserDefinedNetwork\n"
            f"metadata: {{name: tenant, namespace: {ns}}}\n"
            "spec: {topology: Layer3, layer3: {role: Primary, subnets: [{cidr: 10.128.0.0/16}]}}\n")


def _pod(ns: str, networks: str = "") -> str:
    note = f", annotations: {{k8s.v1.cni.cncf.io/networks: '{networks}'}}" if networks else ""
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: api, namespace: {ns}{note}}}\n"
            "spec: {containers: [{name: c}]}\n")


def _nad(ns: str) -> str:
    return (f"---\napiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\n"
            f"metadata: {{name: backplane, namespace: {ns}}}\n"
            "spec: {config: '{\"cniVersion\": \"0.3.1\", \"type\": \"macvlan\"}'}\n")


def test_namespaces_isolated_by_primary_udns_show_in_the_diff(manifests):
    """The silent wrong answer: the diff compared the pods as if on one network."""
    flat = manifests(_ns("shop", False) + _pod("shop") + _ns("bank", False) + _pod("bank"), "a.yaml")
    split = manifests(_ns("shop", True) + _udn("shop") + _pod("shop") + _ns("bank", True)
                      + _udn("bank") + _pod("bank"), "b.yaml")
    diff = assert_diff_is_the_lists_difference(flat, split)
    assert [str(c) for c in diff.changes] == [
        "diff-type: removed, source: bank/api[Pod], destination: shop/api[Pod], "
        "ref1: All Connections, ref2: No Connections",
        "diff-type: removed, source: shop/api[Pod], destination: bank/api[Pod], "
        "ref1: All Connections, ref2: No Connections"]
    back = connectivity_diff(split, flat)
    assert {c.kind for c in back.changes} == {"added"} and len(back.changes) == 2


def test_a_change_on_a_secondary_network_names_the_network(manifests):
    text = _ns("shop", False) + _nad("shop") + _pod("shop", "backplane")
    other = text.replace("name: api", "name: worker")
    old = manifests(text, "a.yaml")
    new = manifests(text + other, "b.yaml")
    diff = assert_diff_is_the_lists_difference(old, new)
    on_nad = [c for c in diff.changes if c.network]
    assert [str(c) for c in on_nad] == [
        "diff-type: added, source: shop/api[Pod], destination: shop/worker[Pod], "
        "ref1: No Connections, ref2: All Connections, workloads-diff-info: workload "
        "shop/worker[Pod] added, network: backplane[NAD]",
        "diff-type: added, source: shop/worker[Pod], destination: shop/api[Pod], "
        "ref1: No Connections, ref2: All Connections, workloads-diff-info: workload "
        "shop/worker[Pod] added, network: backplane[NAD]"]
    assert on_nad[0].to_json()["network"] == "backplane[NAD]"
    assert not diff.unevaluated  # evaluated, so not declared as left out


def test_diff_explain_says_why_each_changed_pair_is_as_it_is(run_cli, tmp_path):
    """`diff --explain`: after the diff lines, the changed pairs explained in OLD and in NEW
    (a pair the UDNs cut: the UserDefinedNetworks that isolate it); unchanged pairs are
    not explained; --explain was ignored before."""
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    stay = (_ns("stay", False) + _pod("stay")).replace("name: api", "name: cron")
    (old / "in.yaml").write_text(_ns("shop", False) + _pod("shop") + _ns("bank", False)
                                 + _pod("bank") + stay)
    (new / "in.yaml").write_text(_ns("shop", True) + _udn("shop") + _pod("shop") + _ns("bank", True)
                                 + _udn("bank") + _pod("bank") + stay)
    result = run_cli("connectivity", "--no-progress", "diff", str(old), str(new), "--explain")
    assert result.code == 0, result.err
    diff, before, after = result.out.split("Explanation of the changed pairs in ")
    # shop and bank lose each other and cron (on the pod network), both ways
    assert diff.count("diff-type: removed") == 6
    assert before.startswith(str(old)) and after.startswith(str(new))
    assert "bank/api[Pod] => shop/api[Pod]" in before
    assert ("UserDefinedNetwork 'bank' isolates bank[udn]/api[Pod]; and UserDefinedNetwork "
            "'shop' isolates shop[udn]/api[Pod]") in after
    assert ("UserDefinedNetwork 'shop' isolates shop[udn]/api[Pod]\n") in after  # cron's side
    for text in (before, after):  # pairs that did not change are not explained
        assert "[External]" not in text
    bad = run_cli("connectivity", "--no-progress", "diff", str(old), str(new), "--explain",
                  "--format", "json")
    assert bad.code == 2 and "--explain explains the changed pairs as text" in bad.err
    only = run_cli("connectivity", "--no-progress", "diff", str(old), str(new), "--explain-only", "deny")
    assert only.code == 2 and "--explain-only needs --explain" in only.err


def test_diff_formats_name_the_secondary_network_of_a_change(run_cli, tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    text = _ns("shop", False) + _nad("shop") + _pod("shop", "backplane")
    (old / "in.yaml").write_text(text)
    (new / "in.yaml").write_text(text + _pod("shop", "backplane").replace("name: api",
                                                                          "name: worker"))
    base = ("connectivity", "--no-progress", "diff", str(old), str(new))
    csv = run_cli(*base, "--format", "csv")
    assert csv.code == 0, csv.err
    header, *rows = csv.out.splitlines()
    assert header.split(",")[-1] == "network"
    assert ("added,shop/api[Pod],shop/worker[Pod],No Connections,All Connections,"
            "workload shop/worker[Pod] added,backplane[NAD]") in rows
    assert any(row.endswith(",") for row in rows)  # a pod-network change: no network
    text_out = run_cli(*base).out
    assert ", network: backplane[NAD]" in text_out
    assert "# answer excludes" not in text_out  # NADs and MNPs are evaluated, not declared


def test_diff_explain_explains_a_pair_only_on_the_network_it_changed_on(run_cli, tmp_path):
    """A pair that changed on a secondary network only is explained there: its unchanged
    pod-network connections are not explained as if they had changed too."""
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    text = (_ns("shop", False) + _nad("shop") + _pod("shop", "backplane")
            + _pod("shop", "backplane").replace("name: api", "name: worker"))
    deny = ("---\napiVersion: k8s.cni.cncf.io/v1beta1\nkind: MultiNetworkPolicy\nmetadata:\n"
            "  name: quiet\n  namespace: shop\n"
            "  annotations: {k8s.v1.cni.cncf.io/policy-for: backplane}\n"
            "spec: {podSelector: {}, policyTypes: [Ingress]}\n")
    (old / "in.yaml").write_text(text)
    (new / "in.yaml").write_text(text + deny)
    result = run_cli("connectivity", "--no-progress", "diff", str(old), str(new), "--explain")
    assert result.code == 0, result.err
    diff, before, after = result.out.split("Explanation of the changed pairs in ")
    assert diff.count(", network: backplane[NAD]") == 2 and diff.count("diff-type") == 2
    for text_out in (before, after):
        assert "secondary NAD backplane" in text_out
        assert "pod-network" not in text_out and "Pod network" not in text_out, text_out
    assert "MultiNetworkPolicy 'shop/quiet' selects" in after
