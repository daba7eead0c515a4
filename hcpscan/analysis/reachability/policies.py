"""NetworkPolicy (networking.k8s.io/v1) read into exact rule models.

What a policy means, as Kubernetes defines it:

* it isolates only the pods its ``podSelector`` selects (in its namespace) and
  only in the directions it affects: ``policyTypes`` when given, otherwise
  Ingress always and Egress only when the policy has egress rules;
* its rules only allow, and allowed traffic is the union over all rules of all
  policies selecting the pod;
* a rule without ``from``/``to`` matches every peer, a rule without ``ports``
  every port; a port entry without ``port`` every port of its protocol;
* a peer with ``podSelector`` and ``namespaceSelector`` selects their
  intersection; ``podSelector`` alone means the policy's namespace;
  ``namespaceSelector: {}`` means every namespace;
* ``ipBlock`` (``cidr`` minus ``except``) names addresses outside the cluster;
* a named port resolves on the destination pod's container ports with the
  rule's protocol (TCP when absent); no such port means nothing is allowed.

A policy the API server would reject becomes an error diagnostic and is left
out - it cannot exist in a cluster.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from hcpscan.analysis.reachability.endpoints import EndpointClass
from hcpscan.analysis.reachability.selectors import LabelSelector, SelectorError
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import K8sObject, namespace_of
from hcpscan.model.ipspace import AddressError, IPSpace, parse_network
from hcpscan.model.ports import (
    PROTOCOLS,
    ConnectionSet,
    PortSet,
    normalise_protocol,
)

POLICY_API_GROUP = "networking.k8s.io"
INGRESS, EGRESS = "ingress", "egress"
NP_TIER = "network-policy"  # the tier NetworkPolicy rules decide in (admin.py has the others)
PORT_NAME = re.compile(r"^(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?$")


class PolicyError(ValueError):
    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class PortSpec:
    """One entry of a rule's ``ports``: a protocol and a number range, all
    ports, or a container port name."""

    protocol: str
    ports: PortSet
    name: str = ""
    field: str = ""


@dataclass(frozen=True, slots=True)
class PeerSpec:
    """One entry of ``from``/``to``: selectors (pods) or an ipBlock (outside)."""

    pod_selector: LabelSelector | None = None
    namespace_selector: LabelSelector | None = None
    ip_block: IPSpace | None = None
    field: str = ""
    text: str = ""
    note: str = ""  # accepted but suspicious, e.g. host bits in a CIDR

    @property
    def selects_pods(self) -> bool:
        return self.ip_block is None


@dataclass(slots=True, eq=False)
class PolicyRule:
    policy: NetworkPolicyModel
    direction: str
    index: int
    peers: tuple[PeerSpec, ...] | None  # None: no from/to = every peer
    ports: tuple[PortSpec, ...] | None  # None: no ports = every port
    numeric: ConnectionSet
    named: tuple[PortSpec, ...]

    @property
    def field(self) -> str:
        return f"spec.{self.direction}[{self.index}]"

    # NetworkPolicy rules only allow, in the tier between AdminNetworkPolicy and its baseline
    tier: ClassVar[str] = NP_TIER
    action: ClassVar[str] = "Allow"

    @property
    def ref(self) -> str:
        return f"{self.policy.ref} {self.direction} rule #{self.index + 1}"

    @property
    def display(self) -> str:
        return f"{self.policy.kind} {self.ref}"

    def connections_to(self, dst: EndpointClass | None) -> ConnectionSet:
        """Ports this rule allows towards ``dst`` (``None``: an address outside,
        where named ports never resolve)."""
        if not self.named or dst is None:
            return self.numeric
        return dst.with_named_ports(self.numeric, ((s.name, s.protocol) for s in self.named))

    @property
    def any_peer(self) -> bool:
        return self.peers is None


@dataclass(slots=True, eq=False)
class NetworkPolicyModel:
    obj: K8sObject
    cluster: str
    namespace: str
    name: str
    pod_selector: LabelSelector
    affects_ingress: bool
    affects_egress: bool
    ingress: tuple[PolicyRule, ...] = ()
    egress: tuple[PolicyRule, ...] = ()
    kind: str = "NetworkPolicy"  # or MultiNetworkPolicy, whose spec means the same

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    def rules(self, direction: str) -> tuple[PolicyRule, ...]:
        return self.ingress if direction == INGRESS else self.egress

    def affects(self, direction: str) -> bool:
        return self.affects_ingress if direction == INGRESS else self.affects_egress


REJECTED = "the API server rejects this policy, so it does not exist in a cluster; fix the field"


def invalid_object(inventory: Inventory, obj: K8sObject, name: str,
                   exc: PolicyError | SelectorError, hint: str) -> Diagnostic:
    """The error for an object the engine leaves out as invalid, at the field at fault."""
    field = getattr(exc, "field", "")
    loc = inventory.locate(obj, field) if field else inventory.locate(obj)
    return Diagnostic(loc.path, loc.line, f"{name} is invalid and is ignored: {exc}", "error", hint)


def is_network_policy(obj: K8sObject) -> bool:
    return obj.kind == "NetworkPolicy" and obj.group == POLICY_API_GROUP


def read_policies(inventory: Inventory, cluster: str,
                  diagnostics: list[Diagnostic]) -> list[NetworkPolicyModel]:
    out: list[NetworkPolicyModel] = []
    seen: dict[tuple[str, str], K8sObject] = {}
    for obj in inventory.of_kind("NetworkPolicy"):
        if obj.cluster != cluster:
            continue
        if not is_network_policy(obj):
            continue  # another group's NetworkPolicy (Calico...): coverage.py reports it
        key = (namespace_of(obj), obj.name)
        if key in seen:
            continue  # a second copy: the inventory says so (inventory/duplicates.py)
        seen[key] = obj
        try:
            policy = parse_policy(obj)
            out.append(policy)
        except (PolicyError, SelectorError) as exc:
            diagnostics.append(invalid_object(inventory, obj, f"NetworkPolicy {key[0]}/{key[1]}",
                                              exc, REJECTED))
            continue
        for rule in policy.ingress + policy.egress:
            for peer in rule.peers or ():
                if peer.note:
                    loc = inventory.locate(obj, f"{peer.field}.cidr")
                    diagnostics.append(Diagnostic(loc.path, loc.line, f"{obj.ref}: {peer.note}",
                                                  "warning", "write the network address, e.g. "
                                                  f"{peer.text.split()[0]}"))
    return out


def parse_policy(obj: K8sObject, kind: str = "NetworkPolicy") -> NetworkPolicyModel:
    spec = obj.body.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise PolicyError("spec must be a mapping", "spec")
    try:
        pod_selector = LabelSelector.parse(spec.get("podSelector"))
    except SelectorError as exc:
        raise PolicyError(f"podSelector: {exc}", join_field("spec.podSelector", exc.field)) from None
    ingress_raw = list_field(spec, "ingress", "spec.ingress")
    egress_raw = list_field(spec, "egress", "spec.egress")
    types_raw = spec.get("policyTypes")
    if types_raw:
        if not isinstance(types_raw, list) or any(t not in ("Ingress", "Egress") for t in types_raw):
            raise PolicyError(f"policyTypes may only hold Ingress and Egress, not {types_raw!r}",
                              "spec.policyTypes")
        affects_ingress, affects_egress = "Ingress" in types_raw, "Egress" in types_raw
    else:
        affects_ingress, affects_egress = True, bool(egress_raw)
    policy = NetworkPolicyModel(obj, obj.cluster, namespace_of(obj), obj.name, pod_selector,
                                affects_ingress, affects_egress, kind=kind)
    policy.ingress = tuple(_rule(policy, INGRESS, i, r) for i, r in enumerate(ingress_raw))
    policy.egress = tuple(_rule(policy, EGRESS, i, r) for i, r in enumerate(egress_raw))
    return policy


def join_field(base: str, field: str) -> str:
    return f"{base}.{field}" if field else base


def list_field(parent: dict[str, Any], key: str, field: str) -> list[Any]:
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise PolicyError(f"{key} must be a list", field)
    return value


def _rule(policy: NetworkPolicyModel, direction: str, index: int, raw: Any) -> PolicyRule:
    field = f"spec.{direction}[{index}]"
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise PolicyError("a rule must be a mapping", field)
    peer_key = "from" if direction == INGRESS else "to"
    peers_raw = list_field(raw, peer_key, f"{field}.{peer_key}")
    ports_raw = list_field(raw, "ports", f"{field}.ports")
    peers = tuple(_peer(p, f"{field}.{peer_key}[{i}]") for i, p in enumerate(peers_raw)) or None
    ports = tuple(_port(p, f"{field}.ports[{i}]") for i, p in enumerate(ports_raw)) or None
    named: tuple[PortSpec, ...]
    if ports is None:
        numeric, named = ConnectionSet.all(), ()
    else:
        numeric = ConnectionSet.none()
        for spec in ports:
            if not spec.name:
                numeric = numeric.union(ConnectionSet.of(spec.protocol, spec.ports))
        named = tuple(s for s in ports if s.name)
    return PolicyRule(policy, direction, index, peers, ports, numeric, named)


def _peer(raw: Any, field: str) -> PeerSpec:
    if not isinstance(raw, dict):
        raise PolicyError("a peer must be a mapping", field)
    has_pod, has_ns, has_ip = (raw.get("podSelector") is not None,
                               raw.get("namespaceSelector") is not None,
                               raw.get("ipBlock") is not None)
    if has_ip and (has_pod or has_ns):
        raise PolicyError("a peer may hold an ipBlock or selectors, not both", field)
    if not (has_pod or has_ns or has_ip):
        raise PolicyError("a peer needs podSelector, namespaceSelector or ipBlock", field)
    if has_ip:
        return _ip_block(raw["ipBlock"], f"{field}.ipBlock")
    pod = ns = None
    try:
        if has_pod:
            pod = LabelSelector.parse(raw.get("podSelector"))
        if has_ns:
            ns = LabelSelector.parse(raw.get("namespaceSelector"))
    except SelectorError as exc:
        which = "podSelector" if has_pod and pod is None else "namespaceSelector"
        raise PolicyError(f"{which}: {exc}", join_field(f"{field}.{which}", exc.field)) from None
    text = "; ".join(part for part in (
        f"namespaces {ns}" if ns is not None else "",
        f"pods {pod}" if pod is not None else "") if part)
    return PeerSpec(pod, ns, None, field, text)


def _ip_block(raw: Any, field: str) -> PeerSpec:
    if not isinstance(raw, dict) or not raw.get("cidr"):
        raise PolicyError("ipBlock needs a cidr", field)
    try:
        net = parse_network(str(raw["cidr"]), strict=False)
    except AddressError as exc:
        raise PolicyError(f"ipBlock cidr: {exc}", f"{field}.cidr") from None
    note = ""
    if str(net) != str(raw["cidr"]).strip() and "/" in str(raw["cidr"]):
        note = (f"ipBlock cidr {raw['cidr']} has host bits set; the API server accepts it and "
                f"it is enforced as {net}")
    space = IPSpace.from_cidr(str(net))
    excepts = raw.get("except") or []
    if not isinstance(excepts, list):
        raise PolicyError("except must be a list of CIDRs", f"{field}.except")
    for i, text in enumerate(excepts):
        try:
            sub = parse_network(str(text), strict=False)
        except AddressError as exc:
            raise PolicyError(f"ipBlock except: {exc}", f"{field}.except[{i}]") from None
        if sub.version != net.version or not sub.subnet_of(net) or sub == net:  # type: ignore[arg-type]
            raise PolicyError(f"except {text} must be a strict subset of cidr {net}",
                              f"{field}.except[{i}]")
        space = space.difference(IPSpace.from_cidr(str(sub)))
    text = str(net) + (f" except {', '.join(str(e) for e in excepts)}" if excepts else "")
    return PeerSpec(None, None, space, field, text, note)


def _port(raw: Any, field: str) -> PortSpec:
    if not isinstance(raw, dict):
        raise PolicyError("a port entry must be a mapping", field)
    protocol = normalise_protocol(raw.get("protocol"))
    if protocol not in PROTOCOLS:
        raise PolicyError(f"protocol {raw.get('protocol')!r} is not TCP, UDP or SCTP",
                          f"{field}.protocol")
    port, end = raw.get("port"), raw.get("endPort")
    if port is None:
        if end is not None:
            raise PolicyError("endPort needs port", f"{field}.endPort")
        return PortSpec(protocol, PortSet.all(), "", field)
    if isinstance(port, str) and not port.isdigit():
        if end is not None:
            raise PolicyError("endPort cannot be used with a named port", f"{field}.endPort")
        if len(port) > 15 or not PORT_NAME.match(port):
            raise PolicyError(f"{port!r} is not a valid port name", f"{field}.port")
        return PortSpec(protocol, PortSet.empty(), port, field)
    number = _port_number(port, f"{field}.port")
    last = number if end is None else _port_number(end, f"{field}.endPort")
    if last < number:
        raise PolicyError(f"endPort {last} is below port {number}", f"{field}.endPort")
    return PortSpec(protocol, PortSet.of((number, last)), "", field)


def _port_number(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise PolicyError(f"{value!r} is not a port", field)
    if isinstance(value, str):
        # a quoted number is a string to the API, and not a valid port name
        raise PolicyError(f"{value!r} is a quoted number; write the port without quotes", field)
    if not 1 <= value <= 65535:
        raise PolicyError(f"port {value} is outside 1-65535", field)
    return value
