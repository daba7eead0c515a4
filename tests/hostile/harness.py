"""Running every command that reads paths over a bad input beside a good one.

Each command runs in its own process, with a deadline: the classes of input
these tests cover used to hang hcpscan or kill it with a signal, which must
fail one test, not stop the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("scan", "inventory", "proxy", "connectivity")
DEADLINE = 120  # seconds; each of these runs takes about one

# Seen by every command: a finding (proxy password in env), a proxy consumer, a workload.
GOOD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: good-web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:1
        env:
        - {name: HTTPS_PROXY, value: "http://user:pw@proxy.corp:3128"}
"""
GOOD_NAME = "good-web"


@dataclass
class Run:
    command: str
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def hcpscan(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``python3 -m hcpscan ARGS`` from this worktree, raw bytes out."""
    env = {**os.environ, "COLUMNS": "400", "NO_COLOR": "1"}  # a table line per diagnostic
    return subprocess.run([sys.executable, "-m", "hcpscan", *args], cwd=ROOT, input=stdin, env=env,
                          capture_output=True, timeout=DEADLINE, check=False)


def run(command: str, *args: str) -> Run:
    done = hcpscan(command, *args, "--no-progress", "--format", "json")
    # strict decoding: output that is not UTF-8 is a failure too
    return Run(command, done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))


def run_every_command(*args: str) -> dict[str, Run]:
    """Each command over the paths: no internal error, no signal, the good object still there."""
    runs = {}
    for command in COMMANDS:
        result = run(command, *args)
        assert result.code in (0, 1, 2), (command, result.code, result.err[-2000:])
        assert "Traceback" not in result.err and "internal error" not in result.err, result.err
        assert GOOD_NAME in result.out, (command, result.out[:2000], result.err[-2000:])
        runs[command] = result
    return runs


def diagnostics(runs: dict[str, Run]) -> list[dict[str, Any]]:
    """The diagnostics of the run that reports them in JSON (``inventory``)."""
    return runs["inventory"].json()["diagnostics"]


def skipped(runs: dict[str, Run]) -> dict[str, int]:
    return {s["reason"]: s["count"] for s in runs["inventory"].json()["skipped"]}


def with_good(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "good.yaml").write_text(GOOD)
    return folder
