"""What every source produces: entries to read, and diagnostics for what could not be read."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from hcpscan.core.yamldocs import MAX_NODES


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
