"""YAML/JSON documents with their positions, parsed by libyaml's C loader when present.

Loading keeps only the positions it needs — the document start and, for
``List`` objects, each item's start. A field's own line is found later by
composing the one document again (``locate``): findings are few, documents
are many.

Most documents are plain data (what API servers and must-gather write): no
tags, anchors or merge keys. Those are built straight from the parser's
events, with each plain scalar resolved once per stream, which is about twice
as fast as composing a node tree and constructing it; anything else, and any
error, goes through the composing loader, so results and messages are the same.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

try:  # libyaml's C parser; the pure-Python one is a fallback, not a requirement
    from yaml import CSafeLoader as _BaseLoader

    LIBYAML = True
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

    LIBYAML = False

# The pure-Python loader (no nesting limit of its own) for the depth walk's second look.
_PureLoader = yaml.SafeLoader

# One step of a field path: a mapping key or a list index (as hcpscan.inventory.fieldpath).
Step = str | int


# Input beyond these is a diagnostic, never parsed: libyaml's composer recurses in C
# (30,000 levels kill the process), and Python prints no integer longer than its
# int-string limit (an error in whatever report shows it).
MAX_DEPTH = 200  # nesting levels; no Kubernetes object comes near
# Nodes (mappings, sequences, scalars) one file may make. The largest files of real
# must-gathers and of bench/'s 500-cluster dump make under 50,000; a file at this
# bound takes about 1 GB however its bytes are spent (see bench/RESULTS.md).
MAX_NODES = 5_000_000
MAX_DIGITS = sys.get_int_max_str_digits() or 4300
_MAX_INT_BITS = int(MAX_DIGITS * math.log2(10))
_LONG_NUMBER = re.compile(r"[-+]?(?:0[xob])?[0-9a-fA-F_:]{1000,}")


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loader that keeps timestamps as the strings Kubernetes sends, notes
    duplicate mapping keys (PyYAML keeps the last value silently; kubectl refuses) and
    refuses integers beyond the int-string limit (``0x`` ones are not checked by Python)."""

    def __init__(self, stream: str | bytes) -> None:
        super().__init__(stream)
        self.duplicates: list[DuplicateKey] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            _note_duplicates(self, node)
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class DuplicateKey:
    """A key given twice in one mapping: where each was written (1-based lines)."""

    key: str
    first_line: int
    second_line: int


def _note_duplicates(loader: Any, node: yaml.MappingNode) -> None:
    """Keys written twice in the mapping as written (a merge key, ``<<``, is how
    YAML 1.1 means to override, so merged keys are not compared)."""
    seen: dict[tuple[str, str], yaml.Node] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        first = seen.setdefault((key.tag, key.value), key)
        if first is not key:
            loader.duplicates.append(DuplicateKey(key.value, first.start_mark.line + 1,
                                                  key.start_mark.line + 1))


def _timestamp_as_string(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


class _NumberTooLong(ValueError):
    pass


def _bounded_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    try:
        value = yaml.SafeLoader.construct_yaml_int(loader, node)  # type: ignore[arg-type]
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            raise _NumberTooLong(str(exc)) from None
        raise
    if value.bit_length() > _MAX_INT_BITS:
        raise _NumberTooLong(f"more than {MAX_DIGITS} digits")
    return value


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_string)
_Loader.add_constructor("tag:yaml.org,2002:int", _bounded_int)


@dataclass(slots=True)
class ParsedDocument:
    body: Any
    doc_index: int
    line: int  # 1-based line where the document's content starts
    column: int
    # For List-shaped documents: (line, column) of each entry of ``items``.
    item_positions: list[tuple[int, int]] | None = None
    # Keys written twice in one of the document's mappings (the last value was kept).
    duplicates: tuple[DuplicateKey, ...] = ()


class YamlSyntaxError(Exception):
    def __init__(self, message: str, line: int | None, column: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class InputLimitError(YamlSyntaxError):
    """Text beyond what hcpscan reads (nested too deep, a number too long): no
    parser builds it, and no other reading (JSON) is tried."""

    hint = "no Kubernetes object holds this; the file is damaged or made to break parsers"


def too_deep(line: int | None) -> InputLimitError:
    return InputLimitError(f"nested deeper than {MAX_DEPTH} levels", line, None)


def number_too_long(text: str) -> InputLimitError:
    found = _LONG_NUMBER.search(text)
    line = text.count("\n", 0, found.start()) + 1 if found else None
    return InputLimitError(f"a number longer than {MAX_DIGITS} digits", line, None)


class TooManyNodes(InputLimitError, ValueError):
    """More nodes than one file may make (``MAX_NODES`` unless raised): found by
    counting, before any parser builds them. A ``ValueError`` too, as every
    failure of ``load_json`` is."""

    hint = "no Kubernetes manifest comes near; if the file is genuine, raise the limit with --max-nodes"

    def __init__(self, limit: int, line: int | None) -> None:
        super().__init__(f"more than {limit:,} nodes (mappings, lists and values; an alias "
                         "counts as what it repeats)", line, None)


def load_json(text: str | bytes, max_nodes: int = MAX_NODES) -> Any:
    """``json.loads`` whose every failure is a ``ValueError``: a deep document
    raises ``RecursionError`` there, a long number a ``ValueError`` of its own, a
    text of more than ``max_nodes`` nodes ``TooManyNodes`` (bytes, which only API
    answers are, are not counted: the server's pages bound them)."""
    if isinstance(text, str) and _json_node_bound(text, max_nodes) > max_nodes:
        raise TooManyNodes(max_nodes, None)
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than Python reads ({sys.getrecursionlimit()} levels)") from None


def nested_too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a parsed value (an API answer's object) nests deeper than ``limit``:
    such an object is refused as a file nested that deep is, before anything recurses
    over it (the model, a report, a saved dump). Iterative, so any depth is safe."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


# A lone UTF-16 surrogate (U+D800-U+DFFF) is no Unicode character: JSON and YAML can
# write one as an escape ("\\ud800"), and nothing can encode it again (UTF-8 refuses it).
_SURROGATE = re.compile("[\ud800-\udfff]")
# Where a text may write one: an escape \uD800-\uDFFF (or YAML's \U0000D800-\U0000DFFF)
SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")


def lone_surrogate_at(value: Any) -> str | None:
    """The path (``metadata.name``, ``data[x]``, ``items[2].spec``) of the first key or
    string of a parsed value that holds a lone surrogate, None when none does."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):
                return path or "(the value)"
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and not key.isascii() and _SURROGATE.search(key):
                    return f"{path}.(a key)" if path else "(a key)"
                stack.append((child, f"{path}.{key}" if path else str(key)))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(item))
    return None


# Before each entry of a mapping or a list stands one of these: "key:", "- ", "?" (a
# complex key), "," or, for the first entry of a flow collection, "[" or "{".
_ENTRY_MARKS = "-:,[{?"
# An alias repeats what its anchor names without writing it again, so only counting
# says what it makes. Both stand at a node's start (after a blank, "[", "{", ",");
# searched from their "&" or "*", which the regex engine skips to quickly (markdown
# in CRD descriptions writes *emphasis*, URLs &parameters). Past this many
# candidates, aliases are assumed.
_ANCHOR = re.compile(r"&([0-9A-Za-z_-]+)")
_ALIAS = re.compile(r"\*([0-9A-Za-z_-]+)")
# What an anchor or alias mark may follow and still not start a node: a printable ASCII
# character other than a flow indicator or ":" (libyaml reads {"key":*alias}). Anything
# else -- blanks, line breaks, YAML 1.1's U+0085/U+2028/U+2029 among them -- may put it at
# a node's start. One home for the loader's check of bytes too (NOT_NODE_START_BYTES).
NOT_NODE_START = frozenset(map(chr, range(0x21, 0x7F))) - frozenset("[{,:")
NOT_NODE_START_BYTES = frozenset(map(ord, NOT_NODE_START))
_NAME_CANDIDATES = 10_000
_ENTRY_MARK_BYTES = _ENTRY_MARKS.encode()
_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_JSON_BLANKS = str.maketrans("", "", " \t\r\n")


def node_overrun(text: str, limit: int = MAX_NODES, encoded: bytes | None = None) -> TooManyNodes | None:
    """Why reading the text (every document of it) would make more than ``limit``
    nodes, or None. Most texts are cleared by a bound read off their characters;
    the others by libyaml's count of their events (C, building nothing), which
    also refuses a text far over; the rest are counted node by node, which says
    on which line the count passes the limit. ``encoded``: the text's bytes, when
    the caller has them (libyaml reads those without a copy)."""
    source = encoded if encoded is not None else text
    if not _may_hold_aliases(text):
        # a mark is a character: a text of a third of the limit is within it, uncounted
        if 3 * len(source) + 1 <= limit or _node_bound(source) <= limit:
            return None
        events = _event_count(source)
        if events is not None:
            if events <= limit + 2:  # a node is at least one event; the stream's ends are two
                return None
            # ... and at most two (a collection's start and end), besides each document's two
            documents = text.count("---") + text.count("...") + 1
            if (events - 2 - 2 * documents) // 2 > limit:
                return TooManyNodes(limit, None)
    return _count_nodes(text, limit, source)


def _may_hold_aliases(text: str) -> bool:
    """Whether some alias may name an anchor of the text."""
    if "*" not in text or "&" not in text:
        return False
    anchors = _node_names(text, _ANCHOR)
    if anchors is not None and not anchors:
        return False
    aliases = _node_names(text, _ALIAS)
    return anchors is None or aliases is None or not anchors.isdisjoint(aliases)


def _node_names(text: str, pattern: re.Pattern[str]) -> set[str] | None:
    """Names after "&" or "*" at a node's start; None past ``_NAME_CANDIDATES``."""
    names = set()
    for candidate, found in enumerate(pattern.finditer(text)):
        if candidate >= _NAME_CANDIDATES:
            return None
        at = found.start()
        if at == 0 or text[at - 1] not in NOT_NODE_START:
            names.add(found.group(1))
    return names


def _node_bound(source: str | bytes) -> int:
    """At most this many nodes, whichever parser reads the text (YAML 1.1, 1.2 or
    JSON) and wherever its syntax errors are, aliases aside: each entry mark opens
    at most three (a block collection, a key and its value), and "..." may start a
    document without "---". (Bytes are counted in one pass: the marks are ASCII.)"""
    if isinstance(source, bytes):
        marks = len(source) - len(source.translate(None, _ENTRY_MARK_BYTES))
        return 3 * marks + source.count(b"...") + 1
    return 3 * sum(source.count(mark) for mark in _ENTRY_MARKS) + source.count("...") + 1


def _json_node_bound(text: str, limit: int) -> int:
    """The values JSON makes (at most, if it is not JSON): outside strings, a colon
    stands between a key and a value, a comma not before a key and a "[" not
    before "]" before an entry of a list. Counted only when the looser
    ``_node_bound`` is over the limit."""
    bound = _node_bound(text)
    if bound <= limit:
        return bound
    bare = _JSON_STRING.sub("", text).translate(_JSON_BLANKS)
    lists = bare.count(",") - bare.count(",:") + bare.count("[") - bare.count("[]")
    return 1 + lists + 2 * bare.count(":")


def _event_count(source: str | bytes) -> int | None:
    """Events of the whole stream (None if it does not parse), counted in C."""
    if not LIBYAML:
        return None  # pragma: no cover - the pure-Python parser has no raw_parse
    loader = _Loader(source)
    try:
        return int(loader.raw_parse())
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def _count_nodes(text: str, limit: int, source: str | bytes) -> TooManyNodes | None:
    """Nodes counted as ``read_documents`` reads: past a syntax error, the first
    document not finished on its own, then the rest after it."""
    tally = _NodeTally(limit)
    spans: list[tuple[int, int]] = []
    first, stream = 0, source
    try:
        while True:
            try:
                tally.read(stream)
                return None
            except yaml.YAMLError:
                pass
            spans = spans or document_spans(text)
            bad = first + tally.finished
            if bad >= len(spans):
                return None
            try:
                tally.read(_padded(text, *spans[bad]))
            except yaml.YAMLError:
                pass
            first = bad + 1
            if first >= len(spans):
                return None
            stream = _padded(text, spans[first][0], len(text))
    except TooManyNodes as over:
        return over


class _NodeTally:
    """Nodes of the streams read, an alias counting as the nodes of what it names
    (a "billion laughs" makes no more memory when loaded, but everything that walks
    the object after, a report or a saved dump, walks each repetition)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        self.finished = 0  # documents ended in the last stream read

    def read(self, stream: str | bytes) -> None:
        loader = _Loader(stream)
        # events are told apart by exact type (the hot loop): typed Any, not narrowed
        get: Callable[[], Any] = loader.get_event
        self.finished = 0
        sizes: dict[str, int] = {}  # anchor -> nodes under it
        opened: list[tuple[str | None, int]] = []  # (anchor, count before) of open collections
        try:
            while True:
                event = get()
                kind = type(event)
                if kind is ScalarEvent:
                    self.count += 1
                    if event.anchor is not None:
                        sizes[event.anchor] = 1
                elif kind is MappingStartEvent or kind is SequenceStartEvent:
                    opened.append((event.anchor, self.count))
                    self.count += 1
                elif kind is MappingEndEvent or kind is SequenceEndEvent:
                    anchor, before = opened.pop()
                    if anchor is not None:
                        sizes[anchor] = self.count - before
                elif kind is AliasEvent:
                    self.count += sizes.get(event.anchor, 1)  # not closed yet: a cycle, one reference
                elif kind is DocumentEndEvent:
                    self.finished += 1
                    sizes.clear()  # anchors are per document
                elif kind is StreamEndEvent or event is None:
                    return
                if self.count > self.limit:
                    raise TooManyNodes(self.limit, event.start_mark.line + 1)
        finally:
            loader.dispose()


def load_one(text: str) -> Any:
    """The single document of a YAML text found inside an object (Helm values,
    an embedded configuration), read as files are, bounds included; ``None`` when
    empty. Raises ``YamlSyntaxError``."""
    overrun = node_overrun(text)
    if overrun is not None:
        raise overrun
    docs = list(parse_documents(text))
    if len(docs) > 1:
        raise YamlSyntaxError("expected a single document, found several",
                              docs[1].line, docs[1].column)
    return docs[0].body if docs else None


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _items_node(node: yaml.Node) -> yaml.SequenceNode | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "items":
            return value if isinstance(value, yaml.SequenceNode) else None
    return None


def parse_documents(text: str | bytes) -> Iterator[ParsedDocument]:
    """Yield each document of a YAML (or JSON) stream; raise ``YamlSyntaxError``
    at the first syntax error, after yielding the documents before it, and
    ``InputLimitError`` at the first document nested deeper than ``MAX_DEPTH``
    (found in the event stream, which libyaml reads without recursing, before
    the composer, which recurses, sees it) or holding a number too long."""
    plain = _plain_documents(text)
    if plain is not None:
        docs, problem = plain
        yield from docs
        if problem is not None:
            raise problem
        return
    yield from _composed_documents(text, _first_too_deep(text))


def _first_too_deep(text: str | bytes) -> tuple[int, int] | None:
    """(document index, line) where the stream first nests deeper than ``MAX_DEPTH``.

    The event walk never recurses. When the parser stops with an error, the error
    itself decides nothing: a parser may refuse deep nesting on its own terms
    (libyaml 0.2.6 in PyYAML 6.0.4 stops a flow collection at its own level, with
    its own text) or the input may simply be invalid. Either way the failing
    document, up to the end of the line where the parser stopped, is walked again
    by PyYAML's pure-Python parser, which has no nesting limit, and its depth
    count alone decides."""
    found, stopped = _walk_depth(_Loader, text)
    if found is not None or stopped is None or not LIBYAML:
        return found
    index, first_line, last_line = stopped  # the failing document, alone
    part = _lines(text, first_line, last_line)
    again = _walk_depth(_PureLoader, part)[0]
    return (index, again[1] + first_line) if again is not None else None


def _walk_depth(loader_class: Any, text: str | bytes
                ) -> tuple[tuple[int, int] | None, tuple[int, int, int] | None]:
    """(where the stream first nests too deep, or None; when the parser stopped
    with an error: the failing document's index, its first 0-based line and the
    0-based line where the parser stopped, -1 when it did not say)."""
    try:
        loader = loader_class(text)
    except yaml.YAMLError:  # the pure-Python reader refuses a character (a form feed) at once
        return None, (0, 0, -1)
    get, depth, index, start = loader.get_event, 0, 0, 0
    try:
        while True:
            event = get()
            kind = type(event)
            if kind is MappingStartEvent or kind is SequenceStartEvent:
                depth += 1
                if depth > MAX_DEPTH:
                    return (index, event.start_mark.line + 1), None
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                depth -= 1
            elif kind is DocumentEndEvent:
                index += 1
                start = event.end_mark.line
            elif kind is StreamEndEvent or event is None:
                return None, None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        return None, (index, start, mark.line if mark is not None else -1)
    except yaml.YAMLError:
        return None, (index, start, -1)
    finally:
        loader.dispose()


def _lines(text: str | bytes, first: int, last: int) -> str | bytes:
    """0-based lines ``first`` to ``last`` of ``text`` (to its end when ``last`` < 0)."""
    newline = "\n" if isinstance(text, str) else b"\n"
    begin = 0
    for _ in range(first):
        found = text.find(newline, begin)  # type: ignore[arg-type]
        if found < 0:
            return text[:0]
        begin = found + 1
    if last < 0:
        return text[begin:]
    end = begin
    for _ in range(last - first + 1):
        found = text.find(newline, end)  # type: ignore[arg-type]
        if found < 0:
            return text[begin:]
        end = found + 1
    return text[begin:end]


def _composed_documents(text: str | bytes, too_deep_at: tuple[int, int] | None = None
                        ) -> Iterator[ParsedDocument]:
    loader = _Loader(text)
    index = 0
    try:
        while True:
            if too_deep_at is not None and index == too_deep_at[0]:
                raise too_deep(too_deep_at[1])
            try:
                if not loader.check_node():
                    break
                node = loader.get_node()
                body = loader.construct_document(node)
                duplicates, loader.duplicates = tuple(loader.duplicates), []
            except yaml.MarkedYAMLError as exc:
                mark = exc.problem_mark or exc.context_mark
                line = mark.line + 1 if mark else None
                column = mark.column + 1 if mark else None
                problem = exc.problem or str(exc)
                if exc.context:
                    problem = f"{exc.context}: {problem}"
                raise YamlSyntaxError(problem, line, column) from None
            except yaml.YAMLError as exc:
                raise YamlSyntaxError(str(exc), None, None) from None
            except _NumberTooLong:
                shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
                raise number_too_long(shown) from None
            except (ValueError, TypeError, RecursionError) as exc:
                # e.g. unhashable keys ("? [a]: b") or a bad base64 !!binary
                raise YamlSyntaxError(f"cannot construct document: {exc}", None, None) from None
            if node is None:
                index += 1
                continue
            line, column = _mark(node)
            items = _items_node(node)
            positions = [_mark(item) for item in items.value] if items is not None else None
            yield ParsedDocument(body, index, line, column, positions, duplicates)
            index += 1
    finally:
        loader.dispose()


class _NotPlain(Exception):
    """The stream uses YAML beyond plain data; the composing loader handles it."""


_STR = "tag:yaml.org,2002:str"
_SPECIAL_TAGS = ("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value")


class _Scalars:
    """Plain scalars resolved and constructed as the loader would, memoised
    (keys and common values repeat thousands of times in a dump)."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.resolvers = loader.yaml_implicit_resolvers
        self.fallback = self.resolvers.get(None, [])
        self.constructors = loader.yaml_constructors
        self.memo: dict[str, Any] = {}

    def __call__(self, value: str) -> Any:
        try:
            return self.memo[value]
        except KeyError:
            pass
        tag = _STR
        for candidate, regexp in [*self.resolvers.get(value[:1], ()), *self.fallback]:
            if regexp.match(value):
                tag = candidate
                break
        if tag == _STR:
            result: Any = value
        else:
            construct = self.constructors.get(tag)
            if construct is None or tag in _SPECIAL_TAGS:
                raise _NotPlain
            result = construct(self.loader, yaml.ScalarNode(tag, value))
            if result is not None and result.__hash__ is None:
                raise _NotPlain
        self.memo[value] = result
        return result


_resolver: _Scalars | None = None


def resolve_plain(value: str) -> Any:
    """What loading makes of a plain (unquoted, untagged) scalar; raises ``_NotPlain``
    where that takes the composing loader (the 1.1 merge and value keys)."""
    global _resolver
    if _resolver is None:
        _resolver = _Scalars(_Loader(""))
    return _resolver(value)


class _TooDeep(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _plain_documents(text: str | bytes
                     ) -> tuple[list[ParsedDocument], InputLimitError | None] | None:
    """Every document of a stream of plain data, or None to use the composing
    loader; when a document nests too deep, the ones before it and the error."""
    loader = _Loader(text)
    docs: list[ParsedDocument] = []
    try:
        _build_documents(loader, _Scalars(loader), docs)
        return docs, None
    except _TooDeep as exc:
        return docs, too_deep(exc.line)
    except (_NotPlain, yaml.YAMLError, ValueError, TypeError, AttributeError):
        return None
    finally:
        loader.dispose()


def _build_documents(loader: Any, scalar: _Scalars, docs: list[ParsedDocument]) -> None:
    get = loader.get_event
    get()  # stream start
    while True:
        event = get()  # document start, or stream end
        if type(event) is StreamEndEvent:
            return
        event = get()
        mark = event.start_mark
        body, positions = _build_node(get, event, scalar)
        get()  # document end
        docs.append(ParsedDocument(body, len(docs), mark.line + 1, mark.column + 1, positions))


def _build_node(get: Any, event: Any, scalar: _Scalars) -> tuple[Any, list[tuple[int, int]] | None]:
    """One document's value from its events, iteratively, plus the start of each
    ``items`` entry when the document is a mapping whose first ``items`` key
    holds a sequence (as ``_items_node`` finds them)."""
    no_key = _NotPlain  # a sentinel no key can equal
    stack: list[Any] = []
    keys: list[Any] = []
    root: Any = None
    positions: list[tuple[int, int]] | None = None
    items_state = 0  # 0: looking for the first items key, 1: its value is next, 2: collecting, 3: done
    while True:
        kind = type(event)
        if kind is ScalarEvent:
            if event.anchor is not None or event.tag is not None:
                raise _NotPlain
            value = scalar(event.value) if event.implicit[0] else event.value
            container: dict[Any, Any] | list[Any] | None = None
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if event.anchor is not None or event.tag is not None:
                raise _NotPlain
            if len(stack) >= MAX_DEPTH:
                raise _TooDeep(event.start_mark.line + 1)
            value = container = {} if kind is MappingStartEvent else []
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            stack.pop()
            keys.pop()
            if len(stack) == 1 and items_state == 2:
                items_state = 3
            if not stack:
                return root, positions
            event = get()
            continue
        else:
            raise _NotPlain  # aliases
        depth = len(stack)
        if depth == 0:
            root = value
        else:
            parent = stack[-1]
            if type(parent) is list:
                parent.append(value)
                if items_state == 2 and depth == 2:
                    positions.append((event.start_mark.line + 1,  # type: ignore[union-attr]
                                      event.start_mark.column + 1))
            elif keys[-1] is no_key:
                if container is not None:
                    raise _NotPlain  # a collection as a mapping key
                keys[-1] = value
                if depth == 1 and items_state == 0 and event.value == "items":
                    items_state = 1
            else:
                if keys[-1] in parent:
                    raise _NotPlain  # a duplicate key: the composing loader says where both are
                parent[keys[-1]] = value
                keys[-1] = no_key
                if items_state == 1 and depth == 1:
                    if kind is SequenceStartEvent:
                        items_state, positions = 2, []
                    else:
                        items_state = 3
        if container is None:
            if depth == 0:
                return root, None
        else:
            stack.append(container)
            keys.append(no_key)
        event = get()


# A line that starts a document: "---" at column 0 followed by a blank or the line's end.
# It cannot occur inside a scalar (PyYAML ends a quoted scalar there with an error),
# so the text between two such lines is one document.
_DOCUMENT_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.M)


@dataclass(frozen=True, slots=True)
class BadDocument:
    """A document that could not be read: where its text is and why."""

    doc_index: int
    start: int  # offsets of the document's text, its "---" line included
    end: int
    line: int  # where the document's text starts
    error: YamlSyntaxError


def document_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each document of the stream, in the order the
    parser counts them: the text before the first "---" is a document only when
    it holds content (not only comments, blanks and directives)."""
    starts = [m.start() for m in _DOCUMENT_START.finditer(text)]
    if not starts or _holds_content(text[: starts[0]]):
        starts.insert(0, 0)
    return [(start, starts[i + 1] if i + 1 < len(starts) else len(text))
            for i, start in enumerate(starts)]


def _holds_content(text: str) -> bool:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "%")):
            return True
    return False


def _padded(text: str, start: int, end: int) -> str:
    """text[start:end] preceded by as many empty lines as come before it, so the
    parser gives its positions as lines of the whole file."""
    return "\n" * text.count("\n", 0, start) + text[start:end]


def read_documents(text: str) -> Iterator[ParsedDocument | BadDocument]:
    """Every document of the stream; one that cannot be read is a ``BadDocument``
    and reading goes on with the next one (``parse_documents`` stops at the first)."""
    spans: list[tuple[int, int]] | None = None
    index, offset = 0, 0
    while True:
        stream = text if offset == 0 else _padded(text, offset, len(text))
        try:
            for doc in parse_documents(stream):
                doc.doc_index = index
                index += 1
                yield doc
            return
        except YamlSyntaxError as exc:
            error = exc
        spans = spans if spans is not None else document_spans(text)
        rest = _rest_of_span(text, spans, index, error)
        if rest is not None and rest.end > offset:
            # the error stands after a document already read, in text no "---" separates
            # from it (a document after "...", a second JSON value): that text is not read
            # and is said so, never dropped in silence
            yield rest
            if rest.end >= len(text):
                return
            offset = rest.end
            continue
        # The first document not finished is the bad one (a document is yielded once
        # the next one starts): read it on its own, then go on after it.
        start, end = spans[index]
        yield from _one_document(text, index, start, end)
        index += 1
        if index >= len(spans):
            return
        offset = spans[index][0]


def _rest_of_span(text: str, spans: list[tuple[int, int]], index: int,
                  error: YamlSyntaxError) -> BadDocument | None:
    """When the parser stopped inside a span whose document was already yielded (or
    after the last span), the rest of that span from the error's line, as a bad document."""
    if index < len(spans) and not error.line:
        return None
    at = _line_offset(text, error.line) if error.line else spans[-1][0]
    holding = next((i for i, (start, end) in enumerate(spans) if start <= at < end), len(spans) - 1)
    if index < len(spans) and holding >= index:
        return None
    end = spans[holding][1]
    line = error.line or text.count("\n", 0, at) + 1
    return BadDocument(index, at, end, line, error)


def _line_offset(text: str, line: int) -> int:
    at = 0
    for _ in range(line - 1):
        found = text.find("\n", at)
        if found < 0:
            return len(text)
        at = found + 1
    return at


def _one_document(text: str, index: int, start: int, end: int) -> Iterator[ParsedDocument | BadDocument]:
    line = text.count("\n", 0, start) + 1
    try:
        for doc in parse_documents(_padded(text, start, end)):
            doc.doc_index = index
            yield doc
    except YamlSyntaxError as exc:
        # An error found only at the next "---" (an unclosed bracket) belongs to this
        # document's last line, not to the next document's.
        last = line + text.count("\n", start, len(text[:end].rstrip())) if exc.line else None
        if exc.line and last is not None and exc.line > last:
            exc = YamlSyntaxError(exc.message, last, None)
        yield BadDocument(index, start, end, line, exc)


class _ShapeLoader(_Loader):
    """Composes for finding a field's line: which type a plain scalar resolves to does not
    matter there, only where it is, and matching every scalar against the implicit
    resolvers' patterns was most of composing a large entry (a Deployment of a
    must-gather: ~6 ms of ~7 ms). Keys are compared as written, never by tag."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            return str(self.DEFAULT_SCALAR_TAG)
        return str(super().resolve(kind, value, implicit))


def compose_document(text: str | bytes, doc_index: int) -> yaml.Node | None:
    """The node tree of one document (positions included), or None if unreadable.
    A document after a bad one is composed on its own, as ``read_documents`` read it.
    For locating fields only: scalars are not resolved (every one is tagged a string)."""
    loader = _ShapeLoader(text)
    try:
        node = None
        for _ in range(doc_index + 1):
            if not loader.check_node():
                return None
            node = loader.get_node()
        return node
    except yaml.YAMLError:
        pass
    finally:
        loader.dispose()
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig", errors="replace")
    spans = document_spans(text)
    if doc_index >= len(spans):
        return None
    start, end = spans[doc_index]
    loader = _ShapeLoader(_padded(text, start, end))
    try:
        return loader.get_node() if loader.check_node() else None
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def locate_in(node: yaml.Node, item_index: int | None,
              steps: tuple[Step, ...]) -> tuple[int, int, int] | None:
    """Line and column of a field in a composed document: ``(line, column, depth)``
    where ``depth`` is how many steps were found; a missing field resolves to its
    nearest present parent, which is where a user would add it."""
    if item_index is not None:
        items = _items_node(node)
        if items is None or item_index >= len(items.value):
            return None
        node = items.value[item_index]
    line, column = _mark(node)
    depth = 0
    for step in steps:
        found = _child(node, step)
        if found is None:
            break
        key_node, node = found
        line, column = _mark(key_node)
        depth += 1
    return line, column, depth


def locate(text: str | bytes, doc_index: int, item_index: int | None,
           steps: tuple[Step, ...]) -> tuple[int, int, int] | None:
    """``locate_in`` on a document composed for this one lookup."""
    node = compose_document(text, doc_index)
    return None if node is None else locate_in(node, item_index, steps)


def _child(node: yaml.Node, step: Step) -> tuple[yaml.Node, yaml.Node] | None:
    """(node whose position names the step, the step's value node)."""
    if isinstance(step, int):
        if isinstance(node, yaml.SequenceNode) and 0 <= step < len(node.value):
            item = node.value[step]
            return item, item
        return None
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == step:
                return key, value
    return None
