"""Build dump-shaped trees from real manifests, with an independent oracle of each object's line.

The oracle does not use hcpscan: objects are read with PyYAML's plain loader
and written back in a known shape, counting lines as they are written.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from pathlib import Path

import yaml

PLURALS = {
    "ConfigMap": "configmaps", "Secret": "secrets", "Service": "services", "Deployment": "deployments",
    "StatefulSet": "statefulsets", "Job": "jobs", "CronJob": "cronjobs", "Role": "roles",
    "RoleBinding": "rolebindings", "ServiceAccount": "serviceaccounts", "Route": "routes",
    "PodDisruptionBudget": "poddisruptionbudgets", "ServiceMonitor": "servicemonitors",
    "PodMonitor": "podmonitors", "PrometheusRule": "prometheusrules",
    "ControlPlaneComponent": "controlplanecomponents", "ImageStream": "imagestreams",
    "SecretProviderClass": "secretproviderclasses", "FeatureGate": "featuregates",
    "HostedCluster": "hostedclusters", "NodePool": "nodepools", "Namespace": "namespaces",
    "NetworkPolicy": "networkpolicies",
}


@dataclass(frozen=True)
class Expected:
    cluster: str
    kind: str
    namespace: str
    name: str
    path: str  # relative to the dump root
    line: int


def real_objects(folder: Path) -> list[dict]:
    out = []
    for path in sorted(folder.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind"):
                out.append(doc)
    return out


def _group(obj: dict) -> str:
    api = obj.get("apiVersion", "v1")
    return api.split("/")[0] if "/" in api else "core"


def _dump(obj: dict) -> str:
    return yaml.safe_dump(obj, default_flow_style=False, sort_keys=False)


def write_list(items: list[dict]) -> tuple[str, list[int]]:
    """A List document; returns its text and the line where each item starts."""
    lines = ["apiVersion: v1", "items:"]
    starts = []
    for item in items:
        starts.append(len(lines) + 1)
        body = _dump(item).splitlines()
        lines.append("- " + body[0])
        lines.extend("  " + line for line in body[1:])
    lines += ["kind: List", "metadata:", "  resourceVersion: \"\""]
    return "\n".join(lines) + "\n", starts


def inspect_tree(objects: list[dict], cluster: str, prefix: str,
                 per_object_kinds: frozenset[str] = frozenset({"Deployment", "Secret"})
                 ) -> tuple[dict[str, str], list[Expected]]:
    """Files of an `oc adm inspect` tree: Lists per kind, and per-object files for some kinds
    (those objects appear twice, as in real dumps, and must be read once)."""
    files: dict[str, str] = {}
    expected: list[Expected] = []
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for obj in objects:
        ns = obj.get("metadata", {}).get("namespace", "")
        groups.setdefault((ns, _group(obj), obj["kind"]), []).append(obj)
    for (ns, group, kind), items in sorted(groups.items()):
        plural = PLURALS[kind]
        if kind == "Namespace":
            for item in items:
                name = item["metadata"]["name"]
                path = f"{prefix}namespaces/{name}/{name}.yaml"
                files[path] = _dump(item)
                expected.append(Expected(cluster, kind, "", name, path, 1))
            continue
        base = f"{prefix}namespaces/{ns}/{group}" if ns else f"{prefix}cluster-scoped-resources/{group}"
        text, starts = write_list(items)
        files[f"{base}/{plural}.yaml"] = text
        for item, line in zip(items, starts):
            expected.append(Expected(cluster, kind, ns, item["metadata"]["name"],
                                     f"{base}/{plural}.yaml", line))
        if kind in per_object_kinds:
            for item in items:
                files[f"{base}/{plural}/{item['metadata']['name']}.yaml"] = _dump(item)
    return files, expected


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def write_tarball(path: Path, files: dict[str, str]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for rel, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
