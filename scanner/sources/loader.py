"""Offline loading: user paths -> objects, diagnostics and a record of what was passed over."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from scanner.inventory.objects import K8sObject
from scanner.sources.documents import MANIFEST_SUFFIXES, parse_entry
from scanner.sources.interface import Diagnostic, Entry, SkipRecord
from scanner.sources.layout import NOISE_PLURALS, Placement, place
from scanner.sources.walk import iter_entries

_SNIFF_LIMIT = 8 * 1024 * 1024
_SNIFF_MARKERS = (b"apiVersion", b"clusters:", b'"ignition"', b"kind:")


@dataclass(slots=True)
class ResourceNeeds:
    """Which resources the enabled rules read; ``None`` plurals means all of them."""

    plurals: frozenset[str] | None = None

    def wants(self, plural: str) -> bool:
        return self.plurals is None or plural in self.plurals


@dataclass(slots=True)
class LoadResult:
    objects: list[K8sObject] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    skipped: SkipRecord = field(default_factory=SkipRecord)
    files_read: int = 0
    bytes_read: int = 0


class PathNotFound(Exception):
    pass


Progress = Callable[[int, str], None]


def load_paths(paths: Iterable[str], needs: ResourceNeeds | None = None,
               progress: Progress | None = None) -> LoadResult:
    """Load every path; raise ``PathNotFound`` for a path that does not exist."""
    paths = list(paths)
    for path in paths:
        if path != "-" and not os.path.exists(path):
            raise PathNotFound(path)
    result = LoadResult()
    needs = needs or ResourceNeeds()
    seen: set[tuple] = set()
    for path in paths:
        if path == "-":
            data = sys.stdin.buffer.read()
            entry = Entry("<stdin>", ("<stdin>.yaml",), lambda d=data: d, len(data), "<stdin>")
            _load_entry(entry, place(entry.parts), data, result, seen)
            continue
        explicit_file = not os.path.isdir(path)
        for entry in iter_entries(path, result.diagnostics.append, result.skipped):
            placement = place(entry.parts)
            reason = _skip_reason(entry, placement, needs, explicit_file and entry.member is None)
            if reason is None and _needs_sniff(entry) and not (explicit_file and entry.member is None):
                reason = _sniff(entry, result)
            if reason:
                result.skipped.add(reason, entry.display)
                continue
            try:
                data = entry.read()
            except OSError as exc:
                result.diagnostics.append(Diagnostic(entry.display, None,
                                                     f"cannot read file: {exc.strerror or exc}",
                                                     hint="check that the file is readable"))
                continue
            _load_entry(entry, placement, data, result, seen)
            if progress:
                progress(result.files_read, entry.display)
    return result


def _load_entry(entry: Entry, placement: Placement, data: bytes, result: LoadResult,
                seen: set[tuple]) -> None:
    result.files_read += 1
    result.bytes_read += len(data)
    parsed = parse_entry(entry, placement.cluster, data)
    result.diagnostics.extend(parsed.diagnostics)
    for reason, where in parsed.skipped:
        result.skipped.add(reason, where)
    if placement.inspect_root is None:
        result.objects.extend(parsed.objects)
        return
    # In a dump an object can stand both in a List and in its own file: keep it once.
    for obj in parsed.objects:
        key = (placement.inspect_root, *obj.identity)
        if key in seen:
            result.skipped.add("already read from another file of the same dump", entry.display)
            continue
        seen.add(key)
        result.objects.append(obj)


def _skip_reason(entry: Entry, placement: Placement, needs: ResourceNeeds,
                 explicit: bool) -> str | None:
    if explicit:
        return None
    name = entry.parts[-1]
    if placement.is_log or name.endswith(".log"):
        return "logs"
    if placement.plural in NOISE_PLURALS:
        return "events"
    if placement.plural and not needs.wants(placement.plural):
        return "resource no enabled rule reads"
    return None


def _needs_sniff(entry: Entry) -> bool:
    name = entry.parts[-1]
    if name.endswith(MANIFEST_SUFFIXES) or name.endswith((".conf", ".ign")):
        return False
    return True


def _sniff(entry: Entry, result: LoadResult) -> str | None:
    """Files without a manifest suffix: read them only if they look like one (kubeconfigs)."""
    name = entry.parts[-1]
    _, ext = os.path.splitext(name)
    if ext or entry.size > _SNIFF_LIMIT:
        return f"not a manifest ({ext or 'large file without suffix'})"
    try:
        head = entry.read()[:4096]
    except OSError:
        return None  # reading it properly will produce the diagnostic
    if b"\x00" in head or not any(marker in head for marker in _SNIFF_MARKERS):
        return "not a manifest (no suffix)"
    return None
