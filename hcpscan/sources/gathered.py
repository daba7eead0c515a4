"""What a must-gather (or `oc adm inspect` output) collected, so absence is not misread.

A must-gather writes each resource it gathers as ``<group>/<plural>.yaml`` (or a
``<plural>/`` folder) under ``namespaces/<ns>/`` or ``cluster-scoped-resources/``,
and never gathers others: NetworkPolicies, HostedClusters, Kyverno policies.
A kind with no file anywhere in such a dump was not collected, and its absence
says nothing about the cluster. Both tools write a ``timestamp`` file at the top
of what they gathered (the folder holding ``namespaces/``, or its parent);
``hcpscan cluster --save-dump`` writes none, since it lists every kind it needs.

A must-gather also writes the cluster's whole CRD list
(``cluster-scoped-resources/apiextensions.k8s.io/customresourcedefinitions/<plural>.<group>.yaml``):
a custom kind whose CRD is not in it cannot exist on that cluster, so its rules are
not applicable there, and advising ``oc get hostedclusters -A`` would only fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hcpscan.inventory.objects import SYSTEMD_DROPIN
from hcpscan.inventory.resources import plural_of
from hcpscan.inventory.store import UnavailableKind
from hcpscan.sources.interface import Entry
from hcpscan.sources.layout import Placement

TIMESTAMP = "timestamp"
CRD_PLURAL = "customresourcedefinitions"
CRD_GROUP = "apiextensions.k8s.io"

# The API group of each custom kind hcpscan reads (its CRD is ``<plural>.<group>``). Kinds
# served by Kubernetes itself or by OpenShift's aggregated API servers (DeploymentConfig,
# Route) have no CRD and are not listed: their absence from a CRD list says nothing.
CRD_GROUPS = {
    "HostedCluster": "hypershift.openshift.io",
    "NodePool": "hypershift.openshift.io",
    "HostedControlPlane": "hypershift.openshift.io",
    "ClusterPolicy": "kyverno.io",
    "Policy": "kyverno.io",
    "MutatingPolicy": "policies.kyverno.io",
    "NamespacedMutatingPolicy": "policies.kyverno.io",
    "Cluster": "cluster.x-k8s.io",
    "KubeadmConfig": "bootstrap.cluster.x-k8s.io",
    "KubeadmConfigTemplate": "bootstrap.cluster.x-k8s.io",
    "KubeadmControlPlane": "controlplane.cluster.x-k8s.io",
    "KubeadmControlPlaneTemplate": "controlplane.cluster.x-k8s.io",
    "AddOnDeploymentConfig": "addon.open-cluster-management.io",
    "ManagedClusterAddOn": "addon.open-cluster-management.io",
    "ClusterManagementAddOn": "addon.open-cluster-management.io",
    "ManagedCluster": "cluster.open-cluster-management.io",
    "KlusterletConfig": "config.open-cluster-management.io",
    "KlusterletAddonConfig": "agent.open-cluster-management.io",
    "Klusterlet": "operator.open-cluster-management.io",
    "NetworkAttachmentDefinition": "k8s.cni.cncf.io",
    "ClusterUserDefinedNetwork": "k8s.ovn.org",
    "UserDefinedNetwork": "k8s.ovn.org",
    "EgressFirewall": "k8s.ovn.org",
    "HelmRelease": "helm.toolkit.fluxcd.io",
    "App": "application.giantswarm.io",
}


@dataclass(slots=True)
class DumpRoots:
    """Resources with a file in each dump root (keyed by how the user sees the root),
    and the folders holding a ``timestamp`` file."""

    plurals: dict[str, set[str]] = field(default_factory=dict)
    stamped: set[str] = field(default_factory=set)
    crds: dict[str, set[str]] = field(default_factory=dict)  # root -> ``<plural>.<group>``

    def note(self, entry: Entry, placement: Placement) -> None:
        if entry.parts and entry.parts[-1] == TIMESTAMP:
            self.stamped.add(_strip(entry.display, 1))
        if placement.inspect_root is None or placement.plural is None:
            return
        root = _strip(entry.display, len(entry.parts) - len(placement.inspect_root))
        self.plurals.setdefault(root, set()).add(placement.plural)
        if (placement.plural == CRD_PLURAL and placement.group == CRD_GROUP
                and placement.namespace is None and entry.parts[-2] == CRD_PLURAL):
            self.crds.setdefault(root, set()).add(_stem(entry.parts[-1]))

    def crd_lists(self) -> dict[str, frozenset[str]]:
        """The CRD names (``<plural>.<group>``) each gathered dump root lists."""
        gathered = self.gathered()
        return {root: frozenset(names) for root, names in sorted(self.crds.items())
                if root in gathered}

    def gathered(self) -> dict[str, frozenset[str]]:
        """The dump roots a must-gather or `oc adm inspect` wrote, with what they hold."""
        return {root: frozenset(plurals) for root, plurals in sorted(self.plurals.items())
                if root in self.stamped or _strip(root, 1) in self.stamped}


def _strip(display: str, components: int) -> str:
    """``display`` without its last path components (archive members are ``a.tgz!x/y``)."""
    for _ in range(components):
        cut = max(display.rfind("/"), display.rfind("!"))
        display = display[:cut] if cut >= 0 else ""
    return display


def _stem(name: str) -> str:
    for ext in (".yaml", ".yml", ".json"):
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def not_installed(crd_lists: Mapping[str, frozenset[str]], kind: str) -> str | None:
    """Why ``kind`` cannot exist on the dumped cluster(s): every dump root holds a CRD list
    and none lists the kind's CRD; else None."""
    group = CRD_GROUPS.get(kind)
    if group is None or not crd_lists:
        return None
    crd = f"{plural_of(kind)}.{group}"
    if any(crd in names for names in crd_lists.values()):
        return None
    return (f"not installed: the must-gather's CRD list has no {crd}, so the cluster has no "
            f"{kind}")


# Kinds hcpscan reads from a node's files, no API objects: no must-gather gathers them, nor
# can `oc get` list them.
_NODE_FILES = {SYSTEMD_DROPIN: "systemd drop-ins (a node's /etc/systemd/system/*.service.d/*.conf)"}


def not_collected(gathered: Mapping[str, frozenset[str]], kinds: Iterable[str],
                  present: set[str], crd_lists: Mapping[str, frozenset[str]] | None = None
                  ) -> dict[str, UnavailableKind]:
    """Kinds no object of which was read and that a must-gather in the input did not
    collect: their rules say so instead of "no X in the input" (which is what is said, node
    files included, when the input holds no must-gather). A custom kind whose CRD
    the must-gather's CRD list lacks is not installed: nothing of it can exist, so its
    rules are not applicable (never "not collected")."""
    out: dict[str, UnavailableKind] = {}
    crd_lists = {root: names for root, names in (crd_lists or {}).items() if root in gathered}
    for kind in sorted(set(kinds) - present):
        if kind in _NODE_FILES:
            if not gathered:  # no must-gather in the input: the plain "none in the input"
                continue
            out[kind] = UnavailableKind(f"not gathered: a must-gather holds no {_NODE_FILES[kind]}; "
                                        "copy them into the input to check them", may_exist=False)
            continue
        plural = plural_of(kind)
        absent = not_installed(crd_lists, kind) if set(crd_lists) == set(gathered) else None
        if absent is not None:
            out[kind] = UnavailableKind(absent, may_exist=False)
            continue
        if all(plural in plurals for plurals in gathered.values()):
            continue
        out[kind] = UnavailableKind(
            f"not collected: the must-gather does not gather {plural}, so the cluster may "
            f"have some (`oc get {plural} -A -o yaml > {plural}.yaml`, then scan it too)",
            may_exist=False, unseen=True)
    return out
