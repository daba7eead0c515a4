"""`hcpscan rules list` and `hcpscan rules show ID`: the rule catalog and each rule's docs."""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from hcpscan.cli.errors import UsageError
from hcpscan.cli.output import cells, console_for
from hcpscan.core.redact import shown
from hcpscan.reporters import ruledocs
from hcpscan.rules.loader import RuleFileError, builtin_rules_dir, load_rule_dirs
from hcpscan.rules.model import Rule

DESCRIPTION = """\
The rule catalog. Rules are YAML files in rules/ (and in any --rules DIR).

examples:
  hcpscan rules list
  hcpscan rules show PRX008
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("rules", help="list rules or show a rule's documentation",
                                   description=DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(title="actions", metavar="ACTION")
    list_parser = sub.add_parser("list", help="id, severity, category and title of every rule")
    list_parser.add_argument("--rules", action="append", metavar="DIR", default=[],
                             help="also list the rules of DIR")
    list_parser.add_argument("--format", choices=("table", "json"), default="table")
    list_parser.set_defaults(run=run_list)
    show = sub.add_parser("show", help="a rule's documentation: what, why, examples, fix")
    show.add_argument("rule_id", metavar="ID")
    show.add_argument("--rules", action="append", metavar="DIR", default=[])
    show.add_argument("--format", choices=("text", "markdown"), default="text",
                      help="text (rendered, default) or raw markdown")
    show.set_defaults(run=run_show)
    parser.set_defaults(run=lambda args: parser.print_help() or 0)


def _rules(extra: list[str]) -> list[Rule]:
    try:
        return load_rule_dirs([builtin_rules_dir(), *(Path(d) for d in extra)])
    except RuleFileError as exc:
        raise UsageError(f"rule file {exc.path}:{exc.line or 1}: {exc.message}",
                         "fix the rule file") from None


def run_list(args: argparse.Namespace) -> int:
    rules = _rules(args.rules)
    if args.format == "json":
        from hcpscan.reporters.formats import write_json

        write_json("rules list", {"rules": [{"id": r.id, "severity": r.info.severity.value,
                                             "category": r.info.category, "title": r.info.title}
                                            for r in rules]}, sys.stdout)
        return 0
    from rich.table import Table

    table = Table(title=f"{len(rules)} rules", title_justify="left")
    for column in ("id", "severity", "category", "title"):
        table.add_column(column)
    for rule in rules:
        table.add_row(*cells(rule.id, rule.info.severity.value, rule.info.category, rule.info.title))
    console_for(sys.stdout).print(table)
    return 0


def _autofix_section(rule: Rule) -> str:
    """Whether the rule's findings carry an automatic fix, with the diff ``hcpscan fix``
    writes for the failing example (computed here, so it is what the fix really does)."""
    docs = rule.info.docs
    if docs.autofix == "none":
        return f"## Automatic fix\n\nNone: {docs.autofix_why}\n"
    if docs.autofix != "offered":
        return "## Automatic fix\n\nThe rule file does not say (docs.autofix).\n"
    head = ("## Automatic fix\n\nOffered: `hcpscan fix PATH` writes it (`--diff FILE` for a "
            "patch), `hcpscan scan` reports it with each finding.")
    diff = _example_diff(rule)
    if not diff:
        return head + " The failing example above has no automatic fix.\n"
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", diff)), default=0))
    return f"{head} On the failing example:\n\n{fence}diff\n{diff}{fence}\n"


def _example_diff(rule: Rule) -> str:
    from hcpscan.findings.model import Status
    from hcpscan.fixes.apply import fix_all
    from hcpscan.inventory import Inventory
    from hcpscan.rules.config import ScanConfig
    from hcpscan.rules.suppress import Suppressor
    from hcpscan.scan import resource_needs, run_scan
    from hcpscan.sources.loader import load_paths
    from hcpscan.sources.walk import ArchiveMembers

    with tempfile.TemporaryDirectory(prefix="hcpscan-example-") as folder:
        path = Path(folder) / "failing.yaml"
        path.write_text(rule.info.docs.failing, encoding="utf-8")
        loaded = load_paths([str(path)], needs=resource_needs([rule]))
        report = run_scan(Inventory(loaded.objects, loaded.diagnostics, loaded.skipped,
                                     read_member=ArchiveMembers().read), [rule],
                          ScanConfig(), Suppressor())
        outcome = fix_all([f for f in report.findings if f.status is Status.FAIL], {})
        return outcome.diff(folder)


def run_show(args: argparse.Namespace) -> int:
    wanted = args.rule_id.upper()
    rule = next((r for r in _rules(args.rules) if r.id == wanted), None)
    if rule is None:
        raise UsageError(f"no rule {args.rule_id}", "list the rules with `hcpscan rules list`")
    text = ruledocs.page(rule.info) + "\n" + _autofix_section(rule)
    # rule files may come from --rules or the config: their text is input too
    text = "\n".join(shown(line) for line in text.split("\n"))
    if args.format == "markdown":
        sys.stdout.write(text)
        return 0
    from rich.markdown import Markdown

    console = console_for(sys.stdout)
    with console.capture() as captured:
        console.print(Markdown(text))
    # rich pads each line to the console width: trailing blanks only clutter pipes and diffs
    sys.stdout.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))
    return 0
