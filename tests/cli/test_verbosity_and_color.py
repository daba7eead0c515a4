"""-q/-v decide how much a concise run says after its findings; FORCE_COLOR colours pipes."""

from __future__ import annotations

import io

from hcpscan.reporters.interface import ReportOptions, color_wanted
from tests.conftest import FIXTURES

EXAMPLE = str(FIXTURES / "example")


def _concise(run_cli, *flags: str) -> list[str]:
    result = run_cli("scan", EXAMPLE, "--output-format", "concise", "--no-progress", *flags)
    assert result.code == 1, result.err
    return result.out.splitlines()


def test_quiet_prints_only_the_findings(run_cli):
    lines = _concise(run_cli, "-q")
    assert lines and all(": " in line and "[" in line for line in lines)
    assert not any(line.startswith(("Found", "Coverage", "Config", "Not checked", "Passed over"))
                   for line in lines)
    assert lines == [line for line in _concise(run_cli) if not line.startswith(
        ("Found", "Coverage", "Config", "Passed over"))]


def test_normal_ends_with_totals_and_coverage_not_the_lists(run_cli):
    lines = _concise(run_cli)
    assert any(line.startswith("Found ") for line in lines)
    assert any(line.startswith("Coverage: ") for line in lines)
    assert not any(line.startswith(("Not checked", "Config: none")) for line in lines)


def test_verbose_adds_what_was_not_checked(run_cli):
    lines = _concise(run_cli, "--verbose")
    assert any(line.startswith("Not checked: ") for line in lines)
    assert "Config: none" in lines


def test_quiet_and_verbose_exclude_each_other(run_cli):
    result = run_cli("scan", EXAMPLE, "-q", "-v")
    assert result.code == 2 and "not allowed with" in result.err


class _Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


def test_force_color_colours_a_pipe_and_no_color_wins():
    assert not color_wanted(_Pipe(), {})
    assert color_wanted(_Pipe(), {"FORCE_COLOR": "1"})
    assert not color_wanted(_Pipe(), {"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert not color_wanted(_Pipe(), {"FORCE_COLOR": ""})


def test_force_color_reaches_the_table_but_never_a_report_file(run_cli, monkeypatch, tmp_path):
    monkeypatch.delenv("NO_COLOR", raising=False)
    from hcpscan.cli.main import main

    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("sys.stderr", io.StringIO())
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")
    target = tmp_path / "table.txt"
    assert main(["scan", EXAMPLE, "--format", "table", "--format", f"markdown={target}",
                 "--no-progress"]) == 1
    assert "\x1b[" in out.getvalue()
    assert "\x1b[" not in target.read_text()
    assert ReportOptions.for_stream(_Pipe(), {"FORCE_COLOR": "1"}, color=False).color is False


def test_piped_rules_show_has_no_trailing_blanks(run_cli):
    result = run_cli("rules", "show", "PRX008")
    assert result.code == 0 and "What it does" in result.out
    assert [line for line in result.out.splitlines() if line != line.rstrip()] == []


def test_concise_names_the_rules_the_missing_cel_runtime_left_out(run_cli, monkeypatch):
    """A plain `pip install hcpscan` on Linux has no CEL runtime: the concise end says which
    rules that left out and how to add it, not only a not-evaluable count."""
    import hcpscan.rules.templates.cel as cel_template

    monkeypatch.setattr(cel_template, "cel", None)
    lines = _concise(run_cli)
    (note,) = [line for line in lines if "CEL runtime" in line]
    assert "OCM005" in note and "pip install 'hcpscan[cel]'" in note
    assert not any("CEL runtime" in line for line in _concise(run_cli, "-q"))
    monkeypatch.undo()
    assert not any("CEL runtime" in line for line in _concise(run_cli))


def test_quiet_trims_the_terminal_table_too(run_cli):
    """-q at a terminal (the table view) keeps the findings and drops the totals, coverage
    and passed-over lists; before, it changed nothing there."""
    full = run_cli("scan", EXAMPLE, "--output-format", "full", "--no-progress")
    quiet = run_cli("scan", EXAMPLE, "--output-format", "full", "--no-progress", "-q")
    assert full.code == quiet.code == 1
    assert "HCP001" in quiet.out and "HIGH (" in quiet.out
    for gone in ("Coverage:", "Passed over", "Summary"):
        assert gone in full.out and gone not in quiet.out
