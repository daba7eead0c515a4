"""An archive read ahead by a child process (``sources/prefetch.py``) is walked exactly
as one the walker streams itself: the same entries with the same bytes, the same
diagnostics, the same skipped members, whole, cut anywhere, damaged, past the child's
cap, with the child killed, with other limits, changed on disk since. The walks run in a
subprocess: forking the test process (which runs threads) is what ``prefetch`` refuses."""

from __future__ import annotations

import gzip
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from hcpscan.sources import prefetch, walk
from hcpscan.sources.interface import InputLimits
from tests.conftest import ROOT, SHARED, require
from tests.sources.test_tar_stream import COMPRESSORS, _gnu_sparse, _tar


def _walk(path: str, limits: InputLimits) -> list:
    diagnostics: list = []
    skipped = walk.SkipRecord()
    entries = [[list(e.parts), e.read().hex(), e.member]
               for e in walk.iter_archive(path, (), diagnostics.append, skip=skipped.add,
                                          limits=limits, remember=False)]
    return [entries, [str(d) for d in diagnostics], skipped.to_json()]


def _case(path: str, how: str) -> dict:
    """One archive walked plainly and read ahead (``how``: what happens to the child, or
    what the walk asks that the reading ahead was not for)."""
    limits = {"limits": InputLimits(max_file_size=30_000),
              # the archive's budget stops the child and the walker at the same member
              "members": InputLimits(max_archive_members=9),
              "bytes": InputLimits(max_archive_bytes=150_000)}.get(how, walk.DEFAULT_LIMITS)
    plain = _walk(path, limits)
    identity = walk._identity(path)
    assert identity is not None
    cap = prefetch.CAP
    if how == "cap":
        prefetch.CAP = 40_000  # the child stops early: the walker streams the rest
    try:
        ahead = prefetch.Prefetch(path, walk.DEFAULT_LIMITS if how == "limits" else limits,
                                  identity)
    finally:
        prefetch.CAP = cap
    walk.PREFETCHED[path] = ahead
    if how == "killed":
        os.kill(ahead.pid, signal.SIGKILL)  # type: ignore[arg-type]
    elif how == "changed":
        os.utime(path, ns=(identity[3] + 10**9, identity[3] + 10**9))
    read_ahead = _walk(path, limits)
    return {"same": plain == read_ahead, "entries": len(plain[0]), "replayed": ahead.replayed,
            "ended": ahead.pid is None, "left": path in walk.PREFETCHED,
            "live": len(prefetch._LIVE)}


def _run_cases(cases: list[tuple[str, str]]) -> list[dict]:
    """The cases in a fresh interpreter (single-threaded, as a scan is)."""
    code = ("import json, sys; from tests.sources.test_archive_prefetch import _case; "
            "print(json.dumps([_case(p, h) for p, h in json.loads(sys.argv[1])]))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(cases)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_read_ahead_archives_walk_alike(tmp_path: Path) -> None:
    cases = []
    for name, compress in sorted(COMPRESSORS.items()):
        data = compress(_tar(seed=len(name)))
        whole = tmp_path / f"whole.{name}"
        whole.write_bytes(data)
        for how in ("plain", "cap", "killed", "limits", "changed", "members", "bytes"):
            copy = tmp_path / f"{how}-{name}.tar.{name}"
            copy.write_bytes(data)
            cases.append((str(copy), how))
        rng = random.Random(name)
        for i, cut in enumerate(rng.sample(range(1, len(data)), 12)):
            part = tmp_path / f"cut{i}-{name}.tar.{name}"
            part.write_bytes(data[:cut])
            cases.append((str(part), "plain"))
        for i in range(8):
            damaged = bytearray(data)
            for _ in range(rng.randrange(1, 4)):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
            path = tmp_path / f"damaged{i}-{name}.tar.{name}"
            path.write_bytes(bytes(damaged))
            cases.append((str(path), "plain"))
    sparse = tmp_path / "sparse.tar"
    sparse.write_bytes(_gnu_sparse())
    cases.append((str(sparse), "plain"))
    results = _run_cases(cases)
    assert all(r["same"] for r in results), [c for c, r in zip(cases, results) if not r["same"]]
    by_how = {how: [r for (_, h), r in zip(cases, results) if h == how]
              for how in ("plain", "cap", "killed", "limits", "changed")}
    # the child's members were used, up to its cap; a killed child's rest is streamed
    assert all(r["replayed"] > 0 for r in by_how["plain"] if r["entries"])
    stopped = [r for (_, h), r in zip(cases, results) if h in ("members", "bytes")]
    assert all(0 < r["replayed"] and r["entries"] < 30 for r in stopped), stopped
    assert all(0 < r["replayed"] < r["entries"] for r in by_how["cap"])
    assert all(r["entries"] > 20 for r in by_how["cap"] + by_how["killed"])
    # a reading ahead for other limits, or of a file changed since, is not used
    assert all(r["replayed"] == 0 for r in by_how["limits"] + by_how["changed"])
    # nothing is left running or waiting: every child ended, used or not
    assert all(r["ended"] and not r["left"] and not r["live"] for r in results)


def test_a_real_must_gather_read_ahead_walks_alike() -> None:
    archive = SHARED / "realworld" / "must-gather-aws" / "must-gather-aws.tar.gz"
    require(archive.is_file(), str(archive))
    [result] = _run_cases([(str(archive), "plain")])
    assert result["same"] and result["replayed"] > 2000 and result["entries"] > 2000


def test_a_scan_of_an_archive_reads_it_ahead_and_reports_alike(tmp_path: Path) -> None:
    """The CLI as a user runs it: the same JSON report with and without reading ahead."""
    archive = SHARED / "realworld" / "must-gather-aws" / "must-gather-aws.tar.gz"
    require(archive.is_file(), str(archive))
    reports = {}
    for mode in ("1", "0"):
        out = tmp_path / f"report-{mode}.json"
        done = subprocess.run([sys.executable, "-m", "hcpscan", "scan", str(archive), "--format",
                               "json", "-o", str(out), "--no-progress"], cwd=ROOT,
                              capture_output=True, text=True, timeout=600,
                              env={**os.environ, "HCPSCAN_PREFETCH": mode,
                                   "PYTHONPATH": str(ROOT)})
        assert done.returncode in (0, 1), done.stderr
        report = json.loads(out.read_text())
        for timing in ("started", "finished", "duration", "stage_seconds"):
            report["scan"].pop(timing)
        reports[mode] = report
    assert reports["1"] == reports["0"]
    assert reports["1"]["summary"]["passed_over"] > 1000 and reports["1"]["rules"]


def test_an_archive_named_as_an_option_value_is_read_ahead_and_let_go(tmp_path: Path) -> None:
    """A word naming an archive that is not a scanned path (here: a baseline file with
    an archive's name) costs a child that is ended unused; the scan is unchanged."""
    data = gzip.compress(_tar(seed=5))
    scanned = tmp_path / "dump.tar.gz"
    scanned.write_bytes(data)
    decoy = tmp_path / "other.tar.gz"
    decoy.write_bytes(data)
    code = ("import sys; from hcpscan.cli.main import main; from hcpscan.sources import prefetch, walk; "
            "rc = main(sys.argv[1:]); print(rc, sorted(walk.PREFETCHED), len(prefetch._LIVE))")
    done = subprocess.run([sys.executable, "-c", code, "scan", str(scanned), "--select", "HCP",
                           "--format", "json", "-o", str(tmp_path / "r.json"), "--no-progress",
                           "--sarif-root", str(decoy)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    words = done.stdout.split()
    assert words[1:] == [f"['{decoy}']", "1"], done.stdout + done.stderr


def test_no_read_ahead_where_it_cannot_run(monkeypatch) -> None:
    monkeypatch.setenv("HCPSCAN_PREFETCH", "0")
    assert not prefetch._enabled()
    monkeypatch.delenv("HCPSCAN_PREFETCH")
    monkeypatch.setenv("HCPSCAN_JOBS", "1")  # one process asked for: no second one
    assert not prefetch._enabled()
    monkeypatch.setenv("HCPSCAN_JOBS", "2")
    import threading

    started = threading.Event()
    stop = threading.Event()
    worker = threading.Thread(target=lambda: (started.set(), stop.wait()))
    worker.start()
    try:
        started.wait()
        assert not prefetch._enabled()  # forking beside a running thread could hang the child
    finally:
        stop.set()
        worker.join()


def test_only_archives_whose_tar_fits_the_cap_are_read_ahead(tmp_path: Path, monkeypatch) -> None:
    """A gzip says its unpacked size: past the child's cap it is not read ahead (the walker
    would decompress again what the child read); a plain tar by its size; xz and bzip2 by
    their packed size."""
    small, big = _tar(seed=1, count=3), _tar(seed=2, count=40)
    monkeypatch.setattr(prefetch, "CAP", (len(small) + len(big)) // 2)
    cases = {"small.tar.gz": (gzip.compress(small), True), "big.tar.gz": (gzip.compress(big), False),
             "small.tar": (small, True), "big.tar": (big, False),
             "big.tar.xz": (COMPRESSORS["xz"](big), True)}
    for name, (data, fits) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert prefetch._fits(str(path), len(data)) is fits, name
    monkeypatch.setattr(prefetch, "MAX_PACKED", 10)
    assert not prefetch._fits(str(tmp_path / "big.tar.xz"), (tmp_path / "big.tar.xz").stat().st_size)
    assert not prefetch._fits(str(tmp_path / "missing.tar.gz"), 100)


def test_the_child_holds_none_of_the_scans_standard_streams(tmp_path: Path) -> None:
    """A reader of the scan's output sees its end when the scan exits (even killed),
    not when the child does: the child's standard streams are /dev/null."""
    archive = tmp_path / "dump.tar.gz"
    archive.write_bytes(gzip.compress(_tar(seed=9, count=6)))
    code = textwrap.dedent("""\
        import os, sys, time
        from hcpscan.sources import prefetch, walk
        slow = walk.streamed_members
        def streamed(*args):  # the child stays in its reading while the streams are looked at
            time.sleep(30)
            yield from slow(*args)
        walk.streamed_members = streamed
        prefetch.start([sys.argv[1]], walk.DEFAULT_LIMITS)
        pid = walk.PREFETCHED[sys.argv[1]].pid
        def links():
            return [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in (0, 1, 2)]
        end = time.monotonic() + 20  # the child redirects them first thing: waited for
        while links() != [os.devnull] * 3 and time.monotonic() < end:
            time.sleep(0.01)
        print(links(), flush=True)
        os.kill(pid, 9)
        os.kill(os.getpid(), 9)
    """)
    done = subprocess.run([sys.executable, "-c", code, str(archive)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "HCPSCAN_JOBS": "2"})
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert done.stdout.strip() == str([os.devnull] * 3)
