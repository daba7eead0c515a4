"""Plain JSONPath chains are built without jsonpath-ng's parser (its LALR tables cost a
one-file scan ~50 ms): the tree must be the parser's own, and anything else must still go
to the parser."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import yaml

from hcpscan.inventory.jsonpaths import _jsonpath_parser, _plain_parse, compile_query
from hcpscan.rules.loader import builtin_rules_dir

STEPS = [".spec", ".a_b", "._x9", ".*", "[*]", ".containers", ".value"]


def _rule_paths() -> list[str]:
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for sub in value.values():
                walk(sub)
        elif isinstance(value, list):
            for sub in value:
                walk(sub)
        elif isinstance(value, str) and value.startswith("$"):
            found.append(value)

    for path in sorted(builtin_rules_dir().glob("*.yaml")):
        walk(yaml.safe_load(path.read_text()))
    return found


def test_the_catalog_has_plain_paths_and_others():
    paths = _rule_paths()
    assert any(_plain_parse(p) is not None for p in paths)
    assert any(_plain_parse(p) is None for p in paths)  # filters, recursive descent


@pytest.mark.parametrize("expr", sorted(set(
    ["$", *_rule_paths()] + ["$" + "".join(c) for n in (1, 2, 3)
                             for c in itertools.product(STEPS, repeat=n)])))
def test_a_plain_chain_is_the_parsers_tree(expr):
    plain = _plain_parse(expr)
    if plain is not None:
        assert plain == _jsonpath_parser().parse(expr)
        assert repr(plain) == repr(_jsonpath_parser().parse(expr))


@pytest.mark.parametrize("expr", [
    "$.where", "$.a.wherenot", "$.a-b", "$.@x", "$.a[0]", "$['a']", '$["a"]', "$..a",
    "$.a[?(@.b == 1)]", "$.a[1:2]", "$ .a", "$.a.", "$.a[*", "metadata.name", "$.1a",
    "$.a|b", "$.`this`"])
def test_anything_else_goes_to_the_parser(expr):
    assert _plain_parse(expr) is None


def test_a_plain_query_answers_as_before():
    body = {"spec": {"containers": [{"env": [{"value": "x"}, {"value": "y"}]}, {"env": {}}]}}
    query = compile_query("$.spec.containers[*].env[*].value")
    assert query.is_plain
    assert query.matches(body) == [
        ("x", ("spec", "containers", 0, "env", 0, "value")),
        ("y", ("spec", "containers", 0, "env", 1, "value"))]
