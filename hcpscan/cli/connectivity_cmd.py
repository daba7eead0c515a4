"""`hcpscan connectivity PATH...`: what NetworkPolicy, Services, Routes and the
perimeter let through, as a connection list or as answers to one question."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hcpscan.analysis.reachability.connlist import connection_list
from hcpscan.analysis.reachability.evaluation import EvaluationOptions
from hcpscan.analysis.reachability.graph import ReachabilityGraph, TargetNotFound
from hcpscan.analysis.reachability.perimeter import Perimeter, PerimeterError, load_perimeter
from hcpscan.analysis.reachability.ports import PROTOCOLS
from hcpscan.analysis.reachability.queries import ExposedPort, Reach
from hcpscan.cli import exitcodes
from hcpscan.cli.inputs import UsageError, add_path_arguments, load_inventory
from hcpscan.cli.output import console_for, diagnostics_table, say
from hcpscan.sources.interface import Diagnostic

DESCRIPTION = """\
Without a question, list every connection NetworkPolicy allows between
workloads and external address ranges, one per line:

    <src> => <dst> : <connections>

(workloads as namespace/name[Kind], ranges as first-last[External],
connections as `All Connections` or e.g. `TCP 8080,UDP 53`).

With --to, answer for one workload, taking Services (NodePort, LoadBalancer),
Routes and an optional perimeter file (--firewall) into account, and say which
layer allows or blocks each way in:
  --to W --port N            who can reach W on N, with evidence
  --to W --port N --from S   can S (workload or address/CIDR) reach W on N
  --to W                     which ports of W outside addresses reach

examples:
  hcpscan connectivity ./manifests
  hcpscan connectivity hcp/ --to hcp-namespace/ignition-server-proxy --port 8443
  hcpscan connectivity hcp/ --firewall sg.yaml --to hcp-namespace/ignition-server-proxy --port 8443
  hcpscan connectivity hcp/ --to hcp-namespace/kube-apiserver --port 6443 --from 10.0.128.7

The perimeter file format is described in fixtures/reachability/README.md.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "connectivity", help="list allowed connections, or ask who can reach a workload",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_path_arguments(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (default) or json")
    parser.add_argument("--firewall", metavar="FILE",
                        help="perimeter file: security group / firewall rules in front of the nodes")
    parser.add_argument("--to", metavar="WORKLOAD",
                        help="target workload: namespace/name, namespace/name[Kind] or "
                             "cluster:namespace/name")
    parser.add_argument("--port", type=int, metavar="N", help="destination pod port (with --to)")
    parser.add_argument("--protocol", default="TCP", type=str.upper, choices=PROTOCOLS,
                        help="protocol of --port (default TCP)")
    parser.add_argument("--from", dest="source", metavar="SOURCE",
                        help="source workload (namespace/name) or address/CIDR outside the cluster")
    parser.add_argument("--ipblock-selects-pods", action="store_true",
                        help="let ipBlock peers match pod IPs too (default: ipBlock is outside "
                             "the cluster only)")
    parser.add_argument("--host-network-exempt", action="store_true",
                        help="treat hostNetwork pods as never isolated by NetworkPolicy")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    _check_arguments(args)
    perimeter = _perimeter(args.firewall)
    inventory = load_inventory(args)
    options = EvaluationOptions(ipblock_selects_pods=args.ipblock_selects_pods,
                                host_network_exempt=args.host_network_exempt)
    if args.to is None:
        result = connection_list(inventory, options)
        if args.format == "json":
            _dump({"connections": [c.to_json() for c in result.connections],
                   "diagnostics": [d.to_json() for d in result.diagnostics]})
        else:
            for line in result.lines():
                say(line)
        return _finish(inventory.diagnostics + result.diagnostics, args.format)

    graph = ReachabilityGraph(inventory, perimeter, options)
    try:
        if args.port is None:
            exposed = graph.exposed_ports(args.to)
            _show_exposed(args, exposed)
        elif args.source is not None:
            reach = graph.can_reach(args.source, args.to, args.port, args.protocol)
            _show_reaches(args, [reach], question=True)
        else:
            reaches = graph.who_can_reach(args.to, args.port, args.protocol)
            _show_reaches(args, reaches, question=False)
    except TargetNotFound as exc:
        raise UsageError(str(exc), "run `hcpscan connectivity PATH` to list the workloads the "
                                   "inputs hold") from None
    return _finish(inventory.diagnostics + graph.diagnostics, args.format)


def _check_arguments(args: argparse.Namespace) -> None:
    if args.to is None and (args.port is not None or args.source is not None):
        raise UsageError("--port and --from ask about one target: give --to too",
                         "e.g. --to hcp-namespace/ignition-server-proxy --port 8443")
    if args.source is not None and args.port is None:
        raise UsageError("--from needs --port", "e.g. --from 10.0.0.5 --port 8443")
    if args.port is not None and not 1 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is outside 1-65535")


def _perimeter(path: str | None) -> Perimeter | None:
    if path is None:
        return None
    try:
        return load_perimeter(path)
    except PerimeterError as exc:
        raise UsageError(f"perimeter file {exc}",
                         "see the perimeter format in fixtures/reachability/README.md") from None


def _finish(diagnostics: list[Diagnostic], fmt: str) -> int:
    if diagnostics and fmt == "text":
        console_for(sys.stderr).print(diagnostics_table(diagnostics))
    if any(d.severity == "error" for d in diagnostics):
        return exitcodes.USAGE
    return exitcodes.OK


def _dump(doc: Any) -> None:
    json.dump(doc, sys.stdout, indent=2)
    sys.stdout.write("\n")


def _show_reaches(args: argparse.Namespace, reaches: list[Reach], question: bool) -> None:
    if args.format == "json":
        _dump({"reaches": [r.to_json() for r in reaches]})
        return
    if question:
        reach = reaches[0]
        verdict = "CAN" if reach.allowed else "CANNOT"
        say(f"{reach.source} {verdict} reach {reach.target} on {reach.protocol}/{reach.port}")
        for path in reach.paths:
            say(f"  via {path.via}: {'open' if path.allowed else 'blocked'}")
            for evidence in path.evidence:
                say(f"    {evidence}")
        return
    say(f"who can reach {args.to} on {args.protocol}/{args.port}:")
    if not reaches:
        say("  nobody")
    ordered = sorted(reaches, key=lambda r: (not r.source.is_external, r.source.name))
    for reach in ordered:
        where = "outside the cluster" if reach.source.is_external else "workload"
        say(f"  {reach.source} ({where})")
        for path in reach.paths:
            say(f"    via {path.via}")
            for evidence in path.evidence:
                say(f"      {evidence}")


def _show_exposed(args: argparse.Namespace, exposed: list[ExposedPort]) -> None:
    if args.format == "json":
        _dump({"exposed": [e.to_json() for e in exposed]})
        return
    say(f"ports of {args.to} reachable from outside the cluster:")
    if not exposed:
        say("  none")
    for item in sorted(exposed, key=lambda e: (e.via, str(e.connections))):
        say(f"  {item.connections} via {item.via} from {item.sources}")
        for evidence in item.evidence:
            say(f"    {evidence}")
