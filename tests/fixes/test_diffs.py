"""The linear-time unified diff: a valid unified diff that turns the old text into the new
(difflib's own where the change is not ambiguous among alike lines)."""

from __future__ import annotations

import difflib
import random
import re

import pytest

from hcpscan.fixes.diffs import unified


def _edited(lines: list[str], rng: random.Random) -> list[str]:
    out = list(lines)
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(out))
        kind = rng.choice(("insert", "replace", "delete"))
        if kind == "insert":
            out[at:at] = [f"new {rng.random()}\n"] * rng.randint(1, 3)
        elif kind == "replace" and at < len(out):
            out[at] = out[at].rstrip("\n") + ",x\n"
        elif at < len(out):
            del out[at]
    return out


def _apply(lines: list[str], diff: str) -> list[str]:
    """Apply a unified diff, checking every context and removed line against ``lines``."""
    out, at = [], 0
    body = diff.splitlines(keepends=True)[2:]
    i = 0
    while i < len(body):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", body[i])
        assert m, body[i]
        start = int(m[1]) - (0 if m[2] == "0" else 1)
        out += lines[at:start]
        at = start
        i += 1
        while i < len(body) and not body[i].startswith("@@"):
            tag, text = body[i][0], body[i][1:]
            if tag in " -":
                assert lines[at] == text
                at += 1
            if tag in " +":
                out.append(text)
            i += 1
    return out + lines[at:]


@pytest.mark.parametrize("seed", range(60))
def test_the_diff_turns_the_old_text_into_the_new(seed: int):
    rng = random.Random(seed)
    lines = [f"line {rng.randint(0, 5)}\n" for _ in range(rng.randint(0, 60))]
    after = _edited(lines, rng)
    diff = unified(lines, after, "a/f", "b/f")
    assert _apply(lines, diff) == after
    assert (diff == "") == (lines == after)


def test_distinct_lines_give_difflibs_diff():
    lines = [f"line {i}\n" for i in range(40)]
    after = lines[:10] + ["new\n"] + lines[10:30] + ["line 30,x\n"] + lines[31:]
    assert unified(lines, after, "a/f", "b/f") == "".join(
        difflib.unified_diff(lines, after, "a/f", "b/f"))


def test_a_last_line_without_newline_is_marked():
    assert unified(["a\n", "b"], ["a\n", "b\n", "c\n"], "a/f", "b/f").splitlines()[-3:] == [
        "\\ No newline at end of file", "+b", "+c"]


# -- the window a fix's change is diffed in: the same change as diffing the whole texts --

def _whole(before: str, after: str, context: int = 3) -> tuple[int, list[str], list[str]]:
    return 0, before.splitlines(keepends=True), after.splitlines(keepends=True)


def _texts(rng: random.Random) -> tuple[str, str]:
    alike = ["  - name: web\n", "    image: nginx\n", "---\n", "kind: Pod\n", "\n", "  ports:\n"]
    lines = [rng.choice(alike) if rng.random() < 0.7 else f"line {rng.randint(0, 40)}\n"
             for _ in range(rng.randint(0, 120))]
    after = _edited(lines, rng) if rng.random() < 0.9 else list(lines)
    before, changed = "".join(lines), "".join(after)
    if rng.random() < 0.2:  # no newline at the end, on either side
        before, changed = before.rstrip("\n"), changed.rstrip("\n")
    if rng.random() < 0.05:
        changed += "\u2028x\n"  # a line break str.splitlines honours besides "\n"
    return before, changed


@pytest.mark.parametrize("seed", range(400))
def test_a_change_diffed_in_its_window_is_the_change_diffed_whole(
        seed: int, monkeypatch: pytest.MonkeyPatch):
    from hcpscan.fixes import plan

    rng = random.Random(seed)
    before, after = _texts(rng)
    def secret(text: str) -> set[int]:  # a Secret's data lines, found in each text alike
        return {i for i, line in enumerate(text.split("\n")) if "image" in line or "line 1" in line}

    hidden = (secret(before), secret(after)) if seed % 3 == 0 else None
    windowed = plan.file_change("x.yaml", before, after, hidden)
    monkeypatch.setattr(plan, "window", _whole)
    assert windowed == plan.file_change("x.yaml", before, after, hidden)


def test_the_window_holds_the_change_and_its_context_only():
    from hcpscan.fixes.diffs import window

    before = "".join(f"line {i}\n" for i in range(1000))
    after = before.replace("line 500\n", "line 500 changed\n")
    skipped, a, b = window(before, after)
    assert skipped == 497 and len(a) == len(b) == 7
    assert a[3] == "line 500\n" and b[3] == "line 500 changed\n"


@pytest.mark.parametrize(("old", "new"), [
    ("spec:\n  - a\n", "spec:\n    - a\n"),  # a line indented further
    ("k: 1\nv: 2\n", "k: 1\n# v: 2\n"),  # a line commented out
    ("k: 1\nv: 2\nw: 3\n", "k: 1\nw: 3\n"),  # the next line only looks like the end of one
])
def test_text_put_before_a_line_is_a_change_of_that_line(old: str, new: str):
    # the texts' common end starts a line of the old text but inside one of the new: the
    # line it starts in the new text is not the old one (the diff was empty: no change)
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    diff = unified(a, b, "a/x", "b/x")
    assert diff == "".join(difflib.unified_diff(a, b, "a/x", "b/x"))
    assert _apply(a, diff) == b
