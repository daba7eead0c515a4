"""`hcpscan fix PATH...`: write the changes that clear the findings of an offline scan."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from hcpscan.cli import exitcodes
from hcpscan.cli.inputs import UsageError, add_path_arguments, load_inventory
from hcpscan.cli.ruleset import add_rule_arguments, prepare_rules
from hcpscan.findings.model import Status
from hcpscan.fixes.apply import Outcome, fix_all
from hcpscan.scan import kinds_needed, resource_needs, run_scan
from hcpscan.sources.walk import shown

DESCRIPTION = """\
Scan like `hcpscan scan`, then write the minimal change that clears each
finding whose rule offers an automatic fix: edits in place (comments, key
order and indentation of every other line unchanged), a unified diff
(--diff FILE, for a pull request), or patched copies (--out DIR). Findings
with no safe automatic change are listed with the reason; values built by
kustomize or rendered by Helm name the source file and field to change.
A live cluster is never touched: `hcpscan cluster` reports kubectl commands.

examples:
  hcpscan fix gitops/                      # edit the files in place
  hcpscan fix gitops/ --diff hcpscan.patch # review, then `git apply hcpscan.patch`
  hcpscan fix gitops/ --out fixed/         # patched copies under fixed/
  hcpscan fix gitops/ --select HCP004
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("fix", help="write the changes that clear findings",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_path_arguments(parser)
    add_rule_arguments(parser)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--diff", metavar="FILE",
                       help="write a unified diff (git apply / patch -p1) instead of editing "
                            "('-' for standard output)")
    where.add_argument("--out", metavar="DIR",
                       help="write patched copies of the changed files under DIR (paths kept "
                            "relative to the scanned folder) instead of editing")
    parser.set_defaults(run=run)


EPILOG = """\
exit codes:
  0  every finding was fixed, or there was none
  1  findings remain that need a change by hand or have no automatic fix
  2  usage or input error (as for `hcpscan scan`): a file that could not be read
     (the others are still fixed), --out inside a scanned folder
  4  internal error in hcpscan (rerun with --debug and report it)
"""


def run(args: argparse.Namespace) -> int:
    if any(p == "-" for p in args.paths):
        raise UsageError("hcpscan fix edits files: standard input cannot be fixed",
                         "write the manifests to a file and run `hcpscan fix FILE`")
    if args.out:
        _refuse_out_inside_inputs(args.out, args.paths)
    prepared = prepare_rules(args, [Path(p) for p in args.paths])
    inventory = load_inventory(args, resource_needs(prepared.rules), prepared.config.path,
                               kinds_needed(prepared.rules))
    report = run_scan(inventory, prepared.rules, prepared.config, prepared.suppressor,
                      {"paths": [shown(p) for p in args.paths], "mode": "offline"})
    why = {r.info.id: r.info.docs.autofix_why for r in prepared.rules}
    outcome = fix_all([f for f in report.findings if f.status is Status.FAIL], why)
    base = _base(args.paths)
    if args.diff:
        _write_diff(args.diff, outcome.diff(_diff_base(base, list(outcome.changed))))
    elif args.out:
        _write_copies(Path(args.out), outcome, base)
    else:
        _write_in_place(outcome)
    _summary(args, outcome)
    # input that could not be read is said (file, line, what to do), and fails the run as
    # it fails `hcpscan scan`: what it holds was neither checked nor fixed
    for diagnostic in inventory.diagnostics:
        if diagnostic.severity in ("error", "warning"):
            print(f"hcpscan: {diagnostic.severity}: {shown(str(diagnostic))}", file=sys.stderr)
    if any(d.severity == "error" for d in inventory.diagnostics):
        return exitcodes.USAGE
    return exitcodes.FINDINGS if outcome.by_hand or outcome.none else exitcodes.OK


def _refuse_out_inside_inputs(out: str, paths: list[str]) -> None:
    """Patched copies written inside a scanned folder would be read as manifests by the
    next scan (every object twice, the fix's new Secret found as existing)."""
    target = os.path.realpath(out)
    for path in paths:
        folder = os.path.realpath(path)
        if os.path.isdir(folder) and os.path.commonpath([folder, target]) == folder:
            raise UsageError(f"--out {out} is inside the scanned folder {path}: the patched copies "
                             "would be read as input by the next scan",
                             "give --out a folder outside the scanned paths")


def _base(paths: list[str]) -> str:
    """The folder patched copies and diff paths are relative to: the scanned folder (the
    folder of a scanned file), or what several scanned paths have in common."""
    folders = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in paths]
    return os.path.commonpath(folders) if folders else os.getcwd()


def _diff_base(base: str, changed: list[str]) -> str:
    """``base``, or the folder it shares with a changed file outside it (a perimeter file
    given with --firewall beside the scanned folder): ``a/../sg.yaml`` is a path neither
    `git apply` nor `patch -p1` take. The note says where to apply the diff then."""
    outside = [os.path.abspath(p) for p in changed
               if os.path.relpath(os.path.abspath(p), base).startswith("..")]
    if not outside:
        return base
    moved = os.path.commonpath([base, *(os.path.dirname(p) for p in outside)])
    sys.stderr.write(f"hcpscan: {', '.join(shown(p) for p in outside)} lies outside the scanned "
                     f"folder: the diff's paths are relative to {shown(moved)}; apply it there "
                     "(git apply / patch -p1)\n")
    return moved


def _write_diff(target: str, diff: str) -> None:
    if target == "-":
        sys.stdout.write(diff)
        return
    try:
        Path(target).write_text(diff, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror}", "give a writable file") from None


def _write_copies(out: Path, outcome: Outcome, base: str) -> None:
    for path, text in outcome.changed.items():
        rel = os.path.relpath(path, base)
        if rel.startswith(".."):
            rel = os.path.basename(path)
        dest = out / rel
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {dest}: {exc.strerror}",
                             "give a writable folder to --out") from None


def _write_in_place(outcome: Outcome) -> None:
    for path, text in outcome.changed.items():
        real = os.path.realpath(path)  # a symbolic link stays a link to the edited file
        tmp = f"{real}.hcpscan-fix"
        try:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            shutil.copymode(real, tmp)
            os.replace(tmp, real)  # a crash never leaves a half-written manifest
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror}",
                             "make the file writable, or use --diff FILE / --out DIR") from None


def _summary(args: argparse.Namespace, outcome: Outcome) -> None:
    err = sys.stderr
    files = len(outcome.changed)
    verb = ("wrote a diff of" if args.diff else f"wrote patched copies under {args.out} of"
            if args.out else "changed")
    print(f"hcpscan: fixed {len(outcome.applied)} finding(s); {verb} {files} file(s)", file=err)
    for finding, fix in outcome.applied:
        print(f"  fixed {finding.rule_id} {finding.object} ({finding.location.path}:"
              f"{finding.location.line}): {fix.summary}", file=err)
    for finding, fix in outcome.by_hand:
        print(f"  by hand: {finding.rule_id} {finding.object}: {fix.summary}", file=err)
        for line in (fix.manual or "\n".join(fix.commands)).splitlines():
            print(f"    {line}", file=err)
    for finding, why in outcome.none:
        print(f"  no automatic fix: {finding.rule_id} {finding.object}: {why}", file=err)
    if files and not args.diff and not args.out:
        print("hcpscan: review the change with `git diff`, then scan again", file=err)
