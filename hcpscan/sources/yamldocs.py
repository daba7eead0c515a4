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
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.events import (
    DocumentEndEvent,
    DocumentStartEvent,
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


# One step of a field path: a mapping key or a list index (as hcpscan.inventory.fieldpath).
Step = str | int


# Input beyond these is a diagnostic, never parsed: libyaml's composer recurses in C
# (30,000 levels kill the process), and Python prints no integer longer than its
# int-string limit (an error in whatever report shows it).
MAX_DEPTH = 200  # nesting levels; no Kubernetes object comes near
MAX_DIGITS = sys.get_int_max_str_digits() or 4300
_MAX_INT_BITS = int(MAX_DIGITS * math.log2(10))
_LONG_NUMBER = re.compile(r"[-+]?(?:0[xob])?[0-9a-fA-F_:]{1000,}")


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loader that keeps timestamps as the strings Kubernetes sends and
    refuses integers beyond the int-string limit (``0x`` ones are not checked by Python)."""


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


def load_json(text: str | bytes) -> Any:
    """``json.loads`` whose every failure is a ``ValueError``: a deep document
    raises ``RecursionError`` there, a long number a ``ValueError`` of its own."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than Python reads ({sys.getrecursionlimit()} levels)") from None


def load_one(text: str) -> Any:
    """The single document of a YAML text found inside an object (Helm values,
    an embedded configuration), read as files are, bounds included; ``None`` when
    empty. Raises ``YamlSyntaxError``."""
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
    """(document index, line) where the stream first nests deeper than ``MAX_DEPTH``."""
    loader = _Loader(text)
    get, depth, index = loader.get_event, 0, 0
    try:
        while True:
            event = get()
            kind = type(event)
            if kind is MappingStartEvent or kind is SequenceStartEvent:
                depth += 1
                if depth > MAX_DEPTH:
                    return index, event.start_mark.line + 1
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                depth -= 1
            elif kind is DocumentEndEvent:
                index += 1
            elif kind is StreamEndEvent or event is None:
                return None
    except yaml.YAMLError:
        return None  # composing reports the syntax error; it does not go deeper than this
    finally:
        loader.dispose()


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
            yield ParsedDocument(body, index, line, column, positions)
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
            container = None
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


def compose_document(text: str | bytes, doc_index: int) -> yaml.Node | None:
    """The node tree of one document (positions included), or None if unreadable."""
    loader = _Loader(text)
    try:
        node = None
        for _ in range(doc_index + 1):
            if not loader.check_node():
                return None
            node = loader.get_node()
        return node
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def document_spans(text: str) -> list[tuple[int, int]] | None:
    """(first line, line after the last) of each document of a stream, 0-based, from
    libyaml's events (one pass, no composing); None where a document cannot be
    composed on its own lines (directives, which apply from the top) or the stream
    does not parse."""
    if text.startswith("%") or "\n%" in text:
        return None
    loader = _Loader(text)
    spans: list[tuple[int, int]] = []
    start = 0
    try:
        while True:
            event = loader.get_event()
            kind = type(event)
            if kind is DocumentStartEvent:
                start = event.start_mark.line
            elif kind is DocumentEndEvent:
                end = event.end_mark
                spans.append((start, end.line + (1 if end.column else 0)))
            elif kind is StreamEndEvent or event is None:
                return spans
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
