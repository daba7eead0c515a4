"""YAML/JSON documents with their positions, parsed by libyaml's C loader when present.

Loading composes each document's node tree (which is what ``yaml.load`` does
anyway), reads the positions it needs — the document start and, for ``List``
objects, each item's start — and drops the tree. A field's own line is found
later by composing the one document again (``locate``): findings are few,
documents are many.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

try:  # libyaml's C parser; the pure-Python one is a fallback, not a requirement
    from yaml import CSafeLoader as _BaseLoader

    LIBYAML = True
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

    LIBYAML = False


# One step of a field path: a mapping key or a list index (as scanner.inventory.fieldpath).
Step = str | int


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loader that keeps timestamps as the strings Kubernetes sends."""


def _timestamp_as_string(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_string)


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
    at the first syntax error, after yielding the documents before it."""
    loader = _Loader(text)
    index = 0
    try:
        while True:
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
