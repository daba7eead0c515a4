"""The path graph: hops a connection takes, each decided by the exact engines; networkx's form.

Nodes are the elements traffic passes: address ranges (the workers' machine network,
outside clients), the perimeter (``--firewall``, the security groups of the manifests),
the way in (a NodePort or LoadBalancer Service, a Route), the router shard that serves a
Route (its IngressController), ClusterIP Services a workload sends through (the DNS
Service, ``default/kubernetes``), workloads, and named destinations (``dns``,
``outside``, ``management-kas``, the proxy at its host and port). An edge is one hop for one question — from
an origin (a range or a workload) on one protocol/port — carrying whether the layer
that decides it allows it, what it says and where it is written (file:line). The
verdicts come from ``ReachabilityGraph`` (perimeter rules, Service source ranges,
AdminNetworkPolicy / NetworkPolicy / BaselineAdminNetworkPolicy, EgressFirewall, UDN);
A path question is answered as networkx answers it over the question's own edges: an
open path from origin to target (only edges of that origin and connection that allow;
``nx.shortest_path``'s path), else the first simple path up to its first blocking hop
(``nx.all_simple_edge_paths``' first). A scan asks tens of thousands of them, so the
search runs over plain dicts (``_answer_on_hops``), held to networkx's own answers by
property tests (``tests/analysis/reachability/test_path_search.py``,
``test_answers_stay_exact.py``); the networkx MultiDiGraph of every hop asked is built
when it is read (``PathGraph.graph``: ``hcpscan connectivity --paths-out``, Python
callers) and written with networkx's own writers (node-link JSON, GraphML) and as
Graphviz DOT. The graph grows with the questions asked (the required-flow rules,
``hcpscan connectivity --path``), so a scan whose rules ask none records none.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hcpscan.analysis.reachability.answers import (
    PERIMETER,
    POD_NETWORK,
    SERVICE,
    Evidence,
    LayerSay,
    Place,
    Reach,
)
from hcpscan.analysis.reachability.routers import serving_controllers

if TYPE_CHECKING:
    import networkx as nx

    from hcpscan.inventory import Inventory

RANGE, PERIMETER_NODE, WAY, WORKLOAD, DESTINATION = "range", "perimeter", "way", "workload", "destination"
ROUTER_NODE, CLUSTER_IP = "router", "cluster-ip"  # a Route's router shard; a ClusterIP Service
NO_WAY = "publishing"  # the layer of a hop that does not exist: no Service or Route exposes the port
ROUTER = "router"  # the layer of the hop a Route takes into the router that serves it


class Hop(LayerSay):
    """One step of a path and the say of the layer that decides it: a frozen value,
    equal and hashed by (source, target, layer, allows, summary, path, line).

    ``at``: the place of the object that decided, found when ``path`` or ``line`` is first
    read (instead of ``path`` and ``line``): the required flows record tens of thousands
    of hops from evidence whose places findings show for a few, and finding a place
    reads its document again."""

    __slots__ = ("source", "target", "layer", "allows", "summary", "_path", "_line", "_at")
    source: str
    target: str
    layer: str
    allows: bool
    summary: str
    _path: str | None
    _line: int | None
    _at: Place | None

    def __init__(self, source: str, target: str, layer: str, allows: bool, summary: str,
                 path: str | None = None, line: int | None = None, *,
                 at: Place | None = None) -> None:
        if at is not None and (path is not None or line is not None):
            raise TypeError("Hop: a place is given either as at= or as path and line, not both")
        put = object.__setattr__
        put(self, "source", source)
        put(self, "target", target)
        put(self, "layer", layer)
        put(self, "allows", allows)
        put(self, "summary", summary)
        put(self, "_path", path)
        put(self, "_line", line)
        put(self, "_at", at)

    @property
    def path(self) -> str | None:
        return self._at.path if self._at is not None else self._path

    @property
    def line(self) -> int | None:
        return self._at.line if self._at is not None else self._line

    def _key(self) -> tuple[str, str, str, bool, str, str | None, int | None]:
        return (self.source, self.target, self.layer, self.allows, self.summary, self.path,
                self.line)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key())

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Hop, self._key())

    def __repr__(self) -> str:
        return (f"Hop(source={self.source!r}, target={self.target!r}, layer={self.layer!r}, "
                f"allows={self.allows!r}, summary={self.summary!r}, path={self.path!r}, "
                f"line={self.line!r})")

    def __str__(self) -> str:
        return f"{self.source} → {self.target}: {self.said()}"

    def to_json(self) -> dict[str, Any]:
        return {"from": self.source, "to": self.target, **self.said_json()}


@dataclass(frozen=True, slots=True)
class PathAnswer:
    """Whether ``origin`` reaches ``target`` on ``protocol``/``port``: the open path's hops,
    or (blocked) the hops of the first way up to the first one that blocks."""

    origin: str
    target: str
    protocol: str
    port: int
    open: bool
    hops: tuple[Hop, ...]
    # blocked at a perimeter whose deciding input is absent (a security group attached
    # but not described): why the answer is not known, as the flow says
    unknown: str = ""

    @property
    def blocked_by(self) -> Hop | None:
        return None if self.open else next((h for h in self.hops if not h.allows), None)

    @property
    def connection(self) -> str:
        return f"{self.protocol} {self.port}"

    def lines(self) -> list[str]:
        head = (f"{self.origin} → {self.target} {self.connection}: "
                + ("open" if self.open else f"unknown ({self.unknown})" if self.unknown else "blocked"))
        return [head, *(f"  {'✓' if h.allows else '✗'} {h}" for h in self.hops)]

    def to_json(self) -> dict[str, Any]:
        blocked = self.blocked_by
        return {"from": self.origin, "to": self.target, "protocol": self.protocol,
                "port": self.port, "open": self.open, "hops": [h.to_json() for h in self.hops],
                "blocked_by": blocked.to_json() if blocked else None,
                **({"unknown": self.unknown} if self.unknown else {})}


class PathGraph:
    """Hops keyed by origin and connection, as a networkx MultiDiGraph when read."""

    def __init__(self, inventory: Inventory | None = None) -> None:
        # where Routes and their routers are read (the router shard becomes a node)
        self.inventory = inventory
        self._routers: dict[tuple[str, str], Hop] = {}
        # Nodes (name -> kind) and hops in the order they came, kept compact: a scan asks
        # tens of thousands of flows and never exports them, so the networkx graph (a dict
        # of attributes per edge) is built only when it is read (``graph``, the writers).
        self._nodes: dict[str, str | None] = {}  # None: added by a hop, with no kind
        self._edges: list[tuple[str, str, int, Hop]] = []  # (origin, protocol, port, hop)
        self._graph: nx.MultiDiGraph | None = None
        # (origin, protocol, port) -> its hops by (source, target, layer, summary), so a
        # question reads only its own edges (the answer stays linear in the path however
        # many questions share the nodes) and a hop is recorded once; the networkx key
        # "origin|protocol/port|layer|summary" names the same hop (no origin, protocol or
        # layer holds a '|')
        self._asked: dict[tuple[str, str, int], dict[tuple[str, str, str, str], Hop]] = {}

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The hops as a networkx MultiDiGraph (built on first read, then kept in step)."""
        if self._graph is None:
            import networkx as nx  # only once the graph is read: a scan never loads it

            self._graph = nx.MultiDiGraph()
            for name, kind in self._nodes.items():
                if kind is None:
                    self._graph.add_node(name)
                else:
                    self._graph.add_node(name, kind=kind)
            for edge in self._edges:
                self._add_to_graph(self._graph, *edge)
        return self._graph

    @staticmethod
    def _add_to_graph(graph: nx.MultiDiGraph, origin: str, protocol: str, port: int, hop: Hop) -> None:
        graph.add_edge(hop.source, hop.target, key=f"{origin}|{protocol}/{port}|{hop.layer}|{hop.summary}",
                       origin=origin, protocol=protocol, port=port, layer=hop.layer, allows=hop.allows,
                       summary=hop.summary, path=hop.path or "", line=hop.line or 0)

    def _node(self, name: str, kind: str) -> str:
        if name not in self._nodes:
            self._nodes[name] = kind
            if self._graph is not None:
                self._graph.add_node(name, kind=kind)
        return name

    def _edge(self, origin: str, protocol: str, port: int, hop: Hop) -> None:
        asked = self._asked.setdefault((origin, protocol, port), {})
        key = (hop.source, hop.target, hop.layer, hop.summary)
        if key in asked:
            return
        asked[key] = hop
        self._nodes.setdefault(hop.source, None)
        self._nodes.setdefault(hop.target, None)
        self._edges.append((origin, protocol, port, hop))
        if self._graph is not None:
            self._add_to_graph(self._graph, origin, protocol, port, hop)

    # -- adding what the engines decided ------------------------------------------------

    def add_reach(self, reach: Reach, origin: str, target: str, ways_only: bool) -> None:
        """Every way ``reach`` found (only ways in from outside with ``ways_only``: pod
        IPs are not routable from outside the cluster) as hops origin → ... → target."""
        self._node(origin, RANGE if reach.source.is_external else WORKLOAD)
        self._node(target, WORKLOAD)
        ways = [p for p in reach.paths if not (ways_only and p.via == POD_NETWORK)]
        if not ways:
            self._edge(origin, reach.protocol, reach.port, Hop(
                origin, target, NO_WAY, False,
                f"no NodePort/LoadBalancer Service or Route exposes port {reach.port} of {target}"))
            return
        for way in ways:
            at = origin
            evidence = sorted(way.evidence, key=_physical_order)
            for i, e in enumerate(evidence):
                last = i == len(evidence) - 1
                nxt = target if last else self._node(*_element(e, way.via))
                self._edge(origin, reach.protocol, reach.port, _hop(at, nxt, e))
                at = nxt
                if e.layer == SERVICE and not last and way.via.startswith("Route "):
                    # the router shard that serves the Route is a hop of its own: the
                    # NetworkPolicy after it sees the router, not the client
                    hop = self._router_hop(way.via, at, reach.target.cluster)
                    self._node(hop.target, ROUTER_NODE)
                    self._edge(origin, reach.protocol, reach.port, hop)
                    at = hop.target

    def _router_hop(self, route: str, at: str, cluster: str) -> Hop:
        """The hop from a Route into the router that serves it: the IngressControllers
        whose namespaceSelector and routeSelector admit it (the shard), with the first
        one's place; the cluster's router when the input holds none that admits it."""
        key = (cluster, route)
        if key not in self._routers:
            namespace, _, name = route.removeprefix("Route ").partition("/")
            found = self.inventory.get("Route", namespace, name, cluster) if self.inventory else None
            serving = [] if found is None or self.inventory is None else serving_controllers(
                self.inventory, cluster, self.inventory.namespace_labels(namespace, cluster),
                dict(found.labels))
            if serving:
                names = ", ".join(f"{c.namespace}/{c.name}" for c in serving)
                where = self.inventory.locate(serving[0]) if self.inventory else None
                self._routers[key] = Hop(
                    "", f"router IngressController {names}", ROUTER, True,
                    f"IngressController {names} serves {route} (its namespaceSelector and "
                    "routeSelector admit it)", where.path if where else None,
                    where.line if where else None)
            else:
                self._routers[key] = Hop("", "router (openshift-ingress)", ROUTER, True,
                                         f"the cluster's router serves {route} (no IngressController "
                                         "of the input admits it: the default one is taken)")
        hop = self._routers[key]
        return Hop(at, hop.target, hop.layer, hop.allows, hop.summary, hop.path, hop.line)

    def add_egress(self, origin: str, destination: str, protocol: str, port: int,
                   allows: bool, evidence: Iterable[Evidence], summary: str,
                   explicit: bool = False, through: Hop | None = None) -> PathAnswer:
        """A workload's way out to a named destination: one hop, decided by its egress
        (NetworkPolicy tiers, EgressFirewall); the evidence's first blocking (or
        deciding) item names the object; ``explicit``: ``summary`` says what it decides.
        ``through``: the ClusterIP Service the workload sends to (its ``target`` the
        Service's node), a hop of its own before the one the egress policies decide
        (they see the endpoint the Service's DNAT chose). Returns ``answer`` for the
        connection: read off the hops just recorded when they are its only ones (each of a
        fleet's control-plane workloads asks its DNS flow once: tens of thousands)."""
        fresh = (origin, protocol, port) not in self._asked
        self._node(origin, WORKLOAD)
        self._node(destination, DESTINATION)
        entry = None
        if through is not None:
            self._node(through.target, CLUSTER_IP)
            entry = Hop(origin, through.target, through.layer, through.allows, through.summary,
                        through.path, through.line)
            self._edge(origin, protocol, port, entry)
        items = list(evidence)
        deciding = (next((e for e in items if e.allows == allows and e.path), None)
                    or next((e for e in items if e.allows == allows), None)) if items else None
        layer = deciding.layer if deciding else "network-policy"
        text = summary if explicit or not items else "; ".join(e.summary for e in items) or summary
        last = Hop(through.target if through is not None else origin, destination, layer, allows,
                   text, deciding.path if deciding else None, deciding.line if deciding else None)
        self._edge(origin, protocol, port, last)
        if fresh and origin != destination:
            # the connection's hops are these: ``answer`` would take the one hop, or the
            # two legs through the Service (``_through_one_node``)
            if entry is None:
                return PathAnswer(origin, destination, protocol, port, last.allows, (last,))
            if entry.target not in (origin, destination):
                if entry.allows and last.allows:
                    return PathAnswer(origin, destination, protocol, port, True, (entry, last))
                return PathAnswer(origin, destination, protocol, port, False,
                                  (entry,) if not entry.allows else (entry, last))
        return self.answer(origin, destination, protocol, port)

    def record(self, origin: str, protocol: str, port: int, hop: Hop) -> None:
        """A hop decided elsewhere (the HostedCluster's declared way, judged from its spec)."""
        for node in (hop.source, hop.target):
            self._node(node, RANGE if node == origin else
                       PERIMETER_NODE if node.startswith("perimeter ") else
                       ROUTER_NODE if node.startswith("router ") else WAY)
        self._edge(origin, protocol, port, hop)

    # -- the questions ---------------------------------------------------------------------

    def answer(self, origin: str, target: str, protocol: str, port: int) -> PathAnswer:
        """An open path origin → target for this connection, else the first way's hops up
        to its first blocking hop (over the edges of this origin and connection)."""
        hops = list(self._asked.get((origin, protocol, port), {}).values())
        if origin != target and all(h.source == origin for h in hops):
            # every hop leaves the origin (a workload's egress, decided in one hop): the
            # paths to ``target`` are its hops there, and the search would pick the first
            # that allows, else the first; thousands of egress answers per large scan
            # need no graph built for that
            there = [h for h in hops if h.target == target]
            chosen = next((h for h in there if h.allows), there[0] if there else None)
            return PathAnswer(origin, target, protocol, port, chosen is not None and chosen.allows,
                              (chosen,) if chosen is not None else ())
        through = _through_one_node(origin, target, hops)
        if through is not None:  # a workload's egress through a ClusterIP Service
            return PathAnswer(origin, target, protocol, port, *through)
        return _answer_on_hops(origin, target, protocol, port, hops)

    # -- export ----------------------------------------------------------------------------

    def node_link(self) -> dict[str, Any]:
        import networkx as nx

        return nx.node_link_data(self.graph, edges="edges")

    def write(self, target: Path) -> None:
        """Write the graph as node-link JSON (.json), GraphML (.graphml) or DOT (.dot/.gv)."""
        suffix = target.suffix.lower()
        if suffix == ".json":
            target.write_text(json.dumps(self.node_link(), indent=2, default=str) + "\n")
        elif suffix == ".graphml":
            import networkx as nx

            nx.write_graphml(self.graph, target)
        elif suffix in (".dot", ".gv"):
            target.write_text(self.dot())
        else:
            raise ValueError(f"{target}: write .json (node-link), .graphml or .dot")

    def dot(self) -> str:
        lines = ["digraph paths {", "  rankdir=LR;", "  node [shape=box, fontsize=10];"]
        for node, data in self.graph.nodes(data=True):
            shape = {RANGE: "ellipse", DESTINATION: "ellipse", PERIMETER_NODE: "hexagon",
                     ROUTER_NODE: "house", CLUSTER_IP: "diamond"}.get(data.get("kind", ""), "box")
            lines.append(f"  {_quote(node)} [shape={shape}];")
        for u, v, d in self.graph.edges(data=True):
            colour = "darkgreen" if d["allows"] else "red"
            label = f"{d['protocol']} {d['port']} {d['layer']}"
            lines.append(f"  {_quote(u)} -> {_quote(v)} [color={colour}, label={_quote(label)}, "
                         f"fontsize=8];")
        return "\n".join([*lines, "}"]) + "\n"


def _answer_on_hops(origin: str, target: str, protocol: str, port: int,
                    hops: list[Hop]) -> PathAnswer:
    """The answer over one question's hops: a shortest path of hops that allow (a
    search from both ends, level by level, neighbours in the order their hops came:
    the path networkx's ``shortest_path`` gives), else the first simple path in
    depth-first order, up to its first blocking hop (``all_simple_edge_paths``' first).
    Plain dicts, no graph object: a large scan asks tens of thousands of these."""
    out: dict[str, dict[str, list[Hop]]] = {}  # node -> next node -> its hops, in order
    for hop in hops:
        out.setdefault(hop.source, {}).setdefault(hop.target, []).append(hop)
        out.setdefault(hop.target, {})
    if origin not in out or target not in out:
        return PathAnswer(origin, target, protocol, port, False, ())
    opened: dict[str, dict[str, Hop]] = {node: {} for node in out}  # the first hop that allows
    into: dict[str, dict[str, Hop]] = {node: {} for node in out}
    for node, nexts in out.items():
        for nxt, there in nexts.items():
            allowing = next((h for h in there if h.allows), None)
            if allowing is not None:
                opened[node][nxt] = into[nxt][node] = allowing
    nodes = _shortest(opened, into, origin, target)
    if nodes is not None:
        return PathAnswer(origin, target, protocol, port, True,
                          tuple(opened[u][v] for u, v in zip(nodes, nodes[1:], strict=False)))
    for walk in _simple_paths(out, origin, target):
        walked: list[Hop] = []
        for hop in walk:
            walked.append(hop)
            if not hop.allows:
                return PathAnswer(origin, target, protocol, port, False, tuple(walked))
    return PathAnswer(origin, target, protocol, port, False, ())


def _through_one_node(origin: str, target: str, hops: list[Hop]
                      ) -> tuple[bool, tuple[Hop, ...]] | None:
    """The answer when every hop is origin → m or m → target for one node m, with
    hops of both (a workload's egress through the ClusterIP Service of DNS or of the
    management API server: tens of thousands per large scan); None for any other shape.
    The one path is open when both legs have a hop that allows (the first of each, as
    the search takes them), else it is the first hop of each leg up to the first that
    blocks (the depth-first walk's first path)."""
    middle = next((h.target for h in hops if h.source == origin), None)
    if middle is None or middle in (origin, target) or origin == target:
        return None
    first_in = first_out = open_in = open_out = None
    for hop in hops:
        if hop.source == origin and hop.target == middle:
            if first_in is None:
                first_in = hop
            if open_in is None and hop.allows:
                open_in = hop
        elif hop.source == middle and hop.target == target:
            if first_out is None:
                first_out = hop
            if open_out is None and hop.allows:
                open_out = hop
        else:
            return None
    if first_in is None or first_out is None:
        return None
    if open_in is not None and open_out is not None:
        return True, (open_in, open_out)
    return False, (first_in,) if not first_in.allows else (first_in, first_out)


def _shortest(forward: dict[str, dict[str, Hop]], backward: dict[str, dict[str, Hop]],
              origin: str, target: str) -> list[str] | None:
    """The nodes of a shortest path origin → target, searching from both ends (the
    smaller fringe first, forward on ties) until the searches meet; None when none."""
    if origin == target:
        return [origin]
    before: dict[str, str | None] = {origin: None}
    after: dict[str, str | None] = {target: None}
    ahead, behind = [origin], [target]
    meet: str | None = None
    while ahead and behind and meet is None:
        if len(ahead) <= len(behind):
            level, ahead = ahead, []
            for node in level:
                for nxt in forward[node]:
                    if nxt not in before:
                        ahead.append(nxt)
                        before[nxt] = node
                    if nxt in after:
                        meet = nxt
                        break
                if meet is not None:
                    break
        else:
            level, behind = behind, []
            for node in level:
                for prev in backward[node]:
                    if prev not in after:
                        after[prev] = node
                        behind.append(prev)
                    if prev in before:
                        meet = prev
                        break
                if meet is not None:
                    break
    if meet is None:
        return None
    path: list[str] = []
    at: str | None = meet
    while at is not None:
        path.append(at)
        at = before[at]
    path.reverse()
    at = after[path[-1]]
    while at is not None:
        path.append(at)
        at = after[at]
    return path


def _simple_paths(out: dict[str, dict[str, list[Hop]]], origin: str, target: str
                  ) -> Iterable[list[Hop]]:
    """Every simple path origin → target as its hops, depth first, each node's hops in
    the order of their next node's first hop, never passing through ``target``."""
    if origin == target:
        return
    on_path = {origin}
    walk: list[Hop] = []
    stack = [iter([h for hs in out[origin].values() for h in hs])]
    while stack:
        hop = next((h for h in stack[-1] if h.target not in on_path), None)
        if hop is None:
            stack.pop()
            if walk:
                on_path.discard(walk.pop().target)
            continue
        if hop.target == target:
            yield [*walk, hop]
            continue
        walk.append(hop)
        on_path.add(hop.target)
        stack.append(iter([h for hs in out[hop.target].values() for h in hs]))


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _physical_order(e: Evidence) -> int:
    """Traffic meets the perimeter, then the Service or Route, then the pod's policies."""
    return {PERIMETER: 0, SERVICE: 1}.get(e.layer, 2)


def _element(e: Evidence, via: str) -> tuple[str, str]:
    if e.layer == PERIMETER:
        # one node per way: the perimeter's verdict depends on the port the way enters on
        name = e.summary.split(":", 1)[0]
        name = name if name.startswith("perimeter") else f"perimeter {name}"
        return f"{name} → {via}", PERIMETER_NODE
    return via, WAY


def _hop(source: str, target: str, e: Evidence) -> Hop:
    return Hop(source, target, e.layer, e.allows, e.summary, at=e.at)  # its place when read
