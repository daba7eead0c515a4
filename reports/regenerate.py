"""Regenerate the example reports of the bundled example (all formats).

    python3 reports/regenerate.py

Runs `hcpscan scan fixtures/example` from the repository root with a fixed
SOURCE_DATE_EPOCH and terminal width, so the files are reproducible;
tests/cli/test_example_reports.py fails when they are stale. With chromium
installed it also writes example.html.png, the first 1280x1600 pixels of the
HTML report as headless Chromium renders them (pixels depend on the machine's
fonts, so that file is not compared by the tests).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The first reports kept their short names; every other format of the one registry
# (SCAN_FORMATS) is example.<format>.<extension>, so a format added there gets its
# golden file here without a second list to keep in step.
SHORT_NAMES = {"table": "example.txt", "json": "example.json", "sarif": "example.sarif",
               "markdown": "example.md", "html": "example.html"}


def _golden_names() -> dict[str, str]:
    from hcpscan.reporters.formats import SCAN_FORMATS

    return {f.name: SHORT_NAMES.get(f.name) or f"example.{f.name}.{f.load().extension}"
            for f in SCAN_FORMATS}


FORMATS = _golden_names()
SCREENSHOT = "example.html.png"
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


def screenshot(html: Path, png: Path) -> bool:
    """The HTML report as a reader first sees it at 1280 pixels; False without chromium."""
    from tests.browser import Browser, find_chromium

    if find_chromium() is None:
        return False
    with Browser(width=1280, height=1600) as browser:
        run = browser.open(html)
        if run.errors:
            raise SystemExit(f"{html} has errors in the browser: {run.errors}")
        browser.screenshot(png)
    return True


if __name__ == "__main__":
    written = generate(ROOT / "reports")
    for path in written.values():
        print(f"wrote {path.relative_to(ROOT)}")
    if screenshot(written["html"], ROOT / "reports" / SCREENSHOT):
        print(f"wrote reports/{SCREENSHOT}")
    else:
        print(f"reports/{SCREENSHOT} not updated: install chromium", file=sys.stderr)
