"""The Rust fast path reads exactly what PyYAML reads, or steps aside.

``fast_documents`` must return either None (PyYAML then reads the file) or the
very documents, values and positions the composing loader gives. These tests
hold it to that on every real file we have, on the places YAML 1.1 and 1.2
differ, and on a few thousand generated documents built from those places; and
they check that it is actually taken on what dumps contain, so a change that
quietly sends everything to the slow path fails too.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hcpscan.core.yamldocs import YamlSyntaxError, _composed_documents
from hcpscan.sources import fastyaml
from hcpscan.sources.fastyaml import fast_documents
from tests.conftest import FIXTURES, REALWORLD, SHARED, requirement

_yaml_rs = requirement(lambda: fastyaml.AVAILABLE, "yaml-rs (a dependency)")


def _outcome(documents):
    # repr: NaN is not equal to itself, and True == 1 == 1.0 would hide a changed type
    try:
        return [(repr(d.body), d.doc_index, d.line, d.column, d.item_positions) for d in documents]
    except YamlSyntaxError as exc:
        return ("error", exc.message, exc.line)


def _agrees(text: str) -> bool:
    """The fast path stepped aside, or gave what the composing loader gives."""
    fast = fast_documents(text)
    return fast is None or _outcome(fast) == _outcome(_composed_documents(text))


def _files():
    roots = [REALWORLD, FIXTURES, SHARED / "conformance"]
    return sorted(p for root in roots for p in root.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))


def test_every_real_file_reads_the_same_and_dumps_take_the_fast_path():
    # Agreement is required of every file; the fast-path share is measured on dumps
    # only (real-world estates and our fixtures), not on the conformance suites'
    # hand-written inputs, whose growth must not decide what "dumps" means.
    fast_bytes = total_bytes = 0
    for path in _files():
        text = path.read_text(encoding="utf-8-sig")
        fast = fast_documents(text)
        if fast is not None:
            assert _outcome(fast) == _outcome(_composed_documents(text)), path
        if SHARED / "conformance" in path.parents:
            continue
        fast_bytes += len(text) if fast is not None else 0
        total_bytes += len(text)
    assert fast_bytes / total_bytes > 0.9


def test_the_example_must_gather_is_read_entirely_by_the_fast_path():
    gather = FIXTURES / "example"
    for path in gather.rglob("*.yaml"):
        assert fast_documents(path.read_text()) is not None, path


# Where YAML 1.1 (PyYAML, kubectl) and YAML 1.2 (yaml-rs) differ, and the shapes
# positions are taken from. Each must read the same either way; the ones named in
# FAST must also take the fast path.
STREAMS = {
    "hash that is a float in 1.2": "metadata:\n  annotations:\n    config-hash: 2e848593\n",
    "exponent without dot": "a: 1e3\nb: [1.0e3, 2E5]\n",
    "same float another way": "a: 2e5\nb: 200000.0\n",
    "octal": "mode: 0755\nother: 755\n",
    "octal alone": "mode: 0755\n",
    "leading zero": "a: 09\n",
    "1.2 octal": "a: 0o17\n",
    "binary": "a: 0b101\n",
    "underscores": "a: 1_000\nb: 1_0.5\n",
    "sexagesimal": "a: 1:20\nb: 190:20:30.15\n",
    "booleans 1.1": "a: yes\nb: No\nc: ON\nd: off\n",
    "boolean key": "on:\n  push: true\n",
    "quoted booleans": "a: 'yes'\nb: \"on\"\n",
    "null and true": "a: ~\nb: null\nc: True\nd: FALSE\ne:\n",
    "infinity": "a: .inf\nb: -.Inf\nc: .NaN\n",
    "hex and signs": "a: 0x1F\nb: +12\nc: -0\nd: +0x1F\n",
    "merge key": "base: &b {x: 1}\nd:\n  <<: *b\n",
    "value key": "a: =\n",
    "tags": "a: !!str 0755\nb: !!binary aGVsbG8=\n",
    "alias in flow": "a: &x 1\nb: [*x]\n",
    "complex key": "? a\n: b\n",
    "block scalar with 1.1 words": "script: |\n  enabled: yes\n  mode: 0755\nb: 1\n",
    "folded and chomped": "a: >-\n  on\n  off\nb: |+\n  x\n\nc: 1\n",
    "sequence block scalar": "args:\n- |\n  case $x in *:*) y ;; esac\n- -c\n",
    "comment that looks like a block scalar": "key: # see: |\n  child: yes\n",
    "quoted string with a colon and a bar": "a: \"x: |\n  y: yes\"\nb: 1\n",
    "multi-line plain": "a: this is\n  on\nb: 1\n",
    "shell in flow text": "a: \"[ ! -f x ] && rm -rf /s/.[!.]* ${a[*]}\"\n",
    "jsonpath in json text": "a: '{\"fieldPath\":\"spec.containers[?(@.name==\\\"x\\\")].image\"}'\n",
    "list": "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: a}\n"
            "-   kind: Pod\n    metadata:\n      name: b\n",
    "indented items": "kind: List\nitems:\n  - a: 1\n  -\n    b: 2\n  - # note\n    c: 3\nmetadata: {}\n",
    "items first": "items:\n- a: 1\nkind: List\n",
    "items flow": "kind: List\nitems: [{a: 1}, {b: 2}]\n",
    "items empty": "kind: List\nitems: []\n",
    "items in a quoted string line": "kind: List\nitems:\n- a: \"x\n- y\"\n- b: 2\n",
    "documents": "---\n---\na: 1\n---\n",
    "documents without final newline": "a: 1\n---",
    "comments and markers": "# c\n\n--- # x\na: 1\n--- |\n  text\n---\n- 1\n- 2\n",
    "crlf": "kind: List\r\nitems:\r\n- a: 1\r\n- b: 0755\r\n",
    "lone carriage returns": "kind: List\ritems:\r- a: 1\r- b: 2\r",
    "directive": "%YAML 1.1\n---\na: yes\n",
    "document end": "a: 1\n...\n---\nb: 2\n",
    "byte order mark inside": "a: 1\n---\n\ufeffb: 2\n",
    "next line": "a: \"x\x85y\"\n",
    "control character": "a: \"x\x07\"\n",
    "duplicate keys": "a: 1\na: 2\n",
    "json": "{\"kind\": \"List\", \"items\": [{\"a\": 1e5}, {\"b\": 0.5}]}\n",
    "root scalar": "0755\n",
    "root sequence": "- a\n- on\n",
    "tab separated": "a:\t1e3\n",
    "error": "a: [1\n",
    # found by review: each was read differently by the fast path before it was fixed
    "block scalar ending the input": "data:\n  s: |\n    #!/bin/sh\n    echo hi",
    "folded scalar ending the input": "a: >\n  x",
    "empty block scalar": "a: |\n",
    "empty block scalar before a marker": "a: |\n---\nb: 1\n",
    "empty block scalar of blanks": "a: |\n  \n",
    "empty entry block scalar": "- |\n",
    "nested sequence octal": "- - 0755\n",
    "nested sequence boolean": "a:\n- - yes\n",
    "nested sequence exponent": "- - 1e3\n",
    "underscore number": "a: _1\n",
    "underscore key": "_1:\n- x\n",
    "single-quoted flow key": "{'a':1e3}\n",
    "single-quoted flow key nested": "a: {'b':0755}\n",
    "empty items entry": "kind: List\nitems:\n-\n- b\n",
    "tab after a dash": "kind: List\nitems:\n  - a\n  -\tb\n",
    "tab-only line": "kind: List\nitems:\n- a\n\t\n- b\n",
    "tab-only first line": "\t\na: 1\n",
    "tab in block scalar indentation": "a: |\n  x\n\t\n",
    "root folded scalar at column 0": "--- >\nx\n",
    "flow key without value": "a: [b:]\n",
    "collection keys": "[a, b]: c\n",
    "mapping key": "{a: 1}: b\n",
    "surrogate pair escape": "a: \"\\ud83d\\ude00\"\n",
    "merge key in a nested sequence": "- - <<: {a: 1}\n",
}
FAST = {"hash that is a float in 1.2", "octal alone", "1.2 octal", "quoted booleans", "null and true",
        "block scalar with 1.1 words", "sequence block scalar", "shell in flow text",
        "jsonpath in json text", "list", "indented items", "items empty", "documents",
        "crlf"}


def test_duplicate_keys_go_to_pyyaml_which_says_where_both_are():
    assert fast_documents(STREAMS["duplicate keys"]) is None
    (doc,) = _composed_documents(STREAMS["duplicate keys"])
    assert [(d.key, d.first_line, d.second_line) for d in doc.duplicates] == [("a", 1, 2)]


def test_template_actions_read_as_keys_go_to_pyyaml():
    # yaml-rs makes "{{ .Values.x }}" a frozenset key; PyYAML refuses an unhashable key.
    assert fast_documents("a: {{ .Values.x }}\n") is None


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_yaml_1_1_readings_are_kept(name):
    assert _agrees(STREAMS[name])


@pytest.mark.parametrize("name", sorted(FAST))
def test_plain_dump_shapes_take_the_fast_path(name):
    assert fast_documents(STREAMS[name]) is not None


def test_a_float_hash_is_put_back_to_its_string():
    (doc,) = fast_documents(STREAMS["hash that is a float in 1.2"])
    assert doc.body["metadata"]["annotations"]["config-hash"] == "2e848593"


def test_list_items_keep_their_own_lines():
    (doc,) = fast_documents(STREAMS["indented items"])
    assert doc.item_positions == [(3, 5), (5, 5), (7, 5)]


@pytest.mark.parametrize("text", [
    "".join(" " * i + "a:\n" for i in range(1200)),
    "- " * 20000 + "x\n",
    "a:\n" + "- " * 20000 + "x\n",
])
def test_deep_nesting_is_left_to_pyyaml(text):
    # the Rust parser recurses; a deep enough document would crash the process
    assert fast_documents(text) is None


_SCALARS = ["1", "0755", "09", "0o17", "1e3", "2e5", "200000.0", "1.0e+3", "1_000", "1:20", "0x1F",
            "+12", "-0", ".inf", "yes", "No", "on", "OFF", "true", "null", "~", "", "'yes'", '"0755"',
            "10.0.0.0/8", "100m", "1Gi", "2001-12-14", "a b", "x: y", "*", "a#b", "-", "<<", "="]


def _generated(rng: random.Random, depth: int = 0) -> str:
    """A small block-style document from the places the two YAML versions differ."""
    lines = []
    indent = "  " * depth
    for i in range(rng.randint(1, 4)):
        key = rng.choice(["k%d" % i, rng.choice(_SCALARS) or "e", "items"])
        shape = rng.random()
        if shape < 0.45 or depth > 2:
            lines.append(f"{indent}{key}: {rng.choice(_SCALARS)}")
        elif shape < 0.65:
            lines.append(f"{indent}{key}:")
            for _ in range(rng.randint(0, 3)):
                lines.append(f"{indent}- {rng.choice(_SCALARS)}")
        elif shape < 0.8:
            lines.append(f"{indent}{key}: |")
            lines.extend(f"{indent}  {rng.choice(_SCALARS)}: {rng.choice(_SCALARS)}" for _ in range(2))
        elif shape < 0.9:
            lines.append(f"{indent}{key}: [{', '.join(rng.choice(_SCALARS) for _ in range(3))}]")
        else:
            lines.append(f"{indent}{key}:")
            lines.append(_generated(rng, depth + 1))
    return "\n".join(lines)


def test_generated_documents_read_the_same_either_way():
    rng = random.Random(20261121)
    taken = 0
    for _ in range(3000):
        docs = [_generated(rng) for _ in range(rng.randint(1, 3))]
        text = "\n---\n".join(docs) + "\n"
        assert _agrees(text), text
        taken += fast_documents(text) is not None
    assert taken > 100  # the generator is not only producing what the fast path refuses


# -- the line memo and the token search (issue 27): what a file reads never depends on
# which files were read before it, and every generated plain scalar, wherever it stands,
# reads as PyYAML reads it or sends the file to PyYAML.

def _cold(text: str):
    """The fast path's outcome with nothing remembered from earlier files."""
    fastyaml._clean_lines.clear()
    fastyaml._line_tokens.clear()
    fast = fast_documents(text)
    return None if fast is None else _outcome(fast)


def _warm(text: str):
    fast = fast_documents(text)
    return None if fast is None else _outcome(fast)


def _real_texts():
    """Every YAML or JSON file under ../shared/realworld (the must-gather archive's
    members too) and fixtures/."""
    import tarfile

    roots = [SHARED / "realworld", FIXTURES]
    for path in sorted(p for root in roots for p in root.rglob("*")):
        if path.suffix in (".yaml", ".yml", ".json"):
            yield str(path), path.read_text(encoding="utf-8-sig")
        elif path.name.endswith((".tar.gz", ".tgz")):
            with tarfile.open(path) as archive:
                for member in archive:
                    if member.isfile() and member.name.endswith((".yaml", ".yml", ".json")):
                        data = archive.extractfile(member).read()  # type: ignore[union-attr]
                        try:
                            yield f"{path.name}:{member.name}", data.decode("utf-8-sig")
                        except UnicodeDecodeError:
                            continue


def test_every_real_file_reads_the_same_whatever_was_read_before():
    texts = list(_real_texts())
    assert len(texts) > 1000  # the archive's members are there
    cold = [_cold(text) for _, text in texts]
    for (name, text), alone in zip(reversed(texts), reversed(cold)):  # each after all others
        assert _warm(text) == alone, name


def test_every_real_file_the_fast_path_takes_reads_as_pyyaml_reads_it():
    fastyaml._clean_lines.clear()
    fastyaml._line_tokens.clear()
    taken = 0
    for name, text in _real_texts():
        fast = fast_documents(text)
        if fast is not None:
            taken += 1
            assert _outcome(fast) == _outcome(_composed_documents(text)), name
    assert taken > 1000


@pytest.mark.parametrize(("first", "second"), [
    # a line seen first inside a block scalar (text), then as structure: its boolean,
    # its anchor, its octal still count in the second file
    ("s: |\n  on: 1\n", "on: 1\n"),
    ("s: |\n  a: &x 1\n", "a: &x 1\nb: *x\n"),
    ("s: |\n  m: 0755\n", "k: 1\nm: 0755\nn: 755\n"),
    # and the other way round: structure first, then the same line as text only
    ("on: 1\n", "s: |\n  on: 1\n"),
    ("k: 1\nm: 0755\nn: 755\n", "s: |\n  m: 0755\n  n: 755\n"),
    # a line that is not plain in one file (a directive) is not remembered as plain
    ("a: 1\n%YAML 1.1\n", "b: 2\n%YAML 1.1\n"),
    # the first line is read by the first line's rules, a later equal line by its own
    ("  \tx: 1\n", "a:\n  \tx: 1\n"),
    ("on: 1\n", "a: 1\non: 1\n"),
])
def test_a_line_read_in_one_file_is_judged_afresh_in_the_next(first, second):
    assert _agrees(second)
    alone = _cold(second)
    _cold(first)
    assert _warm(second) == alone


def test_a_line_seen_as_text_still_sends_its_boolean_to_pyyaml():
    _cold("s: |\n  enabled: yes\n")
    assert fast_documents("enabled: yes\n") is None
    (doc,) = _composed_documents("enabled: yes\n")
    assert doc.body == {"enabled": True}


# Plain scalars from the pieces YAML 1.1 and 1.2 read differently: signs, leading zeros,
# radix prefixes in both cases, underscores, sexagesimal colons, dots, exponents,
# infinities and NaNs, timestamps, YAML 1.1's boolean words, merge and value keys,
# anchors, aliases, tags; and pieces that make a string in both.
_PIECES = ["0", "00", "1", "7", "8", "19", "59", "60", "0o", "0O", "0x", "0X", "0b", "0B", "1F",
           "ab", "_", ".", "..", ":", ":5", "e", "E", "e+", "e-", "inf", "Inf", "INF", "nan",
           "NaN", "NAN", "2001-12-14", "t", "T", " ", "Z", "21:59:43.10", "-05:00", "y", "n",
           "o", "Mi", "m", "/", "@", "%"]
_WORDS = ["yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "n",
          "true", "True", "TRUE", "false", "FALSE", "null", "Null", "~", "<<", "=", "-", "---", "?",
          "&a", "*a", "!a", "!!str", "&", "*", "!", "%x", ".inf", "-.Inf", "+.inf", ".NaN", "0755",
          "2e848593", "1_000", "1:20", "0x1F", "0o17", "_1", "+_1", "1e5_0", "08", "10.0.0.0/8"]

_scalar = st.one_of(
    st.sampled_from(_WORDS),
    st.builds(lambda sign, parts: sign + "".join(parts).strip(),
              st.sampled_from(["", "-", "+", "."]), st.lists(st.sampled_from(_PIECES), min_size=1, max_size=5)),
).filter(lambda s: s != "" and "\n" not in s)


def _entry(shape: int, i: int, a: str, b: str) -> str:
    return [f"k{i}: {a}", f"{a}: k{i}", f"l{i}:\n- {a}\n-   {b}", f"f{i}: [{a}, {b}]",
            f"g{i}: {{{a}: {b}}}", f"b{i}: |\n  {a}: {b}", f"q{i}: '{a}'", f"- {a}: {b}",
            f"n{i}:\n  {a}: {b}\n  m{i}: {b}"][shape]


_document = st.lists(
    st.builds(lambda shape, a, b: (shape, a, b), st.integers(0, 8), _scalar, _scalar),
    min_size=1, max_size=6,
).map(lambda items: "\n".join(_entry(shape, i, a, b) for i, (shape, a, b) in enumerate(items)) + "\n")


@settings(max_examples=600, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.lists(_document, min_size=1, max_size=3))
def test_generated_plain_scalars_read_as_pyyaml_reads_them_or_go_to_pyyaml(documents):
    text = "---\n".join(documents)
    assert _agrees(text), text
    assert _warm(text) == _cold(text), text  # and whatever was remembered before


@pytest.mark.parametrize(("given", "expected"), [(None, "0"), ("1", "1")])
def test_the_parsers_allocator_commits_arenas_as_used_unless_the_user_says(given, expected):
    # yaml-rs's mimalloc reads its options when the library loads: fastyaml sets the
    # default while importing it (8 MiB less resident per parsing process, measured), and
    # only then: the programs hcpscan starts (kubectl kustomize, exec credential plugins)
    # and a program importing hcpscan get the environment the user gave
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_")}
    env["MIMALLOC_VERBOSE"] = "1"  # mimalloc prints the options it read
    if given is not None:
        env["MIMALLOC_ARENA_EAGER_COMMIT"] = given
    code = ("import os, subprocess, sys; import hcpscan.sources.fastyaml as f; "
            "assert 'yaml_rs' in sys.modules; f.fast_documents('a: 1\\n'); "
            "print(os.environ.get('MIMALLOC_ARENA_EAGER_COMMIT')); sys.stdout.flush(); "
            "subprocess.run(['sh', '-c', 'echo ${MIMALLOC_ARENA_EAGER_COMMIT:-unset}'], check=True)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert f"option 'arena_eager_commit': {expected}" in out.stderr
    assert out.stdout.split() == ([str(given), given] if given is not None else ["None", "unset"])


def test_a_file_of_more_new_lines_than_the_memo_holds_reads_the_same_and_is_not_kept(monkeypatch):
    monkeypatch.setattr(fastyaml, "_LINES_LIMIT", 4)
    big = "".join(f"k{i}: {value}\n" for i, value in enumerate(["1", "0755", "yes", "x", "2e5", "'on'"] * 3))
    alone = _cold(big)
    assert alone is None  # its boolean sends it to PyYAML, remembered or not
    for name in sorted(STREAMS):
        text = STREAMS[name]
        cold = _cold(text)
        _warm(big)
        assert len(fastyaml._clean_lines) <= 8
        assert _warm(text) == cold, name


def _whole_text_tokens(text: str):
    """The search the line memo stands in for: every check and pattern run over the
    whole text, each file on its own (as fastyaml did before it remembered lines)."""
    f = fastyaml
    if text.startswith(("%", "...")) or "\n%" in text or "\n..." in text:
        return None
    if ("\r" in text and text.count("\r") != text.count("\r\n")) or (text and not text.endswith("\n")):
        return None
    if "\t" in text and (text.startswith(("\t", "-\t")) or f._TABBED.search(text)):
        return None
    if f._NOT_1_1_TEXT.search(text) or any(p.search(text) for p in f._NOT_1_1):
        return None
    if f._DEEP.search("\n" + text[:1000]) or f._DEEP.search(text):
        return None
    if f._UNUSUAL.search(text):
        return None
    spans = f._structure(text)
    if spans is None:
        return None
    block, flow = set(), set()  # (token, the rest of its line)
    has_flow = text.count("[") != text.count("[]") or text.count("{") != text.count("{}")

    def found(pattern, searched, start=0, end=None):
        end = len(searched) if end is None else end
        return {(m.group(1), searched[m.end(1):].split("\n", 1)[0]) for m in pattern.finditer(searched, start, end)}

    for start, end in spans:
        for pattern in (f._AFTER_COLON, f._AFTER_DASH):
            block.update(found(pattern, text, start, end))
        block.update(found(f._LINE_START, text, max(start - 1, 0), end))
        for pattern in f._IN_FLOW if has_flow else ():
            flow.update(found(pattern, text, start, end))
    block.update(found(f._LINE_START, "\n" + text[:200]))
    tokens = set()
    for pairs, names in ((block, None), (flow, f._ANCHOR_NAME)):
        for raw, rest in pairs:
            token = raw.rstrip(":") or raw
            if token[0] in "&*!" and len(token) > 1 and (names is None or names.match(token, 1)):
                return None
            if token == "?":
                return None
            if not _ends_a_scalar(raw, rest):
                continue  # the first word of a longer plain scalar: a string either way
            if token[0].isalpha():
                tokens.update({token} & f._BOOLEANS_1_1)
            elif token[0] not in "&*!?%" and token not in ("-", "---"):
                tokens.add(token)
    return tokens


def _ends_a_scalar(raw: str, rest: str) -> bool:
    """A key, a token that may begin a YAML 1.1 timestamp, or one after which the line
    holds only blanks, then nothing, a comment, a flow indicator or a value indicator."""
    if raw.endswith(":") or re.match(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}", raw):
        return True
    rest = rest.lstrip(" \t")
    rest = rest[:-1] if rest.endswith("\r") else rest
    return not rest or rest[0] in "#,]}" or (rest[0] == ":" and rest[1:2] in ("", " ", "\t", "\r"))


def test_the_line_memo_finds_what_searching_each_whole_real_file_finds():
    texts = [text for _, text in _real_texts()]
    fastyaml.forget()
    for text in texts + texts[::-1]:  # cold, then each after all others
        assert fastyaml._scalar_tokens(text) == _whole_text_tokens(text)


_free_text = st.lists(st.sampled_from(
    list("ab:-?&*![]{},'\" \t\n#|>0o1e9._yesnO%<=~\r")
    + ["\n---\n", "\n- ", ": ", "\n  ", "|\n", "on", "yes", "0755", "&a", "*a", "[*", "!!", "\n..."]),
    max_size=60).map("".join)


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.lists(st.one_of(_document, _free_text), min_size=1, max_size=4))
def test_the_line_memo_finds_what_searching_each_whole_text_finds(texts):
    # one file after another, so each is searched with what the earlier ones left
    for text in texts:
        assert fastyaml._scalar_tokens(text) == _whole_text_tokens(text), text


def test_long_lines_are_searched_but_not_remembered():
    # a one-line value (JSON, a certificate, an annotation) is hardly ever repeated;
    # remembered, the memo held the input's text alive through the whole load
    fastyaml.forget()
    texts = [f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n"
             f"data: {{json: '{'x' * 100_000}{i}', mode: 0755, flag: {'on' if i == 2 else 'x'}}}\n"
             f"list: [{i}{'y' * 5_000}, 0o17]\n" for i in range(3)]
    for text in texts + texts:
        assert fastyaml._scalar_tokens(text) == _whole_text_tokens(text)
        assert max(map(len, fastyaml._clean_lines)) <= 512
        assert sum(map(len, fastyaml._clean_lines)) < 2_000
    assert fast_documents(texts[2]) is None  # its 'on' is YAML 1.1's True: PyYAML reads it
    assert _warm(texts[0]) == _cold(texts[0])
    assert _agrees(texts[0]) and _agrees(texts[2])


def test_a_large_file_is_searched_as_one_text_not_split_into_lines():
    # split, its lines as strings and the sets of them cost several times the text (a
    # 52 MB ConfigMap of one block scalar: 653 MiB peak against 294 MiB searched whole),
    # for more lines than the memo keeps anyway
    import tracemalloc

    fastyaml.forget()
    rows = "".join(f"    row {i}: 0{i % 8}7\n" for i in range(100_000))
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: a}\n"
            "data:\n  mode: 0755\n  list: [1, 0o17]\n  log: |\n" + rows + "  after: 2e5\n")
    assert len(text) > fastyaml._WHOLE_TEXT
    tracemalloc.start()
    try:
        tokens = fastyaml._scalar_tokens(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert tokens == _whole_text_tokens(text) == {"0755", "1", "0o17", "2e5"}
    assert peak < 3 * len(text)
    assert not fastyaml._clean_lines
    assert _agrees(text)


def test_the_readings_memo_is_bounded_in_number_and_in_length(monkeypatch):
    """A token's two readings are remembered across files, but never more than
    ``_READINGS_LIMIT`` of them, and never one longer than ``_TOKEN_LENGTH``: an input of
    long or endlessly distinct numbers cannot grow the memo with itself."""
    fastyaml.forget()
    long_number = "1" * (fastyaml._TOKEN_LENGTH + 1)
    text = f"big: {long_number}\nport: 0o17\nsmall: 1.5\n"
    fast = _cold(text)
    assert fast is not None and fast == _outcome(_composed_documents(text))
    assert {"1.5", "0o17"} <= set(fastyaml._readings)
    assert long_number not in fastyaml._readings and long_number not in fastyaml._agreeing
    assert _warm(text) == fast  # read again, the same
    monkeypatch.setattr(fastyaml, "_READINGS_LIMIT", 3)
    many = "".join(f"k{i}: {i}.5\n" for i in range(10))
    assert _cold(many) == _outcome(_composed_documents(many))
    assert 0 < len(fastyaml._readings) <= 3
    fastyaml.forget()


# Tokens whose two readings agree or differ, numbers given both ways (2e5 and 200000.0,
# 0755 and 493, 0x1F and 31, 1:20 and 80), a too-long agreeing number never remembered.
_RESTORATION_TOKENS = ["2e5", "200000.0", "2E5", "0755", "493", "0x1F", "31", "1:20", "80", "1_000",
                       "1000", "1e3", "1000.0", "+1", "1", ".5", "0.5", "-0.0", "0.0", "0e0", "yes",
                       "~", "null", ".nan", ".inf", "1.0e+3", "0o17", "017", "15",
                       "200000." + "0" * (fastyaml._TOKEN_LENGTH + 1)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sets(st.sampled_from(_RESTORATION_TOKENS), max_size=8), min_size=1, max_size=6),
       st.booleans())
def test_restorations_read_only_the_unsure_tokens_and_find_what_reading_all_finds(files, cold_each):
    """``_restorations`` reads only the tokens not known to agree; what it decides is
    what reading every token decides (``_restorations_read_whole``), whatever the memo
    holds from files before and whether it starts cold."""
    fastyaml.forget()
    try:
        for tokens in files:
            if cold_each:
                fastyaml.forget()
            fast = fastyaml._restorations(set(tokens))
            whole = fastyaml._restorations_read_whole(set(tokens))
            fastyaml.forget()
            alone = fastyaml._restorations_read_whole(set(tokens))
            assert _typed(fast) == _typed(whole) == _typed(alone), tokens
    finally:
        fastyaml.forget()


def _typed(restore):
    return None if restore is None else sorted((repr(k), type(v).__name__, repr(v)) for k, v in restore.items())


def test_every_real_file_restores_what_reading_all_its_tokens_restores():
    fastyaml.forget()
    compared = restored = 0
    for name, text in _real_texts():
        tokens = fastyaml._scalar_tokens(text)
        if tokens is None:
            continue
        fast = fastyaml._restorations(tokens)
        assert _typed(fast) == _typed(fastyaml._restorations_read_whole(tokens)), name
        compared += 1
        restored += bool(fast)
    fastyaml.forget()
    assert compared > 1000 and restored  # some real files put numbers back (hashes read as floats)


_ENTRY_SHAPES = ["- kind: Pod\n{i}  metadata: {{name: a}}\n", "-   kind: Pod\n", "- # a comment\n{i}  kind: Pod\n",
                 "-\n{i}  kind: Pod\n", "- kind: Pod # a comment\n", "- {{kind: Pod}}\n", "- 'x'\n", "- x\r\n",
                 "-  \n{i}  kind: Pod\n", "- kind: Pod\n\n", "- kind: Pod\n{i}# between\n"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ENTRY_SHAPES), min_size=1, max_size=6), st.sampled_from(["", "  "]),
       st.booleans())
def test_list_entries_of_every_shape_have_pyyamls_lines_and_columns(entries, indent, kind_first):
    """An entry's position is found on its dash's line when its content starts there, one
    blank after the dash; anywhere else as before: either way where PyYAML puts it."""
    items = "".join(indent + entry.format(i=indent) for entry in entries)
    head = "kind: List\napiVersion: v1\n" if kind_first else "apiVersion: v1\n"
    text = f"{head}items:\n{items}metadata: {{}}\n" + ("" if kind_first else "kind: List\n")
    fast = fast_documents(text)
    assert _agrees(text), text
    if fast is not None and "\r" not in text:
        assert len(fast[0].item_positions) == len(entries)


_FIRST_WORDS = ["no", "No", "yes", "on", "OFF", "=", "<<", "~", "1e3", "0755", "1:20", "09:19:08.719605",
                "2e5", ".5", "+1", "1_000", "...", "0x1F", "2001-12-14", "2001-12-14t21:59:43.10",
                "2001-12-14 21:59:43.10", "null"]
_AFTER_WORDS = [" nodes available", " -5", " -05:00", " Z", " # a comment", " :x", " : value",
                "  ", "", ",x", " , y", "] z", " and: more", "\tx"]


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(_FIRST_WORDS), st.sampled_from(_AFTER_WORDS),
       st.sampled_from(["key: {}\n", "- {}\n", "{}: v\n", "key: [{}]\n", "key: {{a: {}}}\n",
                        "key:\n  - {}\n", "a: b\nkey: {}\nc: d\n", "k: x\n  {}\n"]))
def test_a_special_word_beginning_a_longer_scalar_reads_as_pyyaml_reads_it(first, after, shape):
    """A token YAML 1.1 reads otherwise (a boolean word, a number, a time, "=") followed on
    its line by more words is a string both ways and does not send the file to PyYAML;
    anything that may end the scalar there (a comment, a value or flow indicator, blanks to
    the line's end) or a date that may go on as a timestamp still counts."""
    text = "apiVersion: v1\n" + shape.format(first + after)
    fastyaml.forget()
    assert _agrees(text), text


def test_messages_beginning_with_a_boolean_word_take_the_fast_path():
    """Events' messages ("no nodes available to schedule pods") sent a real must-gather's
    event files to PyYAML: they are strings in YAML 1.1 and 1.2."""
    text = ("apiVersion: v1\nitems:\n- kind: Event\n  message: no nodes available to schedule pods\n"
            "  reason: FailedScheduling\n- kind: Event\n  message: On the node, off by one\n"
            "  note: = i self.socket\nkind: List\nmetadata: {}\n")
    fastyaml.forget()
    fast = fast_documents(text)
    assert fast is not None and _agrees(text)
    assert fast[0].body["items"][0]["message"] == "no nodes available to schedule pods"
    for whole in ("message: no\n", "message: no # why\n", "message: on # why\n",
                  "message: [no, yes]\n", "no : x\n"):
        fastyaml.forget()
        assert fast_documents("apiVersion: v1\n" + whole) is None, whole  # to PyYAML, as before
        assert _agrees("apiVersion: v1\n" + whole)
