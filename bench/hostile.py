"""Benchmarks for issue 18 (not timed tests): cost per finding, packed dumps, node budget.

    python3 bench/hostile.py findings --count 100000   # 100,000 findings written in every format
    python3 bench/hostile.py packed --clusters 50      # a dump scanned unpacked and as .tar.gz
    python3 bench/hostile.py nodes                     # peak memory at and over the node budget

``findings``: one multi-document file of Deployments, each with proxy passwords in
its env (PRX008 and friends), scanned once; then the report is written in each
format. Prints seconds per stage and per format.

``packed``: bench/generate.py's management cluster, scanned as a folder and as
the same tree in a .tar.gz, each in a fresh process; prints both times and the
ratio (issue 18 asks for at most 1.5).

``nodes``: peak RSS and time of ``hcpscan inventory`` (one process, parsing in
it: HCPSCAN_JOBS=1) over a small manifest (the baseline), a file of empty JSON
mappings making exactly the default node budget (read), the issue's 90 MB of
30 million empty mappings and a "billion laughs" (both refused), on yaml-rs and
on PyYAML; each peak as a ratio to the baseline of the same run.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web-{i}, namespace: shop-{ns}}}
spec:
  selector: {{matchLabels: {{app: web-{i}}}}}
  template:
    metadata: {{labels: {{app: web-{i}}}}}
    spec:
      containers:
      - name: web
        image: web:1
        env:
        - {{name: HTTPS_PROXY, value: "http://user:pw@proxy.corp:3128"}}
        - {{name: HTTP_PROXY, value: "http://user:pw@proxy.corp:3128"}}
"""
FINDINGS_PER_DEPLOYMENT = 3  # two PRX008 (one per variable) and one more proxy finding


def bench_findings(count: int) -> None:
    from hcpscan.inventory import Inventory
    from hcpscan.reporters import ReportOptions, render
    from hcpscan.rules.config import ScanConfig
    from hcpscan.rules.suppress import Suppressor
    from hcpscan.scan import RuleSelection, load_rules, run_scan
    from hcpscan.sources.loader import load_paths

    deployments = -(-count // FINDINGS_PER_DEPLOYMENT)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "many.yaml"
        path.write_text("---\n".join(DEPLOYMENT.format(i=i, ns=i % 50) for i in range(deployments)))
        start = time.perf_counter()
        loaded = load_paths([str(path)])
        inventory = Inventory(loaded.objects, loaded.diagnostics)
        loaded_at = time.perf_counter()
        report = run_scan(inventory, load_rules(ScanConfig(), RuleSelection()), ScanConfig(), Suppressor())
        scanned_at = time.perf_counter()
        print(f"{deployments} Deployments, {len(report.findings)} findings "
              f"({path.stat().st_size // 1024 // 1024} MiB)")
        print(f"  load {loaded_at - start:.1f} s, rules (with every finding located) "
              f"{scanned_at - loaded_at:.1f} s")
        for name in ("table", "json", "sarif", "junit", "markdown"):
            began = time.perf_counter()
            text = render(name, report, ReportOptions())
            print(f"  {name:9} {time.perf_counter() - began:5.1f} s  {len(text) // 1024 // 1024} MiB")


def _scan_seconds(path: str) -> float:
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hcpscan", "scan", path, "--no-progress", "--format", "json",
                    "-o", "/dev/null"], cwd=ROOT, check=False, capture_output=True)
    return time.perf_counter() - began


def bench_packed(clusters: int) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from generate import generate_mgmt

    with tempfile.TemporaryDirectory() as folder:
        info = generate_mgmt(clusters, out=Path(folder), tar=True)
        unpacked = _scan_seconds(info["path"])
        packed = _scan_seconds(info["archive"])
        print(f"{clusters} hosted clusters, {info['files']} files, {info['bytes'] // 1024 // 1024} MiB")
        print(f"  unpacked {unpacked:.1f} s, packed (.tar.gz) {packed:.1f} s, "
              f"ratio {packed / unpacked:.2f}")


# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across fork and exec.
_PEAK = ("import runpy, sys\n"
         "sys.argv = ['hcpscan', *sys.argv[1:]]\n"
         "code = 0\n"
         "try:\n    runpy.run_module('hcpscan', run_name='__main__')\n"
         "except SystemExit as exc:\n    code = exc.code\n"
         "peak = [line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')]\n"
         "print('PEAK', peak[0], file=sys.stderr)\n"
         "sys.exit(code)\n")


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _inventory_peak(path: Path, fast: str) -> tuple[float, float, float, str]:
    """(peak RSS in MiB, wall and CPU seconds, read or refused) of one inventory run."""
    env = {**os.environ, "HCPSCAN_JOBS": "1", "HCPSCAN_FAST_YAML": fast}
    began, cpu = time.perf_counter(), _cpu_of_children()
    done = subprocess.run([sys.executable, "-c", _PEAK, "inventory", str(path), "--no-progress",
                           "--format", "json"], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False)
    seconds, cpu = time.perf_counter() - began, _cpu_of_children() - cpu
    peak = int(done.stderr.rsplit("PEAK", 1)[1]) / 1024
    refused = "not read: more than" in done.stdout + done.stderr
    return peak, seconds, cpu, "refused" if refused else "read"


def bench_nodes() -> None:
    from hcpscan.core.yamldocs import MAX_NODES

    laughs = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\nx0: &a0 [lol]\n"
              + "".join(f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 10)))
    with tempfile.TemporaryDirectory() as folder:
        cases = {
            "small manifest (baseline)": (Path(folder) / "small.yaml", DEPLOYMENT.format(i=0, ns=0)),
            f"{MAX_NODES:,} nodes, at the budget": (Path(folder) / "at.json",
                                                    "[" + ",".join(["{}"] * (MAX_NODES - 1)) + "]\n"),
            "30,000,000 empty mappings (90 MB)": (Path(folder) / "over.json",
                                                  "[" + ",".join(["{}"] * 30_000_000) + "]\n"),
            "billion laughs (10**9 by aliases)": (Path(folder) / "laughs.yaml", laughs),
        }
        for path, text in cases.values():
            path.write_text(text)
        del text
        cases = {name: (path, "") for name, (path, _) in cases.items()}  # free the texts
        for fast, parser in (("1", "yaml-rs"), ("0", "PyYAML")):
            base = None
            for name, (path, _) in cases.items():
                peak, seconds, cpu, outcome = _inventory_peak(path, fast)
                base = base or peak
                print(f"{parser:8} {name:36} {path.stat().st_size / 1e6:7.1f} MB  {outcome:8} "
                      f"{seconds:5.1f} s ({cpu:5.1f} s CPU)  peak {peak:6.0f} MiB {peak / base:5.1f}x baseline")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("findings").add_argument("--count", type=int, default=100_000)
    sub.add_parser("packed").add_argument("--clusters", type=int, default=50)
    sub.add_parser("nodes")
    args = parser.parse_args()
    if args.what == "findings":
        bench_findings(args.count)
    elif args.what == "packed":
        bench_packed(args.clusters)
    else:
        bench_nodes()


if __name__ == "__main__":
    main()
