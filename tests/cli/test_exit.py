"""The ``hcpscan`` program ends without freeing every object one by one (``cli.main.entry``):
what it printed is all there, its exit code is the command's, the exit handlers ran, and
with another thread alive it exits as Python does, waiting for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib

import pytest

from hcpscan import __version__
from tests.conftest import FIXTURES, ROOT


def _program(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, check=False)


def test_a_scan_s_output_is_whole_and_its_exit_code_kept() -> None:
    result = subprocess.run([sys.executable, "-m", "hcpscan", "scan", str(FIXTURES / "example"),
                             "--format", "json"], capture_output=True, text=True, timeout=300,
                            cwd=ROOT, check=False)
    assert result.returncode == 1, result.stderr  # findings
    assert json.loads(result.stdout)["findings"]


def test_exit_handlers_run_and_streams_are_flushed() -> None:
    result = _program("import atexit, sys\n"
                      "atexit.register(lambda: print('exit handler ran', file=sys.stderr))\n"
                      "sys.argv = ['hcpscan', '--version']\n"
                      "print('before', end='')\n"
                      "from hcpscan.cli.main import entry\n"
                      "entry()\n")
    assert result.returncode == 0
    assert result.stdout.startswith("beforehcpscan ")
    assert result.stderr == "exit handler ran\n"


def test_with_another_thread_alive_the_exit_waits_for_it() -> None:
    result = _program("import sys, threading, time\n"
                      "def late():\n"
                      "    time.sleep(0.3)\n"
                      "    print('thread done', flush=True)\n"
                      "threading.Thread(target=late).start()\n"
                      "sys.argv = ['hcpscan', 'rules', 'list', '--select', 'NOSUCH1']\n"
                      "from hcpscan.cli.main import entry\n"
                      "entry()\n")
    assert result.returncode == 2  # the command's own exit code (a usage error)
    assert result.stdout.endswith("thread done\n")


def test_a_profiled_run_writes_its_profile(tmp_path) -> None:  # type: ignore[no-untyped-def]
    stats = tmp_path / "scan.prof"
    result = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(stats), "-m", "hcpscan",
                             "--version"], capture_output=True, text=True, timeout=300, cwd=ROOT,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert stats.stat().st_size > 0


def test_the_console_script_is_the_entry() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["hcpscan"] == "hcpscan.cli.main:entry"
    assert "entry()" in (ROOT / "hcpscan" / "__main__.py").read_text()


def _to_full_device(*args: str) -> subprocess.CompletedProcess[str]:
    with open("/dev/full", "w") as full:
        return subprocess.run([sys.executable, "-m", "hcpscan", *args], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=300, cwd=ROOT,
                              check=False)


def test_a_report_standard_output_cannot_take_is_an_error_not_a_traceback() -> None:
    result = _to_full_device("scan", str(FIXTURES / "example"), "--format", "json")
    assert result.returncode == 2
    assert result.stderr.startswith("hcpscan: error: cannot write the json report to standard "
                                    "output: No space left on device")
    assert "internal error" not in result.stderr and "-o FILE" in result.stderr


def test_any_command_s_output_standard_output_cannot_take_is_an_error_not_a_traceback() -> None:
    result = _to_full_device("rules", "list")
    assert result.returncode == 2
    assert result.stderr.startswith("hcpscan: error: cannot write: No space left on device")
    assert "internal error" not in result.stderr


def test_output_lost_at_exit_is_said_and_fails_the_run() -> None:
    # a command whose output is still buffered when it returns: lost at the exit's flush
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-c", "import sys\n"
             "from hcpscan.cli import main as m\n"
             "m.main = lambda: (print('a line the device cannot take'), 1)[1]\n"
             "m.entry()\n"], stdout=full, stderr=subprocess.PIPE, text=True,
            timeout=300, cwd=ROOT, check=False,
            env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"})  # buffered
    assert result.returncode == 2
    assert result.stderr == "hcpscan: error: cannot write to standard output: No space left on device\n"


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["scan", "--help"], ["rules", "--help"]])
def test_version_and_help_standard_output_cannot_take_are_errors_not_silent(args: list[str]) -> None:
    """argparse drops an error writing them; the run said nothing and exited 0."""
    result = _to_full_device(*args)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("hcpscan: error: cannot write: No space left on device")
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_version_and_help_still_print_and_a_closed_pipe_is_quiet() -> None:
    version = subprocess.run([sys.executable, "-m", "hcpscan", "--version"], capture_output=True,
                             text=True, timeout=300, cwd=ROOT, check=False)
    assert (version.returncode, version.stdout, version.stderr) == (0, f"hcpscan {__version__}\n", "")
    reader = subprocess.Popen([sys.executable, "-m", "hcpscan", "scan", "--help"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=ROOT)
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.close()  # the reader went away before the help was written (`| head -0`)
    assert reader.wait(timeout=300) == 0
    assert reader.stderr.read() == b""
