"""The reachability index: each cluster's endpoint classes, policies and ways in, built once.

``ReachabilityIndex(inventory, perimeter, options)`` reads every cluster of the
inventory (clusters are never connected to each other) into a ``ClusterView``:
endpoint classes, the policy evaluation of every tier over an external address
space cut by every CIDR the inputs mention (policies, declared cluster/service/
machine networks, LoadBalancer source ranges, perimeter rules), the Services and
Routes into each class, primary and secondary networks. It resolves the names
queries are asked with (``cluster:namespace/name[Kind]``) and answers the lookups
rules make per namespace and per workload; the questions themselves are in
``queries.py``, their evidence text in ``evidence.py``.
"""

from __future__ import annotations

import bisect
import re
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field

from hcpscan.analysis.reachability.coverage import (
    UnevaluatedKind,
    exclusion_note,
    read_unevaluated,
)
from hcpscan.analysis.reachability.dnat import DnatNote, dns_dnat_notes
from hcpscan.analysis.reachability.endpoints import EndpointClass, Workload
from hcpscan.analysis.reachability.evaluation import (
    DEFAULT_OPTIONS,
    EvaluationOptions,
    PolicyEvaluation,
)
from hcpscan.analysis.reachability.exposure import (
    ROUTER,
    ExposurePath,
    add_controller,
    declared_networks,
    has_ways_through_controllers,
    ingress_paths,
    malformed_source_ranges,
    route_paths,
    service_paths,
)
from hcpscan.analysis.reachability.model import ClusterModel, read_clusters
from hcpscan.analysis.reachability.networks import Network, primary_networks
from hcpscan.analysis.reachability.perimeter import Perimeter
from hcpscan.analysis.reachability.policies import NetworkPolicyModel
from hcpscan.analysis.reachability.secondary import SecondaryNetwork, secondary_networks
from hcpscan.analysis.reachability.selectors import bits
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.model.ipspace import AddressError, IPSpace, cut


class TargetNotFound(LookupError):
    """A query named a workload or address the inputs do not hold."""


@dataclass(slots=True, eq=False)
class ClusterView:
    model: ClusterModel
    evaluation: PolicyEvaluation
    atoms: list[IPSpace]
    router: int | None  # class index of the virtual router, when Routes exist
    machine_network: IPSpace
    paths: dict[int, list[ExposurePath]] = field(default_factory=dict)
    primary: dict[str, Network] = field(default_factory=dict)  # namespace -> its (C)UDN
    # secondary networks: (network, its MultiNetworkPolicy evaluation, class index of the
    # view -> the network's class indices holding that class's pods)
    secondary: list[tuple[SecondaryNetwork, PolicyEvaluation, dict[int, list[int]]]] = field(
        default_factory=list)
    # atoms inside a space, and the space a set of atoms covers, by bit mask over atoms
    _atoms_within: dict[IPSpace, int] = field(default_factory=dict)
    _spaces: dict[int, IPSpace] = field(default_factory=dict)
    _overlapping: dict[IPSpace, list[int]] = field(default_factory=dict)
    _starts: tuple[list[tuple[int, int]], list[IPSpace]] | None = None

    def atoms_within(self, space: IPSpace) -> int:
        mask = self._atoms_within.get(space)
        if mask is None:
            mask = sum(1 << k for k, atom in enumerate(self.atoms) if space.contains(atom))
            self._atoms_within[space] = mask
        return mask

    def atoms_overlapping(self, space: IPSpace) -> list[int]:
        """Indices of the atoms that share an address with ``space`` (each range a
        question names is asked for every HostedCluster: computed once)."""
        found = self._overlapping.get(space)
        if found is None:
            starts = self._atom_starts()
            if starts is None:  # not pieces of one cut: every atom asked
                found = [k for k, atom in enumerate(self.atoms) if space.overlaps(atom)]
            else:  # a fleet's atoms number in the thousands: only those at the space's ranges
                found = []
                for version, lo, hi in space.ranges:
                    k = max(bisect.bisect_right(starts, (version, lo)) - 1, 0)
                    while k < len(starts) and starts[k] <= (version, hi):
                        v, first, last = self.atoms[k].ranges[0]
                        if v == version and first <= hi and lo <= last and \
                                (not found or found[-1] != k):
                            found.append(k)
                        k += 1
            self._overlapping[space] = found
        return list(found)

    def _atom_starts(self) -> list[tuple[int, int]] | None:
        """(version, first address) of each atom when the atoms are contiguous ranges in
        address order (what ``ipspace.cut`` gives), else None."""
        if self._starts is None:
            starts = [atom.ranges[0][:2] for atom in self.atoms if len(atom.ranges) == 1]
            ordered = len(starts) == len(self.atoms) and all(
                (a.ranges[0][0], a.ranges[0][2]) < (b.ranges[0][0], b.ranges[0][1])
                for a, b in zip(self.atoms, self.atoms[1:], strict=False))
            self._starts = (starts, self.atoms) if ordered else ([], self.atoms)
        starts, of = self._starts
        if of is not self.atoms:  # the atoms were replaced: read them again
            self._starts = None
            return self._atom_starts()
        return starts if starts or not self.atoms else None

    def space_of(self, mask: int) -> IPSpace:
        """The union of the atoms in ``mask``."""
        space = self._spaces.get(mask)
        if space is None:
            ranges = tuple(r for k in bits(mask) for r in self.atoms[k].ranges)
            space = self._spaces[mask] = IPSpace(ranges).union(IPSpace())
        return space

    @property
    def cluster(self) -> str:
        return self.model.cluster


# Namespaces whose classes are kept indexed by label pair (``_by_label``).
_LABELLED_KEPT = 16


class ReachabilityIndex:
    """Every cluster's view, and lookups by workload name and by namespace."""

    def __init__(self, inventory: Inventory, perimeter: Perimeter | None = None,
                 options: EvaluationOptions = DEFAULT_OPTIONS) -> None:
        self.inventory = inventory
        self.perimeter = perimeter
        self.options = options
        self.diagnostics: list[Diagnostic] = []
        # what the secondary networks' evaluation rests on (an ipBlock taken to match no pod
        # whose address the input lacks, a NAD the input lacks): the questions between
        # workloads evaluate those networks, so their answers carry these warnings
        self.secondary_diagnostics: list[Diagnostic] = []
        # policy-like objects no answer of this graph reflects
        self.unevaluated: list[UnevaluatedKind] = read_unevaluated(inventory, self.diagnostics)
        self.views = [self._view(m) for m in read_clusters(inventory, options, self.diagnostics)]
        self.diagnostics.extend(malformed_source_ranges(inventory))
        # Lookups by name, built on first use: rules ask per HostedCluster and per
        # workload, and scanning every class for each question is quadratic in a fleet.
        self._by_name: dict[tuple[str, str], list[tuple[ClusterView, Workload, int]]] | None = None
        self._by_namespace: dict[tuple[str, str], list[EndpointClass]] | None = None
        self._policy_models: dict[int, list[tuple[ClusterView, NetworkPolicyModel]]] | None = None
        # answers rules ask again and again (per HostedCluster, per rule, per way in)
        self._resolved: dict[str, tuple[ClusterView, Workload, list[int]]] = {}
        self._labelled: OrderedDict[tuple[str, str], dict[tuple[str, str], list[EndpointClass]]] = \
            OrderedDict()
        self._selected: dict[tuple[str, str, frozenset[tuple[str, str]]], list[Workload]] = {}
        self._workloads: dict[tuple[str, str | None], list[Workload]] = {}

    # -- construction ---------------------------------------------------------------------

    def _view(self, model: ClusterModel) -> ClusterView:
        networks = declared_networks(self.inventory, model.cluster)
        classes, namespaces = list(model.classes), dict(model.namespaces)
        router = None
        if has_ways_through_controllers(self.inventory, model.cluster):
            router = add_controller(self.inventory, model.cluster, ROUTER, classes, namespaces)
        view = ClusterView(model, None, [], router,  # type: ignore[arg-type]  # evaluation: set below, once the atoms are cut
                           IPSpace.union_of(networks["machine"]))
        for klass in model.classes:
            view.paths[klass.index] = (service_paths(self.inventory, klass)
                                       + route_paths(self.inventory, klass)
                                       + ingress_paths(self.inventory, klass))
        cuts = model.policy_blocks() + [s for spaces in networks.values() for s in spaces]
        cuts += [p.sources for paths in view.paths.values() for p in paths]
        if self.perimeter is not None:
            cuts += self.perimeter.cidrs()
        view.atoms = cut(cuts, IPSpace.everything())
        primary = view.primary = primary_networks(self.inventory, model.cluster, model.namespaces, [])
        ids = {network: n for n, network in enumerate(sorted(set(primary.values())), 1)}
        network_of = [-1 if k.index == router else ids[primary[k.namespace]]
                      if k.namespace in primary else 0 for k in classes]
        view.evaluation = PolicyEvaluation(classes, model.policies, namespaces, view.atoms,
                                           view.atoms, self.options, model.admin,
                                           model.firewalls, network_of)
        view.secondary = self._secondary(model)
        return view

    def _secondary(self, model: ClusterModel
                   ) -> list[tuple[SecondaryNetwork, PolicyEvaluation, dict[int, list[int]]]]:
        """Each secondary network as the list evaluates it (its pods, its
        MultiNetworkPolicies), with which of its classes hold each class's pods."""
        out = []
        owner = {id(e): k.index for k in model.classes for e in k.endpoints}
        for net in secondary_networks(self.inventory, model.cluster, model.classes,
                                      self.secondary_diagnostics):
            own, options = net.model(model, self.options)
            evaluation = PolicyEvaluation(own.classes, own.policies, dict(own.namespaces), [], [],
                                          options)
            members: dict[int, list[int]] = defaultdict(list)
            for klass in own.classes:
                for index in {owner[id(e)] for e in klass.endpoints}:
                    members[index].append(klass.index)
            out.append((net, evaluation, dict(members)))
        return out

    # -- resolving names ------------------------------------------------------------------

    def view(self, cluster: str | None) -> ClusterView | None:
        """The view of ``cluster`` (the first when ``None``), if it has one."""
        return next((v for v in self.views if cluster is None or v.cluster == cluster), None)

    def resolve(self, target: str) -> tuple[ClusterView, Workload, list[int]]:
        """The view, workload and class indices ``target`` names
        (``namespace/name``, optionally ``[Kind]`` and ``cluster:``)."""
        known = self._resolved.get(target)
        if known is not None:
            return known[0], known[1], list(known[2])
        cluster, _, rest = target.rpartition(":") if ":" in target.split("/")[0] else ("", "", target)
        kind = ""
        if rest.endswith("]") and "[" in rest:
            rest, kind = rest[:-1].split("[", 1)
        namespace, _, name = rest.partition("/")
        if not name:
            raise TargetNotFound(f"{target!r} is not a workload: write namespace/name "
                                 "(optionally namespace/name[Kind] or cluster:namespace/name)")
        found = [(view, workload, index)
                 for view, workload, index in self._name_index().get((namespace, name), ())
                 if (not cluster or view.cluster == cluster) and (not kind or workload.kind == kind)]
        if not found:
            raise TargetNotFound(f"no workload {target} in the inputs")
        view, workload = found[0][0], found[0][1]
        indices = sorted({i for v, w, i in found if v is view and w == workload})
        self._resolved[target] = (view, workload, indices)
        return view, workload, list(indices)

    def has_workload(self, target: str) -> bool:
        """Whether ``target`` (``cluster:namespace/name[Kind]``) is a workload of the inputs."""
        try:
            self.resolve(target)
        except TargetNotFound:
            return False
        return True

    def has_way_in(self, target: str) -> bool:
        """Whether a NodePort or LoadBalancer Service or a Route leads to ``target``'s pods:
        without one, outside traffic would need a routable pod IP."""
        # asked per workload, port and rule (HCP001/002/006/009): the name resolved before
        # is read in place, without copying its class list
        view, _workload, indices = self._resolved.get(target) or self.resolve(target)
        return any(view.paths.get(i) for i in indices)

    def _name_index(self) -> dict[tuple[str, str], list[tuple[ClusterView, Workload, int]]]:
        """(namespace, name) -> every (view, workload, class index), in class order."""
        if self._by_name is None:
            index: dict[tuple[str, str], list[tuple[ClusterView, Workload, int]]] = defaultdict(list)
            for view in self.views:
                for klass in view.model.classes:
                    for workload in klass.workloads:
                        index[(workload.namespace, workload.name)].append((view, workload, klass.index))
            self._by_name = dict(index)
        return self._by_name

    def namespace_classes(self, cluster: str, namespace: str) -> list[EndpointClass]:
        if self._by_namespace is None:
            index: dict[tuple[str, str], list[EndpointClass]] = defaultdict(list)
            for view in self.views:
                for klass in view.model.classes:
                    index[(view.cluster, klass.namespace)].append(klass)
            self._by_namespace = dict(index)
        return self._by_namespace.get((cluster, namespace), [])

    def is_workload_source(self, source: str) -> bool:
        """Does ``source`` (a query's --from) name a workload rather than addresses?"""
        return not isinstance(source_value(source), IPSpace)

    # -- lookups rules make ---------------------------------------------------------------

    def workloads(self, cluster: str, namespace: str | None = None) -> list[Workload]:
        """Top-owner workloads (with endpoints) of a cluster, optionally of one namespace."""
        known = self._workloads.get((cluster, namespace))
        if known is None:
            known = self._workloads[(cluster, namespace)] = self._find_workloads(cluster, namespace)
        return list(known)

    def _find_workloads(self, cluster: str, namespace: str | None) -> list[Workload]:
        out: set[Workload] = set()
        if namespace is not None:
            for klass in self.namespace_classes(cluster, namespace):
                out.update(w for w in klass.workloads if w.namespace == namespace)
            return sorted(out, key=lambda w: (w.namespace, w.name, w.kind))
        for view in self.views:
            if view.cluster != cluster:
                continue
            for klass in view.model.classes:
                out.update(klass.workloads)
        return sorted(out, key=lambda w: (w.namespace, w.name, w.kind))

    def host_network_workloads(self, cluster: str) -> set[Workload]:
        """Workloads of a cluster whose pods all run with hostNetwork: true (a node's own
        network, which NetworkPolicy does not filter in OVN-Kubernetes)."""
        pod_network: set[Workload] = set()
        host: set[Workload] = set()
        for view in self.views:
            if view.cluster != cluster:
                continue
            for klass in view.model.classes:
                (host if klass.host_network else pod_network).update(klass.workloads)
        return host - pod_network

    def select_workloads(self, cluster: str, namespace: str,
                         labels: dict[str, str]) -> list[Workload]:
        """Workloads of a namespace whose pods carry all of ``labels``."""
        try:
            key = (cluster, namespace, frozenset(labels.items()))
            known = self._selected.get(key)
        except TypeError:  # a label value that is no scalar (a list in a rule's params)
            return self._select_workloads(cluster, namespace, labels)
        if known is None:
            known = self._selected[key] = self._select_workloads(cluster, namespace, labels)
        return list(known)

    def _select_workloads(self, cluster: str, namespace: str,
                          labels: dict[str, str]) -> list[Workload]:
        out: set[Workload] = set()
        classes = self.namespace_classes(cluster, namespace)
        first = next(iter(labels.items()), None)
        if first is not None and isinstance(first[1], str) and len(classes) > 1:
            # only the classes carrying the first pair (a rule picks by app label); a value
            # that is no text (None equals a missing label) has every class asked
            classes = self._by_label(cluster, namespace, classes, first)
        for klass in classes:
            if all(klass.labels.get(k) == v for k, v in labels.items()):
                out.update(klass.workloads)
        return sorted(out, key=lambda w: (w.name, w.kind))

    def _by_label(self, cluster: str, namespace: str, classes: list[EndpointClass],
                  pair: tuple[str, str]) -> list[EndpointClass]:
        """A namespace's classes carrying the label ``pair``, in class order: found once per
        pair asked (a rule asks a hosted cluster's selectors one after the other; most
        pairs of a namespace are never asked) and kept for the last few namespaces only
        (kept for all, a fleet's pairs took ~12 MiB at N = 500)."""
        key = (cluster, namespace)
        known = self._labelled.get(key)
        if known is None:
            known = self._labelled[key] = {}
            if len(self._labelled) > _LABELLED_KEPT:
                self._labelled.popitem(last=False)
        else:
            self._labelled.move_to_end(key)
        found = known.get(pair)
        if found is None:
            name, value = pair
            found = known[pair] = [k for k in classes if k.labels.get(name) == value]
        return found

    def selected_by(self, policy_obj: object) -> list[Workload]:
        """Workloads whose pods a NetworkPolicy object selects."""
        out: set[Workload] = set()
        for view, model in self._models_of().get(id(policy_obj), ()):
            if model.obj is policy_obj:
                for i in bits(view.evaluation.policy_selects(model)):
                    out.update(view.evaluation.classes[i].workloads)
        return sorted(out, key=lambda w: (w.namespace, w.name, w.kind))

    def _models_of(self) -> dict[int, list[tuple[ClusterView, NetworkPolicyModel]]]:
        """id of a policy object -> its models in every view (built once: HCP004 asks for
        every NetworkPolicy, and scanning every model per question is quadratic)."""
        if self._policy_models is None:
            index: dict[int, list[tuple[ClusterView, NetworkPolicyModel]]] = defaultdict(list)
            for view in self.views:
                for model in view.model.policies:
                    index[id(model.obj)].append((view, model))
            self._policy_models = dict(index)
        return self._policy_models

    # -- what answers leave out -----------------------------------------------------------

    def dnat_notes(self, cluster: str) -> list[DnatNote]:
        """Service ports of the cluster's DNS that its pods receive on another port."""
        view = next((v for v in self.views if v.cluster == cluster), None)
        return dns_dnat_notes(self.inventory, cluster, view.model.classes) if view else []

    def dnat_notes_for(self, target: str) -> list[DnatNote]:
        """The DNAT notes that matter to a question about ``target``: those of the
        Services in front of it."""
        view, workload, _ = self.resolve(target)
        return [n for n in self.dnat_notes(view.cluster) if workload in n.workloads]

    def exclusion_note(self, cluster: str | None = None) -> str:
        """What answers about ``cluster`` (every cluster when ``None``) leave out, as one
        sentence; '' when they leave nothing out."""
        return exclusion_note([k for k in self.unevaluated if cluster is None or k.cluster == cluster])


def source_value(source: str) -> IPSpace | str:
    """The addresses ``source`` names, or ``source`` itself when it names a workload."""
    try:
        return IPSpace.from_cidr(source)
    except AddressError:
        return source


def resolve_source(index: ReachabilityIndex, source: str) -> tuple[ClusterView, Workload, list[int]]:
    """``index.resolve`` for a query's source: one written as an address that does not
    parse (``10.0.0.0/33``) and names no workload is said to be no address or CIDR, not
    a missing workload ``10.0.0.0``/``33``."""
    try:
        return index.resolve(source)
    except TargetNotFound:
        if not (_ADDRESS_LIKE.fullmatch(source) and any(c in source for c in ".:")):
            raise
        try:
            IPSpace.from_cidr(source)
        except AddressError as exc:
            raise TargetNotFound(f"{source} is not an address or CIDR ({exc})") from None
        raise


_ADDRESS_LIKE = re.compile(r"[0-9A-Fa-f.:]+(/[0-9]*)?")
