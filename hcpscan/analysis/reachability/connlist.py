"""The connection list: every connection NetworkPolicy allows between workloads
and external ranges, in the notation of np-guard's netpol-analyzer
(``src => dst : connections``).

External ranges follow that tool's convention so outputs compare line for
line: sources are the pieces the *ingress* ipBlocks cut the address space
into, destinations the pieces the *egress* ipBlocks cut it into. The space is
IPv4, plus IPv6 when some NetworkPolicy names an IPv6 block (IPv6 ``networks``
of AdminNetworkPolicies alone do not add it: netpol-analyzer lists only IPv4
for them; the graph's queries evaluate them all the same). A workload's
connections to itself are not listed; connections of workloads whose pods fall
into several classes are the union over those classes.

With Routes or Ingresses in the input, ``{ingress-controller}`` lines say which
pod ports they send to that the pods' ingress policies admit from an ingress
controller (the OpenShift router in ``openshift-ingress``, or ingress-nginx in
``ingress-nginx``: a namespaceSelector matching either admits it).
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from hcpscan.analysis.reachability.coverage import (
    CONNECTION_LIST_EVALUATED,
    UnevaluatedKind,
    exclusion_note,
    read_unevaluated,
)
from hcpscan.analysis.reachability.dnat import DnatNote, dns_dnat_notes
from hcpscan.analysis.reachability.endpoints import EndpointClass
from hcpscan.analysis.reachability.evaluation import (
    DEFAULT_OPTIONS,
    EvaluationOptions,
    PolicyEvaluation,
)
from hcpscan.analysis.reachability.exposure import (
    NGINX,
    ROUTER,
    IngressController,
    add_controller,
    has_ways_through_controllers,
    ingress_paths,
    route_paths,
    unrouted_backends,
)
from hcpscan.analysis.reachability.model import ClusterModel, read_clusters
from hcpscan.analysis.reachability.networks import POD, Network, names_networks, primary_networks
from hcpscan.analysis.reachability.policies import EGRESS, INGRESS
from hcpscan.analysis.reachability.secondary import (
    SecondaryNetwork,
    attachments_by_workload,
    secondary_networks,
)
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.model.ipspace import IPSpace, cut
from hcpscan.model.ports import ConnectionSet

INGRESS_CONTROLLER = "{ingress-controller}"  # the peer Routes and Ingresses send from


@dataclass(frozen=True, slots=True)
class Connection:
    cluster: str
    source: str
    destination: str
    connections: ConnectionSet
    network: str = ""  # with several networks: pod-network, or the UDN's / CUDN's / NAD's name
    secondary: bool = False  # on a secondary network (a NAD's), not a primary one

    def __str__(self) -> str:
        return f"{self.source} => {self.destination} : {self.connections}"

    def to_json(self) -> dict[str, str]:
        out = {"cluster": self.cluster, "src": self.source, "dst": self.destination,
               "conn": str(self.connections)}
        if self.network:
            out["network"] = self.network
        return out


@dataclass(frozen=True, slots=True)
class Focus:
    """Which lines of the list to keep, as netpol-analyzer's focus options choose them.

    ``workloads``: lines with one of these on either side (``name`` or
    ``namespace/name``; ``ingress-controller`` is the ``{ingress-controller}`` peer);
    ``peers``: with ``workloads``, only lines between a focus workload and one of
    these; ``direction``: ``ingress`` (into the focus workloads) or ``egress`` (out
    of them); ``connection``: only pairs that allow this (protocol, port).
    """

    workloads: tuple[str, ...] = ()
    peers: tuple[str, ...] = ()
    direction: str = ""
    connection: tuple[str, int] | None = None

    def keeps(self, conn: Connection) -> bool:
        if self.connection is not None and not conn.connections.allows(*self.connection):
            return False
        return self.keeps_pair(conn.source, conn.destination)

    def keeps_pair(self, source: str, destination: str) -> bool:
        """Is the pair one of the focus workloads' (whatever its connections)?"""
        if not self.workloads:
            return True
        outgoing = self.direction != "ingress" and _named(source, self.workloads) and (
            not self.peers or _named(destination, self.peers))
        incoming = self.direction != "egress" and _named(destination, self.workloads) and (
            not self.peers or _named(source, self.peers))
        return bool(outgoing or incoming)


def _named(peer: str, names: tuple[str, ...]) -> bool:
    """Is the peer of a line (``ns/name[Kind]``, ``{ingress-controller}``) one of ``names``?"""
    if peer == INGRESS_CONTROLLER:
        return "ingress-controller" in names
    if peer.endswith("[External]"):
        return False
    full = peer.rsplit("[", 1)[0]
    return full in names or full.partition("/")[2] in names


@dataclass(slots=True)
class Section:
    """The connections inside one network (when UDNs, CUDNs or NADs split the cluster)."""

    cluster: str
    network: Network
    connections: list[Connection]
    populated: bool = True  # some workload is on the network

    def empty_note(self) -> str:
        """What an empty pod-network section says, as netpol-analyzer words it."""
        if self.network.kind != "pod":
            return ""
        return NOTHING_ALLOWED if self.populated else ALL_ON_UDN


ALL_ON_UDN = "all input workloads are configured with (C)UDN as their primary network interface"
NOTHING_ALLOWED = "All connections are not allowed for the workloads in the pod-network"


@dataclass(slots=True)
class ConnectionList:
    connections: list[Connection] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # policy-like objects of the input the list does not reflect
    unevaluated: list[UnevaluatedKind] = field(default_factory=list)
    # with user-defined primary networks: the list per network, and each workload's network
    sections: list[Section] = field(default_factory=list)
    networks: dict[tuple[str, str], Network] = field(default_factory=dict)  # (cluster, ref)
    secondary: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # NAD names
    dnat: list[DnatNote] = field(default_factory=list)  # Service ports policies never see
    workloads: set[str] = field(default_factory=set)  # every workload's ref, of every cluster

    @property
    def exclusion_note(self) -> str:
        return exclusion_note(self.unevaluated)

    def lines(self, pairs_only: bool = False) -> list[str]:
        """One line per connection; ``pairs_only``: without the connections part (for a
        list focused on one connection)."""
        return list(self.iter_lines(pairs_only))

    def iter_lines(self, pairs_only: bool = False) -> Iterator[str]:
        """``lines``, one at a time (a list with AdminNetworkPolicies runs to a million
        lines: a writer need not hold them all)."""
        multi = len({c.cluster for c in self.connections}) > 1
        # Lists repeat few connection set objects many times; they live as long as the
        # list, so their ids stay unique (hashing the value each time costs more).
        shown: dict[int, str] = {}
        for c in self.connections:
            if pairs_only:
                text = f"{c.source} => {c.destination}"
            else:
                conns = shown.get(id(c.connections))
                if conns is None:
                    conns = shown[id(c.connections)] = str(c.connections)
                text = f"{c.source} => {c.destination} : {conns}"
            yield f"{c.cluster}: {text}" if multi else text

    def focused(self, focus: Focus) -> ConnectionList:
        sections = [Section(s.cluster, s.network, [c for c in s.connections if focus.keeps(c)],
                            s.populated) for s in self.sections]
        return ConnectionList([c for c in self.connections if focus.keeps(c)],
                              self.diagnostics + self._unknown(focus), self.unevaluated, sections,
                              self.networks, self.secondary, self.dnat, self.workloads)

    def _unknown(self, focus: Focus) -> list[Diagnostic]:
        """A focus name that names no workload keeps no line: say so, or the empty list
        reads as 'this workload talks to nobody'."""
        known = [*self.workloads, INGRESS_CONTROLLER]
        return [Diagnostic("", None, f"workload {name} does not exist in the input resources, "
                           "so the list has no line for it", "warning",
                           "give namespace/name or name of a workload the input holds "
                           "(run without the --focus options to list them)")
                for name in dict.fromkeys((*focus.workloads, *focus.peers))
                if not any(_named(ref, (name,)) for ref in known)]

    def section_lines(self, pairs_only: bool = False) -> list[str]:
        """The list per network, then each workload's networks. Focused on one connection
        (``pairs_only``), only the networks where some pair allows it, and no mapping."""
        multi = len({s.cluster for s in self.sections}) > 1
        out: list[str] = []
        for section in self.sections:
            lines = ConnectionList(section.connections).lines(pairs_only)
            if not lines and pairs_only:
                continue
            head = f"{section.cluster}: " if multi else ""
            out.append(f"{head}Permitted connectivity analyzed in {section.network.title}:")
            out += (lines or [n for n in (section.empty_note(),) if n]) + [""]
        if pairs_only:
            return out
        return out + self.mapping_lines()

    def mapping_lines(self) -> list[str]:
        """Each workload's primary network and its secondary ones."""
        multi = len({cluster for cluster, _ in self.networks}) > 1
        out = ["Workload-to-Networks Mapping:"]
        for (cluster, ref), network in sorted(self.networks.items()):
            out += [f"{cluster + ': ' if multi else ''}{ref}: ",
                    f"\tPrimary Network: {network.mapping}"]
            names = self.secondary.get((cluster, ref))
            if names:
                out.append("\tSecondary Networks: " + ",".join(f"{n}[NAD]" for n in names))
        return out


def external_name(space: IPSpace) -> str:
    return f"{space.range_strings()[0]}[External]"


def connection_universe(model: ClusterModel) -> IPSpace:
    universe = IPSpace.all_v4()
    if any(6 in block.versions for block in model.policy_blocks(admin=False)):
        universe = universe.union(IPSpace.all_v6())
    return universe


@dataclass(frozen=True, slots=True)
class Cuts:
    """Address space the list's external ranges are cut from: the universe, and blocks to
    cut by besides the model's own (a diff cuts both inputs alike)."""

    universe: IPSpace | None = None  # None: ``connection_universe(model)``
    sources: tuple[IPSpace, ...] = ()
    destinations: tuple[IPSpace, ...] = ()


def cluster_connections(model: ClusterModel, options: EvaluationOptions,
                        inventory: Inventory | None = None, cuts: Cuts = Cuts()) -> list[Connection]:
    """The cluster's connection list; with ``inventory``, also the ``{ingress-controller}``
    lines of its Routes and Ingresses."""
    universe = cuts.universe if cuts.universe is not None else connection_universe(model)
    src_atoms = cut([*model.policy_blocks(INGRESS), *cuts.sources], universe)
    dst_atoms = cut([*model.policy_blocks(EGRESS), *cuts.destinations], universe)
    classes, namespaces = list(model.classes), dict(model.namespaces)
    controllers: list[tuple[int, IngressController]] = []
    if inventory is not None and has_ways_through_controllers(inventory, model.cluster):
        controllers = [(add_controller(inventory, model.cluster, c, classes, namespaces), c)
                       for c in (ROUTER, NGINX)]
    evaluation = PolicyEvaluation(classes, model.policies, namespaces,
                                  src_atoms, dst_atoms, options, model.admin, model.firewalls)
    n = evaluation.n
    class_names = [[w.ref for w in c.workloads] for c in classes]
    spans = Counter(name for names in class_names for name in names)
    # a class holding exactly one workload that lives in no other class maps
    # one-to-one onto output lines; only the rest need merging
    alone = [len(names) == 1 and spans[names[0]] == 1 for names in class_names]
    src_names = class_names + [[external_name(a)] for a in src_atoms]
    dst_names = class_names + [[external_name(a)] for a in dst_atoms]
    src_alone = alone + [True] * len(src_atoms)
    dst_alone = alone + [True] * len(dst_atoms)
    rows: list[tuple[str, str, ConnectionSet]] = []
    merged: dict[tuple[str, str], ConnectionSet] = defaultdict(ConnectionSet.none)
    for s, d, conns, _, _ in evaluation.pairs():
        if s == d and s < n and d < n and alone[s]:
            continue
        if src_alone[s] and dst_alone[d]:
            rows.append((src_names[s][0], dst_names[d][0], conns))
            continue
        for src in src_names[s]:
            for dst in dst_names[d]:
                if src != dst:
                    merged[(src, dst)] = merged[(src, dst)].union(conns)
    rows.extend((src, dst, conns) for (src, dst), conns in merged.items() if conns)
    if controllers:
        if inventory is None:
            raise ValueError("controller rows need the inventory")
        rows.extend(_controller_rows(inventory, model, evaluation, controllers))
    rows.sort(key=lambda row: (row[0], row[1]))
    return [Connection(model.cluster, src, dst, conns) for src, dst, conns in rows]


def _controller_rows(inventory: Inventory, model: ClusterModel, evaluation: PolicyEvaluation,
                     controllers: list[tuple[int, IngressController]]
                     ) -> list[tuple[str, str, ConnectionSet]]:
    """``{ingress-controller}`` lines: the pod ports Routes and Ingresses send to, as far
    as the pods' policies admit some controller that serves the object (one peer for all
    controllers, as netpol-analyzer writes it)."""
    found: dict[str, ConnectionSet] = defaultdict(ConnectionSet.none)
    for klass in model.classes:
        for path in route_paths(inventory, klass) + ingress_paths(inventory, klass):
            wanted = ConnectionSet.port(path.protocol, path.pod_port)
            for index, controller in controllers:
                if path.via in controller.serves:
                    conns = evaluation.connections(index, klass.index).intersection(wanted)
                    for workload in klass.workloads:
                        found[workload.ref] = found[workload.ref].union(conns)
    return [(INGRESS_CONTROLLER, dst, conns) for dst, conns in found.items() if conns]


def connection_list(inventory: Inventory,
                    options: EvaluationOptions = DEFAULT_OPTIONS) -> ConnectionList:
    result = ConnectionList()
    result.unevaluated = read_unevaluated(inventory, result.diagnostics, CONNECTION_LIST_EVALUATED)
    result.diagnostics.extend(unrouted_backends(inventory))
    for model in read_clusters(inventory, options, result.diagnostics):
        result.workloads.update(w.ref for klass in model.classes for w in klass.workloads)
        result.dnat.extend(dns_dnat_notes(inventory, model.cluster, model.classes))
        add_cluster(result, inventory, model, options)
    if result.sections:  # a cluster without networks of its own is one pod-network section
        sectioned = {s.cluster for s in result.sections}
        plain: dict[str, list[Connection]] = defaultdict(list)
        for i, c in enumerate(result.connections):
            if c.cluster not in sectioned:
                c = result.connections[i] = dataclasses.replace(c, network=POD.mapping)
                plain[c.cluster].append(c)
        result.sections += [Section(cluster, POD, conns) for cluster, conns in plain.items()]
        result.sections.sort(key=lambda s: s.cluster)  # stable: each cluster's order kept
    return result


def add_cluster(result: ConnectionList, inventory: Inventory, model: ClusterModel,
                options: EvaluationOptions, cuts: Cuts | None = None) -> None:
    """Add one cluster's connections to ``result``: every layer the list applies (primary
    (C)UDNs, secondary networks with their MultiNetworkPolicies, the policy tiers, the
    ingress controller). ``cuts``: external ranges cut alike for two inputs (the diff)."""
    networks = primary_networks(inventory, model.cluster, model.namespaces, result.diagnostics)
    secondary = secondary_networks(inventory, model.cluster, model.classes, result.diagnostics)
    if not networks and not secondary:
        result.connections.extend(cluster_connections(model, options, inventory, cuts or Cuts()))
        if names_networks(networks, secondary, model.classes):  # VMs: all on the pod network
            for klass in model.classes:
                for workload in klass.workloads:
                    result.networks[(model.cluster, workload.ref)] = POD
        return
    sections = network_sections(model, networks, options, inventory, cuts)
    sections += [secondary_section(model, net, options) for net in secondary]
    for section in sections:
        result.sections.append(section)
        result.connections.extend(section.connections)
    for klass in model.classes:
        for workload in klass.workloads:
            result.networks[(model.cluster, workload.ref)] = networks.get(klass.namespace, POD)
    for workload, names in attachments_by_workload(secondary).items():
        result.secondary[(model.cluster, workload.ref)] = names


def secondary_section(model: ClusterModel, net: SecondaryNetwork,
                      options: EvaluationOptions) -> Section:
    """The connections on one secondary network: between its workloads only, as its
    MultiNetworkPolicies allow (no outside ranges, no tiers, no EgressFirewall)."""
    own, options = net.model(model, options)
    conns = cluster_connections(own, options, cuts=Cuts(universe=IPSpace()))
    return Section(model.cluster, net.network,
                   [dataclasses.replace(c, network=net.network.name, secondary=True) for c in conns])


def network_sections(model: ClusterModel, networks: dict[str, Network],
                     options: EvaluationOptions, inventory: Inventory,
                     cuts: Cuts | None = None) -> list[Section]:
    """One connection list per primary network, over that network's endpoints only;
    workloads of a namespace's own UDN are written ``ns[udn]/name[Kind]``."""
    members: dict[Network, list[EndpointClass]] = defaultdict(list, {POD: []})
    for klass in model.classes:
        members[networks.get(klass.namespace, POD)].append(klass)
    out = []
    for network, classes in sorted(members.items()):
        own = [dataclasses.replace(k, index=i) for i, k in enumerate(classes)]
        conns = cluster_connections(dataclasses.replace(model, classes=own), options, inventory,
                                    cuts or Cuts())
        udn = network.kind == "UDN"
        name = network.name or network.mapping
        conns = [Connection(c.cluster, udn_name(c.source) if udn else c.source,
                            udn_name(c.destination) if udn else c.destination, c.connections, name)
                 for c in conns]
        out.append(Section(model.cluster, network, conns, bool(classes)))
    return out


def udn_name(peer: str) -> str:
    """``ns/name[Kind]`` as the list writes it inside the namespace's own UDN."""
    if peer.endswith("[External]") or peer.startswith("{"):
        return peer
    namespace, _, rest = peer.partition("/")
    return f"{namespace}[udn]/{rest}"


def plain_name(peer: str) -> str:
    """``udn_name`` undone: the workload as named outside its network's section."""
    namespace, marker, rest = peer.partition("[udn]/")
    return f"{namespace}/{rest}" if marker and "/" not in namespace else peer
