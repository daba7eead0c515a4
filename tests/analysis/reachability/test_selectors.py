"""Label selector semantics, validation, and the bit-mask index agreeing with them."""

import pytest

from hcpscan.analysis.reachability.selectors import LabelIndex, LabelSelector, SelectorError, bits

PODS = [
    {"app": "web", "tier": "frontend"},
    {"app": "db"},
    {"app": "cache", "tier": "backend"},
    {},
]


def sel(**raw):
    return LabelSelector.parse(raw)


@pytest.mark.parametrize("selector, expected", [
    (sel(), [0, 1, 2, 3]),
    (sel(matchLabels={"app": "web"}), [0]),
    (sel(matchExpressions=[{"key": "app", "operator": "In", "values": ["web", "db"]}]), [0, 1]),
    (sel(matchExpressions=[{"key": "tier", "operator": "NotIn", "values": ["frontend"]}]), [1, 2, 3]),
    (sel(matchExpressions=[{"key": "tier", "operator": "Exists"}]), [0, 2]),
    (sel(matchExpressions=[{"key": "tier", "operator": "DoesNotExist"}]), [1, 3]),
    (sel(matchLabels={"app": "cache"},
         matchExpressions=[{"key": "tier", "operator": "In", "values": ["backend"]}]), [2]),
])
def test_selection_matches_kubernetes_semantics(selector, expected):
    assert [i for i, labels in enumerate(PODS) if selector.matches(labels)] == expected
    assert bits(LabelIndex(PODS).select(selector)) == expected


def test_unknown_operator_is_invalid():
    with pytest.raises(SelectorError, match="unknown operator 'Equals'") as info:
        sel(matchExpressions=[{"key": "app", "operator": "Equals", "values": ["x"]}])
    assert info.value.field == "matchExpressions[0].operator"


@pytest.mark.parametrize("expression", [
    {"key": "app", "operator": "In", "values": []},
    {"key": "app", "operator": "Exists", "values": ["x"]},
    {"operator": "Exists"},
])
def test_malformed_expressions_are_invalid(expression):
    with pytest.raises(SelectorError):
        sel(matchExpressions=[expression])
