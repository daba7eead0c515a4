"""Turn the paths a user gave into entries: files of a directory tree and members of archives.

Archives are streamed member by member (``tarfile`` in ``r|*`` mode, ``zipfile``
per member): nothing is unpacked to disk and a truncated archive still yields
the members before the damage, followed by a diagnostic.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator

from hcpscan.sources.interface import Diagnostic, Entry, SkipRecord

# Compressed tars are told apart by their magic bytes (``_decompressed``), not their suffix.
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".zip")
# hcpscan's own config file names (hcpscan/rules/config.py reads them); one found in the
# input is never applied, and says so
CONFIG_NAMES = (".hcpscan.yaml", ".hcpscan.yml")

Sink = Callable[[Diagnostic], None]
Skip = Callable[[str, str], None]  # (reason, where)


def _no_skip(reason: str, where: str) -> None:
    return None


def _pass_over_hidden(display: str, name: str, skip: Skip, diagnose: Sink) -> None:
    """A hidden file is passed over; a config file among them is also named, because a
    dump that carried its own `ignore:` list would otherwise look clean."""
    skip("hidden file", display)
    if name in CONFIG_NAMES:
        diagnose(Diagnostic(display, None, f"{name} inside a scanned path is not applied: "
                            "the input never configures its own scan", severity="warning",
                            hint="review it and pass --config FILE to use it"))


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def _file_reader(path: str) -> Callable[[], bytes]:
    def read() -> bytes:
        with open(path, "rb") as fh:
            return fh.read()

    return read


# Given a folder's path parts and its path on disk, says it is taken care of elsewhere
# (so it is not descended into).
Prune = Callable[[tuple[str, ...], str], bool]


def iter_entries(path: str, diagnose: Sink, skipped: SkipRecord,
                 prune: Prune | None = None) -> Iterator[Entry]:
    """Entries below one user-given path (file, directory or archive)."""
    if os.path.isdir(path):
        yield from iter_folder(path, (), diagnose, skipped, prune)
    elif is_archive(path):
        yield from iter_archive(path, (), diagnose, skip=skipped.add)
    else:
        yield Entry(path, (os.path.basename(path),), _file_reader(path), _size(path), path)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def iter_folder(path: str, prefix: tuple[str, ...], diagnose: Sink, skipped: SkipRecord,
                prune: Prune | None = None) -> Iterator[Entry]:
    """Files of a tree in a stable order: a folder's files by name, then its folders
    by name. One ``scandir`` per folder and no per-file system calls: a must-gather
    holds tens of thousands of files (pod logs), most of them never read."""
    try:
        with os.scandir(path) as listing:
            found = sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        diagnose(Diagnostic(exc.filename or path, None, f"cannot read directory: {exc.strerror}",
                            hint="check the permissions of this folder"))
        return
    folders = []
    for item in found:
        name = item.name
        try:
            is_folder = item.is_dir()
        except OSError:
            is_folder = False
        if is_folder:
            if name.startswith("."):
                skipped.add("hidden folder", item.path)
            elif item.is_symlink():
                skipped.add("symbolic link to a folder (not followed)", item.path)
            elif prune is None or not prune(prefix + (name,), item.path):
                folders.append(item)
            continue
        if name.startswith("."):
            _pass_over_hidden(item.path, name, skipped.add, diagnose)
            continue
        if item.is_symlink() and not os.path.exists(item.path):
            diagnose(Diagnostic(item.path, None, "broken symbolic link", severity="warning"))
            continue
        if is_archive(name):
            yield from iter_archive(item.path, prefix, diagnose, skip=skipped.add)
            continue
        yield Entry(item.path, prefix + (name,), _file_reader(item.path), None, item.path)
    for folder in folders:
        yield from iter_folder(folder.path, prefix + (folder.name,), diagnose, skipped, prune)


def iter_archive(path: str, prefix: tuple[str, ...], diagnose: Sink,
                 data: bytes | None = None, skip: Skip = _no_skip) -> Iterator[Entry]:
    if path.lower().endswith(".zip"):
        yield from _iter_zip(path, prefix, diagnose, data, skip)
    else:
        yield from _iter_tar(path, prefix, diagnose, data, skip)


def _member_parts(name: str) -> tuple[str, ...]:
    """A member's path inside the archive. Nothing is written to disk, so a `..` that
    would climb out of an unpacked archive is harmless here: it is resolved, and any
    leading `..` dropped, so such members are still read."""
    parts: list[str] = []
    for part in name.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return tuple(parts)


def _shown(name: str) -> str:
    """A member name as text: bytes that are not UTF-8 (tarfile keeps them as lone
    surrogates, which no report could encode) become U+FFFD."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _hidden(parts: tuple[str, ...]) -> bool:
    return any(p.startswith(".") for p in parts)


def _decompressed(raw: io.BufferedIOBase) -> io.BufferedIOBase:
    """Wrap a tar stream in the decompressor its magic bytes name. The stdlib
    decompressors raise EOFError on a cut stream, where tarfile's own stream
    mode would end quietly."""
    head = raw.peek(6)[:6] if hasattr(raw, "peek") else b""
    if head.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    if head.startswith(b"BZh"):
        return bz2.BZ2File(raw)  # type: ignore[return-value]
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(raw)  # type: ignore[return-value]
    return raw


class TruncatedMember(Exception):
    pass


def _iter_tar(path: str, prefix: tuple[str, ...], diagnose: Sink,
              data: bytes | None, skip: Skip) -> Iterator[Entry]:
    last = None
    try:
        raw = io.BufferedReader(io.BytesIO(data)) if data is not None else open(path, "rb")
        with raw, tarfile.open(fileobj=_decompressed(raw), mode="r|") as tar:
            for member in tar:
                name = _shown(member.name)
                if not member.isfile():
                    if member.issym() or member.islnk():
                        kind = "symbolic" if member.issym() else "hard"
                        skip(f"{kind} link in an archive (not followed)", f"{path}!{name}")
                    elif not member.isdir():
                        skip("special file in an archive (device, FIFO)", f"{path}!{name}")
                    continue
                content = tar.extractfile(member)
                blob = content.read() if content is not None else b""
                if len(blob) != member.size:
                    raise TruncatedMember(f"member {name!r} is cut short")
                last = name
                parts = _member_parts(name)
                if not parts:
                    continue
                if _hidden(parts):
                    _pass_over_hidden(f"{path}!{name}", parts[-1], skip, diagnose)
                    continue
                display = f"{path}!{name}"
                if is_archive(parts[-1]):
                    yield from iter_archive(display, prefix + parts[:-1], diagnose, blob, skip)
                    continue
                # member.name as tarfile read it, to find the member again for a finding's line
                yield Entry(display, prefix + parts, (lambda b=blob: b), len(blob), path, member.name)
    except (tarfile.TarError, EOFError, zlib.error, OSError, lzma.LZMAError,
            TruncatedMember) as exc:
        where = f"after member {last!r}" if last else "at its start"
        diagnose(Diagnostic(path, None, f"archive is truncated or corrupt {where}: {exc}",
                            hint="the members before the damage were read; re-create the archive"))


def _iter_zip(path: str, prefix: tuple[str, ...], diagnose: Sink,
              data: bytes | None, skip: Skip) -> Iterator[Entry]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data) if data is not None else path)
    except (zipfile.BadZipFile, OSError) as exc:
        diagnose(Diagnostic(path, None, f"cannot open zip archive: {exc}",
                            hint="the archive is truncated or not a zip file; re-create it"))
        return
    with archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            parts = _member_parts(info.filename)
            display = f"{path}!{info.filename}"
            if not parts:
                continue
            if _hidden(parts):
                _pass_over_hidden(display, parts[-1], skip, diagnose)
                continue
            if (info.external_attr >> 16) & 0o170000 == 0o120000:
                skip("symbolic link in an archive (not followed)", display)
                continue
            try:
                blob = archive.read(info)
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
                diagnose(Diagnostic(display, None, f"cannot read archive member: {exc}",
                                    hint="the archive is damaged; re-create it"))
                continue
            if is_archive(parts[-1]):
                yield from iter_archive(display, prefix + parts[:-1], diagnose, blob, skip)
                continue
            yield Entry(display, prefix + parts, (lambda b=blob: b), len(blob), path, info.filename)


def read_member(file: str, member: str) -> bytes | None:
    """Read one member of an archive again (to find a field's line for a finding)."""
    try:
        if file.lower().endswith(".zip"):
            with zipfile.ZipFile(file) as archive:
                return archive.read(member)
        with open(file, "rb") as raw, tarfile.open(fileobj=_decompressed(raw), mode="r|") as tar:
            for info in tar:
                if info.name == member and info.isfile():
                    fh = tar.extractfile(info)
                    return fh.read() if fh else None
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, OSError, KeyError,
            lzma.LZMAError):
        return None
    return None
