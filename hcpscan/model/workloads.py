"""Which workload an object is: the name a rule that picks workloads by name matches.

A Deployment, DaemonSet or StatefulSet is itself. The objects their controllers make are
named after them, exactly, and say so in their ownerReferences and labels:

* the Deployment controller names each ReplicaSet ``<deployment>-<pod-template-hash>`` and
  labels it (and its pod template) ``pod-template-hash: <hash>``;
* a ReplicaSet makes its Pods with ``generateName: <replicaset>-``, so a Pod is named
  ``<deployment>-<pod-template-hash>-<5 characters>`` (the apiserver's random suffix,
  from ``bcdfghjklmnpqrstvwxz2456789``), and is labelled with the same hash;
* a DaemonSet's Pods are ``<daemonset>-<5 characters>`` and a StatefulSet's
  ``<statefulset>-<ordinal>``, each with its owner in ``ownerReferences``.

So a Pod's workload is read, in this order, from its controller ownerReference (a
ReplicaSet's name less ``-<pod-template-hash>`` when the Pod carries that label and the
name ends so; another controller's name as it is), else — the owner's reference dropped,
as in a hand-edited export — from ``generateName`` or its own name, cut the same way
only where ``pod-template-hash`` and the suffix agree. Labels such as
``app.kubernetes.io/name`` or ``app`` name an application, not a workload (a chart gives
several Deployments one such label), so they are never read as the name: a rule matches
them with its own label selector. An object no rule of these describes (a static pod, a
bare Pod, any other kind) is its own name.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any

from hcpscan.inventory import K8sObject

POD_TEMPLATE_HASH = "pod-template-hash"
# the characters of an apiserver-generated name suffix (k8s.io/apimachinery utilrand)
_SUFFIX = re.compile(r"-[bcdfghjklmnpqrstvwxz2456789]{5}$")
# The kinds that own workloads (a controller ownerReference names one). The analyses read
# them too, to find a Pod's owner in the input.
WORKLOAD_OWNERS = frozenset({"ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job",
                             "CronJob", "DeploymentConfig", "ReplicationController"})


def workload_name(obj: K8sObject) -> str:
    """The name of the workload ``obj`` is or belongs to (see the module docstring)."""
    if obj.kind == "ReplicaSet":
        owner = _controller(obj)
        if owner is not None and owner[0] == "Deployment":
            return owner[1]
        return _less_hash(obj.name, obj) or obj.name
    if obj.kind != "Pod":
        return obj.name
    owner = _controller(obj)
    if owner is not None:
        kind, name = owner
        return (_less_hash(name, obj) or name) if kind == "ReplicaSet" else name
    generate = obj.metadata.get("generateName")
    if isinstance(generate, str) and generate.endswith("-") and obj.labels.get(POD_TEMPLATE_HASH):
        return _less_hash(generate[:-1], obj) or obj.name
    if _SUFFIX.search(obj.name):
        return _less_hash(_SUFFIX.sub("", obj.name), obj) or obj.name
    return obj.name


def names_match(obj: K8sObject, patterns: Any) -> bool:
    """Whether one of the glob ``patterns`` names ``obj``: its own name (a rule written for
    one Pod's name keeps matching it) or the name of the workload it belongs to."""
    own, workload = obj.name, workload_name(obj)
    return any(fnmatch.fnmatchcase(own, p) or (workload != own and fnmatch.fnmatchcase(workload, p))
               for p in patterns)


def _less_hash(name: str, obj: K8sObject) -> str:
    """``name`` less its ``-<pod-template-hash>`` when ``obj`` carries that hash label and
    the name ends with it; '' otherwise."""
    digest = obj.labels.get(POD_TEMPLATE_HASH)
    if isinstance(digest, str) and digest and name.endswith(f"-{digest}") \
            and len(name) > len(digest) + 1:
        return name[: -len(digest) - 1]
    return ""


def _controller(obj: K8sObject) -> tuple[str, str] | None:
    """(kind, name) of the workload controller among ``obj``'s ownerReferences."""
    owners: Any = obj.metadata.get("ownerReferences")
    for owner in owners if isinstance(owners, list) else []:
        if isinstance(owner, dict) and owner.get("controller") and \
                owner.get("kind") in WORKLOAD_OWNERS and isinstance(owner.get("name"), str):
            return str(owner["kind"]), str(owner["name"])
    return None
