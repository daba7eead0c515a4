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

import sys
from array import array
from collections.abc import Callable

WINDOW = 100
BASE = 37
_MASK = (1 << 64) - 1
_DROP_OUT = pow(BASE, WINDOW, 1 << 64)  # weight of the unit leaving the window
_END = 0xFFFF
_SPACE, _TAB, _LF, _CR = 0x20, 0x09, 0x0A, 0x0D


def _code_units(text: str) -> list[int]:
    units = array("H", text.encode("utf-16-le", "surrogatepass"))
    if sys.byteorder == "big":
        units.byteswap()
    return units.tolist()


def line_hashes(text: str) -> list[str]:
    """The hash of every line of ``text`` (index 0 is line 1), plus the end-of-file line.

    One loop over local names (the rolling window, the line due at each slot): a file of
    half a million characters is hashed in a fraction of a second, which a SARIF report
    with findings in a hundred such files needs."""
    window = [0] * WINDOW
    line_at = [0] * WINDOW  # the line whose hash is due when the window is full; 0: none
    pos = value = line = 0
    seen: dict[str, int] = {}
    hashes: dict[int, str] = {}
    at_line_start, after_cr = True, False
    units = _code_units(text)
    units.append(_END)
    units.extend([0] * WINDOW)  # the zero padding that flushes the last window
    flushing_from = len(units) - WINDOW
    for index, unit in enumerate(units):
        if index < flushing_from:
            if unit == _SPACE or unit == _TAB or (after_cr and unit == _LF):
                after_cr = False
                continue
            after_cr = unit == _CR
            if after_cr:
                unit = _LF
        due = line_at[pos]
        if due:
            digest = format(value, "x")
            count = seen.get(digest, 0) + 1
            seen[digest] = count
            hashes[due] = f"{digest}:{count}"
            line_at[pos] = 0
        if index < flushing_from:
            if at_line_start:
                line += 1
                line_at[pos] = line
                at_line_start = False
            if unit == _LF:
                at_line_start = True
        leaving = window[pos]
        window[pos] = unit
        value = (value * BASE + unit - _DROP_OUT * leaving) & _MASK
        pos += 1
        if pos == WINDOW:
            pos = 0
    return [hashes[n] for n in sorted(hashes)]


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
