"""The same estate as a cluster holds it: each Deployment of a rule's failing fixture beside
the ReplicaSet it made and that ReplicaSet's Pod (real ownerReferences, ``controller:
true``), as `hypershift dump` and `oc adm inspect` collect them. The findings are the
fixture's, once each, on the Deployments: the copies' env is the Deployment's, judged there.
And the Pods alone, their ReplicaSet not in the input (`kubectl get pods -o yaml`): a rule
that judges Pods finds them, since no owner in the input stands for them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import FIXTURES
from tests.rules.harness import scan

# the proxy rules whose failing fixtures hold Deployments
RULES = ["PRX002", "PRX003", "PRX005", "PRX007", "PRX010", "PRX014", "PRX016", "PRX017"]


def _documents(folder: Path) -> list[tuple[str, list[Any]]]:
    out = []
    for path in sorted(folder.rglob("*.yaml")):
        out.append((path.name, [d for d in yaml.safe_load_all(path.read_text()) if d]))
    return out


def _made(deployment: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    meta = deployment.get("metadata") or {}
    name, namespace = meta.get("name", "d"), meta.get("namespace", "default")
    template = (deployment.get("spec") or {}).get("template") or {}
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": f"uid-{name}",
             "controller": True, "blockOwnerDeletion": True}
    replica_set = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                   "metadata": {"name": f"{name}-7d9f8b6c5d", "namespace": namespace,
                                "labels": labels, "ownerReferences": [owner]},
                   "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                            "template": template}}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": f"{name}-7d9f8b6c5d-x2k9p", "namespace": namespace,
                        "labels": labels, "annotations": (template.get("metadata") or {})
                        .get("annotations") or {},
                        "ownerReferences": [{**owner, "kind": "ReplicaSet",
                                             "name": f"{name}-7d9f8b6c5d",
                                             "uid": f"uid-{name}-rs"}]},
           "spec": template.get("spec") or {}}
    return replica_set, pod


def _found(folder: Path, rule_id: str) -> list[tuple[str, str, str]]:
    report = scan([folder], [rule_id])
    return sorted((f.object.kind, f.object.namespace or "", f.object.name)
                  for f in report.findings if f.rule_id == rule_id)


@pytest.mark.parametrize("rule_id", RULES)
def test_a_deployment_beside_its_replicaset_and_pod_is_found_once(rule_id, tmp_path) -> None:
    folder = FIXTURES / "rules" / rule_id / "fail"
    documents = _documents(folder)
    deployments = [d for _, docs in documents for d in docs
                   if isinstance(d, dict) and d.get("kind") == "Deployment"]
    assert deployments, f"{rule_id}'s failing fixture holds no Deployment"
    written, copied = tmp_path / "written", tmp_path / "copied"
    written.mkdir()
    copied.mkdir()
    for file, docs in documents:
        extra = [part for d in docs if isinstance(d, dict) and d.get("kind") == "Deployment"
                 for part in _made(d)]
        (written / file).write_text(yaml.safe_dump_all(docs))  # (comments are not written)
        (copied / file).write_text(yaml.safe_dump_all([*docs, *extra]))
    before = _found(written, rule_id)
    assert before
    assert _found(copied, rule_id) == before


@pytest.mark.parametrize("rule_id", RULES)
def test_a_deployment_beside_its_pod_without_the_replicaset_is_found_once(rule_id,
                                                                          tmp_path) -> None:
    """`kubectl get deploy,pods -o yaml`: the Pod's owner, its ReplicaSet, is not in the
    input, but the Deployment it belongs to is (the ReplicaSet's name less the Pod's
    pod-template-hash label, as the Deployment controller names them)."""
    folder = FIXTURES / "rules" / rule_id / "fail"
    documents = _documents(folder)
    written, copied = tmp_path / "written", tmp_path / "copied"
    written.mkdir()
    copied.mkdir()
    for file, docs in documents:
        pods = []
        for d in docs:
            if isinstance(d, dict) and d.get("kind") == "Deployment":
                pod = _made(d)[1]
                pod["metadata"]["labels"] = {**pod["metadata"]["labels"],
                                             "pod-template-hash": "7d9f8b6c5d"}
                pods.append(pod)
        (written / file).write_text(yaml.safe_dump_all(docs))
        (copied / file).write_text(yaml.safe_dump_all([*docs, *pods]))
    before = _found(written, rule_id)
    assert any(kind == "Deployment" for kind, _ns, _name in before)
    assert _found(copied, rule_id) == before


@pytest.mark.parametrize("rule_id", ["PRX005", "PRX007"])
def test_pods_whose_replicaset_is_not_in_the_input_are_judged_themselves(rule_id,
                                                                        tmp_path) -> None:
    folder = FIXTURES / "rules" / rule_id / "fail"
    documents = _documents(folder)
    on_deployments = {(ns, name) for kind, ns, name in _found(folder, rule_id)
                      if kind == "Deployment"}
    assert on_deployments, f"{rule_id}'s failing fixture fires on no Deployment"
    for file, docs in documents:
        kept = [d for d in docs if not (isinstance(d, dict) and d.get("kind") == "Deployment")]
        pods = [_made(d)[1] for d in docs if isinstance(d, dict) and d.get("kind") == "Deployment"]
        (tmp_path / file).write_text(yaml.safe_dump_all([*kept, *pods]))
    on_pods = {(ns, name.rsplit("-", 2)[0]) for kind, ns, name in _found(tmp_path, rule_id)
               if kind == "Pod"}
    assert on_deployments <= on_pods


@pytest.mark.parametrize("rule_id", ["PRX006", "PRX010", "PRX007"])
def test_the_makers_of_pods_are_read_whenever_pods_are(rule_id, tmp_path) -> None:
    """Whether a Pod's ReplicaSet is in the input decides who is judged: a rule run alone
    (`--select`) reads the makers too, so it judges what a whole scan judges."""
    from hcpscan.rules.config import ScanConfig
    from hcpscan.scan import RuleSelection, load_rules, resource_needs

    needs = resource_needs(load_rules(ScanConfig(), RuleSelection(select=[rule_id])))
    assert needs.plurals is not None
    assert {"replicasets", "deployments", "statefulsets", "daemonsets", "jobs",
            "cronjobs"} <= needs.plurals
    folder = FIXTURES / "rules" / rule_id / "fail"
    copied = tmp_path / "copied"
    copied.mkdir()
    for file, docs in _documents(folder):
        extra = [part for d in docs if isinstance(d, dict) and d.get("kind") == "Deployment"
                 for part in _made(d)]
        (copied / file).write_text(yaml.safe_dump_all([*docs, *extra]))
    alone = _found(copied, rule_id)
    whole = scan([copied], [])
    assert alone == sorted((f.object.kind, f.object.namespace or "", f.object.name)
                           for f in whole.findings if f.rule_id == rule_id)
