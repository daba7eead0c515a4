"""Label selectors (``matchLabels`` / ``matchExpressions``) with Kubernetes semantics.

* every ``matchLabels`` pair and every expression must hold (AND);
* ``In``: the key exists with one of the values; ``NotIn``: the key is absent
  or its value is none of the values; ``Exists`` / ``DoesNotExist``: the key is
  present / absent;
* the empty selector ``{}`` selects everything;
* ``In``/``NotIn`` need at least one value, ``Exists``/``DoesNotExist`` none;
  any other operator makes the selector invalid (``SelectorError``).

``LabelIndex`` answers "which of these label sets does the selector select?"
as an integer bit mask, through an inverted index, so thousands of policies
can be evaluated against thousands of endpoint classes without pairwise loops.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


class SelectorError(ValueError):
    """A selector Kubernetes validation would reject; ``field`` is relative to the selector."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.operator == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels  # DoesNotExist

    def __str__(self) -> str:
        if self.operator == "Exists":
            return self.key
        if self.operator == "DoesNotExist":
            return f"!{self.key}"
        op = "in" if self.operator == "In" else "notin"
        return f"{self.key} {op} ({','.join(sorted(self.values))})"


@dataclass(frozen=True, slots=True)
class LabelSelector:
    match_labels: tuple[tuple[str, str], ...] = ()
    expressions: tuple[Requirement, ...] = ()

    @classmethod
    def parse(cls, raw: Any) -> LabelSelector:
        """Read a selector from manifest data; ``None`` and ``{}`` both select all."""
        if raw is None:
            return cls()
        if not isinstance(raw, Mapping):
            raise SelectorError(f"a label selector must be a mapping, not {type(raw).__name__}")
        labels = raw.get("matchLabels") or {}
        if not isinstance(labels, Mapping):
            raise SelectorError("matchLabels must be a mapping of label to value", "matchLabels")
        pairs = tuple(sorted((str(k), _label_value(v)) for k, v in labels.items()))
        exprs_raw = raw.get("matchExpressions") or []
        if not isinstance(exprs_raw, list):
            raise SelectorError("matchExpressions must be a list", "matchExpressions")
        exprs = tuple(_requirement(item, i) for i, item in enumerate(exprs_raw))
        return cls(pairs, exprs)

    @property
    def is_empty(self) -> bool:
        return not self.match_labels and not self.expressions

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.match_labels) and all(
            r.matches(labels) for r in self.expressions)

    def __str__(self) -> str:
        parts = [f"{k}={v}" for k, v in self.match_labels] + [str(r) for r in self.expressions]
        return ",".join(parts) if parts else "{} (all)"


def _label_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _requirement(item: Any, index: int) -> Requirement:
    where = f"matchExpressions[{index}]"
    if not isinstance(item, Mapping) or not item.get("key"):
        raise SelectorError("a match expression needs a key and an operator", where)
    operator = item.get("operator")
    if operator not in OPERATORS:
        raise SelectorError(
            f"unknown operator {operator!r} (valid: {', '.join(OPERATORS)})", f"{where}.operator")
    values = item.get("values") or []
    if not isinstance(values, list):
        raise SelectorError("values must be a list", f"{where}.values")
    if operator in ("In", "NotIn") and not values:
        raise SelectorError(f"operator {operator} needs at least one value", f"{where}.values")
    if operator in ("Exists", "DoesNotExist") and values:
        raise SelectorError(f"operator {operator} takes no values", f"{where}.values")
    return Requirement(str(item["key"]), operator, frozenset(_label_value(v) for v in values))


class LabelIndex:
    """Inverted index over a fixed list of label sets; selections are bit masks
    (bit ``i`` set = item ``i`` selected)."""

    def __init__(self, items: Sequence[Mapping[str, str]]) -> None:
        self.size = len(items)
        self.all = (1 << self.size) - 1
        self._by_key: dict[str, int] = {}
        self._by_pair: dict[tuple[str, str], int] = {}
        for i, labels in enumerate(items):
            bit = 1 << i
            for key, value in labels.items():
                self._by_key[key] = self._by_key.get(key, 0) | bit
                self._by_pair[(key, value)] = self._by_pair.get((key, value), 0) | bit
        self._cache: dict[LabelSelector, int] = {}

    def select(self, selector: LabelSelector) -> int:
        cached = self._cache.get(selector)
        if cached is not None:
            return cached
        mask = self.all
        for pair in selector.match_labels:
            mask &= self._by_pair.get(pair, 0)
            if not mask:
                break
        for req in selector.expressions:
            if not mask:
                break
            mask &= self._requirement_mask(req)
        self._cache[selector] = mask
        return mask

    def _requirement_mask(self, req: Requirement) -> int:
        if req.operator in ("In", "NotIn"):
            hit = 0
            for value in req.values:
                hit |= self._by_pair.get((req.key, value), 0)
            return hit if req.operator == "In" else self.all & ~hit
        present = self._by_key.get(req.key, 0)
        return present if req.operator == "Exists" else self.all & ~present


def bits(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, ascending."""
    if mask.bit_count() > _FEW_BITS:
        return _bits_by_text(mask)
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


# Above this many set bits, ``bits`` reads the mask's binary text: peeling the lowest bit
# copies the whole mask each time (a fleet's masks run to tens of thousands of bits).
_FEW_BITS = 16


def _bits_by_text(mask: int) -> list[int]:
    """``bits`` of a non-negative mask, from its binary digits (lowest first)."""
    digits = bin(mask)[:1:-1]
    out = []
    at = digits.find("1")
    while at >= 0:
        out.append(at)
        at = digits.find("1", at + 1)
    return out
