"""Reading a tar archive ahead, in a child process, while the scan starts.

A scan of an archive spends its first tenths of a second importing the rule engine and
preparing the rules, then streams the archive (decompressing it, reading tar headers,
copying members) before it parses anything. ``start`` forks a child, before those
imports, that streams each archive named on the command line exactly as the walker would
(``walk.streamed_members`` and ``walk.take_member``, the walker's own functions: the same
members, the same contents, the same limits) and leaves, for each member in order, its
header's name, size and type and, where the walker reads it, its content or the error
reading it raised, in an anonymous in-memory file. The walker then takes the members from
there (``Prefetch.members``) instead of streaming the archive itself, and runs its own
loop over them: whatever it says and yields is what it would have said and yielded.

Anything the child could not finish (it died, hit the memory cap, or read less than the
walker asks for) is taken over where it stopped: the walker streams the archive itself,
passing over the members it already has. A prefetch that no one asks for (the scan ended
early, the archive changed since) is ended with its process.

Linux only (``os.memfd_create``, ``fork``), with more than one job (``core.jobs``: the
cores the process may use, or ``HCPSCAN_JOBS``); elsewhere, with ``HCPSCAN_JOBS=1`` or
``HCPSCAN_PREFETCH=0``, or once threads run, nothing is started and the walker streams
archives as before.
"""

from __future__ import annotations

import atexit
import errno
import marshal
import os
import signal
import sys
import tarfile
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from hcpscan.core.jobs import jobs, may_fork
from hcpscan.sources import walk
from hcpscan.sources.interface import InputLimits, MiB

# The most bytes of members one child leaves for the walker (in memory until the walk
# of the archive ends): past it, the walker streams the rest itself, decompressing
# again what the child had read to pass over it.
CAP = 64 * MiB
# An archive is read ahead when its tar, unpacked, fits the cap (a gzip says its size
# in its last four bytes); an archive whose unpacked size is not known cheaply (xz,
# bzip2) when its packed size is at most this: past the cap, the walker would decompress
# again what the child had read, and the head start is worth little beside its scan.
MAX_PACKED = 16 * MiB
# Members' bytes gathered before the child hands them over.
_FRAME = 1 * MiB
_ENDED = ("end",)  # the tar's members ran out
_STOPPED = ("stop",)  # the child stopped first: the walker streams the rest


def _enabled() -> bool:
    if os.environ.get("HCPSCAN_PREFETCH", "1") == "0":
        return False
    if not (hasattr(os, "memfd_create") and hasattr(os, "pread") and hasattr(os, "pwritev")):
        return False
    # one core, or HCPSCAN_JOBS=1: the scan is one process; no fork beside a thread
    return jobs() > 1 and may_fork()


def start(paths: Iterable[str], limits: InputLimits) -> None:
    """Read ahead each tar archive on disk among ``paths`` (not too large)."""
    if not _enabled():
        return
    for path in paths:
        if path in walk.PREFETCHED or path == "-" or not walk.is_archive(path) \
                or not os.path.isfile(path) or walk._is_zip(path, None):
            continue
        identity = walk._identity(path)
        if identity is None or not _fits(path, identity[2]):
            continue
        try:
            walk.PREFETCHED[path] = Prefetch(path, limits, identity)
        except OSError:
            return  # no memory file, no process: the walker reads it


def _fits(path: str, packed: int) -> bool:
    """Whether the archive's tar fits the cap, as far as is known without reading it."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(2)
            if head == b"\x1f\x8b" and packed >= 18:  # gzip: its size modulo 2**32 at the end
                fh.seek(-4, os.SEEK_END)
                return int.from_bytes(fh.read(4), "little") <= CAP
    except OSError:
        return False
    if head[:2] in (b"\xfd7", b"BZ"):  # xz, bzip2
        return packed <= MAX_PACKED
    return packed <= CAP  # a plain tar


class Prefetch:
    """One archive being read ahead by a child process."""

    def __init__(self, path: str, limits: InputLimits, identity: tuple[int, ...]) -> None:
        self.path, self.limits, self.identity = path, limits, identity
        self.file = os.memfd_create("hcpscan-archive", os.MFD_CLOEXEC)
        try:
            ready, told = os.pipe()
        except OSError:
            os.close(self.file)
            raise
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        try:
            pid = os.fork()
        except OSError:
            for fd in (self.file, ready, told):
                os.close(fd)
            raise
        if pid == 0:  # the child: never returns
            os.close(ready)
            _child(path, limits, self.file, told)
        os.close(told)
        self.pid: int | None = pid
        self.ready = ready  # where the child says what it has written
        self.memory = _Memory(self.file)
        self.replayed = 0  # members the walker took from the child
        _LIVE[id(self)] = self

    def members(self, archive: Any) -> walk.TarMembers | None:
        """The archive's members as ``walk.streamed_members`` gives them, or None when
        this reading is not for ``archive`` (it is ended)."""
        if archive.budget.limits != self.limits or archive.budget.members \
                or walk._identity(self.path) != self.identity:
            self.close()
            return None
        return self._members()

    def _members(self) -> walk.TarMembers:
        index = 0  # members handed to the walker
        taken_over: list[walk.TarMembers] = []
        memory = self.memory

        def reader(stored: tuple[int, int] | None, error: bytes | None,
                   at: int) -> Callable[[], walk.Content]:
            def read() -> walk.Content:
                if stored is not None:
                    return _Stored(memory, *stored)
                if error is not None:
                    raise _error(error)
                # the child did not read it: the walker's stream from this member on
                local = walk.streamed_members(self.path, None, at)
                taken_over.append(local)
                return next(local)[1]()
            return read

        try:
            for record in self._records():
                if record[0] == "m":
                    _, name, size, kind, stored, error = record
                    yield _Member(name, size, kind), reader(stored, error, index)
                    index += 1
                    self.replayed = index
                    if taken_over:
                        yield from taken_over[0]
                        return
                elif record[0] == "x":
                    raise _error(record[1])
                elif record == _ENDED:
                    return
                else:
                    break
            # the child stopped, or died: the walker streams the rest
            yield from walk.streamed_members(self.path, None, index)
        finally:
            for local in taken_over:
                local.close()
            self.close()

    def _records(self) -> Iterator[tuple]:
        """The child's records, each frame as the child says it is written (16 bytes:
        where it starts, how long it is)."""
        while True:
            told = os.read(self.ready, 4096)
            if len(told) < 16:
                return  # the child ended without saying more
            for at in range(0, len(told) - 15, 16):
                start, size = int.from_bytes(told[at:at + 8], "little"), \
                    int.from_bytes(told[at + 8:at + 16], "little")
                frame = os.pread(self.memory.fd, size, start)
                if len(frame) != size:
                    return
                yield from marshal.loads(frame)

    def close(self) -> None:
        """End the child (if still reading) and free what it wrote."""
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        _LIVE.pop(id(self), None)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass
        try:
            os.close(self.ready)
        except OSError:
            pass
        # what the child wrote stays until no entry holds a member of it (``_Memory``)
        del self.memory


class _Memory:
    """The memory file the child writes; closed (freed) once nothing refers to it."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


class _Stored:
    """A member's content in the memory file: copied out when it is read."""

    __slots__ = ("memory", "offset", "size")

    def __init__(self, memory: _Memory, offset: int, size: int) -> None:
        self.memory, self.offset, self.size = memory, offset, size

    def __len__(self) -> int:
        return self.size

    def load(self) -> bytes:
        data = os.pread(self.memory.fd, self.size, self.offset)
        if len(data) != self.size:
            raise OSError(errno.EIO, "an archive member read ahead was lost")
        return data


class _Member:
    """A member's header as the walker's loop reads it (``tarfile.TarInfo``'s tests)."""

    __slots__ = ("name", "size", "type")

    def __init__(self, name: str, size: int, kind: bytes) -> None:
        self.name, self.size, self.type = name, size, kind

    def isfile(self) -> bool:
        return self.type in tarfile.REGULAR_TYPES

    def issym(self) -> bool:
        return self.type == tarfile.SYMTYPE

    def islnk(self) -> bool:
        return self.type == tarfile.LNKTYPE

    def isdir(self) -> bool:
        return self.type == tarfile.DIRTYPE


def _error(pickled: bytes) -> BaseException:
    """The error the child met, as it met it (its type and text)."""
    import pickle

    try:
        error = pickle.loads(pickled)  # noqa: S301 - written by this program's own child
    except Exception:  # noqa: BLE001 - an error that does not come back as itself
        return walk.TruncatedMember("the archive could not be read")
    return error if isinstance(error, BaseException) else walk.TruncatedMember(str(error))


def _pickled(error: BaseException) -> bytes:
    import pickle

    try:
        return pickle.dumps(error)
    except Exception:  # noqa: BLE001
        return pickle.dumps(walk.TruncatedMember(str(error)))


_LIVE: dict[int, Prefetch] = {}


@atexit.register
def _end_all() -> None:
    for prefetch in list(_LIVE.values()):
        prefetch.close()


def _child(path: str, limits: InputLimits, file: int, told: int) -> None:
    """Stream the archive as the walker would, leaving its members in ``file``; exit."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        # the scan's standard streams are not held open by the child (a reader of the
        # scan's output waits for their end, not for the child's)
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        _stream(path, limits, file, told)
    except BaseException:  # noqa: BLE001 - the walker takes over where it stopped
        code = 1
    finally:
        os._exit(code)


def _stream(path: str, limits: InputLimits, file: int, told: int) -> None:
    archive = walk._Archive(path, (), _quiet, _quiet, walk._Budget(limits, walk._size(path)), 0)
    records: list[tuple] = []
    blobs: list[bytes] = []
    pending = 0  # bytes of blobs not written yet
    written = 0  # bytes written

    def hand_over() -> None:
        """Write the members' contents, then the records naming them, then say so."""
        nonlocal written, pending
        frame = marshal.dumps(records)
        parts = [*blobs, frame]
        at = written
        for first in range(0, len(parts), 512):  # no copy of the contents (IOV_MAX: 1024)
            at += _write_all(file, parts[first:first + 512], at)
        start = written + pending
        written = start + len(frame)
        os.write(told, start.to_bytes(8, "little") + len(frame).to_bytes(8, "little"))
        records.clear()
        blobs.clear()
        pending = 0

    try:
        for member, read in walk.streamed_members(path, None):
            taken = walk.take_member(archive, member)
            stored = error = None
            if taken is not None and taken is not walk.STOP:
                try:
                    content = read()  # streamed: bytes
                    blob = content if isinstance(content, bytes) else content.load()
                    stored = (written + pending, len(blob))
                    blobs.append(blob)
                    pending += len(blob)
                except Exception as exc:  # noqa: BLE001 - the walker raises it when it reads
                    error = _pickled(exc)
            records.append(("m", member.name, member.size, member.type, stored, error))
            if taken is walk.STOP or error is not None or written + pending > CAP:
                records.append(_STOPPED)
                break
            if pending >= _FRAME or len(records) >= 4096:
                hand_over()
        else:
            records.append(_ENDED)
    except Exception as exc:  # noqa: BLE001 - reading the next header failed: the walker raises it
        records.append(("x", _pickled(exc)))
    hand_over()


def _write_all(file: int, parts: list[bytes], at: int) -> int:
    """Write ``parts`` one after another at ``at``; how many bytes that was."""
    total = sum(map(len, parts))
    done = os.pwritev(file, parts, at)
    if done < total:  # a short write: the rest in one piece
        rest = b"".join(parts)[done:]
        while rest:
            wrote = os.pwrite(file, rest, at + done)
            if not wrote:
                raise OSError(errno.EIO, "the memory file takes no more")
            done += wrote
            rest = rest[wrote:]
    return total


def _quiet(*_: object) -> None:
    return None
