"""The stand-in API server answers as a real one: the real kubectl agrees with it, and with hcpscan."""

from __future__ import annotations

import json
from pathlib import Path

from hcpscan.sources.live import ClusterTarget, connect, discover, read_cluster
from tests.live.apiserver import catalog
from tests.live.conftest import write_kubeconfig


def _served(resources) -> set[tuple[str, str, bool, str]]:
    """(name, apiVersion, namespaced, kind) of each resource in the preferred version of its
    group, or in the version that serves it when the preferred one does not (Multus:
    NetworkAttachmentDefinition in v1, MultiNetworkPolicy in v1beta1), as kubectl shows."""
    seen_groups: dict[str, str] = {}
    for r in resources:
        seen_groups.setdefault(r.group, r.version)
    in_preferred = {(r.group, r.plural) for r in resources if r.version == seen_groups[r.group]}
    out = set()
    for r in resources:
        preferred = r.version == seen_groups[r.group]
        if (preferred or (r.group, r.plural) not in in_preferred) and "/" not in r.plural:
            out.add((r.plural, r.api_version, r.namespaced, r.kind))
    return out


def test_kubectl_api_resources_matches_the_catalog(standin, pki, kubectl, tmp_path):
    server = standin([])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    done = kubectl(config, "api-resources", "--no-headers", "-o", "wide")
    assert done.returncode == 0, done.stderr
    rows = set()
    for line in done.stdout.splitlines():
        cols = line.split()
        # NAME [SHORTNAMES] APIVERSION NAMESPACED KIND VERBS
        name, rest = cols[0], cols[1:]
        if rest[1] not in ("true", "false"):
            rest = rest[1:]  # drop SHORTNAMES
        rows.add((name, rest[0], rest[1] == "true", rest[2]))
    assert rows == _served(catalog())


def test_hcpscan_discovery_matches_kubectl(standin, pki, kubectl, tmp_path):
    server = standin([])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    done = kubectl(config, "api-resources", "--no-headers", "--verbs=list", "-o", "name")
    assert done.returncode == 0, done.stderr
    conn = connect(ClusterTarget(str(config), request_timeout=5))
    discovery = discover(conn)
    assert {r.display for r in discovery.resources} == set(done.stdout.split())
    # hypershift's preferred version wins over v1alpha1, which also serves HostedCluster
    (hc,) = discovery.serving("HostedCluster")
    assert hc.api_version == "hypershift.openshift.io/v1beta1"
    assert {r.group for r in discovery.serving("Network")} == {"config.openshift.io", "operator.openshift.io"}


def test_kubectl_and_hcpscan_list_the_same_network_policies(standin, pki, kubectl, tmp_path,
                                                            example_bodies):
    server = standin(example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    done = kubectl(config, "get", "networkpolicies", "-A", "-o", "json")
    assert done.returncode == 0, done.stderr
    from_kubectl = {(i["metadata"]["namespace"], i["metadata"]["name"]): i
                    for i in json.loads(done.stdout)["items"]}
    conn = connect(ClusterTarget(str(config), request_timeout=5))
    read = read_cluster(conn, discover(conn), {"NetworkPolicy"}, page_size=5)
    from_hcpscan = {(o.namespace, o.name): o.body for o in read.objects}
    assert len(from_kubectl) == 12
    assert from_hcpscan == from_kubectl  # same bodies, kind and apiVersion included
    expected = {(b["metadata"]["namespace"], b["metadata"]["name"]): b["spec"]
                for b in example_bodies if b["kind"] == "NetworkPolicy"}
    assert {k: v["spec"] for k, v in from_kubectl.items()} == expected


def test_kubectl_follows_the_stand_ins_continue_tokens(standin, pki, kubectl, tmp_path, example_bodies):
    server = standin(example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    done = kubectl(config, "get", "secrets", "-A", "--chunk-size=7", "-o", "json")
    assert done.returncode == 0, done.stderr
    names = [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in json.loads(done.stdout)["items"]]
    expected = sorted((b["metadata"]["namespace"], b["metadata"]["name"])
                      for b in example_bodies if b["kind"] == "Secret")
    assert sorted(names) == expected and len(names) == len(set(names))
    pages = [r for r in server.state.requests if r.path == "/api/v1/secrets"]
    assert len(pages) == -(-len(expected) // 7)
    assert all(r.query.get("limit") == "7" for r in pages)
    assert sum(1 for r in pages if "continue" in r.query) == len(pages) - 1


def test_kubectl_sees_the_same_errors(standin, pki, kubectl, tmp_path):
    server = standin([], resources=catalog(without=["hypershift.openshift.io"]))
    server.state.forbidden.add("secrets")
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    forbidden = kubectl(config, "get", "secrets", "-A")
    assert forbidden.returncode != 0
    assert "Error from server (Forbidden)" in forbidden.stderr
    assert 'cannot list resource "secrets" in API group "" at the cluster scope' in forbidden.stderr
    absent = kubectl(config, "get", "hostedclusters", "-A")
    assert 'the server doesn\'t have a resource type "hostedclusters"' in absent.stderr
    bad = write_kubeconfig(tmp_path / "bad", server.url, pki.ca_pem, token="wrong")
    unauthorized = kubectl(bad, "get", "namespaces")
    assert "Unauthorized" in unauthorized.stderr


def test_stand_in_is_read_only(standin, pki, kubectl, tmp_path: Path):
    server = standin([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    done = kubectl(config, "delete", "namespace", "team-a", "--wait=false")
    assert done.returncode != 0
    assert [r.status for r in server.state.requests if r.method == "DELETE"] == [405]
