"""Regenerate the example reports of the bundled example (all formats).

    python3 reports/regenerate.py

Runs `hcpscan scan fixtures/example` from the repository root with a fixed
SOURCE_DATE_EPOCH and terminal width, so the files are reproducible;
tests/cli/test_example_reports.py fails when they are stale.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORMATS = {"table": "example.txt", "json": "example.json", "sarif": "example.sarif",
           "junit": "example.junit.xml", "markdown": "example.md",
           "openreports": "example.openreports.yaml", "policyreport": "example.policyreport.yaml"}
EPOCH = "1763683200"  # 2025-11-21T00:00:00Z


def generate(out_dir: Path) -> dict[str, Path]:
    from hcpscan.cli.main import main

    written = {fmt: out_dir / name for fmt, name in FORMATS.items()}
    args = ["scan", "fixtures/example", "--no-config", "--no-progress"]
    for fmt, path in written.items():
        if fmt != "table":
            args += ["--format", f"{fmt}={path}"]
    env = {"SOURCE_DATE_EPOCH": EPOCH, "COLUMNS": "120", "NO_COLOR": "1"}
    saved = {k: os.environ.get(k) for k in env}
    cwd = Path.cwd()
    table = io.StringIO()
    try:
        os.environ.update(env)
        os.chdir(ROOT)
        with contextlib.redirect_stdout(table):
            main(args + ["--format", "table"])
    finally:
        os.chdir(cwd)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    written["table"].write_text(table.getvalue(), encoding="utf-8")
    return written


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    for path in generate(ROOT / "reports").values():
        print(f"wrote {path.relative_to(ROOT)}")
