"""Must-gather trees and hypershift dump tarballs built from the real rendered manifests."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from hcpscan.sources.loader import load_paths
from tests.conftest import REALWORLD
from tests.sources.dumps import Expected, inspect_tree, real_objects, write_tarball, write_tree


def _found(objects, root: str) -> list[Expected]:
    out = []
    for o in objects:
        path = o.source.path
        rel = path.split("!", 1)[1] if "!" in path else str(Path(path).relative_to(root))
        out.append(Expected(o.cluster, o.kind, o.namespace, o.name, rel, o.source.line))
    return out


@pytest.fixture(scope="module")
def cpo_objects() -> list[dict]:
    # A live cluster holds one object per identity; the rendered folder has two
    # FeatureGate/cluster variants, so keep the first, as a dump would.
    seen, out = set(), []
    for obj in real_objects(REALWORLD / "cpo-rendered"):
        key = (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])
        if key not in seen:
            seen.add(key)
            out.append(obj)
    return out


def test_must_gather_tree_finds_every_object_once_with_its_line(tmp_path, cpo_objects):
    prefix = "must-gather.local.5838/quay-io-openshift-must-gather-sha256-abc/"
    files, expected = inspect_tree(cpo_objects, "management", prefix)
    # noise a real must-gather has: logs, events, a timestamp file
    files[prefix + "namespaces/hcp-namespace/core/events.yaml"] = "apiVersion: v1\nkind: List\nitems: []\n"
    files[prefix + "namespaces/hcp-namespace/pods/kas-0/kube-apiserver/kube-apiserver/logs/current.log"] = (
        "I1121 kube-apiserver started\n")
    files[prefix + "timestamp"] = "2026-11-21 10:00:00 start\n"
    write_tree(tmp_path, files)

    result = load_paths([str(tmp_path)])

    assert result.diagnostics == []
    found = _found(result.objects, str(tmp_path))
    assert Counter(found) == Counter(expected)
    assert len(found) == len(cpo_objects) == len(set(found))
    assert result.skipped.counts["logs"] == 1
    assert result.skipped.counts["events"] == 1
    # Deployments and Secrets stand twice in the tree (List + own file): read once
    assert result.skipped.counts["already read from another file of the same dump"] > 0


def test_hypershift_dump_tarball_keeps_guest_cluster_apart(tmp_path, cpo_objects):
    management, expected_mgmt = inspect_tree(cpo_objects, "management", "")
    guest_objects = [o for o in cpo_objects if o["kind"] in ("ConfigMap", "Service")]
    guest, expected_guest = inspect_tree(guest_objects, "hostedcluster-example",
                                         "hostedcluster-example/")
    archive = tmp_path / "hypershift-dump.tar.gz"
    write_tarball(archive, {**management, **guest})

    result = load_paths([str(archive)])

    assert result.diagnostics == []
    found = _found(result.objects, str(tmp_path))
    assert Counter(found) == Counter(expected_mgmt + expected_guest)
    # the same namespace and names exist in both clusters, distinguishable by cluster
    mgmt_cm = {(o.namespace, o.name) for o in result.objects
               if o.kind == "ConfigMap" and o.cluster == "management"}
    guest_cm = {(o.namespace, o.name) for o in result.objects
                if o.kind == "ConfigMap" and o.cluster == "hostedcluster-example"}
    assert mgmt_cm == guest_cm and mgmt_cm


def test_zip_archive_members_are_sources(tmp_path, cpo_objects):
    import zipfile

    files, expected = inspect_tree(cpo_objects[:20], "management", "inspect.local/")
    archive = tmp_path / "inspect.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for rel, text in files.items():
            zf.writestr(rel, text)
    result = load_paths([str(archive)])
    assert Counter(_found(result.objects, str(tmp_path))) == Counter(expected)
    assert all(o.source.path.startswith(str(archive) + "!") for o in result.objects)


@pytest.mark.parametrize("folder", ["create-render", "cpo-rendered"])
def test_realworld_folders_load_without_diagnostics(folder):
    result = load_paths([str(REALWORLD / folder)])
    assert result.diagnostics == []
    plain = real_objects(REALWORLD / folder)
    loaded = [o for o in result.objects]
    assert Counter(o.kind for o in loaded) == Counter(d["kind"] for d in plain)


def test_resources_no_rule_needs_are_not_parsed(tmp_path, cpo_objects):
    from hcpscan.sources.loader import LEFT_OUT, ResourceNeeds

    files, _ = inspect_tree(cpo_objects, "management", "")
    write_tree(tmp_path, files)
    result = load_paths([str(tmp_path)], ResourceNeeds(frozenset({"deployments", "services"})))
    assert {o.kind for o in result.objects} == {"Deployment", "Service"}
    left_out = result.skipped.details[LEFT_OUT]
    assert result.skipped.counts[LEFT_OUT] == sum(left_out.values())
    assert "configmaps" in left_out and "deployments" not in left_out
