"""The fast parser builds Pods and their controllers already pruned (inventory/kept.py),
and what it builds is exactly what pruning the whole rebuild gives: the same files go to
PyYAML (a collection as a key, nesting past MAX_DEPTH, even in a field left out), the same
bodies, the same lines."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hcpscan.inventory.kept import PRUNABLE, kept
from hcpscan.sources import fastyaml
from hcpscan.sources.documents import _keep_of, parse_entry
from hcpscan.sources.fastyaml import fast_documents
from hcpscan.sources.interface import Entry
from tests.conftest import FIXTURES, REALWORLD, requirement
from tests.sources.test_fast_yaml import _generated

_yaml_rs = requirement(lambda: fastyaml.AVAILABLE, "yaml-rs (a dependency)")
KEEP_OF = _keep_of(PRUNABLE)


def _pruned_whole(text: str):
    """The whole rebuild, then pruning as inventory/kept.py prunes each object."""
    docs = fast_documents(text)
    if docs is None:
        return None
    out = []
    for doc in docs:
        body = doc.body
        if isinstance(body, dict) and KEEP_OF(body) is not None:
            body = kept(body["kind"], body)
        elif isinstance(body, dict) and isinstance(body.get("kind"), str) \
                and body["kind"].endswith("List") and isinstance(body.get("items"), list):
            body = {**body, "items": [kept(i["kind"], i) if isinstance(i, dict) and KEEP_OF(i) else i
                                      for i in body["items"]]}
        out.append((repr(body), doc.line, doc.column, doc.item_positions))
    return out


def _pruned_fast(text: str, built: set[int] | None = None):
    built = set() if built is None else built
    docs = fast_documents(text, KEEP_OF, built)
    if docs is None:
        return None
    return [(repr(d.body), d.line, d.column, d.item_positions) for d in docs]


def test_every_real_file_builds_what_pruning_the_whole_gives():
    taken = 0
    for root in (REALWORLD, FIXTURES):
        for path in sorted(root.rglob("*.y*ml")):
            text = path.read_text(encoding="utf-8-sig")
            built: set[int] = set()
            assert _pruned_fast(text, built) == _pruned_whole(text), path
            taken += len(built)
    assert taken > 100  # pods and workloads of the real estates were built pruned


POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"


def test_a_field_left_out_is_not_built():
    built: set[int] = set()
    (doc,) = fast_documents(POD + "  affinity: {podAntiAffinity: {}}\nstatus: {phase: Running}\n",
                            KEEP_OF, built)
    assert doc.body == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                        "spec": {"containers": [{"name": "c"}]}, "status": {}}
    assert built == {id(doc.body)}


@pytest.mark.parametrize("hidden", [
    "  affinity: {{a}}\n",  # a mapping as a key, inside a field pruning leaves out
    "  affinity: " + "[" * 198 + "]" * 198 + "\n",  # nested past MAX_DEPTH there
])
def test_what_the_whole_rebuild_refuses_is_refused_in_a_field_left_out(hidden):
    assert fast_documents(POD + hidden) is None
    assert fast_documents(POD + hidden, KEEP_OF, set()) is None


def test_just_under_the_depth_bound_a_field_left_out_is_dropped():
    text = POD + "  affinity: " + "[" * 197 + "]" * 197 + "\n"
    (doc,) = fast_documents(text, KEEP_OF, set())
    assert "affinity" not in doc.body["spec"]


def test_list_entries_are_pruned_and_keep_their_lines():
    text = ("apiVersion: v1\nkind: List\nitems:\n"
            "- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n  spec: {nodeName: n1}\n"
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n  data: {x: '1'}\n")
    built: set[int] = set()
    (doc,) = fast_documents(text, KEEP_OF, built)
    pod, config = doc.body["items"]
    assert pod["spec"] == {} and config["data"] == {"x": "1"}
    assert built == {id(pod)}
    assert doc.item_positions == [(4, 3), (8, 3)]


def test_parse_entry_prunes_objects_the_slow_path_read():
    # an anchor sends the file to PyYAML: its Pod is pruned after reading, as before
    text = POD + "  nodeName: &n n1\n  hostname: *n\n"
    entry = Entry("p.yaml", ("p.yaml",), lambda: text.encode(), len(text), "p.yaml")
    (obj,) = parse_entry(entry, "management", text.encode(), pruned=PRUNABLE).objects
    assert obj.body["spec"] == {"containers": [{"name": "c"}]}


def test_generated_pods_build_what_pruning_the_whole_gives():
    rng = random.Random(20261126)
    taken = 0
    for _ in range(1500):
        spec = "\n".join("  " + line for line in _generated(rng).split("\n"))
        text = f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n{spec}\n"
        assert _pruned_fast(text) == _pruned_whole(text), text
        taken += _pruned_fast(text) is not None
    assert taken > 100


def test_typed_list_entries_without_kind_are_pruned_once_they_have_one():
    # a PodList's items may omit kind: the parser cannot tell them Pods, parse_entry can
    text = ("apiVersion: v1\nkind: PodList\nitems:\n"
            "- metadata: {name: a}\n  spec: {nodeName: n1, containers: [{name: c}]}\n")
    entry = Entry("p.yaml", ("p.yaml",), lambda: text.encode(), len(text), "p.yaml")
    (obj,) = parse_entry(entry, "management", text.encode(), pruned=PRUNABLE).objects
    assert obj.kind == "Pod" and obj.body["spec"] == {"containers": [{"name": "c"}]}
    assert fast_documents(text, KEEP_OF, set()) is not None  # read by the fast path


# Every form in which yaml-rs reads a flow collection as a key (checked against it): the
# colon right after the bracket, after blanks, a comment or a line break, inside a flow
# mapping or as a single pair of a flow sequence, and an explicit "?" key.
_COLLECTION_KEYS = ["{[a]:b}", "{[a] :b}", "{[a]\t: b}", "{[a]\n      : b}", "{[a] # c\n      : b}",
                    "[[a]: b]", "[ [a] :b ]", "{{a: 1}:b}", "{? [a] : b}", "[? [a] : b]"]
# Where a Pod's pruning leaves a field out (inventory/kept.py): under spec, metadata, status.
_LEFT_OUT = [("spec", "affinity"), ("metadata", "managedFields"), ("status", "conditions")]


def _pod_with(place: tuple[str, str], value: str, block: int) -> str:
    """A Pod whose field ``place`` holds ``value`` under ``block`` levels of block mappings."""
    section, field = place
    lines = ["apiVersion: v1", "kind: Pod", "metadata:", "  name: p"]
    body = f"  {field}:" + "".join(f"\n{' ' * (4 + level)}l{level}:" for level in range(block))
    body += " " + value
    if section == "metadata":
        lines.append(body)
        lines += ["spec:", "  containers: [{name: c}]"]
    else:
        lines += ["spec:", "  containers: [{name: c}]"]
        lines += ([body] if section == "spec" else ["status:", body])
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(place=st.sampled_from(_LEFT_OUT), key=st.sampled_from(_COLLECTION_KEYS),
       block=st.integers(0, 6), wrap=st.integers(0, 3))
def test_a_collection_key_in_a_field_left_out_goes_to_pyyaml(place, key, block, wrap):
    value = "[" * wrap + key + "]" * wrap
    text = _pod_with(place, value, block)
    assert fast_documents(text) is None, text  # the whole rebuild refuses it
    assert _pruned_fast(text) is None, text  # and so does building it pruned


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(place=st.sampled_from(_LEFT_OUT), block=st.integers(0, 40), flow=st.integers(120, 200),
       mapping=st.booleans())
def test_nesting_around_the_bound_in_a_field_left_out_is_judged_as_the_whole_rebuild(
        place, block, flow, mapping):
    # block mappings and flow brackets together around MAX_DEPTH: the pruned build takes
    # exactly the files the whole rebuild takes, and builds what pruning it gives
    opener, closer = ("{a: ", "}") if mapping else ("[", "]")
    text = _pod_with(place, opener * flow + "x" + closer * flow, block)
    assert _pruned_fast(text) == _pruned_whole(text), text
