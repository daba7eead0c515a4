"""Composing one List entry on its own finds the same lines as composing its document."""

from __future__ import annotations

from pathlib import Path

from hcpscan.core.yamldocs import compose_document, locate_in
from hcpscan.inventory.locator import Locator
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES


def _paths(body, prefix=(), depth=0):
    """Field paths of a body, three levels deep (keys and list indexes)."""
    if depth == 3:
        return
    items = body.items() if isinstance(body, dict) else enumerate(body) if isinstance(body, list) else ()
    for key, value in items:
        yield (*prefix, key)
        yield from _paths(value, (*prefix, key), depth + 1)


def test_list_entries_are_located_as_in_their_whole_document():
    objects = [o for o in load_paths([str(FIXTURES / "example")]).objects if o.source.item_index is not None]
    assert len(objects) > 50
    locator = Locator()
    checked = 0
    documents: dict[tuple[str, int], object] = {}  # the oracle composes each whole document once
    for obj in objects:
        key = (obj.source.file, obj.source.doc_index)
        if key not in documents:
            documents[key] = compose_document(Path(obj.source.file).read_bytes(), obj.source.doc_index)
        document = documents[key]
        assert document is not None, key
        for steps in [*_paths(obj.body), ("no", "such", "field")]:
            whole = locate_in(document, obj.source.item_index, steps)
            assert locator.field(obj.source, obj.body, steps) == whole[:2], (obj.ref, steps)
            checked += 1
    assert checked > 3000
    # and the entries were composed on their own, not through their documents
    assert all(locator._compose_item(o.source, o.body) is not None for o in objects)


def test_an_entry_not_cut_where_it_ends_falls_back_to_the_document(tmp_path):
    # the second entry's multi-line string goes back to column 0: cutting at the first
    # less-indented line would lose keys, so the whole document is composed instead
    path = tmp_path / "pods.yaml"
    path.write_text("kind: List\nitems:\n- kind: Pod\n  metadata: {name: a}\n"
                    "- kind: Pod\n  note: \"first\nsecond\"\n  metadata: {name: b}\n")
    (first, second) = load_paths([str(path)]).objects
    locator = Locator()
    assert locator.field(second.source, second.body, ("metadata", "name")) == (8, 14)
    assert locator.field(first.source, first.body, ("metadata", "name")) == (4, 14)


def test_fields_are_found_by_their_keys_as_written_whatever_type_they_would_resolve_to():
    """Locating composes without resolving scalars (every scalar a string): keys that
    YAML 1.1 reads as booleans, numbers or null are still found by what is written."""
    text = ("kind: ConfigMap\nmetadata: {name: x}\ndata:\n  on: 'a'\n  8080: b\n"
            "  null: c\n  ports:\n  - 1\n  - {yes: d}\n")
    node = compose_document(text, 0)
    assert node is not None
    assert [locate_in(node, None, steps)[:2] for steps in
            [("data", "on"), ("data", "8080"), ("data", "null"), ("data", "ports", 1, "yes")]] == \
        [(4, 3), (5, 3), (6, 3), (9, 6)]


def test_an_answer_asked_again_is_the_answer_composed_anew():
    """The locator keeps each (object, field) answer: asked again, after the entry's
    node left the few kept, it is what a fresh locator composes; an object with
    another body at the same place (a member name written twice in an archive) gets
    its own answer."""
    objects = [o for o in load_paths([str(FIXTURES / "example")]).objects
               if o.source.item_index is not None]
    asked = [(o, steps) for o in objects for steps in [*_paths(o.body)][:6]]
    kept = Locator()
    first = [kept.field(o.source, o.body, steps) for o, steps in asked]
    again = [kept.field(o.source, o.body, steps) for o, steps in reversed(asked)][::-1]
    assert again == first == [Locator().field(o.source, o.body, steps) for o, steps in asked]
    assert kept._answers and len(asked) > 100
    obj, steps = next((o, s) for o, s in asked if len(s) == 1)
    other = {"kind": obj.body.get("kind"), "no": "such"}  # the entry's keys are not its keys
    assert kept.field(obj.source, other, steps) == Locator().field(obj.source, other, steps)
