"""`hcpscan scan PATH...`: scan manifests and dumps offline."""

from __future__ import annotations

import argparse
import json
import sys

from scanner.cli.inputs import add_path_arguments, exit_code_for_input, load_inventory
from scanner.cli.output import console_for, diagnostics_table

DESCRIPTION = """\
Scan Kubernetes manifests offline: single files, directories (GitOps trees),
must-gather and `oc adm inspect` output, `hypershift dump` output (the guest
cluster under hostedcluster-<name>/ is kept apart), and .tar/.tar.gz/.zip
archives of any of these.

examples:
  hcpscan scan ./must-gather.local.123
  hcpscan scan hypershift-dump.tar.gz
  hcpscan scan gitops/ --format json -o hcpscan.json
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("scan", help="scan manifests, dumps or archives offline",
                                   description=DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_path_arguments(parser)
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="output format (default: table)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    inventory = load_inventory(args)
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.format == "json":
            json.dump({"objects": len(inventory), "clusters": inventory.clusters,
                       "diagnostics": [d.to_json() for d in inventory.diagnostics],
                       "skipped": inventory.skipped.to_json()}, out, indent=2)
            out.write("\n")
        else:
            console = console_for(out)
            console.print(f"read {len(inventory)} objects from {len(inventory.clusters)} cluster(s): "
                          + ", ".join(inventory.clusters), markup=False)
            if inventory.diagnostics:
                console.print(diagnostics_table(inventory.diagnostics))
    finally:
        if out is not sys.stdout:
            out.close()
    return exit_code_for_input(inventory)
