"""Secondary networks: NetworkAttachmentDefinitions (k8s.cni.cncf.io/v1) and the
MultiNetworkPolicies (k8s.cni.cncf.io/v1beta1) that filter traffic on them.

* a pod joins a secondary network through its ``k8s.v1.cni.cncf.io/networks``
  annotation: a comma-separated list of ``[namespace/]name[@interface]``, or a
  JSON list of objects with ``name`` and optional ``namespace`` (the pod's own
  namespace when absent). A KubeVirt VM joins through
  ``spec.template.spec.networks[].multus.networkName``. hostNetwork pods join
  none (Multus attaches no interface to them);
* an attachment names a NetworkAttachmentDefinition; one missing from the input
  is a warning and the attachment is left out;
* NetworkAttachmentDefinitions of one name in several namespaces form one
  network (how netpol-analyzer reads them, and what OVN-Kubernetes does for
  overlay NADs sharing a network name): the connection list has one section per
  name;
* only MultiNetworkPolicies act on a secondary network - NetworkPolicy,
  AdminNetworkPolicy and EgressFirewall act on the primary network - and only
  on the networks their ``k8s.v1.cni.cncf.io/policy-for`` annotation names (a
  comma-separated list of ``[namespace/]name``, the policy's namespace when
  absent, naming a NAD in the input). Their spec is a NetworkPolicy's and means
  what it means there (OVN-Kubernetes turns each into a NetworkPolicy), so it is
  read by ``policies.parse_policy``;
* a secondary network has no outside addresses of its own in the list. A pod's
  addresses on it are read where the input holds them: the ``ips`` of the
  network's entry in the ``k8s.v1.cni.cncf.io/network-status`` annotation
  (what Multus assigned) or in the JSON form of the ``networks`` annotation
  (what was asked for, static IPAM), and for a KubeVirt VM the addresses that
  its cloud-init ``networkData`` (``cloudInitNoCloud`` or ``cloudInitConfigDrive``,
  netplan version 1 or 2) gives its interfaces besides ``eth0`` (the pod
  network's, when the VM has one: with no pod network every interface counts),
  on every secondary network of the VM (the guest's interface names do not say
  which network each is on). Prefix lengths are the subnet's, not the pod's:
  ``10.200.0.1/24`` is the address 10.200.0.1. A MultiNetworkPolicy ``ipBlock``
  selects the pods with an address on the network in the block (any of them, as
  netpol-analyzer does: a VM's addresses stand for each of its networks, one of
  them is its address on this one); pods whose addresses the input lacks match no
  ipBlock, with a warning naming the rule and the pods.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.reachability.coverage import MULTUS_GROUP
from hcpscan.analysis.reachability.endpoints import (
    VM_KINDS,
    Endpoint,
    EndpointClass,
    Workload,
    pod_template,
)
from hcpscan.analysis.reachability.evaluation import EvaluationOptions
from hcpscan.analysis.reachability.model import ClusterModel
from hcpscan.analysis.reachability.networks import Network, check_group, secondary_network
from hcpscan.analysis.reachability.policies import (
    NetworkPolicyModel,
    PolicyError,
    invalid_object,
    parse_policy,
)
from hcpscan.analysis.reachability.selectors import SelectorError
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.core.yamldocs import YamlSyntaxError, load_json, load_one
from hcpscan.inventory import Inventory
from hcpscan.inventory.fieldpath import mapping_at
from hcpscan.inventory.objects import K8sObject, namespace_of

NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
STATUS_ANNOTATION = "k8s.v1.cni.cncf.io/network-status"
POD_NETWORK_INTERFACE = "eth0"  # a VM's guest interface on the pod network, by KubeVirt's default
POLICY_FOR_ANNOTATION = "k8s.v1.cni.cncf.io/policy-for"
NAD_KIND = "NetworkAttachmentDefinition"
MNP_KIND = "MultiNetworkPolicy"


@dataclass(slots=True)
class SecondaryNetwork:
    """One secondary network of a cluster: the endpoints attached to it, grouped as on the
    pod network (indices of its own), and the MultiNetworkPolicies for it."""

    network: Network
    classes: list[EndpointClass]
    policies: list[NetworkPolicyModel]

    def model(self, cluster: ClusterModel,
              options: EvaluationOptions) -> tuple[ClusterModel, EvaluationOptions]:
        """The network as a cluster of its own: its endpoints and MultiNetworkPolicies only
        (no tiers, no EgressFirewall); an ipBlock selects the pods by their addresses on
        the network (the classes' ``ips``; none when the input lacks them)."""
        own = ClusterModel(cluster.cluster, self.classes, self.policies, cluster.namespaces)
        return own, dataclasses.replace(options, ipblock_selects_pods=True,
                                        ipblock_any_address=True)


@dataclass(frozen=True, slots=True)
class NadRef:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


def parse_networks_annotation(text: str, namespace: str) -> list[NadRef]:
    """The NADs a ``k8s.v1.cni.cncf.io/networks`` value names (``ValueError`` when it is
    neither form)."""
    if text.lstrip().startswith("["):
        items = load_json(text)
        if not isinstance(items, list) or not all(
                isinstance(i, dict) and isinstance(i.get("name"), str) and i["name"] for i in items):
            raise ValueError("a JSON list must hold objects with a name")
        return [NadRef(str(i.get("namespace") or namespace), i["name"]) for i in items]
    return [_ref(entry.split("@", 1)[0], namespace) for entry in text.split(",") if entry.strip()]


def _ref(text: str, namespace: str) -> NadRef:
    text = text.strip()
    if "/" in text:
        ns, _, name = text.partition("/")
        return NadRef(ns.strip() or namespace, name.strip())
    return NadRef(namespace, text)


def _vm_networks(obj: K8sObject) -> list[Any]:
    path = "spec.networks" if obj.kind == "VirtualMachineInstance" else "spec.template.spec.networks"
    networks = obj.get(path)
    return networks if isinstance(networks, list) else []


def _address(text: str) -> str | None:
    """``10.0.0.1/24`` or ``10.0.0.1``: the address (the prefix is the subnet's)."""
    try:
        return str(ipaddress.ip_interface(text.strip()).ip)
    except ValueError:
        return None


def _addresses(values: Any) -> tuple[str, ...]:
    if not isinstance(values, list):
        return ()
    found = (_address(v) for v in values if isinstance(v, str))
    return tuple(sorted({a for a in found if a}))


def _json_entries(text: Any) -> list[dict[str, Any]]:
    if not isinstance(text, str) or not text.lstrip().startswith("["):
        return []
    try:
        items = load_json(text)
    except ValueError:  # unreadable: no addresses (an ipBlock rule's warning names the pod)
        return []
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def annotated_addresses(annotations: dict[str, Any], namespace: str) -> dict[NadRef, tuple[str, ...]]:
    """NAD -> the pod's addresses on it: the network-status annotation's ``ips`` (what
    Multus assigned) first, else the JSON networks annotation's ``ips`` (what was asked)."""
    out: dict[NadRef, tuple[str, ...]] = {}
    for key in (NETWORKS_ANNOTATION, STATUS_ANNOTATION):  # the status wins: written last
        for entry in _json_entries(annotations.get(key)):
            name, ips = entry.get("name"), _addresses(entry.get("ips"))
            if not isinstance(name, str) or not name or not ips or entry.get("default"):
                continue
            ns = entry.get("namespace")
            ref = _ref(name, namespace) if not isinstance(ns, str) or not ns else NadRef(ns, name)
            out[ref] = ips
    return out


def vm_secondary_addresses(obj: K8sObject) -> tuple[str, ...]:
    """The addresses a VM's cloud-init networkData gives interfaces off the pod network."""
    spec = "spec" if obj.kind == "VirtualMachineInstance" else "spec.template.spec"
    volumes = obj.get(f"{spec}.volumes")
    has_pod_network = any(isinstance(n, dict) and "pod" in n for n in _vm_networks(obj))
    found: set[str] = set()
    for volume in volumes if isinstance(volumes, list) else []:
        for source in ("cloudInitNoCloud", "cloudInitConfigDrive"):
            data = volume.get(source) if isinstance(volume, dict) else None
            text = data.get("networkData") if isinstance(data, dict) else None
            if isinstance(text, str) and text.strip():
                for interface, addresses in _netplan_interfaces(text):
                    if interface != POD_NETWORK_INTERFACE or not has_pod_network:
                        found.update(addresses)
    return tuple(sorted(found))


def _netplan_interfaces(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """(interface, addresses) of a cloud-init network config, version 2 (``ethernets``)
    or version 1 (``config`` entries with ``subnets``); unreadable text gives none."""
    try:
        doc = load_one(text)  # bounded as files are (aliases, depth, size)
    except YamlSyntaxError:  # unreadable: no addresses (an ipBlock rule's warning names the VM)
        return []
    if isinstance(doc, dict) and isinstance(doc.get("network"), dict):
        doc = doc["network"]
    if not isinstance(doc, dict):
        return []
    out = []
    ethernets = doc.get("ethernets")
    for name, body in ethernets.items() if isinstance(ethernets, dict) else ():
        if isinstance(body, dict):
            out.append((str(name), _addresses(body.get("addresses"))))
    for entry in doc.get("config") or [] if isinstance(doc.get("config"), list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("subnets"), list):
            out.append((str(entry.get("name") or ""), _addresses(
                [s.get("address") for s in entry["subnets"] if isinstance(s, dict)])))
    return out


def endpoint_addresses(endpoint: Endpoint) -> dict[NadRef, tuple[str, ...]] | tuple[str, ...]:
    """An endpoint's addresses on its secondary networks: per NAD from the annotations,
    or for a VM one set for all of them (from cloud-init)."""
    obj = endpoint.obj
    if obj.kind in VM_KINDS and endpoint.synthetic:
        return vm_secondary_addresses(obj)
    if endpoint.synthetic:
        template = pod_template(obj) or {}
        meta = mapping_at(template, "metadata")
        annotations = mapping_at(meta, "annotations")
        return annotated_addresses(annotations, endpoint.namespace)
    return annotated_addresses(obj.annotations, endpoint.namespace)


def endpoint_attachments(endpoint: Endpoint, inventory: Inventory,
                         diagnostics: list[Diagnostic]) -> list[NadRef]:
    """The NADs one endpoint is attached to, as its pod (or pod template) says."""
    obj = endpoint.obj
    if endpoint.host_network:
        return []
    if obj.kind in VM_KINDS and endpoint.synthetic:
        return [_ref(str(n["multus"]["networkName"]), endpoint.namespace)
                for n in _vm_networks(obj)
                if isinstance(n, dict) and isinstance(n.get("multus"), dict)
                and n["multus"].get("networkName") and not n["multus"].get("default")]
    if endpoint.synthetic:
        template = pod_template(obj) or {}
        meta = mapping_at(template, "metadata")
        annotations = mapping_at(meta, "annotations")
        field = "spec.template.metadata.annotations"
    else:
        annotations, field = obj.annotations, "metadata.annotations"
    text = annotations.get(NETWORKS_ANNOTATION)
    if not text:
        return []
    try:
        return parse_networks_annotation(str(text), endpoint.namespace)
    except ValueError as exc:  # json.JSONDecodeError is one
        loc = inventory.locate(obj, field)
        diagnostics.append(Diagnostic(
            loc.path, loc.line, f"{obj.kind} {endpoint.namespace}/{obj.name}: annotation "
            f"{NETWORKS_ANNOTATION} cannot be read ({exc}); its secondary networks are left out",
            "warning", "write a comma-separated list of [namespace/]name, or a JSON list of "
            '{"name": ..., "namespace": ...} objects'))
        return []


def secondary_networks(inventory: Inventory, cluster: str, classes: list[EndpointClass],
                       diagnostics: list[Diagnostic]) -> list[SecondaryNetwork]:
    """Every secondary network some endpoint of the cluster is attached to, in name order."""
    nads = set()
    for obj in inventory.of_kind(NAD_KIND):
        if obj.cluster == cluster:
            check_group(inventory, obj, MULTUS_GROUP, diagnostics)
            nads.add(NadRef(namespace_of(obj), obj.name))
    # network name -> (class index, the endpoints' addresses there) -> endpoints
    members: dict[str, dict[tuple[int, tuple[str, ...]], list[Endpoint]]] = defaultdict(
        lambda: defaultdict(list))
    missing: set[tuple[int, NadRef]] = set()
    for klass in classes:
        for endpoint in klass.endpoints:
            refs = endpoint_attachments(endpoint, inventory, diagnostics)
            addresses = endpoint_addresses(endpoint) if refs else {}
            for ref in refs:
                if ref in nads:
                    ips = addresses.get(ref, ()) if isinstance(addresses, dict) else addresses
                    group = members[ref.name][(klass.index, ips)]
                    if endpoint not in group:
                        group.append(endpoint)
                elif (id(endpoint.obj), ref) not in missing:
                    missing.add((id(endpoint.obj), ref))
                    _warn_missing(inventory, endpoint, ref, diagnostics)
    if not members:
        return []
    policies = _policies_by_network(inventory, cluster, nads, diagnostics)
    out = []
    for name in sorted(members):
        own = [dataclasses.replace(classes[i], index=k, endpoints=eps, ips=ips,
                                   _workloads=(-1, []))
               for k, ((i, ips), eps) in enumerate(sorted(members[name].items()))]
        net_policies = [p for p, _ in policies.get(name, [])]
        for policy, obj in policies.get(name, []):
            _warn_unaddressed(inventory, obj, policy, name, own, diagnostics)
        out.append(SecondaryNetwork(secondary_network(name), own, net_policies))
    return out


def _warn_unaddressed(inventory: Inventory, obj: K8sObject, policy: NetworkPolicyModel,
                      network: str, classes: list[EndpointClass],
                      diagnostics: list[Diagnostic]) -> None:
    """An ipBlock rule on a network where some pods' addresses are not in the input: those
    pods match no ipBlock; say which, so a missing line is not read as denied by design."""
    unknown = sorted({w.ref for k in classes if not k.ips for w in k.workloads})
    if not unknown:
        return
    ref = f"{namespace_of(obj)}/{obj.name}"
    for rule in policy.ingress + policy.egress:
        for peer in rule.peers or ():
            if peer.ip_block is not None:
                loc = inventory.locate(obj, peer.field)
                shown = ", ".join(unknown[:3]) + (f" (+{len(unknown) - 3})" if len(unknown) > 3
                                                  else "")
                diagnostics.append(Diagnostic(
                    loc.path, loc.line, f"MultiNetworkPolicy {ref} {rule.direction} rule "
                    f"#{rule.index + 1}: ipBlock {peer.text} is taken to match none of {shown} "
                    f"(their addresses on secondary network {network} are not in the input)",
                    "warning", f"add the pods' {STATUS_ANNOTATION} annotation (or `ips` in the "
                    f"{NETWORKS_ANNOTATION} annotation; a VM's cloud-init networkData), or check "
                    "by hand which of them hold addresses in the block"))


def attachments_by_workload(networks: list[SecondaryNetwork]) -> dict[Workload, list[str]]:
    """Workload -> the names of its secondary networks, sorted."""
    out: dict[Workload, set[str]] = defaultdict(set)
    for net in networks:
        for klass in net.classes:
            for workload in klass.workloads:
                out[workload].add(net.network.name)
    return {w: sorted(names) for w, names in out.items()}


def _warn_missing(inventory: Inventory, endpoint: Endpoint, ref: NadRef,
                  diagnostics: list[Diagnostic]) -> None:
    loc = inventory.locate(endpoint.obj)
    diagnostics.append(Diagnostic(
        loc.path, loc.line, f"{endpoint.workload.ref} is attached to NetworkAttachmentDefinition "
        f"{ref}, which is not in the input; its connections on that network are not listed",
        "warning", f"add the NAD (oc get network-attachment-definitions -n {ref.namespace} "
        f"{ref.name} -o yaml), or fix the {NETWORKS_ANNOTATION} annotation"))


def _policies_by_network(inventory: Inventory, cluster: str, nads: set[NadRef],
                         diagnostics: list[Diagnostic]
                         ) -> dict[str, list[tuple[NetworkPolicyModel, K8sObject]]]:
    """Network name -> the MultiNetworkPolicies whose policy-for names one of its NADs."""
    out: dict[str, list[tuple[NetworkPolicyModel, K8sObject]]] = defaultdict(list)
    for obj in inventory.of_kind(MNP_KIND):
        if obj.cluster != cluster:
            continue
        check_group(inventory, obj, MULTUS_GROUP, diagnostics)
        policy = _parse(inventory, obj, diagnostics)
        if policy is None:
            continue
        for name in _targets(inventory, obj, nads, diagnostics):
            out[name].append((policy, obj))
    return out


def _parse(inventory: Inventory, obj: K8sObject,
           diagnostics: list[Diagnostic]) -> NetworkPolicyModel | None:
    ref = f"{namespace_of(obj)}/{obj.name}"
    try:
        policy = parse_policy(obj, kind=MNP_KIND)
    except (PolicyError, SelectorError) as exc:
        diagnostics.append(invalid_object(inventory, obj, f"MultiNetworkPolicy {ref}", exc,
                                          "fix the field: a MultiNetworkPolicy's spec follows "
                                          "NetworkPolicy's rules"))
        return None
    return policy


def _targets(inventory: Inventory, obj: K8sObject, nads: set[NadRef],
             diagnostics: list[Diagnostic]) -> list[str]:
    """Network names of the NADs the policy-for annotation names (and that exist)."""
    text = str(obj.annotations.get(POLICY_FOR_ANNOTATION) or "")
    loc = inventory.locate(obj, "metadata.annotations") if text else inventory.locate(obj)
    ref = f"{namespace_of(obj)}/{obj.name}"
    if not text.strip():
        diagnostics.append(Diagnostic(
            loc.path, loc.line, f"MultiNetworkPolicy {ref} has no {POLICY_FOR_ANNOTATION} "
            "annotation, so it applies to no network", "warning",
            f"name the NADs it is for: {POLICY_FOR_ANNOTATION}: <namespace>/<nad>"))
        return []
    out = []
    for entry in (e for e in text.split(",") if e.strip()):
        target = _ref(entry, namespace_of(obj))
        if target in nads:
            out.append(target.name)
            continue
        diagnostics.append(Diagnostic(
            loc.path, loc.line, f"MultiNetworkPolicy {ref} is for NetworkAttachmentDefinition "
            f"{target}, which is not in the input; it is not applied there", "warning",
            "add the NAD, or fix the policy-for annotation"))
    return out
