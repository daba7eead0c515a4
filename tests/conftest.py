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


# The files that take longest (wall time per file, measured: docs/testing.md) run first.
# Parallel workers take files one at a time, so a long file taken last would keep one
# worker busy after the others have run out of work.
SLOW_FILES = ("tests/packaging/test_wheel.py", "tests/realclients/test_real_clients.py",
              "tests/packaging/test_image.py", "tests/hostile/test_pyyaml_range.py",
              "tests/hostile/test_files.py", "tests/live/test_publish_reports.py",
              "tests/hostile/test_parsing.py", "tests/hostile/test_archives.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    first = {path: rank for rank, path in enumerate(SLOW_FILES)}
    items.sort(key=lambda item: first.get(item.nodeid.split("::", 1)[0], len(first)))  # stable


def require(present: object, what: str) -> None:
    """Fail - never skip - when something the suite needs is missing: every tool and
    package below is installed by `.ci/run` (Debian packages) or `pip install -e
    '.[test]'`, and ../shared is checked out beside the project. A missing piece is a
    broken test machine, which a skip would hide."""
    if not present:
        pytest.fail(f"{what} is missing: run `bash .ci/run` (it installs what the tests "
                    "need), with ../shared checked out beside the project", pytrace=False)


def requirement(present_fn, what: str):
    """``require`` as an autouse fixture for every test of a module."""
    @pytest.fixture(autouse=True)
    def _required() -> None:
        require(present_fn(), what)
    return _required


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
