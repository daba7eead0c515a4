"""Benchmarks for issue 18 (not timed tests): cost per finding and packed dumps.

    python3 bench/hostile.py findings --count 100000   # 100,000 findings written in every format
    python3 bench/hostile.py packed --clusters 50      # a dump scanned unpacked and as .tar.gz

``findings``: one multi-document file of Deployments, each with proxy passwords in
its env (PRX008 and friends), scanned once; then the report is written in each
format. Prints seconds per stage and per format.

``packed``: bench/generate.py's management cluster, scanned as a folder and as
the same tree in a .tar.gz, each in a fresh process; prints both times and the
ratio (issue 18 asks for at most 1.5).
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("findings").add_argument("--count", type=int, default=100_000)
    sub.add_parser("packed").add_argument("--clusters", type=int, default=50)
    args = parser.parse_args()
    if args.what == "findings":
        bench_findings(args.count)
    else:
        bench_packed(args.clusters)


if __name__ == "__main__":
    main()
