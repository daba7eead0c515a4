"""JSONPath queries of the rules: the direct walk answers exactly as jsonpath-ng does."""

from __future__ import annotations

from typing import Any

import pytest

from hcpscan.inventory.jsonpaths import compile_jsonpath, compile_query, steps_of

DEPLOYMENT: dict[str, Any] = {
    "metadata": {"name": "exporter", "labels": {"app.kubernetes.io/name": "exporter"}},
    "spec": {"template": {"spec": {
        "containers": [
            {"name": "exporter", "args": ["--listen", ":9100"],
             "env": [{"name": "HTTPS_PROXY", "value": "http://u:p@proxy:3128"},
                     {"name": "NO_PROXY", "value": None},
                     {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]},
            {"name": "sidecar", "env": []},
        ],
        "initContainers": {"name": "not-a-list"},  # [*] takes a mapping as a list of itself
    }}},
    "data": {"a": "1", 2: "int key", "list": [1, 2]},
    "quirks": {"text": "abc", "number": 7, "empty": "", "none": None, None: "null key"},
}

CHAINS = [
    "$",
    "$.metadata.name",
    "metadata.name",
    "$.metadata.labels.\"app.kubernetes.io/name\"",
    "$.metadata['labels']",
    "$.spec.template.spec.containers[*].env[*].value",
    "$.spec.template.spec.containers[*].args[*]",
    "$.spec.template.spec.containers[0].name",
    "$.spec.template.spec.containers[1].env[0]",
    "$.spec.template.spec.containers[5].name",
    "$.spec.template.spec.containers[-1].name",
    "$.spec.template.spec.containers[0,1].name",
    "$.spec.template.spec.initContainers[*].name",
    "$.spec.template.spec.containers.name",
    "$.spec.*",
    "$.data.*",
    "$.data.list[*]",
    "$.data.list.*",
    "$.quirks.text[*]",
    "$.quirks.number[*]",
    "$.quirks.none[*]",
    "$.missing[*].deeper",
]
# jsonpath-ng indexes strings and empty values, and reads a null key as its auto-id
# field: the walk hands these to it.
QUIRKS = ["$.quirks.text[0]", "$.quirks.empty[0]", "$.quirks.*", "$.data[0]", "$.data[2]"]
BEYOND_A_CHAIN = ["$..name", "$.spec.template.spec.containers[?(@.name == 'sidecar')].name",
                  "$.data.list[0:1]", "$.data.list.`len`"]


def jsonpath_ng_matches(expr: str, body: Any) -> list[tuple[Any, tuple]]:
    return [(m.value, steps_of(m)) for m in compile_jsonpath(expr).find(body)]


def answers(expr: str, body: Any) -> tuple[Any, Any]:
    """(the walk's matches, jsonpath-ng's), or the type of what each raised."""
    out = []
    for find in (compile_query(expr).matches, lambda b: jsonpath_ng_matches(expr, b)):
        try:
            out.append(find(body))
        except Exception as exc:  # noqa: BLE001 - whatever jsonpath-ng raises, the walk must too
            out.append(type(exc))
    return out[0], out[1]


@pytest.mark.parametrize("expr", CHAINS + QUIRKS + BEYOND_A_CHAIN)
def test_matches_are_jsonpath_ngs_in_order_with_their_field_paths(expr: str) -> None:
    got, want = answers(expr, DEPLOYMENT)
    assert got == want


@pytest.mark.parametrize("expr", CHAINS)
def test_matched_values_are_the_bodys_own_objects(expr: str) -> None:
    for (got, _), (want, _) in zip(compile_query(expr).matches(DEPLOYMENT),
                                   jsonpath_ng_matches(expr, DEPLOYMENT)):
        assert got is want


def test_field_paths_keep_list_indices_and_key_types() -> None:
    found = compile_query("$.spec.template.spec.containers[*].env[*].value").matches(DEPLOYMENT)
    assert [steps for _, steps in found] == [
        ("spec", "template", "spec", "containers", 0, "env", 0, "value"),
        ("spec", "template", "spec", "containers", 0, "env", 1, "value"),
    ]
    assert [steps for _, steps in compile_query("$.data.*").matches(DEPLOYMENT)] == [
        ("data", "a"), ("data", 2), ("data", "list")]


def test_a_mapping_under_every_item_stands_for_a_list_of_itself() -> None:
    assert compile_query("$.spec.template.spec.initContainers[*].name").matches(DEPLOYMENT) == [
        ("not-a-list", ("spec", "template", "spec", "initContainers", 0, "name"))]


@pytest.mark.parametrize("expr", CHAINS)
def test_chains_of_fields_stars_and_indices_are_walked(expr: str) -> None:
    assert compile_query(expr).is_plain


@pytest.mark.parametrize("expr", BEYOND_A_CHAIN)
def test_filters_descendants_slices_and_functions_are_left_to_jsonpath_ng(expr: str) -> None:
    assert not compile_query(expr).is_plain


@pytest.mark.parametrize("body", [None, "text", 3, [], [{"spec": 1}], {"spec": None},
                                  {"spec": {"template": b"bytes"}}, {"spec": {"template": {1, 2}}}])
def test_odd_bodies_answer_alike(body: Any) -> None:
    for expr in ("$.spec.template", "$.spec.template[*]", "$.spec.*", "$[*].spec", "$[0]"):
        got, want = answers(expr, body)
        assert got == want, expr


def test_an_expression_jsonpath_ng_cannot_parse_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="invalid JSONPath"):
        compile_query("$.spec[")
