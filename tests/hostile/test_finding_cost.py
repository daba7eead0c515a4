"""The cost of a finding's line does not grow with the input: a document is composed
from its own lines, an archive is streamed once."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from hcpscan.core.yamldocs import locate
from hcpscan.inventory import Inventory
from hcpscan.inventory import locator as locator_module
from hcpscan.sources import walk
from hcpscan.sources.loader import load_paths
from tests.hostile.harness import GOOD

DOCS = 200
FIELD = ("spec", "template", "spec", "containers", 0, "env", 0, "value")


def _documents() -> str:
    return "---\n".join(GOOD.replace("good-web", f"web-{i}") for i in range(DOCS))


def test_each_document_is_composed_from_its_own_lines(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "many.yaml"
    path.write_text("# many Deployments\n" + _documents())
    composed: list[int] = []
    real = locator_module.compose_document

    def counting(text, index):  # type: ignore[no-untyped-def]
        composed.append(len(text))
        return real(text, index)

    monkeypatch.setattr(locator_module, "compose_document", counting)
    inventory = Inventory(load_paths([str(path)]).objects)
    text = path.read_bytes()
    for obj in inventory.objects:
        found = inventory.locate(obj, FIELD)
        assert (found.line, found.column) == locate(text, obj.source.doc_index, None, FIELD)[:2]
    assert len(composed) == DOCS and max(composed) < 2 * len(GOOD)


def _archive(tmp_path: Path, suffix: str, count: int = 50) -> Path:
    archive = tmp_path / f"dump{suffix}"
    files = {f"ns/web-{i}.yaml": GOOD.replace("good-web", f"web-{i}").encode() for i in range(count)}
    if suffix == ".zip":
        import zipfile

        with zipfile.ZipFile(archive, "w") as out:
            for name, data in files.items():
                out.writestr(name, data)
    else:
        with tarfile.open(archive, "w:gz") as out:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                out.addfile(info, io.BytesIO(data))
    return archive


def _counting_streams(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    streamed: list[str] = []
    real = walk.iter_archive

    def counting(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        streamed.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(walk, "iter_archive", counting)
    return streamed


@pytest.mark.parametrize("suffix", [".tar.gz", ".zip"])
def test_an_archive_is_read_once_for_all_its_findings(tmp_path: Path, monkeypatch, suffix: str) -> None:
    """Loading keeps the members it read: locating every object's field in them
    streams the archive no more (it was streamed once, by loading)."""
    archive = _archive(tmp_path, suffix)
    inventory = Inventory(load_paths([str(archive)]).objects, read_member=walk.ArchiveMembers().read)
    streamed = _counting_streams(monkeypatch)
    assert len(inventory.objects) == 50
    for obj in inventory.objects:
        assert inventory.locate(obj, FIELD).line == 13
    assert streamed == []


@pytest.mark.parametrize("suffix", [".tar.gz", ".zip"])
def test_members_past_the_kept_budget_stream_the_archive_once_more(
        tmp_path: Path, monkeypatch, suffix: str) -> None:
    """With room for about ten members, the others are found by streaming the archive
    once more (once for all of them), at the same lines."""
    archive = _archive(tmp_path, suffix)
    monkeypatch.setattr(walk, "LOADED", walk._LoadedMembers(budget=10 * len(GOOD) + 100))
    inventory = Inventory(load_paths([str(archive)]).objects, read_member=walk.ArchiveMembers().read)
    kept = walk.LOADED.members(str(archive))
    assert kept is not None and 5 <= len(kept.members) <= 11
    streamed = _counting_streams(monkeypatch)
    for obj in inventory.objects:
        assert inventory.locate(obj, FIELD).line == 13
    assert streamed == [str(archive)]


def test_an_archive_written_again_at_the_same_path_is_not_read_from_what_was_kept(
        tmp_path: Path, monkeypatch) -> None:
    archive = _archive(tmp_path, ".tar.gz", count=3)
    load_paths([str(archive)])
    with tarfile.open(archive, "w:gz") as out:  # the same names, other content
        data = ("# moved down\n" + GOOD.replace("good-web", "web-0")).encode()
        info = tarfile.TarInfo("ns/web-0.yaml")
        info.size = len(data)
        out.addfile(info, io.BytesIO(data))
    streamed = _counting_streams(monkeypatch)
    assert walk.ArchiveMembers().read(str(archive), "ns/web-0.yaml") == data
    assert streamed == [str(archive)]


def test_a_scan_streams_an_archive_once_for_its_findings_and_snippets(
        tmp_path: Path, monkeypatch, run_cli) -> None:
    """The whole command: loading streams the archive; the findings' lines (JSON) and the
    SARIF's line hashes read the members loading kept, at the lines a scan of the same
    files unpacked gives."""
    from tests.conftest import FIXTURES

    folder = tmp_path / "unpacked"
    folder.mkdir()
    for name in ("cluster-proxy.yaml", "node-and-fleet-configs.yaml"):
        (folder / name).write_bytes((FIXTURES / "rules" / "PRX008" / "fail" / name).read_bytes())
    archive = tmp_path / "dump.tar.gz"
    with tarfile.open(archive, "w:gz") as out:
        for path in sorted(folder.iterdir()):
            out.add(path, arcname=f"config/{path.name}")
    streamed = _counting_streams(monkeypatch)
    report, sarif = tmp_path / "report.json", tmp_path / "report.sarif"
    result = run_cli("scan", str(archive), "--format", f"json={report}", "--format", f"sarif={sarif}",
                     "--select", "PRX008", "--no-progress")
    assert result.code == 1, result.err
    assert streamed == [str(archive)]
    unpacked = run_cli("scan", str(folder), "--format", "json", "--select", "PRX008", "--no-progress")

    def places(findings, prefix):  # type: ignore[no-untyped-def]
        return sorted((f["location"]["path"].removeprefix(prefix), f["location"]["line"])
                      for f in findings if f["status"] == "fail")

    import json

    packed = places(json.loads(report.read_text())["findings"], f"{archive}!config/")
    plain = places(json.loads(unpacked.out)["findings"], f"{folder}/")
    assert packed == plain and len(packed) >= 3 and all(line > 1 for _, line in packed)
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert results and all(r["partialFingerprints"] for r in results)


def test_the_kept_budget_lets_the_oldest_archive_go_first(tmp_path: Path, monkeypatch) -> None:
    """Room for about two archives' members: loading a third lets the first go (its
    members are then found by streaming it again), and what is counted as kept is what
    is kept."""
    folders = []
    for name in ("a", "b", "c"):
        folder = tmp_path / name
        folder.mkdir()
        folders.append(_archive(folder, ".tar.gz", count=5))
    size = 5 * len(GOOD.replace("good-web", "web-0"))
    store = walk._LoadedMembers(budget=2 * size + 50)
    monkeypatch.setattr(walk, "LOADED", store)
    for archive in folders:
        load_paths([str(archive)])
    first, second, third = (store.members(str(a)) for a in folders)
    assert first is None and second is not None and third is not None
    assert len(second.members) == len(third.members) == 5
    assert store.used == sum(len(b) for k in (second, third) for b in k.members.values())
    streamed = _counting_streams(monkeypatch)
    data = walk.ArchiveMembers(loaded=store).read(str(folders[0]), "ns/web-3.yaml")
    assert data == GOOD.replace("good-web", "web-3").encode() and streamed == [str(folders[0])]


@pytest.mark.parametrize("inner_suffix", [".tar.gz", ".zip"])
def test_a_member_of_an_archive_inside_an_archive_is_found_at_its_line(
        tmp_path: Path, monkeypatch, inner_suffix: str) -> None:
    """An archive inside an archive (a must-gather tarball inside a support bundle): its
    members' fields are at their own lines, from what loading kept (the entries name
    them "outer.tar!inner.tar.gz", which is no file to stream again: before, every finding
    in them fell back to its document's first line)."""
    inner = _archive(tmp_path, inner_suffix, count=3)
    outer = tmp_path / "bundle.tar"
    with tarfile.open(outer, "w") as out:
        out.add(inner, arcname=f"gathered/{inner.name}")
    from hcpscan.cli import reporting

    monkeypatch.setattr(walk, "LOADED", walk._LoadedMembers())
    monkeypatch.setattr(reporting, "_ARCHIVES", walk.ArchiveMembers())
    inventory = Inventory(load_paths([str(outer)]).objects, read_member=walk.ArchiveMembers().read)
    streamed = _counting_streams(monkeypatch)
    assert len(inventory.objects) == 3
    for obj in inventory.objects:
        assert inventory.locate(obj, FIELD).line == 13
    # what a report reads for a snippet (SARIF's line hashes): the member's text
    source = inventory.objects[0].source
    assert source.file == f"{outer}!gathered/{inner.name}"
    text = reporting.read_source_text(source.path)
    assert text is not None and text.encode() == walk.ArchiveMembers().read(source.file, source.member)
    assert streamed == []


def test_an_archive_let_go_lets_go_of_the_archives_inside_it(tmp_path: Path, monkeypatch) -> None:
    """The bytes kept of an archive inside another are counted, and given back with it."""
    inner = _archive(tmp_path, ".tar.gz", count=3)
    outers = []
    for name in ("a", "b"):
        outer = tmp_path / f"{name}.tar"
        with tarfile.open(outer, "w") as out:
            out.add(inner, arcname=inner.name)
        outers.append(outer)
    store = walk._LoadedMembers(keep=1)
    monkeypatch.setattr(walk, "LOADED", store)
    load_paths([str(outers[0])])
    nested = store.members(f"{outers[0]}!{inner.name}")
    assert nested is not None and len(nested.members) == 3
    assert store.used == sum(map(len, nested.members.values()))
    load_paths([str(outers[1])])  # room for one archive: the first goes, with what is inside it
    assert store.members(f"{outers[0]}!{inner.name}") is None and not nested.members
    assert store.used == sum(map(len, store.members(f"{outers[1]}!{inner.name}").members.values()))


def test_a_member_larger_than_the_budget_lets_no_archive_go(tmp_path: Path, monkeypatch) -> None:
    """A member that could not be kept even alone (--max-file-size above the budget) is
    not kept, and the archives kept before stay."""
    small = _archive(tmp_path, ".tar.gz", count=2)
    big_folder = tmp_path / "big"
    big_folder.mkdir()
    big = big_folder / "big.tar.gz"
    data = (GOOD + "#" * 4000 + "\n").encode()
    with tarfile.open(big, "w:gz") as out:
        info = tarfile.TarInfo("ns/big.yaml")
        info.size = len(data)
        out.addfile(info, io.BytesIO(data))
    store = walk._LoadedMembers(budget=3 * len(GOOD))
    monkeypatch.setattr(walk, "LOADED", store)
    load_paths([str(small)])
    load_paths([str(big)])
    kept_small, kept_big = store.members(str(small)), store.members(str(big))
    assert kept_small is not None and len(kept_small.members) == 2
    assert kept_big is not None and kept_big.members == {}


def test_two_archives_by_one_name_inside_an_archive_keep_nothing(tmp_path: Path, monkeypatch) -> None:
    """An outer tar holding two different archives under one name: which one a member
    came from is not known by its name, so neither is kept (no line of the one is given
    to a finding in the other); the bytes counted for the first are given back."""
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    inner_one = _archive(first, ".tar.gz", count=2)
    inner_two = second / "dump.tar.gz"
    with tarfile.open(inner_two, "w:gz") as out:
        data = ("# moved down\n" + GOOD.replace("good-web", "web-0")).encode()
        info = tarfile.TarInfo("ns/web-0.yaml")
        info.size = len(data)
        out.addfile(info, io.BytesIO(data))
    outer = tmp_path / "bundle.tar"
    with tarfile.open(outer, "w") as out:
        out.add(inner_one, arcname="dump.tar.gz")
        out.add(inner_two, arcname="dump.tar.gz")
    store = walk._LoadedMembers()
    monkeypatch.setattr(walk, "LOADED", store)
    load_paths([str(outer)])
    nested = store.members(f"{outer}!dump.tar.gz")
    assert nested is not None and nested.members == {} and store.used == 0


@pytest.mark.parametrize("budget", [walk.KEPT_BYTES, 10])
def test_a_name_held_twice_gives_neither_copy_the_other_ones_lines(
        tmp_path: Path, monkeypatch, budget: int) -> None:
    """A tar holding two members by one name (``tar -r`` of an edited file), each with its
    own object: the second's field was located in the first's text (line 13 of the first,
    where the second has it at 16). Neither is read again by name: each object keeps its
    own document's first line. Whether kept (128 MiB) or streamed again (a 10-byte budget)."""
    archive = tmp_path / "dump.tar"
    with tarfile.open(archive, "w") as out:
        for text in (GOOD, "# edited\n# and\n# appended\n" + GOOD.replace("good-web", "other")):
            data = text.encode()
            info = tarfile.TarInfo("ns/web.yaml")
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
    monkeypatch.setattr(walk, "LOADED", walk._LoadedMembers(budget=budget))
    inventory = Inventory(load_paths([str(archive)]).objects, read_member=walk.ArchiveMembers().read)
    lines = sorted((obj.name, inventory.locate(obj, FIELD).line) for obj in inventory.objects)
    assert lines == [("good-web", 1), ("other", 4)]


def test_a_file_in_a_folder_named_with_an_exclamation_mark_has_its_snippet(tmp_path: Path) -> None:
    """"!" separates an archive from its member in a finding's path, but a folder may hold
    one too: such a file's text (SARIF's line hashes) was never read."""
    from hcpscan.cli.reporting import read_source_text

    folder = tmp_path / "backup!2024"
    folder.mkdir()
    (folder / "web.yaml").write_text(GOOD)
    assert read_source_text(str(folder / "web.yaml")) == GOOD


def _proxy_configmap() -> bytes:
    return (b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: proxy-settings\n"
            b"  namespace: default\ndata:\n  HTTPS_PROXY: http://user:secret@proxy.example.com:3128\n")


def _line_hashes(run_cli, sarif: Path) -> list[tuple[str, bool]]:  # type: ignore[no-untyped-def]
    import json

    results = json.loads(sarif.read_text())["runs"][0]["results"]
    return [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             "primaryLocationLineHash" in r["partialFingerprints"]) for r in results]


def test_files_and_members_named_in_other_encodings_keep_their_sarif_line_hash(
        run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A name that is not UTF-8 is shown with U+FFFD (no report could encode it): the
    SARIF line hash reads the file's text back by that shown name, so it must find the
    file on disk, and the member in its archive, that the name stands for."""
    import os

    folder = os.path.join(os.fsencode(tmp_path), b"caf\xe9")
    os.mkdir(folder)
    with open(os.path.join(folder, b"proxy\xe9.yaml"), "wb") as out:
        out.write(_proxy_configmap())
    archive = tmp_path / "dump.tar"
    with tarfile.open(archive, "w", format=tarfile.GNU_FORMAT, encoding="latin-1") as tar:
        info = tarfile.TarInfo("ns\xe9/proxy.yaml")
        info.size = len(_proxy_configmap())
        tar.addfile(info, io.BytesIO(_proxy_configmap()))
    streamed = _counting_streams(monkeypatch)
    for given, shown in ((os.fsdecode(folder), "caf%EF%BF%BD/proxy%EF%BF%BD.yaml"),
                         (str(archive), "dump.tar/ns%EF%BF%BD/proxy.yaml")):
        sarif = tmp_path / "out.sarif"
        result = run_cli("scan", given, "--format", "sarif", "-o", str(sarif), "--sarif-root",
                         str(tmp_path))
        assert result.code == 1, result.err
        hashes = _line_hashes(run_cli, sarif)
        assert hashes and all(uri.endswith(shown) and hashed for uri, hashed in hashes), hashes
    assert streamed == [str(archive)]  # the member loading kept, not streamed again
