"""`hcpscan connectivity`: the connection list, the queries, and usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO / ".." / "shared"
CPO_RENDERED = SHARED / "realworld" / "hypershift" / "cpo-rendered"
FIXTURES = REPO / "fixtures" / "reachability"
HCP = (str(CPO_RENDERED), str(FIXTURES / "hcp-nodeport"))
FIREWALL = str(FIXTURES / "perimeter-workers-only.yaml")
PROXY = "hcp-namespace/ignition-server-proxy"


def test_connection_list_is_plain_lines(run_cli):
    result = run_cli("connectivity", "--no-progress", str(FIXTURES / "nodeport-service"))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert "shop/storefront[Deployment] => shop/checkout[Deployment] : TCP 5050" in lines
    assert "shop/checkout[Deployment] => 198.51.100.0-198.51.100.255[External] : TCP 443" in lines
    assert lines == sorted(lines)


def test_who_can_reach_without_perimeter_shows_the_internet_and_the_policy(run_cli):
    result = run_cli("connectivity", "--no-progress", *HCP, "--to", PROXY, "--port", "8443")
    assert result.code == 0, result.err
    assert "0.0.0.0/0, ::/0[External] (outside the cluster)" in result.out
    assert "NetworkPolicy hcp-namespace/nodeport-ignition-proxy ingress rule #1" in result.out


def test_who_can_reach_with_perimeter_shows_only_the_worker_subnet(run_cli):
    result = run_cli("connectivity", "--no-progress", *HCP, "--firewall", FIREWALL,
                     "--to", PROXY, "--port", "8443")
    assert result.code == 0, result.err
    outside = [line for line in result.out.splitlines() if "(outside the cluster)" in line]
    assert outside == ["  10.0.128.0/20[External] (outside the cluster)"]
    assert "perimeter allows: perimeter mgmt-nodes-sg: rule 'workers-to-ignition-and-konnectivity'" \
        in result.out


def test_can_reach_names_the_blocking_layer(run_cli):
    result = run_cli("connectivity", "--no-progress", *HCP, "--firewall", FIREWALL,
                     "--to", PROXY, "--port", "8443", "--from", "203.0.113.9")
    assert result.code == 0, result.err
    assert result.out.startswith(f"203.0.113.9/32[External] CANNOT reach {PROXY}[Deployment]")
    assert "perimeter blocks: perimeter mgmt-nodes-sg: rule 'everyone-else'" in result.out


def test_json_answers(run_cli):
    result = run_cli("connectivity", "--no-progress", *HCP, "--firewall", FIREWALL,
                     "--to", PROXY, "--port", "8443", "--format", "json")
    doc = json.loads(result.out)
    outside = [r for r in doc["reaches"] if "addresses" in r["source"]]
    assert [r["source"]["addresses"] for r in outside] == [["10.0.128.0/20"]]
    layers = {e["layer"] for p in outside[0]["paths"] for e in p["evidence"]}
    assert layers == {"perimeter", "network-policy"}


def test_exposed_ports_without_port(run_cli):
    result = run_cli("connectivity", "--no-progress", str(FIXTURES / "nodeport-service"),
                     "--to", "shop/storefront")
    assert result.code == 0, result.err
    assert "TCP 8443 via LoadBalancer Service shop/storefront-partners from 203.0.113.0/24" \
        in result.out


def test_bad_perimeter_file_is_a_usage_error_with_a_line(run_cli, tmp_path):
    bad = tmp_path / "fw.yaml"
    bad.write_text("rules:\n- action: allow\n  sources: [300.0.0.0/8]\n")
    result = run_cli("connectivity", "--no-progress", *HCP, "--firewall", str(bad), "--to", PROXY)
    assert result.code == 2
    assert f"{bad}:3:" in result.err
    assert "Traceback" not in result.err


def test_unknown_target_is_a_usage_error(run_cli):
    result = run_cli("connectivity", "--no-progress", *HCP, "--to", "hcp-namespace/nope",
                     "--port", "1")
    assert result.code == 2
    assert "no workload hcp-namespace/nope" in result.err


def test_port_without_target_is_a_usage_error(run_cli):
    result = run_cli("connectivity", "--no-progress", *HCP, "--port", "8443")
    assert result.code == 2
    assert "give --to too" in result.err


def test_invalid_policy_is_reported_and_fails_the_run(run_cli, tmp_path):
    (tmp_path / "np.yaml").write_text("""\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: broken, namespace: default}
spec:
  podSelector: {}
  ingress:
  - ports: [{port: 80, protocol: ICMP}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {containers: [{name: web}]}
""")
    result = run_cli("connectivity", "--no-progress", str(tmp_path))
    assert result.code == 2
    assert "default/broken is invalid" in result.err
    assert "0.0.0.0-255.255.255.255[External] => default/web[Pod] : All Connections" in result.out


def test_focus_options_filter_the_list(run_cli):
    base = ("connectivity", "--no-progress", str(FIXTURES / "nodeport-service"))
    everything = run_cli(*base).out.splitlines()
    egress = run_cli(*base, "--focus-workload", "checkout", "--focus-direction", "egress")
    assert egress.code == 0, egress.err
    lines = egress.out.splitlines()
    assert lines and all(line.startswith("shop/checkout[Deployment] => ") for line in lines)
    assert set(lines) == {line for line in everything if line.startswith("shop/checkout[")}
    one = run_cli(*base, "--focus-conn", "tcp-5050").out.splitlines()
    assert one[0] == "Permitted connections on TCP 5050:"
    assert "shop/storefront[Deployment] => shop/checkout[Deployment]" in one[1:]


def test_a_focus_workload_the_input_lacks_is_warned_about(run_cli):
    base = ("connectivity", "--no-progress", str(FIXTURES / "nodeport-service"))
    result = run_cli(*base, "--focus-workload", "nonexistent,checkout",
                     "--focus-workload-peer", "shop/storefront")
    assert result.code == 0, result.err
    assert "shop/storefront[Deployment] => shop/checkout[Deployment]" in result.out
    assert "workload nonexistent does not exist in the input resources" in result.err
    assert "checkout does not" not in result.err and "storefront does not" not in result.err
    assert "does not exist" not in run_cli(*base, "--focus-workload", "ingress-controller").err


def test_bad_focus_options_are_usage_errors(run_cli):
    base = ("connectivity", "--no-progress", str(FIXTURES / "nodeport-service"))
    assert run_cli(*base, "--focus-conn", "icmp-8").code == 2
    assert run_cli(*base, "--focus-workload", "x", "--to", "shop/checkout").code == 2


@pytest.mark.parametrize("flags", [("--focus-direction", "egress"),
                                   ("--focus-workload-peer", "storefront"),
                                   ("--focus-direction", "ingress", "--explain")])
def test_direction_or_peer_without_a_focus_workload_is_ignored_with_a_warning(run_cli, flags):
    """As netpol-analyzer does: the whole list (or explanation), and a warning that says so."""
    base = ("connectivity", "--no-progress", str(FIXTURES / "nodeport-service"))
    whole = run_cli(*base, *flags[2:])
    result = run_cli(*base, *flags)
    assert result.code == 0, result.err
    assert result.out == whole.out and "shop/checkout[Deployment] => " in result.out
    assert f"{flags[0]} is used only with --focus-workload: ignored" in result.err


def test_diff_lists_what_changed(run_cli, tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    pods = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, labels: {app: web}}
spec: {containers: [{name: web}]}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: shop, labels: {app: db}}
spec: {containers: [{name: db}]}
"""
    (old / "m.yaml").write_text(pods)
    (new / "m.yaml").write_text(pods + """\
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db, namespace: shop}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress: [{from: [{podSelector: {matchLabels: {app: web}}}], ports: [{port: 5432}]}]
""")
    result = run_cli("connectivity", "--no-progress", "diff", str(old), str(new))
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "Connectivity diff:",
        "diff-type: changed, source: shop/web[Pod], destination: shop/db[Pod], "
        "ref1: All Connections, ref2: TCP 5432",
        "diff-type: removed, source: 0.0.0.0-255.255.255.255[External], destination: shop/db[Pod], "
        "ref1: All Connections, ref2: No Connections"]
    same = run_cli("connectivity", "--no-progress", "diff", str(old), str(old))
    assert same.code == 0 and same.out == ""
    assert run_cli("connectivity", "--no-progress", "diff", str(old)).code == 2


def test_a_mistyped_from_cidr_is_a_usage_error_that_says_so(run_cli):
    result = run_cli("connectivity", *HCP, "--no-progress", "--to", PROXY, "--port", "8443",
                     "--from", "10.0.0.0/33")
    assert result.code == 2, result.err
    assert "10.0.0.0/33 is not an address or CIDR" in result.err
    assert "no workload" not in result.err and "internal error" not in result.err
