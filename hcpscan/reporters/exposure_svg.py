"""A picture of one hosted cluster's ways in from outside, as inline SVG.

Three columns: outside addresses, the layer that opens a way in (NodePort,
LoadBalancer, Route, with the entry port) and the control-plane workloads
behind it (with the pod port). An arrow's colour says who gets through every
layer: red when addresses beyond the worker subnets do, green when only the
worker subnets do, grey dashes when no outside address does. Everything is
drawn from :class:`~hcpscan.findings.model.HostedClusterExposure`; no script,
no external reference, ids numbered per picture so several can share a page.
"""

from __future__ import annotations

from dataclasses import dataclass

from hcpscan.findings.model import HostedClusterExposure, WayIn
from hcpscan.reporters.markup import escape_html as esc
from hcpscan.reporters.markup import shorten

WIDTH, ROW, TOP = 1100, 58, 44
OUTSIDE_X, OUTSIDE_W = 12, 168
WAY_X, WAY_W = 446, 270
TARGET_X, TARGET_W = 790, 296
BOX_H = 44
RED, GREEN, GREY = "#c81e1e", "#15803d", "#9ca3af"


@dataclass(frozen=True, slots=True)
class Verdict:
    colour: str
    label: str  # what the arrow from outside says
    css: str  # class name for the legend and tables


def verdict(way: WayIn) -> Verdict:
    if way.beyond_workers:
        return Verdict(RED, way.beyond_workers, "open")
    if way.admitted:
        return Verdict(GREEN, f"only {way.admitted}", "workers")
    blocked = way.blocked_by.split(":", 1)[0] if way.blocked_by else "every layer"
    return Verdict(GREY, f"blocked by {blocked}", "blocked")


def entry(way: WayIn) -> str:
    port = way.entry_port if way.entry_port is not None else "node port (unallocated)"
    return f"{way.layer} :{port}"


def ordered_ways(exposure: HostedClusterExposure) -> list[WayIn]:
    """Grouped by the workloads behind them, so each workload box sits beside its ways."""
    return sorted(exposure.ways_in, key=lambda w: (w.targets, w.pod_port, w.layer,
                                                   w.entry_port or 0, w.via.name))


def _text(x: float, y: float, text: str, limit: int, css: str = "", anchor: str = "start") -> str:
    cls = f' class="{css}"' if css else ""
    end = ' text-anchor="end"' if anchor == "end" else ""
    return (f'<text x="{x:.0f}" y="{y:.0f}"{cls}{end}><title>{esc(text)}</title>'
            f"{esc(shorten(text, limit))}</text>")


def _label(x: float, y: float, v: Verdict) -> str:
    """An arrow's label on a light plate: the neighbouring arrows fan out under it and
    would otherwise run through its letters."""
    width = 7.2 * len(shorten(v.label, 34)) + 8  # 12px semi-bold, generously
    return (f'<rect x="{x - width + 4:.0f}" y="{y - 13:.0f}" width="{width:.0f}" height="17" rx="3" '
            f'fill="#ffffff" fill-opacity="0.9"/>' + _text(x, y, v.label, 34, f"edge {v.css}", "end"))


def _box(x: int, y: float, w: int, h: float, colour: str, lines: list[tuple[str, int, str]]) -> str:
    parts = [f'<rect x="{x}" y="{y:.0f}" width="{w}" height="{h:.0f}" rx="6" fill="#ffffff" '
             f'stroke="{colour}" stroke-width="2"/>']
    for i, (text, limit, css) in enumerate(lines):
        parts.append(_text(x + 10, y + 18 + 16 * i, text, limit, css))
    return "".join(parts)


def _arrow(x1: float, y1: float, x2: float, y2: float, v: Verdict, marker: str) -> str:
    dash = ' stroke-dasharray="6 5"' if v.css == "blocked" else ""
    return (f'<path d="M{x1:.0f},{y1:.0f} C{(x1 + x2) / 2:.0f},{y1:.0f} {(x1 + x2) / 2:.0f},'
            f'{y2:.0f} {x2 - 4:.0f},{y2:.0f}" fill="none" stroke="{v.colour}" stroke-width="2.5"'
            f'{dash} marker-end="url(#{marker}-{v.css})"/>')


def _markers(marker: str) -> str:
    return "<defs>" + "".join(
        f'<marker id="{marker}-{css}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        f'fill="{colour}"/></marker>'
        for css, colour in (("open", RED), ("workers", GREEN), ("blocked", GREY))) + "</defs>"


def _targets(ways: list[WayIn]) -> list[tuple[tuple[str, ...], int, float]]:
    """Each distinct workload group: (workloads, pod port, centre row)."""
    rows: dict[tuple[tuple[str, ...], int], list[int]] = {}
    for i, way in enumerate(ways):
        rows.setdefault((way.targets, way.pod_port), []).append(i)
    return [(targets, port, sum(idx) / len(idx)) for (targets, port), idx in rows.items()]


def _row_y(row: float) -> float:
    return TOP + row * ROW


def exposure_svg(exposure: HostedClusterExposure, number: int) -> str:
    """The picture; ``number`` keeps marker ids apart between pictures of one page."""
    ways = ordered_ways(exposure)
    rows = max(1, len(ways))
    height = TOP + rows * ROW + 8
    marker = f"hcp{number}"
    hc = exposure.hosted_cluster
    name = f"{hc.namespace}/{hc.name}"
    workers = ", ".join(exposure.workers) or "unknown (no machineNetwork, no worker_cidrs)"
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="exposure" viewBox="0 0 {WIDTH} '
             f'{height}" width="100%" role="img" aria-labelledby="{marker}-t">'
             f'<title id="{marker}-t">Ways in from outside to {esc(hc.kind)} {esc(name)}</title>',
             _markers(marker),
             _text(OUTSIDE_X, 20, "Outside addresses", 40, "col"),
             _text(WAY_X, 20, "Way in (layer, entry port)", 40, "col"),
             _text(TARGET_X, 20, f"Control plane {exposure.control_plane_namespace}", 44, "col")]
    outside_h = rows * ROW - (ROW - BOX_H)
    parts.append(_box(OUTSIDE_X, TOP, OUTSIDE_W, outside_h, "#374151",
                      [("Outside the cluster", 22, "strong"), (f"workers: {workers}", 24, "small")]))
    if not ways:
        parts.append(_text(WAY_X, TOP + 26, "No NodePort, LoadBalancer or Route leads into the "
                                            "control plane", 90, "strong"))
    labels = []  # drawn after every arrow, so their halo masks the arrows crossing them
    for i, way in enumerate(ways):
        v = verdict(way)
        y = _row_y(i)
        kind = "Route" if way.layer == "Route" else "Service"
        parts.append(_arrow(OUTSIDE_X + OUTSIDE_W, TOP + outside_h / 2, WAY_X, y + BOX_H / 2, v, marker))
        labels.append(_label(WAY_X - 10, y + BOX_H / 2 - 7, v))
        parts.append(_box(WAY_X, y, WAY_W, BOX_H, v.colour,
                          [(entry(way), 38, "strong"), (f"{kind} {way.via.name}", 40, "small")]))
    for targets, port, row in _targets(ways):
        y = _row_y(row)
        for i, way in enumerate(ways):
            if (way.targets, way.pod_port) == (targets, port):
                parts.append(_arrow(WAY_X + WAY_W, _row_y(i) + BOX_H / 2, TARGET_X, y + BOX_H / 2,
                                    verdict(way), marker))
        shown = ", ".join(t.split("/", 1)[-1] for t in targets) or "(no workload)"
        parts.append(_box(TARGET_X, y, TARGET_W, BOX_H, "#374151",
                          [(shown, 40, "strong"), (f"pod port {port}", 40, "small")]))
    parts += labels
    parts.append("</svg>")
    return "".join(parts)
