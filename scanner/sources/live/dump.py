"""``--save-dump DIR``: what a live scan read, written in must-gather layout.

``hcpscan scan DIR`` then reads the same objects offline (DOMAIN.md §8)::

    DIR/namespaces/<ns>/<ns>.yaml                      the Namespace
    DIR/namespaces/<ns>/<group>/<plural>.yaml          a List (core group: "core")
    DIR/cluster-scoped-resources/<group>/<plural>.yaml a List

Secrets are redacted as must-gather redacts them: each value becomes
``"<n> bytes long"`` except ``tls.crt``, ``ca.crt`` and ``service-ca.crt``
(certificates are public and rules read them). The last-applied-configuration
annotation, which repeats the values in clear, is elided too.
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from scanner.sources.live.lister import ListedResource

KEPT_SECRET_KEYS = frozenset({"tls.crt", "ca.crt", "service-ca.crt"})
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class DumpError(Exception):
    pass


def check_dump_dir(path: Path) -> None:
    """Refuse a folder that already holds something: two dumps must never mix."""
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise DumpError(f"{path} already exists and is not an empty folder")


def write_dump(root: Path, listed: list[ListedResource], keep_secrets: bool = False) -> int:
    """Write every listed object; return how many files were written."""
    check_dump_dir(root)
    files: dict[Path, list[dict[str, Any]]] = defaultdict(list)
    for result in listed:
        resource = result.resource
        group = resource.group or "core"
        for item in result.items:
            if resource.kind == "Secret" and not resource.group and not keep_secrets:
                item = redact_secret(item)
            meta = item.get("metadata") or {}
            name, ns = str(meta.get("name") or ""), str(meta.get("namespace") or "")
            if resource.kind == "Namespace" and not resource.group:
                files[Path("namespaces", name, f"{name}.yaml")].append(item)
            elif resource.namespaced:
                files[Path("namespaces", ns, group, f"{resource.plural}.yaml")].append(item)
            else:
                files[Path("cluster-scoped-resources", group, f"{resource.plural}.yaml")].append(item)
    try:
        for relative, items in sorted(files.items()):
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            document: dict[str, Any] = (items[0] if relative.parts[0] == "namespaces"
                                        and len(relative.parts) == 3 else _as_list(items))
            target.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True),
                              encoding="utf-8")
    except OSError as exc:
        raise DumpError(f"cannot write the dump to {root}: {exc.strerror or exc}") from None
    return len(files)


def redact_secret(secret: dict[str, Any]) -> dict[str, Any]:
    redacted = copy.deepcopy(secret)
    data = redacted.get("data")
    if isinstance(data, dict):
        redacted["data"] = {k: (v if k in KEPT_SECRET_KEYS else f"{_decoded_length(v)} bytes long")
                            for k, v in data.items()}
    string_data = redacted.get("stringData")
    if isinstance(string_data, dict):
        redacted["stringData"] = {k: (v if k in KEPT_SECRET_KEYS else f"{len(str(v).encode())} bytes long")
                                  for k, v in string_data.items()}
    annotations = (redacted.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict) and LAST_APPLIED in annotations:
        annotations[LAST_APPLIED] = "elided"
    return redacted


def _decoded_length(value: Any) -> int:
    try:
        return len(base64.b64decode(str(value), validate=True))
    except (binascii.Error, ValueError):
        return len(str(value).encode())


def _as_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}
