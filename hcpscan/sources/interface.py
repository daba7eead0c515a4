"""What every source produces: entries to read, and diagnostics for what could not be read."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hcpscan.sources.yamldocs import MAX_NODES


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something the user gave that could not be (fully) read or evaluated."""

    path: str
    line: int | None
    message: str
    severity: str = "error"  # error | warning | info
    hint: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "severity": self.severity,
        }
        if self.hint:
            out["hint"] = self.hint
        return out

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        text = f"{where}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


@dataclass(slots=True)
class Entry:
    """One file to read: a plain file, or a member of an archive.

    ``parts`` is the path relative to the scanned root, split into folders, so
    the layout (must-gather, ``hypershift dump``) can be told from it whether
    the bytes come from disk or from an archive.
    """

    display: str
    parts: tuple[str, ...]
    read: Callable[[], bytes]
    size: int | None  # None: a file on disk not looked at yet (see ``known_size``)
    file: str  # the file on disk (the archive, for members)
    member: str | None = None
    in_memory: bool = False  # read already (a pipe the user named): ``read`` gives the bytes

    def known_size(self) -> int:
        if self.size is None:
            try:
                self.size = os.path.getsize(self.file)
            except OSError:
                self.size = 0
        return self.size


MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class InputLimits:
    """Bounds on what reading may cost, so that no input can exhaust memory or time.

    A file or archive member larger than ``max_file_size`` is not read. An archive
    stops being read when it has unpacked more than ``max_archive_bytes`` (members
    passed over included: they are decompressed to be skipped), more than
    ``max_archive_ratio`` times its own size once past ``ratio_floor``, or more than
    ``max_archive_members`` members. Archives inside archives are opened down to
    ``max_archive_nesting`` levels. A file that would make more than ``max_nodes``
    nodes (mappings, lists and values) is not parsed: its size does not bound what
    parsing costs. Symbolic links to files outside the scanned folder are read only
    with ``follow_symlinks``.
    """

    max_file_size: int = 128 * MiB
    max_archive_bytes: int = 4096 * MiB
    max_archive_ratio: int = 200
    ratio_floor: int = 64 * MiB
    max_archive_members: int = 500_000
    max_archive_nesting: int = 3
    max_nodes: int = MAX_NODES
    follow_symlinks: bool = False


@dataclass(slots=True)
class SkipRecord:
    """Input passed over on purpose, counted per reason so nothing vanishes silently.

    ``details`` breaks a reason down where one count hides what a reader needs
    (the resources a scan left out because no selected rule reads them)."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)
    details: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, reason: str, example: str, detail: str | None = None) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        self.examples.setdefault(reason, example)
        if detail is not None:
            by = self.details.setdefault(reason, {})
            by[detail] = by.get(detail, 0) + 1

    def to_json(self) -> list[dict[str, Any]]:
        out = []
        for reason, count in sorted(self.counts.items()):
            entry: dict[str, Any] = {"reason": reason, "count": count, "example": self.examples[reason]}
            if reason in self.details:
                entry["by"] = dict(sorted(self.details[reason].items()))
            out.append(entry)
        return out
