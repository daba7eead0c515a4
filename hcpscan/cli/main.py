"""Command-line entry point: parses arguments and wires the pipeline stages together."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from hcpscan import __version__
from hcpscan.cli import exitcodes
from hcpscan.cli.inputs import UsageError
from hcpscan.cli.output import say

# Each module registers one subcommand with `register(subparsers)`.
COMMAND_MODULES = (
    "hcpscan.cli.scan_cmd",
    "hcpscan.cli.fix_cmd",
    "hcpscan.cli.cluster_cmd",
    "hcpscan.cli.fleet_cmd",
    "hcpscan.cli.inventory_cmd",
    "hcpscan.cli.rules_cmd",
    "hcpscan.cli.templates_cmd",
    "hcpscan.cli.connectivity_cmd",
    "hcpscan.cli.flows_cmd",
    "hcpscan.cli.noproxy_cmd",
    "hcpscan.cli.proxy_cmd",
)

DESCRIPTION = """\
hcpscan checks the networking and proxy configuration of Kubernetes hosted
control planes (HyperShift / OpenShift HCP), Open Cluster Management hubs and
Cluster API fleets, from a live cluster or offline from manifests and dumps.

examples:
  hcpscan cluster --kubeconfig ~/.kube/config
  hcpscan scan ./must-gather.local.123
  hcpscan scan gitops/ --format sarif -o hcpscan.sarif
  hcpscan fix gitops/ --diff hcpscan.patch
  hcpscan rules show HCP001
  hcpscan fleet --kubeconfig hub.kubeconfig     # every managed cluster's results, via OCM
  hcpscan noproxy --no-proxy ".svc,10.0.0.0/8" https://10.1.2.3:6443
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hcpscan", description=DESCRIPTION, epilog=exitcodes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"hcpscan {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help(sys.stderr)
        return exitcodes.USAGE
    try:
        return int(args.run(args))
    except UsageError as exc:
        # messages quote file names, member names and server answers: all input
        say(f"hcpscan: error: {exc.message}", sys.stderr)
        if exc.hint:
            say(f"hcpscan: hint: {exc.hint}", sys.stderr)
        return exitcodes.USAGE
    except KeyboardInterrupt:
        print("hcpscan: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return exitcodes.OK
    except Exception as exc:  # noqa: BLE001 - the one place that turns bugs into a message
        if getattr(args, "debug", False):
            raise
        say(f"hcpscan: internal error: {type(exc).__name__}: {exc}", sys.stderr)
        print("hcpscan: hint: rerun with --debug and report the traceback", file=sys.stderr)
        return exitcodes.INTERNAL
