"""JSONPath expressions of the rules, answered by a direct walk over decoded bodies.

Rules name the fields they read by JSONPath (``$.spec.template.spec.containers[*].env[*].value``).
jsonpath-ng evaluates any expression, but builds a context object for every node
it visits, and rules ask hundreds of thousands of times per scan. Most rule paths
are plain chains of fields, ``*``, ``[*]`` and ``[n]``: a ``FieldQuery`` compiles
such a chain from jsonpath-ng's own parse (so both read the syntax alike) and
walks dicts and lists itself, with jsonpath-ng's results: the same matches, in
the same order, with the same field paths, including its quirks (``[*]`` on a
mapping or a scalar matches the value itself, at index 0). Anything else, and any
value of a type the walk does not model, is left to jsonpath-ng.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from jsonpath_ng.exceptions import JsonPathParserError
from jsonpath_ng.ext.parser import ExtendedJsonPathParser
from jsonpath_ng.jsonpath import Child, Fields, Index, Root, Slice

from hcpscan.inventory.fieldpath import Step

Match = tuple[Any, tuple[Step, ...]]

# Values a decoded YAML or JSON body is made of.
_SCALARS = (str, int, float, bool)
_PLAIN = (dict, list, *_SCALARS, type(None))


class _Unmodelled(Exception):
    """A value the walk does not model: jsonpath-ng answers for the whole body."""


class _Fields:
    """``.a.b``: a run of plain fields of nested mappings (nothing where one is missing)."""

    __slots__ = ("names",)

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def extend(self, value: Any, steps: tuple[Step, ...], out: list[Match]) -> None:
        for name in self.names:
            if isinstance(value, dict):
                if name not in value:
                    return
                value = value[name]
            elif isinstance(value, _PLAIN):
                return
            else:
                raise _Unmodelled
        out.append((value, steps + self.names))


class _EveryKey:
    """``.*``: every value of a mapping, in key order (nothing for other values)."""

    __slots__ = ()

    def extend(self, value: Any, steps: tuple[Step, ...], out: list[Match]) -> None:
        if isinstance(value, dict):
            if None in value:
                raise _Unmodelled  # jsonpath-ng takes a null key for its auto-id field
            out += [(sub, steps + (key,)) for key, sub in value.items()]
        elif not isinstance(value, _PLAIN):
            raise _Unmodelled


class _EveryItem:
    """``[*]``: every item of a list; a mapping or scalar stands for a list of itself."""

    __slots__ = ()

    def extend(self, value: Any, steps: tuple[Step, ...], out: list[Match]) -> None:
        if isinstance(value, list):
            out += [(sub, steps + (i,)) for i, sub in enumerate(value)]
        elif value is None:
            return
        elif isinstance(value, dict | str | int | float):
            out.append((value, steps + (0,)))
        else:
            raise _Unmodelled


class _Items:
    """``[n]`` (or ``[n,m]``): those items of a list, where it is long enough."""

    __slots__ = ("indices",)

    def __init__(self, indices: tuple[int, ...]) -> None:
        self.indices = indices

    def extend(self, value: Any, steps: tuple[Step, ...], out: list[Match]) -> None:
        if isinstance(value, list):
            for index in self.indices:
                if value and len(value) > index:
                    out.append((value[index], steps + (index,)))
        elif value is not None:
            raise _Unmodelled  # jsonpath-ng indexes strings and mappings too


class FieldQuery:
    """One JSONPath expression: ``matches(body)`` -> [(value, field path)], as
    jsonpath-ng's ``find`` would give them."""

    __slots__ = ("expr", "parsed", "_chain")

    def __init__(self, expr: str, parsed: Any) -> None:
        self.expr = expr
        self.parsed = parsed  # jsonpath-ng's parse, for what the chain cannot answer
        chain = _chain_of(parsed)
        self._chain = None if chain is None else _joined(chain)

    @property
    def is_plain(self) -> bool:
        """Whether the expression is a chain the walk answers."""
        return self._chain is not None

    def matches(self, body: Any) -> list[Match]:
        if self._chain is not None:
            try:
                return self._walk(body)
            except _Unmodelled:
                pass
        return [(match.value, steps_of(match)) for match in self.parsed.find(body)]

    def _walk(self, body: Any) -> list[Match]:
        if self._chain is None:
            raise RuntimeError("_walk called on a query that is not a simple chain")
        current: list[Match] = [(body, ())]
        for step in self._chain:
            found: list[Match] = []
            for value, steps in current:
                step.extend(value, steps, found)
            if not found:
                return found
            current = found
        return current


def _chain_of(node: Any, leftmost: bool = True) -> list[Any] | None:
    """The walk steps of a parsed expression, or None when it is more than a chain."""
    kind = type(node)
    if kind is Child:
        left = _chain_of(node.left, leftmost)
        right = _chain_of(node.right, False)
        if left is None or right is None:
            return None
        return left + right
    if kind is Root:
        return [] if leftmost else None
    if kind is Fields and len(node.fields) == 1:
        name = node.fields[0]
        return [_EveryKey()] if name == "*" else [_Fields((name,))]
    if kind is Slice and node.start is None and node.end is None and node.step is None:
        return [_EveryItem()]
    if kind is Index:
        indices = getattr(node, "indices", None) or (node.index,)  # jsonpath-ng < 1.7: one index
        if all(type(i) is int for i in indices):
            return [_Items(tuple(indices))]
    return None


def _joined(chain: list[Any]) -> list[Any]:
    """Runs of plain fields joined into one step each."""
    out: list[Any] = []
    for step in chain:
        if isinstance(step, _Fields) and out and isinstance(out[-1], _Fields):
            out[-1] = _Fields(out[-1].names + step.names)
        else:
            out.append(step)
    return out


@lru_cache(maxsize=1)
def _jsonpath_parser() -> ExtendedJsonPathParser:
    """One parser for every expression: building its LALR tables takes ~50 ms."""
    return ExtendedJsonPathParser()


# ``$`` then ``.name``, ``.*`` and ``[*]`` steps, names as jsonpath-ng's lexer reads an ID
# (without ``@`` and ``-``, and not its reserved words): most rule paths
_PLAIN_CHAIN = re.compile(r"\$(?:\.(?:[A-Za-z_][A-Za-z0-9_]*|\*)|\[\*\])*")
_PLAIN_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*|\*)|\[\*\]")
_RESERVED = frozenset({"where", "wherenot"})


def _plain_parse(expr: str) -> Any:
    """jsonpath-ng's tree of a plain chain, built without its parser (whose LALR tables
    cost ~50 ms to build, most of a one-file scan's rule time), or None for anything
    else. ``tests/inventory/test_jsonpath_plain.py`` holds it equal to the parser's."""
    if _PLAIN_CHAIN.fullmatch(expr) is None:
        return None
    node: Any = Root()
    for step in _PLAIN_STEP.finditer(expr, 1):
        name = step.group(1)
        if name in _RESERVED:
            return None
        node = Child(node, Slice() if name is None else Fields(name))
    return node


@lru_cache(maxsize=512)
def compile_jsonpath(expr: str):  # type: ignore[no-untyped-def]
    """jsonpath-ng's parse of ``expr``; ``ValueError`` when it cannot parse it."""
    plain = _plain_parse(expr)
    if plain is not None:
        return plain
    try:
        return _jsonpath_parser().parse(expr)
    except (JsonPathParserError, Exception) as exc:  # noqa: BLE001  jsonpath-ng raises bare Exceptions too
        raise ValueError(f"invalid JSONPath {expr!r}: {exc}") from None


@lru_cache(maxsize=1024)
def compile_query(expr: str) -> FieldQuery:
    """A ``FieldQuery`` for ``expr``; ``ValueError`` when jsonpath-ng cannot parse it."""
    return FieldQuery(expr, compile_jsonpath(expr))


def steps_of(match: Any) -> tuple[Step, ...]:
    """The field path of one jsonpath-ng match."""
    steps: list[Step] = []
    node = match
    while node is not None and node.context is not None:
        path = node.path
        if hasattr(path, "indices"):  # jsonpath-ng >= 1.7
            steps.append(path.indices[0])
        elif hasattr(path, "index"):
            steps.append(path.index)
        elif hasattr(path, "fields") and path.fields:
            steps.append(path.fields[0])
        node = node.context
    return tuple(reversed(steps))
