"""The compiled rebuild (``hcpscan/sources/_rebuild.c``) is the Python rebuild it stands
for (``fastyaml._canonical``, ``_kept``, ``_refusable``): the same values of the same
types, the same strings shared, the same refusals, on generated trees and every real
file; it leaks nothing, on success or refusal; and it is what an install with a C
compiler runs."""

from __future__ import annotations

import gc
import math
import os
import pickle
import subprocess
import sys
import tracemalloc
import types
import zlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hcpscan.core.yamldocs import MAX_DEPTH
from hcpscan.inventory.kept import KEPT, PRUNABLE, WHOLE
from hcpscan.inventory.shapes import ANY_KEY
from hcpscan.sources import fastyaml
from hcpscan.sources.documents import _keep_of
from tests.conftest import FIXTURES, REALWORLD, ROOT, require

COMPILED = fastyaml._compiled
KEEP_OF = _keep_of(PRUNABLE)


@pytest.fixture(autouse=True)
def _compiled_is_built() -> None:
    require(COMPILED is not None, "hcpscan.sources._rebuild (`pip install -e .` builds it with a C compiler)")


def _python(action: str, *args: Any) -> tuple[str, Any, dict[str, str]]:
    """("ok", result, strings) or ("refused", None, strings) of the Python rebuild."""
    strings: dict[str, str] = {}
    try:
        if action == "canonical":
            value, restore, depth = args
            return "ok", fastyaml._canonical(value, strings.setdefault, restore, depth), strings
        if action == "kept":
            value, keep, restore, depth = args
            return "ok", fastyaml._kept(value, keep, strings.setdefault, restore, depth), strings
        fastyaml._refusable(*args)
        return "ok", None, strings
    except fastyaml._NotFast:
        return "refused", None, strings


def _compiled(action: str, *args: Any) -> tuple[str, Any, dict[str, str]]:
    strings: dict[str, str] = {}
    try:
        if action == "canonical":
            value, restore, depth = args
            return "ok", COMPILED.canonical(value, strings, restore, depth), strings
        if action == "kept":
            value, keep, restore, depth = args
            return "ok", COMPILED.kept(value, keep, strings, restore, depth), strings
        COMPILED.refusable(*args)
        return "ok", None, strings
    except fastyaml._NotFast:
        return "refused", None, strings


def _same(python: tuple[str, Any, dict[str, str]], compiled: tuple[str, Any, dict[str, str]]) -> None:
    """Equal outcome, equal values of equal types (pickle writes a bool, an int and a float
    apart, and a shared object once: the bytes are equal only if the same strings are
    shared), and the same strings remembered for later documents."""
    assert python[0] == compiled[0]
    if python[0] == "ok":
        assert pickle.dumps(python[1], protocol=5) == pickle.dumps(compiled[1], protocol=5)
        assert _exact(python[1]) == _exact(compiled[1])
    assert list(python[2]) == list(compiled[2])


def _exact(value: Any) -> Any:
    """The value with every scalar's type beside it (1 == 1.0 == True otherwise) and
    which strings are one object: what pickle's bytes say, readable in a failure."""
    if isinstance(value, dict):
        return [(_exact(k), _exact(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_exact(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


_SCALARS = (st.none() | st.booleans() | st.integers(-300, 300) | st.floats(allow_nan=True, width=32)
            | st.text(alphabet="ab*01.e-", max_size=70))
_KEYS = (st.text(alphabet="ab*01", max_size=4) | st.sampled_from(["*", "spec", "containers", "env"])
         | st.integers(-3, 3) | st.floats(-2, 2, width=16) | st.booleans() | st.none()
         | st.tuples(st.integers(0, 2)) | st.frozensets(st.integers(0, 2), max_size=2))
_TREES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=5)
                      | st.dictionaries(_KEYS, inner, max_size=5), max_leaves=40)
_KEEPS = st.recursive(st.just(WHOLE) | st.none(),
                      lambda inner: st.lists(inner, min_size=1, max_size=1)
                      | st.dictionaries(st.text(alphabet="ab*01", max_size=4)
                                        | st.sampled_from(["*", "spec", "containers", "env", ANY_KEY]),
                                        inner, max_size=4), max_leaves=12)
# what ``_restorations`` gives: YAML 1.2 numbers mapped to their YAML 1.1 values
_RESTORE = st.dictionaries(st.one_of(st.integers(-300, 300).map(lambda n: (int, n)),
                                     st.floats(-2, 2, width=16).map(lambda f: (float, f))),
                           st.text(alphabet="0123e", max_size=5) | st.integers(0, 9) | st.booleans(),
                           max_size=4)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TREES, _RESTORE, st.integers(0, 3))
def test_generated_trees_rebuild_the_same(tree, restore, depth):
    _same(_python("canonical", tree, restore, depth), _compiled("canonical", tree, restore, depth))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TREES, _KEEPS.filter(lambda keep: keep is not None), _RESTORE, st.integers(0, 3))
def test_generated_trees_prune_the_same(tree, keep, restore, depth):
    _same(_python("kept", tree, keep, restore, depth), _compiled("kept", tree, keep, restore, depth))


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.just({}) | st.just([]) | _SCALARS,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
                    max_leaves=30).filter(lambda value: isinstance(value, dict | list)),
       st.integers(0, 3))
def test_generated_trees_are_refused_the_same(tree, depth):
    _same(_python("refusable", tree, depth), _compiled("refusable", tree, depth))


class _Text(str):
    pass


class _Number(int):
    pass


class _Mapping(dict):
    pass


# What yaml-rs never gives but a caller may: subclasses (kept as they are, never shared),
# NaN, -0.0, ints past 64 bits, bytes; restorations keyed by bool beside int (1 == True).
_ODD_SCALARS = (st.builds(_Text, st.sampled_from(["a", "*", "spec"])) | st.builds(_Number, st.integers(0, 2))
                | st.sampled_from([math.nan, -0.0, 0.0, math.inf, 2**64, -(2**70), True, 1, b"x"])
                | st.floats(allow_nan=True) | st.text(alphabet="a\U0001f600", min_size=62, max_size=66))
_ODD_KEYS = _ODD_SCALARS.filter(lambda key: not isinstance(key, float) or not math.isnan(key)) | _KEYS
_ODD_TREES = st.recursive(_ODD_SCALARS | _SCALARS, lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(_ODD_KEYS, inner, max_size=4)
                          | st.dictionaries(_ODD_KEYS, inner, max_size=2).map(_Mapping), max_leaves=30)
_ODD_RESTORE = st.dictionaries(st.sampled_from([(int, 1), (bool, True), (float, -0.0), (float, math.inf),
                                                (int, 2**64), (int, 0), (float, 0.0)]),
                               st.sampled_from(["yes", "1", 0, False]), max_size=4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ODD_TREES, _KEEPS.filter(lambda keep: keep is not None), _ODD_RESTORE, st.integers(0, 2))
def test_odd_values_rebuild_and_prune_the_same(tree, keep, restore, depth):
    _same(_python("canonical", tree, restore, depth), _compiled("canonical", tree, restore, depth))
    _same(_python("kept", tree, keep, restore, depth), _compiled("kept", tree, keep, restore, depth))
    if type(tree) in (dict, list):  # what _kept hands _refusable
        _same(_python("refusable", tree, depth), _compiled("refusable", tree, depth))


def _nested(levels: int, innermost: Any, as_list: bool = False) -> Any:
    value = innermost
    for _ in range(levels):
        value = [value] if as_list else {"a": value}
    return value


@pytest.mark.parametrize("as_list", [False, True])
@pytest.mark.parametrize("levels", [MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
def test_nesting_is_refused_at_the_same_depth(levels, as_list):
    """Past MAX_DEPTH both refuse (the file goes to PyYAML, which says where); below it,
    both build; in a part left out too (``_refusable``), an empty innermost collection
    included."""
    for innermost in ({}, [], {"x": 1}, "text"):
        tree = _nested(levels, innermost, as_list)
        _same(_python("canonical", tree, {}, 0), _compiled("canonical", tree, {}, 0))
        left_out = {"kind": "Pod", "metadata": {"name": "p"}, "spec": tree}
        keep = {"kind": WHOLE, "metadata": WHOLE}
        _same(_python("kept", left_out, keep, {}, 0), _compiled("kept", left_out, keep, {}, 0))
        _same(_python("refusable", tree, 0), _compiled("refusable", tree, 0))


@pytest.mark.parametrize("levels", [MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH])
def test_pruning_along_a_deep_path_is_refused_at_the_same_depth(levels):
    """A keep that follows the nesting down (the keep's own depth checks)."""
    for as_list in (False, True):
        for innermost in ("x", {"x": 1}):
            tree = _nested(levels, innermost, as_list)
            keep: Any = WHOLE
            for _ in range(levels):
                keep = [keep] if as_list else {"a": keep, "b": None}
            _same(_python("kept", tree, keep, {}, 0), _compiled("kept", tree, keep, {}, 0))


@pytest.mark.parametrize("length", [fastyaml._SHARED_LENGTH - 1, fastyaml._SHARED_LENGTH,
                                    fastyaml._SHARED_LENGTH + 1])
def test_strings_are_shared_up_to_the_same_length(length):
    """Values shorter than the bound are one object per text; longer ones are kept as
    parsed; keys always shared: in mappings, lists and at the top."""
    text = "v" * length
    tree = {"a": "".join(text), "b": ["".join(text)], "".join(text): {"c": "".join(text)}}
    for action in ("canonical", "kept"):
        args = (tree, {}, 0) if action == "canonical" else (tree, {"a": WHOLE, "b": [WHOLE], "*": WHOLE}, {}, 0)
        python, compiled = _python(action, *args), _compiled(action, *args)
        _same(python, compiled)
        _same(_python("canonical", text[:], {}, 0), _compiled("canonical", "".join(text), {}, 0))


def _real_texts() -> list[tuple[str, str]]:
    texts = []
    for root in (REALWORLD.parent, FIXTURES):
        for path in sorted(root.rglob("*.y*ml")):
            try:
                texts.append((str(path), path.read_text(encoding="utf-8-sig")))
            except (UnicodeDecodeError, OSError):
                continue
    return texts


def _fast(text: str, compiled: bool, keep: bool) -> Any:
    saved = fastyaml._compiled
    fastyaml._compiled = COMPILED if compiled else None
    fastyaml._strings.clear()
    try:
        built: set[int] = set()
        docs = fastyaml.fast_documents(text, KEEP_OF if keep else None, built if keep else None)
        if docs is None:
            return None
        return (pickle.dumps([d.body for d in docs], protocol=5), [(d.line, d.column, d.item_positions)
                                                                   for d in docs], len(built))
    finally:
        fastyaml._compiled = saved
        fastyaml._strings.clear()


def test_every_real_file_reads_the_same_compiled_or_not():
    """Every YAML file of ../shared/realworld and the fixtures, whole and pruned by kind:
    the same bodies (shared strings and types included), lines and pruned objects."""
    texts = _real_texts()
    assert len(texts) > 200
    fast = pruned = 0
    for path, text in texts:
        for keep in (False, True):
            compiled = _fast(text, True, keep)
            assert compiled == _fast(text, False, keep), (path, keep)
            fast += compiled is not None
            pruned += compiled[2] if compiled else 0
    assert fast > 300 and pruned > 100  # most files took the fast path; workloads were pruned


def test_every_kept_kind_prunes_the_same():
    """Each kind's keep of inventory/kept.py, on a body holding every field it names
    and others: the same pruned object either way."""
    def filled(keep: Any, depth: int = 0) -> Any:
        if keep is WHOLE or keep is None or depth > 6:
            return {"x": [1, "two", 3.5, None, True], "y": "text"}
        if isinstance(keep, list):
            return [filled(keep[0], depth + 1), None, filled(keep[0], depth + 1)]
        return {**{key: filled(sub, depth + 1) for key, sub in keep.items()}, "other": {"z": [493]}}
    assert KEPT
    for kind, keep in KEPT.items():
        body = {**filled(keep), "kind": kind}
        _same(_python("kept", body, keep, {(int, 493): "0755"}, 0),
              _compiled("kept", body, keep, {(int, 493): "0755"}, 0))


def _allocated(action, repeat: int) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        action()  # what is allocated once (the interpreter's own caches) is not a leak
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(repeat):
            action()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("case", ["built", "pruned", "refused-key", "refused-deep", "refused-left-out"])
def test_nothing_leaks_built_or_refused(case):
    """A reference the C code forgets to drop keeps its object alive forever: a thousand
    rebuilds, refusals half-way through included, leave nothing behind."""
    tree = {"kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b" * 100}},
            "spec": {"containers": [{"name": "c", "env": [{"name": "N", "value": 1.5}]}, None],
                     "other": {"z": [1, 2, {"q": "r"}]}}}
    keep = {"kind": WHOLE, "metadata": {"name": WHOLE}, "spec": {"containers": [{"name": WHOLE}]}}
    restore = {(float, 1.5): "1.5", (int, 2): "2"}
    if case == "refused-key":
        tree["spec"]["containers"][0]["env"].append({(1, 2): "x"})
    elif case == "refused-deep":
        tree["spec"]["containers"][0]["deep"] = _nested(MAX_DEPTH, {"x": "y"})
    elif case == "refused-left-out":
        tree["spec"]["other"]["bad"] = {frozenset({1}): "x"}

    def action() -> None:
        strings: dict[str, str] = {}
        try:
            if case == "pruned" or case.startswith("refused"):
                COMPILED.kept(tree, keep, strings, restore, 0)
            if case != "refused-left-out":
                COMPILED.canonical(tree, strings, restore, 0)
        except fastyaml._NotFast:
            pass
    assert _allocated(action, 1000) < 4096


def test_the_inputs_are_left_as_they_were():
    tree = {"a": ["x" * 80, "y", {"b": 2}], "c": {"d": [1.5, None]}}
    before = pickle.dumps(tree)
    counts = [sys.getrefcount(tree["a"][0]), sys.getrefcount(tree["c"])]
    keep = {"a": WHOLE, "c": {"d": WHOLE}}
    for _ in range(10):
        COMPILED.canonical(tree, {}, {(float, 1.5): "1.5"}, 0)
        COMPILED.kept(tree, keep, {}, {}, 0)
    assert pickle.dumps(tree) == before
    assert [sys.getrefcount(tree["a"][0]), sys.getrefcount(tree["c"])] == counts


def test_wrong_arguments_are_type_errors_not_crashes():
    with pytest.raises(TypeError):
        COMPILED.canonical({}, [], {}, 0)
    with pytest.raises(TypeError):
        COMPILED.kept({}, WHOLE, {}, None, 0)
    with pytest.raises(TypeError):
        COMPILED.refusable("text", 0)
    with pytest.raises(TypeError):
        COMPILED.canonical({})


def test_hcpscan_compiled_0_takes_the_python_path():
    """The switch for comparing the two (docs/manual.md), in a fresh interpreter."""
    probe = "from hcpscan.sources import fastyaml; print(fastyaml.COMPILED)"
    env = {**os.environ, "HCPSCAN_COMPILED": "0", "PYTHONPATH": str(ROOT)}
    off = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    env["HCPSCAN_COMPILED"] = ""
    on = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert (off.stdout.strip(), on.stdout.strip()) == ("False", "True")


# A key that is no str, int or float runs Python code when it is hashed (yaml-rs never
# gives one; a caller of the module may): code that changes the tree being read.
_CHANGED_WHILE_READ = '''
import re
from hcpscan.inventory.kept import WHOLE
from hcpscan.sources import fastyaml

class Emptying:
    """A key whose hash, once armed (after the tree is made), empties a list or mapping
    of the tree, as a caller's code may."""
    armed = False
    made = []
    def __init__(self, victim):
        self.victim = victim
    def __hash__(self):
        if Emptying.armed:
            self.victim.clear()
            # new mappings take the memory of those just freed: one still read is wrong
            Emptying.made.extend({"*": None, "w": None} for _ in range(4))
        return 1
    def __eq__(self, other):
        return self is other

def outcome(run):
    Emptying.armed = True
    try:
        return repr(run())
    except (RuntimeError, fastyaml._NotFast) as error:
        return type(error).__name__
    finally:
        Emptying.armed = False

def cases():
    listed = []
    listed.extend([{Emptying(listed): 1}, "x", {"a": [1, 2]}] * 3)
    yield "canonical", listed, None
    listed = []
    listed.extend([{Emptying(listed): 1}, {"a": 1}] * 4)
    yield "kept", listed, [WHOLE]
    mapping = {"a": {}, "b": ["x"] * 5, **{str(i): [i] for i in range(20)}}
    mapping["a"][Emptying(mapping)] = {"b": [1, 2, 3]}
    yield "canonical", {"top": mapping}, None
    mapping = {"a": {}, "b": ["x"] * 5}
    mapping["a"][Emptying(mapping)] = {"b": [1, 2, 3]}
    yield "kept", {"top": mapping}, {"top": {"a": {"*": WHOLE}, "b": WHOLE}}
    keep = {"*": {"*": WHOLE}, "z": WHOLE}
    yield "kept", {"a": {Emptying(keep): "v", "w": {"x": 1}}, "z": 2}, keep

for compiled in (False, True):
    for action, tree, keep in cases():
        if action == "canonical":
            run = ((lambda: fastyaml._compiled.canonical(tree, {}, {}, 0)) if compiled else
                   (lambda: fastyaml._canonical(tree, {}.setdefault, {}, 0)))
        else:
            run = ((lambda: fastyaml._compiled.kept(tree, keep, {}, {}, 0)) if compiled else
                   (lambda: fastyaml._kept(tree, keep, {}.setdefault, {}, 0)))
        print(re.sub(" at 0x[0-9a-f]+", "", outcome(run)))
'''


def test_a_tree_changed_while_it_is_read_is_no_crash():
    """Entries taken out of the tree while it is read are held (not freed under the C
    code), a list's length is read again at each entry and a mapping that changed size
    is an error, as Python's iteration does: the same outcome either way, in a fresh
    interpreter (before, a crash of it)."""
    run = subprocess.run([sys.executable, "-c", _CHANGED_WHILE_READ], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    python, compiled = lines[:len(lines) // 2], lines[len(lines) // 2:]
    assert len(python) == 5 and python == compiled
    assert "RuntimeError" in python and any(line.startswith("[") for line in python)


_LOOKING_THROUGH_THE_COLLECTOR = '''
import gc
from hcpscan.inventory.kept import WHOLE
from hcpscan.sources import fastyaml

class Looking:
    """A key whose hash reads every list of 13 entries the collector tracks."""
    def __hash__(self):
        for each in gc.get_objects():
            if type(each) is list and len(each) == 13:
                list(each)
        return 1
    def __eq__(self, other):
        return self is other

tree = [{Looking(): 1}] + ["x"] * 12
print(fastyaml._compiled.canonical(tree, {}, {}, 0) == fastyaml._canonical(tree, {}.setdefault, {}, 0),
      fastyaml._compiled.kept(tree, [WHOLE], {}, {}, 0) == fastyaml._kept(tree, [WHOLE], {}.setdefault, {}, 0))
'''


def test_a_list_is_never_seen_half_built():
    """A list is made at its length with empty slots and filled: until it is full the
    collector does not track it, so Python code a key's hash runs cannot reach an empty
    slot through gc.get_objects (before, reading one crashed the interpreter)."""
    run = subprocess.run([sys.executable, "-c", _LOOKING_THROUGH_THE_COLLECTOR], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert (run.returncode, run.stdout.strip()) == (0, "True True"), run.stderr[-2000:]


def test_a_depth_out_of_range_is_refused_as_python_does_or_an_error():
    """A depth past every bound refuses a collection as the Python code does (it wrapped
    round before and built it); one below 0 is an error (a cycle ran the recursion past
    the C stack's end: a crash), in a fresh interpreter."""
    for depth in (MAX_DEPTH, MAX_DEPTH + 1, sys.maxsize, 2**70):
        for tree in ({"a": {}}, [[]], {}, []):
            _same(_python("canonical", tree, {}, depth), _compiled("canonical", tree, {}, depth))
            _same(_python("kept", tree, {"a": WHOLE}, {}, depth), _compiled("kept", tree, {"a": WHOLE}, {}, depth))
            _same(_python("refusable", tree, depth), _compiled("refusable", tree, depth))
        assert _compiled("canonical", "text", {}, depth)[:2] == ("ok", "text")
    probe = ("from hcpscan.sources import fastyaml\n"
             "cycle = []\ncycle.append(cycle)\n"
             "for depth in (-1, -10**9, -2**70):\n"
             "    for call in (lambda: fastyaml._compiled.canonical(cycle, {}, {}, depth),\n"
             "                 lambda: fastyaml._compiled.kept(cycle, [[[0]]], {}, {}, depth),\n"
             "                 lambda: fastyaml._compiled.refusable(cycle, depth)):\n"
             "        try:\n            call()\n        except ValueError as error:\n"
             "            print(error)\n")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines() == ["depth must be 0 or more"] * 9


def test_the_module_is_built_from_the_source_beside_it():
    """setup.py stamps the module with its source's CRC-32: the one this checkout built
    is the source it holds, so the tests above hold that source to the Python code."""
    source = ROOT / "hcpscan" / "sources" / "_rebuild.c"
    assert COMPILED.SOURCE == zlib.crc32(source.read_bytes())
    assert fastyaml._built_from_source_beside(COMPILED, str(source))


def test_a_module_built_from_another_source_is_not_used(tmp_path):
    """A module built in place stays when the source is edited or pulled: then it is not
    the code it stands for, and the Python code reads instead; one whose ``configure``
    takes other arguments (another hcpscan's) neither, and hcpscan still starts."""
    source = tmp_path / "_rebuild.c"
    source.write_bytes(b"/* edited */\n")
    built = types.SimpleNamespace(SOURCE=zlib.crc32(b"/* edited */\n"))
    assert fastyaml._built_from_source_beside(built, str(source))
    assert not fastyaml._built_from_source_beside(types.SimpleNamespace(SOURCE=built.SOURCE ^ 1), str(source))
    assert not fastyaml._built_from_source_beside(types.SimpleNamespace(), str(source))  # not stamped
    assert fastyaml._built_from_source_beside(types.SimpleNamespace(), str(tmp_path / "absent.c"))  # a wheel
    probe = ("import sys, types, zlib\n"
             "stale = types.ModuleType('hcpscan.sources._rebuild')\n"
             "stale.SOURCE = zlib.crc32(open(sys.argv[1], 'rb').read()) ^ int(sys.argv[2])\n"
             "def configure(*args):\n"
             "    if len(args) != 6:\n        raise TypeError('configure() takes 6 arguments')\n"
             "stale.configure = configure\n"
             "sys.modules['hcpscan.sources._rebuild'] = stale\n"
             "from hcpscan.sources import fastyaml\n"
             "print(fastyaml.COMPILED, fastyaml.fast_documents('a: 1\\n')[0].body)\n")
    for flip in ("1", "0"):  # another source; this source, another configure
        run = subprocess.run([sys.executable, "-c", probe, str(ROOT / "hcpscan" / "sources" / "_rebuild.c"), flip],
                             capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
        assert (run.returncode, run.stdout.strip()) == (0, "False {'a': 1}"), run.stderr[-2000:]


def test_a_module_without_a_function_this_code_calls_is_not_used():
    """An older build (a wheel installed over another, no source beside it) may lack a
    function added since: the Python code reads, and hcpscan still starts."""
    probe = ("import sys, types\n"
             "old = types.ModuleType('hcpscan.sources._rebuild')\n"
             "real = __import__('hcpscan.sources._rebuild', fromlist=['x'])\n"
             "for name in dir(real):\n"
             "    if name != sys.argv[1]:\n"
             "        setattr(old, name, getattr(real, name))\n"
             "sys.modules['hcpscan.sources._rebuild'] = old\n"
             "sys.modules['hcpscan.sources']._rebuild = old\n"
             "from hcpscan.sources import fastyaml\n"
             "print(fastyaml.COMPILED, fastyaml.fast_documents('a: 1\\n')[0].body)\n")
    for missing, used in (("scalar_tokens", False), ("item_positions", False),
                          ("document_markers", False), ("nothing", True)):
        run = subprocess.run([sys.executable, "-c", probe, missing], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
        assert (run.returncode, run.stdout.strip()) == (0, f"{used} {{'a': 1}}"), run.stderr[-2000:]
