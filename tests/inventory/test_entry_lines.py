"""The line finder (``inventory.entrylines``) answers what composing the entry answers,
or "do not know": over every List entry of every real file, every field of every loaded
object, and generated and mutated entries of every shape it reads and many it does not."""

from __future__ import annotations

import random
import re
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hcpscan.core.yamldocs import compose_document, locate_in
from hcpscan.inventory import entrylines
from hcpscan.inventory.locator import Locator, _documents_of, _lines, entry_end
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES, SHARED
from tests.sources.test_compiled_tokens import generated_dump
from tests.sources.test_fast_yaml import _real_texts

_DASH = re.compile(r"^( *)- +(?=[^\s#-])", re.M)


def _node_paths(node: yaml.Node, prefix: tuple = ()) -> Any:
    """Every field path of a composed node, and one missing step below each."""
    yield (*prefix, "no such key")
    yield (*prefix, 10**6)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                yield (*prefix, key.value)
                yield from _node_paths(value, (*prefix, key.value))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield (*prefix, index)
            yield from _node_paths(item, (*prefix, index))


def check_entry(lines: list[str], first: int, indent: int) -> bool:
    """The finder's tree of the entry at (first, indent) answers as its composition for
    every path; True if it read the entry (False: it did not know)."""
    end = entry_end(lines, first, indent)
    tree = entrylines.entry_tree(lines, first, end, indent)
    read = entrylines.read_entry(lines, first, indent)  # (cut in the same pass)
    assert read == tree or read is None and entrylines._UNHANDLED_CHARS.search(lines[end])
    if tree is None:
        return False
    snippet = " " * indent + lines[first][indent:] + "".join(lines[first + 1:end])
    node = compose_document(snippet, 0)
    assert isinstance(node, yaml.MappingNode), snippet
    assert set(tree) == {k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)}, snippet
    assert entrylines.locate(tree, first, indent, ()) == (first + 1, indent + 1)
    for steps in _node_paths(node):
        found = entrylines.locate(tree, first, indent, steps)
        if found is not None:
            line, column, _ = locate_in(node, None, steps)
            assert found == (line + first, column), (snippet, steps)
    return True


def _entries(text: str) -> tuple[list[str], list[tuple[int, int]]] | None:
    """The text's lines and every (line, column) where a dash's content starts."""
    lines = _lines(text.encode("utf-8"))
    if lines is None:
        return None
    starts = {}
    offset = 0
    line_of = {}
    for number, line in enumerate(lines):
        line_of[offset] = number
        offset += len(line)
    for found in _DASH.finditer(text):
        number = line_of.get(found.start())
        if number is not None:
            starts[(number, found.end() - found.start())] = True
    return lines, list(starts)


def test_every_entry_of_every_real_file_is_read_as_composed():
    texts = list(_real_texts())
    assert len(texts) > 1000
    read = unknown = 0
    for _, text in texts:
        found = _entries(text)
        if found is None:
            continue
        lines, starts = found
        for first, indent in starts:
            if check_entry(lines, first, indent):
                read += 1
            else:
                unknown += 1
    assert read > 5000 and read > 4 * unknown, (read, unknown)


def check_document(text: str, first: int) -> bool:
    """The finder's tree of a document answers as the document's composition for every
    path; True if it read the document."""
    read = entrylines.read_document(text, first)
    if read is None:
        return False
    tree, top = read
    node = compose_document(text, 0)
    assert isinstance(node, yaml.MappingNode), text
    assert (node.start_mark.line + first, node.start_mark.column) == (top, 0)
    assert set(tree) == {k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
    for steps in _node_paths(node):
        found = entrylines.locate(tree, top, 0, steps)
        if found is not None:
            line, column, _ = locate_in(node, None, steps)
            assert found == (line + first, column), (text, steps)
    return True


def test_every_document_of_every_real_file_is_read_as_composed():
    read = unknown = 0
    for _, text in _real_texts():
        spans = _documents_of(text)
        for first, document in spans or ():
            if check_document(document, first):
                read += 1
            else:
                unknown += 1
    assert read > 1000 and read > unknown, (read, unknown)


def test_the_benchmarks_generated_dump_is_read_as_composed(tmp_path):
    read = 0
    for path in generated_dump(tmp_path, 5):
        lines, starts = _entries(path.read_text(encoding="utf-8"))
        read += sum(check_entry(lines, first, indent) for first, indent in starts)
    assert read > 500


class _Composing(Locator):
    """The locator as it was: every entry composed."""

    def _read_item(self, source: Any, body: Any) -> Any:
        return self._compose_item(source, body)

    def _read_document(self, source: Any) -> Any:
        return self._compose_document(source)


class _Counting(Locator):
    """The locator, counting the entries read off their lines."""

    trees = documents = 0

    def _read_item(self, source: Any, body: Any) -> Any:
        found = super()._read_item(source, body)
        self.trees += found is not None and isinstance(found[0], dict)
        return found

    def _read_document(self, source: Any) -> Any:
        found = super()._read_document(source)
        self.documents += found is not None and isinstance(found[0], dict)
        return found


def _body_paths(body: Any, prefix: tuple = ()) -> Any:
    items = body.items() if isinstance(body, dict) else enumerate(body) if isinstance(body, list) else ()
    for key, value in items:
        yield (*prefix, key)
        yield from _body_paths(value, (*prefix, key))
    yield (*prefix, "no such key")


def test_every_field_of_every_loaded_object_is_found_where_composition_finds_it():
    roots = [FIXTURES / "example", SHARED / "realworld"]
    objects = load_paths([str(root) for root in roots]).objects
    assert len(objects) > 100
    reading, composing = _Counting(), _Composing()
    asked = 0
    for obj in objects:
        for steps in _body_paths(obj.body):
            assert reading.field(obj.source, obj.body, steps) == \
                composing.field(obj.source, obj.body, steps), (obj.ref, steps)
            asked += 1
    assert asked > 10_000
    assert reading.trees > 100 and reading.documents > 100, (reading.trees, reading.documents)


# -- generated entries ----------------------------------------------------------------

_KEYS = ["name", "app.kubernetes.io/name", "ca-bundle.crt", ".dot", "on", "8080", "a-b_c",
         "'quoted'", "'it''s'", '"double"', '"with: colon"', "dup", "dup", "a b", "? q",
         "&a anchored", "!t tagged", "k" * 1100, "-dash", "x:y", "'open"]
_SCALARS = ["v", "-1", "http://x:8080/y", "a #not", "a # comment", "~", "''", "'it''s'",
            '"esc \\" \\n \\u00e9"', '"bad \\q"', '"sur \\ud800"', "[]", "{}", "[a]", "{a: 1}",
            "*alias", "&a v", "!tag v", "a: b", "a:", "%x", "@x", "`x", "-", "?", ":x", "?x",
            "a,b]", "x\ty", "\u00e9", "'unterminated", '"unterminated', "| ", "|-", ">+", "|2",
            "> # c", "#c", "", "  "]
_CONTINUATIONS = ["more text", "'", "closing'", 'closing"', "end\\", "a: b", "# hash",
                  "x #c", "", "- dash", "''", "\\", "---"]


@st.composite
def _entry(draw: Any) -> tuple[str, int]:
    """An entry's text from column ``indent`` on, of mostly plain block shapes."""
    indent = draw(st.sampled_from([1, 2, 4]))
    out: list[str] = []

    def scalar_lines(column: int) -> None:
        for _ in range(draw(st.integers(0, 2))):
            shift = draw(st.sampled_from([-1, 0, 1, 2, 4]))
            out.append(" " * max(0, column + shift) + draw(st.sampled_from(_CONTINUATIONS)) + "\n")

    def node(column: int, depth: int, head: str) -> None:
        """A mapping at ``column``; its first key written after ``head`` (on that line)."""
        for number in range(draw(st.integers(1, 4))):
            prefix = head if number == 0 else " " * column
            key = draw(st.sampled_from(_KEYS))
            shape = draw(st.integers(0, 9 if depth < 3 else 3))
            if shape <= 3:
                out.append(f"{prefix}{key}: {draw(st.sampled_from(_SCALARS))}\n")
                scalar_lines(column + 2)
            elif shape <= 5:
                out.append(f"{prefix}{key}:\n")
                inner = column + draw(st.sampled_from([1, 2, 3]))
                node(inner, depth + 1, " " * inner)
            else:
                out.append(f"{prefix}{key}:{draw(st.sampled_from(['', ' # c', '  ']))}\n")
                dash = column + draw(st.sampled_from([0, 0, 2, 1]))
                for _ in range(draw(st.integers(1, 3))):
                    item = draw(st.integers(0, 4))
                    if item == 0:
                        out.append(" " * dash + f"- {draw(st.sampled_from(_SCALARS))}\n")
                        scalar_lines(dash + 2)
                    elif item == 1:
                        node(dash + 2, depth + 1, " " * dash + "- ")
                    elif item == 2:
                        out.append(" " * dash + "-\n")
                        node(dash + 2, depth + 1, " " * (dash + 2))
                    elif item == 3:
                        out.append(" " * dash + draw(st.sampled_from(["-", "- ", "- # c"])) + "\n")
                    else:
                        out.append(" " * dash + "- - x\n")
            if draw(st.integers(0, 5)) == 0:
                out.append(" " * draw(st.integers(0, column + 3)) + draw(st.sampled_from(["# c", ""])) + "\n")

    node(indent, 0, " " * indent)
    return "".join(out), indent


def _check_text(text: str, indent: int) -> bool:
    lines = _lines(text.encode("utf-8"))
    if lines is None or not lines:
        return False
    # the same text as a document of its own (moved to column 0), and after a marker
    dedented = "".join(line[indent:] if line[:indent].isspace() else line for line in lines)
    check_document(dedented, 0)
    check_document("---\n" + dedented, 3)
    crlf = _lines(text.replace("\n", "\r\n").encode("utf-8"))  # the same with CRLF line ends
    if crlf is not None:
        check_entry(crlf, 0, indent)
        check_document(dedented.replace("\n", "\r\n"), 0)
    return check_entry(lines, 0, indent)


@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(_entry(), st.randoms(use_true_random=False))
def test_generated_entries_are_read_as_composed(entry: tuple[str, int], rnd: random.Random):
    text, indent = entry
    _check_text(text, indent)
    # and mutated: a character dropped, doubled or replaced
    for _ in range(3):
        if not text:
            break
        at = rnd.randrange(len(text))
        change = rnd.choice([" ", "-", ":", "#", "'", '"', "\n", "|", "a", "\t", ""])
        mutated = text[:at] + change + text[at + rnd.choice([0, 1]):]
        if mutated.strip():
            _check_text(mutated, indent)


def test_generated_entries_are_mostly_read():
    """The generator reaches the shapes the finder reads, not only its refusals."""
    rnd = random.Random(7)
    read = 0
    for seed in range(300):
        rnd.seed(seed)
        indent = rnd.choice([2, 4])
        lines = [" " * indent + "kind: Pod\n", " " * indent + "spec:\n"]
        for number in range(rnd.randrange(1, 6)):
            lines.append(" " * (indent + 2) + f"k{number}: {rnd.choice(['v', 'a b', '[]', chr(39) + 'q' + chr(39)])}\n")
        read += _check_text("".join(lines), indent)
    assert read == 300


# (entry text from column 2, read off its lines?) — each also checked against composition
_WRITTEN = [
    ("  kind: Pod\n  spec:\n    containers:\n    - name: a\n      env:\n      - name: X\n"
     "        value: '1'\n", True),
    ("  data:\n    ca.crt: '-----BEGIN\n\n      abc\n\n      -----END'\n  kind: ConfigMap\n", True),
    ("  msg: \"a \\\"b\\\"\n    c\\\n    d\"\n  kind: Event\n", True),
    ("  msg: a long\n    message: no\n  kind: Event\n", False),     # a key over two lines: error
    ("  msg: a long\n    message folded\n\n    here\n  kind: Event\n", True),
    ("  msg: a # c\n    more\n", False),                               # a comment ended it: error
    ("  s: |\n        \n    text\n  b: 1\n", False),                   # deeper blank first: error
    ("  s: |-\n    text\n\n    # not a comment\n  b: >\n    x\n", True),
    ("  l:\n  - a\n  -\n    b: 1\n  - c: 2\n    d: 3\n  e: []\n", True),
    ("  l:\n    - - a\n", False),
    ("  a: &x 1\n  b: *x\n", False),
    ("  ? a\n  : 1\n", False),
    ("  a: {b: 1}\n", False),
    ("  'a''b': 1\n  \"c\": 2\n", True),
    ("  a:\n    b\n", False),
    ("  a:\tb\n", False),
    ("  a: b\r\n  c:\r\n  - d\r\n", True),
    ("  a: b\r  c: d\n", False),
]


def test_written_entries_are_read_or_refused_as_expected():
    for text, read in _WRITTEN:
        assert _check_text(text, 2) is read, text
    empty_item = _lines(b"  l:\n  - a\n  -\n  - c\n")
    assert empty_item is not None
    tree = entrylines.entry_tree(empty_item, 0, 4, 2)
    assert tree is not None and _check_text("".join(empty_item), 2)
    assert entrylines.locate(tree, 0, 2, ("l", 2)) == (4, 5)
    assert entrylines.locate(tree, 0, 2, ("l", 1)) is None  # an empty item: composed instead


def test_every_escape_of_a_double_quoted_value_is_read_as_composed():
    """Each printable character after a backslash (PyYAML refuses ``\\'``), and hex escapes
    around the surrogates, on one line and over two."""
    escapes = [chr(c) for c in range(0x20, 0x7f)]
    escapes += ["x4", "x41", "u00e9", "ud7ff", "ud800", "udfff", "ue000", "U0001F600", "U00110000"]
    read = 0
    for escape in escapes:
        for text in (f'  a: "x\\{escape}y"\n  b: 1\n', f'  a: "x\\{escape}\n    y"\n  b: 1\n'):
            read += _check_text(text, 2)
    assert read > 30
