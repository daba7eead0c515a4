"""The compiled bytes of a pod spec's key (``_rebuild.spec_bytes``) are its Python
definition's (``inventory.kept._spec_bytes``) for every value, and tell values apart
exactly as marshal's bytes (the key they replace) do: two specs get one key iff marshal
wrote the same bytes for both. On generated values, near-equal pairs (``True``/``1``,
``1``/``1.0``, ``-0.0``/``0.0``, keys in another order), every pod spec of the real files
and of the benchmark's generated dump; hostile values and callers get None or an error,
never a crash; nothing leaks."""

from __future__ import annotations

import marshal
import math
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hcpscan.inventory.kept import _holder, _spec_bytes, spec_key
from hcpscan.sources import fastyaml
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES, SHARED, require
from tests.sources.test_compiled_rebuild import _allocated
from tests.sources.test_compiled_tokens import generated_dump

COMPILED = fastyaml._compiled


@pytest.fixture(autouse=True)
def _compiled_is_built() -> None:
    require(COMPILED is not None and hasattr(COMPILED, "spec_bytes"),
            "hcpscan.sources._rebuild (`pip install -e .` builds it with a C compiler)")


class _Str(str):
    pass


class _Int(int):
    pass


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-300, 300), st.integers(),
    st.integers(min_value=-(2**64), max_value=2**64), st.floats(allow_nan=True),
    st.sampled_from([0.0, -0.0, math.nan, -math.nan, math.inf, 1.0, 1]),
    st.text(max_size=20), st.text(alphabet="ab\ud800é", max_size=4), st.text(min_size=250, max_size=300),
    st.sampled_from([_Str("x"), _Int(1), (1, 2), b"x", frozenset()]))
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.one_of(st.text(max_size=5), st.integers(0, 300), st.booleans()),
                        inner, max_size=5)), max_leaves=40)


def _marshalled(value: Any) -> bytes | None:
    try:
        return marshal.dumps(value, 2)
    except ValueError:
        return None


def _same(value: Any) -> bytes | None:
    written = _spec_bytes(value)
    assert COMPILED.spec_bytes(value) == written, value
    return written


def _apart_as_marshal(a: Any, b: Any) -> None:
    first, second = _same(a), _same(b)
    if first is not None and second is not None:
        assert (first == second) == (_marshalled(a) == _marshalled(b)), (a, b)


@settings(max_examples=4000, deadline=None, suppress_health_check=list(HealthCheck))
@given(_VALUES, _VALUES)
def test_generated_values_are_written_as_defined_and_told_apart_as_marshal(a, b):
    _apart_as_marshal(a, b)
    _apart_as_marshal(a, a)
    written = _same(a)
    if written is not None:
        assert _marshalled(a) is not None  # what is written here, marshal writes too


_NEAR = [(True, 1), (False, 0), (1, 1.0), (0.0, -0.0), (math.nan, math.nan), (None, "N"),
         ({"a": 1, "b": 2}, {"b": 2, "a": 1}), ([1, [2]], [[1], 2]), ({"a": []}, {"a": {}}),
         ("", []), ([], {}), (255, 256), (-1, 2**64 - 1), ("s", b"s"), ({1: "a"}, {"1": "a"}),
         ("x" * 255, "x" * 256), ([None] * 255, [None] * 256), ("é", "e\u0301"),
         ({"a": "b", "c": "d"}, {"a": "bc", "": "d"}), (["ab", "c"], ["a", "bc"])]


@pytest.mark.parametrize("pair", _NEAR, ids=range(len(_NEAR)))
def test_near_values_are_told_apart_as_marshal_tells_them(pair):
    a, b = pair
    _apart_as_marshal(a, b)
    _apart_as_marshal({"spec": [a]}, {"spec": [b]})


def _pod_specs(objects: list[Any]) -> list[Any]:
    out = []
    for obj in objects:
        held = _holder(obj.kind, obj.body)
        if held is not None:
            out.append((obj.kind, obj.body, held[0][held[1]]))
    return out


def _keys_partition_alike(specs: list[Any]) -> None:
    """The compiled keys group the specs as marshal's keys do."""
    compiled = [spec_key(kind, body, False, written=COMPILED.spec_bytes) for kind, body, _ in specs]
    marshalled = [spec_key(kind, body, False) for kind, body, _ in specs]
    groups: dict[bytes | None, set[bytes | None]] = {}
    for c, m in zip(compiled, marshalled, strict=True):
        groups.setdefault(c, set()).add(m)
    assert all(len(found) == 1 for found in groups.values())
    assert len(set(compiled)) == len(set(marshalled))


def test_every_real_pod_spec_is_written_as_defined_and_keyed_as_marshal_keys_it():
    specs = _pod_specs(load_paths([str(SHARED / "realworld"), str(FIXTURES)]).objects)
    assert len(specs) > 100
    assert sum(_same(spec) is not None for _, _, spec in specs) == len(specs)
    _keys_partition_alike(specs)


def test_the_benchmarks_generated_dump_is_keyed_as_marshal_keys_it(tmp_path):
    generated_dump(tmp_path, 4)
    specs = _pod_specs(load_paths([str(tmp_path)]).objects)
    assert len(specs) > 50
    for _, _, spec in specs:
        _same(spec)
    _keys_partition_alike(specs)


def test_hostile_values_get_none_or_an_error_never_a_crash():
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    assert COMPILED.spec_bytes(deep) is None and _spec_bytes([[[]]]) is not None
    looped: list[Any] = []
    looped.append(looped)
    assert COMPILED.spec_bytes(looped) is None  # (marshal's key decides: spec_key looks first)
    nested_dict: dict[str, Any] = {}
    nested_dict["a"] = nested_dict
    assert COMPILED.spec_bytes(nested_dict) is None
    at_bound: Any = "x"
    for _ in range(512):
        at_bound = [at_bound]
    assert _same(at_bound) is not None and _same([at_bound]) is None
    big = "x" * (1 << 22)
    assert _same({"a": big}) == b"d\x01s\x01aS" + (1 << 22).to_bytes(8, "little") + big.encode()
    for args in [(), (1, 2)]:
        with pytest.raises(TypeError):
            COMPILED.spec_bytes(*args)
    assert COMPILED.spec_bytes({"a": "\ud800"}) is None and COMPILED.spec_bytes({(1,): 1}) is None


@pytest.mark.parametrize("value", [
    {"containers": [{"name": "c", "env": [{"name": "N", "value": 1.5}], "n": 2**40}]},
    {"a": ["x" * 1000, {"b": "\ud800"}]}, [[[[1, (2,)]]]], {"big": 2**70}])
def test_nothing_leaks_written_or_not(value):
    assert _allocated(lambda: COMPILED.spec_bytes(value), 2000) < 10_000
    counts = [sys.getrefcount(value)]
    COMPILED.spec_bytes(value)
    assert [sys.getrefcount(value)] == counts


def test_a_non_ascii_string_keeps_no_utf8_copy():
    """Writing a string past ASCII makes its UTF-8 bytes and drops them, as marshal does:
    the string (kept in the inventory for the whole scan) does not grow a copy."""
    text = "é" * 100_000 + "".join(chr(c) for c in range(0x100, 0x200))
    before = sys.getsizeof(text)
    assert _same([text]) is not None
    assert sys.getsizeof(text) == before
