"""Shared test helpers: where the shared data lives, and running the CLI in-process."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
REALWORLD = SHARED / "realworld" / "hypershift"
FIXTURES = ROOT / "fixtures"


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch):
    """Run ``hcpscan ARGS`` in-process; returns exit code, stdout and stderr."""
    from hcpscan.cli.main import main

    def run(*args: str, stdin: str | None = None) -> CliResult:
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        monkeypatch.setenv("NO_COLOR", "1")
        monkeypatch.setenv("COLUMNS", "200")
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse exits for --help / --version / bad usage
            code = int(exc.code or 0)
        return CliResult(code, out.getvalue(), err.getvalue())

    return run
