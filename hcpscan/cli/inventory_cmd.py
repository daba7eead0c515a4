"""`hcpscan inventory PATH...`: what the scanner read, per kind and namespace."""

from __future__ import annotations

import argparse
import sys

from hcpscan.cli.inputs import add_path_arguments, exit_code_for_input, load_inventory
from hcpscan.cli.output import cells, console_for, diagnostics_table, passed_over_line

DESCRIPTION = """\
List what hcpscan reads from the given paths: object counts per cluster, kind
and namespace, and every diagnostic for input it could not read. Use it to
check that a dump is complete before trusting a scan.

examples:
  hcpscan inventory ./must-gather.local.123
  hcpscan inventory hypershift-dump.tar.gz --format json | jq '.objects[] | select(.kind=="NetworkPolicy")'
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("inventory", help="list the objects read from PATHs",
                                   description=DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_path_arguments(parser)
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="table (default) or json: every object with cluster, kind, "
                             "namespace, name and source path/line")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    inventory = load_inventory(args)
    if args.format == "json":
        from hcpscan.reporters.formats import write_json

        write_json("inventory", {
            "objects": [o.to_json() for o in inventory.objects],
            "diagnostics": [d.to_json() for d in inventory.diagnostics],
            "skipped": inventory.skipped.to_json(),
        }, sys.stdout)
        return exit_code_for_input(inventory)

    from rich.table import Table

    console = console_for(sys.stdout)
    table = Table(title=f"{len(inventory)} objects", title_justify="left")
    for column in ("cluster", "kind", "namespace"):
        table.add_column(column)
    table.add_column("count", justify="right")
    for cluster, kind, namespace, count in inventory.counts():
        table.add_row(*cells(cluster, kind, namespace or "-", count))
    console.print(table)
    passed_over = passed_over_line(inventory)
    if passed_over:
        console.print(passed_over, style="dim", markup=False)
    if inventory.diagnostics:
        console.print(diagnostics_table(inventory.diagnostics))
    return exit_code_for_input(inventory)
