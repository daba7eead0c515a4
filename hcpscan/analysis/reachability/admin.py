"""AdminNetworkPolicy and BaselineAdminNetworkPolicy (policy.networking.k8s.io/v1alpha1).

What these cluster-scoped policies mean, as the network-policy-api defines them:

* an ANP applies to the pods its ``subject`` selects: ``namespaces`` (every pod
  of the selected namespaces) or ``pods`` (``namespaceSelector`` and
  ``podSelector``, both required);
* its rules are ordered and each has an ``action``: ``Allow``, ``Deny`` or
  ``Pass``. For a connection the first matching rule of the ANP with the
  lowest ``priority`` number (0-1000) that has one decides: Allow and Deny are
  final, Pass hands the connection to the NetworkPolicy tier;
* a connection no ANP rule decides, or one passed on, is decided by the
  NetworkPolicies that select the pod in that direction, as if ANPs did not
  exist; when none selects it, by the BaselineAdminNetworkPolicy (one object,
  named ``default``; actions Allow and Deny) and, failing that, allowed;
* peers: ``namespaces`` (a namespace selector), ``pods`` (namespace and pod
  selectors); egress peers also ``networks`` (CIDRs outside the cluster, as
  ipBlocks) and ``nodes`` (nodes by label: the addresses of the matching Node
  objects in the input; none in the input means the peer matches nothing);
* ``ports``: ``portNumber`` (protocol, port), ``portRange`` (protocol, start,
  end) or ``namedPort`` (a container port name of the destination pod, with
  that port's own protocol); no ``ports`` means every port.

Two ANPs with the same priority have no defined order; hcpscan orders them by
name and warns. A policy the API server would reject is an error diagnostic
and is left out, as for NetworkPolicy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.reachability.endpoints import EndpointClass
from hcpscan.analysis.reachability.policies import (
    EGRESS,
    INGRESS,
    PORT_NAME,
    REJECTED,
    PolicyError,
    invalid_object,
    join_field,
    list_field,
)
from hcpscan.analysis.reachability.selectors import LabelSelector, SelectorError
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import K8sObject
from hcpscan.model.ipspace import AddressError, IPSpace, parse_network
from hcpscan.model.ports import PROTOCOLS, ConnectionSet, PortSet, normalise_protocol

ADMIN_API_GROUP = "policy.networking.k8s.io"
ANP, BANP = "AdminNetworkPolicy", "BaselineAdminNetworkPolicy"
ALLOW, DENY, PASS = "Allow", "Deny", "Pass"
ADMIN_TIER, BASELINE_TIER = "admin", "baseline"
MAX_PRIORITY = 1000
BANP_NAME = "default"


@dataclass(frozen=True, slots=True)
class AdminPeer:
    """One entry of ``from``/``to``: pods by selectors, or addresses (networks, nodes)."""

    namespace_selector: LabelSelector | None = None
    pod_selector: LabelSelector | None = None  # None with a namespace selector: every pod
    addresses: IPSpace | None = None  # networks, or the matched nodes' addresses
    field: str = ""
    text: str = ""
    note: str = ""  # accepted but suspicious, e.g. host bits in a CIDR


@dataclass(slots=True, eq=False)
class AdminRule:
    policy: AdminPolicyModel
    direction: str
    index: int
    name: str
    action: str
    peers: tuple[AdminPeer, ...]
    numeric: ConnectionSet
    named: tuple[str, ...]  # namedPort entries

    @property
    def field(self) -> str:
        return f"spec.{self.direction}[{self.index}]"

    @property
    def tier(self) -> str:
        return self.policy.tier

    @property
    def display(self) -> str:
        return f"{self.policy.display} {self.direction} rule {self.name!r} ({self.action})"

    def connections_to(self, dst: EndpointClass | None) -> ConnectionSet:
        """Ports this rule matches towards ``dst`` (``None``: an address outside,
        where named ports never resolve)."""
        if not self.named or dst is None:
            return self.numeric
        return dst.with_named_ports(self.numeric, ((name, None) for name in self.named))


@dataclass(slots=True, eq=False)
class AdminPolicyModel:
    obj: K8sObject
    cluster: str
    name: str
    tier: str
    priority: int  # BANP: MAX_PRIORITY + 1 (after every ANP)
    subject_namespaces: LabelSelector
    subject_pods: LabelSelector | None  # None: every pod of the subject namespaces
    ingress: tuple[AdminRule, ...] = ()
    egress: tuple[AdminRule, ...] = ()

    @property
    def kind(self) -> str:
        return ANP if self.tier == ADMIN_TIER else BANP

    @property
    def ref(self) -> str:
        return self.name

    @property
    def display(self) -> str:
        if self.tier == ADMIN_TIER:
            return f"{ANP} {self.name} (priority {self.priority})"
        return f"{BANP} {self.name}"

    def rules(self, direction: str) -> tuple[AdminRule, ...]:
        return self.ingress if direction == INGRESS else self.egress

    def affects(self, direction: str) -> bool:
        return bool(self.rules(direction))


def is_admin_policy(obj: K8sObject) -> bool:
    return obj.kind in (ANP, BANP) and obj.group == ADMIN_API_GROUP


def read_admin_policies(inventory: Inventory, cluster: str,
                        diagnostics: list[Diagnostic]) -> list[AdminPolicyModel]:
    """The cluster's ANPs in evaluation order (priority, then name), then its BANP."""
    nodes = [n for n in inventory.of_kind("Node") if n.cluster == cluster]
    out: list[AdminPolicyModel] = []
    for obj in inventory.of_kind(ANP, BANP):
        if obj.cluster != cluster or not is_admin_policy(obj):
            continue
        try:
            out.append(parse_admin_policy(obj, nodes))
        except (PolicyError, SelectorError) as exc:
            diagnostics.append(invalid_object(inventory, obj, f"{obj.kind} {obj.name}", exc,
                                              REJECTED))
    out.sort(key=lambda p: (p.priority, p.name))
    _warn_ties(inventory, out, diagnostics)
    _warn_nodes(inventory, out, nodes, diagnostics)
    for policy in out:
        for rule in policy.egress:
            for peer in rule.peers:
                if peer.note:
                    loc = inventory.locate(policy.obj, f"{peer.field}.networks")
                    diagnostics.append(Diagnostic(loc.path, loc.line, f"{policy.display}: {peer.note}",
                                                  "warning", "write the network address"))
    return out


def _warn_ties(inventory: Inventory, policies: list[AdminPolicyModel],
               diagnostics: list[Diagnostic]) -> None:
    for prev, cur in zip(policies, policies[1:], strict=False):
        if cur.tier == ADMIN_TIER and prev.priority == cur.priority:
            loc = inventory.locate(cur.obj, "spec.priority")
            diagnostics.append(Diagnostic(
                loc.path, loc.line, f"AdminNetworkPolicies {prev.name} and {cur.name} have the "
                f"same priority {cur.priority}: their order is undefined; hcpscan evaluates "
                f"{prev.name} first (by name)", "warning", "give each ANP its own priority"))


def _warn_nodes(inventory: Inventory, policies: list[AdminPolicyModel], nodes: list[K8sObject],
                diagnostics: list[Diagnostic]) -> None:
    if nodes:
        return
    for policy in policies:
        for rule in policy.egress:
            for peer in rule.peers:
                if peer.text.startswith("nodes"):
                    loc = inventory.locate(policy.obj, peer.field)
                    diagnostics.append(Diagnostic(
                        loc.path, loc.line, f"{policy.display} egress rule {rule.name!r}: the "
                        "input holds no Node objects, so its nodes peer matches no address",
                        "warning", "add the nodes (oc get nodes -o yaml) to the input"))


def parse_admin_policy(obj: K8sObject, nodes: Iterable[K8sObject] = ()) -> AdminPolicyModel:
    spec = obj.body.get("spec")
    if not isinstance(spec, dict):
        raise PolicyError("spec must be a mapping", "spec")
    if obj.kind == ANP:
        tier, priority = ADMIN_TIER, spec.get("priority")
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise PolicyError("priority must be an integer", "spec.priority")
        if not 0 <= priority <= MAX_PRIORITY:
            raise PolicyError(f"priority {priority} is outside 0-{MAX_PRIORITY}", "spec.priority")
    else:
        tier, priority = BASELINE_TIER, MAX_PRIORITY + 1
        if obj.name != BANP_NAME:
            raise PolicyError(f"a {BANP} must be named {BANP_NAME!r}", "metadata.name")
    namespaces, pods = _subject(spec.get("subject"))
    policy = AdminPolicyModel(obj, obj.cluster, obj.name, tier, priority, namespaces, pods)
    actions = (ALLOW, DENY, PASS) if tier == ADMIN_TIER else (ALLOW, DENY)
    node_list = list(nodes)
    policy.ingress = tuple(_rule(policy, INGRESS, i, r, actions, node_list)
                           for i, r in enumerate(list_field(spec, "ingress", "spec.ingress")))
    policy.egress = tuple(_rule(policy, EGRESS, i, r, actions, node_list)
                          for i, r in enumerate(list_field(spec, "egress", "spec.egress")))
    return policy


def _selector(raw: Any, field: str) -> LabelSelector:
    try:
        return LabelSelector.parse(raw)
    except SelectorError as exc:
        raise PolicyError(str(exc), join_field(field, exc.field)) from None


def _subject(raw: Any) -> tuple[LabelSelector, LabelSelector | None]:
    if not isinstance(raw, dict):
        raise PolicyError("subject is required: namespaces or pods", "spec.subject")
    if ("namespaces" in raw) == ("pods" in raw):
        raise PolicyError("subject needs exactly one of namespaces and pods", "spec.subject")
    if "namespaces" in raw:
        return _selector(raw["namespaces"], "spec.subject.namespaces"), None
    return _namespaced_pods(raw["pods"], "spec.subject.pods")


def _namespaced_pods(raw: Any, field: str) -> tuple[LabelSelector, LabelSelector]:
    """``pods``: a selector left out is the empty one, selecting all, as the Go type's
    zero value is (the upstream conformance manifests rely on it)."""
    if not isinstance(raw, dict):
        raise PolicyError("pods must be a mapping of namespaceSelector and podSelector", field)
    return (_selector(raw.get("namespaceSelector"), f"{field}.namespaceSelector"),
            _selector(raw.get("podSelector"), f"{field}.podSelector"))


def _rule(policy: AdminPolicyModel, direction: str, index: int, raw: Any,
          actions: tuple[str, ...], nodes: list[K8sObject]) -> AdminRule:
    field = f"spec.{direction}[{index}]"
    if not isinstance(raw, dict):
        raise PolicyError("a rule must be a mapping", field)
    action = raw.get("action")
    if action not in actions:
        raise PolicyError(f"action {action!r} is not one of {', '.join(actions)}", f"{field}.action")
    peer_key = "from" if direction == INGRESS else "to"
    peers_raw = list_field(raw, peer_key, f"{field}.{peer_key}")
    if not peers_raw:
        raise PolicyError(f"a rule needs at least one {peer_key} peer", f"{field}.{peer_key}")
    peers = tuple(_peer(p, direction, f"{field}.{peer_key}[{i}]", nodes)
                  for i, p in enumerate(peers_raw))
    ports_raw = raw.get("ports")
    named: tuple[str, ...]
    if ports_raw is None:
        numeric, named = ConnectionSet.all(), ()
    else:
        if not isinstance(ports_raw, list) or not ports_raw:
            raise PolicyError("ports must be a non-empty list", f"{field}.ports")
        numeric, names = ConnectionSet.none(), []
        for i, item in enumerate(ports_raw):
            conns, name = _port(item, f"{field}.ports[{i}]")
            numeric = numeric.union(conns)
            if name:
                names.append(name)
        named = tuple(names)
    name = str(raw.get("name") or f"#{index + 1}")
    return AdminRule(policy, direction, index, name, action, peers, numeric, named)


def _peer(raw: Any, direction: str, field: str, nodes: list[K8sObject]) -> AdminPeer:
    kinds = ("namespaces", "pods") + (("networks", "nodes") if direction == EGRESS else ())
    present = [k for k in kinds if isinstance(raw, dict) and raw.get(k) is not None]
    if len(present) != 1:
        raise PolicyError(f"a peer needs exactly one of {', '.join(kinds)}", field)
    (key,) = present
    value = raw[key]
    if key == "namespaces":
        ns = _selector(value, f"{field}.namespaces")
        return AdminPeer(ns, None, None, field, f"namespaces {ns}")
    if key == "pods":
        ns, pods = _namespaced_pods(value, f"{field}.pods")
        return AdminPeer(ns, pods, None, field, f"namespaces {ns}; pods {pods}")
    if key == "networks":
        space, note = _networks(value, f"{field}.networks")
        return AdminPeer(None, None, space, field, f"networks {', '.join(map(str, value))}", note)
    selector = _selector(value, f"{field}.nodes")
    space = IPSpace.union_of(node_addresses(n) for n in nodes if selector.matches(_labels(n)))
    return AdminPeer(None, None, space, field, f"nodes {selector}")


def _networks(raw: Any, field: str) -> tuple[IPSpace, str]:
    """The CIDRs' addresses, and a note when some has host bits set (masked off, as
    for ipBlock)."""
    if not isinstance(raw, list) or not raw:
        raise PolicyError("networks must be a non-empty list of CIDRs", field)
    spaces, notes = [], []
    for i, text in enumerate(raw):
        try:
            net = parse_network(str(text), strict=False)
        except AddressError as exc:
            raise PolicyError(f"network: {exc}", f"{field}[{i}]") from None
        if "/" in str(text) and str(net) != str(text).strip():
            notes.append(f"network {text} has host bits set; it is evaluated as {net}")
        spaces.append(IPSpace.from_cidr(str(net)))
    return IPSpace.union_of(spaces), "; ".join(notes)


def _labels(obj: K8sObject) -> dict[str, str]:
    return {str(k): "" if v is None else str(v) for k, v in obj.labels.items()}


def node_addresses(node: K8sObject) -> IPSpace:
    """The IP addresses a Node reports (``status.addresses``, IP types only)."""
    spaces = []
    for item in node.get("status.addresses") or []:
        if isinstance(item, dict) and item.get("type") in ("InternalIP", "ExternalIP"):
            try:
                spaces.append(IPSpace.from_cidr(str(item.get("address"))))
            except AddressError:
                continue
    return IPSpace.union_of(spaces)


def _port(raw: Any, field: str) -> tuple[ConnectionSet, str]:
    """One ports entry: (numeric connections, or a named port's name)."""
    keys = [k for k in ("portNumber", "portRange", "namedPort")
            if isinstance(raw, dict) and raw.get(k) is not None]
    if len(keys) != 1:
        raise PolicyError("a port needs exactly one of portNumber, portRange and namedPort", field)
    (key,) = keys
    value = raw[key]
    if key == "namedPort":
        if not isinstance(value, str) or len(value) > 15 or not PORT_NAME.match(value):
            raise PolicyError(f"{value!r} is not a valid port name", f"{field}.namedPort")
        return ConnectionSet.none(), value
    if not isinstance(value, dict):
        raise PolicyError(f"{key} must be a mapping", f"{field}.{key}")
    protocol = normalise_protocol(value.get("protocol"))
    if protocol not in PROTOCOLS:
        raise PolicyError(f"protocol {value.get('protocol')!r} is not TCP, UDP or SCTP",
                          f"{field}.{key}.protocol")
    if key == "portNumber":
        port = _number(value.get("port"), f"{field}.portNumber.port")
        return ConnectionSet.port(protocol, port), ""
    start = _number(value.get("start"), f"{field}.portRange.start")
    end = _number(value.get("end"), f"{field}.portRange.end")
    if end < start:
        raise PolicyError(f"end {end} is below start {start}", f"{field}.portRange.end")
    return ConnectionSet.of(protocol, PortSet.of((start, end))), ""


def _number(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise PolicyError(f"{value!r} is not a port number 1-65535", field)
    return value
