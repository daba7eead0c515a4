"""Closed integer intervals: the one interval algebra under ports and IP space.

A set of integers inside ``[low, high]`` is kept as a tuple of sorted, disjoint,
non-adjacent closed intervals ``(first, last)``. ``PortSet`` (1-65535) and
``IPSpace`` (one such set per IP version) are thin types over these functions,
so union, intersection and complement are written, and tested, once.
"""

from __future__ import annotations

from collections.abc import Iterable

Interval = tuple[int, int]


def normalise(intervals: Iterable[Interval], low: int, high: int) -> tuple[Interval, ...]:
    """Sorted, clipped to ``[low, high]``, empty ones dropped, overlapping or adjacent
    ones merged."""
    merged: list[list[int]] = []
    for first, last in sorted((max(a, low), min(b, high)) for a, b in intervals):
        if first > last:
            continue
        if merged and first <= merged[-1][1] + 1:
            if last > merged[-1][1]:
                merged[-1][1] = last
        else:
            merged.append([first, last])
    return tuple((a, b) for a, b in merged)


def union(a: tuple[Interval, ...], b: tuple[Interval, ...], low: int, high: int
          ) -> tuple[Interval, ...]:
    if not b:
        return a
    if not a:
        return b
    return normalise(a + b, low, high)


def intersection(a: tuple[Interval, ...], b: tuple[Interval, ...]) -> tuple[Interval, ...]:
    """Both inputs normalised; so is the result (one merge walk)."""
    out: list[Interval] = []
    i = j = 0
    while i < len(a) and j < len(b):
        first, last = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if first <= last:
            out.append((first, last))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def complement(a: tuple[Interval, ...], low: int, high: int) -> tuple[Interval, ...]:
    out: list[Interval] = []
    start = low
    for first, last in a:
        if first > start:
            out.append((start, first - 1))
        start = last + 1
    if start <= high:
        out.append((start, high))
    return tuple(out)


def difference(a: tuple[Interval, ...], b: tuple[Interval, ...], low: int, high: int
               ) -> tuple[Interval, ...]:
    return intersection(a, complement(b, low, high)) if b else a


def contains_point(a: tuple[Interval, ...], value: int) -> bool:
    return any(first <= value <= last for first, last in a)
