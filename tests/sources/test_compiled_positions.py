"""The compiled positions of a List's entries (``_rebuild.item_positions``) are
``fastyaml._item_positions`` for every ASCII text: the same lines and columns, or a
refusal (None, where the Python code raises ``_NotFast``) for the same documents, on
generated Lists of every entry shape, every real file, mutated real files and the
benchmark's generated dump; hostile callers get an error, never a crash."""

from __future__ import annotations

import random
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hcpscan.sources import fastyaml
from tests.conftest import require
from tests.sources.test_compiled_tokens import generated_dump
from tests.sources.test_fast_yaml import _real_texts

COMPILED = fastyaml._compiled


@pytest.fixture(autouse=True)
def _compiled_is_built() -> None:
    require(COMPILED is not None and hasattr(COMPILED, "item_positions"),
            "hcpscan.sources._rebuild (`pip install -e .` builds it with a C compiler)")


def _python(text: str, content: int, end: int, count: int, indent: int) -> Any:
    lines = fastyaml._Lines(text)
    lines.at(content)
    try:
        return fastyaml._item_positions(text, content, end, [None] * count, indent, lines)
    except fastyaml._NotFast:
        return None


def _compiled(text: str, content: int, end: int, count: int, indent: int) -> Any:
    lines = fastyaml._Lines(text)
    lines.at(content)
    return COMPILED.item_positions(text, content, end, count, indent, lines.offset, lines.line)


def _same(text: str, content: int, end: int, count: int, indent: int) -> Any:
    python = _python(text, content, end, count, indent)
    assert _compiled(text, content, end, count, indent) == python, (text, content, end, count, indent)
    return python


def _documents(text: str, compiled: bool) -> Any:
    saved = fastyaml._compiled
    fastyaml._compiled = COMPILED if compiled else None
    try:
        return [(d.doc_index, d.line, d.column, d.item_positions) for d in fastyaml._documents(text)]
    except fastyaml._NotFast:
        return None
    finally:
        fastyaml._compiled = saved


def _same_documents(text: str) -> Any:
    python = _documents(text, False)
    assert _documents(text, True) == python, text[:3000]
    return python


# Entry shapes: on the dash's line or below it, empty, commented, flow, quoted, with CRLF
# or tabs, more or less indented, a lone dash right before the sequence ends, lines
# between entries that end the sequence or not.
_ENTRIES = ["- kind: Pod\n{i}  metadata: {{name: a}}\n", "-   kind: Pod\n", "- # a comment\n{i}  kind: Pod\n",
            "-\n{i}  kind: Pod\n", "- kind: Pod # a comment\n", "- {{kind: Pod}}\n", "- 'x'\n", "- x\r\n",
            "-  \n{i}  kind: Pod\n", "- kind: Pod\n\n", "- kind: Pod\n{i}# between\n", "-\t1\n",
            "- - 1\n{i}  - 2\n", "- |\n{i}  text\n", "-   \n{i}    kind: Pod\n", "- a\n{i}   b\n", "#\n",
            "\n"]
_ODD_ENTRIES = ["-\n", "- \n", "-x: 1\n", "- a\n{i} - b\n", "- kind: Pod\n{i}\tx: 1\n", "- a\n{i}-b\n"]
_AROUND = ["apiVersion: v1\n", "metadata: {{}}\n", "# c\n", "x:\n{i}  items: 1\n", "other: [1]\n"]
_ODD_AROUND = ["'items': 2\n", "\"items\": 3\n", "  items: 4\n"]
_KEYS = ["items:\n", "items: # entries\n", "items: []\n", "items: [a]\n", "items:  \r\n", "items:\t\n",
         "items: - a\n", "items:\n{i}\n"]


def _list(rng: random.Random, indent: str) -> str:
    parts = ["kind: List\n"] if rng.random() < 0.95 else []  # else "items" may come first
    parts += [rng.choice(_ODD_AROUND if rng.random() < 0.05 else _AROUND) for _ in range(rng.randint(0, 2))]
    parts.append(rng.choice(_KEYS) if rng.random() < 0.15 else "items:\n")
    for _ in range(rng.randint(0, 5)):
        entry = rng.choice(_ODD_ENTRIES if rng.random() < 0.05 else _ENTRIES)
        parts.append(rng.choice([" ", "  "]) + entry if rng.random() < 0.02 else entry)
    parts.extend(rng.choice(_ODD_AROUND if rng.random() < 0.05 else _AROUND) for _ in range(rng.randint(0, 2)))
    if rng.random() < 0.02:
        parts.append("items:\n- again\n")
    return "".join(indent + part.format(i=indent) for part in parts)


def _stream(rng: random.Random) -> str:
    documents = [_list(rng, rng.choice(["", "", "", "  "])) for _ in range(rng.choice([1, 1, 2, 3]))]
    return rng.choice(["", "---\n"]) + "---\n".join(documents)


def test_generated_lists_have_the_same_positions():
    rng = random.Random(2027)
    outcomes = {"positions": 0, "refused": 0}
    for _ in range(6_000):
        text = _stream(rng)
        found = _same_documents(text)
        outcomes["refused" if found is None else "positions"] += 1
        # and called directly, where and with what the caller might ask
        end = len(text)
        content = rng.randrange(end + 1) if rng.random() < 0.2 else 0
        for count in range(0, 7):
            for indent in (0, 1, 2, 4):
                _same(text, content, end, count, indent)
    assert min(outcomes.values()) > 1_000, outcomes


@settings(max_examples=1_500, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_ENTRIES + _ODD_ENTRIES + _AROUND + _ODD_AROUND + _KEYS + ["-", " ", "\t", "\r\n", "items:", ":", "#"]),
                max_size=14).map(lambda parts: "".join(p.format(i=" ") for p in parts)),
       st.integers(0, 8), st.integers(0, 3), st.integers(0, 40), st.integers(0, 40))
def test_any_arrangement_and_any_bounds_have_the_same_positions(text, count, indent, content, cut):
    end = max(0, len(text) - cut)
    content = min(content, end)
    _same(text, content, end, count, indent)


def test_every_real_file_has_the_same_positions():
    compared = lists = 0
    for name, text in _real_texts():
        if not text.isascii():
            continue
        found = _documents(text, True)
        assert found == _documents(text, False), name
        compared += 1
        lists += bool(found and any(document[3] for document in found))
    assert compared > 1_000 and lists > 50


def test_mutated_real_lists_have_the_same_positions():
    rng = random.Random(72)
    texts = [text for _, text in _real_texts() if text.isascii() and "\nitems:" in text and len(text) < 300_000]
    assert len(texts) > 20
    pieces = ["\n- ", "\n-\n", "\n", "\n#", "\nx: 1\n", "\n  ", "\r\n", "\t", "\nitems:\n", " ", "-"]
    for _ in range(1_500):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text) + 1)
            if rng.random() < 0.6:
                text = text[:at] + rng.choice(pieces) + text[at:]
            else:
                text = text[:at] + text[at + rng.randint(1, 30):]
        _same_documents(text)


def test_the_benchmarks_generated_dump_has_the_same_positions(tmp_path):
    lists = 0
    for path in generated_dump(tmp_path, 5):
        found = _same_documents(path.read_text(encoding="utf-8"))
        lists += bool(found and any(document[3] for document in found))
    assert lists > 20


@pytest.mark.parametrize(("text", "count", "expected"), [
    ("items:\n- a\n- b\n", 2, None),  # items as the first key
    ("kind: List\nitems:\n- a\n-   b\n", 2, [(3, 3), (4, 5)]),
    ("kind: List\nitems: []\n", 0, []),
    ("kind: List\nitems: [a]\n", 1, None),
    ("kind: List\nitems: # c\n- a\n", 1, [(3, 3)]),
    ("kind: List\nitems:\n-\n  a: 1\n- b\n", 2, [(4, 3), (5, 3)]),
    ("kind: List\nitems:\n- a\n-\nz: 1\n", 2, None),  # a lone dash right before the end is not an entry
    ("kind: List\nitems:\n- a\n-\nz: 1\n", 1, [(3, 3)]),
    ("kind: List\nitems:\n- a\n- b\nitems:\n- c\n", 2, None),  # given twice
    ("kind: List\nitems:\n  - a\n  - b\nz: 1\n", 2, [(3, 5), (4, 5)]),
    ("kind: List\nitems:\n- a\r\n- b\r\n", 2, [(3, 3), (4, 3)]),
    ("kind: List\nitems:\n- a\n-x: 1\n- b\n", 1, [(3, 3)]),  # "-x" ends the sequence
])
def test_each_shape_is_placed_as_its_definition_places_it(text, count, expected):
    assert _same(text, 0, len(text), count, 0) == expected


class _Text(str):
    pass


def test_wrong_arguments_are_errors_not_crashes():
    text = "kind: List\nitems:\n- a\n"
    n = len(text)
    for args, error in [
        ((b"x", 0, 1, 1, 0, 0, 1), TypeError), ((text, "0", n, 1, 0, 0, 1), TypeError),
        ((text, 0, n, 1.0, 0, 0, 1), TypeError), ((text,), TypeError),
        (("é" + text, 0, n, 1, 0, 0, 1), ValueError),
        ((text, 0, n + 1, 1, 0, 0, 1), ValueError), ((text, 5, 4, 1, 0, 0, 1), ValueError),
        ((text, -1, n, 1, 0, 0, 1), ValueError), ((text, 0, n, -1, 0, 0, 1), ValueError),
        ((text, 0, n, 1, -1, 0, 1), ValueError), ((text, 3, n, 1, 0, 4, 1), ValueError),
        ((text, 0, n, 1, 0, 0, 0), ValueError), ((text, 0, n, 1, 0, 0, sys.maxsize), ValueError),
        ((text, 0, n, 2**80, 0, 0, 1), ValueError), ((text, 0, n, 1, 0, -(2**80), 1), ValueError),
    ]:
        with pytest.raises(error):
            COMPILED.item_positions(*args)
    for count, indent in ((n + 1, 0), (sys.maxsize, 0), (1, n + 1), (1, sys.maxsize)):  # refused, as Python does
        assert COMPILED.item_positions(text, 0, n, count, indent, 0, 1) is None
        assert _python(text, 0, n, min(count, n + 1), min(indent, n + 1)) is None
    assert COMPILED.item_positions(_Text(text), 0, n, 1, 0, 0, 1) == [(3, 3)]
    assert COMPILED.item_positions(text, 0, n, 1, 0, 0, 1000) == [(1002, 3)]  # lines counted on from the known one


def test_a_non_ascii_text_is_placed_by_the_python_code():
    text = "kind: List\nitems:\n- é\n- b\n"
    assert _documents(text, True) == _documents(text, False) == [(0, 1, 1, [(3, 3), (4, 3)])]


# -- document markers (``_rebuild.document_markers`` is ``fastyaml._document_markers``)

_MARKER_PIECES = ["---", "--", "-", "\n", "\r\n", " ", "\t", "\r", "x", "a: 1", "...", "\n---", "--- |", "#"]


@settings(max_examples=2_000, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_MARKER_PIECES), max_size=24).map("".join))
def test_document_markers_are_found_as_their_definition_finds_them(text):
    assert COMPILED.document_markers(text) == fastyaml._document_markers(text), text


def test_every_real_file_has_the_same_document_markers():
    compared = marked = 0
    for name, text in _real_texts():
        if text.isascii():
            found = COMPILED.document_markers(text)
            assert found == fastyaml._document_markers(text), name
            compared += 1
            marked += len(found) > 1
    assert compared > 1_000 and marked > 50


@pytest.mark.parametrize(("text", "expected"), [
    ("", []), ("---", [0]), ("---\n", [0]), ("--- a\n---\tb\n---\r\n---x\n----\n", [0, 6, 12]),
    ("\n---", [1]), ("a\n---\n---\n", [2, 6]), ("a: |\n  ---\n", []), ("x---\n", []),
])
def test_each_marker_shape(text, expected):
    assert COMPILED.document_markers(text) == fastyaml._document_markers(text) == expected


def test_document_markers_take_ascii_strs_only():
    for wrong in (b"---\n", None, 3):
        with pytest.raises(TypeError):
            COMPILED.document_markers(wrong)
    with pytest.raises(TypeError):
        COMPILED.document_markers()
    with pytest.raises(ValueError):
        COMPILED.document_markers("---\né\n")
    assert _documents("---\na: é\n---\nb: 1\n", True) == _documents("---\na: é\n---\nb: 1\n", False)
