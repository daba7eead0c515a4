"""`hcpscan connectivity PATH...`: what the policy tiers, Services, Routes and the
perimeter let through, as a connection list, a diff of two inputs, or answers to
one question."""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterable
from typing import Any

from hcpscan import PERIMETER_FORMAT_URL
from hcpscan.analysis.reachability.answers import ExposedPort, Reach
from hcpscan.analysis.reachability.connlist import ConnectionList, Focus, connection_list
from hcpscan.analysis.reachability.coverage import (
    CONNECTION_LIST_EVALUATED,
    EVALUATED,
    UnevaluatedKind,
    exclusion_note,
    secondary_evaluated,
    unevaluated_diagnostics,
)
from hcpscan.analysis.reachability.diff import changed_pairs, connectivity_diff
from hcpscan.analysis.reachability.evaluation import EvaluationOptions
from hcpscan.analysis.reachability.explain import explain, explanation_lines
from hcpscan.analysis.reachability.graph import ReachabilityGraph, TargetNotFound
from hcpscan.analysis.reachability.networks import secondary_network
from hcpscan.analysis.reachability.openness import (
    ExposureReport,
    exposure_report,
    exposure_text,
    exposure_title,
)
from hcpscan.analysis.reachability.perimeter import Perimeter, PerimeterError, load_perimeter
from hcpscan.analysis.reachability.scan_graph import with_manifest_perimeter
from hcpscan.analysis.reachability.summary import summarize
from hcpscan.cli import connectivity_paths, exitcodes
from hcpscan.cli.inputs import UsageError, add_path_arguments, load_inventory
from hcpscan.cli.output import console_for, diagnostics_table, say, say_passed_over
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.core.redact import lines_shown_as_they_are, shown
from hcpscan.inventory import Inventory
from hcpscan.model.ports import PROTOCOLS
from hcpscan.reporters.connectivity import (
    GraphvizMissing,
    diff_csv,
    diff_dot,
    diff_md,
    exposure_csv,
    exposure_md,
    list_csv,
    list_dot,
    list_md,
    overview_dot,
    summary_text,
    too_large_to_draw,
    write_svg,
)

DESCRIPTION = """\
At a terminal, without options: a summary that fits a screen - the namespaces no
policy restricts, the workloads outside addresses and the ingress controller reach
(with their ports), and per namespace the pairs open within it and what it
exchanges with outside and other namespaces. --full (the default when piped) lists
every connection instead; --summary asks for the summary anywhere.

The full list: every connection AdminNetworkPolicy, NetworkPolicy,
BaselineAdminNetworkPolicy and EgressFirewall allow between workloads and
external address ranges, one per line:

    <src> => <dst> : <connections>

(workloads as namespace/name[Kind], ranges as first-last[External], the
ingress controller Routes and Ingresses send from as {ingress-controller},
connections as `All Connections` or e.g. `TCP 8080,UDP 53`). A first line
starting `# ` names policy objects the answer does not reflect. The --focus
options keep part of the list; --format csv|md|dot and --svg draw it.

--exposure then says what each workload's policies open to pods NOT in the
input and to outside addresses (netpol-analyzer's exposure analysis):
    Egress Exposure:   <workload> => <peer> : <connections>
    Ingress Exposure:  <workload> <= <peer> : <connections>
where <peer> is entire-cluster (any pod, any namespace), what a rule's
selectors stand for ([namespace with {team=a}]/[all pods],
[all namespaces]/[pod with {app=x}], ns/[pod with {app=x}]) or an outside
range; a selector line shows where it differs from entire-cluster (narrower:
an AdminNetworkPolicy Deny, `No Connections` when nothing is left). Then
"Workloads not protected by network policies:" - open to everything there.

With --explain, say why instead, as netpol-analyzer's explain mode does: for
each pair, its allowed and denied connections, each group with the Egress and
Ingress verdicts and the AdminNetworkPolicy rule (by name), NetworkPolicies
(rule #n), BaselineAdminNetworkPolicy rule, Route/Ingress, UserDefinedNetwork
or system default that decided them; then the pairs no rule touches.
--explain-only allow|deny keeps one kind; the --focus options pick the pairs;
--exposure appends the exposure analysis.

With --to, answer for one workload, taking Services (NodePort, LoadBalancer),
Routes and an optional perimeter file (--firewall) into account, and say which
layer allows or blocks each way in:
  --to W --port N            who can reach W on N, with evidence
  --to W --port N --from S   can S (workload or address/CIDR) reach W on N
  --to W                     which ports of W outside addresses reach

With --path (and --to, --port, --from: a CIDR, a workload or `workers`, the
target's HostedCluster's machine network), print the hops of the open path with
their evidence, or the hops up to the first that blocks; with --flow ID, judge
one required flow (hcpscan flows list) for each HostedCluster as HCP007/HCP008
do. --paths-out writes the hops as networkx node-link JSON, GraphML or DOT.
Both exit 1 when a path or a flow is blocked, 0 when it is open (or the flow
not applicable or not evaluable), 2 on a usage or input error.

`hcpscan connectivity diff OLD NEW` lists what changed between two inputs
(e.g. before and after an upgrade), one line per pair whose connections differ:
  diff-type: added|removed|changed, source: A, destination: B, ref1: OLD, ref2: NEW
With --explain, then the explanation of the changed pairs in OLD and in NEW.
(every layer the list applies: primary UDNs, secondary networks - a change there ends
`, network: NAME[NAD]` - policy tiers, Routes and Ingresses).

examples:
  hcpscan connectivity ./manifests
  hcpscan connectivity ./manifests --focus-workload frontend/webapp --focus-direction egress
  hcpscan connectivity ./manifests --svg connectivity.svg
  hcpscan connectivity hcp/ --explain --focus-workload ignition-server --focus-conn tcp-9090
  hcpscan connectivity ./manifests --exposure
  hcpscan connectivity diff before/ after/
  hcpscan connectivity diff before/ after/ --explain
  hcpscan connectivity hcp/ --to hcp-namespace/ignition-server-proxy --port 8443
  hcpscan connectivity hcp/ --firewall sg.yaml --to hcp-namespace/ignition-server-proxy --port 8443
  hcpscan connectivity hcp/ --to hcp-namespace/kube-apiserver --port 6443 --from 10.0.128.7
  hcpscan connectivity hcp/ --path --from workers --to clusters-x/kube-apiserver --port 8091
  hcpscan connectivity hcp/ --flow workers-to-konnectivity --paths-out paths.graphml

""" + f"The perimeter file (--firewall) format: {PERIMETER_FORMAT_URL}\n"


DIFF = "diff"  # `hcpscan connectivity diff OLD NEW` (a path named diff still reads as a path)
FORMATS = ("text", "txt", "json", "csv", "md", "dot")
TABLE_FORMATS = ("csv", "md", "dot")  # the list and the diff only


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "connectivity", help="list allowed connections, or ask who can reach a workload",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_path_arguments(parser)
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="text (default; also txt), json, or for the list and diff csv, "
                             "md (Markdown) and dot (Graphviz)")
    parser.add_argument("--svg", metavar="FILE",
                        help="also draw the list or diff as an SVG picture (needs Graphviz's dot); "
                             "a large list is drawn as an overview per namespace with the "
                             "workloads outside addresses reach (--full: every workload)")
    view = parser.add_mutually_exclusive_group()
    view.add_argument("--summary", dest="view", action="store_const", const="summary",
                      help="the list folded per namespace, in one screen: what outside "
                           "addresses and the ingress controller reach, what each namespace "
                           "opens (default on a terminal)")
    view.add_argument("--full", dest="view", action="store_const", const="full",
                      help="every connection, one per line (default when piped or with the "
                           "--focus or --exposure options)")
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
    focus = parser.add_argument_group("focus (the connection list only)")
    focus.add_argument("--focus-workload", action="append", default=[], metavar="W[,W]",
                       help="only connections of these workloads (name or namespace/name; "
                            "ingress-controller for the {ingress-controller} lines)")
    focus.add_argument("--focus-workload-peer", action="append", default=[], metavar="P[,P]",
                       help="with --focus-workload: only connections between a focus workload "
                            "and these")
    focus.add_argument("--focus-direction", choices=("ingress", "egress"),
                       help="with --focus-workload: only connections into (ingress) or out of "
                            "(egress) the focus workloads")
    focus.add_argument("--focus-conn", metavar="PROTO-PORT",
                       help="only pairs that allow this one connection, e.g. tcp-80 or udp-53 "
                            "(with --explain: every pair, explained on that connection)")
    explain = parser.add_argument_group("explain (the connection list only, text)")
    explain.add_argument("--explain", action="store_true",
                         help="for each pair of peers, which AdminNetworkPolicy, NetworkPolicy or "
                              "BaselineAdminNetworkPolicy rule allows or denies each connection, "
                              "direction by direction, as netpol-analyzer's --explain prints it")
    explain.add_argument("--explain-only", choices=("allow", "deny"),
                         help="with --explain: only the allowed or only the denied connections")
    parser.add_argument("--exposure", action="store_true",
                        help="after the list, say which workloads the policies open to pods "
                             "not in the input (any namespace, namespaces or pods by label) "
                             "and to outside addresses, and which no policy protects")
    parser.add_argument("--ipblock-selects-pods", action="store_true",
                        help="let ipBlock peers match pod IPs too (default: ipBlock is outside "
                             "the cluster only)")
    parser.add_argument("--host-network-exempt", action="store_true",
                        help="treat hostNetwork pods as never isolated by NetworkPolicy")
    connectivity_paths.add_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.paths[0] == DIFF and not os.path.exists(DIFF):
        return _run_diff(args)
    _check_arguments(args)
    perimeter = _perimeter(args.firewall)
    inventory = load_inventory(args)
    say_passed_over(inventory)
    options = EvaluationOptions(ipblock_selects_pods=args.ipblock_selects_pods,
                                host_network_exempt=args.host_network_exempt)
    if args.explain:
        return _run_explain(args, inventory, options)
    if connectivity_paths.wanted(args):
        found, blocked = connectivity_paths.run(args, inventory, perimeter, options)
        code = _finish(inventory.diagnostics + found, args.format)
        # a blocked path or flow is a finding: exit 1 (an input error's 2 comes first)
        return exitcodes.FINDINGS if blocked and code == exitcodes.OK else code
    if args.to is None:
        focus, ignored = _focus(args)
        result = connection_list(inventory, options).focused(focus)
        exposure = exposure_report(inventory, result, focus, options) if args.exposure else None
        if _summary_view(args):
            _show_summary(result)
        else:
            _show_list(args, result, focus, inventory.diagnostics, exposure)
        one = f"{focus.connection[0]} {focus.connection[1]}" if focus.connection else None
        overview = (args.view != "full" and exposure is None and not _focusing(args)
                    and too_large_to_draw(result.connections))
        _svg(args, lambda: overview_dot(summarize(result.connections, result.workloads))
             if overview else list_dot(result.connections, label=one, exposure=exposure,
                                       compact=True))
        found = exposure.diagnostics if exposure is not None else []
        return _finish(inventory.diagnostics + ignored + result.diagnostics + found, args.format)

    said: list[Diagnostic] = []  # what the security groups in the manifests could not give
    graph = ReachabilityGraph(inventory, with_manifest_perimeter(inventory, perimeter, said), options)
    graph.diagnostics.extend(said)
    # the question's paths between workloads evaluate secondary networks; outside sources
    # (who can reach, which ports outside addresses reach) do not cross them
    from_workload = args.source is not None and graph.is_workload_source(args.source)
    unevaluated = secondary_evaluated(graph.unevaluated, outside=not from_workload)
    # the warnings follow: secondary kinds are no longer 'not evaluated' (a NAD only for
    # traffic from outside, under its label)
    stale = set(unevaluated_diagnostics(
        inventory, [k for k in graph.unevaluated if k not in unevaluated]))
    graph.diagnostics[:] = [d for d in graph.diagnostics if d not in stale] + \
        unevaluated_diagnostics(inventory, [k for k in unevaluated if k not in graph.unevaluated])
    note = exclusion_note(unevaluated)
    extra = _exclusions(unevaluated, note)
    try:
        dnat = [str(n) for n in graph.dnat_notes_for(args.to)]
    except TargetNotFound:
        dnat = []  # the question itself says so below
    if dnat:
        extra["notes"] = dnat
    if args.format != "json":
        _header(note)
        for text in dnat:
            _header(text)
    try:
        if args.port is None:
            exposed = graph.exposed_ports(args.to)
            _show_exposed(args, exposed, extra)
        elif args.source is not None:
            reach = graph.can_reach(args.source, args.to, args.port, args.protocol)
            _show_reaches(args, [reach], extra, question=True)
        else:
            reaches = graph.who_can_reach(args.to, args.port, args.protocol)
            _show_reaches(args, reaches, extra, question=False)
    except TargetNotFound as exc:
        raise UsageError(str(exc), "run `hcpscan connectivity PATH` to list the workloads the "
                                   "inputs hold") from None
    # questions on a port evaluate secondary networks between workloads: what that rests on
    secondary = graph.secondary_diagnostics if args.port is not None else []
    return _finish(inventory.diagnostics + graph.diagnostics + secondary, args.format)


def _show_list(args: argparse.Namespace, result: ConnectionList, focus: Focus,
               read: list[Diagnostic], exposure: ExposureReport | None) -> None:
    """The list in the chosen format, and the exposure section when asked; focused on one
    connection, lines name pairs only."""
    pairs_only = focus.connection is not None
    one = f"{focus.connection[0]} {focus.connection[1]}" if focus.connection else None
    title = exposure_title(focus)
    if args.format == "json":
        rows = [c.to_json() for c in result.connections]
        for row in rows if pairs_only else ():
            del row["conn"]
        extra = {} if exposure is None else {"exposure": _exposure_json(exposure, pairs_only)}
        notes = {"notes": [str(n) for n in result.dnat]} if result.dnat else {}
        _dump({"connections": rows, **extra,
               **_exclusions(result.unevaluated, result.exclusion_note), **notes,
               "diagnostics": [d.to_json() for d in read + result.diagnostics]})
    elif args.format == "dot":
        sys.stdout.write(list_dot(result.connections, label=one, exposure=exposure))
    elif args.format in TABLE_FORMATS and exposure is not None:
        render = exposure_csv if args.format == "csv" else exposure_md
        sys.stdout.write(render(result.connections, exposure, title, pairs_only))
    elif args.format in TABLE_FORMATS:
        render_list = list_csv if args.format == "csv" else list_md
        sys.stdout.write(render_list(result.connections, pairs_only))
    else:
        _header(result.exclusion_note)
        for note in result.dnat:
            _header(str(note))
        if one is not None:
            say(f"Permitted connections on {one}:")
        lines: Iterable[str]
        if result.sections:
            lines = result.section_lines(pairs_only)
            some = bool(lines)
        else:  # written as they are made: the list can run to a million lines
            some = bool(result.connections)
            lines = result.iter_lines(pairs_only=pairs_only)
            if result.networks and not pairs_only:  # VMs, one network
                lines = itertools.chain(lines, [""] * some + result.mapping_lines())
                some = True
        if some:
            _write_lines(lines)
        if exposure is not None:
            _write_exposure(exposure, title, pairs_only, after=some)


def _summary_view(args: argparse.Namespace) -> bool:
    """The summary unless asked for the list: by --full, a table format, a focus or the
    exposure section, or a pipe (scripts and netpol-analyzer comparisons read the list)."""
    if args.view is not None:
        if args.view == "summary" and (args.format not in ("text", "txt") or args.exposure
                                       or _focusing(args)):
            raise UsageError("--summary is text of the whole list: leave out --format, "
                             "--exposure and the --focus options")
        return args.view == "summary"
    return (args.format in ("text", "txt") and not args.exposure and not _focusing(args)
            and sys.stdout.isatty())


def _show_summary(result: ConnectionList) -> None:
    width = shutil.get_terminal_size((80, 24)).columns if sys.stdout.isatty() else 80
    try:
        width = int(os.environ.get("COLUMNS", "")) or width
    except ValueError:
        pass
    for note in [result.exclusion_note, *map(str, result.dnat)]:
        for line in textwrap.wrap(note, max(40, width) - 2, break_long_words=False,
                                  break_on_hyphens=False):
            say(f"# {line}")
    _write_lines(summary_text(summarize(result.connections, result.workloads), width))


def _write_exposure(exposure: ExposureReport, title: str, pairs_only: bool, after: bool) -> None:
    """The exposure section (``after`` some lines: a blank line first); its columns are
    tab-separated: the tabs are layout, the parts input-derived."""
    text = exposure_text(exposure, title, pairs_only)
    _write_lines([""] * after + ["\t".join(shown(p) for p in t.split("\t")) for t in text],
                 escaped=True)


def _exposure_json(report: ExposureReport, pairs_only: bool) -> dict[str, Any]:
    return {"egress": [x.to_json(pairs_only) for x in report.of("egress")],
            "ingress": [x.to_json(pairs_only) for x in report.of("ingress")],
            "unprotected": [{"cluster": u.cluster, "workload": u.workload,
                             "direction": u.direction} for u in report.unprotected]}


_CHUNK = 50_000  # lines per write: lists run to a million lines


def _write_lines(lines: Iterable[str], escaped: bool = False) -> None:
    """Lines holding input-derived names, escaped as ``say`` escapes them (unless already
    ``escaped``), written a chunk at a time; leading tabs are layout. A chunk that
    ``shown`` would leave as it is (nearly always) is checked in one pass and written."""
    lines = iter(lines)
    chunk = list(itertools.islice(lines, _CHUNK))
    if not chunk:
        sys.stdout.write("\n")
        return
    while chunk:
        text = "\n".join(chunk)
        if not escaped and not lines_shown_as_they_are(text, len(chunk)):
            text = "\n".join(_indent(line) + shown(line.lstrip("\t")) for line in chunk)
        sys.stdout.write(text + "\n")
        chunk = list(itertools.islice(lines, _CHUNK))


def _run_explain(args: argparse.Namespace, inventory: Inventory, options: EvaluationOptions) -> int:
    """``--explain``: every pair's connections with the rules that decide them."""
    focus, ignored = _focus(args)
    # the exposure section treats every workload as on the pod network: declare the rest
    evaluated = EVALUATED if args.exposure else CONNECTION_LIST_EVALUATED
    result = explain(inventory, options, focus.keeps_pair, evaluated)
    _header(result.exclusion_note)
    lines = explanation_lines(result, focus, args.explain_only or "")
    if lines:
        _write_lines(lines)
    found: list[Diagnostic] = []
    if args.exposure:  # the exposure of the same (focused) list, after the explanation
        exposure = exposure_report(inventory, connection_list(inventory, options).focused(focus),
                                   focus, options)
        _write_exposure(exposure, exposure_title(focus), focus.connection is not None, bool(lines))
        found = exposure.diagnostics
    return _finish(inventory.diagnostics + ignored + result.diagnostics + found, args.format)


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip("\t"))]


def _run_diff(args: argparse.Namespace) -> int:
    """``hcpscan connectivity diff OLD NEW``: what changed between two inputs."""
    if len(args.paths) != 3:
        raise UsageError("connectivity diff takes two inputs: OLD and NEW",
                         "e.g. hcpscan connectivity diff before/ after/")
    if args.to is not None or _focusing(args) or args.exposure:
        raise UsageError("connectivity diff compares whole connection lists: leave out --to, "
                         "--exposure and the --focus options")
    if args.explain_only and not args.explain:
        raise UsageError("--explain-only needs --explain", "e.g. --explain --explain-only deny")
    if args.explain and (args.format not in ("text", "txt") or args.svg):
        raise UsageError("connectivity diff --explain explains the changed pairs as text: "
                         "leave out --format and --svg")
    options = EvaluationOptions(ipblock_selects_pods=args.ipblock_selects_pods,
                                host_network_exempt=args.host_network_exempt)
    old = load_inventory(argparse.Namespace(**{**vars(args), "paths": [args.paths[1]]}))
    new = load_inventory(argparse.Namespace(**{**vars(args), "paths": [args.paths[2]]}))
    result = connectivity_diff(old, new, options)
    note = exclusion_note(result.unevaluated)
    if args.format == "json":
        _dump({"changes": [c.to_json() for c in result.changes],
               **_exclusions(result.unevaluated, note),
               "diagnostics": [d.to_json() for d in result.diagnostics]})
    elif args.format in TABLE_FORMATS:
        sys.stdout.write({"csv": diff_csv, "md": diff_md, "dot": diff_dot}[args.format](
            result.changes))
    else:
        _header(note)
        if result.changes:
            say("Connectivity diff:")
            _write_lines(result.lines())
    found: list[Diagnostic] = []
    if args.explain:  # why each changed pair is as it is, in OLD and in NEW
        keep = changed_pairs(result.changes)
        # a pair is explained on the networks it changed on: the primary ones ('') or a NAD
        on = {"": changed_pairs([c for c in result.changes if not c.network])}
        for name in {c.network for c in result.changes if c.network}:
            on[secondary_network(name).title] = changed_pairs(
                [c for c in result.changes if c.network == name])
        for path, inventory in ((args.paths[1], old), (args.paths[2], new)):
            why = explain(inventory, options, keep)
            for section in why.sections:
                changed = on.get(section.network if section.secondary else "", _no_pair)
                section.pairs = [p for p in section.pairs if changed(p.source, p.destination)]
                section.isolated = [p for p in section.isolated
                                    if changed(p.source, p.destination)]
            say("")
            say(f"Explanation of the changed pairs in {path}:")
            lines = explanation_lines(why, Focus(), args.explain_only or "", across=keep)
            _write_lines(lines or ["(no pair of this input changed)"])
            found += [d for d in why.diagnostics if d not in result.diagnostics]
    _svg(args, lambda: diff_dot(result.changes))
    return _finish(old.diagnostics + new.diagnostics + result.diagnostics + found, args.format)


def _no_pair(source: str, destination: str) -> bool:
    return False


def _svg(args: argparse.Namespace, dot_text: Callable[[], str]) -> None:
    if not args.svg:
        return
    try:
        write_svg(dot_text(), args.svg)
    except GraphvizMissing as exc:
        raise UsageError(f"--svg {args.svg}: {exc}",
                         "install Graphviz (apt-get install graphviz, brew install graphviz), or "
                         "write --format dot and render it where Graphviz is") from None
    except subprocess.TimeoutExpired as exc:
        raise UsageError(f"--svg {args.svg}: Graphviz did not finish drawing within "
                         f"{exc.timeout:g} seconds: the picture has too many connections",
                         "draw less of it: one namespace (give its folder), --focus-workload "
                         "NAME, or write --format dot and lay it out with another tool"
                         ) from None
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        raise UsageError(f"--svg {args.svg}: Graphviz could not draw it: "
                         f"{detail.decode(errors='replace').strip() or exc}",
                         "check that the folder exists and is writable") from None


def _names(values: list[str]) -> tuple[str, ...]:
    return tuple(n.strip() for v in values for n in v.split(",") if n.strip())


def _focus(args: argparse.Namespace) -> tuple[Focus, list[Diagnostic]]:
    """The focus options; --focus-workload-peer and --focus-direction without
    --focus-workload are ignored with a warning (as netpol-analyzer does), the rest kept."""
    connection = None
    if args.focus_conn is not None:
        proto, _, port = args.focus_conn.partition("-")
        if proto.upper() not in PROTOCOLS or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise UsageError(f"--focus-conn {args.focus_conn!r} is not PROTOCOL-PORT",
                             "e.g. --focus-conn tcp-8080 or --focus-conn udp-53")
        connection = (proto.upper(), int(port))
    workloads, peers = _names(args.focus_workload), _names(args.focus_workload_peer)
    direction = args.focus_direction or ""
    ignored = []
    if not workloads:
        ignored = [Diagnostic("", None, f"{flag} is used only with --focus-workload: ignored, "
                              "the list is not focused on a direction or peer", "warning",
                              "add --focus-workload NAME, e.g. --focus-workload frontend/webapp "
                              f"{flag} {value}")
                   for flag, value, given in (("--focus-workload-peer", ",".join(peers), peers),
                                              ("--focus-direction", direction, direction))
                   if given]
        peers, direction = (), ""
    return Focus(workloads, peers, direction, connection), ignored


def _focusing(args: argparse.Namespace) -> bool:
    return bool(args.focus_workload or args.focus_workload_peer or args.focus_direction
                or args.focus_conn)


def _check_arguments(args: argparse.Namespace) -> None:
    connectivity_paths.check_arguments(args)
    if args.view == "summary" and (args.to is not None or args.explain):
        raise UsageError("--summary folds the whole connection list: leave out --to and --explain")
    if args.explain_only and not args.explain:
        raise UsageError("--explain-only needs --explain", "e.g. --explain --explain-only deny")
    if args.explain and (args.to is not None or args.format not in ("text", "txt") or args.svg):
        raise UsageError("--explain explains the whole connection list as text: leave out --to, "
                         "--format and --svg")
    if args.to is not None and (args.format in TABLE_FORMATS or args.svg):
        raise UsageError(f"--format {args.format} and --svg draw the connection list or a diff; "
                         "a question (--to) is answered as text or json")
    if args.to is not None and args.exposure:
        raise UsageError("--exposure adds to the connection list: leave out --to",
                         "e.g. hcpscan connectivity ./manifests --exposure")
    if args.to is not None and _focusing(args):
        raise UsageError("the --focus options filter the connection list: leave out --to")
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
                         f"the perimeter file format: {PERIMETER_FORMAT_URL}") from None


def _finish(diagnostics: list[Diagnostic], fmt: str) -> int:
    if diagnostics:  # on stderr in JSON mode too: an exit code 2 must say why
        console_for(sys.stderr).print(diagnostics_table(diagnostics))
    if any(d.severity == "error" for d in diagnostics):
        return exitcodes.USAGE
    return exitcodes.OK


def _dump(doc: dict[str, Any]) -> None:
    """Every connectivity answer is one versioned document (hcpscan/reporters/formats.py)."""
    from hcpscan.reporters.formats import write_json

    write_json("connectivity", doc, sys.stdout)


def _header(note: str) -> None:
    """The answer's caveat, first on standard output so nobody reads the answer without it
    (a ``#`` line: tools that read the lines skip it)."""
    if note:
        say(f"# {note}")


def _exclusions(kinds: list[UnevaluatedKind], note: str) -> dict[str, Any]:
    """JSON fields: what the answer leaves out (empty list and note when nothing)."""
    return {"excluded": [k.to_json() for k in kinds], "note": note}


def _show_reaches(args: argparse.Namespace, reaches: list[Reach], extra: dict[str, Any],
                  question: bool) -> None:
    if args.format == "json":
        _dump({"reaches": [r.to_json() for r in reaches], **extra})
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


def _show_exposed(args: argparse.Namespace, exposed: list[ExposedPort],
                  extra: dict[str, Any]) -> None:
    if args.format == "json":
        _dump({"exposed": [e.to_json() for e in exposed], **extra})
        return
    say(f"ports of {args.to} reachable from outside the cluster:")
    if not exposed:
        say("  none")
    for item in sorted(exposed, key=lambda e: (e.via, str(e.connections))):
        say(f"  {item.connections} via {item.via} from {item.sources}")
        for evidence in item.evidence:
            say(f"    {evidence}")
