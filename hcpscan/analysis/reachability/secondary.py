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
* a secondary network has no outside addresses of its own in the list, and the
  addresses of pods on it are not in the input: an ``ipBlock`` peer matches no
  workload, with a warning naming the rule.
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.reachability.coverage import MULTUS_GROUP
from hcpscan.analysis.reachability.endpoints import (
    VM_KINDS,
    Endpoint,
    EndpointClass,
    Workload,
    namespace_of,
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
from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import K8sObject
from hcpscan.sources.interface import Diagnostic

NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
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
        (no tiers, no EgressFirewall); an ipBlock selects no pod, as their addresses on
        the network are not in the input."""
        own = ClusterModel(cluster.cluster, self.classes, self.policies, cluster.namespaces)
        return own, dataclasses.replace(options, ipblock_selects_pods=False)


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
        items = json.loads(text)
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
        meta = template.get("metadata") if isinstance(template.get("metadata"), dict) else {}
        annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
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
    members: dict[str, dict[int, list[Endpoint]]] = defaultdict(lambda: defaultdict(list))
    missing: set[tuple[int, NadRef]] = set()
    for klass in classes:
        for endpoint in klass.endpoints:
            for ref in endpoint_attachments(endpoint, inventory, diagnostics):
                if ref in nads:
                    if endpoint not in members[ref.name][klass.index]:
                        members[ref.name][klass.index].append(endpoint)
                elif (id(endpoint.obj), ref) not in missing:
                    missing.add((id(endpoint.obj), ref))
                    _warn_missing(inventory, endpoint, ref, diagnostics)
    if not members:
        return []
    policies = _policies_by_network(inventory, cluster, nads, diagnostics)
    out = []
    for name in sorted(members):
        own = [dataclasses.replace(classes[i], index=k, endpoints=eps, _workloads=(-1, []))
               for k, (i, eps) in enumerate(sorted(members[name].items()))]
        out.append(SecondaryNetwork(secondary_network(name), own, policies.get(name, [])))
    return out


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
                         diagnostics: list[Diagnostic]) -> dict[str, list[NetworkPolicyModel]]:
    """Network name -> the MultiNetworkPolicies whose policy-for names one of its NADs."""
    out: dict[str, list[NetworkPolicyModel]] = defaultdict(list)
    for obj in inventory.of_kind(MNP_KIND):
        if obj.cluster != cluster:
            continue
        check_group(inventory, obj, MULTUS_GROUP, diagnostics)
        policy = _parse(inventory, obj, diagnostics)
        if policy is None:
            continue
        for name in _targets(inventory, obj, nads, diagnostics):
            out[name].append(policy)
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
    for rule in policy.ingress + policy.egress:
        for peer in rule.peers or ():
            if peer.ip_block is not None:
                loc = inventory.locate(obj, peer.field)
                diagnostics.append(Diagnostic(
                    loc.path, loc.line, f"MultiNetworkPolicy {ref} {rule.direction} rule "
                    f"#{rule.index + 1}: ipBlock {peer.text} is taken to match no workload (their "
                    "addresses on the secondary network are not in the input)", "warning",
                    "check by hand which pods of the network hold addresses in the block"))
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
