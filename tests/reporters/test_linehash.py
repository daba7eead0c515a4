"""GitHub's primaryLocationLineHash: our implementation against GitHub's own test table."""

from __future__ import annotations

import json

import pytest

from hcpscan.reporters.linehash import LineHashCache, line_hashes
from tests.reporters.reports import SARIF_SCHEMAS

VECTORS = json.loads((SARIF_SCHEMAS / "github-line-hash-vectors.json").read_text())["cases"]


@pytest.mark.parametrize("case", VECTORS, ids=[f"case{i}" for i in range(len(VECTORS))])
def test_every_published_vector_matches(case):
    assert line_hashes(case["text"]) == case["hashes"]


def test_there_are_vectors_to_match():
    assert len(VECTORS) >= 9


def test_line_endings_and_blanks_do_not_change_a_line_hash():
    lf = "kind: NetworkPolicy\nspec:\n  podSelector: {}\n"
    crlf = lf.replace("\n", "\r\n")
    reindented = "kind:NetworkPolicy\nspec:\n\t\tpodSelector:   {}\n"
    assert line_hashes(lf) == line_hashes(crlf) == line_hashes(reindented)


def test_identical_blocks_are_told_apart_by_their_count():
    hashes = line_hashes("ab\n" * 200)
    digest = hashes[0].split(":")[0]
    assert hashes[:3] == [f"{digest}:1", f"{digest}:2", f"{digest}:3"]


def test_text_beyond_the_window_does_not_reach_back():
    # the hash of line 1 sees only the first 100 kept characters
    head = "x" * 120 + "\n"
    assert line_hashes(head + "a\n")[0] == line_hashes(head + "b\n")[0]
    assert line_hashes("x\na\n")[0] != line_hashes("x\nb\n")[0]


def test_characters_outside_the_basic_plane_count_as_two_units():
    # GitHub reads UTF-16 code units; a surrogate pair must hash like the pair
    assert line_hashes("\U0001F600\n") != line_hashes("\uFFFD\n")
    assert len(line_hashes("\U0001F600\nb")) == 2


def test_cache_reads_each_file_once_and_knows_no_line_past_the_end():
    reads: list[str] = []

    def read_text(path: str) -> str | None:
        reads.append(path)
        return "a\nb\n" if path == "f.yaml" else None

    cache = LineHashCache(read_text)
    assert cache.get("f.yaml", 1) == line_hashes("a\nb\n")[0]
    assert cache.get("f.yaml", 2) == line_hashes("a\nb\n")[1]
    assert cache.get("f.yaml", 99) is None
    assert cache.get("missing.yaml", 1) is None
    assert reads == ["f.yaml", "missing.yaml"]
