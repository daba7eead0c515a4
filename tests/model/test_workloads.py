"""The workload an object is, read from what its controllers write (names, ownerReferences,
pod-template-hash), never guessed from application labels."""

from __future__ import annotations

import pytest

from hcpscan.inventory.objects import K8sObject, SourceLocation
from hcpscan.model.workloads import workload_name


def _obj(kind: str, name: str, labels: dict | None = None, owner: tuple[str, str] | None = None,
         generate: str | None = None) -> K8sObject:
    meta: dict = {"name": name, "namespace": "cert-manager", "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
                                    "controller": True, "uid": "u"}]
    if generate:
        meta["generateName"] = generate
    return K8sObject("management", "v1", kind, "cert-manager", name, {"metadata": meta},
                     SourceLocation("x.yaml", 1))


HASH = {"pod-template-hash": "6b8f9c4d7c"}


@pytest.mark.parametrize(("obj", "expected"), [
    (_obj("Deployment", "cert-manager"), "cert-manager"),
    # a Deployment's Pod: its ReplicaSet owner less the hash
    (_obj("Pod", "cert-manager-6b8f9c4d7c-x2k4p", HASH, ("ReplicaSet", "cert-manager-6b8f9c4d7c")),
     "cert-manager"),
    # its owner reference dropped (an edited export): generateName, then the name
    (_obj("Pod", "cert-manager-6b8f9c4d7c-x2k4p", HASH, generate="cert-manager-6b8f9c4d7c-"),
     "cert-manager"),
    (_obj("Pod", "cert-manager-6b8f9c4d7c-x2k4p", HASH), "cert-manager"),
    (_obj("Pod", "cert-manager-webhook-6b8f9c4d7c-q7wzn", HASH), "cert-manager-webhook"),
    # without the hash label nothing says where the workload's name ends
    (_obj("Pod", "cert-manager-6b8f9c4d7c-x2k4p"), "cert-manager-6b8f9c4d7c-x2k4p"),
    # a suffix the apiserver never generates (vowels): a name a person gave
    (_obj("Pod", "cert-manager-6b8f9c4d7c-abcde", HASH), "cert-manager-6b8f9c4d7c-abcde"),
    # a bare ReplicaSet's Pod (no pod-template-hash): the ReplicaSet
    (_obj("Pod", "proxy-rs-x2k4p", owner=("ReplicaSet", "proxy-rs")), "proxy-rs"),
    (_obj("Pod", "node-exporter-x2k4p", owner=("DaemonSet", "node-exporter")), "node-exporter"),
    (_obj("Pod", "etcd-0", owner=("StatefulSet", "etcd")), "etcd"),
    (_obj("ReplicaSet", "cert-manager-6b8f9c4d7c", HASH, ("Deployment", "cert-manager")),
     "cert-manager"),
    (_obj("ReplicaSet", "cert-manager-6b8f9c4d7c", HASH), "cert-manager"),
    (_obj("Pod", "kube-apiserver-master-0"), "kube-apiserver-master-0"),
    (_obj("Secret", "cert-manager-6b8f9c4d7c-x2k4p", HASH), "cert-manager-6b8f9c4d7c-x2k4p"),
])
def test_the_workload_of(obj: K8sObject, expected: str):
    assert workload_name(obj) == expected


def test_names_match_the_object_or_its_workload():
    """A glob written for a Pod's own name keeps matching it (custom rules' applies_to.names
    predate workload names); the workload's name matches too."""
    from hcpscan.model.workloads import names_match

    pod = _obj("Pod", "cert-manager-6b8f9c4d7c-x2k4p", HASH, ("ReplicaSet", "cert-manager-6b8f9c4d7c"))
    assert names_match(pod, ["cert-manager-*"])  # the Pod's own name only
    assert names_match(pod, ["cert-manager-6b8f9c4d7c-x2k4p"])
    assert names_match(pod, ["cert-manager"])  # its workload
    assert not names_match(pod, ["cert-manager-webhook*"])
