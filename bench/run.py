"""Benchmarks: ``hcpscan scan`` and ``hcpscan connectivity`` against their floor and peers.

    python3 bench/run.py                       # N = 10, 100, 500 hosted clusters, peers included
    python3 bench/run.py --sizes 10,100 --no-peers
    python3 bench/run.py --write-results       # also rewrite bench/RESULTS.md

For each N it generates a management cluster (bench/generate.py, cached in
bench/out/) and measures, each in its own process:

* ``hcpscan scan DIR --format json``: wall time end to end, the report's
  per-stage seconds (load, graph, rules, report), and peak memory (the
  largest resident set of the scan process, and the largest sum over it and
  its parse workers, sampled from /proc);
* the floor: reading and parsing, with yaml-rs (the parser hcpscan uses) on as
  many processes as the scan and nothing else, exactly the files the scan reads
  (same layout rules, same resources; planned before it starts); libyaml's C
  loader in one process as a peer;
* checkov (``checkov -d DIR --framework kubernetes``) on the same directory;
* ``hcpscan connectivity`` against np-guard's ``nca --connectivity`` on
  Namespaces/Pods/NetworkPolicies (bench/generate.py netpol), at 2,000 pods /
  500 policies and 20,000 pods / 5,000 policies; and at 2,000 pods / 500
  policies plus 50 AdminNetworkPolicies and a 10-rule BaselineAdminNetworkPolicy,
  against the plain run of the same pods and policies (nca is not run on it).

Before any timing, the measured source trees (this one and ``--before DIR``) are
byte-compiled once (``python -m compileall -q``), as ``pip install`` of a wheel does:
with ``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__`` every run would otherwise
compile hcpscan again (~0.2 s), which the start-up rows would measure.

Every floor is a whole process measured from outside the same way as the scan (wall
from start to exit, CPU of the process and everything it started), so both sides
include their interpreter's start-up, and the ratios are of those; what it reads is
planned before it starts (outside the timing). For the real must-gather archive the
floor streams the archive with ``tarfile`` and parses the members the scan parses with
yaml-rs on as many processes as the scan has. A floor's own timed span (reading and
parsing only) is kept beside it (``inner_seconds``; shown for the archive).

Peers live in their own virtualenvs under bench/.venvs/, created here on first
use; a peer that cannot be installed, or runs past --timeout, is reported as
such. Ratios compare runs of the same invocation on the same machine. Not part
of the test suite.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"
VENVS = HERE / ".venvs"
sys.path.insert(0, str(HERE))

PEERS = {"checkov": ("checkov", "checkov"), "nca": ("network-config-analyzer", "nca")}


# -- measuring a process ---------------------------------------------------------------------

def _tree_rss(pid: int) -> int:
    """Resident set (bytes) of a process and its descendants, from /proc."""
    return _tree_memory(pid)[0]


def _tree_memory(pid: int) -> tuple[int, int]:
    """Resident set and proportional set (bytes) of a process and its descendants, from
    /proc. RSS counts a page shared by processes in each of them (the parse workers share
    the imports of the forkserver they come from); PSS counts it once in all."""
    total, proportional, stack = 0, 0, [pid]
    while stack:
        p = stack.pop()
        try:
            rss = 0
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1]) * 1024
                        break
            total += rss
            pss = rss
            try:
                with open(f"/proc/{p}/smaps_rollup") as fh:
                    for line in fh:
                        if line.startswith("Pss:"):
                            pss = int(line.split()[1]) * 1024
                            break
            except OSError:
                pass
            proportional += pss
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return total, proportional


_SUBREAPER = [False]


def _become_subreaper() -> None:
    """Orphans of a measured command (the scan's forkserver and, through it, its parse
    workers) are handed to this process, which reaps them: their CPU then shows in
    RUSAGE_CHILDREN, as the CPU of every process the command started must."""
    if _SUBREAPER[0]:
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        raise SystemExit("run.py: cannot become a child subreaper (prctl); CPU would be undercounted")
    _SUBREAPER[0] = True


def _reap_orphans(wait_seconds: float = 30.0) -> None:
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.02)


def measure(cmd: list[str], timeout: float, stdout: Path | None = None,
            env: dict[str, str] | None = None, cwd: Path = REPO) -> dict[str, Any]:
    """Wall seconds, exit code, CPU seconds of the process and every process it started,
    peak RSS of the process (rusage) and of its tree (sampled)."""
    import resource

    _become_subreaper()
    _reap_orphans(0)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = open(stdout, "wb") if stdout else subprocess.DEVNULL
    err_path = OUT / "last-stderr.txt"
    with open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd)
        peak = [0, 0]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.1):
                rss, pss = _tree_memory(proc.pid)
                peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        timed_out = False
        try:
            _, status, usage = _wait4(proc, timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        done.set()
        sampler.join()
    _reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if stdout:
        out.close()  # type: ignore[union-attr]
    return {"seconds": seconds, "rc": proc.returncode, "timed_out": timed_out,
            # user + system CPU of the process and of every process it started (parse workers)
            "cpu": _cpu_seconds(after) - _cpu_seconds(before),
            "max_rss": usage.ru_maxrss * 1024, "peak_tree_rss": max(peak[0], usage.ru_maxrss * 1024),
            "peak_tree_pss": peak[1],
            "stderr": err_path.read_text(errors="replace")[-2000:]}


def _wait4(proc: subprocess.Popen, timeout: float):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return pid, status, usage
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        time.sleep(0.05)


# -- the floor -------------------------------------------------------------------------------

def floor_files(root: str) -> list[str]:
    """The files ``hcpscan scan root`` parses with the default rules (its own selection)."""
    from hcpscan.rules.config import ScanConfig
    from hcpscan.scan import RuleSelection, load_rules, resource_needs
    from hcpscan.sources.loader import planned_files

    return planned_files(root, resource_needs(load_rules(ScanConfig(), RuleSelection())))


def _cpu_seconds(usage: Any) -> float:
    return usage.ru_utime + usage.ru_stime


def _parse_rs(paths: list[str]) -> int:
    """Worker of the floor: read and parse files with yaml-rs (as hcpscan calls it),
    keep nothing; the count of files parsed."""
    import yaml_rs

    for path in paths:
        with open(path, "rb") as fh:
            yaml_rs.loads(fh.read().decode("utf-8"), parse_datetime=False)
    return len(paths)


def _shares(files: list[str], jobs: int, batch_bytes: int = 4 << 20) -> list[list[str]]:
    """Files in batches of about ``batch_bytes`` (largest first), so ``jobs`` workers
    finish together however the sizes fall."""
    sized = sorted(((os.path.getsize(f), f) for f in files), reverse=True)
    batches: list[list[str]] = []
    current: list[str] = []
    total = 0
    for size, path in sized:
        current.append(path)
        total += size
        if total >= batch_bytes:
            batches.append(current)
            current, total = [], 0
    if current:
        batches.append(current)
    return batches


def run_floor(root: str, parser: str, jobs: int, listed: str | None = None) -> None:
    """Child process: read + parse exactly the scan's files, objects discarded.

    ``yaml-rs`` is the parser hcpscan itself uses (the honest floor), on ``jobs``
    processes (a fork pool, its CPU counted); ``libyaml`` is PyYAML's C loader in this
    process (a peer: what a Python tool built on PyYAML pays). The files are those named
    in ``listed`` (the scan's plan, made before this process started), else planned here.
    Prints its own timed span (reading and parsing); the bench measures the whole
    process from outside, as it does the scan."""
    import resource

    if listed is not None:
        with open(listed, encoding="utf-8", errors="surrogateescape") as fh:
            files = [line for line in fh.read().split("\n") if line]
    else:
        files = floor_files(root)
    size = sum(os.path.getsize(f) for f in files)
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_SELF)
    documents = 0
    if parser == "libyaml":
        import yaml

        for path in files:
            with open(path, "rb") as fh:
                data = fh.read()
            for _ in yaml.load_all(data, Loader=yaml.CSafeLoader):
                documents += 1
    elif jobs <= 1:
        _parse_rs(files)
    else:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            parsed = sum(pool.imap_unordered(_parse_rs, _shares(files, jobs)))
        assert parsed == len(files)
    seconds = time.perf_counter() - start
    mine = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = _cpu_seconds(mine) - _cpu_seconds(before) + _cpu_seconds(workers)
    print(json.dumps({"seconds": seconds, "cpu": cpu, "files": len(files), "bytes": size,
                      "documents": documents, "parser": parser, "jobs": jobs,
                      "max_rss": max(mine.ru_maxrss, workers.ru_maxrss) * 1024}))


_PLANS: dict[str, Path] = {}


def _planned(root: str) -> Path:
    """The scan's files below ``root``, one a line, planned once (outside any timing)."""
    if root not in _PLANS:
        listed = OUT / f"floor-files-{len(_PLANS)}.txt"
        listed.write_text("\n".join(floor_files(root)), encoding="utf-8", errors="surrogateescape")
        _PLANS[root] = listed
    return _PLANS[root]


def measure_floor(root: str, parser: str, jobs: int, timeout: float) -> dict[str, Any]:
    """The floor as a whole process measured from outside like the scan (interpreter
    start-up included on both sides): wall, CPU (its workers' too) and peak memory; its
    own timed span is kept as ``inner_seconds``/``inner_cpu``."""
    report = OUT / "floor.json"
    outer = measure([sys.executable, str(Path(__file__)), "--floor", root, "--floor-parser", parser,
                     "--floor-jobs", str(jobs), "--floor-files", str(_planned(root))],
                    timeout, stdout=report)
    if outer["rc"] != 0:
        raise SystemExit(f"run.py: the {parser} floor failed: {outer['stderr'][-1000:]}")
    inner = json.loads(report.read_text().strip().splitlines()[-1])
    return {**inner, "inner_seconds": inner["seconds"], "inner_cpu": inner["cpu"],
            "seconds": outer["seconds"], "cpu": outer["cpu"],
            "max_rss": max(inner["max_rss"], outer["max_rss"])}


# -- peers -----------------------------------------------------------------------------------

def peer(name: str, log: list[str]) -> Path | None:
    """The peer's executable in its own virtualenv, installing it on first use."""
    package, exe = PEERS[name]
    venv = VENVS / name
    binary = venv / "bin" / exe
    if binary.exists():
        return binary
    print(f"installing {package} into {venv} ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", package], check=True,
                       timeout=1800, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except (subprocess.SubprocessError, OSError) as exc:
        log.append(f"{package} could not be installed: {exc}")
        return None
    return binary if binary.exists() else None


def peer_version(binary: Path | None, args: list[str]) -> str:
    if binary is None:
        return "not installed"
    try:
        text = subprocess.run([str(binary), *args], capture_output=True, text=True,
                              timeout=120).stdout.strip()
        return text.splitlines()[-1] if text else "?"
    except (subprocess.SubprocessError, OSError):
        return "?"


# -- the runs --------------------------------------------------------------------------------

def ensure_mgmt(n: int, seed: int) -> dict[str, Any]:
    import generate

    marker = OUT / f"mgmt-{n}.json"
    if marker.exists() and (OUT / f"mgmt-{n}").exists():
        info = json.loads(marker.read_text())
        if info.get("seed") == seed:
            return info
    print(f"generating {n} hosted clusters ...", flush=True)
    try:
        info = generate.generate_mgmt(n, seed=seed, out=OUT)
    except generate.TemplateMissing as exc:
        sys.exit(f"run.py: {exc}")
    info["seed"] = seed
    marker.write_text(json.dumps(info))
    return info


def ensure_netpol(pods: int, policies: int, seed: int, anps: int = 0,
                  banp_rules: int = 0) -> dict[str, Any]:
    import generate

    name = generate.netpol_name(pods, policies, anps, banp_rules)
    marker = OUT / f"{name}.json"
    if marker.exists() and (OUT / name).exists():
        return json.loads(marker.read_text())
    info = generate.generate_netpol(pods, policies, seed=seed, out=OUT, anps=anps,
                                    banp_rules=banp_rules)
    marker.write_text(json.dumps(info))
    return info


def hcpscan() -> list[str]:
    return [sys.executable, "-m", "hcpscan"]


def _jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def bench_scan(n: int, args: argparse.Namespace, log: list[str]) -> dict[str, Any]:
    """The scan against its floor, taken in pairs one right after the other (``--repeat``
    pairs; the ratios are the pairs' medians, so a burst of load on the shared machine
    weighs on one pair, not on the figure)."""
    info = ensure_mgmt(n, args.seed)
    root = info["path"]
    row: dict[str, Any] = {"n": n, "data": info, "pairs": []}
    jobs = _jobs()
    report = OUT / f"report-{n}.json"
    for _ in range(args.repeat):
        floor = measure_floor(root, "yaml-rs", jobs, args.timeout)
        scan = measure([*hcpscan(), "scan", root, "--format", "json", "-o", str(report),
                        "--no-progress"], args.timeout)
        if scan["rc"] not in (0, 1) or scan["timed_out"]:
            log.append(f"hcpscan scan N={n} failed (rc {scan['rc']}): {scan['stderr'][-400:]}")
            row["scan"], row["floor"] = scan, floor
            return row
        data = json.loads(report.read_text())
        scan["stages"] = data["scan"].get("stage_seconds", {})
        scan["duration"] = data["scan"].get("duration")
        scan["objects"] = data["inventory"]["total"] if isinstance(data.get("inventory"), dict) else None
        scan["findings"] = len(data["findings"])
        pair = {"floor": floor, "scan": scan}
        if args.before:
            # the same command run from another source tree (`python -m` imports the
            # hcpscan of its working directory first), right after this one
            pair["before"] = measure([*hcpscan(), "scan", root, "--format", "json", "-o",
                                      str(OUT / f"report-{n}-before.json"), "--no-progress"],
                                     args.timeout, cwd=Path(args.before))
        row["pairs"].append(pair)
    middle = sorted(row["pairs"], key=lambda p: p["scan"]["seconds"] / p["floor"]["seconds"])
    chosen = middle[len(middle) // 2]
    row["floor"], row["scan"] = chosen["floor"], chosen["scan"]
    row["wall_ratio"] = _median([p["scan"]["seconds"] / p["floor"]["seconds"] for p in row["pairs"]])
    row["cpu_ratio"] = _median([p["scan"]["cpu"] / p["floor"]["cpu"] for p in row["pairs"]])
    if args.before:
        row["before"] = chosen["before"]
        row["before_wall_ratio"] = _median([p["scan"]["seconds"] / p["before"]["seconds"]
                                            for p in row["pairs"]])
        row["before_cpu_ratio"] = _median([p["scan"]["cpu"] / p["before"]["cpu"]
                                           for p in row["pairs"]])
    if args.single:
        floor1 = measure_floor(root, "yaml-rs", 1, args.timeout)
        one = measure([*hcpscan(), "scan", root, "--format", "json", "-o", str(report),
                       "--no-progress"], args.timeout, env={**os.environ, "HCPSCAN_JOBS": "1"})
        row["single"] = {"floor": floor1, "scan": one}
    if n <= args.libyaml_max:
        row["libyaml"] = measure_floor(root, "libyaml", 1, args.timeout)
    if args.peers and n <= args.checkov_max:
        checkov = peer("checkov", log)
        if checkov is not None:
            row["checkov"] = measure([str(checkov), "-d", root, "--framework", "kubernetes",
                                      "--quiet", "--compact", "-o", "json"], args.timeout,
                                     stdout=OUT / f"checkov-{n}.json")
    return row


# -- start-up and a real archive ------------------------------------------------------------

ONE_FILE = REPO / "fixtures" / "rules" / "PRX008" / "fail" / "cluster-proxy.yaml"


def bench_startup(args: argparse.Namespace) -> dict[str, Any]:
    """CPU of `python -c pass`, `hcpscan --version`, `hcpscan --help` and a one-file scan,
    each the least of ``--startup-runs`` runs (start-up has no useful median under load:
    the least is what the code costs)."""
    cases = {"python -c pass": [sys.executable, "-c", "pass"],
             "hcpscan --version": [*hcpscan(), "--version"],
             "hcpscan --help": [*hcpscan(), "--help"],
             "hcpscan scan (one file)": [*hcpscan(), "scan", str(ONE_FILE), "--format", "json"]}
    return {name: min((measure(cmd, args.timeout) for _ in range(args.startup_runs)),
                      key=lambda r: r["cpu"]) for name, cmd in cases.items()}


def run_archive_floor(archive: str, members_file: str | None, jobs: int) -> None:
    """Child process: stream the archive with tarfile and parse the members named in
    ``members_file`` (the scan's own plan, one a line, made before this process started;
    without it, planned here first) with yaml-rs on ``jobs`` processes (bytes shipped,
    nothing kept or returned). Prints its own timed span (after the interpreter started
    and the list was read); the bench measures the whole process from outside, as it
    does the scan."""
    import contextlib
    import multiprocessing
    import tarfile

    if members_file is None:
        wanted = set(archive_members(archive))
    else:
        with open(members_file, encoding="utf-8", errors="surrogateescape") as fh:
            wanted = set(fh.read().split("\n")) - {""}
    start = time.perf_counter()
    size = parsed = 0
    with contextlib.ExitStack() as stack:
        pool = (stack.enter_context(multiprocessing.get_context("fork").Pool(jobs))
                if jobs > 1 else None)
        waiting = []
        with tarfile.open(archive, "r|*") as tar:  # streamed, as the scan reads it
            for member in tar:
                if member.isfile() and member.name in wanted:
                    data = tar.extractfile(member).read()  # type: ignore[union-attr]
                    size += len(data)
                    if pool is None:
                        parsed += _parse_bytes(data)
                    else:
                        waiting.append(pool.apply_async(_parse_bytes, (data,)))
        parsed += sum(w.get() for w in waiting)
    print(json.dumps({"seconds": time.perf_counter() - start, "files": parsed, "bytes": size,
                      "jobs": jobs}))


def _parse_bytes(data: bytes) -> int:
    import yaml_rs

    yaml_rs.loads(data.decode("utf-8"), parse_datetime=False)
    return 1


def archive_members(archive: str) -> list[str]:
    """The members of an archive that ``hcpscan scan archive`` parses (its own plan)."""
    return [f.split("!", 1)[1] if "!" in f else f for f in floor_files(archive)]


def _archive_pair(archive: str, members: Path, jobs: int, args: argparse.Namespace
                  ) -> dict[str, Any]:
    """The floor on ``jobs`` processes, then the scan (``HCPSCAN_JOBS=1`` when one)."""
    floor = measure([sys.executable, str(Path(__file__)), "--archive-floor", archive,
                     "--archive-members", str(members), "--floor-jobs", str(jobs)], args.timeout,
                    stdout=OUT / "archive-floor.json")
    if floor["rc"] != 0:
        raise SystemExit(f"run.py: the archive floor failed: {floor['stderr'][-1000:]}")
    inner = json.loads((OUT / "archive-floor.json").read_text().strip().splitlines()[-1])
    floor.update(files=inner["files"], bytes=inner["bytes"], inner_seconds=inner["seconds"],
                 jobs=jobs)
    env = {**os.environ, "HCPSCAN_JOBS": "1"} if jobs == 1 else None
    scan = measure([*hcpscan(), "scan", archive, "--format", "json", "-o",
                    str(OUT / "report-archive.json"), "--no-progress"], args.timeout, env=env)
    return {"floor": floor, "scan": scan}


def _archive_row(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    pairs.sort(key=lambda p: p["scan"]["seconds"] / p["floor"]["seconds"])
    return {**pairs[len(pairs) // 2], "pairs": pairs,
            "wall_ratio": _median([p["scan"]["seconds"] / p["floor"]["seconds"] for p in pairs]),
            "cpu_ratio": _median([p["scan"]["cpu"] / p["floor"]["cpu"] for p in pairs])}


def bench_archive(archive: str, args: argparse.Namespace) -> dict[str, Any]:
    """The scan of a real archive against tar + yaml-rs of its members, each a whole
    process measured from outside (start-up included on both sides), in pairs; with
    ``--single`` (the default) also one scan process against one floor process."""
    members = OUT / "archive-members.txt"
    members.write_text("\n".join(archive_members(archive)), encoding="utf-8",
                       errors="surrogateescape")
    row = {"archive": archive,
           **_archive_row([_archive_pair(archive, members, _jobs(), args) for _ in range(args.repeat)])}
    if args.single:
        row["single"] = _archive_row([_archive_pair(archive, members, 1, args)
                                      for _ in range(args.repeat)])
    return row


def compile_trees(trees: list[Path]) -> None:
    """Byte-compile each source tree's package once, before anything is timed, as
    installing a wheel does (so no run pays for compiling under PYTHONDONTWRITEBYTECODE)."""
    for tree in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "hcpscan")],
                       check=True, stdout=subprocess.DEVNULL)


def compiled_state(tree: Path) -> str:
    """Whether the tree's compiled rebuild of parsed YAML (``hcpscan/sources/_rebuild.c``,
    built by ``pip install``) is there: a tree exported with ``git archive`` has only its
    source, and runs the Python code it stands for."""
    probe = subprocess.run([sys.executable, "-c", "from hcpscan.sources import fastyaml; "
                            "print(getattr(fastyaml, 'COMPILED', 'absent'))"],
                           env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree,
                           capture_output=True, text=True, check=False)
    state = probe.stdout.strip()
    return {"True": "built", "False": "not built (pure Python)"}.get(state, "not in this tree")


def bench_connectivity(pods: int, policies: int, args: argparse.Namespace,
                       log: list[str], anps: int = 0, banp_rules: int = 0) -> dict[str, Any]:
    info = ensure_netpol(pods, policies, args.seed, anps, banp_rules)
    root = info["path"]
    row: dict[str, Any] = {"pods": pods, "policies": policies, "anps": anps,
                           "banp_rules": banp_rules, "data": info}
    listing = OUT / f"connectivity-{Path(root).name.removeprefix('netpol-')}.txt"
    row["hcpscan"] = measure([*hcpscan(), "connectivity", root, "--no-progress"], args.timeout,
                             stdout=listing)
    row["hcpscan"]["lines"] = sum(1 for _ in open(listing))
    if anps or banp_rules:
        return row  # nca is run on the plain NetworkPolicy input only: the ratio is to that
    if args.peers and pods <= args.nca_max:
        nca = peer("nca", log)
        if nca is not None:
            row["nca"] = measure([str(nca), "--connectivity", "--resource_list", root,
                                  "--output_format", "txt"], args.timeout,
                                 stdout=OUT / f"nca-{pods}-{policies}.txt")
            if row["nca"]["rc"] not in (0, 1) and pods > 10_000:
                log.append(f"nca failed at {pods} pods: nca 2.x accepts at most 10,000 pods "
                           "(an assertion on max_num_of_pods in nca/CoreDS/Peer.py; run nca "
                           "with --debug to see it)")
    return row


# -- the table -------------------------------------------------------------------------------

def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _mib(value: int | None) -> str:
    return "-" if not value else f"{value / 2**20:.0f}"


def _peer_cell(result: dict[str, Any] | None, ours: float, timeout: float) -> str:
    if result is None:
        return "not run"
    if result["timed_out"]:
        return f"> {timeout:.0f} s (≥ {timeout / ours:.1f}× ours)"
    if result["rc"] not in (0, 1):
        return f"failed (rc {result['rc']}) after {result['seconds']:.1f} s"
    return f"{result['seconds']:.2f} s ({result['seconds'] / ours:.1f}× ours)"


def fit_exponent(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log(time) against log(N)."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else None


def _wall_cpu(result: dict[str, Any]) -> str:
    return f"{_s(result['seconds'])} s ({_s(result.get('cpu'))})"


def render(rows: list[dict[str, Any]], conn: list[dict[str, Any]], args: argparse.Namespace,
           log: list[str], versions: dict[str, str], startup: dict[str, Any] | None = None,
           archive: dict[str, Any] | None = None) -> str:
    lines = ["### hcpscan scan (management cluster in must-gather layout)", "",
             "Wall seconds (CPU seconds, parse workers included). Floor: yaml-rs on "
             f"{rows[0]['floor'].get('jobs', '?') if rows else '?'} processes, objects discarded, "
             "a whole process like the scan (interpreter start-up on both sides); "
             "× floor: median over the pairs of the scan's time over the floor's "
             "measured just before it.", "",
             "| N hosted clusters | objects (read / written) | YAML parsed | floor (yaml-rs) "
             "| hcpscan scan | × floor wall | × floor CPU | load | graph | rules | findings "
             "| start-up + report | peak RSS MiB (main / all; all as PSS) | libyaml, 1 process (peer) "
             "| checkov |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    points, floor_points, cpu_points = [], [], []
    for row in rows:
        scan, floor, data = row["scan"], row["floor"], row["data"]
        stages = scan.get("stages", {})
        ok = scan["rc"] in (0, 1) and not scan["timed_out"]
        if ok:
            points.append((row["n"], scan["seconds"]))
            floor_points.append((row["n"], floor["seconds"]))
            if scan.get("cpu"):
                cpu_points.append((row["n"], scan["cpu"]))
        libyaml = row.get("libyaml")
        lines.append(
            f"| {row['n']} | {scan.get('objects') or '-'} / {data['objects']} "
            f"| {floor['bytes'] / 2**20:.0f} MiB in {floor['files']} files | {_wall_cpu(floor)} "
            f"| {_wall_cpu(scan) if ok else 'failed'} "
            f"| {row.get('wall_ratio', 0):.2f} | {row.get('cpu_ratio', 0):.2f} "
            f"| {_s(stages.get('load'))} | {_s(stages.get('graph'))} | {_s(stages.get('rules'))} "
            f"| {_s(stages.get('findings'))} "
            f"| {_s(scan['seconds'] - scan['duration']) if scan.get('duration') else '-'} "
            f"| {_mib(scan['max_rss'])} / {_mib(scan['peak_tree_rss'])}; "
            f"{_mib(scan.get('peak_tree_pss'))} "
            f"| {_wall_cpu(libyaml) if libyaml else '-'} "
            f"| {_peer_cell(row.get('checkov'), scan['seconds'], args.timeout)} |")
    exponent, floor_exponent = fit_exponent(points), fit_exponent(floor_points)
    cpu_exponent = fit_exponent(cpu_points)
    lines += ["", "Fitted scaling exponent (least squares, log time vs log N): "
                  f"scan wall {exponent:.2f}, scan CPU "
                  f"{'-' if cpu_exponent is None else f'{cpu_exponent:.2f}'}, floor wall {floor_exponent:.2f}"
              if exponent is not None and floor_exponent is not None
              else "Fitted exponent: needs two sizes"]
    befores = [row for row in rows if row.get("before")]
    if befores:
        lines += ["", f"Against the code before (`{args.before}`), run right after each scan "
                      "on the same input:", "",
                  "| N | before: wall (CPU) | peak RSS MiB | now: wall (CPU) | peak RSS MiB "
                  "| now / before, wall | CPU | RSS |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for row in befores:
            old, new = row["before"], row["scan"]
            lines.append(f"| {row['n']} | {_wall_cpu(old)} | {_mib(old['peak_tree_rss'])} "
                         f"| {_wall_cpu(new)} | {_mib(new['peak_tree_rss'])} "
                         f"| {row['before_wall_ratio']:.2f} | {row['before_cpu_ratio']:.2f} "
                         f"| {new['peak_tree_rss'] / old['peak_tree_rss']:.2f} |")
    singles = [row for row in rows if row.get("single")]
    if singles:
        lines += ["", "One process (`HCPSCAN_JOBS=1`) against yaml-rs in one process, CPU seconds:",
                  "", "| N | floor (yaml-rs, 1 process) | hcpscan scan | × floor |",
                  "|---:|---:|---:|---:|"]
        for row in singles:
            floor, one = row["single"]["floor"], row["single"]["scan"]
            lines.append(f"| {row['n']} | {_s(floor['cpu'])} | {_s(one['cpu'])} "
                         f"| {one['cpu'] / floor['cpu']:.2f} |")
    if startup:
        base = startup["python -c pass"]["cpu"] or 0.001
        lines += ["", "### Start-up (CPU, least of "
                      f"{args.startup_runs} runs)", "",
                  "| command | CPU | × `python -c pass` | wall |", "|---|---:|---:|---:|"]
        for name, result in startup.items():
            lines.append(f"| `{name}` | {result['cpu']:.3f} s | {result['cpu'] / base:.1f} "
                         f"| {result['seconds']:.3f} s |")
        lines.append(f"\nOne file: `{ONE_FILE.relative_to(REPO)}`.")
    if archive:
        lines += ["", "### A real must-gather archive", "",
                  "Both sides whole processes measured from outside (interpreter start-up "
                  "included); the floor streams the archive with tarfile and parses the "
                  "members the scan parses with yaml-rs on as many processes as the scan "
                  "(their list made before it starts). Ratios: medians over the pairs.", "",
                  "| archive | processes | YAML parsed | floor: tar + yaml-rs of the scan's members "
                  "| floor's own timed span | hcpscan scan | × floor wall | × floor CPU |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for label, result in (("", archive), ("1 (`HCPSCAN_JOBS=1`)", archive.get("single"))):
            if not result:
                continue
            floor, scan = result["floor"], result["scan"]
            wall = result.get("wall_ratio", scan["seconds"] / floor["seconds"])
            cpu = result.get("cpu_ratio")
            lines.append(
                f"| `{Path(archive['archive']).name}` | {label or floor.get('jobs', '?')} "
                f"| {floor['bytes'] / 2**20:.0f} MiB in {floor['files']} members "
                f"| {_wall_cpu(floor)} | {_s(floor.get('inner_seconds'))} s | {_wall_cpu(scan)} "
                f"| {wall:.2f} | {'-' if cpu is None else f'{cpu:.2f}'} |")
    if conn:
        lines += ["", "### hcpscan connectivity vs nca (Namespaces, Pods, NetworkPolicies; "
                      "rows with ANPs add AdminNetworkPolicies and a BaselineAdminNetworkPolicy)", "",
                  "| pods / policies / ANPs / BANP rules | hcpscan connectivity | × plain "
                  "| peak RSS MiB | lines | nca --connectivity |",
                  "|---|---:|---:|---:|---:|---|"]
        plain = {(r["pods"], r["policies"]): r["hcpscan"]["seconds"] for r in conn
                 if not r.get("anps") and not r.get("banp_rules")}
        for row in conn:
            ours = row["hcpscan"]
            tiers = bool(row.get("anps") or row.get("banp_rules"))
            base = plain.get((row["pods"], row["policies"]))
            ratio = f"{ours['seconds'] / base:.2f}" if tiers and base else "-"
            nca = ("not run (ANPs: compare with the plain row's nca)" if tiers
                   else _peer_cell(row.get("nca"), ours["seconds"], args.timeout))
            lines.append(f"| {row['pods']} / {row['policies']} / {row.get('anps', 0)} "
                         f"/ {row.get('banp_rules', 0)} | {_s(ours['seconds'])} s | {ratio} "
                         f"| {_mib(ours['peak_tree_rss'])} | {ours['lines']} | {nca} |")
    lines += ["", "Peers: " + ", ".join(f"{k} {v}" for k, v in versions.items())]
    if log:
        lines += ["", "Notes:"] + [f"* {entry}" for entry in log]
    return "\n".join(lines)


def machine() -> str:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem = next(int(line.split()[1]) for line in open("/proc/meminfo")
                   if line.startswith("MemTotal")) * 1024
    except (OSError, StopIteration):
        mem = 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"{cpu}, {cores} cores, {mem / 2**30:.0f} GiB RAM, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,100,500", help="hosted clusters per run (N)")
    parser.add_argument("--connectivity", default="2000:500,2000:500:50:10,20000:5000",
                        help="pods:policies[:anps:banp_rules] for hcpscan connectivity vs nca "
                             "('' to skip)")
    parser.add_argument("--no-peers", dest="peers", action="store_false",
                        help="leave out checkov and nca")
    parser.add_argument("--checkov-max", type=int, default=500, help="largest N checkov runs on")
    parser.add_argument("--nca-max", type=int, default=20000, help="most pods nca runs on")
    parser.add_argument("--timeout", type=float, default=900, help="seconds allowed per command")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--write-results", action="store_true", help="rewrite bench/RESULTS.md")
    parser.add_argument("--repeat", type=int, default=1,
                        help="floor/scan pairs per size (the ratios are their medians)")
    parser.add_argument("--before", metavar="DIR",
                        help="another source tree of hcpscan (e.g. `git archive REV | tar -x -C DIR`) "
                             "whose scan is run after each scan, for a same-run comparison")
    parser.add_argument("--libyaml-max", type=int, default=500,
                        help="largest N the libyaml peer (PyYAML's C loader, one process) runs on")
    parser.add_argument("--no-single", dest="single", action="store_false",
                        help="leave out the one-process (HCPSCAN_JOBS=1) scan and floor")
    parser.add_argument("--startup-runs", type=int, default=5,
                        help="runs of each start-up command (0: leave start-up out)")
    parser.add_argument("--archive", default=str(REPO.parent / "shared" / "realworld" /
                                                 "must-gather-aws" / "must-gather-aws.tar.gz"),
                        help="a must-gather archive to scan against tar + parse ('' to skip)")
    parser.add_argument("--floor", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--floor-parser", default="yaml-rs", help=argparse.SUPPRESS)
    parser.add_argument("--floor-jobs", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--floor-files", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--archive-floor", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--archive-members", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--render", action="store_true",
                        help="only print the table of the last run (bench/out/results.json)")
    args = parser.parse_args()
    if args.floor:
        run_floor(args.floor, args.floor_parser, args.floor_jobs or 1, args.floor_files)
        return
    if args.archive_floor:
        run_archive_floor(args.archive_floor, args.archive_members, args.floor_jobs or _jobs())
        return
    if args.render:
        saved = json.loads((OUT / "results.json").read_text())
        print(render(saved["scan"], saved["connectivity"], args, saved.get("notes", []),
                     saved.get("versions", {}), saved.get("startup"), saved.get("archive")))
        return
    OUT.mkdir(parents=True, exist_ok=True)
    log: list[str] = []
    trees = [REPO] + ([Path(args.before)] if args.before else [])
    compile_trees(trees)
    log.append("the source trees measured (this one" + (f" and {args.before}" if args.before else "")
               + ") were byte-compiled before any timing (`python -m compileall -q`), as "
               "installing a wheel does: start-up rows do not measure compiling")
    log.append("the compiled rebuild of parsed YAML (hcpscan/sources/_rebuild.c): "
               + "; ".join(f"{'this tree' if tree == REPO else tree}: {compiled_state(tree)}"
                           for tree in trees))
    rows = []
    for n in [int(x) for x in args.sizes.split(",") if x]:
        print(f"N={n} ...", flush=True)
        rows.append(bench_scan(n, args, log))
    conn = []
    for spec in [s for s in args.connectivity.split(",") if s]:
        pods, policies, anps, banp_rules = ([int(x) for x in spec.split(":")] + [0, 0])[:4]
        print(f"connectivity {pods} pods / {policies} policies / {anps} ANPs / {banp_rules} "
              "BANP rules ...", flush=True)
        conn.append(bench_connectivity(pods, policies, args, log, anps, banp_rules))
    startup = bench_startup(args) if args.startup_runs > 0 else None
    archive = None
    if args.archive and Path(args.archive).is_file():
        print(f"archive {args.archive} ...", flush=True)
        archive = bench_archive(args.archive, args)
    versions = {}
    if args.peers:
        versions["checkov"] = peer_version(VENVS / "checkov" / "bin" / "checkov"
                                           if (VENVS / "checkov").exists() else None, ["--version"])
        versions["nca"] = peer_version(VENVS / "nca" / "bin" / "nca"
                                       if (VENVS / "nca").exists() else None, ["--version"])
    table = render(rows, conn, args, log, versions, startup, archive)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    loaded = f" (load average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f})" if load else ""
    text = f"Measured {stamp} on {machine()}{loaded}.\n\n{table}\n"
    print(text)
    (OUT / "results.md").write_text(text)
    (OUT / "results.json").write_text(json.dumps({"scan": rows, "connectivity": conn, "notes": log,
                                                  "versions": versions, "startup": startup,
                                                  "archive": archive}, indent=1, default=str))
    if args.write_results:
        results = HERE / "RESULTS.md"
        before = results.read_text() if results.exists() else ""
        head = before.split("<!-- measured -->")[0]
        # what follows the second marker (earlier measurements, notes added by hand) stays
        earlier = before.split("<!-- earlier -->", 1)[1] if "<!-- earlier -->" in before else ""
        results.write_text((head or "# Benchmark results\n\n") + "<!-- measured -->\n\n" + text
                           + ("\n<!-- earlier -->" + earlier if earlier else ""))


if __name__ == "__main__":
    main()
