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
* the floor: reading and parsing, with libyaml's C loader and nothing else,
  exactly the files the scan reads (same layout rules, same resources);
* checkov (``checkov -d DIR --framework kubernetes``) on the same directory;
* ``hcpscan connectivity`` against np-guard's ``nca --connectivity`` on
  Namespaces/Pods/NetworkPolicies (bench/generate.py netpol), at 2,000 pods /
  500 policies and 20,000 pods / 5,000 policies; and at 2,000 pods / 500
  policies plus 50 AdminNetworkPolicies and a 10-rule BaselineAdminNetworkPolicy,
  against the plain run of the same pods and policies (nca is not run on it).

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
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return total


def measure(cmd: list[str], timeout: float, stdout: Path | None = None,
            env: dict[str, str] | None = None) -> dict[str, Any]:
    """Wall seconds, exit code, peak RSS of the process (rusage) and of its tree (sampled)."""
    out = open(stdout, "wb") if stdout else subprocess.DEVNULL
    err_path = OUT / "last-stderr.txt"
    with open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=REPO)
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.1):
                peak[0] = max(peak[0], _tree_rss(proc.pid))

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
    if stdout:
        out.close()  # type: ignore[union-attr]
    return {"seconds": seconds, "rc": proc.returncode, "timed_out": timed_out,
            "max_rss": usage.ru_maxrss * 1024, "peak_tree_rss": max(peak[0], usage.ru_maxrss * 1024),
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


def run_floor(root: str) -> None:
    """Child process: time reading + ``yaml.load_all(CSafeLoader)`` of the scan's files."""
    import yaml

    files = floor_files(root)
    start = time.perf_counter()
    size = documents = 0
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        size += len(data)
        for _ in yaml.load_all(data, Loader=yaml.CSafeLoader):
            documents += 1
    print(json.dumps({"seconds": time.perf_counter() - start, "files": len(files), "bytes": size,
                      "documents": documents}))


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


def bench_scan(n: int, args: argparse.Namespace, log: list[str]) -> dict[str, Any]:
    info = ensure_mgmt(n, args.seed)
    root = info["path"]
    row: dict[str, Any] = {"n": n, "data": info}
    floor = subprocess.run([sys.executable, str(Path(__file__)), "--floor", root],
                           capture_output=True, text=True, timeout=args.timeout, cwd=REPO)
    row["floor"] = json.loads(floor.stdout.strip().splitlines()[-1])
    report = OUT / f"report-{n}.json"
    scan = measure([*hcpscan(), "scan", root, "--format", "json", "-o", str(report),
                    "--no-progress"], args.timeout)
    if scan["rc"] not in (0, 1) or scan["timed_out"]:
        log.append(f"hcpscan scan N={n} failed (rc {scan['rc']}): {scan['stderr'][-400:]}")
    else:
        data = json.loads(report.read_text())
        scan["stages"] = data["scan"].get("stage_seconds", {})
        scan["duration"] = data["scan"].get("duration")
        scan["objects"] = data["inventory"]["total"] if isinstance(data.get("inventory"), dict) else None
        scan["findings"] = len(data["findings"])
    row["scan"] = scan
    if args.peers and n <= args.checkov_max:
        checkov = peer("checkov", log)
        if checkov is not None:
            row["checkov"] = measure([str(checkov), "-d", root, "--framework", "kubernetes",
                                      "--quiet", "--compact", "-o", "json"], args.timeout,
                                     stdout=OUT / f"checkov-{n}.json")
    return row


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


def render(rows: list[dict[str, Any]], conn: list[dict[str, Any]], args: argparse.Namespace,
           log: list[str], versions: dict[str, str]) -> str:
    lines = ["### hcpscan scan (management cluster in must-gather layout)", "",
             "| N hosted clusters | objects (read / written) | YAML parsed | floor (libyaml) "
             "| hcpscan scan | × floor | load | graph | rules | start-up + report "
             "| peak RSS MiB (main / all) "
             "| checkov |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    points = []
    for row in rows:
        scan, floor, data = row["scan"], row["floor"], row["data"]
        stages = scan.get("stages", {})
        ok = scan["rc"] in (0, 1) and not scan["timed_out"]
        if ok:
            points.append((row["n"], scan["seconds"]))
        lines.append(
            f"| {row['n']} | {scan.get('objects') or '-'} / {data['objects']} "
            f"| {floor['bytes'] / 2**20:.0f} MiB in {floor['files']} files | {_s(floor['seconds'])} s "
            f"| {_s(scan['seconds']) if ok else 'failed'} s "
            f"| {scan['seconds'] / floor['seconds']:.2f} "
            f"| {_s(stages.get('load'))} | {_s(stages.get('graph'))} | {_s(stages.get('rules'))} "
            f"| {_s(scan['seconds'] - scan['duration']) if scan.get('duration') else '-'} "
            f"| {_mib(scan['max_rss'])} / {_mib(scan['peak_tree_rss'])} "
            f"| {_peer_cell(row.get('checkov'), scan['seconds'], args.timeout)} |")
    exponent = fit_exponent(points)
    lines += ["", f"Fitted scaling exponent (least squares, log time vs log N): "
                  f"{exponent:.2f}" if exponent is not None else "Fitted exponent: needs two sizes"]
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
    parser.add_argument("--floor", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--render", action="store_true",
                        help="only print the table of the last run (bench/out/results.json)")
    args = parser.parse_args()
    if args.floor:
        run_floor(args.floor)
        return
    if args.render:
        saved = json.loads((OUT / "results.json").read_text())
        print(render(saved["scan"], saved["connectivity"], args, saved.get("notes", []),
                     saved.get("versions", {})))
        return
    OUT.mkdir(parents=True, exist_ok=True)
    log: list[str] = []
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
    versions = {}
    if args.peers:
        versions["checkov"] = peer_version(VENVS / "checkov" / "bin" / "checkov"
                                           if (VENVS / "checkov").exists() else None, ["--version"])
        versions["nca"] = peer_version(VENVS / "nca" / "bin" / "nca"
                                       if (VENVS / "nca").exists() else None, ["--version"])
    table = render(rows, conn, args, log, versions)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = f"Measured {stamp} on {machine()}.\n\n{table}\n"
    print(text)
    (OUT / "results.md").write_text(text)
    (OUT / "results.json").write_text(json.dumps({"scan": rows, "connectivity": conn, "notes": log,
                                                  "versions": versions}, indent=1, default=str))
    if args.write_results:
        results = HERE / "RESULTS.md"
        head = results.read_text().split("<!-- measured -->")[0] if results.exists() else ""
        results.write_text((head or "# Benchmark results\n\n") + "<!-- measured -->\n\n" + text)


if __name__ == "__main__":
    main()
