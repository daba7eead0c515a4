"""Pruning the bulky kinds (inventory/kept.py) keeps every field hcpscan reads: the shape
check names the same misfits, every scan result and every source line stay the same, and
a rule that reads bodies whole keeps its kinds whole."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hcpscan import scan
from hcpscan.inventory.kept import KEPT, PRUNABLE, kept, path_kept
from hcpscan.inventory.shapes import SHAPES, first_misfit
from hcpscan.rules.config import ScanConfig
from hcpscan.rules.model import AppliesTo
from hcpscan.scan import RuleSelection, load_rules, pruned_kinds
from hcpscan.sources import loader
from hcpscan.sources.loader import ResourceNeeds, load_paths
from tests.conftest import FIXTURES
from tests.inventory.test_shapes import OBJECTS, WRONG, _paths, _replaced

EXAMPLE = FIXTURES / "example"
BULKY: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-1", "namespace": "shop", "uid": "5f0c", "labels": {"app": "web"},
                 "ownerReferences": [{"kind": "ReplicaSet", "name": "web", "uid": "9a1",
                                      "apiVersion": "apps/v1", "controller": True}],
                 "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": {}}}]},
    "spec": {"affinity": {"podAntiAffinity": {}}, "tolerations": [{"key": "a"}],
             "serviceAccountName": "web", "nodeName": "n1", "hostNetwork": False,
             "volumes": [{"name": "ca", "configMap": {"name": "ca"}}],
             "initContainers": [{"name": "proxy", "image": "envoy", "restartPolicy": "Always",
                                 "resources": {"limits": {"cpu": "1"}}}],
             "containers": [{"name": "web", "image": "web:1", "args": ["--port=8080"],
                             "env": [{"name": "HTTPS_PROXY", "value": "http://p:3128"}],
                             "envFrom": [{"configMapRef": {"name": "env", "optional": True}}],
                             "ports": [{"containerPort": 8080, "name": "http"}],
                             "livenessProbe": {"httpGet": {"port": 8080}},
                             "securityContext": {"runAsNonRoot": True},
                             "volumeMounts": [{"name": "ca", "mountPath": "/ca"}]}]},
    "status": {"phase": "Running", "podIP": "10.0.0.5", "podIPs": [{"ip": "10.0.0.5"}],
               "hostIP": "192.168.0.4", "conditions": [{"type": "Ready"}],
               "containerStatuses": [{"name": "web", "ready": True}]},
}


def test_unread_fields_are_dropped_and_read_ones_kept_as_they_are():
    pod = kept("Pod", BULKY)
    assert list(pod) == list(BULKY)  # every top-level field: the locator knows entries by them
    assert "managedFields" not in pod["metadata"]
    assert {k: v for k, v in pod["metadata"].items()} == {
        k: v for k, v in BULKY["metadata"].items() if k != "managedFields"}
    assert set(pod["spec"]) == {"hostNetwork", "volumes", "initContainers", "containers"}
    container = pod["spec"]["containers"][0]
    original = BULKY["spec"]["containers"][0]
    assert set(container) == {"name", "image", "args", "env", "envFrom", "ports", "volumeMounts"}
    assert container["envFrom"] is original["envFrom"] and container["env"] is original["env"]
    assert pod["spec"]["initContainers"][0] == {"name": "proxy", "image": "envoy",
                                                "restartPolicy": "Always"}
    assert pod["status"] == {"podIP": "10.0.0.5", "podIPs": [{"ip": "10.0.0.5"}],
                             "hostIP": "192.168.0.4"}
    assert kept("Service", BULKY) is BULKY  # not a pruned kind


def test_a_deployment_keeps_its_status_and_its_template_metadata():
    body = {"kind": "Deployment", "metadata": {"name": "d"}, "status": {"replicas": 3},
            "spec": {"replicas": 3, "strategy": {"type": "Recreate"}, "selector": {"matchLabels": {}},
                     "template": {"metadata": {"labels": {"a": "b"}, "managedFields": []},
                                  "spec": dict(BULKY["spec"])}}}
    out = kept("Deployment", body)
    assert out["status"] is body["status"] and set(out["spec"]) == {"replicas", "selector", "template"}
    assert out["spec"]["template"]["metadata"] == {"labels": {"a": "b"}}
    assert "affinity" not in out["spec"]["template"]["spec"]


def test_every_field_the_shapes_describe_is_kept():
    """What the shape check reads survives pruning, so it names the same misfits."""
    checked = misfits = 0
    for obj in OBJECTS:
        kind = obj["kind"]
        if kind not in PRUNABLE:
            continue
        assert first_misfit(kind, kept(kind, obj)) == first_misfit(kind, obj)
        for path in list(_paths(obj, SHAPES[kind], ()))[:40]:
            for wrong in WRONG:
                changed = _replaced(obj, path, wrong)
                expected = first_misfit(kind, changed)
                assert first_misfit(kind, kept(kind, changed)) == expected, (kind, path)
                checked += 1
                misfits += expected is not None
    assert checked > 300 and misfits > 100


@pytest.mark.parametrize(("kind", "path", "whole"), [
    ("Pod", "$.spec.containers[*].env[*].value", True),
    ("Pod", "$.spec.initContainers[0].args[*]", True),
    ("Pod", "$.metadata.labels", True),
    ("Deployment", "$.spec.template.spec.containers[*].command[*]", True),
    ("Deployment", "$.status.replicas", True),
    ("Service", "$..anything", True),  # not pruned
    ("Pod", "$.spec.containers[*].livenessProbe", False),
    ("Pod", "$.metadata", False),  # managedFields are dropped
    ("Pod", "$..env", False),
    ("Pod", "$.spec.containers[?(@.name=='web')].env", False),
    ("Pod", "$.status.phase", False),
    ("ReplicaSet", "$.spec.template.spec.*", False),
])
def test_a_rules_own_path_is_kept_only_when_it_runs_through_kept_fields(kind, path, whole):
    assert path_kept(kind, path) is whole


def _catalog():
    return load_rules(ScanConfig(), RuleSelection())


def test_the_catalog_reads_only_kept_fields_of_the_bulky_kinds():
    assert pruned_kinds(_catalog()) == PRUNABLE == frozenset(KEPT)


def test_a_rule_that_reads_bodies_keeps_its_kinds_whole(tmp_path):
    rules = _catalog()
    by_id = {r.id: r for r in rules}
    # a user's copy of a catalog rule: its kinds are read whole
    mine = dataclasses.replace(by_id["PRX003"], info=dataclasses.replace(
        by_id["PRX003"].info, source=str(tmp_path / "PRX003.yaml")))
    assert "Deployment" in mine.reads
    assert pruned_kinds([*rules, mine]) == PRUNABLE - set(mine.reads)
    # a where filter reads its subjects whole
    where = dataclasses.replace(by_id["PRX010"], applies_to=AppliesTo(
        kinds=("Pod",), where="$.status.phase"))
    assert pruned_kinds([*rules, where]) == PRUNABLE - {"Pod"}
    # a proxy_values path the table does not keep
    params = {**by_id["PRX008"].params, "fields": {"ReplicaSet": ["$..value"]}}
    assert pruned_kinds([*rules, dataclasses.replace(by_id["PRX008"], params=params)]) \
        == PRUNABLE - {"ReplicaSet"}
    # a CEL expression that reads other objects' bodies
    cel = by_id["PRX011"]
    uses = dataclasses.replace(cel, params={**cel.params, "expression": "size(objects) > 0"})
    assert pruned_kinds([*rules, uses]) == PRUNABLE - {"Deployment"}
    # a user's rule on any kind
    anything = dataclasses.replace(mine, applies_to=AppliesTo(kinds=()))
    assert pruned_kinds([*rules, anything]) == frozenset()


def _bodies(result) -> dict[tuple, Any]:
    return {o.identity: o.body for o in result.objects}


@pytest.mark.parametrize("workers", [False, True], ids=("in-process", "parse-workers"))
def test_loading_prunes_where_the_parsing_happens(monkeypatch, workers):
    if workers:  # the pool even for a small input: bodies are pruned before they are sent
        monkeypatch.setattr(loader, "PARALLEL_THRESHOLD", 0)
        monkeypatch.setenv("HCPSCAN_JOBS", "2")
    else:
        monkeypatch.setenv("HCPSCAN_JOBS", "1")
    whole = _bodies(load_paths([str(EXAMPLE)]))
    pruned = _bodies(load_paths([str(EXAMPLE)], ResourceNeeds(pruned=PRUNABLE)))
    assert whole.keys() == pruned.keys()
    changed = 0
    for key, body in whole.items():
        expected = kept(key[2], body)
        assert pruned[key] == expected
        changed += expected != body
    assert changed >= 10


def _report(run_cli, path: Path, out: Path) -> dict[str, Any]:
    result = run_cli("scan", str(path), "--format", "json", "-o", str(out))
    assert result.code in (0, 1), result.err
    return json.loads(out.read_text())  # SOURCE_DATE_EPOCH: no times in it


def test_a_scan_says_the_same_with_bodies_whole_or_pruned(run_cli, monkeypatch, tmp_path):
    """Findings, their lines, rule results, diagnostics and the inventory: the same."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1")
    inputs = tmp_path / "in"
    shutil.copytree(EXAMPLE, inputs / "example")
    shutil.copytree(FIXTURES / "rules" / "PRX006" / "fail", inputs / "prx006")
    shutil.copytree(FIXTURES / "rules" / "HCP006" / "fail", inputs / "hcp006")
    pruned = _report(run_cli, inputs, tmp_path / "pruned.json")
    monkeypatch.setattr(scan, "pruned_kinds", lambda rules: frozenset())
    whole = _report(run_cli, inputs, tmp_path / "whole.json")
    assert pruned["findings"] and pruned == whole


def _workloads(tmp_path: Path) -> Path:
    """Two replicas, their ReplicaSet and Deployment (one pod spec, written with other
    unread fields each), and a pod whose spec differs."""
    spec = {"containers": [{"name": "web", "image": "web:1", "args": ["--port=8080"],
                            "env": [{"name": "HTTPS_PROXY", "value": "http://p:3128"}]}]}
    pods = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"web-{i}", "namespace": "shop", "labels": {"app": "web"}},
             "spec": {**spec, "nodeName": f"node-{i}", "tolerations": [{"key": str(i)}]},
             "status": {"podIP": f"10.0.0.{i}", "phase": "Running"}} for i in range(2)]
    pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db", "namespace": "shop"},
                 "spec": {**spec, "hostNetwork": True}})
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {**spec, "schedulerName": "x"}}
    workloads = [{"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "web", "namespace": "shop"},
                  "spec": {"replicas": 2, "template": template}}
                 for kind in ("Deployment", "ReplicaSet")]
    out = tmp_path / "in"
    out.mkdir()
    (out / "pods.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": pods}))
    (out / "workloads.yaml").write_text(yaml.safe_dump_all(workloads))
    return out


def test_equal_pod_specs_are_one_object_and_unequal_ones_are_not(monkeypatch, tmp_path):
    """Replicas, their ReplicaSet and its Deployment hold one pod spec; a pod whose
    spec differs keeps its own. The values are those of each object, pruned."""
    monkeypatch.setenv("HCPSCAN_JOBS", "1")
    folder = _workloads(tmp_path)
    whole = {o.identity: o.body for o in load_paths([str(folder)]).objects}
    objects = load_paths([str(folder)], ResourceNeeds(pruned=PRUNABLE)).objects
    specs = {o.name + "/" + o.kind: id(o.body["spec"] if o.kind == "Pod" else
                                       o.body["spec"]["template"]["spec"]) for o in objects}
    assert len(specs) == 5
    assert specs["web-0/Pod"] == specs["web-1/Pod"] == specs["web/ReplicaSet"] == specs["web/Deployment"]
    assert specs["db/Pod"] != specs["web-0/Pod"]
    for obj in objects:
        assert obj.body == kept(obj.kind, whole[obj.identity])


def test_a_key_not_made_from_marshals_bytes_needs_equal_values():
    from hcpscan.inventory.kept import share_spec, spec_key

    one = kept("Pod", BULKY)
    other = kept("Pod", {**BULKY, "spec": {**BULKY["spec"], "hostNetwork": True}})
    specs: dict[bytes, Any] = {}
    share_spec("Pod", one, b"same", specs)
    share_spec("Pod", other, b"same", specs)  # a key two different specs happen to share
    assert other["spec"]["hostNetwork"] is True and other["spec"] is not one["spec"]
    again = kept("Pod", BULKY)
    assert spec_key("Pod", again) == spec_key("Pod", one)
    share_spec("Pod", again, spec_key("Pod", again), specs)
    share_spec("Pod", one, spec_key("Pod", one), specs)
    assert again["spec"] is one["spec"]
    assert spec_key("Service", BULKY) is None and spec_key("Pod", {"spec": "text"}) is None


def _same(a: Any, b: Any) -> bool:
    """The plain meaning of "one value": the same types all the way down, mappings' keys in
    the same order, numbers written the same (``True`` is not ``1``, ``0.0`` not ``-0.0``)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(_same(k, j) and _same(a[k], b[j]) for k, j in zip(a, b))
    if type(a) is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return repr(a) == repr(b) if type(a) is float else a == b


_SCALARS = st.sampled_from([None, True, False, 0, 1, 1.0, 0.0, -0.0, "1", "", "true", b"1"])
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["name", "image", "args", "1"]) | st.sampled_from([1, True]), inner, max_size=3),
    max_leaves=8)


def _rewritten(value: Any) -> Any:
    """``value`` through JSON: equal by ``==`` or nearly, not always the same value (keys
    ``1`` and ``True`` become ``"1"`` and ``"true"``)."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return value


@settings(max_examples=500, deadline=None)
@given(_VALUES, _VALUES, st.sampled_from(["apart", "rewritten", "copied"]))
def test_specs_with_one_digest_are_one_value(a, b, how):
    """A spec shared by its digest alone (``share_spec`` does not compare them) is the same
    value as the one it replaces, by the plain definition above."""
    import copy

    from hcpscan.inventory.kept import share_spec, spec_key

    if how != "apart":
        b = _rewritten(a) if how == "rewritten" else copy.deepcopy(a)
    one, other = {"spec": {"containers": [a]}}, {"spec": {"containers": [b]}}
    key, second = spec_key("Pod", one), spec_key("Pod", other)
    assert key is not None and second is not None
    assert (key == second) == _same(a, b)
    specs: dict[bytes, Any] = {}
    share_spec("Pod", one, key, specs)
    share_spec("Pod", other, second, specs)
    assert _same(other["spec"]["containers"][0], b)


def test_a_spec_marshal_cannot_write_is_compared_before_it_is_shared():
    """Equal reprs are not equal values (a YAML tag's object): such keys are marked, and
    the specs compared, even when their digests are the same."""
    from hcpscan.inventory.kept import share_spec, spec_key

    class Tagged:
        def __init__(self, value: object) -> None:
            self.value = value

        def __repr__(self) -> str:
            return "Tagged"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Tagged) and other.value == self.value

        __hash__ = None  # type: ignore[assignment]

    one = {"spec": {"containers": [{"name": "a", "image": Tagged(1)}]}}
    other = {"spec": {"containers": [{"name": "a", "image": Tagged(2)}]}}
    same = {"spec": {"containers": [{"name": "a", "image": Tagged(1)}]}}
    key = spec_key("Pod", one)
    assert key == spec_key("Pod", other) == spec_key("Pod", same)
    specs: dict[bytes, Any] = {}
    for body in (one, other, same):
        share_spec("Pod", body, key, specs)  # type: ignore[arg-type]
    assert other["spec"] is not one["spec"] and other["spec"]["containers"][0]["image"].value == 2
    assert same["spec"] is one["spec"]


def test_a_spec_that_holds_itself_is_kept_apart_not_a_crash(monkeypatch, tmp_path):
    """Two pods whose args are YAML aliases of themselves: equal digests, but == cannot
    compare them; each keeps its own spec and loading goes on."""
    monkeypatch.setenv("HCPSCAN_JOBS", "1")
    pods = "".join(f"""- apiVersion: v1
  kind: Pod
  metadata: {{name: {name}, namespace: x}}
  spec:
    containers:
    - name: c
      args: &{name} [x, *{name}]
""" for name in ("a", "b"))
    (tmp_path / "pods.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n" + pods)
    whole = load_paths([str(tmp_path)])
    pruned = load_paths([str(tmp_path)], ResourceNeeds(pruned=PRUNABLE))
    assert [o.name for o in pruned.objects] == [o.name for o in whole.objects] == ["a", "b"]
    first, second = (o.body["spec"] for o in pruned.objects)
    assert first is not second
    assert [d.to_json() for d in pruned.diagnostics] == [d.to_json() for d in whole.diagnostics]


def test_equal_specs_have_one_key_however_their_strings_are_shared():
    from hcpscan.inventory.kept import spec_key

    image = "".join(["quay.io/", "web:1"])  # one string object, used twice below
    shared = {"spec": {"containers": [{"name": "web", "image": image, "args": [image]}]}}
    apart = {"spec": {"containers": [{"name": "web", "image": "quay.io/web:1",
                                      "args": ["".join(["quay.io/", "web:1"])]}]}}
    assert spec_key("Pod", shared) == spec_key("Pod", apart)
    changed = {"spec": {"containers": [{"name": "web", "image": image, "args": [1]}]}}
    assert spec_key("Pod", changed) != spec_key("Pod", shared)
    assert spec_key("Pod", {"spec": {"x": True}}) != spec_key("Pod", {"spec": {"x": 1}})


def _holds_itself(value: Any, inside: tuple[int, ...] = ()) -> bool:
    """The test's own look for a mapping or list inside itself."""
    if type(value) not in (dict, list):
        return False
    if id(value) in inside:
        return True
    children = value.values() if type(value) is dict else value
    return any(_holds_itself(child, (*inside, id(value))) for child in children)


def _values(value: Any, sizes: dict[int, float] | None = None) -> float:
    """The test's own count of the values marshal writes for an acyclic ``value`` (what
    an alias names counted at each alias)."""
    sizes = {} if sizes is None else sizes
    if type(value) not in (dict, list):
        return 1
    if id(value) not in sizes:
        children = value.values() if type(value) is dict else value
        sizes[id(value)] = 1 + (len(value) if type(value) is dict else 0) + sum(
            _values(child, sizes) for child in children)
    return sizes[id(value)]


class _Marshal:
    """marshal, refusing a value that holds itself or that aliases make huge: its version 2
    writes what an alias names again at each alias, so a value that holds itself at two
    places is written twice as often at each level, down to marshal's depth limit (it
    never ends, and all the memory is taken first), and aliases of aliases multiply."""

    def dumps(self, value: Any, version: int) -> bytes:
        import marshal

        assert not _holds_itself(value), "a spec that holds itself handed to marshal"
        assert _values(value) <= 5_000_000, "a spec of more values than --max-nodes handed to marshal"
        return marshal.dumps(value, version)


def _laughing(name: str, line_break: str, levels: int) -> str:
    """A Pod whose port holds ten to the ``levels`` values, written in a few lines of aliases
    of aliases (a "billion laughs"), each anchor right after ``line_break``."""
    lines = [f"        k0: [x,{line_break}&a0 [{', '.join(['x'] * 10)}]]"]
    lines += [f"        k{i}: [x,{line_break}&a{i} [{', '.join([f'*a{i - 1}'] * 10)}]]" for i in range(1, levels)]
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: x}}\nspec:\n"
            f"  containers:\n  - name: c\n    ports:\n    - containerPort: 80\n      chain:\n"
            + "".join(line + "\n" for line in lines) + f"      deep: *a{levels - 1}\n")


def test_a_spec_that_aliases_make_larger_than_the_node_bound_gets_no_key(monkeypatch):
    """Written out, a spec is as large as its aliases make it: past the load's --max-nodes
    it is not (within it, as any other)."""
    from hcpscan.inventory import kept as kept_module
    from hcpscan.inventory.kept import spec_key

    level: list[Any] = ["x"] * 10
    for _ in range(6):  # some eleven million values, in 7 lists
        level = [level] * 10
    huge = {"spec": {"containers": [{"name": "c", "ports": [{"deep": level}]}]}}
    monkeypatch.setattr(kept_module, "marshal", _Marshal())
    assert spec_key("Pod", huge) is None
    assert spec_key("Pod", huge, True, 5_000_000) is None
    small = {"spec": {"containers": [{"name": "c", "ports": [{"deep": level[0][0][0]}]}]}}
    assert spec_key("Pod", small, True, 20_000) is not None  # some 11,000 values
    assert spec_key("Pod", small, True, 10_000) is None


# A pod spec whose container list holds itself at two fields (a YAML alias to its anchor).
_SELF_HOLDING = """apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: x}
spec:
  containers: &c [{name: c, image: quay.io/web:1, ports: *c, volumeMounts: *c}]
"""


def test_a_spec_that_holds_itself_gets_no_key_and_is_never_written_out(monkeypatch):
    from hcpscan.inventory import kept as kept_module
    from hcpscan.inventory.kept import spec_key

    monkeypatch.setattr(kept_module, "marshal", _Marshal())
    containers: list[Any] = [{"name": "c", "image": "quay.io/web:1"}]
    containers[0]["ports"] = containers[0]["volumeMounts"] = containers
    assert spec_key("Pod", {"spec": {"containers": containers}}) is None
    once: list[Any] = ["x"]
    once.append(once)  # held at one place only: the same, no key either
    assert spec_key("Pod", {"spec": {"containers": [{"name": "c", "args": once}]}}) is None
    # a spec that holds the same value twice (an alias, not inside its own anchor) has its key
    env = [{"name": "HTTPS_PROXY", "value": "http://proxy.corp:3128"}]
    twice = {"spec": {"containers": [{"name": "a", "env": env}, {"name": "b", "env": env}]}}
    apart = json.loads(json.dumps(twice))
    assert spec_key("Pod", twice) is not None and spec_key("Pod", twice) == spec_key("Pod", apart)


def test_pods_whose_specs_hold_themselves_load_as_their_text_says(monkeypatch, tmp_path):
    """Loaded pruned, in files that have aliases and beside one that has none: each
    self-holding spec stays its own object, the plain ones are shared, and none is written
    out by marshal."""
    from hcpscan.inventory import kept as kept_module

    monkeypatch.setenv("HCPSCAN_JOBS", "1")
    for name in ("a", "b"):
        (tmp_path / f"{name}.yaml").write_text(_SELF_HOLDING % name)
    plain = "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: x}\nspec:\n  containers: [{name: c}]\n"
    for name in ("c", "d"):
        (tmp_path / f"{name}.yaml").write_text(plain % name)
    # anchors where a flow collection starts, and on a whole document after UTF-8's mark
    (tmp_path / "e.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: e, namespace: x}\n"
        "spec: {containers: [{name: c, args: [&a [x, *a, *a]]}]}\n")
    (tmp_path / "f.yaml").write_bytes(
        b"\xef\xbb\xbf&f {apiVersion: v1, kind: Pod, metadata: {name: f, namespace: x},"
        b" spec: {containers: [{name: c, ports: [*f], volumeMounts: [*f]}]}}\n")
    # right after a line break YAML reads beside "\n": U+0085, U+2028 (UTF-8's last byte is not ASCII)
    for name, line_break in (("g", "\x85"), ("h", "\u2028")):
        (tmp_path / f"{name}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: x}}\n"
            f"spec: {{containers: [{{name: c, ports: [x,{line_break}&p {{p: [*p, *p]}}]}}]}}\n",
            encoding="utf-8")
    # ten to the 8th values in 8 lines, anchors after U+0085: refused by the load's node
    # bound (core/yamldocs.NOT_NODE_START), said, and not loaded
    (tmp_path / "i.yaml").write_text(_laughing("i", "\x85", 8), encoding="utf-8")
    whole = load_paths([str(tmp_path)])
    monkeypatch.setattr(kept_module, "marshal", _Marshal())
    pruned = load_paths([str(tmp_path)], ResourceNeeds(pruned=PRUNABLE))
    assert [o.name for o in pruned.objects] == [o.name for o in whole.objects] == list("abcdefgh")
    a, b, c, d, e, f, g, h = (o.body["spec"] for o in pruned.objects[:8])
    assert g["containers"][0]["ports"][1]["p"][1] is g["containers"][0]["ports"][1]
    assert a is not b and c is d
    assert e["containers"][0]["args"][0][1] is e["containers"][0]["args"][0]
    assert f["containers"][0]["ports"][0]["metadata"] == {"name": "f", "namespace": "x"}
    container = a["containers"][0]
    assert container["ports"] is container["volumeMounts"] is container["ports"][0]["ports"]
    (refused,) = pruned.diagnostics
    assert refused.path.endswith("i.yaml") and "more than 5,000,000 nodes" in refused.message


def _chained(name: str, links: int) -> str:
    """A Pod whose port holds a list nested ``links`` deep, made of aliases of aliases
    (``&a1 [*a0]``, ``&a2 [*a1]``...): deeper than marshal and repr write, few nodes."""
    anchors = "".join(f"        k{i}: &a{i} [{'x' if i == 0 else f'*a{i - 1}'}]\n" for i in range(links))
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: x}}
spec:
  containers:
  - name: c
    image: quay.io/web:1
    ports:
    - containerPort: 80
      chain:
{anchors}      deep: *a{links - 1}
"""


def test_a_spec_nested_past_what_marshal_and_repr_write_gets_no_key():
    from hcpscan.inventory.kept import spec_key

    deep: list[Any] = ["x"]
    for _ in range(3000):
        deep = [deep]
    assert spec_key("Pod", {"spec": {"containers": [{"name": "c", "ports": [{"deep": deep}]}]}}) is None
    assert spec_key("Pod", {"spec": {"containers": [{"name": "c", "ports": [{"deep": [[["x"]]]}]}]}})


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_pods_nested_deep_through_aliases_load_with_or_without_workers(monkeypatch, tmp_path, jobs):
    """No internal error (a RecursionError from writing the spec out): each pod loads,
    its spec its own."""
    for name in ("a", "b"):
        (tmp_path / f"{name}.yaml").write_text(_chained(name, 2500))
    monkeypatch.setenv("HCPSCAN_JOBS", jobs)
    monkeypatch.setattr(loader, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(loader, "_BATCH_FILES", 1)
    result = load_paths([str(tmp_path)], ResourceNeeds(pruned=PRUNABLE))
    assert [o.name for o in result.objects] == ["a", "b"] and not result.diagnostics
    a, b = (o.body["spec"] for o in result.objects)
    assert a is not b
    port = a["containers"][0]["ports"][0]
    assert port["deep"] is port["chain"]["k2499"]
