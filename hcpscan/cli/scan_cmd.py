"""`hcpscan scan PATH...`: scan manifests and dumps offline."""

from __future__ import annotations

import argparse
from pathlib import Path

from hcpscan.cli import exitcodes
from hcpscan.cli.inputs import UsageError, add_path_arguments, load_inventory
from hcpscan.cli.reporting import add_report_arguments, write_failure_reports, write_reports
from hcpscan.cli.ruleset import add_rule_arguments, prepare_rules
from hcpscan.scan import RunClock, kinds_needed, resource_needs, run_scan
from hcpscan.sources.walk import shown

DESCRIPTION = """\
Scan Kubernetes manifests offline against the rules: single files, directories
(GitOps trees), must-gather and `oc adm inspect` output, `hypershift dump`
output (the guest cluster under hostedcluster-<name>/ is kept apart), and
.tar/.tar.gz/.tar.xz/.zip archives of any of these.

examples:
  hcpscan scan ./must-gather.local.123
  hcpscan scan hypershift-dump.tar.gz --select HCP --fail-on medium
  hcpscan scan gitops/ --format json -o hcpscan.json
  hcpscan scan gitops/ --write-baseline .hcpscan-baseline.json   # accept today's findings
  hcpscan scan gitops/ --baseline .hcpscan-baseline.json         # report only new ones
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("scan", help="scan manifests, dumps or archives offline",
                                   description=DESCRIPTION, epilog=exitcodes.EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_path_arguments(parser)
    add_rule_arguments(parser)
    add_report_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    clock = RunClock()
    try:
        prepared = prepare_rules(args, [Path(p) for p in args.paths if p != "-"])
        inventory = load_inventory(args, resource_needs(prepared.rules), prepared.config.path,
                                   kinds_needed(prepared.rules))
    except UsageError as exc:
        write_failure_reports(args, exc, shown(args.paths[0]) if args.paths else "-",
                              {"paths": [shown(p) for p in args.paths], "mode": "offline"})
        raise
    clock.stage("load")
    report = run_scan(inventory, prepared.rules, prepared.config, prepared.suppressor,
                      {"paths": [shown(p) for p in args.paths], "mode": "offline"}, clock,
                      fixes=True)
    report.metadata.update(clock.metadata())
    return write_reports(args, report, prepared)
