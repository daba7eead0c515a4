"""GitHub code scanning's ``primaryLocationLineHash``, computed the way GitHub does.

Facts of GitHub's algorithm (codeql-action, ``src/fingerprints.ts``), implemented
here from that description:

* the text is read as UTF-16 code units; spaces and tabs are dropped; ``\\r\\n``,
  ``\\r`` and ``\\n`` all count as one ``\\n``;
* after the last character a sentinel code unit 65535 is appended, then the
  stream is padded with zeros;
* a rolling polynomial hash with base 37 over a window of the next 100 kept
  code units, in wrapping 64-bit arithmetic, is taken at the first kept
  character of every line; there is one more "line" after a final line break;
* the value is written in lower-case hex without leading zeros, followed by
  ``:n`` where n counts how often that value has been seen so far in the file
  (so identical blocks of text stay distinct).

The test vectors in ``shared/sarif/github-line-hash-vectors.json`` pin this.
"""

from __future__ import annotations

from collections.abc import Callable

WINDOW = 100
BASE = 37
_MASK = (1 << 64) - 1
_DROP_OUT = pow(BASE, WINDOW, 1 << 64)  # weight of the unit leaving the window
_END = 0xFFFF
_SPACE, _TAB, _LF, _CR = 0x20, 0x09, 0x0A, 0x0D


def _code_units(text: str) -> list[int]:
    raw = text.encode("utf-16-le", "surrogatepass")
    return [raw[i] | raw[i + 1] << 8 for i in range(0, len(raw), 2)]


class _Roller:
    """The window and the line numbers whose hash is due when the window is full."""

    def __init__(self) -> None:
        self.window = [0] * WINDOW
        self.line_at = [0] * WINDOW  # 0: no line starts at this slot
        self.pos = 0
        self.value = 0
        self.seen: dict[str, int] = {}
        self.hashes: dict[int, str] = {}

    def emit_due(self) -> None:
        line = self.line_at[self.pos]
        if line:
            digest = format(self.value, "x")
            self.seen[digest] = self.seen.get(digest, 0) + 1
            self.hashes[line] = f"{digest}:{self.seen[digest]}"
            self.line_at[self.pos] = 0

    def push(self, unit: int) -> None:
        leaving = self.window[self.pos]
        self.window[self.pos] = unit
        self.value = (self.value * BASE + unit - _DROP_OUT * leaving) & _MASK
        self.pos = (self.pos + 1) % WINDOW


def line_hashes(text: str) -> list[str]:
    """The hash of every line of ``text`` (index 0 is line 1), plus the end-of-file line."""
    roller = _Roller()
    line = 0
    at_line_start = True
    after_cr = False
    for unit in _code_units(text) + [_END]:
        if unit in (_SPACE, _TAB) or (after_cr and unit == _LF):
            after_cr = False
            continue
        after_cr = unit == _CR
        if after_cr:
            unit = _LF
        roller.emit_due()
        if at_line_start:
            line += 1
            roller.line_at[roller.pos] = line
            at_line_start = False
        if unit == _LF:
            at_line_start = True
        roller.push(unit)
    for _ in range(WINDOW):
        roller.emit_due()
        roller.push(0)
    return [roller.hashes[n] for n in sorted(roller.hashes)]


class LineHashCache:
    """Hashes each file once, however many findings point into it."""

    def __init__(self, read_text: Callable[[str], str | None]) -> None:
        self._read_text = read_text
        self._by_path: dict[str, list[str] | None] = {}

    def get(self, path: str, line: int) -> str | None:
        if path not in self._by_path:
            text = self._read_text(path)
            self._by_path[path] = line_hashes(text) if text is not None else None
        hashes = self._by_path[path]
        if hashes is None or not 1 <= line <= len(hashes):
            return None
        return hashes[line - 1]
