"""`hcpscan flows list` and `hcpscan flows show ID`: the flows a hosted control plane needs."""

from __future__ import annotations

import argparse
import sys

from hcpscan import FLOW_CATALOG_URL
from hcpscan.cli.inputs import UsageError
from hcpscan.cli.output import cells, console_for
from hcpscan.model.flows import Flow, FlowError, cited, cited_documents, load_flows
from hcpscan.reporters.formats import write_json

DESCRIPTION = """\
The required-flow catalog: every flow the published networking tables say a
hosted control plane needs open (workers to the API server, konnectivity, ignition,
the private router; DNS over TCP and UDP; ...), per platform and publishing strategy,
with the table row it comes from and how hcpscan checks it (the rule), or why it
cannot from manifests. Add your own flows in a file of the same shape and pass it
with --flows; the fields are described at
""" + FLOW_CATALOG_URL + """

examples:
  hcpscan flows list
  hcpscan flows show workers-to-konnectivity
  hcpscan flows list --format json
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("flows", help="list the flows a hosted control plane needs open",
                                   description=DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(title="actions", metavar="ACTION")
    list_parser = sub.add_parser("list", help="every flow: from, to, protocols, when, checked by")
    list_parser.add_argument("--format", choices=("table", "json"), default="table")
    list_parser.add_argument("--flows", metavar="FILE", help="a flow catalog file instead of the built-in one")
    list_parser.set_defaults(run=run_list)
    show = sub.add_parser("show", help="one flow with the table rows it comes from")
    show.add_argument("id", metavar="ID")
    show.add_argument("--format", choices=("text", "json"), default="text")
    show.add_argument("--flows", metavar="FILE", help="a flow catalog file instead of the built-in one")
    show.set_defaults(run=run_show)
    parser.set_defaults(run=lambda args: parser.print_help() or 0)


def _flows(args: argparse.Namespace) -> tuple[Flow, ...]:
    try:
        return load_flows(args.flows)
    except FlowError as exc:
        raise UsageError(str(exc), f"the catalog's fields: {FLOW_CATALOG_URL}") from None


def _when(flow: Flow) -> str:
    parts = [", ".join(flow.platforms) if flow.platforms else "any platform"]
    parts += [f"{service} as {'/'.join(types)}" for service, types in flow.published.items()]
    if flow.endpoint_access:
        parts.append(f"endpoint access {'/'.join(flow.endpoint_access)}")
    return "; ".join(parts)


def _checked(flow: Flow) -> str:
    return f"not from manifests: {flow.reason}" if flow.check == "none" else \
        f"{flow.checked_by or 'required-flow'} ({flow.check})"


def run_list(args: argparse.Namespace) -> int:
    flows = _flows(args)
    if args.format == "json":
        # "version": 1 is what this wrote before schema_version; kept for old readers
        write_json("flows list", {"version": 1, "flows": [f.to_json() for f in flows]}, sys.stdout)
        return 0
    from rich.table import Table

    table = Table(title=f"{len(flows)} required flows", title_justify="left")
    for column in ("flow", "from", "to", "protocols", "when", "checked by"):
        table.add_column(column)
    for flow in flows:
        table.add_row(*cells(flow.id, flow.source_text, [t.text() for t in flow.targets],
                             "/".join(flow.protocols), _when(flow), _checked(flow)))
    console_for(sys.stdout).print(table)
    return 0


def run_show(args: argparse.Namespace) -> int:
    flow = next((f for f in _flows(args) if f.id == args.id), None)
    if flow is None:
        raise UsageError(f"no flow {args.id}", "list them with `hcpscan flows list`")
    if args.format == "json":
        write_json("flows show", flow.to_json(), sys.stdout)  # the flow's fields stay at the top
        return 0
    lines = [f"{flow.id}: {flow.title}", "", f"from: {flow.source_text}",
             f"to: {', '.join(t.text() for t in flow.targets)}",
             f"protocols: {'/'.join(flow.protocols)}", f"when: {_when(flow)}",
             f"checked by: {_checked(flow)}", "", "documented in:"]
    lines += [f"  {cited(line)}" for line in flow.seed]
    lines += ["", *cited_documents(flow.seed)] if cited_documents(flow.seed) else []
    console_for(sys.stdout).print("\n".join(cells(*lines)), soft_wrap=True)
    return 0
