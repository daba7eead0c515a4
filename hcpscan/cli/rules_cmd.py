"""`hcpscan rules list` and `hcpscan rules show ID`: the rule catalog and each rule's docs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hcpscan.cli.inputs import UsageError
from hcpscan.cli.output import cells, console_for
from hcpscan.findings.redact import shown
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
        json.dump([{"id": r.id, "severity": r.info.severity.value, "category": r.info.category,
                    "title": r.info.title} for r in rules], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from rich.table import Table

    table = Table(title=f"{len(rules)} rules", title_justify="left")
    for column in ("id", "severity", "category", "title"):
        table.add_column(column)
    for rule in rules:
        table.add_row(*cells(rule.id, rule.info.severity.value, rule.info.category, rule.info.title))
    console_for(sys.stdout).print(table)
    return 0


def run_show(args: argparse.Namespace) -> int:
    wanted = args.rule_id.upper()
    rule = next((r for r in _rules(args.rules) if r.id == wanted), None)
    if rule is None:
        raise UsageError(f"no rule {args.rule_id}", "list the rules with `hcpscan rules list`")
    text = ruledocs.page(rule.info)
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
