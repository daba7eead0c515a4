"""Unified diffs of a file a few fixes changed, in time linear in the file.

difflib's matcher is slow on files of many alike lines (a dump of Deployments),
and a fix changes a few places: the common head and tail of the two texts are
cut off first, and only the changed middle is matched."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

Opcode = tuple[str, int, int, int, int]


def opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """difflib's opcodes of ``a`` -> ``b``, the common head and tail matched directly."""
    ta, tb = "".join(a), "".join(b)
    head = ta.count("\n", 0, _shared_head(ta, tb))  # whole lines inside the shared head
    start = sum(map(len, a[:head]))
    shared = min(_shared_head(ta[::-1], tb[::-1]), min(len(ta), len(tb)) - start)
    # whole lines of the common end in both texts: it may start a line of one and lie
    # inside a line of the other (text put before a line: "  - a" indented to "    - a")
    tail = min(_whole_lines_from(ta, len(ta) - shared), _whole_lines_from(tb, len(tb) - shared))
    tail = min(tail, len(a) - head, len(b) - head)
    out: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    middle = _few_edits(a[head:len(a) - tail], b[head:len(b) - tail])
    out += [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle]
    if tail:
        out.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return out


# Edits (lines deleted or inserted) a fix makes at most before the diff stops looking for
# the shortest one and shows the changed middle replaced whole: still a correct patch.
MAX_EDITS = 2_000


def _few_edits(a: list[str], b: list[str]) -> list[Opcode]:
    """The opcodes of a shortest edit of ``a`` into ``b`` (Myers' greedy algorithm), in
    time linear in the lines times the edits: a fix that inserts a Secret after a document
    followed by 500,000 alike comment lines is no quadratic match (difflib's matcher
    took minutes there). Past ``MAX_EDITS`` the middle is one replacement."""
    n, m = len(a), len(b)
    if not n or not m:
        return [("insert", 0, 0, 0, m)] if m else [("delete", 0, n, 0, 0)] if n else []
    ids: dict[str, int] = {}
    x_ids = [ids.setdefault(line, len(ids)) for line in a]
    y_ids = [ids.setdefault(line, len(ids)) for line in b]
    v = {1: 0}
    trace = []
    for d in range(min(n + m, MAX_EDITS) + 1):
        trace.append(dict(v))
        for k in range(-d, d + 1, 2):
            x = v[k + 1] if k == -d or (k != d and v[k - 1] < v[k + 1]) else v[k - 1] + 1
            y = x - k
            while x < n and y < m and x_ids[x] == y_ids[y]:
                x, y = x + 1, y + 1
            v[k] = x
            if x >= n and y >= m:
                return _grouped(_backtrack(trace, n, m))
    return [("replace", 0, n, 0, m)]


def _backtrack(trace: list[dict[int, int]], x: int, y: int) -> list[tuple[str, int, int]]:
    """The single-line steps (tag, i, j) from the end back, as the trace leads."""
    steps = []
    for d in range(len(trace) - 1, -1, -1):
        v, k = trace[d], x - y
        if d == 0:
            prev_x = prev_y = 0
        else:
            prev_k = k + 1 if k == -d or (k != d and v[k - 1] < v[k + 1]) else k - 1
            prev_x = v[prev_k]
            prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            x, y = x - 1, y - 1
            steps.append(("equal", x, y))
        if d:
            steps.append(("insert", x, prev_y) if x == prev_x else ("delete", prev_x, y))
            x, y = prev_x, prev_y
    return steps[::-1]


def _grouped(steps: list[tuple[str, int, int]]) -> list[Opcode]:
    """Single-line steps folded into difflib's opcodes (a run of deletions and insertions
    between equal lines is one ``replace``)."""
    out: list[Opcode] = []
    i = j = 0
    at = 0
    while at < len(steps):
        tag = steps[at][0]
        i1, j1 = i, j
        if tag == "equal":
            while at < len(steps) and steps[at][0] == "equal":
                i, j, at = i + 1, j + 1, at + 1
            out.append(("equal", i1, i, j1, j))
            continue
        while at < len(steps) and steps[at][0] != "equal":
            if steps[at][0] == "delete":
                i += 1
            else:
                j += 1
            at += 1
        out.append(("replace" if i > i1 and j > j1 else "delete" if i > i1 else "insert", i1, i, j1, j))
    return out


# Line breaks ``str.splitlines`` honours besides "\n": where a text holds one, its lines
# are not counted by "\n" alone, and ``window`` keeps the whole text (each looked for with
# ``in``: 40 times faster than one character-class search over a file of megabytes).
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def window(before: str, after: str, context: int = 3) -> tuple[int, list[str], list[str]]:
    """(lines before the window, its lines in ``before``, its lines in ``after``): the lines
    a change touches and ``context`` lines around them. A diff of the two windows, its line
    numbers moved on by the lines before, is the diff of the texts — a fix changes one
    object of a file that may hold thousands, and only its lines are split and matched."""
    if any(c in before or c in after for c in _OTHER_BREAKS):
        return 0, before.splitlines(keepends=True), after.splitlines(keepends=True)
    head = _shared_head(before, after)
    start = before.rfind("\n", 0, head) + 1  # the line of the first difference
    for _ in range(context):
        if start == 0:
            break
        start = before.rfind("\n", 0, start - 1) + 1
    shared = min(_shared_tail(before, after), min(len(before), len(after)) - head)
    end = len(before) - shared  # the shared tail starts here, maybe mid-line (in either)
    moved = end + len(after) - len(before)
    if (end > 0 and before[end - 1] != "\n") or (moved > 0 and after[moved - 1] != "\n"):
        newline = before.find("\n", end)
        end = len(before) if newline < 0 else newline + 1
    for _ in range(context):
        if end >= len(before):
            break
        newline = before.find("\n", end)
        end = len(before) if newline < 0 else newline + 1
    return (before.count("\n", 0, start), before[start:end].splitlines(keepends=True),
            after[start:end + len(after) - len(before)].splitlines(keepends=True))


def _shared_tail(x: str, y: str) -> int:
    """How many trailing characters ``x`` and ``y`` share (``_shared_head`` from the end)."""
    n, done, block = min(len(x), len(y)), 0, 1 << 16
    while done < n and block:
        end = min(n, done + block)
        if x[len(x) - end:len(x) - done] == y[len(y) - end:len(y) - done]:
            done = end
        else:
            block //= 2
    return done


def _shared_head(x: str, y: str) -> int:
    """How many leading characters ``x`` and ``y`` share: slices compared in C, halving
    the block where they differ."""
    n, done, block = min(len(x), len(y)), 0, 1 << 16
    while done < n and block:
        end = min(n, done + block)
        if x[done:end] == y[done:end]:
            done = end
        else:
            block //= 2
    return done


def _whole_lines_from(text: str, offset: int) -> int:
    """How many whole lines of ``text`` lie at or after ``offset``."""
    if offset > 0 and text[offset - 1] != "\n":
        newline = text.find("\n", offset)
        offset = len(text) if newline < 0 else newline + 1
    lines = text.count("\n", offset)
    return lines + (1 if offset < len(text) and not text.endswith("\n") else 0)


class _Known(difflib.SequenceMatcher):
    def __init__(self, ops: list[Opcode]) -> None:  # noqa: D107 - only the opcodes are used
        self._ops = ops

    def get_opcodes(self) -> list[Opcode]:  # type: ignore[override]
        return self._ops


def unified(a: list[str], b: list[str], name_a: str, name_b: str, context: int = 3,
            skipped: int = 0) -> str:
    """``difflib.unified_diff`` of the two line lists (a last line without a newline is
    marked as ``diff`` and ``git apply`` expect); ``skipped``: lines before them (of
    ``window``), which the hunks' line numbers count."""
    out = list(_lines(a, b, name_a, name_b, context, skipped))
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in out)


def _lines(a: list[str], b: list[str], name_a: str, name_b: str, n: int,
           skipped: int) -> Iterator[str]:
    groups = list(_Known(opcodes(a, b)).get_grouped_opcodes(n))
    if not groups or all(tag == "equal" for group in groups for tag, *_ in group):
        return
    yield f"--- {name_a}\n"
    yield f"+++ {name_b}\n"
    for group in groups:
        first, last = group[0], group[-1]
        yield (f"@@ -{_range(first[1] + skipped, last[2] + skipped)} "
               f"+{_range(first[3] + skipped, last[4] + skipped)} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield from ("-" + line for line in a[i1:i2])
            if tag in ("replace", "insert"):
                yield from ("+" + line for line in b[j1:j2])


def _range(start: int, stop: int) -> str:
    """difflib's hunk range: 1-based start and length (an empty range starts before)."""
    length = stop - start
    beginning = start + 1
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"
