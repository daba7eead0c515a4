"""Turn the paths a user gave into entries: files of a directory tree and members of archives.

Archives are streamed member by member (``tarfile`` in ``r|*`` mode, ``zipfile``
per member): nothing is unpacked to disk and a truncated archive still yields
the members before the damage, followed by a diagnostic.

Reading is bounded (``InputLimits``), because the input may be hostile: only
regular files are opened (opening a FIFO blocks forever, a device never ends),
no file or member larger than the maximum is read, an archive stops being read
once it unpacks too much or too many members (decompression bombs), and a
symbolic link is read only when it points inside the scanned folder (a link to
``~/.kube/config`` would otherwise put its content in reports).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import select
import stat
import struct
import tarfile
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Self

from hcpscan.core.diagnostics import Diagnostic, SkipRecord
from hcpscan.sources.interface import Entry, InputLimits, MiB

# Compressed tars are told apart by their magic bytes (``_decompressed``), not their suffix.
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".zip")
# hcpscan's own config file names (hcpscan/rules/config.py reads them); one found in the
# input is never applied, and says so
CONFIG_NAMES = (".hcpscan.yaml", ".hcpscan.yml")
DEFAULT_LIMITS = InputLimits()

NOT_REGULAR = "not a regular file (FIFO, socket or device: never opened)"
LINK_OUTSIDE = ("symbolic link to a file outside the scanned folder "
                "(not read; --follow-symlinks reads it)")
NESTED_TOO_DEEP = "archive inside too many archives (not opened)"

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


def shown(name: str) -> str:
    """A path as text: bytes that are not UTF-8 (Python keeps them as lone
    surrogates in file and member names, which no report could encode) become U+FFFD."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def named(shown_name: str, names: Iterable[str]) -> str | None:
    """The one name among ``names`` that ``shown`` writes as ``shown_name`` (a report's
    path back to the name on disk or in an archive); None if none or several are."""
    if "\ufffd" not in shown_name:
        return None
    found = [name for name in names if shown(name) == shown_name]
    return found[0] if len(found) == 1 else None


def on_disk(path: str) -> str:
    """``path`` as a report shows it, back to the name on disk: each part holding U+FFFD is
    the one entry of its folder ``shown`` writes so (``path`` unchanged when none is)."""
    if "\ufffd" not in path:
        return path
    parts = path.split(os.sep)
    for i, part in enumerate(parts):
        if "\ufffd" not in part:
            continue
        folder = os.sep.join(parts[:i]) or (os.sep if path.startswith(os.sep) else ".")
        try:
            real = named(part, os.listdir(folder))
        except OSError:
            return path
        if real is None:
            return path
        parts[i] = real
    return os.sep.join(parts)


def size_text(size: int) -> str:
    return f"{size // MiB} MiB" if size >= MiB and size % MiB == 0 else f"{size} bytes"


class FileTooLarge(OSError):
    pass


class NotRegularFile(OSError):
    pass


def too_large(display: str, limit: int) -> Diagnostic:
    return Diagnostic(display, None, f"not read: larger than the maximum file size ({size_text(limit)})",
                      hint="if the file is genuine, raise the limit with --max-file-size")


def read_bounded(path: str, limit: int, regular_only: bool = True) -> bytes:
    """A file's bytes, never more than ``limit`` of them (``FileTooLarge`` beyond).

    With ``regular_only`` the file is opened without blocking and refused unless
    it is a regular file: something swapped for a FIFO after the walk looked at
    it would otherwise block the read forever. A path the user named is read
    whatever it is (``<(helm template ...)`` is a pipe), still bounded."""
    flags = os.O_RDONLY | getattr(os, "O_NOCTTY", 0)
    if regular_only:
        flags |= getattr(os, "O_NONBLOCK", 0)
    elif _is_fifo(path):
        return _read_pipe(path, limit)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as fh:
        status = os.fstat(fd)
        if regular_only and not stat.S_ISREG(status.st_mode):
            raise NotRegularFile(0, "not a regular file", path)
        if stat.S_ISREG(status.st_mode) and status.st_size < limit:
            # read(n) allocates n bytes first: the file's own size, not the limit (128 MiB
            # mapped and unmapped for every 4 KiB file); one byte more tells a file grown
            # since, which is then read on to the limit
            data = fh.read(status.st_size + 1)
            if len(data) > status.st_size:
                data += fh.read(limit + 1 - len(data))
        else:
            data = fh.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(0, f"larger than {size_text(limit)}", path)
    return data


# How long a pipe the user named may stay silent before hcpscan gives up on it.
PIPE_SILENCE = 120.0


def _is_fifo(path: str) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _read_pipe(path: str, limit: int) -> bytes:
    """A named pipe or ``<(...)``: opened without blocking, so a FIFO nobody writes to
    reads as empty instead of hanging; a writer that goes silent for ``PIPE_SILENCE``
    seconds ends the read with an error. Bounded like files."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    chunks: list[bytes] = []
    total = 0
    try:
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:  # a writer is there but has nothing yet
                ready, _, _ = select.select([fd], [], [], PIPE_SILENCE)
                if not ready:
                    raise OSError(0, f"nothing written to the pipe for {PIPE_SILENCE:.0f} s") from None
                continue
            if not chunk:  # end of input, or no writer at all
                return b"".join(chunks)
            total += len(chunk)
            if total > limit:
                raise FileTooLarge(0, f"larger than {size_text(limit)}", path)
            chunks.append(chunk)
    finally:
        os.close(fd)


def _file_reader(path: str, limit: int, regular_only: bool = True) -> Callable[[], bytes]:
    def read() -> bytes:
        return read_bounded(path, limit, regular_only)

    return read


# Given a folder's path parts and its path on disk, says it is taken care of elsewhere
# (so it is not descended into).
Prune = Callable[[tuple[str, ...], str], bool]


def iter_entries(path: str, diagnose: Sink, skipped: SkipRecord, prune: Prune | None = None,
                 limits: InputLimits = DEFAULT_LIMITS) -> Iterator[Entry]:
    """Entries below one user-given path (file, directory or archive)."""
    if os.path.isdir(path):
        yield from iter_folder(path, (), diagnose, skipped, prune, limits)
    elif is_archive(path):
        yield from iter_archive(path, (), diagnose, skip=skipped.add, limits=limits)
    else:
        yield _named_file(path, diagnose, limits)


def _named_file(path: str, diagnose: Sink, limits: InputLimits) -> Entry:
    """A file the user named. A pipe or device is read here, once (bounded): it
    cannot be opened again where the file is parsed."""
    display = shown(path)
    reader = _file_reader(path, limits.max_file_size, regular_only=False)
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        regular = True  # reading it will say why it cannot be read
    if regular:
        return Entry(display, (os.path.basename(display),), reader, _size(path), path)
    data = b""
    try:
        data = reader()
    except FileTooLarge:
        diagnose(too_large(display, limits.max_file_size))
    except OSError as exc:
        diagnose(Diagnostic(display, None, f"cannot read file: {exc.strerror or exc}",
                            hint="check that the file is readable"))
    return Entry(display, (os.path.basename(display),), lambda: data, len(data), path, in_memory=True)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _inside(target: str, root: str) -> bool:
    return target == root or target.startswith(os.path.join(root, ""))


def iter_folder(path: str, prefix: tuple[str, ...], diagnose: Sink, skipped: SkipRecord,
                prune: Prune | None = None, limits: InputLimits = DEFAULT_LIMITS,
                root: str | None = None) -> Iterator[Entry]:
    """Files of a tree in a stable order: a folder's files by name, then its folders
    by name, depth first (with a stack of its own: a tree thousands of folders deep
    must not exhaust Python's recursion). One ``scandir`` per folder and no per-file
    system calls for plain files: a must-gather holds tens of thousands of files
    (pod logs), most of them never read. ``root`` is the scanned folder links must
    stay inside (default: ``path``)."""
    root = os.path.realpath(root if root is not None else path)
    stack: list[tuple[str, tuple[str, ...]]] = [(path, prefix)]
    while stack:
        folder, parts = stack.pop()
        found = _listing(folder, diagnose)
        folders: list[tuple[str, tuple[str, ...]]] = []
        for item in found:
            if _is_folder(item):
                if _keep_folder(item, parts, skipped, prune):
                    folders.append((item.path, parts + (shown(item.name),)))
                continue
            yield from _file_entries(item, parts, root, diagnose, skipped, limits)
        stack.extend(reversed(folders))


def _listing(folder: str, diagnose: Sink) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            return sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        diagnose(Diagnostic(shown(exc.filename or folder), None,
                            f"cannot read directory: {exc.strerror}",
                            hint="check the permissions of this folder"))
        return []


def _is_folder(item: os.DirEntry[str]) -> bool:
    try:
        return item.is_dir()
    except OSError:
        return False


def _keep_folder(item: os.DirEntry[str], parts: tuple[str, ...], skipped: SkipRecord,
                 prune: Prune | None) -> bool:
    if item.name.startswith("."):
        skipped.add("hidden folder", shown(item.path))
    elif item.is_symlink():
        skipped.add("symbolic link to a folder (not followed)", shown(item.path))
    else:
        return prune is None or not prune(parts + (shown(item.name),), item.path)
    return False


def _file_entries(item: os.DirEntry[str], parts: tuple[str, ...], root: str, diagnose: Sink,
                  skipped: SkipRecord, limits: InputLimits) -> Iterator[Entry]:
    """The entry of one file of a folder, or nothing (saying why)."""
    display, name = shown(item.path), shown(item.name)
    if name.startswith("."):
        _pass_over_hidden(display, name, skipped.add, diagnose)
        return
    link = item.is_symlink()
    if link and not os.path.exists(item.path):
        diagnose(Diagnostic(display, None, "broken symbolic link", severity="warning"))
        return
    try:
        regular = item.is_file()  # follows a link: a link to /dev/zero is not regular either
    except OSError:
        regular = False
    if not regular:
        skipped.add(NOT_REGULAR, display)
        return
    if link and not limits.follow_symlinks and not _inside(os.path.realpath(item.path), root):
        skipped.add(LINK_OUTSIDE, display)
        return
    if is_archive(name):
        yield from iter_archive(item.path, parts, diagnose, skip=skipped.add, limits=limits)
        return
    yield Entry(display, parts + (name,), _file_reader(item.path, limits.max_file_size), None,
                item.path)


def iter_archive(path: str, prefix: tuple[str, ...], diagnose: Sink,
                 data: bytes | None = None, skip: Skip = _no_skip,
                 limits: InputLimits = DEFAULT_LIMITS, budget: _Budget | None = None,
                 depth: int = 0, remember: bool = True,
                 kept: _KeptArchive | None = None) -> Iterator[Entry]:
    """Members of an archive on disk (``data`` None) or of one read from another
    archive, which shares the outer archive's ``budget`` (and its record ``kept``).
    The members read of an archive on disk are kept in ``LOADED`` unless ``remember``
    is False."""
    if budget is None:
        budget = _Budget(limits, len(data) if data is not None else _size(path))
    # what loading reads of an archive on disk is kept for finding lines in it later
    if data is None:
        kept = LOADED.archive(path) if remember else None
    reader = _iter_zip if _is_zip(path, data) else _iter_tar
    yield from reader(_Archive(path, prefix, diagnose, skip, budget, depth, kept), data)


_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a first member, or an empty archive


def _is_zip(path: str, data: bytes | None) -> bool:
    """Told by the first bytes, not the name: a `.tar.gz` that is a zip (or the reverse)
    is read as what it is. Unreadable or neither: by the suffix."""
    if data is None:
        try:
            with open(path, "rb") as fh:
                head = fh.read(262)
        except OSError:
            head = b""
    else:
        head = data[:262]
    if head.startswith(_ZIP_MAGIC):
        return True
    if head.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ")) or head[257:262] == b"ustar":
        return False  # compressed (a tar inside, as hcpscan reads them) or a plain tar
    return path.lower().endswith(".zip")


@dataclass(slots=True)
class _Budget:
    """What one archive on disk has unpacked so far, nested archives included."""

    limits: InputLimits
    packed: int
    unpacked: int = 0
    members: int = 0

    def take(self, size: int) -> str | None:
        """Count one more member of ``size`` bytes; why reading must stop, or None."""
        self.members += 1
        return self.grow(size)

    def grow(self, size: int) -> str | None:
        """Count ``size`` more bytes unpacked; why reading must stop, or None."""
        self.unpacked += size
        limits = self.limits
        if self.members > limits.max_archive_members:
            return f"has more than {limits.max_archive_members} members"
        if self.unpacked > limits.max_archive_bytes:
            return f"unpacks to more than {size_text(limits.max_archive_bytes)}"
        if self.unpacked > max(limits.ratio_floor, limits.max_archive_ratio * self.packed):
            packed = max(self.packed // 1024, 1)
            return (f"unpacks to more than {limits.max_archive_ratio} times its size "
                    f"({self.unpacked // MiB} MiB from {packed} KiB): a decompression bomb")
        return None


@dataclass(slots=True)
class _Archive:
    """One archive being read, and where its members and problems go."""

    path: str
    prefix: tuple[str, ...]
    diagnose: Sink
    skip: Skip
    budget: _Budget
    depth: int
    kept: _KeptArchive | None = None

    def display(self, name: str) -> str:
        return f"{shown(self.path)}!{name}"

    def counted(self, size: int) -> bool:
        """Count one more member; False (saying why) once the archive must stop being read."""
        why = self.budget.take(size)
        if why:
            self.stop(why)
        return why is None

    def stop(self, why: str) -> None:
        self.diagnose(Diagnostic(shown(self.path), None,
                                 f"archive {why}; stopped reading it after "
                                 f"{self.budget.members - 1} members",
                                 hint="the members before were read; if the archive is genuine, "
                                      "unpack it and scan the folder"))

    def member(self, name: str, parts: tuple[str, ...], blob: bytes,
               file_member: str) -> Iterator[Entry]:
        """The entry of a member read whole, or the members of an archive inside it."""
        display = self.display(name)
        if is_archive(parts[-1]):
            if self.depth + 1 > self.budget.limits.max_archive_nesting:
                self.skip(NESTED_TOO_DEEP, display)
                return
            # its members are found again by the name their entries carry (``display``)
            inner = None if self.kept is None else self.kept.inner(display)
            yield from iter_archive(display, self.prefix + parts[:-1], self.diagnose, blob,
                                    self.skip, self.budget.limits, self.budget, self.depth + 1,
                                    kept=inner)
            return
        # the member's name as the archive holds it, to find the member again for a finding's line
        read = constant(blob) if self.kept is None else self.kept.reader(file_member, blob)
        yield Entry(display, self.prefix + parts, read, len(blob), self.path, file_member)


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
        return lzma.LZMAFile(raw)  # type: ignore[arg-type, return-value]
    return raw


def constant(data: bytes) -> Callable[[], bytes]:
    """A reader of bytes already in memory."""
    return lambda: data


class TruncatedMember(Exception):
    pass


_ARCHIVE_ERRORS = (tarfile.TarError, EOFError, zlib.error, OSError, lzma.LZMAError, TruncatedMember)


# A tar header's fields: name, mode, uid, gid, size, mtime, checksum, type, link name,
# magic and version, user and group names, device numbers, ustar prefix (POSIX 1003.1).
_HEADER = struct.Struct("100s8s8s8s12s12s8s1s100s8s32s32s8s8s155s")


def _octal(field: bytes) -> int:
    """A number field written in octal, read as ``tarfile.nti`` reads that form (cut at
    the first NUL, ASCII, spaces around); ValueError for anything else (a base-256 field
    starts with a byte that is not ASCII; ``int`` of bytes strips fewer characters than
    ``str.strip``, and a field of spaces only is refused: either is left to tarfile)."""
    digits = field.split(b"\0", 1)[0]
    return int(digits, 8) if digits else 0


class _TarHeader(tarfile.TarInfo):
    """``tarfile.TarInfo`` whose header parsing takes a shorter way for the usual header
    (octal numbers, the checksum right as unsigned bytes, not old-GNU sparse): the same
    fields, read from one struct unpack instead of a slice and a Python call per field
    and a struct unpack of every byte for two checksums. Any other header, and any header
    it cannot read, is left to ``TarInfo.frombuf`` itself, which answers or raises as it
    always did (tests hold the two to the same results). A must-gather has two headers
    per member (GNU long names): reading them was most of streaming its tar."""

    @classmethod
    def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self:
        # a GNU long-name header is read once per distinct header: a must-gather's
        # thousands differ only by the name's length (their size field)
        key = (buf, encoding, errors) if type(buf) is bytes and buf[156:157] in _LONG else None
        fields = _LONG_HEADERS.get(key) if key is not None else None
        if fields is None:
            fields = _short_fields(buf, encoding, errors)
            if fields is None:
                return super().frombuf(buf, encoding, errors)
            if key is not None:
                if len(_LONG_HEADERS) >= 4096:
                    _LONG_HEADERS.clear()
                _LONG_HEADERS[key] = fields
        obj = cls()
        (obj.chksum, obj.mode, obj.uid, obj.gid, obj.size, obj.mtime, obj.devmajor,
         obj.devminor, obj.name, obj.linkname, obj.uname, obj.gname, obj.type) = fields
        return obj

    @classmethod
    def fromtarfile(cls, tar: tarfile.TarFile) -> Self:
        # tarfile ends its members quietly at a header that is cut short or missing (the
        # archive cut inside a header or at a member boundary), as at the end-of-archive
        # zero blocks every tar writer ends with: which one it was is kept for the walker
        try:
            return super().fromtarfile(tar)
        except _CUT_HEADER as exc:
            tar.hcpscan_cut = (  # type: ignore[attr-defined]
                "it ends inside a member's header" if isinstance(exc, _SHORT_HEADER)
                else "it ends without the end-of-archive blocks")
            raise


# tarfile's (undeclared in typeshed) errors for a header missing or cut short
_SHORT_HEADER: type[Exception] = tarfile.TruncatedHeaderError  # type: ignore[attr-defined]
_CUT_HEADER: tuple[type[Exception], ...] = (
    tarfile.EmptyHeaderError, _SHORT_HEADER)  # type: ignore[attr-defined]
_LONG = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
_LONG_HEADERS: dict[tuple[bytes, str, str], tuple] = {}


def _short_fields(buf: bytes | bytearray, encoding: str, errors: str) -> tuple | None:
    """The header's fields as ``TarInfo.frombuf`` sets them (checksum, mode, ids, size,
    time, device numbers, names, type), or None for a header to leave to it."""
    if len(buf) != tarfile.BLOCKSIZE or buf[156:157] == tarfile.GNUTYPE_SPARSE:
        return None
    (name, mode, uid, gid, size, mtime, chksum, kind, linkname, _magic, uname, gname,
     devmajor, devminor, prefix) = _HEADER.unpack_from(buf)
    try:
        numbers = [_octal(f) for f in (chksum, mode, uid, gid, size, mtime, devmajor,
                                       devminor)]
    except ValueError:
        return None
    if numbers[0] != 256 + sum(buf) - sum(chksum):
        return None  # signed, or wrong
    text_name, text_link, text_user, text_group, text_prefix = (
        f.split(b"\0", 1)[0].decode(encoding, errors)
        for f in (name, linkname, uname, gname, prefix))
    # as TarInfo.frombuf: a V7 directory, directories' slashes, a ustar prefix
    if kind == tarfile.AREGTYPE and text_name.endswith("/"):
        kind = tarfile.DIRTYPE
    if kind == tarfile.DIRTYPE:
        text_name = text_name.rstrip("/")
    if text_prefix and kind not in tarfile.GNU_TYPES:
        text_name = text_prefix + "/" + text_name
    return (*numbers, text_name, text_link, text_user, text_group, kind)


class _TarStream:
    """What ``tarfile`` needs of a file (``read``, ``tell``, forward ``seek``) over a
    decompressed tar, read from its source in tarfile's own record size exactly when
    tarfile's stream mode (``_Stream``) would read it: the same reads of the
    decompressor, so damage shows at the same point of the archive and raises the same
    error. What it saves is ``_Stream``'s copying: it joins and slices its whole buffer
    on every read (two per member's header, one per member) and skips a member's data
    one record at a time; here a read is one slice of the record held, and a skip moves
    an index."""

    __slots__ = ("_source", "_record", "_held", "_at", "_pos")

    def __init__(self, source: io.BufferedIOBase, record: int = tarfile.RECORDSIZE) -> None:
        self._source = source
        self._record = record
        self._held = b""  # the last record read, or what is left of a longer read
        self._at = 0  # where in it the stream is
        self._pos = 0  # where in the tar the stream is

    def tell(self) -> int:
        return self._pos

    def read(self, size: int) -> bytes:
        held, at = self._held, self._at
        end = at + size
        if end <= len(held):
            self._at = end
            self._pos += size
            return held[at:end]
        parts = [held[at:]]
        have = len(held) - at
        source, record = self._source, self._record
        while have < size:
            more = source.read(record)
            if not more:
                break
            parts.append(more)
            have += len(more)
        if have <= size:  # all of it (the source ended, or met the size exactly)
            self._held, self._at = b"", 0
            data = b"".join(parts)
        else:  # the last record read goes past: keep its rest
            last = parts[-1]
            cut = len(last) - (have - size)
            parts[-1] = last[:cut]
            self._held, self._at = last, cut
            data = b"".join(parts)
        self._pos += len(data)
        return data

    def seek(self, pos: int) -> int:
        """Forward only, as in stream mode; past the end stops at the end."""
        skip = pos - self._pos
        if skip < 0:
            raise tarfile.StreamError("seeking backwards is not allowed")
        held, at = self._held, self._at
        if at + skip <= len(held):
            self._at = at + skip
            self._pos = pos
            return pos
        skip -= len(held) - at
        self._pos += len(held) - at
        self._held, self._at = b"", 0
        source, record = self._source, self._record
        while skip > 0:
            more = source.read(record)
            if not more:
                break
            if len(more) > skip:
                self._held, self._at = more, skip
                self._pos += skip
                break
            skip -= len(more)
            self._pos += len(more)
        return self._pos


def _member_bytes(tar: tarfile.TarFile, stream: _TarStream, member: tarfile.TarInfo) -> bytes:
    """A regular member's content, as ``tar.extractfile(member).read()`` gives it (a
    sparse member is left to it: its holes are filled in)."""
    if member.sparse is not None:
        content = tar.extractfile(member)
        return content.read() if content is not None else b""
    if member.size <= 0:
        return b""
    stream.seek(member.offset_data)
    blob = stream.read(member.size)
    if len(blob) != member.size:
        raise tarfile.ReadError("unexpected end of data")
    return blob


def _iter_tar(archive: _Archive, data: bytes | None) -> Iterator[Entry]:
    last = None
    path = archive.path
    try:
        raw = io.BufferedReader(io.BytesIO(data)) if data is not None else open(path, "rb")
        with raw, tarfile.TarFile(fileobj=(stream := _TarStream(_decompressed(raw))),  # type: ignore[arg-type]
                                  tarinfo=_TarHeader) as tar:
            for member in tar:
                tar.members = []  # type: ignore[attr-defined]  # stream mode would keep every header it has seen
                if not archive.counted(member.size if member.isfile() else 0):
                    return
                name = shown(member.name)
                parts = _member_parts(name)
                if not _tar_member_wanted(archive, member, name, parts):
                    continue
                if member.size > archive.budget.limits.max_file_size:
                    archive.diagnose(too_large(archive.display(name), archive.budget.limits.max_file_size))
                    continue
                blob = _member_bytes(tar, stream, member)
                if len(blob) != member.size:
                    raise TruncatedMember(f"member {name!r} is cut short")
                last = name
                yield from archive.member(name, parts, blob, member.name)
            cut = getattr(tar, "hcpscan_cut", None)
            if cut is not None and tar.offset:
                raise TruncatedMember(cut)
    except _ARCHIVE_ERRORS as exc:
        where = f"after member {last!r}" if last else "at its start"
        archive.diagnose(Diagnostic(shown(path), None, f"archive is truncated or corrupt {where}: {exc}",
                                    hint="the members before the damage were read; re-create the archive"))


def _tar_member_wanted(archive: _Archive, member: tarfile.TarInfo, name: str,
                       parts: tuple[str, ...]) -> bool:
    """Whether to read a member: a regular file with a name, not hidden."""
    display = archive.display(name)
    if not member.isfile():
        if member.issym() or member.islnk():
            kind = "symbolic" if member.issym() else "hard"
            archive.skip(f"{kind} link in an archive (not followed)", display)
        elif not member.isdir():
            archive.skip("special file in an archive (device, FIFO)", display)
        return False
    if _hidden(parts):
        _pass_over_hidden(display, parts[-1], archive.skip, archive.diagnose)
        return False
    return bool(parts)


def _iter_zip(archive: _Archive, data: bytes | None) -> Iterator[Entry]:
    path = archive.path
    try:
        opened = zipfile.ZipFile(io.BytesIO(data) if data is not None else path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        archive.diagnose(Diagnostic(shown(path), None, f"cannot open zip archive: {exc}",
                                    hint="the archive is truncated or not a zip file; re-create it"))
        return
    limit = archive.budget.limits.max_file_size
    with opened:
        for info in opened.infolist():
            if info.is_dir():
                continue
            # a header's size may lie: what is unpacked is counted, so one lying member
            # is that member's problem, not the end of the archive
            if not archive.counted(0):
                return
            name = shown(info.filename)
            parts = _member_parts(name)
            if not _zip_member_wanted(archive, info, name, parts):
                continue
            try:
                with opened.open(info) as member:
                    blob = member.read(limit + 1)
                    why = archive.budget.grow(len(blob))
                    if why:
                        archive.stop(why)
                        return
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError,
                    RuntimeError, ValueError) as exc:
                archive.diagnose(Diagnostic(archive.display(name), None,
                                            f"cannot read archive member: {exc}",
                                            hint="the archive is damaged; re-create it"))
                continue
            if len(blob) > limit:
                archive.diagnose(too_large(archive.display(name), limit))
                continue
            yield from archive.member(name, parts, blob, info.filename)


def _zip_member_wanted(archive: _Archive, info: zipfile.ZipInfo, name: str,
                       parts: tuple[str, ...]) -> bool:
    display = archive.display(name)
    if not parts:
        return False
    if _hidden(parts):
        _pass_over_hidden(display, parts[-1], archive.skip, archive.diagnose)
        return False
    mode = (info.external_attr >> 16) & 0o170000
    if mode == stat.S_IFLNK:
        archive.skip("symbolic link in an archive (not followed)", display)
        return False
    if mode not in (0, stat.S_IFREG):
        archive.skip("special file in an archive (device, FIFO)", display)
        return False
    return True


# The most bytes of archive members kept, over all archives, after loading read them: a
# scan of an archive holds up to this much more than its inventory (the members parsed,
# as read), and streams the archive again only for a member past it.
KEPT_BYTES = 128 * MiB


def _identity(path: str) -> tuple[int, ...] | None:
    """What tells one archive file from another written at the same path since."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


class _KeptArchive:
    """The members of one archive on disk that loading read (to parse or to sniff them):
    their bytes, as read, until the store's budget is spent."""

    __slots__ = ("store", "members", "live", "outer", "nested", "read_names", "twice")

    def __init__(self, store: _LoadedMembers, outer: _KeptArchive | None = None) -> None:
        self.store = store
        self.members: dict[str, bytes] = {}
        self.live = True  # False once the store let it go: nothing more is kept for it
        # the archive on disk an archive inside it is read from (None: this one is on disk)
        self.outer = outer
        # the archive on disk's records of the archives inside it, at any depth, by the
        # name their members' entries carry as their file ("dump.tar!inner.tar.gz")
        self.nested: dict[str, _KeptArchive] = {}
        self.read_names: set[str] = set()  # the members loading read, kept or not
        self.twice: set[str] = set()  # names of two members loading read

    def inner(self, name: str) -> _KeptArchive:
        """A record of the archive ``name`` read from inside this one, dropped with it."""
        top = self.outer or self
        record = _KeptArchive(self.store, top)
        record.live = top.live
        held = top.nested.get(name)
        if held is None:
            top.nested[name] = record
        else:  # two archives by one name: which one a member is from is not known, keep neither
            self.store.used -= sum(map(len, held.members.values()))
            held.members, held.live, record.live = {}, False, False
        return record

    def reader(self, member: str, blob: bytes) -> Callable[[], bytes]:
        """The member's reader: reading it (what loading does with a member it parses)
        keeps its bytes; a member passed over (logs, resources no rule reads) is not kept."""
        unread = [True]  # loading may read one member twice (to sniff it, then to parse it)

        def read() -> bytes:
            if unread[0]:
                unread[0] = False
                self._read(member, blob)
            return blob

        return read

    def _read(self, member: str, blob: bytes) -> None:
        if member in self.twice:
            return
        if member in self.read_names:
            # a name the archive holds twice (``tar -r``): which copy a finding is in is
            # not known by its name, so neither is kept (nor found by streaming again)
            self.twice.add(member)
            dropped = self.members.pop(member, None)
            if dropped is not None:
                self.store.used -= len(dropped)
            return
        self.read_names.add(member)
        if self.store.take(self, len(blob)):  # past the budget: streaming again finds it
            self.members[member] = blob


class _LoadedMembers:
    """Archive members loading read, kept so a finding's line or a report's snippet in
    a member is looked up without streaming and decompressing the archive again. Keyed
    by the archive's path and identity (a file written at the same path since is another
    archive); the ``keep`` archives read last, at most ``budget`` bytes of members."""

    def __init__(self, keep: int = 4, budget: int = KEPT_BYTES) -> None:
        self.keep, self.budget = keep, budget
        self.used = 0
        self._archives: OrderedDict[tuple[str, tuple[int, ...]], _KeptArchive] = OrderedDict()

    def archive(self, path: str) -> _KeptArchive | None:
        """A new record of the archive at ``path`` (read again: it replaces the last one)."""
        identity = _identity(path)
        if identity is None:
            return None
        self._drop((path, identity))
        while len(self._archives) >= self.keep:
            self._drop(next(iter(self._archives)))
        kept = _KeptArchive(self)
        self._archives[(path, identity)] = kept
        return kept

    def take(self, kept: _KeptArchive, size: int) -> bool:
        """Whether ``size`` more bytes may be kept for ``kept``; older archives make room
        (none is let go for a member that would not fit even alone)."""
        if not kept.live or size > self.budget:
            return False
        owner = kept.outer or kept
        while self.used + size > self.budget:
            oldest = next(iter(self._archives), None)
            if oldest is None or self._archives[oldest] is owner:
                return False
            self._drop(oldest)
        self.used += size
        return True

    def members(self, path: str) -> _KeptArchive | None:
        """The record of the archive at ``path``, or of an archive inside one
        (``path`` as its members' entries name it: "dump.tar!inner.tar.gz")."""
        key = (path, _identity(path) or ())
        kept = self._archives.get(key)
        if kept is None and "!" in path:
            for outer, record in self._archives.items():
                if path in record.nested and _identity(outer[0]) == outer[1]:
                    key, kept = outer, record.nested[path]
                    break
        if kept is not None:
            self._archives.move_to_end(key)
        return kept

    def _drop(self, key: tuple[str, tuple[int, ...]]) -> None:
        kept = self._archives.pop(key, None)
        if kept is not None:
            for record in (kept, *kept.nested.values()):
                self.used -= sum(map(len, record.members.values()))
                record.members, record.live, record.read_names = {}, False, set()
            kept.nested = {}


# What loading read of the archives it streamed, for every reader of members after it.
LOADED = _LoadedMembers()


class ArchiveMembers:
    """Bytes of archive members, to find a finding's line or show a report's snippet
    in a member. A member loading read comes from what it kept (``LOADED``): a scan
    streams an archive once. Any other member (past the kept budget, or an archive not
    loaded in this process) comes from streaming the archive once more, with the bounds
    of loading, its manifests kept compressed for the next finding in it."""

    def __init__(self, keep: int = 4, loaded: _LoadedMembers | None = None) -> None:
        self.keep = keep
        self.loaded = LOADED if loaded is None else loaded
        self._archives: OrderedDict[str, dict[str, bytes]] = OrderedDict()

    def read(self, file: str, member: str) -> bytes | None:
        """``member`` of ``file``, both as loading named them or as a report shows them
        (names that are not UTF-8 have U+FFFD there: ``shown``)."""
        kept = self.loaded.members(file)
        if kept is None and "\ufffd" in file:
            file = on_disk(file)
            kept = self.loaded.members(file)
        if kept is not None:
            member = named(member, kept.members) or member
            found = kept.members.get(member)
            if found is not None:
                return found
            if member in kept.twice:
                return None  # two members by that name: which one is not known
        if not os.path.isfile(file):
            return None  # an archive inside another ("dump.tar!inner.tar") is no file to stream
        members = self._members(file)
        packed = members.get(named(member, members) or member)
        return None if packed is None else zlib.decompress(packed)

    def _members(self, file: str) -> dict[str, bytes]:
        if file in self._archives:
            self._archives.move_to_end(file)
            return self._archives[file]
        members: dict[str, bytes] = {}
        twice: set[str] = set()
        for entry in iter_archive(file, (), lambda diagnostic: None, remember=False):
            if entry.member is not None and not entry.parts[-1].endswith(".log"):
                if entry.member in members:
                    twice.add(entry.member)  # which of the two a finding is in is not known
                else:
                    members[entry.member] = zlib.compress(entry.read(), 1)
        for name in twice:
            del members[name]
        self._archives[file] = members
        if len(self._archives) > self.keep:
            self._archives.popitem(last=False)
        return members
