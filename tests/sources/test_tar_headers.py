"""The archive walker's tar headers (``walk._TarHeader``) read exactly what
``tarfile.TarInfo`` reads: the same fields for every header it takes the short way,
the same answer or the same error for every other one (it hands those to TarInfo)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hcpscan.sources.walk import _TarHeader
from tests.conftest import SHARED, require

ENCODING, ERRORS = "utf-8", "surrogateescape"
FIELDS = ("name", "mode", "uid", "gid", "size", "mtime", "chksum", "type", "linkname", "uname",
          "gname", "devmajor", "devminor")


def _read(buf: bytes, cls: type[tarfile.TarInfo]) -> tuple:
    try:
        info = cls.frombuf(buf, ENCODING, ERRORS)
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        return ("error", type(exc), str(exc))
    return ("header", tuple(getattr(info, f) for f in FIELDS),
            getattr(info, "_sparse_structs", None))


def _same(buf: bytes) -> None:
    assert _read(buf, _TarHeader) == _read(buf, tarfile.TarInfo), buf


def _headers(data: bytes) -> list[bytes]:
    """Every 512-byte block of an uncompressed tar that starts a header, in order."""
    out, offset = [], 0
    while offset + 512 <= len(data):
        block = data[offset:offset + 512]
        if block.count(0) == 512:
            break
        out.append(block)
        info = tarfile.TarInfo.frombuf(block, ENCODING, ERRORS)
        offset += 512 + (info.size + 511) // 512 * 512 * (info.type not in (
            tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.DIRTYPE, tarfile.CHRTYPE,
            tarfile.BLKTYPE, tarfile.FIFOTYPE))
    return out


def _archive(fmt: int) -> bytes:
    """Headers of every kind hcpscan meets: long and non-ASCII names, ustar prefixes,
    links, devices, FIFOs, directories, ids and times too large for octal fields."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tar:
        def add(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", **extra) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.size = kind, len(data)
            for key, value in extra.items():
                setattr(info, key, value)
            tar.addfile(info, io.BytesIO(data) if data else None)

        add("ns/plain.yaml", data=b"kind: ConfigMap\n")
        add("ns/" + "deep/" * 30 + "long-name.yaml", data=b"a: 1\n")  # GNU L / pax / prefix
        add("ns/dir", tarfile.DIRTYPE)
        add("ns/link", tarfile.SYMTYPE, linkname="plain.yaml")
        add("ns/hard", tarfile.LNKTYPE, linkname="ns/plain.yaml")
        add("ns/fifo", tarfile.FIFOTYPE)
        add("ns/dev", tarfile.CHRTYPE, devmajor=1, devminor=3)
        add("ns/owned.yaml", data=b"x", uname="root", gname="wheel", uid=0, gid=0, mode=0o600)
        if fmt != tarfile.USTAR_FORMAT:
            add("ns/ünïcode-名前.yaml", data=b"b: 2\n")
            add("ns/big-ids.yaml", data=b"c", uid=8 ** 8 + 5, gid=8 ** 9, mtime=8 ** 12 + 1)
    return out.getvalue()


def test_every_header_of_every_format_reads_alike() -> None:
    for fmt in (tarfile.GNU_FORMAT, tarfile.PAX_FORMAT, tarfile.USTAR_FORMAT):
        headers = _headers(_archive(fmt))
        assert len(headers) >= 8
        for block in headers:
            _same(block)


def test_a_real_must_gather_reads_alike_member_by_member() -> None:
    archive = SHARED / "realworld" / "must-gather-aws" / "must-gather-aws.tar.gz"
    require(archive.is_file(), str(archive))

    def members(cls: type[tarfile.TarInfo]) -> list[tuple]:
        found = []
        with tarfile.open(archive, "r|*", tarinfo=cls) as tar:
            for member in tar:
                tar.members = []
                found.append((*(getattr(member, f) for f in FIELDS), member.offset,
                              member.offset_data, member.pax_headers))
        return found

    assert members(_TarHeader) == members(tarfile.TarInfo)


def test_odd_headers_are_read_or_refused_as_tarfile_does() -> None:
    good = _headers(_archive(tarfile.GNU_FORMAT))[0]
    cases = [b"", good[:511], bytes(512), good[:148] + b"\x80" + good[149:]]
    # a checksum that holds only when bytes count as signed (Sun and NeXT tars)
    high = bytearray(good)
    high[300:304] = b"\xf0\xf1\xf2\xf3"
    signed = 256 + sum(b - 256 if b > 127 else b for i, b in enumerate(high) if not 148 <= i < 156)
    high[148:156] = f"{signed & 0o7777777:07o}\0".encode()
    cases.append(bytes(high))
    # base-256 numbers, a negative time, an old GNU sparse header, a V7 directory
    for field, value in (((124, 136), b"\x80" + bytes(10) + b"\x05"),
                         ((136, 148), b"\xff" * 12)):
        buf = bytearray(good)
        buf[field[0]:field[1]] = value
        cases.append(_with_checksum(buf))
    # number fields tarfile reads although int() of their bytes would not, or differently:
    # spaces only, a control character str.strip takes away, an underscore, a sign
    for field, value in (((108, 116), b" " * 8), ((100, 108), b"\x1c000644\0"),
                         ((116, 124), b"0_0001\0 "), ((136, 148), b"-0000000001\0"),
                         ((329, 337), b" \t12 \0\0\0")):
        buf = bytearray(good)
        buf[field[0]:field[1]] = value
        cases.append(_with_checksum(buf))
    sparse = bytearray(good)
    sparse[156:157] = tarfile.GNUTYPE_SPARSE
    cases.append(_with_checksum(sparse))
    v7 = bytearray(good)
    v7[0:100] = b"olddir/".ljust(100, b"\0")
    v7[156:157] = tarfile.AREGTYPE
    cases.append(_with_checksum(v7))
    for case in cases:
        _same(case)


def _with_checksum(buf: bytearray) -> bytes:
    buf[148:156] = b" " * 8
    buf[148:156] = f"{sum(buf) & 0o7777777:06o}\0 ".encode()
    return bytes(buf)


_GOOD = [block for fmt in (tarfile.GNU_FORMAT, tarfile.PAX_FORMAT, tarfile.USTAR_FORMAT)
         for block in _headers(_archive(fmt))]


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(_GOOD), st.lists(st.tuples(st.integers(0, 511), st.integers(0, 255)),
                                        max_size=6), st.booleans())
def test_damaged_headers_are_read_or_refused_as_tarfile_does(
        good: bytes, changes: list[tuple[int, int]], fix_checksum: bool) -> None:
    buf = bytearray(good)
    for at, value in changes:
        buf[at] = value
    _same(_with_checksum(buf) if fix_checksum else bytes(buf))


def test_the_walker_reads_a_tar_with_these_headers(tmp_path: Path) -> None:
    """Through the walker: every regular member of each format, by its full name."""
    from hcpscan.sources.walk import iter_archive

    for fmt in (tarfile.GNU_FORMAT, tarfile.PAX_FORMAT, tarfile.USTAR_FORMAT):
        path = tmp_path / f"dump-{fmt}.tar"
        path.write_bytes(_archive(fmt))
        names = {e.member for e in iter_archive(str(path), (), lambda d: None, remember=False)}
        with tarfile.open(path) as tar:
            expected = {m.name for m in tar.getmembers() if m.isfile()}
        assert names == expected and any(n.endswith("long-name.yaml") for n in names)


def test_long_name_headers_read_again_from_the_cache_alike() -> None:
    """GNU long-name headers are read once per distinct header (``walk._LONG_HEADERS``):
    each read again gives what TarInfo gives, and the cache never answers for a header
    that differs from the one it holds (a changed size, a damaged checksum)."""
    from hcpscan.sources import walk

    walk._LONG_HEADERS.clear()
    longs = [b for b in _headers(_archive(tarfile.GNU_FORMAT)) if b[156:157] == b"L"]
    assert longs
    for block in longs * 3:
        _same(block)
    assert walk._LONG_HEADERS
    for block in longs:
        other = bytearray(block)
        other[124:136] = b"00000000777\0"  # another name length
        _same(bytes(other))
        _same(_with_checksum(other))
    assert len(walk._LONG_HEADERS) == 2 * len({bytes(b) for b in longs})
