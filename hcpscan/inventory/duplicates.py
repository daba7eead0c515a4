"""One object written more than once in the input: said for every kind, the same way.

A cluster holds one object per kind, namespace and name, so two documents with the same
identity are either a mistake (the last one applied wins) or - usual in a GitOps
repository - the same object for different clusters: a staging and a production overlay,
one folder per environment or per version. A scan of the whole repository reads them
together; each copy is still judged by the rules where it is written, and what reads the
cluster as a whole (the reachability graph behind connectivity and the HCP rules) reads
the first. The warning names both places and what to do in either case: scan each
environment's folder on its own, or keep one copy.

An object written without a namespace is the same object as one in ``default`` when the
kind is namespaced, which the input tells when another object of the kind names one. A
namespace written on a kind the API server serves cluster-scoped (kustomize's namespace
transformer sets one on kinds it does not know, a ClusterManagementAddOn among them) is
dropped there: such copies are one object whatever namespace each overlay wrote.
"""

from __future__ import annotations

import os
import shlex
from collections import defaultdict
from collections.abc import Callable, Iterable

from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory.objects import DEFAULT_NAMESPACE, HCPSCAN_API, K8sObject, SourceLocation

# Kinds served cluster-scoped, by API group ("" = core): whole groups, then single kinds.
CLUSTER_SCOPED_GROUPS = frozenset({"config.openshift.io"})
CLUSTER_SCOPED_KINDS = frozenset({
    ("", "Namespace"), ("", "Node"), ("", "PersistentVolume"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("storage.k8s.io", "StorageClass"), ("scheduling.k8s.io", "PriorityClass"),
    ("networking.k8s.io", "IngressClass"),
    ("policy.networking.k8s.io", "AdminNetworkPolicy"),
    ("policy.networking.k8s.io", "BaselineAdminNetworkPolicy"),
    ("machineconfiguration.openshift.io", "MachineConfig"),
    ("machineconfiguration.openshift.io", "MachineConfigPool"),
    ("operator.openshift.io", "Network"), ("operator.openshift.io", "IngressController"),
    ("cluster.open-cluster-management.io", "ManagedCluster"),
    ("cluster.open-cluster-management.io", "ManagedClusterSet"),
    ("addon.open-cluster-management.io", "ClusterManagementAddOn"),
    ("operator.open-cluster-management.io", "Klusterlet"),
    ("operator.open-cluster-management.io", "ClusterManager"),
    ("config.open-cluster-management.io", "KlusterletConfig"),
    ("cert-manager.io", "ClusterIssuer"), ("kyverno.io", "ClusterPolicy"),
    ("crd.projectcalico.org", "GlobalNetworkPolicy"),
    ("cilium.io", "CiliumClusterwideNetworkPolicy"),
})


def cluster_scoped(group: str, kind: str) -> bool:
    """Whether the API server serves ``kind`` of ``group`` cluster-scoped (a namespace
    written on it is dropped)."""
    return group in CLUSTER_SCOPED_GROUPS or (group, kind) in CLUSTER_SCOPED_KINDS


def duplicate_diagnostics(objects: Iterable[K8sObject],
                          locate: Callable[[K8sObject], SourceLocation]) -> list[Diagnostic]:
    """Warnings about the copies after the first of each identity: one per object written
    twice in one file, else one per place the first copies are in, naming the places
    where they are written again (overlays of one repository repeat dozens of objects)."""
    objects = [o for o in objects if o.name and o.api_version != HCPSCAN_API and o.origin is None]
    namespaced = {(o.group, o.kind) for o in objects if o.namespace}
    copies: dict[tuple[str, str, str, str, str], list[K8sObject]] = defaultdict(list)
    for obj in objects:
        namespace = "" if cluster_scoped(obj.group, obj.kind) else obj.namespace or (
            DEFAULT_NAMESPACE if (obj.group, obj.kind) in namespaced else "")
        copies[(obj.cluster, obj.group, obj.kind, namespace, obj.name)].append(obj)
    out = []
    # the place of the first copies -> (where they are written again, objects, a first copy)
    places: dict[str, tuple[list[str], list[str], SourceLocation, SourceLocation]] = {}
    for found in copies.values():
        if len(found) < 2:
            continue
        first = locate(found[0])
        for obj in found[1:]:
            here = locate(obj)
            split = _places(first, here) if first.path != here.path else None
            if split is None:
                out.append(Diagnostic(
                    here.path, here.line, f"{_named(found)} is defined again (first at "
                    f"{first.path}:{first.line}); {_HELD}", "warning", _advice([])))
                continue
            again, names, _, _ = places.setdefault(split[0], ([], [], first, here))
            if split[1] not in again:
                again.append(split[1])
            names.append(_named(found))
    for one, (again, names, first, here) in places.items():
        unique = list(dict.fromkeys(names))
        shown = ", ".join(unique[:_NAMED]) + (f" and {len(unique) - _NAMED} more"
                                              if len(unique) > _NAMED else "")
        what = f"{unique[0]} is" if len(unique) == 1 else f"{len(unique)} objects are"
        extra = f", {len(names)} copies after the first" if len(names) > len(unique) else ""
        out.append(Diagnostic(
            here.path, here.line, f"{what} written both in {one} and in "
            f"{', '.join(again)} ({shown + extra if len(unique) > 1 else extra[2:] or 'once'}; "
            f"first at {first.path}:{first.line}); {_HELD}",
            "warning", _advice([one, *again])))
    return out


_NAMED = 3  # objects named in a warning about places


def _named(found: list[K8sObject]) -> str:
    """The object the copies are, as the cluster holds it: a cluster-scoped kind without
    the namespaces written on it."""
    first = found[0]
    written = list(dict.fromkeys(o.namespace for o in found if o.namespace))
    if not written or not cluster_scoped(first.group, first.kind):
        return first.ref
    return (f"{first.kind} {first.name} (cluster-scoped: the API server drops the namespace"
            f"{'s' if len(written) > 1 else ''} {' and '.join(written)} written on it)")
_HELD = ("a cluster holds one object of a kind and name: the rules judge each copy, "
         "connectivity reads the first")


def _advice(places: list[str]) -> str:
    if not places:
        return "keep one of the two: applied together, the last one wins"
    scans = ", then ".join(f"hcpscan scan {shlex.quote(p)}" for p in places)
    return (f"if they are for different clusters or environments (overlays), scan each on its "
            f"own ({scans}); if one cluster gets all, keep one copy (the last one applied wins)")


def _places(first: SourceLocation, again: SourceLocation) -> tuple[str, str] | None:
    """The two folders (or files) under the two places' common folder that hold them: what
    to scan on its own. None for archive members, which a scan cannot name on their own."""
    if first.member is not None or again.member is not None:
        return None
    try:
        common = os.path.commonpath([first.path, again.path])
    except ValueError:  # one absolute, one relative: nothing in common to split at
        return None
    rest_one = os.path.relpath(first.path, common).split(os.sep)
    rest_other = os.path.relpath(again.path, common).split(os.sep)
    return os.path.join(common, rest_one[0]), os.path.join(common, rest_other[0])
