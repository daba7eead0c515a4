"""Where a List entry's fields are written, read off its lines without composing them.

The locator finds a field's (line, column) by composing the entry's lines with
PyYAML (``core.yamldocs.compose_document``) and walking the nodes. Most entries
of a dump are plain block style: keys and dashes, one-line scalars, block
scalars. For those the structure is told by indentation alone, and this module
reads it from the lines the locator cut (the same lines it would compose),
building a small tree of positions: a mapping is a dict of key text (as
written, first occurrence) to ``(line, column, child)``, a sequence a list of
``(line, column, child)``, anything else ``None``.

It is exact or silent. An entry is read only if every one of its lines is of a
shape handled here and the lines together are well-formed YAML that PyYAML
composes to the same positions; anything else answers ``None`` ("do not
know") and the locator composes as before: characters outside printable
ASCII (tabs, line breaks other than ``\\n`` and ``\\r\\n``, non-ASCII), flow
collections other than ``[]``/``{}``, anchors, aliases, tags, ``?`` keys,
keys other than simple words or one-line quoted strings, a scalar's line at
or left of its key's column, a plain scalar holding ": " or going on after a
comment, block scalars with an indentation indicator or leading blank lines
deeper than their text, a dash directly after a dash, a scalar on the line
below its key, document markers and directives, nesting
deeper than ``_MAX_DEPTH``. ``tests/inventory/test_entry_lines.py`` holds it
to composition over every real file and generated and mutated texts.
"""

from __future__ import annotations

import re
from typing import Any

# A position tree node: dict (mapping), list (sequence), None (scalar or empty collection)
Tree = Any
# An empty sequence item's node is placed at the dash's end by PyYAML; not answered here
_EMPTY_ITEM = (None, None, None)

_MAX_DEPTH = 64
_MAX_KEY = 1000  # libyaml forgets a simple key 1,024 characters on

# Anything but printable ASCII and line ends ("\n", "\r\n") sends the entry to composition.
_UNHANDLED_CHARS = re.compile(r"[^\x20-\x7e\r\n]|\r(?!\n)")
_KEY = re.compile(r"""([A-Za-z0-9_./][A-Za-z0-9_./-]*|'(?:[^'\n]|'')*'|"[^"\\\n]*"):(?: +|$)""")
_TAIL = r"(?: +#.*)? *"  # what may follow a quoted scalar or a collection on its line
_SINGLE = re.compile(r"'(?:[^']|'')*'" + _TAIL)
_ESCAPE = r"""\\(?:[0abtnvfre "/\\N_LP]|x[0-9A-Fa-f]{2}|u(?![dD][89a-fA-F])[0-9A-Fa-f]{4})"""
_DOUBLE = re.compile(r'"(?:[^"\\]|' + _ESCAPE + r')*"' + _TAIL)
# a quoted scalar's first line, middle lines and last line when it runs over several
_SINGLE_OPEN = re.compile(r"'(?:[^']|'')*")
_SINGLE_MIDDLE = re.compile(r"(?:[^']|'')*")
_SINGLE_CLOSE = re.compile(r"(?:[^']|'')*'" + _TAIL)
_DOUBLE_OPEN = re.compile(r'"(?:[^"\\]|' + _ESCAPE + r')*\\?')
_DOUBLE_MIDDLE = re.compile(r'(?:[^"\\]|' + _ESCAPE + r')*\\?')
_DOUBLE_CLOSE = re.compile(r'(?:[^"\\]|' + _ESCAPE + r')*"' + _TAIL)
# A quoted scalar by its quote: written whole on one line; its first line, its middle
# lines and its last when it goes on over several.
_QUOTED = {"'": (_SINGLE, _SINGLE_OPEN, _SINGLE_MIDDLE, _SINGLE_CLOSE),
           '"': (_DOUBLE, _DOUBLE_OPEN, _DOUBLE_MIDDLE, _DOUBLE_CLOSE)}
_EMPTY_FLOW = re.compile(r"(?:\[\]|\{\})" + _TAIL)
_BLOCK_HEADER = re.compile(r"[|>][-+]?" + _TAIL)
_NOT_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@` ")


class _Unhandled(Exception):
    """The entry holds something this module does not read: compose it."""


def entry_tree(lines: list[str], first: int, end: int, indent: int) -> dict[str, Any] | None:
    """The position tree of the mapping written on ``lines[first:end]`` from column
    ``indent`` of its first line on (the text the locator composes), or None when the
    lines hold anything not handled here."""
    head = lines[first]
    if indent < 1 or len(head) <= indent or head[indent] == " ":
        return None  # (a column-0 entry could hold document markers: composed)
    if _UNHANDLED_CHARS.search(head, indent) or any(
            _UNHANDLED_CHARS.search(line) for line in lines[first + 1:end]):
        return None
    rows: list[tuple[int, str]] = [(indent, head[indent:].rstrip("\r\n"))]
    for line in lines[first + 1:end]:
        text = line.rstrip("\r\n")
        content = text.lstrip(" ")
        rows.append((len(text) - len(content), content))
    return _read(rows, first, indent)


def read_entry(lines: list[str], first: int, indent: int) -> dict[str, Any] | None:
    """``entry_tree`` of the entry cut as the locator cuts it (``locator.entry_end``:
    up to the first line with content indented less than ``indent``), cut and read in
    one pass over its lines."""
    head = lines[first]
    if indent < 1 or len(head) <= indent or head[indent] == " ":
        return None
    rows: list[tuple[int, str]] = [(indent, head[indent:].rstrip("\r\n"))]
    end, count = first + 1, len(lines)
    while end < count:
        text = lines[end].rstrip("\r\n")  # (a "\r" elsewhere than before "\n": refused below)
        content = text.lstrip(" ")
        column = len(text) - len(content)
        if column < indent and content and content[0] != "#":
            break
        rows.append((column, content))
        end += 1
    # (the line that ended the cut too: one whose spaces end in a tab is cut otherwise)
    if _UNHANDLED_CHARS.search("".join(lines[first:end + 1]), indent):
        return None
    return _read(rows, first, indent)


_DOCUMENT_START = re.compile(r"---" + _TAIL)


def read_document(text: str, first: int) -> tuple[dict[str, Any], int] | None:
    """The position tree of a document whose root is a block mapping, and the file line
    (0-based) of its first key; ``text`` is the document's own text (an explicit start
    marker first or not), ``first`` the file line it starts on. None: do not know."""
    if _UNHANDLED_CHARS.search(text):
        return None
    rows = []
    for line in text.split("\n"):
        line = line.rstrip("\r")  # (only before "\n": checked above)
        content = line.lstrip(" ")
        rows.append((len(line) - len(content), content))
    at = 0
    if rows[0][0] == 0 and rows[0][1].startswith("---"):
        if _DOCUMENT_START.fullmatch(rows[0][1]) is None:
            return None  # content on the marker's line
        at = 1
    while at < len(rows) and (not rows[at][1] or rows[at][1][0] == "#"):
        at += 1
    if at >= len(rows) or rows[at][0] != 0:
        return None
    if any(column == 0 and content.startswith(("---", "...", "%"))
           for column, content in rows[at:]):
        return None
    tree = _read(rows[at:], first + at, 0)
    return None if tree is None else (tree, first + at)


def _read(rows: list[tuple[int, str]], first: int, indent: int) -> dict[str, Any] | None:
    reader = _Reader(rows, first)
    try:
        tree, at = reader.mapping(0, indent, rows[0][1], 0)
    except (_Unhandled, RecursionError):
        return None
    return tree if at >= len(rows) else None  # (the locator cut where the mapping ends)


def locate(tree: dict[str, Any], first: int, indent: int,
           steps: tuple[Any, ...]) -> tuple[int, int] | None:
    """(line, column), 1-based, of the field or its nearest present parent, as
    ``core.yamldocs.locate_in`` answers on the composed entry; None: do not know."""
    line, column = first + 1, indent + 1
    node: Tree = tree
    for step in steps:
        if isinstance(step, int):
            if not isinstance(node, list) or not 0 <= step < len(node):
                break
        elif not isinstance(node, dict) or step not in node:
            break
        found = node[step]
        if found[0] is None:
            return None
        line, column, node = found[0] + 1, found[1] + 1, found[2]
    return line, column


def _key_text(written: str) -> str:
    if written[0] == "'":
        return written[1:-1].replace("''", "'")
    if written[0] == '"':
        return written[1:-1]
    return written


def _is_dash(content: str) -> bool:
    return content == "-" or content.startswith("- ")


class _Reader:
    """Reads rows (indentation, content after it) top down; ``first`` is the file line
    (0-based) of row 0. Each reader returns the row after what it read."""

    def __init__(self, rows: list[tuple[int, str]], first: int) -> None:
        self.rows = rows
        self.first = first

    def next_content(self, at: int) -> int:
        """The first row from ``at`` that is not blank or a comment."""
        rows = self.rows
        while at < len(rows):
            content = rows[at][1]
            if content and content[0] != "#":
                return at
            at += 1
        return at

    def mapping(self, at: int, indent: int, text: str, depth: int) -> tuple[dict[str, Any], int]:
        """A block mapping whose keys stand at column ``indent``; ``text`` is row ``at``
        from that column on (a compact mapping's first key follows a dash)."""
        if depth > _MAX_DEPTH:
            raise _Unhandled
        out: dict[str, Any] = {}
        rows = self.rows
        count = len(rows)
        first = self.first
        while True:
            found = _KEY.match(text)
            if found is None:
                raise _Unhandled
            written = found.group(1)
            if len(written) > _MAX_KEY:
                raise _Unhandled
            key = _key_text(written) if written[0] in "'\"" else written
            rest = text[found.end():]
            key_row = at
            if rest and rest[0] not in _NOT_PLAIN_START:  # (the most common: a plain scalar)
                cut = rest.find(" #")
                plain = (rest if cut < 0 else rest[:cut]).rstrip(" ")
                if ": " in plain or plain.endswith(":"):
                    raise _Unhandled
                at += 1
                if cut < 0 and at < count and (not rows[at][1] or rows[at][0] > indent):
                    at = self.plain_lines(at, indent)
                child = None
            else:
                child, _, _, at = self.value(at, rest, indent + found.end(), indent, depth, True)
            if key not in out:
                out[key] = (first + key_row, indent, child)
            if at < count:
                column, text = rows[at]
                if not text or text[0] == "#":
                    at = self.next_content(at)
                    if at >= count:
                        return out, at
                    column, text = rows[at]
            else:
                return out, at
            if column != indent:
                if column < indent:
                    return out, at
                raise _Unhandled

    def sequence(self, at: int, indent: int, indentless: bool,
                 depth: int) -> tuple[list[Any], int]:
        """A block sequence whose dashes stand at column ``indent`` from row ``at``;
        ``indentless``: a mapping's value at the mapping's own column."""
        if depth > _MAX_DEPTH:
            raise _Unhandled
        items: list[Any] = []
        rows = self.rows
        while True:
            content = rows[at][1]
            rest = content[1:].lstrip(" ")
            if _is_dash(rest):
                raise _Unhandled  # a dash right after a dash
            child, row, column, at = self.value(at, rest, indent + len(content) - len(rest),
                                                indent, depth, False)
            items.append(_EMPTY_ITEM if row is None else (self.first + row, column, child))
            at = self.next_content(at)
            if at >= len(rows) or rows[at][0] < indent:
                return items, at
            if rows[at][0] > indent:
                raise _Unhandled
            if not _is_dash(rows[at][1]):
                if indentless:
                    return items, at
                raise _Unhandled

    def value(self, at: int, rest: str, column: int, parent: int, depth: int,
              in_mapping: bool) -> tuple[Tree, int | None, int, int]:
        """The node after a key's colon or an item's dash: ``rest`` is the row's text
        from ``column`` on, ``parent`` the column of the key or the dash. Answers
        (tree, row and column where the node starts or None, the row after it)."""
        rows = self.rows
        if not rest or rest[0] == "#":
            below = self.next_content(at + 1)
            if below < len(rows):
                below_column, below_text = rows[below]
                tree: Tree
                if below_column > parent:
                    if _is_dash(below_text):
                        tree, after = self.sequence(below, below_column, False, depth + 1)
                    else:
                        tree, after = self.mapping(below, below_column, below_text, depth + 1)
                    return tree, below, below_column, after
                if in_mapping and below_column == parent and _is_dash(below_text):
                    tree, after = self.sequence(below, below_column, True, depth + 1)
                    return tree, below, below_column, after
            return None, None, 0, at + 1  # empty: a null
        lead = rest[0]
        if lead in "|>":
            if _BLOCK_HEADER.fullmatch(rest) is None:
                raise _Unhandled
            return None, at, column, self.block_text(at + 1, parent)
        quoted = _QUOTED.get(lead)
        if quoted is not None:
            whole, opening, middle, closing = quoted
            if whole.fullmatch(rest) is None:
                if opening.fullmatch(rest) is None:
                    raise _Unhandled
                return None, at, column, self.quoted_lines(at + 1, parent, middle, closing)
        elif lead in "[{":
            if _EMPTY_FLOW.fullmatch(rest) is None:
                raise _Unhandled
        elif not in_mapping and _KEY.match(rest):
            compact, after = self.mapping(at, column, rest, depth + 1)
            return compact, at, column, after
        else:
            if lead in _NOT_PLAIN_START and (lead not in "-?:" or len(rest) < 2 or rest[1] == " "):
                raise _Unhandled
            cut = rest.find(" #")
            text = (rest if cut < 0 else rest[:cut]).rstrip(" ")
            if ": " in text or text.endswith(":"):
                raise _Unhandled
            if cut < 0:
                return None, at, column, self.plain_lines(at + 1, parent)
        return None, at, column, at + 1

    def plain_lines(self, at: int, parent: int) -> int:
        """The row after a plain scalar that may go on from row ``at``: rows right of
        column ``parent`` (and blank ones) go on with it until a comment ends it."""
        rows = self.rows
        while at < len(rows):
            column, content = rows[at]
            if not content:
                at += 1
                continue
            if column <= parent or content[0] == "#":
                return at
            cut = content.find(" #")
            text = (content if cut < 0 else content[:cut]).rstrip(" ")
            if ": " in text or text.endswith(":"):
                raise _Unhandled  # (a key written over several lines, or an error)
            at += 1
            if cut >= 0:
                return at
        return at

    def quoted_lines(self, at: int, parent: int, middle: re.Pattern[str],
                     close: re.Pattern[str]) -> int:
        """The row after a quoted scalar opened on the row before ``at``: its lines
        stand right of column ``parent`` (or are blank) until one closes it."""
        rows = self.rows
        while at < len(rows):
            column, content = rows[at]
            if content:
                if column <= parent:
                    raise _Unhandled
                if close.fullmatch(content) is not None:
                    return at + 1
                if middle.fullmatch(content) is None:
                    raise _Unhandled
            at += 1
        raise _Unhandled  # not closed where the entry was cut

    def block_text(self, at: int, parent: int) -> int:
        """The row after a block scalar's text, which starts at row ``at`` (after its
        header) and must stand right of column ``parent``."""
        rows = self.rows
        deepest_blank = 0
        while at < len(rows) and not rows[at][1]:
            deepest_blank = max(deepest_blank, rows[at][0])
            at += 1
        if at >= len(rows):
            return at
        indent = rows[at][0]
        if indent <= parent or deepest_blank > indent:
            raise _Unhandled
        at += 1
        while at < len(rows) and (not rows[at][1] or rows[at][0] >= indent):
            at += 1
        return at
