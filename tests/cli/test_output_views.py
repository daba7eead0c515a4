"""Which view lands on standard output: the table on a terminal, one line per finding otherwise."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES, ROOT

CASE = str(FIXTURES / "rules" / "PRX008")  # small and fast; one high finding
CONCISE_LINE = ": PRX008 [high] "


def test_piped_output_defaults_to_one_line_per_finding(run_cli):
    result = run_cli("scan", CASE, "--no-config", "--no-progress")
    assert result.code == 1
    findings = [line for line in result.out.splitlines() if CONCISE_LINE in line]
    assert findings and all(line.split(":")[1].isdigit() for line in findings)
    assert "Found " in result.out and "HIGH (" not in result.out


def test_full_and_format_table_give_the_detailed_table(run_cli):
    for args in (("--output-format", "full"), ("--format", "table")):
        result = run_cli("scan", CASE, "--no-config", "--no-progress", *args)
        assert "HIGH (" in result.out and CONCISE_LINE not in result.out, args


def test_output_format_adds_the_terminal_view_beside_report_files(run_cli, tmp_path: Path):
    sarif = tmp_path / "r.sarif"
    result = run_cli("scan", CASE, "--no-config", "--no-progress", "--format", f"sarif={sarif}",
                     "--output-format", "concise")
    assert sarif.exists() and CONCISE_LINE in result.out


def test_output_format_and_a_stdout_format_conflict(run_cli):
    result = run_cli("scan", CASE, "--no-config", "--output-format", "full", "--format", "json")
    assert result.code == 2
    assert "both name the report on standard output" in result.err


def test_a_report_file_from_o_is_concise_by_default(run_cli, tmp_path: Path):
    out = tmp_path / "report.txt"
    run_cli("scan", CASE, "--no-config", "--no-progress", "-o", str(out))
    assert CONCISE_LINE in out.read_text()


def test_a_terminal_gets_the_table(tmp_path: Path):
    """A real pseudo-terminal, as a person's shell gives hcpscan (about 2 s)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "160"}
    proc = subprocess.Popen([sys.executable, "-m", "hcpscan", "scan", CASE, "--no-config",
                             "--no-progress"], cwd=ROOT, stdout=follower, stderr=subprocess.DEVNULL,
                            env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal closes when hcpscan exits
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(timeout=60) == 1
    text = b"".join(chunks).decode()
    assert "HIGH (" in text and CONCISE_LINE not in text
