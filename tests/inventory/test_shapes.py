"""The shape check looks up only the fields it describes, and still names the same first
misfit as a walk of every field in the object's own order (the walk is the oracle)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from hcpscan.inventory import shapes
from hcpscan.inventory.shapes import ANY_KEY, SCALAR, SHAPES, first_misfit
from tests.conftest import FIXTURES, REALWORLD

WRONG = ("text", [1, 2], {"a": 1})


def _objects() -> list[dict[str, Any]]:
    found = []
    for root in (REALWORLD, FIXTURES / "example", FIXTURES / "rules", FIXTURES / "reachability"):
        for path in sorted(root.rglob("*.yaml"))[:400]:
            try:
                docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
            except (yaml.YAMLError, UnicodeDecodeError):
                continue
            for doc in docs:
                items = doc.get("items") if isinstance(doc, dict) and doc.get("kind", "").endswith("List") else None
                for obj in items if isinstance(items, list) else [doc]:
                    if isinstance(obj, dict) and isinstance(obj.get("kind"), str):
                        found.append(obj)
    return found


OBJECTS = _objects()


def _paths(value: Any, shape: Any, path: tuple) -> Iterator[tuple]:
    """Every field of ``value`` the shape describes (the places a misfit can be)."""
    if value is None or shape is SCALAR or shape is dict or shape is list:
        return
    if type(shape) is dict and type(value) is dict:
        every = shape.get(ANY_KEY)
        for key, item in value.items():
            sub = shape.get(key, every) if isinstance(key, str) else every
            if sub is not None:
                yield (*path, key)
                yield from _paths(item, sub, (*path, key))
    elif type(shape) is list and type(value) is list:
        for index, item in enumerate(value[:3]):
            yield (*path, index)
            yield from _paths(item, shape[0], (*path, index))


def _replaced(obj: dict[str, Any], path: tuple, new: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    here = out
    for step in path[:-1]:
        here = here[step]
    here[path[-1]] = new
    return out


def _walk(obj: dict[str, Any]):
    return shapes._misfit(obj, SHAPES.get(obj["kind"], shapes.ANY_KIND), ())


def test_the_inputs_hold_objects_of_the_described_kinds():
    kinds = {o["kind"] for o in OBJECTS}
    assert len(OBJECTS) > 200 and {"Deployment", "Pod", "NetworkPolicy", "HostedCluster"} <= kinds


def test_real_objects_fit_and_both_ways_agree():
    for obj in OBJECTS:
        assert first_misfit(obj["kind"], obj) == _walk(obj)


@pytest.mark.parametrize("wrong", WRONG, ids=("scalar", "list", "mapping"))
def test_a_field_of_the_wrong_type_is_named_as_the_full_walk_names_it(wrong):
    checked = misfits = 0
    for obj in OBJECTS[:150]:
        for path in list(_paths(obj, SHAPES.get(obj["kind"], shapes.ANY_KIND), ()))[:25]:
            changed = _replaced(obj, path, wrong)
            expected = _walk(changed)
            assert first_misfit(changed["kind"], changed) == expected, (obj["kind"], path)
            checked += 1
            misfits += expected is not None
    assert checked > 500 and misfits > 100


def test_two_misfits_name_the_first_in_the_object_order():
    """The fast check finds some misfit; the one reported is the object's first."""
    body = {"kind": "Service", "spec": {"ports": "80", "selector": ["x"]}}
    assert first_misfit("Service", body) == (("spec", "ports"), "a string or number", "a list")
    body = {"kind": "Service", "spec": {"selector": ["x"], "ports": "80"}}
    assert first_misfit("Service", body) == (("spec", "selector"), "a list", "a mapping")


def test_a_pod_spec_shared_by_many_objects_is_judged_for_each():
    # replicas, their ReplicaSet and Deployment hold one spec object (inventory/kept.py);
    # while remembering, a fitting one is checked once, a misfitting one fails each holder
    good = {"containers": [{"name": "web", "image": "web:1"}]}
    bad = {"containers": {"name": "web"}}
    pods = [{"metadata": {"name": f"p{i}"}, "spec": spec} for i, spec in enumerate([good, bad, good, bad])]
    with shapes.remembering():
        found = [first_misfit("Pod", pod) for pod in pods]
        assert shapes._fitted == {id(good): good}
    assert shapes._fitted is None
    assert found[0] is None and found[2] is None
    assert found[1] == found[3] == (("spec", "containers"), "a mapping", "a list")
