"""The archive walker reads a tar through ``walk._TarStream`` (tarfile over a forward-only
reader of the decompressed bytes) instead of tarfile's own stream mode (``r|``). It must
give exactly what stream mode gives: the same members with the same bytes, and for a
damaged archive the same members before the damage and the same error text, because the
reader asks the decompressor for the same records at the same moments. The reference
below is the walker's loop as it was, over ``tarfile.open(mode="r|")``."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import random
import tarfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hcpscan.core.diagnostics import Diagnostic, SkipRecord
from hcpscan.sources import walk
from hcpscan.sources.interface import InputLimits
from tests.conftest import SHARED, require


def _reference(data: bytes, limits: InputLimits) -> tuple[list, list, list]:
    """The walker's tar loop before ``_TarStream``: tarfile's stream mode, members read
    with ``extractfile``."""
    entries: list = []
    diagnostics: list = []
    skipped = SkipRecord()
    archive = walk._Archive("a.tar", (), diagnostics.append, skipped.add,
                            walk._Budget(limits, len(data)), 0)
    last = None
    try:
        raw = io.BufferedReader(io.BytesIO(data))
        with raw, tarfile.open(fileobj=walk._decompressed(raw), mode="r|",
                               tarinfo=walk._TarHeader) as tar:
            for member in tar:
                tar.members = []
                if not archive.counted(member.size if member.isfile() else 0):
                    break
                name = walk.shown(member.name)
                parts = walk._member_parts(name)
                if not walk._tar_member_wanted(archive, member, name, parts):
                    continue
                if member.size > limits.max_file_size:
                    diagnostics.append(walk.too_large(archive.display(name), limits.max_file_size))
                    continue
                content = tar.extractfile(member)
                blob = content.read() if content is not None else b""
                if len(blob) != member.size:
                    raise walk.TruncatedMember(f"member {name!r} is cut short")
                last = name
                entries.append((parts, blob, member.name))
            # an archive cut inside a header or at a member boundary (walk._TarHeader says)
            if getattr(tar, "hcpscan_cut", None) is not None and tar.offset:
                raise walk.TruncatedMember(tar.hcpscan_cut)
    except walk._ARCHIVE_ERRORS as exc:
        where = f"after member {last!r}" if last else "at its start"
        diagnostics.append(Diagnostic("a.tar", None, f"archive is truncated or corrupt {where}: {exc}",
                                      hint="the members before the damage were read; re-create "
                                           "the archive"))
    return entries, [str(d) for d in diagnostics], skipped.to_json()


def _walked(data: bytes, limits: InputLimits) -> tuple[list, list, list]:
    diagnostics: list = []
    skipped = SkipRecord()
    entries = [(e.parts, e.read(), e.member)
               for e in walk.iter_archive("a.tar", (), diagnostics.append, data, skipped.add,
                                          limits)]
    return entries, [str(d) for d in diagnostics], skipped.to_json()


def _same(data: bytes, limits: InputLimits = walk.DEFAULT_LIMITS) -> None:
    assert _walked(data, limits) == _reference(data, limits)


_TEXT = bytes.maketrans(bytes(range(256)), (b"abcdefgh: \n-_xyz01" * 16)[:256])


def _tar(fmt: int = tarfile.GNU_FORMAT, seed: int = 0, count: int = 40) -> bytes:
    """Members of every size around tarfile's 10 KiB record and 512-byte blocks, long
    names, links, directories, a hidden file and an empty one."""
    rng = random.Random(seed)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tar:
        for i in range(count):
            size = rng.choice([0, 1, 511, 512, 513, 10239, 10240, 10241, 20480, 30000,
                               rng.randrange(0, 70000)])
            name = f"ns-{i}/" + "deep/" * rng.randrange(0, 25) + f"file-{i}.yaml"
            info = tarfile.TarInfo(name)
            info.size = size
            tar.addfile(info, io.BytesIO(rng.randbytes(size).translate(_TEXT)))
            if i % 7 == 3:
                link = tarfile.TarInfo(f"ns-{i}/link")
                link.type, link.linkname = tarfile.SYMTYPE, f"file-{i}.yaml"
                tar.addfile(link)
            if i % 11 == 5:
                folder = tarfile.TarInfo(f"ns-{i}/dir")
                folder.type = tarfile.DIRTYPE
                tar.addfile(folder)
        hidden = tarfile.TarInfo("ns/.hidden.yaml")
        hidden.size = 3
        tar.addfile(hidden, io.BytesIO(b"a: 1"[:3]))
    return out.getvalue()


COMPRESSORS = {"tar": lambda b: b, "gz": gzip.compress, "xz": lzma.compress,
               "bz2": lambda b: bz2.compress(b, 1)}  # 100 kB blocks: cuts fall between them


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT, tarfile.USTAR_FORMAT])
@pytest.mark.parametrize("compress", sorted(COMPRESSORS))
def test_whole_archives_read_alike(fmt: int, compress: str) -> None:
    data = COMPRESSORS[compress](_tar(fmt, seed=fmt))
    entries, texts, _ = _walked(data, walk.DEFAULT_LIMITS)
    assert len(entries) >= 40 and not texts
    _same(data)


@pytest.mark.parametrize("compress", sorted(COMPRESSORS))
def test_archives_cut_anywhere_keep_the_same_members_and_error(compress: str) -> None:
    """Cut at 120 places (in headers, in members, on record and block edges): the same
    members before the damage, the same error after the same member."""
    data = COMPRESSORS[compress](_tar(seed=7))
    rng = random.Random(3)
    cuts = sorted({*rng.sample(range(1, len(data)), 100), *range(0, len(data), len(data) // 20)})
    kept = set()
    for cut in cuts:
        _same(data[:cut])
        kept.add(len(_walked(data[:cut], walk.DEFAULT_LIMITS)[0]))
    assert len(kept) > 3  # the cuts fell all over the archive


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(COMPRESSORS)), st.integers(0, 3),
       st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
                min_size=1, max_size=4))
def test_damaged_bytes_read_alike(compress: str, seed: int,
                                  changes: list[tuple[float, int]]) -> None:
    buf = bytearray(COMPRESSORS[compress](_tar(seed=seed, count=12)))
    for at, value in changes:
        buf[int(at * len(buf))] = value
    _same(bytes(buf))


def test_limits_stop_at_the_same_member() -> None:
    data = gzip.compress(_tar(seed=11))
    for limits in (InputLimits(max_file_size=20000), InputLimits(max_archive_members=9),
                   InputLimits(max_archive_bytes=100000)):
        _same(data, limits)


def test_a_sparse_member_is_read_with_its_holes() -> None:
    """A GNU sparse member (old format) goes to tarfile's own reader, holes filled in."""
    data = _gnu_sparse()
    entries, texts, _ = _walked(data, walk.DEFAULT_LIMITS)
    assert not texts and entries[0][1] == b"ab" + bytes(1022) + b"cd" + bytes(510)
    _same(data)


def _gnu_sparse() -> bytes:
    """An old-GNU sparse member ('S'): two data blocks of 512 bytes standing at offsets
    0 and 1024 of a 1536-byte file."""
    header = bytearray(512)
    header[0:9] = b"sparse.db"
    header[100:108] = b"0000644\0"
    header[108:116] = header[116:124] = b"0000000\0"
    header[124:136] = b"00000002000\0"  # 1024 bytes stored
    header[136:148] = b"00000000000\0"
    header[156:157] = tarfile.GNUTYPE_SPARSE
    header[257:265] = b"ustar  \0"
    # sparse map (offset, numbytes) at 386, four 24-byte slots; real size at 483
    header[386:398] = b"00000000000\0"
    header[398:410] = b"00000001000\0"
    header[410:422] = b"00000002000\0"
    header[422:434] = b"00000001000\0"
    header[483:495] = b"00000003000\0"
    header[148:156] = b" " * 8
    header[148:156] = f"{sum(header):06o}\0 ".encode()
    first = b"ab".ljust(512, b"\0")
    second = b"cd".ljust(512, b"\0")
    return bytes(header) + first + second + bytes(1024)


def test_a_real_must_gather_reads_alike() -> None:
    archive = SHARED / "realworld" / "must-gather-aws" / "must-gather-aws.tar.gz"
    require(archive.is_file(), str(archive))
    data = archive.read_bytes()
    entries, texts, skipped = _walked(data, walk.DEFAULT_LIMITS)
    assert len(entries) > 2000
    _same(data)
    _same(data[: len(data) // 2])  # cut in its middle


def test_the_stream_refuses_to_seek_back_as_stream_mode_does() -> None:
    stream = walk._TarStream(io.BytesIO(bytes(30000)))  # type: ignore[arg-type]
    assert stream.read(700) == bytes(700) and stream.tell() == 700
    assert stream.seek(25000) == 25000 and stream.read(10000) == bytes(5000)
    assert stream.seek(40000) == 30000  # past the end: at the end, as _Stream
    with pytest.raises(tarfile.StreamError):
        stream.seek(10)
