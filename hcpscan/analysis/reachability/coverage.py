"""Policy-like objects the reachability engine does not evaluate.

An answer that leaves out a policy that filters traffic is wrong without
saying so: a Calico GlobalNetworkPolicy denying everything, an Istio
AuthorizationPolicy, a MultiNetworkPolicy on a secondary network. So every
object in the input whose kind filters or isolates traffic and that the
engine does not evaluate is collected here, per cluster and kind; the
connection list, the graph's queries and the rules built on them carry the
list and say their answer excludes it.

What counts as policy-like:

* known kinds of CNIs and meshes that filter traffic (``KNOWN``);
* a kind named ``...NetworkPolicy`` of any API group but the evaluated ones
  (Calico's, Antrea's ``ClusterNetworkPolicy``...);
* any kind whose API group contains ``policy`` (an unknown policy CRD),
  except groups known to hold no traffic filter (``NOT_TRAFFIC``:
  PodDisruptionBudgets, OCM governance policies that target *other*
  clusters, policy reports).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import K8sObject

POLICY_GROUP_WORD = "policy"
NETWORK_POLICY_SUFFIX = "NetworkPolicy"  # of any group: a traffic filter by its name
MULTUS_GROUP = "k8s.cni.cncf.io"

# (API group, kind) -> what to call it. Kinds listed here are policy-like
# whatever their group's name.
KNOWN: dict[tuple[str, str], str] = {
    ("crd.projectcalico.org", "NetworkPolicy"): "Calico NetworkPolicy",
    ("crd.projectcalico.org", "GlobalNetworkPolicy"): "Calico GlobalNetworkPolicy",
    ("crd.projectcalico.org", "StagedNetworkPolicy"): "Calico StagedNetworkPolicy",
    ("crd.projectcalico.org", "StagedGlobalNetworkPolicy"): "Calico StagedGlobalNetworkPolicy",
    ("projectcalico.org", "NetworkPolicy"): "Calico NetworkPolicy",
    ("projectcalico.org", "GlobalNetworkPolicy"): "Calico GlobalNetworkPolicy",
    ("cilium.io", "CiliumNetworkPolicy"): "CiliumNetworkPolicy",
    ("cilium.io", "CiliumClusterwideNetworkPolicy"): "CiliumClusterwideNetworkPolicy",
    ("security.istio.io", "AuthorizationPolicy"): "Istio AuthorizationPolicy",
    ("policy.networking.k8s.io", "AdminNetworkPolicy"): "AdminNetworkPolicy",
    ("policy.networking.k8s.io", "BaselineAdminNetworkPolicy"): "BaselineAdminNetworkPolicy",
    ("k8s.ovn.org", "EgressFirewall"): "OVN-Kubernetes EgressFirewall",
    ("k8s.ovn.org", "UserDefinedNetwork"): "OVN-Kubernetes UserDefinedNetwork",
    ("k8s.ovn.org", "ClusterUserDefinedNetwork"): "OVN-Kubernetes ClusterUserDefinedNetwork",
    ("k8s.cni.cncf.io", "MultiNetworkPolicy"): "MultiNetworkPolicy",
    # Not a filter but a network: pods attached to it talk on it, so an answer that leaves
    # secondary networks out (the queries, exposure) must say so.
    (MULTUS_GROUP, "NetworkAttachmentDefinition"):
        "NetworkAttachmentDefinition (its secondary network is not evaluated here)",
    ("network.openshift.io", "EgressNetworkPolicy"): "OpenShift SDN EgressNetworkPolicy",
}

# API groups with "policy" in their name whose objects filter no traffic of the
# cluster they are in.
NOT_TRAFFIC = frozenset({
    "policy",  # PodDisruptionBudget, PodSecurityPolicy, Eviction
    "policy.open-cluster-management.io",  # OCM governance: enforced on managed clusters
    "wgpolicyk8s.io",  # PolicyReport / ClusterPolicyReport: results, not rules
})

# (API group, kind) the engine evaluates: never reported here.
EVALUATED: frozenset[tuple[str, str]] = frozenset({
    ("networking.k8s.io", "NetworkPolicy"),
    ("policy.networking.k8s.io", "AdminNetworkPolicy"),
    ("policy.networking.k8s.io", "BaselineAdminNetworkPolicy"),
    ("k8s.ovn.org", "EgressFirewall"),  # but dnsName rules: egressfirewall.py warns
    ("k8s.ovn.org", "UserDefinedNetwork"),  # primary ones: networks.py
    ("k8s.ovn.org", "ClusterUserDefinedNetwork"),
})

# Secondary networks: the connection list, the diff and --explain evaluate them
# (secondary.py), and the graph's questions between workloads (``secondary_evaluated``);
# the exposure analysis and the reachability rules answer for primary networks only, so
# they keep naming them.
SECONDARY_KINDS: frozenset[tuple[str, str]] = frozenset({
    (MULTUS_GROUP, "NetworkAttachmentDefinition"),
    (MULTUS_GROUP, "MultiNetworkPolicy"),
})
CONNECTION_LIST_EVALUATED = EVALUATED | SECONDARY_KINDS
_EVALUATED_KIND_NAMES = frozenset(kind for _, kind in CONNECTION_LIST_EVALUATED)

# Kinds to read from a pruned dump or a live cluster for this check: every kind
# named above (unknown policy CRDs are found by their group, ``POLICY_GROUP_WORD``).
POLICY_LIKE_KINDS: tuple[str, ...] = tuple(sorted({kind for _, kind in KNOWN}))


def policy_label(obj: K8sObject, evaluated: frozenset[tuple[str, str]] = EVALUATED) -> str | None:
    """What to call ``obj`` when it is a policy-like object the engine does not
    evaluate; ``None`` when it is evaluated or filters no traffic."""
    return kind_label(obj.group, obj.kind, evaluated)


def kind_label(group: str, kind: str,
               evaluated: frozenset[tuple[str, str]] = EVALUATED) -> str | None:
    """``policy_label`` of a kind, before any object of it is read (API discovery)."""
    key = (group, kind)
    if (MULTUS_GROUP, kind) in SECONDARY_KINDS:  # read by kind, whatever the group is spelt
        key = (MULTUS_GROUP, kind)
    if key in evaluated:
        return None
    if key in KNOWN:
        return KNOWN[key]
    if kind.endswith(NETWORK_POLICY_SUFFIX):  # Antrea's ClusterNetworkPolicy, Calico's staged ones
        return f"{kind} of API group {group or '(core)'}"
    if POLICY_GROUP_WORD in group and group not in NOT_TRAFFIC:
        return f"{kind} (a {group} policy kind hcpscan does not know)"
    return None


def kinds_named_alike(kinds: tuple[str, ...]) -> bool:
    """Whether an object of one of ``kinds`` may be ``same_name_other_group``: False
    answers it for every object of them at once."""
    return not _EVALUATED_KIND_NAMES.isdisjoint(kinds)


def same_name_other_group(obj: K8sObject) -> bool:
    """``obj`` is a policy-like kind the engine does not evaluate although its kind name
    is one it does (Calico's ``crd.projectcalico.org`` NetworkPolicy): matching by kind
    name must not take it for the evaluated one; answers declare it as excluded."""
    return (obj.kind in _EVALUATED_KIND_NAMES  # every subject of every rule asks
            and policy_label(obj, CONNECTION_LIST_EVALUATED) is not None)


@dataclass(frozen=True, slots=True)
class UnevaluatedKind:
    """Every object of one policy-like kind of one cluster that no answer reflects."""

    cluster: str
    label: str
    api_version: str
    objects: tuple[K8sObject, ...]

    @property
    def names(self) -> list[str]:
        return [f"{o.namespace}/{o.name}" if o.namespace else o.name for o in self.objects]

    def __str__(self) -> str:
        shown = ", ".join(self.names[:3]) + (f" (+{len(self.objects) - 3})"
                                             if len(self.objects) > 3 else "")
        return f"{self.label} ({self.api_version}): {shown}"

    def to_json(self) -> dict[str, object]:
        return {"cluster": self.cluster, "kind": self.objects[0].kind, "label": self.label,
                "apiVersion": self.api_version, "objects": self.names}


def unevaluated_policies(inventory: Inventory,
                         evaluated: frozenset[tuple[str, str]] = EVALUATED) -> list[UnevaluatedKind]:
    """Policy-like objects of the inventory the engine leaves out, per cluster and kind."""
    found: dict[tuple[str, str, str], list[K8sObject]] = defaultdict(list)
    labels: dict[tuple[str, str], str | None] = {}  # by apiVersion and kind: a fleet has ~100
    for obj in inventory.objects:
        key = (obj.api_version, obj.kind)
        if key in labels:
            label = labels[key]
        else:
            label = labels[key] = policy_label(obj, evaluated)
        if label is not None:
            found[(obj.cluster, label, obj.api_version)].append(obj)
    return [UnevaluatedKind(cluster, label, api_version,
                            tuple(sorted(objs, key=lambda o: (o.namespace, o.name))))
            for (cluster, label, api_version), objs in sorted(found.items(), key=lambda kv: kv[0])]


SECONDARY_FROM_OUTSIDE = ("NetworkAttachmentDefinition (evaluated between workloads; what reaches "
                          "its pods from outside over the network itself is not)")


def secondary_evaluated(kinds: list[UnevaluatedKind], outside: bool) -> list[UnevaluatedKind]:
    """What an answer that evaluates secondary networks between workloads still leaves
    out: MultiNetworkPolicies and NADs are no longer named; with ``outside`` sources in
    the answer, the NADs stay, saying that traffic from outside over them is not."""
    out = []
    for kind in kinds:
        key = (MULTUS_GROUP, kind.objects[0].kind)
        if key not in SECONDARY_KINDS:
            out.append(kind)
        elif outside and kind.objects[0].kind == "NetworkAttachmentDefinition":
            out.append(UnevaluatedKind(kind.cluster, SECONDARY_FROM_OUTSIDE, kind.api_version,
                                       kind.objects))
    return out


def exclusion_note(kinds: list[UnevaluatedKind]) -> str:
    """One sentence for a result that leaves these out ('' when nothing is left out)."""
    if not kinds:
        return ""
    multi = len({k.cluster for k in kinds}) > 1
    parts = [f"{k.cluster}: {k}" if multi else str(k) for k in kinds]
    return "answer excludes policy objects hcpscan does not evaluate: " + "; ".join(parts)


def unevaluated_diagnostics(inventory: Inventory, kinds: list[UnevaluatedKind]) -> list[Diagnostic]:
    out = []
    for kind in kinds:
        loc = inventory.locate(kind.objects[0])
        count = len(kind.objects)
        out.append(Diagnostic(
            loc.path, loc.line,
            f"{count} {kind.label} object{'s' if count > 1 else ''} ({kind.api_version}) "
            f"not evaluated: {', '.join(kind.names[:5])}{' ...' if count > 5 else ''}; "
            "connectivity answers and reachability rules exclude "
            f"{'them' if count > 1 else 'it'}", "warning",
            "what they allow or deny is not reflected: check by hand the connections of the "
            "workloads they apply to"))
    return out


def read_unevaluated(inventory: Inventory, diagnostics: list[Diagnostic],
                     evaluated: frozenset[tuple[str, str]] = EVALUATED) -> list[UnevaluatedKind]:
    """``unevaluated_policies``, with a warning per kind added to ``diagnostics``."""
    kinds = unevaluated_policies(inventory, evaluated)
    diagnostics.extend(unevaluated_diagnostics(inventory, kinds))
    return kinds
