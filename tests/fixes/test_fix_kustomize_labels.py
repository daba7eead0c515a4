"""A new NetworkPolicy written into a kustomize base whose kustomizations set
``commonLabels`` (or ``labels`` with ``includeSelectors: true``): kustomize adds those
labels to every ``matchLabels`` of a NetworkPolicy's pod selectors, the peers' too, so a
peer naming the DNS pods would select pods that do not carry them (none). The fix writes
such selectors as ``matchExpressions``, which kustomize leaves as written; hcpscan builds
the tree with ``kubectl kustomize`` and reads the policy as the cluster would get it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from hcpscan.sources.kustomize import selector_labels
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES, require

VANILLA = FIXTURES / "required-flows" / "vanilla-dns" / "hcp.yaml"
KUBE_DNS = "kind: Service\nmetadata:\n  name: kube-dns\n"


def _estate(tmp_path: Path, labels: str) -> tuple[Path, Path]:
    """The vanilla-DNS input as a GitOps estate: the hosted cluster's objects in a kustomize
    base used by an overlay (``labels``: its extra kustomization text), and the cluster's
    kube-dns Service in a plain file beside the tree (it is not kustomize's)."""
    estate = tmp_path / "estate"
    base = estate / "tree" / "base"
    base.mkdir(parents=True)
    docs = VANILLA.read_text().split("---\n")
    (base / "hcp.yaml").write_text("---\n".join(d for d in docs if KUBE_DNS not in d))
    (base / "kustomization.yaml").write_text("resources:\n- hcp.yaml\n")
    (estate / "tree" / "kustomization.yaml").write_text("resources:\n- base\n" + labels)
    dns, = [d for d in docs if KUBE_DNS in d]
    (estate / "kube-dns.yaml").write_text(dns)
    return estate, base / "hcp.yaml"


def _built_policy(estate: Path, name: str) -> dict:
    result = load_paths([str(estate)])
    found = [o.body for o in result.objects if o.kind == "NetworkPolicy" and o.name == name]
    assert len(found) == 1, [o.ref for o in result.objects]
    return found[0]


COMMON = "commonLabels:\n  team: platform\n"
LABELS = "labels:\n- pairs:\n    team: platform\n  includeSelectors: true\n"
PEER = {"matchExpressions": [{"key": "k8s-app", "operator": "In", "values": ["kube-dns"]}]}


@pytest.mark.parametrize("labels", [COMMON, LABELS], ids=["commonLabels", "labels-includeSelectors"])
def test_dns_peer_in_a_labelled_kustomize_base_is_written_past_the_common_labels(
        labels, tmp_path, run_cli):
    require(shutil.which("kubectl"), "kubectl")
    estate, base = _estate(tmp_path, labels)
    before = run_cli("scan", str(estate), "--select", "HCP008", "--no-progress", "--no-config",
                     "--format", "json")
    assert [f["rule_id"] for f in json.loads(before.out)["findings"]
            if f["status"] == "fail"] == ["HCP008"], before.out
    pristine = base.read_text()
    result = run_cli("fix", str(estate), "--select", "HCP008", "--no-progress", "--no-config")
    assert result.code == 0, result.err
    assert "written as matchExpressions" in result.out + result.err
    assert "team=platform" in result.out + result.err
    after = base.read_text()
    assert after.startswith(pristine)  # the base's lines as written, the policy added
    # what kustomize builds from the fixed base, as hcpscan reads it: the common label is
    # really added to the policy's own matchLabels (its pods carry it too), never to the
    # DNS peer, which selects exactly the kube-dns pods
    policy = _built_policy(estate, "kube-apiserver-allow-hcp-dns")
    assert policy["metadata"]["labels"] == {"team": "platform"}
    assert policy["spec"]["podSelector"] == {
        "matchLabels": {"app": "kube-apiserver", "team": "platform"}}
    peer, = policy["spec"]["egress"][0]["to"]
    assert peer["podSelector"] == PEER
    again = run_cli("scan", str(estate), "--select", "HCP008", "--no-progress", "--no-config",
                    "--format", "json")
    assert [f for f in json.loads(again.out)["findings"] if f["status"] == "fail"] == []


def test_without_common_labels_the_peer_keeps_its_match_labels(tmp_path, run_cli):
    require(shutil.which("kubectl"), "kubectl")
    estate, _base = _estate(tmp_path, "")
    result = run_cli("fix", str(estate), "--select", "HCP008", "--no-progress", "--no-config")
    assert result.code == 0, result.err
    assert "matchExpressions" not in result.out + result.err
    peer, = _built_policy(estate, "kube-apiserver-allow-hcp-dns")["spec"]["egress"][0]["to"]
    assert peer["podSelector"] == {"matchLabels": {"k8s-app": "kube-dns"}}


def test_selector_labels_of_the_chain_from_the_base_to_the_root(tmp_path):
    """commonLabels and includeSelectors labels of every kustomization from the file's folder
    up to the built root; labels without includeSelectors touch no selector; the root
    (applied last) wins on a shared key; a file outside the root gets none."""
    base = tmp_path / "root" / "base"
    base.mkdir(parents=True)
    (base / "kustomization.yaml").write_text(
        "resources: [a.yaml]\ncommonLabels: {tier: base, team: core}\n"
        "labels:\n- pairs: {only-metadata: 'yes'}\n")
    root = tmp_path / "root" / "kustomization.yaml"
    root.write_text("resources: [base]\nlabels:\n- pairs: {team: platform}\n"
                    "  includeSelectors: true\n")
    assert selector_labels(str(root), str(base / "a.yaml")) == {"tier": "base",
                                                                "team": "platform"}
    assert selector_labels(str(root), str(tmp_path / "elsewhere.yaml")) == {}


def test_an_unbuilt_kustomize_base_gets_the_same_selectors(tmp_path, run_cli, monkeypatch):
    """Without kubectl the tree is read as written (a warning says so) and the policy goes
    into the base file as for a plain folder; the user's own build adds the overlay's
    labels all the same, so the DNS peer is written as matchExpressions there too."""
    estate, base = _estate(tmp_path, COMMON)
    empty = tmp_path / "no-kubectl"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = run_cli("fix", str(estate), "--select", "HCP008", "--no-progress", "--no-config")
    assert result.code == 0, result.err
    assert "written as matchExpressions" in result.err
    added = [d for d in yaml.safe_load_all(base.read_text())
             if d["metadata"]["name"] == "kube-apiserver-allow-hcp-dns"]
    assert added and added[0]["spec"]["egress"][0]["to"][0]["podSelector"] == PEER
