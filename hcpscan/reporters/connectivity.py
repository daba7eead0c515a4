"""Connection lists and connectivity diffs as csv, Markdown, Graphviz dot, and SVG.

The csv and Markdown columns are netpol-analyzer's (``src,dst,conn``, then
``network`` when UDNs split the cluster; ``diff-type,source,destination,ref1,ref2,
workloads-diff-info``), with a leading ``cluster`` column when the input holds
several clusters. The picture is hcpscan's own:
workloads grouped in a box per namespace, outside address ranges and the ingress
controller as nodes of their own, and every connection from outside drawn
thick and red, so what is exposed stands out.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import shutil
import subprocess
import textwrap
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from hcpscan.analysis.reachability.connlist import INGRESS_CONTROLLER, Connection
from hcpscan.analysis.reachability.diff import ADDED, REMOVED, ConnectionChange
from hcpscan.analysis.reachability.openness import EGRESS, INGRESS, ExposureLine, ExposureReport
from hcpscan.analysis.reachability.summary import ConnectivitySummary, Flow
from hcpscan.core.redact import shown

LIST_COLUMNS = ("src", "dst", "conn")
DIFF_COLUMNS = ("diff-type", "source", "destination", "ref1", "ref2", "workloads-diff-info")
EXTERNAL = "[External]"
GROUP_AT = 3  # workloads connected alike drawn as one node from this many on


class GraphvizMissing(RuntimeError):
    """``dot`` is not on the PATH."""


def _multi(items: Sequence[Connection] | Sequence[ConnectionChange]) -> bool:
    return len({i.cluster for i in items}) > 1


def _list_rows(connections: Sequence[Connection],
               pairs_only: bool) -> tuple[list[str], list[list[str]]]:
    """Rows of the list; ``pairs_only`` (a list focused on one connection) leaves out conn."""
    multi = _multi(connections)
    networks = any(c.network for c in connections)
    columns = LIST_COLUMNS[:2] if pairs_only else LIST_COLUMNS
    header = (["cluster"] if multi else []) + list(columns) + (["network"] if networks else [])
    rows = [([c.cluster] if multi else []) + [c.source, c.destination]
            + ([] if pairs_only else [str(c.connections)]) + ([c.network] if networks else [])
            for c in connections]
    return header, rows


def _diff_rows(changes: Sequence[ConnectionChange]) -> tuple[list[str], list[list[str]]]:
    multi = _multi(changes)
    networks = any(c.network for c in changes)  # a change on a secondary network says which
    header = (["cluster"] if multi else []) + list(DIFF_COLUMNS) + (["network"] if networks else [])
    return header, [([c.cluster] if multi else []) + c.fields()
                    + ([c.network_label] if networks else []) for c in changes]


def _csv(header: list[str], rows: Iterable[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _md(header: list[str], rows: Iterable[list[str]]) -> str:
    def cell(text: str) -> str:
        return shown(text).replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("-" * (len(h) + 2) for h in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def list_csv(connections: Sequence[Connection], pairs_only: bool = False) -> str:
    return _csv(*_list_rows(connections, pairs_only))


def list_md(connections: Sequence[Connection], pairs_only: bool = False) -> str:
    return _md(*_list_rows(connections, pairs_only))


def _exposure_sections(report: ExposureReport, multi: bool, pairs_only: bool
                       ) -> list[tuple[str, list[str], list[list[str]]]]:
    """netpol-analyzer's exposure blocks as tables: (heading, columns, rows) per direction
    with lines; ingress names the workload first (dst, src)."""
    out = []
    for direction, head, columns in ((EGRESS, "Egress Exposure:", ["src", "dst", "conn"]),
                                     (INGRESS, "Ingress Exposure:", ["dst", "src", "conn"])):
        lines = report.of(direction)
        if lines:
            rows = [([x.cluster] if multi else []) + [x.workload, x.peer]
                    + ([] if pairs_only else [str(x.openness)]) for x in lines]
            out.append((head, (["cluster"] if multi else []) + columns[:2 if pairs_only else 3],
                        rows))
    return out


def _multi_exposure(connections: Sequence[Connection], report: ExposureReport) -> bool:
    return len({c.cluster for c in connections} | {x.cluster for x in report.lines}) > 1


def exposure_csv(connections: Sequence[Connection], report: ExposureReport, title: str,
                 pairs_only: bool = False) -> str:
    """The list, then the exposure section in one csv stream, as netpol-analyzer writes it:
    a title row and a heading row per block, padded to the list's width."""
    multi = _multi_exposure(connections, report)
    width = len(LIST_COLUMNS) + (1 if multi else 0)
    rows = [[title] + [""] * (width - 1)]
    for head, columns, lines in _exposure_sections(report, multi, pairs_only):
        rows += [[head] + [""] * (width - 1), columns, *lines]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return list_csv(connections, pairs_only) + out.getvalue()


def exposure_md(connections: Sequence[Connection], report: ExposureReport, title: str,
                pairs_only: bool = False) -> str:
    out = [list_md(connections, pairs_only), f"## {title}\n"]
    for head, columns, lines in _exposure_sections(report, _multi_exposure(connections, report),
                                                   pairs_only):
        out += [f"\n### {head}\n", _md(columns, lines)]
    return "".join(out)


def diff_csv(changes: Sequence[ConnectionChange]) -> str:
    return _csv(*_diff_rows(changes))


def diff_md(changes: Sequence[ConnectionChange]) -> str:
    return _md(*_diff_rows(changes))


# -- the picture ------------------------------------------------------------------------------

def _quote(text: str) -> str:
    """A dot string: quotes and backslashes escaped, then control characters as visible
    escapes (a newline becomes dot's own line break, ``\\n``), and credentials masked."""
    return '"' + shown(text.replace("\\", "\\\\").replace('"', '\\"')) + '"'


def _node_id(cluster: str, peer: str, multi: bool) -> str:
    return _quote(f"{cluster}:{peer}" if multi else peer)


def _is_outside(peer: str) -> bool:
    return peer.endswith(EXTERNAL) or peer == INGRESS_CONTROLLER


def _nodes(items: Sequence[Connection] | Sequence[ConnectionChange], multi: bool,
           unknown: Mapping[str, str] | None = None) -> list[str]:
    """Workloads in one box per (cluster, namespace); outside ranges, the ingress
    controller and ``unknown`` pods (exposure analysis: node id -> what they stand for)
    on their own."""
    unknown = unknown or {}
    boxes: dict[tuple[str, str], set[str]] = defaultdict(set)
    loose: set[tuple[str, str]] = set()
    for item in items:
        for peer in (item.source, item.destination):
            if _is_outside(peer) or peer in unknown:
                loose.add((item.cluster, peer))
            else:
                boxes[(item.cluster, peer.split("/", 1)[0])].add(peer)
    out = []
    for k, ((cluster, namespace), peers) in enumerate(sorted(boxes.items())):
        title = f"{cluster}: namespace {namespace}" if multi else f"namespace {namespace}"
        out.append(f"  subgraph cluster_{k} {{")
        out.append(f'    label={_quote(title)}; style="rounded,filled"; fillcolor="#f4f6fa"; '
                   'color="#8a97ad"; fontname="Helvetica"')
        for peer in sorted(peers):
            name, _, kind = peer.split("/", 1)[1].partition("[")
            kind, _, network = kind.partition("]")
            label = f"{name}\n[{kind}]" if kind else name
            label += f"\non {network}" if network else ""
            out.append(f"    {_node_id(cluster, peer, multi)} [label={_quote(label)}]")
        out.append("  }")
    out.append("  subgraph sources { rank=min")
    for cluster, peer in sorted(loose):
        if peer == INGRESS_CONTROLLER:
            style = 'shape=cds, fillcolor="#fff1c2", color="#b58900", label="ingress controller"'
        elif peer in unknown:
            style = (f'shape=box, style="dashed,filled", fillcolor="#fdebd0", color="#d35400", '
                     f'label={_quote(unknown[peer] + chr(10) + "pods not in the input")}')
        else:
            style = (f'shape=box, style="filled", fillcolor="#fde3e1", color="#c0392b", '
                     f'label={_quote(peer.removesuffix(EXTERNAL) + chr(10) + "outside")}')
        out.append(f"  {_node_id(cluster, peer, multi)} [{style}]")
    out.append("  }")
    return out


def _graph(title: str, body: list[str]) -> str:
    head = ["digraph connectivity {",
            f'  graph [rankdir=LR, fontname="Helvetica", labelloc=t, label={_quote(title)}, '
            'nodesep=0.45, ranksep=1.1]',
            '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", color="#34495e", '
            'fontname="Helvetica", fontsize=11]',
            '  edge [fontname="Helvetica", fontsize=10, color="#7f8c8d", fontcolor="#2c3e50"]']
    return "\n".join(head + body + ["}"]) + "\n"


Signature = frozenset[tuple[str, str, str]]
SELF = "\0self"  # stands for the workload itself in a signature: no workload is named so


def _signatures(connections: Sequence[Connection], label: str | None
                ) -> dict[tuple[str, str], Signature]:
    """Each (cluster, workload) -> its edges both ways: (direction, peer, connections)."""
    edges: dict[tuple[str, str], set[tuple[str, str, str]]] = defaultdict(set)
    for c in connections:
        text = label or str(c.connections)
        edges[(c.cluster, c.source)].add(("out", c.destination, text))
        edges[(c.cluster, c.destination)].add(("in", c.source, text))
    return {key: frozenset(signature) for key, signature in edges.items()}


def _seen_from(signature: Signature, me: str, other: str) -> Signature:
    """``signature`` (of ``me``) with ``me`` and ``other`` both named ``SELF``: two
    workloads connected alike, each other included, then have the same one."""
    return frozenset((d, SELF if p in (me, other) else p, t) for d, p, t in signature)


def _twins(signatures: Mapping[tuple[str, str], Signature], cluster: str, a: str, b: str
           ) -> bool:
    return (_seen_from(signatures[(cluster, a)], a, b)
            == _seen_from(signatures[(cluster, b)], b, a))


def _alike(signatures: Mapping[tuple[str, str], Signature], closed: bool
           ) -> list[tuple[str, list[str]]]:
    """Workloads of one namespace connected alike, as (cluster, workloads). ``closed``:
    also those connected to each other (a namespace open within itself is one such
    group: a workload never lists itself, so without this no two of them are alike);
    a workload joins a group only if it is alike with every member, which makes the
    connections inside the group the same for every pair."""
    by_namespace: dict[tuple[str, str], list[str]] = defaultdict(list)
    for cluster, peer in sorted(signatures):
        if not _is_outside(peer):
            by_namespace[(cluster, peer.split("/", 1)[0])].append(peer)
    out = []
    for (cluster, _), peers in by_namespace.items():
        found: list[list[str]] = []
        for peer in peers:
            home = next((g for g in found if all(
                _twins(signatures, cluster, peer, m) if closed
                else signatures[(cluster, peer)] == signatures[(cluster, m)] for m in g)), None)
            if home is None:
                found.append([peer])
            else:
                home.append(peer)
        out += [(cluster, group) for group in found]
    return out


def _groups(connections: Sequence[Connection], label: str | None, closed: bool = False
            ) -> dict[tuple[str, str], str]:
    """Workloads of one namespace connected alike - the same peers, the same connections,
    both ways - drawn as one node (an HCP namespace has dozens of such): (cluster,
    workload) -> the group's name, for groups of ``GROUP_AT`` or more (two alike read
    well side by side)."""
    out = {}
    for cluster, peers in _alike(_signatures(connections, label), closed):
        if len(peers) >= GROUP_AT:
            for peer in peers:
                out[(cluster, peer)] = f"{peers[0]} (+{len(peers) - 1})"
    return out


def list_dot(connections: Sequence[Connection], title: str = "allowed connections",
             label: str | None = None, exposure: ExposureReport | None = None,
             compact: bool = False) -> str:
    """The list as a graph; ``label``: the one connection a focused list is about, on every
    edge instead of the pair's connections. Workloads connected alike share a node, except
    with ``exposure``: its lines are drawn too, dashed, to nodes standing for pods not in
    the input, and each workload keeps its own node so that what is open names it.
    ``compact`` (the picture): workloads connected to each other alike share a node too,
    with one edge to itself; the dot output keeps every edge netpol-analyzer draws."""
    unknown, texts = _exposure_edges(exposure) if exposure is not None else ({}, {})
    connections = [*connections, *texts.values()]  # the outside lines twice: drawn once
    multi = _multi(connections)
    # a workload on a secondary network is a node of its own there, named as
    # netpol-analyzer names it: ns/name[Kind]<network>
    connections = [dataclasses.replace(c, source=c.source + c.network,
                                       destination=c.destination + c.network)
                   if c.secondary else c for c in connections]
    groups = _groups(connections, label, compact) if exposure is None else {}
    members: dict[tuple[str, str], list[str]] = defaultdict(list)
    for (cluster, peer), group in groups.items():
        members[(cluster, group)].append(peer)
    drawn = []
    seen: set[tuple[str, str, str]] = set()
    for c in connections:
        src = groups.get((c.cluster, c.source), c.source)
        dst = groups.get((c.cluster, c.destination), c.destination)
        if (c.cluster, src, dst) not in seen:
            seen.add((c.cluster, src, dst))
            drawn.append(Connection(c.cluster, src, dst, c.connections))
    body = _nodes(drawn, multi, unknown)
    for (cluster, group), peers in sorted(members.items()):
        names = [p.split("/", 1)[1] for p in sorted(peers)]
        text = "\n".join([f"{len(names)} workloads connected alike", *names[:8]]
                         + ([f"... and {len(names) - 8} more"] if len(names) > 8 else []))
        body.append(f"  {_node_id(cluster, group, multi)} [label={_quote(text)}, shape=folder]")
    shown = {key: str(x.openness) for key, x in exposure_lines(exposure)} if exposure else {}
    for c in drawn:
        exposed = _is_outside(c.source)
        style = ' color="#d62728", fontcolor="#d62728", penwidth=2.2' if exposed else ""
        if c.source in unknown or c.destination in unknown:
            style = ' color="#d35400", fontcolor="#d35400", style=dashed'
        text = label or shown.get((c.cluster, c.source, c.destination)) or str(c.connections)
        body.append(f"  {_node_id(c.cluster, c.source, multi)} -> "
                    f"{_node_id(c.cluster, c.destination, multi)} "
                    f"[label={_quote(text)}{style}]")
    return _graph(title, body)


def exposure_lines(report: ExposureReport) -> list[tuple[tuple[str, str, str], ExposureLine]]:
    """Each exposure line keyed by its edge (cluster, source node, destination node)."""
    out = []
    for x in report.lines:
        node = x.node or x.peer
        src, dst = (node, x.workload) if x.direction == INGRESS else (x.workload, node)
        out.append(((x.cluster, src, dst), x))
    return out


def _exposure_edges(report: ExposureReport) -> tuple[dict[str, str], dict[tuple[str, str, str],
                                                                           Connection]]:
    """Nodes for pods not in the input (node id -> text), and the edges of the lines."""
    unknown = {x.node or x.peer: x.peer for x in report.lines if not x.peer.endswith(EXTERNAL)}
    edges = {key: Connection(key[0], key[1], key[2], x.openness.connections)
             for key, x in exposure_lines(report)}
    return unknown, edges


_DIFF_STYLE = {ADDED: 'color="#2e8b57", fontcolor="#2e8b57", penwidth=2',
               REMOVED: 'color="#c0392b", fontcolor="#c0392b", style=dashed',
               "changed": 'color="#d68910", fontcolor="#d68910"'}


def diff_dot(changes: Sequence[ConnectionChange], title: str = "connectivity diff") -> str:
    multi = _multi(changes)
    body = _nodes(changes, multi)
    for c in changes:
        label = f"{c.kind}: {c.old} -> {c.new}" + (f" on {c.network_label}" if c.network else "")
        body.append(f"  {_node_id(c.cluster, c.source, multi)} -> "
                    f"{_node_id(c.cluster, c.destination, multi)} "
                    f"[label={_quote(label)}, {_DIFF_STYLE[c.kind]}]")
    return _graph(title, body)


def write_svg(dot_text: str, path: str, timeout: float = 120) -> None:
    """Render ``dot_text`` to ``path`` with Graphviz; ``GraphvizMissing`` without it."""
    binary = shutil.which("dot")
    if binary is None:
        raise GraphvizMissing("Graphviz is not installed (no `dot` on the PATH)")
    subprocess.run([binary, "-Tsvg", "-o", path], input=dot_text.encode(), check=True,
                   capture_output=True, timeout=timeout)


# -- the summary: one screen ------------------------------------------------------------------

SUMMARY_ROWS = 12  # exposed workloads and namespaces shown in full; the rest counted


def fit(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut in the middle (names differ at both
    ends: namespace and workload), never mid-line elsewhere."""
    if len(text) <= width:
        return text
    keep = max(1, width - 1)
    return text[: keep - keep // 2] + "…" + text[len(text) - keep // 2:]


def _wrap(prefix: str, items: list[str], width: int) -> list[str]:
    """``prefix`` then ``items`` joined by ``; ``, wrapped at item boundaries (never inside
    a name) under an indent as wide as the prefix."""
    lines, line = [], prefix
    indent = " " * len(prefix)
    for k, item in enumerate(items):
        piece = item + (";" if k < len(items) - 1 else "")
        if line.strip() and len(line) + 1 + len(piece) > width and line != prefix:
            lines.append(line.rstrip())
            line = indent
        line += ("" if line in (prefix, indent) else " ") + fit(piece, width - len(indent))
    lines.append(line.rstrip())
    return lines


def _prose(text: str, width: int) -> list[str]:
    """Our own sentences, wrapped between words."""
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)


def _flow_text(flow: Flow) -> str:
    conns = str(flow.connections)
    return conns if flow.alike else f"up to {conns}"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def summary_text(summary: ConnectivitySummary, width: int = 80) -> list[str]:
    """The summary as lines of at most ``width`` characters (names cut in the middle
    with an ellipsis when a line could not hold them)."""
    width = max(40, width)
    multi = len({ns.cluster for ns in summary.namespaces}) > 1
    out = _prose(f"{_plural(summary.connections, 'allowed connection')} between "
                 f"{_plural(summary.workloads, 'workload')} in "
                 f"{_plural(len(summary.namespaces), 'namespace')}. Every line: --full. One "
                 "workload: --focus-workload NS/NAME. Why: --explain.", width) + [""]
    open_spaces = [ns for ns in summary.namespaces if ns.unrestricted]
    folded = {(ns.cluster, ns.namespace) for ns in open_spaces}
    if open_spaces:
        names = [f"{ns.cluster}: {ns.namespace}" if multi else ns.namespace for ns in open_spaces]
        count = sum(len(ns.workloads) for ns in open_spaces)
        out += _prose(f"Open to everything - no policy restricts them, every workload reachable "
                      f"from any address and each other ({_plural(len(open_spaces), 'namespace')}, "
                      f"{_plural(count, 'workload')}):", width)
        out += _wrap("  ", names, width) + [""]
    for title, items in (("Open to outside addresses", summary.exposed),
                         ("Reached through the ingress controller", summary.routed)):
        shown_items = [x for x in items
                       if (x.cluster, x.workload.split("/", 1)[0]) not in folded]
        if not shown_items:
            continue
        out.append(f"{title}{', besides those' if open_spaces else ''}:")
        names = [(f"{x.cluster}: " if multi else "") + x.workload.removesuffix("[Deployment]")
                 for x in shown_items]
        column = min(max(len(n) for n in names), width - 26)
        for name, item in list(zip(names, shown_items, strict=True))[:SUMMARY_ROWS]:
            where = "" if title.startswith("Reached") else (
                " from " + ", ".join(item.sources) if item.sources != ("0.0.0.0-255.255.255.255",)
                else "")
            out.append(fit(f"  {fit(name, column):<{column}}  {item.connections}{where}", width))
        if len(shown_items) > SUMMARY_ROWS:
            out.append(f"  ... and {len(shown_items) - SUMMARY_ROWS} more (--full lists them)")
        out.append("")
    spaces = [ns for ns in summary.namespaces if (ns.cluster, ns.namespace) not in folded]
    if not spaces:
        return out[:-1] if out and not out[-1] else out
    out += _prose("Per namespace: the pairs open within it; from/to: how many of its workloads "
                  "are reached from / reach each peer, with the connections:", width)
    for ns in spaces[:SUMMARY_ROWS]:
        head = f"{ns.cluster}: {ns.namespace}" if multi else ns.namespace
        out.append(fit(f"  {head} — {_plural(len(ns.workloads), 'workload')}", width))
        n = len(ns.workloads)
        if ns.within.pairs:
            scope = ("every pair" if ns.open_within
                     else f"{ns.within.pairs:,} of {n * (n - 1):,} pairs")
            out.append(fit(f"    within:  {scope}: {_flow_text(ns.within)}", width))
        elif n > 1:
            out.append("    within:  no pair open")
        # "from X: N" = N of this namespace's workloads are reached from X
        ins = []
        if ns.from_outside.pairs:
            ins.append(f"outside: {len(ns.from_outside.workloads)} (above)")
        if ns.from_ingress.pairs:
            ins.append(f"ingress controller: {len(ns.from_ingress.workloads)} (above)")
        ins += [f"{other}: {len(flow.workloads)} ({_flow_text(flow)})"
                for other, flow in sorted(ns.from_namespaces.items())]
        # "to X: N" = N of this namespace's workloads reach X
        outs = []
        if ns.to_outside.pairs:
            outs.append(f"outside: {len(ns.to_outside.workloads)} ({_flow_text(ns.to_outside)})")
        outs += [f"{other}: {len(flow.workloads)} ({_flow_text(flow)})"
                 for other, flow in sorted(ns.to_namespaces.items())]
        if ins:
            out += _wrap("    from:    ", ins, width)
        if outs:
            out += _wrap("    to:      ", outs, width)
    if len(spaces) > SUMMARY_ROWS:
        out.append(f"  ... and {len(spaces) - SUMMARY_ROWS} more namespaces "
                   "(--focus-workload NS/NAME, or give a namespace's folder)")
    return out


# -- the overview picture: a whole dump in one readable drawing ---------------------------------

DRAW_AT_MOST = (30, 80)  # workloads, connections: beyond either, --svg draws the overview
FOCUS_PER_NAMESPACE = 8  # exposed workloads drawn on their own; the rest counted in the namespace


def too_large_to_draw(connections: Sequence[Connection]) -> bool:
    peers = {(c.cluster, p) for c in connections for p in (c.source, c.destination)}
    return len(peers) > DRAW_AT_MOST[0] or len(connections) > DRAW_AT_MOST[1]


def overview_dot(summary: ConnectivitySummary, title: str = "allowed connections, per namespace"
                 ) -> str:
    """One box per namespace holding one node for all its workloads (with what is open
    within it) and a node of its own for each workload outside addresses or the ingress
    controller reach - the focus chosen for you (at most ``FOCUS_PER_NAMESPACE`` each); the
    namespaces no policy restricts folded into one node; one edge per pair of nodes,
    labelled with the connections; exposures thick and red. Outside and the ingress
    controller stand in the first column, away from the namespace titles."""
    multi = len({ns.cluster for ns in summary.namespaces}) > 1
    open_spaces = [ns for ns in summary.namespaces if ns.unrestricted]
    folded = {(ns.cluster, ns.namespace) for ns in open_spaces}
    exposed = [x for x in (*summary.exposed, *summary.routed)
               if (x.cluster, x.workload.split("/", 1)[0]) not in folded]
    focus: dict[tuple[str, str], list[str]] = defaultdict(list)
    for x in exposed:
        key = (x.cluster, x.workload.split("/", 1)[0])
        if x.workload not in focus[key] and len(focus[key]) < FOCUS_PER_NAMESPACE:
            focus[key].append(x.workload)
    body = ['  graph [nodesep=0.5, ranksep=1.6, newrank=true]']
    routed = any((x.cluster, x.workload.split("/", 1)[0]) not in folded for x in summary.routed)
    body.append('  subgraph sources { rank=min; "outside" [shape=box, style="filled", '
                'fillcolor="#fde3e1", color="#c0392b", label="outside addresses"]'
                + ('; "ingress" [shape=cds, fillcolor="#fff1c2", color="#b58900", '
                   'label="ingress controller"]' if routed else "") + " }")
    node_of: dict[tuple[str, str], str] = {}
    if open_spaces:
        names = [f"{ns.cluster}: {ns.namespace}" if multi else ns.namespace for ns in open_spaces]
        count = sum(len(ns.workloads) for ns in open_spaces)
        text = "\n".join([f"{_plural(len(open_spaces), 'namespace')}, {_plural(count, 'workload')}",
                          "no policy restricts them:",
                          "open to everything", *names[:8]]
                         + ([f"... and {len(names) - 8} more"] if len(names) > 8 else []))
        body.append(f'  "open" [shape=folder, style="filled", fillcolor="#fde3e1", color="#c0392b", '
                    f"label={_quote(text)}]")
        body.append('  "outside" -> "open" [label="All Connections", color="#d62728", '
                    'fontcolor="#d62728", penwidth=2.2]')
        node_of.update({key: "open" for key in folded})
    for k, ns in enumerate(s for s in summary.namespaces if (s.cluster, s.namespace) not in folded):
        name = f"{ns.cluster}: {ns.namespace}" if multi else ns.namespace
        group = f"ns:{ns.cluster}:{ns.namespace}"
        node_of[(ns.cluster, ns.namespace)] = group
        n = len(ns.workloads)
        lines = [f"{n} workload{'s' if n != 1 else ''}"]
        if ns.open_within:
            lines.append(f"open to each other: {_flow_text(ns.within)}")
        elif ns.within.pairs:
            lines.append(f"{ns.within.pairs} pairs open within")
        drawn = focus.get((ns.cluster, ns.namespace), [])
        more = len({x.workload for x in exposed
                    if (x.cluster, x.workload.split("/", 1)[0]) == (ns.cluster, ns.namespace)}) - len(drawn)
        if more > 0:
            lines.append(f"{more} more reached from outside (--full)")
        body.append(f"  subgraph cluster_{k} {{")
        body.append(f'    label={_quote("namespace " + name)}; labeljust=l; style="rounded,filled"; '
                    'fillcolor="#f4f6fa"; color="#8a97ad"; fontname="Helvetica"')
        (only,) = ns.workloads if n == 1 else (None,)
        if only is not None and only in drawn:  # its one workload stands for it
            node_of[(ns.cluster, ns.namespace)] = f"{ns.cluster}|{only}"
        else:
            body.append(f"    {_quote(group)} [shape=folder, label={_quote(chr(10).join(lines))}]")
        for workload in drawn:
            label = workload.split("/", 1)[1].replace("[", "\n[")
            body.append(f"    {_quote(ns.cluster + '|' + workload)} [label={_quote(label)}, "
                        'color="#c0392b"]')
        body.append("  }")
    drawn_nodes = {(c, w) for (c, _), ws in focus.items() for w in ws}
    red = 'color="#d62728", fontcolor="#d62728", penwidth=2.2'
    for x in summary.exposed:
        if (x.cluster, x.workload) in drawn_nodes:
            body.append(f'  "outside" -> {_quote(x.cluster + "|" + x.workload)} '
                        f"[label={_quote(str(x.connections))}, {red}]")
    for x in summary.routed:
        if (x.cluster, x.workload) in drawn_nodes:
            body.append(f'  "ingress" -> {_quote(x.cluster + "|" + x.workload)} '
                        f'[label={_quote(str(x.connections))}, color="#b58900", fontcolor="#b58900"]')
    flows: dict[tuple[str, str], list[Flow]] = defaultdict(list)
    for ns in summary.namespaces:
        here = node_of[(ns.cluster, ns.namespace)]
        for other, flow in ns.to_namespaces.items():
            there = node_of.get((ns.cluster, other))
            if there is not None and there != here:
                flows[(here, there)].append(flow)
        if ns.to_outside.pairs and here != "open":
            text = f"{len(ns.to_outside.workloads)} out: {_flow_text(ns.to_outside)}"
            body.append(f'  {_quote(here)} -> "outside" [label={_quote(text)}, style=dashed, '
                        'constraint=false, color="#95a5a6", fontcolor="#7f8c8d"]')
    for (here, there), parts in sorted(flows.items()):
        union = parts[0].connections
        for part in parts[1:]:
            union = union.union(part.connections)
        alike = len({k for part in parts for k in part.kinds}) == 1
        text = str(union) if alike else f"up to {union}"
        body.append(f"  {_quote(here)} -> {_quote(there)} [label={_quote(text)}]")
    return _graph(title, body)
