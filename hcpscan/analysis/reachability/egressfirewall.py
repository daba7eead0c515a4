"""OVN-Kubernetes EgressFirewall (k8s.ovn.org/v1): per-namespace rules for traffic leaving
the cluster.

What an EgressFirewall means, as OVN-Kubernetes defines it:

* one per namespace, named ``default`` (another name is rejected);
* it filters traffic from the namespace's pods to destinations outside the
  cluster, never traffic between pods, and never that of hostNetwork pods;
* ``spec.egress`` rules are evaluated in order and the first that matches the
  destination (and its ``ports``, when given) decides: ``type: Allow`` or
  ``Deny``; traffic no rule matches is allowed;
* ``to`` holds exactly one of ``cidrSelector`` (a CIDR), ``dnsName`` (a name
  resolved while the cluster runs) or ``nodeSelector`` (the addresses of the
  matching nodes: here, the Node objects of the input);
* it adds to NetworkPolicy and AdminNetworkPolicy: a connection out must be
  allowed by those *and* by the firewall.

A ``dnsName`` rule matches addresses no input holds: it is left out of the
address ranges, and a warning and every answer's note say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.reachability.admin import node_addresses
from hcpscan.analysis.reachability.policies import PolicyError, invalid_object, list_field
from hcpscan.analysis.reachability.selectors import LabelSelector, SelectorError
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.inventory.fieldpath import mapping_at
from hcpscan.inventory.objects import K8sObject, namespace_of
from hcpscan.model.ipspace import AddressError, IPSpace, parse_network
from hcpscan.model.ports import PROTOCOLS, ConnectionSet, PortSet, normalise_protocol

FIREWALL_API_GROUP = "k8s.ovn.org"
FIREWALL_NAME = "default"


@dataclass(frozen=True, slots=True)
class FirewallRule:
    index: int
    allow: bool
    addresses: IPSpace  # empty for a dnsName rule
    dns_name: str
    ports: ConnectionSet

    @property
    def field(self) -> str:
        return f"spec.egress[{self.index}]"

    def describe(self, firewall: EgressFirewallModel) -> str:
        what = self.dns_name or str(self.addresses)
        return (f"EgressFirewall {firewall.namespace}/{firewall.obj.name} rule #{self.index + 1} "
                f"({'Allow' if self.allow else 'Deny'} {what})")


@dataclass(slots=True, eq=False)
class EgressFirewallModel:
    obj: K8sObject
    namespace: str
    rules: tuple[FirewallRule, ...]

    def allowed(self, atom: IPSpace) -> ConnectionSet:
        """What the firewall lets out to ``atom`` (a range no address rule splits)."""
        undecided, allowed = ConnectionSet.all(), ConnectionSet.none()
        for rule in self.rules:
            if rule.dns_name or not rule.addresses.contains(atom):
                continue
            matched = rule.ports.intersection(undecided)
            undecided = undecided.difference(matched)
            if rule.allow:
                allowed = allowed.union(matched)
        return allowed.union(undecided)

    def deciding(self, atom: IPSpace, protocol: str, port: int) -> FirewallRule | None:
        for rule in self.rules:
            if not rule.dns_name and rule.addresses.contains(atom) and rule.ports.allows(protocol, port):
                return rule
        return None

    @property
    def dns_rules(self) -> list[FirewallRule]:
        return [r for r in self.rules if r.dns_name]


def read_firewalls(inventory: Inventory, cluster: str,
                   diagnostics: list[Diagnostic]) -> dict[str, EgressFirewallModel]:
    """The cluster's EgressFirewalls by namespace; invalid ones are errors and left out."""
    nodes = [n for n in inventory.of_kind("Node") if n.cluster == cluster]
    out: dict[str, EgressFirewallModel] = {}
    for obj in inventory.of_kind("EgressFirewall"):
        if obj.cluster != cluster or obj.group != FIREWALL_API_GROUP:
            continue
        try:
            if obj.name != FIREWALL_NAME:
                raise PolicyError(f"an EgressFirewall must be named {FIREWALL_NAME!r}", "metadata.name")
            model = EgressFirewallModel(obj, namespace_of(obj), _rules(obj, nodes))
        except (PolicyError, SelectorError) as exc:
            diagnostics.append(invalid_object(inventory, obj, f"EgressFirewall {namespace_of(obj)}/"
                                              f"{obj.name}", exc, "OVN-Kubernetes rejects it: fix "
                                              "the field"))
            continue
        out[model.namespace] = model
        for rule in model.dns_rules:
            loc = inventory.locate(obj, f"{rule.field}.to.dnsName")
            diagnostics.append(Diagnostic(
                loc.path, loc.line, f"{rule.describe(model)} matches the addresses "
                f"{rule.dns_name} resolves to while the cluster runs: connections to outside "
                "ranges do not reflect it", "warning",
                "add a cidrSelector rule for the name's addresses to see them evaluated"))
    return out


def _rules(obj: K8sObject, nodes: list[K8sObject]) -> tuple[FirewallRule, ...]:
    spec = obj.body.get("spec")
    if not isinstance(spec, dict):
        raise PolicyError("spec must be a mapping", "spec")
    return tuple(_rule(raw, i, nodes) for i, raw in enumerate(list_field(spec, "egress",
                                                                          "spec.egress")))


def _rule(raw: Any, index: int, nodes: list[K8sObject]) -> FirewallRule:
    field = f"spec.egress[{index}]"
    if not isinstance(raw, dict) or raw.get("type") not in ("Allow", "Deny"):
        raise PolicyError("a rule needs type Allow or Deny", f"{field}.type")
    to = mapping_at(raw, "to")
    keys = [k for k in ("cidrSelector", "dnsName", "nodeSelector") if to.get(k) is not None]
    if len(keys) != 1:
        raise PolicyError("to needs exactly one of cidrSelector, dnsName and nodeSelector",
                          f"{field}.to")
    (key,) = keys
    addresses, dns = IPSpace(), ""
    if key == "cidrSelector":
        try:
            addresses = IPSpace.from_cidr(str(parse_network(str(to[key]), strict=False)))
        except AddressError as exc:
            raise PolicyError(f"cidrSelector: {exc}", f"{field}.to.cidrSelector") from None
    elif key == "dnsName":
        dns = str(to[key])
    else:
        selector = LabelSelector.parse(to[key])
        addresses = IPSpace.union_of(node_addresses(n) for n in nodes
                                     if selector.matches({str(k): str(v) for k, v in n.labels.items()}))
    return FirewallRule(index, raw["type"] == "Allow", addresses, dns,
                        _ports(raw.get("ports"), f"{field}.ports"))


def _ports(raw: Any, field: str) -> ConnectionSet:
    if raw is None:
        return ConnectionSet.all()
    if not isinstance(raw, list) or not raw:
        raise PolicyError("ports must be a non-empty list", field)
    out = ConnectionSet.none()
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise PolicyError("a port entry must be a mapping", f"{field}[{i}]")
        protocol = normalise_protocol(item.get("protocol"))
        if protocol not in PROTOCOLS:
            raise PolicyError(f"protocol {item.get('protocol')!r} is not TCP, UDP or SCTP",
                              f"{field}[{i}].protocol")
        port = item.get("port")
        if port is None:
            out = out.union(ConnectionSet.of(protocol, PortSet.all()))
        elif isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            raise PolicyError(f"{port!r} is not a port number 1-65535", f"{field}[{i}].port")
        else:
            out = out.union(ConnectionSet.port(protocol, port))
    return out
