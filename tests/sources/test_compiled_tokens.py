"""The compiled token pre-scan (``_rebuild.scalar_tokens``) is ``fastyaml._scalar_tokens``
for every ASCII text: the same token set, or None for the same texts, on generated texts
built from every edge of the patterns it stands for, on every real file (plain and inside
archives), mutated real files and the benchmark's generated dump; hostile callers get an
error, never a crash; and the fast path uses it only where it is defined (ASCII)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hcpscan.core.yamldocs import MAX_DEPTH
from hcpscan.sources import fastyaml
from tests.conftest import ROOT, require
from tests.sources.test_fast_yaml import _real_texts

COMPILED = fastyaml._compiled


@pytest.fixture(autouse=True)
def _compiled_is_built() -> None:
    require(COMPILED is not None and hasattr(COMPILED, "scalar_tokens"),
            "hcpscan.sources._rebuild (`pip install -e .` builds it with a C compiler)")


def _python(text: str) -> set[str] | None:
    return fastyaml._scalar_tokens(text)


def _same(text: str) -> set[str] | None:
    compiled = COMPILED.scalar_tokens(text)
    python = _python(text)
    assert compiled == python, repr(text[:2000])
    assert compiled is None or all(type(token) is str for token in compiled)
    return compiled


# The pieces texts are made of: every character class the patterns and checks name, the
# words YAML 1.1 and 1.2 read differently in every case form, numbers in every notation,
# node properties, flow and block indicators, quoted scalars, comments, block scalar
# headers, document markers and directives, tabs, carriage returns, escapes, and
# characters PyYAML refuses.
_WORDS = ["yes", "Yes", "YES", "yEs", "no", "No", "NO", "nO", "on", "On", "ON", "oN", "off", "Off", "OFF",
          "y", "Y", "n", "N", "o", "O", "true", "True", "FALSE", "null", "Null", "NULL", "~",
          "0755", "0o17", "0x1F", "0b101", "08", "1_000", "1__0", "_1", "+_1", "1e5_0", "2e5", "2E+5", "2e848593",
          "1:20", "190:20:30", "-1:20", "1.5", ".5", "5.", "-.5", "+1", "-0", "-0.0", "0.", "1e3", "1.0e+3",
          ".inf", "-.Inf", "+.INF", ".nan", ".NaN", ".NAN", "inf", "nan",
          "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-1-1", "2001-12-14 21:59:43.10 -5",
          "2001-12", "20011-2-3", "2001-123-4", "2001-12-1x",
          "&a", "*a", "!a", "!!str", "!!int", "&", "*", "!", "&)", "*)", "!.", "&-", "?", "?x", "%x", "%",
          "<<", "=", "-", "--", "---", "----", "--flag=1", "-x", "+", ".", "..", "...", "_", "<", "<x",
          "a", "b", "key", "x.y", "10.0.0.0/8", "100m", "1Gi", "v1", "k8s", "1a", "0a1b-2c"]
_PUNCTUATION = [": ", ":", "- ", "-", "? ", " ", "  ", "\t", ",", ", ", "[", "]", "{", "}", "[]", "{}",
                "'", '"', '":', "':", '": ', "': ", "#", " #", "# c", "|", ">", "|-", "|+", ">2", "|2-",
                "| # c", "> #", "\\", "\\u", "\\uD7", "\\n", "] :x", "\r\n", "\n", "\n\n", "\n---\n"]
# What makes either side refuse the whole text: taken rarely, so most texts are answered.
_REFUSING = ["\\ud800", "\\uDBFF", "]:", "}:", "] :", "]:\t", ":]", ":}", ":,", "--- |", "---  >", "\r",
             "\n...\n", "\n%YAML 1.1\n", "\n%", "\x00", "\x0b", "\x0c", "\x1f", "\x7f", "\x85", "\n\t",
             "\n  -\t"]
_INDENTS = ["", " ", "  ", "    ", "\t", " \t", "- ", "- - ", "-\t", "  - ", "? ", "-", "--- ", "... "]


def _line(rng: random.Random) -> str:
    parts = [rng.choice(_INDENTS)]
    for _ in range(rng.randint(0, 6)):
        pick = rng.random()
        parts.append(rng.choice(_WORDS if pick < 0.55 else _PUNCTUATION if pick < 0.985 else _REFUSING))
    return "".join(parts)


def _block(rng: random.Random) -> list[str]:
    """A key with a block scalar, its content indented, less indented, empty, or ending the text."""
    indent = rng.choice(["", "  ", "- ", "  - "])
    header = rng.choice(["|", ">", "|-", ">+", "|2", "| # c", "|\t", "> #x: y"])
    lines = [f"{indent}{rng.choice(['k', 'run', 'on', '0755'])}:{rng.choice([' ', '  ', '	', ''])}{header}"]
    for _ in range(rng.randint(0, 4)):
        lines.append(rng.choice(["", " ", "  ", "   ", "    ", "\t"]) + _line(rng).lstrip("\n"))
    return lines


def _text(rng: random.Random) -> str:
    lines: list[str] = []
    if rng.random() < 0.3:  # line starts near the 200th character, where fastyaml stops looking at them
        lines.append("#" + "x" * rng.randint(150, 205))
    for _ in range(rng.randint(1, 12)):
        shape = rng.random()
        if shape < 0.15:
            lines.extend(_block(rng))
        elif shape < 0.2:
            lines.append(rng.choice(" \t?-") * rng.randint(MAX_DEPTH - 2, MAX_DEPTH + 2) + rng.choice(["1", "a: 1"]))
        elif shape < 0.23:
            lines.append("k: " + "".join(rng.choice("01234-:._e") for _ in range(rng.randint(200, 600))))
        else:
            lines.append(_line(rng))
    text = "\n".join(lines)
    ending = rng.random()
    return text + ("\n" if ending < 0.85 else "\r\n" if ending < 0.95 else "")


def test_generated_texts_find_the_same_tokens():
    rng = random.Random(20261127)
    outcomes = {"tokens": 0, "empty": 0, "none": 0}
    for _ in range(30_000):
        text = _text(rng)
        if not text.isascii():
            with pytest.raises(ValueError):
                COMPILED.scalar_tokens(text)
            assert fastyaml._tokens(text) == _python(text)
            continue
        found = _same(text)
        outcomes["none" if found is None else "tokens" if found else "empty"] += 1
    # the generator reaches every outcome, not only texts both refuse
    assert min(outcomes.values()) > 1_000, outcomes


_piece = st.sampled_from(_WORDS + _PUNCTUATION + _REFUSING + _INDENTS)


@settings(max_examples=3_000, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_piece, max_size=40).map("".join), st.sampled_from(["\n", "\r\n", "", "\n\n"]))
def test_texts_of_any_pieces_find_the_same_tokens(body, ending):
    text = body + ending
    if text.isascii():
        _same(text)


@settings(max_examples=500, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=300))
def test_any_ascii_text_finds_the_same_tokens(text):
    _same(text)
    _same(text + "\n")


def _every_real_text() -> list[tuple[str, str]]:
    texts = list(_real_texts())
    assert len(texts) > 1_000  # the archive's members are there
    return texts


def test_every_real_file_finds_the_same_tokens():
    """Every YAML or JSON file under ../shared/realworld (the archive's members too) and
    the fixtures: the same answer, and most of them ASCII texts that carry tokens."""
    compared = carrying = 0
    for name, text in _every_real_text():
        if not text.isascii():
            assert fastyaml._tokens(text) == _python(text), name
            continue
        compared += 1
        carrying += bool(_same(text))
    assert compared > 1_000 and carrying > 500


def test_mutated_real_files_find_the_same_tokens():
    """Real files cut, spliced and sprinkled with the patterns' characters at random places."""
    rng = random.Random(27)
    texts = [text for _, text in _every_real_text() if text.isascii() and len(text) < 200_000]
    for _ in range(4_000):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(text) + 1)
            kind = rng.random()
            if kind < 0.5:
                text = text[:at] + rng.choice(_PUNCTUATION + _REFUSING + _WORDS) + text[at:]
            elif kind < 0.8:
                text = text[:at] + text[at + rng.randint(1, 40):]
            else:
                other = rng.choice(texts)
                cut = rng.randrange(len(other) + 1)
                text = text[:at] + other[cut:cut + rng.randint(1, 400)]
        if text.isascii():
            _same(text)


def generated_dump(out: Path, seed: int) -> list[Path]:
    """The YAML files of a management cluster of 2 hosted clusters, as bench/run.py makes them."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import generate
    finally:
        sys.path.remove(str(ROOT / "bench"))
    info = generate.generate_mgmt(2, seed=seed, out=out)
    files = sorted(Path(info["path"]).rglob("*.yaml"))
    assert len(files) > 50
    return files


def test_the_benchmarks_generated_dump_finds_the_same_tokens(tmp_path):
    files = generated_dump(tmp_path, 3)
    carrying = sum(bool(_same(path.read_text(encoding="utf-8"))) for path in files)
    assert carrying > 20


def test_a_large_text_finds_the_same_tokens_as_the_whole_text_search():
    """Above ``_WHOLE_TEXT`` the Python code searches the text whole; the compiled scan
    reads every text the same way."""
    rows = "".join(f"    row {i}: 0{i % 8}7\n" for i in range(100_000))
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: a}\n"
            "data:\n  mode: 0755\n  list: [1, 0o17]\n  log: |\n" + rows + "  after: 2e5\n"
            + "".join(f"  k{i}: {i}e{i % 3}\n" for i in range(50_000)))
    assert len(text) > fastyaml._WHOLE_TEXT
    found = _same(text)
    assert found is not None and {"0755", "1", "0o17", "2e5", "7e1"} <= found and "017" not in found


@pytest.mark.parametrize(("text", "expected"), [
    ("a: 0755\nb: [1, on]\n", {"0755", "1", "on"}),
    ("a: 0755\nb: on\n", {"0755", "on"}),
    ("a: [x]\nb: {c: 1:20}\n", {"1:20"}),
    ("a: 1: 2\n", {"1"}),  # the first match takes "1:", so ": 2" is not looked at
    ('f: {"a":1":2}\n', {'1":2'}),
    ("#" + "x" * 200 + "\ns: |\n  on: 0755\nt: 1\n", {"1"}),  # a block scalar's content is text
    ("s: |\n  on: 0755\nt: 1\n", {"1", "on"}),  # but line starts in the first 200 characters count
    ("s: |\n\nt: 1\n", None),  # an empty block scalar
    ("a: &x 1\n", None), ("a: *x\n", None), ("a: !!str 1\n", None), ("? a\n: 1\n", None),
    ("a: [*)]\n", set()),  # "*)" in flow is text, not an alias
    ("a: no nodes available\n", set()),  # the first word of a longer scalar
    ("a: 2001-12-14 21:59:43.10 -5\n", {"2001-12-14"}),
    ("a: 1\r\nb: 2\r\n", {"1", "2"}),
    ("a: 1\rb: 2\n", None), ("a: 1\n", {"1"}), ("a: 1", None), ("", set()), ("\n", set()),
    ("%YAML 1.1\n---\na: 1\n", None), ("a: 1\n...\n", None), ("a: 1\n  \tb: 2\n", None),
    ("a: x\x00\n", None), ("a: \\ud800\n", None), ("[a]: 1\n", None), ("--- |\n  x\n", None),
    (" " * MAX_DEPTH + "a: 1\n", None), ("x\n" + " " * MAX_DEPTH + "a: 1\n", None),
    ("x\n" + " " * (MAX_DEPTH - 1) + "a: 1\n", {"1"}),
])
def test_each_pattern_and_check_answers_as_its_definition(text, expected):
    assert _same(text) == expected


def test_only_ascii_texts_are_taken_and_the_fast_path_uses_the_python_code_for_others():
    text = "a: 0755\nb: é\n"
    with pytest.raises(ValueError):
        COMPILED.scalar_tokens(text)
    assert fastyaml._tokens(text) == _python(text) == {"0755"}
    assert fastyaml._tokens("a: 0755\n") == {"0755"}


class _Text(str):
    pass


def test_wrong_arguments_are_errors_not_crashes():
    for wrong in (b"a: 1\n", None, 1, ["a: 1\n"], bytearray(b"a: 1\n")):
        with pytest.raises(TypeError):
            COMPILED.scalar_tokens(wrong)
    with pytest.raises(TypeError):
        COMPILED.scalar_tokens()
    with pytest.raises(TypeError):
        COMPILED.scalar_tokens("a: 1\n", "b: 2\n")
    assert COMPILED.scalar_tokens(_Text("a: 0755\n")) == _python("a: 0755\n") == {"0755"}


_HOSTILE = r'''
import resource
from hcpscan.sources import fastyaml
scan, python = fastyaml._compiled.scalar_tokens, fastyaml._scalar_tokens
mib = 1 << 20
lines = [
    "k: |\n" + " x\n" * (4 * mib),                        # a block scalar of 4 million lines
    "a: 1\n" * (4 * mib),                                  # 4 million lines, one token
    ": | #" * (2 * mib) + "\n",                            # headers on one line, all refused
    "[" * (8 * mib) + "\n",                                # flow openers without end
    "-" * (8 * mib) + "\n", " " * (8 * mib) + "\n", ":" * (8 * mib) + "\n",
    "] " * (4 * mib) + ":\n", "\n" * (16 * mib),
]
tokens = [
    "- " + "1" * (64 * mib) + "\n",                        # one token of 64 MiB
    "".join(f"- {i}\n" for i in range(2_000_000)),        # two million distinct tokens
]
def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
built = peak()
answers = [scan(text) for text in lines]
scanned = peak()
answers += [scan(text) for text in tokens]
for _ in range(3):  # nothing kept between calls
    scan(tokens[1])
for text, answer in zip(lines + tokens, answers):
    assert answer == python(text), text[:40]
print("ok", built, scanned)
'''


def test_hostile_texts_are_answered_in_bounded_memory():
    """Huge and degenerate texts, in a fresh interpreter: the same answer as the Python
    code, no crash, and no memory beyond the tokens found (no line split out: 16 million
    lines cost nothing)."""
    run = subprocess.run([sys.executable, "-c", _HOSTILE], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    word, built, scanned = run.stdout.split()
    assert word == "ok" and int(scanned) - int(built) < 8, run.stdout


def test_archive_members_are_among_the_real_texts():
    """The real texts the tests above read include the must-gather archive's members."""
    archives = [p for p in (ROOT.parent / "shared" / "realworld").rglob("*") if p.name.endswith((".tar.gz", ".tgz"))]
    require(archives, "../shared/realworld's archives")
    names = {name for name, _ in _every_real_text()}
    with tarfile.open(archives[0]) as archive:
        member = next(m.name for m in archive if m.isfile() and m.name.endswith((".yaml", ".yml")))
    assert f"{archives[0].name}:{member}" in names


def test_nothing_leaks_whatever_the_answer():
    """A table, a span list or a reference the C code forgets stays allocated forever: a
    thousand calls of each text scan, on every path (tokens, None, refusals, errors),
    leave nothing behind."""
    import gc
    import tracemalloc

    tokens = "".join(f"k{i}: {i}e{i % 3}\n" for i in range(300)) + "s: |\n  x\n" * 20
    refused = tokens + "a: &x 1\n"
    listed = "kind: List\nitems:\n" + "- a\n" * 50 + "---\nb: 1\n"
    n = len(listed)

    def action() -> None:
        for text in (tokens, refused, "s: |\n\nt: 1\n", "é: 1\n", b"x"):
            try:
                COMPILED.scalar_tokens(text)
            except (TypeError, ValueError):
                pass
        for count in (50, 51, 0, n + 1):
            COMPILED.item_positions(listed, 0, n, count, 0, 0, 1)
        COMPILED.document_markers(listed)
        for wrong in ((listed, 0, n + 1, 1, 0, 0, 1), ("é", 0, 1, 1, 0, 0, 1)):
            with pytest.raises(ValueError):
                COMPILED.item_positions(*wrong)

    gc.collect()
    tracemalloc.start()
    try:
        action()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(1_000):
            action()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 4096, grown


def _table_hash(token: bytes) -> int:
    """The compiled scan's hash of a token (FNV-1a, 64 bits, folded): no secret in it."""
    h = 14695981039346656037
    for byte in token:
        h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h ^ (h >> 29)


def test_tokens_made_to_collide_are_read_by_the_definition_in_linear_time():
    # 700 numbers whose hash falls in the same 16 slots of every table of up to 4,096:
    # one run of taken slots longer than the scan probes (each insert would walk it all)
    crafted, candidate = [], 10**6
    while len(crafted) < 700:
        candidate += 1
        if _table_hash(str(candidate).encode()) & 0xFFF < 16:
            crafted.append(candidate)
    text = "items:\n" + "".join(f"- {n}\n" for n in crafted)
    assert COMPILED.scalar_tokens(text) is False  # not answered there ...
    fastyaml.forget()
    assert fastyaml._tokens(text) == _python(text) == {str(n) for n in crafted}  # ... but here
    # as many tokens written as anyone would: answered by the compiled scan
    plain = "items:\n" + "".join(f"- {n}\n" for n in range(10**6, 10**6 + 5000))
    assert _same(plain) == {str(n) for n in range(10**6, 10**6 + 5000)}
