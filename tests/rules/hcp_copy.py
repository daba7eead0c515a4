"""A HostedCluster's input as a dump of its HCP namespace alone gives it: each HostedCluster
replaced by the HostedControlPlane the HyperShift operator writes from it
(hypershift-operator/controllers/hostedcluster/hostedcluster_controller.go,
reconcileHostedControlPlane), in its HCP namespace, with the ConfigMaps it names copied there."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import yaml

from hcpscan.model.hostedcluster import hcp_namespace

YAML_SUFFIXES = (".yaml", ".yml")


def hosted_control_plane(hc: dict[str, Any]) -> dict[str, Any]:
    """The HostedControlPlane the operator reconciles from ``hc`` (the fields hcpscan reads)."""
    meta, spec = hc.get("metadata") or {}, hc.get("spec") or {}
    namespace, name = meta.get("namespace", "clusters"), meta["name"]
    out_spec: dict[str, Any] = {}
    for key in ("networking", "services", "issuerURL", "controllerAvailabilityPolicy",
                "infrastructureAvailabilityPolicy", "dns", "infraID", "clusterID", "etcd"):
        if key in spec:
            out_spec[key] = copy.deepcopy(spec[key])
    platform = copy.deepcopy(spec.get("platform") or {})
    if platform.get("type") == "Agent":
        platform["type"] = "None"  # the operator's one platform change
    out_spec["platform"] = platform
    if "configuration" in spec:
        out_spec["configuration"] = copy.deepcopy(spec["configuration"])
    if spec.get("additionalTrustBundle"):
        out_spec["additionalTrustBundle"] = {"name": "user-ca-bundle"}
    if isinstance(spec.get("release"), dict):
        out_spec["releaseImage"] = spec["release"].get("image")
    return {"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedControlPlane",
            "metadata": {"name": name, "namespace": hcp_namespace(namespace, name),
                         "annotations": {"hypershift.openshift.io/cluster": f"{namespace}/{name}"}},
            "spec": out_spec, **({"status": hc["status"]} if "status" in hc else {})}


def _hosted_clusters(doc: Any) -> list[dict[str, Any]]:
    if isinstance(doc, dict) and doc.get("kind") == "HostedCluster":
        return [doc]
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        return [i for i in doc["items"] if isinstance(i, dict) and i.get("kind") == "HostedCluster"]
    return []


def _configmaps_named(hc: dict[str, Any]) -> set[tuple[str, str]]:
    spec = hc.get("spec") or {}
    ns = (hc.get("metadata") or {}).get("namespace", "clusters")
    names = set()
    trusted = (((spec.get("configuration") or {}).get("proxy") or {}).get("trustedCA") or {})
    if trusted.get("name"):
        names.add((ns, trusted["name"]))
    return names


def add_control_planes(source: Path, target: Path) -> int:
    """``target``: the HostedControlPlanes of ``source``'s HostedClusters and the ConfigMaps
    copied into their HCP namespaces (the same clusters' copies, to scan beside ``source``)."""
    target.mkdir(parents=True)
    copy_as_hcp_namespace_only(source, target / "all")
    found = []
    for path in sorted((target / "all").rglob("*")):
        if path.suffix in YAML_SUFFIXES and path.is_file():
            for doc in yaml.safe_load_all(path.read_text()):
                items = doc.get("items") if isinstance(doc, dict) else None
                for obj in (items if isinstance(items, list) else [doc]):
                    if obj and (obj.get("kind") == "HostedControlPlane" or (
                            path.name == "hcp-namespace-configmaps.yaml")):
                        found.append(obj)
    shutil.rmtree(target / "all")
    (target / "control-planes.yaml").write_text(yaml.safe_dump_all(found, sort_keys=False))
    return sum(1 for o in found if o.get("kind") == "HostedControlPlane")


def copy_as_hcp_namespace_only(source: Path, target: Path) -> int:
    """``source`` (a file or folder) copied to ``target`` with every HostedCluster replaced by
    its HostedControlPlane; ConfigMaps its proxy names copied into the HCP namespace. Returns
    how many HostedClusters were replaced."""
    shutil.copytree(source, target) if source.is_dir() else (
        target.mkdir(parents=True), shutil.copy(source, target / source.name))
    files = [p for p in sorted(target.rglob("*")) if p.suffix in YAML_SUFFIXES and p.is_file()]
    docs = {p: list(yaml.safe_load_all(p.read_text())) for p in files}
    clusters = [hc for ds in docs.values() for d in ds for hc in _hosted_clusters(d)]
    wanted = {ref: hcp_namespace((hc.get("metadata") or {}).get("namespace", "clusters"),
                                 hc["metadata"]["name"])
              for hc in clusters for ref in _configmaps_named(hc)}
    copies: list[dict[str, Any]] = []
    for path, ds in docs.items():
        changed = False
        for i, doc in enumerate(ds):
            if isinstance(doc, dict) and doc.get("kind") == "HostedCluster":
                ds[i], changed = hosted_control_plane(doc), True
            elif isinstance(doc, dict) and isinstance(doc.get("items"), list):
                items = doc["items"]
                for j, item in enumerate(items):
                    if isinstance(item, dict) and item.get("kind") == "HostedCluster":
                        items[j], changed = hosted_control_plane(item), True
            items = doc.get("items") if isinstance(doc, dict) else None
            for obj in (items if isinstance(items, list) else [doc]):
                if isinstance(obj, dict) and obj.get("kind") == "ConfigMap":
                    meta = obj.get("metadata") or {}
                    key = (meta.get("namespace"), meta.get("name"))
                    if key in wanted:  # the operator syncs it into the HCP namespace
                        cm = copy.deepcopy(obj)
                        cm["metadata"]["namespace"] = wanted[key]
                        copies.append(cm)
        if changed:
            path.write_text(yaml.safe_dump_all(ds, sort_keys=False))
    # every namespace holds kube-root-ca.crt: a dump of the HCP namespace lists its ConfigMaps
    copies += [{"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "kube-root-ca.crt", "namespace": ns}, "data": {}}
               for ns in sorted(set(wanted.values()))]
    if copies:
        (target / "hcp-namespace-configmaps.yaml").write_text(yaml.safe_dump_all(copies))
    return len(clusters)
