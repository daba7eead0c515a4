"""Primary networks of OVN-Kubernetes: the pod network, UserDefinedNetworks and
ClusterUserDefinedNetworks (k8s.ovn.org/v1).

* a ``UserDefinedNetwork`` whose ``spec.layer2.role`` / ``spec.layer3.role``
  (after ``spec.topology``) is ``Primary`` becomes the primary network of every
  pod of its namespace;
* a ``ClusterUserDefinedNetwork`` with ``spec.network.<topology>.role: Primary``
  is the primary network of every pod in the namespaces its
  ``namespaceSelector`` selects;
* either only for namespaces labelled ``k8s.ovn.org/primary-user-defined-network``
  (OVN-Kubernetes requires the label when the namespace is created; a namespace
  without it stays on the pod network, with a warning for a UDN in it);
* pods reach each other only inside their primary network: a UDN or CUDN
  isolates its pods from every other network, the pod network included.
  NetworkPolicies still apply inside each network; outside addresses are
  reachable from every network.

The answer is one connection list per network. Secondary networks
(NetworkAttachmentDefinitions) are read in ``secondary.py``; their ``Network`` is
defined here so that every network sorts into one order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.reachability.endpoints import VM_KINDS
from hcpscan.analysis.reachability.selectors import LabelSelector, SelectorError
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import K8sObject, namespace_of

OVN_GROUP = "k8s.ovn.org"
PRIMARY = "Primary"
ROLES = (PRIMARY, "Secondary")  # what OVN-Kubernetes accepts for a (C)UDN's role
PRIMARY_UDN_LABEL = "k8s.ovn.org/primary-user-defined-network"
SECONDARY = "NAD"


@dataclass(frozen=True, slots=True, order=True)
class Network:
    """A network: ``pod`` (the cluster's), ``UDN`` (named after its namespace, as a
    namespace holds one primary UDN), ``CUDN`` (by name), or ``NAD`` (a secondary
    network, by its NetworkAttachmentDefinitions' name)."""

    rank: int  # the order sections are listed in: pod network, UDNs, CUDNs, NADs
    kind: str
    name: str

    @property
    def title(self) -> str:
        if self.kind == "pod":
            return "Pod network"
        if self.kind == SECONDARY:
            return f"secondary NAD {self.name}"
        return f"primary {self.kind} {self.name}"

    @property
    def secondary(self) -> bool:
        return self.kind == SECONDARY

    @property
    def mapping(self) -> str:
        return "pod-network" if self.kind == "pod" else f"{self.name}[{self.kind}]"


POD = Network(0, "pod", "")


def names_networks(namespaces_on_udns: dict[str, Network], secondary: list[Any],
                   classes: list[Any]) -> bool:
    """Does the answer name each workload's network (a ``Workload-to-Networks Mapping``,
    sections or headers ``in pod-network``)? With user-defined primary networks or
    secondary networks, and with KubeVirt VMs, whose network interfaces the answer is
    about (netpol-analyzer's multiple-networks form, which its tests use for every input
    with VMs), even when every workload is on the pod network."""
    return bool(namespaces_on_udns or secondary) or any(
        e.synthetic and e.obj.kind in VM_KINDS for k in classes for e in k.endpoints)


def secondary_network(name: str) -> Network:
    return Network(3, SECONDARY, name)


def _role(spec: Any, topology: Any) -> str:
    if not isinstance(spec, dict) or not isinstance(topology, str):
        return ""
    layer = spec.get(topology[:1].lower() + topology[1:])
    return str(layer.get("role") or "") if isinstance(layer, dict) else ""


def primary_networks(inventory: Inventory, cluster: str, namespaces: dict[str, dict[str, str]],
                     diagnostics: list[Diagnostic]) -> dict[str, Network]:
    """Namespace -> its primary network, for namespaces not on the pod network."""
    out: dict[str, Network] = {}
    for obj in inventory.of_kind("ClusterUserDefinedNetwork"):
        if obj.cluster != cluster:
            continue
        check_group(inventory, obj, OVN_GROUP, diagnostics)
        network = obj.get("spec.network")
        if not isinstance(network, dict) or _checked_role(
                inventory, obj, network, "spec.network.", diagnostics) != PRIMARY:
            continue
        selector = _selector(inventory, obj, diagnostics)
        if selector is None:
            continue
        for name, labels in namespaces.items():
            if PRIMARY_UDN_LABEL in labels and selector.matches(labels):
                out[name] = Network(2, "CUDN", obj.name)
    for obj in inventory.of_kind("UserDefinedNetwork"):
        spec = obj.body.get("spec")
        if obj.cluster != cluster or not isinstance(spec, dict):
            continue
        check_group(inventory, obj, OVN_GROUP, diagnostics)
        if _checked_role(inventory, obj, spec, "spec.", diagnostics) != PRIMARY:
            continue
        namespace = namespace_of(obj)
        if PRIMARY_UDN_LABEL in namespaces.get(namespace, {}):
            out[namespace] = Network(1, "UDN", namespace)
            continue
        loc = inventory.locate(obj)
        diagnostics.append(Diagnostic(
            loc.path, loc.line, f"primary UserDefinedNetwork {namespace}/{obj.name}: namespace "
            f"{namespace} lacks the label {PRIMARY_UDN_LABEL}, so its pods stay on the pod network",
            "warning", "OVN-Kubernetes needs the label when the namespace is created"))
    _warn_labelled_without_network(inventory, cluster, namespaces, out, diagnostics)
    return out


def _checked_role(inventory: Inventory, obj: K8sObject, spec: dict[str, Any], prefix: str,
                  diagnostics: list[Diagnostic]) -> str:
    """The network's role; a role OVN-Kubernetes does not know is warned about (the
    network is then read as no primary one) rather than passed over unsaid."""
    topology = spec.get("topology")
    role = _role(spec, topology)
    if role not in ROLES and isinstance(topology, str) and topology:
        field = f"{prefix}{topology[:1].lower() + topology[1:]}.role"
        loc = inventory.locate(obj, field)
        diagnostics.append(Diagnostic(
            loc.path, loc.line, f"{obj.ref} has role {role or '(none)'!r}, not "
            f"{' or '.join(ROLES)}: read as no primary network, its namespaces' pods as on the "
            "pod network", "warning", f"set {field} to Primary or Secondary"))
    return role


def _warn_labelled_without_network(inventory: Inventory, cluster: str,
                                   namespaces: dict[str, dict[str, str]],
                                   found: dict[str, Network], diagnostics: list[Diagnostic]) -> None:
    """A namespace asking for a primary UDN that no (C)UDN gives: OVN-Kubernetes starts
    no pod there, while the list shows them on the pod network."""
    for name, labels in sorted(namespaces.items()):
        if PRIMARY_UDN_LABEL not in labels or name in found:
            continue
        namespace = inventory.get("Namespace", "", name, cluster)
        loc = inventory.locate(namespace, "metadata.labels") if namespace is not None else None
        diagnostics.append(Diagnostic(
            loc.path if loc else "", loc.line if loc else None,
            f"namespace {name} has the label {PRIMARY_UDN_LABEL} but no primary "
            "UserDefinedNetwork or ClusterUserDefinedNetwork of the input serves it: "
            "OVN-Kubernetes starts no pod there; they are listed as on the pod network",
            "warning", "add the namespace's primary UserDefinedNetwork (or the CUDN selecting "
                       "it) to the input, or remove the label"))


def check_group(inventory: Inventory, obj: K8sObject, group: str,
                diagnostics: list[Diagnostic]) -> None:
    """Network kinds are served by one API group only: another group is a typo, read as
    meant (as netpol-analyzer does), with a warning, rather than a network left out unsaid."""
    if obj.group != group:
        loc = inventory.locate(obj)
        diagnostics.append(Diagnostic(
            loc.path, loc.line, f"{obj.kind} {obj.name} has apiVersion {obj.api_version}; read "
            f"as {group} {obj.kind}", "warning",
            f"write apiVersion: {group}/...: the API server serves {obj.kind} only there"))


def _selector(inventory: Inventory, obj: K8sObject,
              diagnostics: list[Diagnostic]) -> LabelSelector | None:
    try:
        return LabelSelector.parse(obj.get("spec.namespaceSelector"))
    except SelectorError as exc:
        loc = inventory.locate(obj, "spec.namespaceSelector")
        diagnostics.append(Diagnostic(loc.path, loc.line, f"ClusterUserDefinedNetwork {obj.name} "
                                      f"is invalid and is ignored: {exc}", "error",
                                      "the API server rejects it: fix the selector"))
        return None
