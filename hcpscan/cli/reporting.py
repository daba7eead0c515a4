"""Report arguments (--format, -o, --fail-on...) and writing every requested report."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from hcpscan.cli import exitcodes
from hcpscan.cli.inputs import UsageError
from hcpscan.cli.ruleset import PreparedRules
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.core.textcodec import decode_text
from hcpscan.findings.model import ScanReport, Severity
from hcpscan.reporters.formats import SCAN_FORMAT_NAMES
from hcpscan.rules.suppress import write_baseline
from hcpscan.scan import exit_status
from hcpscan.sources.walk import ArchiveMembers, on_disk

FORMATS = SCAN_FORMAT_NAMES  # the registry (hcpscan/reporters/formats.py) is the one list
# The two terminal views --output-format names: one line per finding, or the detailed table.
VIEWS = {"concise": "concise", "full": "table"}


class _NotATty:
    """Stands for a report file: never coloured."""

    @staticmethod
    def isatty() -> bool:
        return False


_NOT_A_TTY = _NotATty()


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("reports")
    group.add_argument("--format", action="append", metavar="FMT[=FILE]",
                       help=f"report format, one of {', '.join(FORMATS)}; repeat for several, "
                            "each optionally with its own file (--format table "
                            "--format sarif=out.sarif). Default: the --output-format view")
    group.add_argument("--output-format", choices=sorted(VIEWS), metavar="{concise,full}",
                       help="the report on standard output: concise (one line per finding, "
                            "path:line:col: ID [severity] message) or full (the detailed table, "
                            "same as --format table). Default: full on a terminal, concise "
                            "when piped or redirected")
    group.add_argument("-o", "--output", metavar="FILE",
                       help="write the (single) report without =FILE to FILE instead of stdout")
    group.add_argument("--fail-on", choices=[s.value for s in Severity],
                       help="exit 1 when a finding has at least this severity (default: high, "
                            "or fail_on in the config)")
    group.add_argument("--fail-on-incomplete", action="store_true",
                       help="exit 3 when some rules could not be evaluated")
    group.add_argument("--exit-zero", action="store_true",
                       help="exit 0 even with findings (a scheduled job whose results are read "
                            "elsewhere); problems still exit 2, 3 or 4")
    group.add_argument("--sarif-root", metavar="DIR",
                       help="make SARIF, github and gitlab paths relative to DIR (default: the "
                            "current directory)")
    group.add_argument("--sarif-category", metavar="NAME", default="hcpscan",
                       help="SARIF runAutomationDetails.id, to keep several uploads apart")
    loudness = group.add_mutually_exclusive_group()
    loudness.add_argument("-q", "--quiet", action="store_true",
                          help="only the findings and input problems (no totals, coverage or "
                               "notes): for hooks, whose exit code says the rest")
    loudness.add_argument("-v", "--verbose", action="store_true",
                          help="also which rules were not checked and what input was passed over")
    group.add_argument("--junit-extended", action="store_true",
                       help="JUnit: add file/line to failing testcases and totals to "
                            "<testsuites> (GitLab, pytest); the default is valid against the "
                            "common Jenkins JUnit schema")


def _default_view(args: argparse.Namespace) -> str:
    """The view for standard output (or -o) when --format does not name one: the
    detailed table for a person at a terminal, one line per finding for pipes,
    files and CI logs (as ruff does)."""
    if args.output_format:
        return VIEWS[args.output_format]
    return "table" if not args.output and sys.stdout.isatty() else "concise"


def _targets(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    targets = _parse_formats(args.format or [])
    to_stdout = [t for t in targets if t[1] is None]
    if args.output_format and to_stdout:
        raise UsageError(f"--output-format {args.output_format} and --format {to_stdout[0][0]} "
                         "both name the report on standard output",
                         "keep one, or give the --format report a file: --format json=out.json")
    if not args.format or (args.output_format and not to_stdout):
        targets.append((_default_view(args), None))
    targets = _route(args, targets)
    _refuse_clobbering(targets, getattr(args, "paths", None) or [])
    return targets


def _refuse_clobbering(targets: list[tuple[str, str | None]], inputs: list[str]) -> None:
    """Two reports written to one file (the second overwrote the first), or a report
    written over a file the scan reads (`hcpscan scan in.yaml -o in.yaml`): refused
    before anything is written."""
    seen: dict[str, str] = {}
    scanned = {os.path.realpath(p): p for p in inputs if p != "-" and os.path.isfile(p)}
    for name, path in targets:
        if path is None:
            continue
        real = os.path.realpath(path)
        if real in seen:
            raise UsageError(f"the {seen[real]} and {name} reports both go to {path}: the second "
                             "would overwrite the first", "give each report its own file")
        if real in scanned:
            raise UsageError(f"the {name} report would be written over {scanned[real]}, which "
                             "this run scans", "write the report to another file")
        seen[real] = name


def _parse_formats(specs: list[str]) -> list[tuple[str, str | None]]:
    targets: list[tuple[str, str | None]] = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        name = name.strip().lower()
        if name not in FORMATS:
            raise UsageError(f"unknown format {name!r}", f"use one of {', '.join(FORMATS)}")
        if sep and not path.strip():
            raise UsageError(f"--format {spec}: the file name is empty",
                             f"write --format {name}=FILE, or --format {name} for stdout")
        targets.append((name, path if sep else None))
    return targets


def _route(args: argparse.Namespace, targets: list[tuple[str, str | None]]
           ) -> list[tuple[str, str | None]]:
    """-o sends the one report without a file there; only one may go to stdout."""
    to_stdout = [t for t in targets if t[1] is None]
    if args.output:
        if len(to_stdout) != 1:
            raise UsageError("-o/--output needs exactly one --format without =FILE",
                             "write several formats as --format json=report.json")
        targets = [(n, args.output if p is None else p) for n, p in targets]
    elif len(to_stdout) > 1:
        raise UsageError("only one report can go to standard output",
                         "give the others a file: --format sarif=hcpscan.sarif")
    return targets


_ARCHIVES = ArchiveMembers()


def read_source_text(path: str) -> str | None:
    """Text of a finding's file, including archive members (``a.tar.gz!x.yaml``)."""
    if "!" in path:
        # the last "!" ends an archive inside the archive ("a.tar!inner.tar.gz!x.yaml"),
        # which is no file (its members are those loading kept); else the first ends it
        splits = [path.rpartition("!")] + ([path.partition("!")] if path.count("!") > 1 else [])
        for archive, _, member in splits:
            data = _ARCHIVES.read(archive, member)
            if data is not None:
                return decode_text(data, errors="replace")
        # else a file whose folder's name holds a "!" ("backup!2024/x.yaml")
    try:  # a name that is not UTF-8 is shown with U+FFFD: back to the name on disk
        with open(on_disk(path), "rb") as fh:
            return decode_text(fh.read(), errors="replace")
    except OSError:
        return None


def write_reports(args: argparse.Namespace, report: ScanReport, prepared: PreparedRules) -> int:
    from hcpscan.reporters import ReportOptions, render

    if args.write_baseline:
        try:
            count = write_baseline(Path(args.write_baseline), report.findings)
        except OSError as exc:
            raise UsageError(f"cannot write baseline {args.write_baseline}: "
                             f"{exc.strerror or exc}",
                             "give a file path in a folder that exists") from None
        if verbosity(args) >= 0:
            print(f"hcpscan: wrote {count} finding(s) to baseline {args.write_baseline}",
                  file=sys.stderr)
        return exitcodes.OK
    targets = _targets(args)
    args.reports_written = True  # from here on, a usage error must not overwrite them
    for name, path in targets:
        options = ReportOptions.for_stream(
            sys.stdout if path is None else _NOT_A_TTY, sarif_root=args.sarif_root,
            color=None if path is None else False,
            sarif_category=args.sarif_category, read_text=read_source_text,
            junit_extended=getattr(args, "junit_extended", False), verbosity=verbosity(args))
        text = render(name, report, options)
        if path is None:
            try:
                sys.stdout.write(text if text.endswith("\n") else text + "\n")
                sys.stdout.flush()  # a full disk or a broken device says so here, not at exit
            except BrokenPipeError:
                raise  # the reader stopped early (`| head`): not an error (cli.main)
            except OSError as exc:
                raise UsageError(f"cannot write the {name} report to standard output: "
                                 f"{exc.strerror or exc}",
                                 "free some space, or write it to a file with -o FILE") from None
        else:
            try:
                Path(path).write_text(text, encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"cannot write {path}: {exc.strerror or exc}",
                                 "check that the folder exists and is writable") from None
    return exit_code(report, args, prepared)


def verbosity(args: argparse.Namespace) -> int:
    return -1 if getattr(args, "quiet", False) else 1 if getattr(args, "verbose", False) else 0


def write_failure_reports(args: argparse.Namespace, error: UsageError, where: str,
                          metadata: dict[str, Any]) -> None:
    """A run that ends in a usage or input error (exit 2) before its reports were written
    still writes every report file asked for (``-o``, ``--format x=FILE``), holding the
    error as a diagnostic: CI then uploads a report that says why, not nothing."""
    from hcpscan import __version__
    from hcpscan.reporters import ReportOptions, render

    if getattr(args, "reports_written", False) or getattr(args, "write_baseline", None):
        return
    try:
        targets = [(name, path) for name, path in _targets(args) if path is not None]
    except UsageError:
        return  # the report arguments themselves are wrong: nothing to write to
    diagnostic = Diagnostic(where, None, error.message, hint=error.hint).to_json()
    report = ScanReport(__version__, [], [], [], [diagnostic], {}, dict(metadata))
    for name, path in targets:
        text = render(name, report, ReportOptions.for_stream(
            _NOT_A_TTY, sarif_root=args.sarif_root, sarif_category=args.sarif_category,
            read_text=read_source_text))
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"hcpscan: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)


def exit_code(report: ScanReport, args: argparse.Namespace, prepared: PreparedRules) -> int:
    if any(d.get("severity") == "error" for d in report.diagnostics):
        return exitcodes.USAGE
    fail_on = Severity(args.fail_on or prepared.config.fail_on or "high")
    status = exit_status(report, fail_on, args.fail_on_incomplete)
    if status == "findings" and args.exit_zero:
        return exitcodes.OK
    return {"findings": exitcodes.FINDINGS, "incomplete": exitcodes.INCOMPLETE}.get(status,
                                                                                    exitcodes.OK)
