"""Archives built to exhaust memory or time: bombs, too many members, nesting."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

from hcpscan.sources.interface import InputLimits, MiB
from hcpscan.sources.loader import load_paths
from hcpscan.sources.walk import NESTED_TOO_DEEP
from tests.hostile.harness import GOOD, diagnostics, run_every_command, with_good

ZEROS = bytes(MiB)


def _tar_bomb(path: Path, members: int, mib: int) -> None:
    """Members of zeros, written as one gzip stream per block (readers join them):
    built in no time, unpacked a thousand times larger."""
    zeros = gzip.compress(ZEROS)
    with open(path, "wb") as out:
        for i in range(members):
            info = tarfile.TarInfo(f"dump/zeros-{i}.yaml")
            info.size = mib * MiB
            out.write(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT)))
            out.write(zeros * mib)
        out.write(gzip.compress(bytes(1024)))  # the end-of-archive blocks


def test_a_tar_gz_bomb_stops_early_and_the_rest_is_read(tmp_path: Path) -> None:
    tree = with_good(tmp_path / "dump")
    _tar_bomb(tree / "bomb.tar.gz", members=100, mib=4)  # 400 MiB from about 400 KiB
    runs = run_every_command(str(tree))
    [stop] = [d for d in diagnostics(runs) if d["path"].endswith("bomb.tar.gz")]
    assert "times its size" in stop["message"] and "decompression bomb" in stop["message"]
    assert "stopped reading it after 20 members" in stop["message"]


def test_a_zip_bomb_stops_early_and_the_rest_is_read(tmp_path: Path) -> None:
    tree = with_good(tmp_path / "dump")
    with zipfile.ZipFile(tree / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for i in range(40):
            with archive.open(f"zeros-{i}.yaml", "w") as member:
                for _ in range(4):
                    member.write(ZEROS)
    runs = run_every_command(str(tree))
    [stop] = [d for d in diagnostics(runs) if d["path"].endswith("bomb.zip")]
    assert "decompression bomb" in stop["message"]


def test_a_member_above_the_maximum_size_is_not_unpacked(tmp_path: Path) -> None:
    tree = with_good(tmp_path / "dump")
    with tarfile.open(tree / "dump.tar", "w") as tar:
        for name, text in (("big.yaml", GOOD + "#" * 5000 + "\n"), ("ok.yaml", GOOD.replace("good-web", "ok-web"))):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    runs = run_every_command(str(tree), "--max-file-size", "4K")
    [big] = diagnostics(runs)
    assert big["path"].endswith("dump.tar!big.yaml") and "maximum file size" in big["message"]
    assert "ok-web" in runs["inventory"].out


def test_members_beyond_the_count_limit_are_not_read(tmp_path: Path) -> None:
    archive = tmp_path / "many.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for i in range(30):
            data = GOOD.replace("good-web", f"web-{i}").encode()
            info = tarfile.TarInfo(f"m{i:02}.yaml")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    result = load_paths([str(archive)], limits=InputLimits(max_archive_members=10))
    assert len(result.objects) == 10
    [stop] = result.diagnostics
    assert "more than 10 members" in stop.message and "after 10 members" in stop.message


def test_archives_nested_too_deep_are_not_opened(tmp_path: Path) -> None:
    data = GOOD.encode()
    name = "good.yaml"
    for level in range(5):  # a zip in a zip in a zip ...
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr(name, data)
            if level == 4:
                archive.writestr("top.yaml", GOOD.replace("good-web", "top-web"))
        data, name = buffer.getvalue(), f"level{level}.zip"
    tree = tmp_path / "dump"
    tree.mkdir()
    (tree / "outer.zip").write_bytes(data)
    result = load_paths([str(tree)])
    assert [o.name for o in result.objects] == ["top-web"]
    assert result.skipped.counts == {NESTED_TOO_DEEP: 1}


def _configmap(name: str) -> bytes:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: a}}\n".encode()


def test_a_member_whose_header_lies_about_its_size_costs_only_itself(tmp_path: Path) -> None:
    """The central directory claims 4 GiB for the middle member: the unpacked bytes are
    what counts, so the members after it are still read (before: the archive was called
    a decompression bomb and its later members lost)."""
    import struct

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in ("a", "b", "c"):
            archive.writestr(f"{name}.yaml", _configmap(name))
    data = bytearray(buffer.getvalue())
    at = data.find(b"PK\x01\x02")  # each central directory entry
    while at >= 0:
        length = struct.unpack_from("<H", data, at + 28)[0]
        if bytes(data[at + 46:at + 46 + length]) == b"b.yaml":
            struct.pack_into("<I", data, at + 24, 0xFFFFFF00)  # uncompressed size
        at = data.find(b"PK\x01\x02", at + 4)
    (tmp_path / "dump.zip").write_bytes(bytes(data))
    result = load_paths([str(tmp_path / "dump.zip")])
    assert {o.name for o in result.objects} >= {"a", "c"}
    assert not any("bomb" in d.message for d in result.diagnostics)


def test_archives_are_told_by_their_content_not_their_name(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "really-a-zip.tar.gz", "w") as archive:
        archive.writestr("a.yaml", _configmap("from-zip"))
    with tarfile.open(tmp_path / "really-a-tar.zip", "w:gz") as archive:
        blob = _configmap("from-tar")
        info = tarfile.TarInfo("b.yaml")
        info.size = len(blob)
        archive.addfile(info, io.BytesIO(blob))
    result = load_paths([str(tmp_path / "really-a-zip.tar.gz"), str(tmp_path / "really-a-tar.zip")])
    assert {o.name for o in result.objects} == {"from-zip", "from-tar"} and not result.diagnostics
