"""Which systemd unit files and drop-ins make up one unit, and in which order systemd
applies them (systemd.unit(5), "Description": drop-in directories).

A unit ``containerd.service`` is read from its unit file (the one in the directory of
highest precedence), then from every ``*.conf`` in its drop-in directories:
``containerd.service.d/``, the prefix directories of a dashed name (``a-.service.d/`` for
``a-b.service``) and the type-level ``service.d/``, under ``/etc/systemd/system``,
``/run/systemd/system``, ``/usr/local/lib/systemd/system`` and ``/usr/lib/systemd/system``
(``/lib/systemd/system`` on distributions that keep it). Drop-ins with different names are
applied in lexicographic order of their file names, wherever they are; of files with the
same name only the first systemd lists is read. It lists directories root by root
(``/etc``, then ``/run``, then ``/usr/lib``: systemd's dropin.c, ``unit_file_find_dirs`` per
lookup path), and within a root the unit's own directory, then its template's
(``foo@.service.d/`` for ``foo@x.service``), then the prefix directories (longest first),
then ``service.d/``: so ``/etc/.../a-.service.d/10.conf`` wins over
``/usr/lib/.../a-b.service.d/10.conf``.
Later assignments override earlier ones (an empty ``Environment=`` resets the list).

Paths are those a node's files are written at (``/etc/...``, from a bootstrap config's
``files[]``) or found in a dump of a node's file system (``node1/etc/...``): everything
before the systemd directory names the node, and only files of one node make up a unit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from hcpscan.sources.systemd import UNIT_ROOT, UNIT_ROOTS

_ROOT = UNIT_ROOT
_UNIT_NAME = re.compile(r"^[A-Za-z0-9:_.@\\-]+\.[a-z]+$")


@dataclass(frozen=True, slots=True)
class UnitPart:
    """A unit file or a drop-in, by where it is."""

    path: str
    node: str  # the path before the systemd directory ('' for a node's own /etc/...)
    rank: int  # its root's place in UNIT_ROOTS (0 = /etc: highest precedence)
    directory: str  # 'containerd.service.d', 'service.d', ... ('' for a unit file)
    name: str  # the file's name ('http-proxy.conf', 'containerd.service')


def unit_part(path: str) -> UnitPart | None:
    """Where ``path`` sits among unit files and drop-ins (None: elsewhere)."""
    text = (path or "").strip()
    found = _ROOT.search(text)
    if found is None:
        return None
    rest = text[found.end():].split("/")
    node = text[:found.start(1)].strip("/")
    rank = UNIT_ROOTS.index(found.group(1))
    if len(rest) == 1 and _UNIT_NAME.match(rest[0]):
        return UnitPart(text, node, rank, "", rest[0])
    if len(rest) == 2 and rest[0].endswith(".d") and rest[1].endswith(".conf"):
        return UnitPart(text, node, rank, rest[0], rest[1])
    return None


def unit_of_dropin(path: str) -> str:
    """``/etc/systemd/system/containerd.service.d/http-proxy.conf`` -> ``containerd.service``
    ('' when ``path`` is no drop-in of a named unit)."""
    part = unit_part(path)
    if part is None or not part.directory:
        return ""
    name = part.directory[:-2]
    stem, _, kind = name.rpartition(".")
    return name if stem and not stem.endswith("-") and kind else ""


def specificity(directory: str, unit: str) -> int | None:
    """How closely a drop-in directory names ``unit`` (higher wins a name clash within one
    root), or None when its drop-ins do not apply to ``unit``: the unit's own directory, its
    template's (``foo@.service.d`` for ``foo@x.service``), a prefix directory of its dashed
    name before any ``@`` (``a-b-.service.d`` over ``a-.service.d``), the type's."""
    stem, _, kind = unit.rpartition(".")
    if not directory.endswith(".d") or not stem or not kind:
        return None
    name = directory[:-2]
    if name == unit:
        return 2 * len(stem) + 2
    if name == kind:
        return 0
    prefix = name[:-len(kind) - 1] if name.endswith("." + kind) else ""
    base, at, instance = stem.partition("@")
    if at and instance and prefix == base + "@":
        return 2 * len(stem) + 1
    if prefix.endswith("-") and base.startswith(prefix) and len(base) > len(prefix):
        return 2 * len(prefix)
    return None


def applied_parts(paths: Iterable[str], unit: str, node: str | None = None) -> list[UnitPart]:
    """The files of ``paths`` that make up ``unit`` on ``node`` (None: the node of the first
    that applies), in the order systemd applies them: the unit file first, then the
    drop-ins by file name, each name read from its place of highest precedence."""
    unit_file: UnitPart | None = None
    dropins: dict[str, tuple[tuple[int, int], UnitPart]] = {}
    for path in paths:
        part = unit_part(path)
        if part is None or (node is not None and part.node != node):
            continue
        if not part.directory:
            if part.name == unit and (unit_file is None or part.rank < unit_file.rank):
                unit_file, node = part, part.node
            continue
        how = specificity(part.directory, unit)
        if how is None:
            continue
        node = part.node
        key = (part.rank, -how)  # systemd lists directories root by root
        held = dropins.get(part.name)
        if held is None or key < held[0]:
            dropins[part.name] = (key, part)
    ordered = [dropins[name][1] for name in sorted(dropins)]
    return ([unit_file] if unit_file is not None else []) + ordered
