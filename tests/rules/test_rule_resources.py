"""Which resources a rule makes hcpscan read follow from the kinds it reads, by one kind ->
resource table (inventory/resources.py) that loading files and the live lister share;
``needs:`` is gone from the shipped rules and merged, deprecated, in a user's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from hcpscan.inventory.resources import plural_of, resources_for
from hcpscan.rules.loader import RuleFileError, builtin_rules_dir, load_rule_dirs, load_rule_file
from hcpscan.scan import pruned_kinds, resource_needs
from hcpscan.sources.loader import load_paths

RULES = {r.id: r for r in load_rule_dirs([builtin_rules_dir()])}

# What the shipped rules listed under `needs:` before it was derived (issue 26): each is
# still read when the rule runs alone.
FORMER_NEEDS = {
    "OCM001": ["proxies", "deployments", "daemonsets", "statefulsets", "configmaps"],
    "OCM002": ["addondeploymentconfigs", "proxies", "configmaps"],
    "PRX001": ["proxies", "network-attachment-definitions", "clusteruserdefinednetworks", "hostedclusters"],
    "PRX002": ["deployments", "statefulsets"],
    "PRX003": ["proxies"],
    "PRX004": ["hostedclusters"],
    "PRX005": ["networks", "clusters", "services"],
    "PRX009": ["secrets"],
    "PRX010": ["secrets", "configmaps", "proxies", "clusterpolicies", "policies"],
    "PRX011": ["deployments", "namespaces"],
    "PRX012": ["configmaps"],
    "PRX016": ["hostedclusters", "configmaps", "secrets"],
    "PRX017": ["proxies"],
}


@pytest.mark.parametrize("rule_id", sorted(FORMER_NEEDS))
def test_a_rule_alone_still_reads_what_it_once_listed(rule_id):
    plurals = resource_needs([RULES[rule_id]]).plurals or frozenset()
    assert set(FORMER_NEEDS[rule_id]) <= plurals


def test_no_shipped_rule_names_resources():
    named = [p.name for p in sorted(builtin_rules_dir().glob("*.y*ml"))
             if "needs" in yaml.safe_load(p.read_text(encoding="utf-8"))]
    assert named == []
    assert all(rule.needs == () for rule in RULES.values())


def test_a_built_in_rule_with_needs_is_refused(tmp_path: Path):
    path = tmp_path / "PRX002.yaml"
    data = yaml.safe_load((builtin_rules_dir() / "PRX002.yaml").read_text(encoding="utf-8"))
    path.write_text(yaml.safe_dump({**data, "needs": ["deployments"]}), encoding="utf-8")
    with pytest.raises(RuleFileError) as caught:
        load_rule_file(path, builtin=True)
    assert "needs" in str(caught.value.problems)
    shutil.copy(builtin_rules_dir() / "PRX002.yaml", path)
    assert load_rule_file(path, builtin=True).needs == ()


def _user_rule(tmp_path: Path, needs: list[str] | None) -> Path:
    rule = {"id": "USR001", "title": "widgets carry an owner", "severity": "low",
            "applies_to": {"kinds": ["Deployment"]}, "message": "no owner",
            "check": {"template": "field_matches",
                      "params": {"path": "metadata.labels.owner", "pattern": ".+"}}}
    if needs is not None:
        rule["needs"] = needs
    path = tmp_path / "usr001.yaml"
    path.write_text(yaml.safe_dump(rule), encoding="utf-8")
    return path


def test_a_user_rule_s_needs_is_merged_and_keeps_those_kinds_whole(tmp_path: Path):
    plain = load_rule_file(_user_rule(tmp_path, None))
    merged = load_rule_file(_user_rule(tmp_path, ["widgets", "pods"]))
    assert merged.needs == ("widgets", "pods")
    assert (resource_needs([merged]).plurals or set()) - (resource_needs([plain]).plurals or set()) \
        == {"widgets", "pods"}
    assert "Pod" in pruned_kinds([plain]) and "Pod" not in pruned_kinds([merged])


def test_the_table_gives_the_api_server_s_plurals_and_what_made_kinds_come_from():
    assert [plural_of(k) for k in ("Deployment", "Proxy", "NetworkPolicy", "Ingress", "Endpoints",
                                   "NetworkAttachmentDefinition", "MultiNetworkPolicy")] == [
        "deployments", "proxies", "networkpolicies", "ingresses", "endpoints",
        "network-attachment-definitions", "multi-networkpolicies"]
    assert resources_for(["Kubeconfig"]) == {"secrets"}
    assert resources_for(["InstallConfig", "Deployment"]) == {"configmaps", "secrets", "deployments"}


_NAD = {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
        "metadata": {"name": "storage", "namespace": "clusters-a"},
        "spec": {"config": '{"cniVersion": "0.3.1", "type": "macvlan", "ipam": {"type": "static"}}'}}
_MNP = {"apiVersion": "k8s.cni.cncf.io/v1beta1", "kind": "MultiNetworkPolicy",
        "metadata": {"name": "deny", "namespace": "clusters-a",
                     "annotations": {"k8s.v1.cni.cncf.io/policy-for": "storage"}},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}}


def test_a_dump_s_dashed_cni_resources_are_read_for_the_rules_that_read_their_kinds(tmp_path: Path):
    """must-gather / oc adm inspect name k8s.cni.cncf.io files by their dashed plurals."""
    group = tmp_path / "namespaces" / "clusters-a" / "k8s.cni.cncf.io"
    group.mkdir(parents=True)
    for plural, doc in (("network-attachment-definitions", _NAD), ("multi-networkpolicies", _MNP)):
        (group / f"{plural}.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                                                              "items": [doc]}), encoding="utf-8")
    readers = [r for r in RULES.values() if {"NetworkAttachmentDefinition", "MultiNetworkPolicy"} & set(r.reads)]
    assert readers
    loaded = load_paths([str(tmp_path)], needs=resource_needs(readers))
    kinds = sorted(o.kind for o in loaded.objects)
    assert kinds == ["MultiNetworkPolicy", "NetworkAttachmentDefinition"]
