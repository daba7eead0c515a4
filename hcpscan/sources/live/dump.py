"""``--save-dump DIR``: what a live scan read, written in must-gather layout.

``hcpscan scan DIR`` then reads the same objects offline (DOMAIN.md §8)::

    DIR/namespaces/<ns>/<ns>.yaml                      the Namespace
    DIR/namespaces/<ns>/<group>/<plural>.yaml          a List (core group: "core")
    DIR/cluster-scoped-resources/<group>/<plural>.yaml a List

What could not be read is written too, so the offline scan judges exactly the
rules the live one judged (``DIR/hcpscan-unavailable-kinds.yaml``: forbidden
kinds stay not evaluable, kinds the server did not serve stay absent).

Secrets are redacted as must-gather redacts them: each value becomes
``"<n> bytes long"`` except ``tls.crt``, ``ca.crt`` and ``service-ca.crt``
(certificates are public and rules read them). The last-applied-configuration
annotation, which repeats the values in clear, is elided too. Passwords in
proxy URLs anywhere else (ConfigMap data, container env, HostedCluster proxy
settings), the very values hcpscan flags, are masked as reports mask them
(``user:****@host``), so the rules still see them as credentials offline.
``keep_secrets`` keeps all of it.
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from hcpscan.core.redact import mask_values
from hcpscan.inventory.objects import HCPSCAN_API, UNAVAILABLE_KIND
from hcpscan.inventory.store import UnavailableKind
from hcpscan.sources.live.lister import ListedResource

UNAVAILABLE_FILE = "hcpscan-unavailable-kinds.yaml"
KEPT_SECRET_KEYS = frozenset({"tls.crt", "ca.crt", "service-ca.crt"})
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class DumpError(Exception):
    pass


def check_dump_dir(path: Path) -> None:
    """Refuse a folder that already holds something: two dumps must never mix."""
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise DumpError(f"{path} already exists and is not an empty folder")


def write_dump(root: Path, listed: list[ListedResource], keep_secrets: bool = False,
               unavailable: Mapping[str, UnavailableKind] | None = None) -> int:
    """Write every listed object (and the kinds that could not be read); return how
    many files were written."""
    check_dump_dir(root)
    files: dict[Path, list[dict[str, Any]]] = defaultdict(list)
    if unavailable:
        files[Path(UNAVAILABLE_FILE)].append(unavailable_record(unavailable))
    for result in listed:
        resource = result.resource
        group = resource.group or "core"
        for item in result.items:
            if not keep_secrets:
                secret = resource.kind == "Secret" and not resource.group
                item = mask_values(redact_secret(item) if secret else item)
            meta = item.get("metadata") or {}
            name, ns = str(meta.get("name") or ""), str(meta.get("namespace") or "")
            if resource.kind == "Namespace" and not resource.group:
                files[Path("namespaces", name, f"{name}.yaml")].append(item)
            elif resource.namespaced:
                files[Path("namespaces", ns, group, f"{resource.plural}.yaml")].append(item)
            else:
                files[Path("cluster-scoped-resources", group, f"{resource.plural}.yaml")].append(item)
    inside = root.resolve()
    try:
        for relative, items in sorted(files.items()):
            target = root / relative
            # names come from the server: a namespace "../../x" must not write outside DIR
            if not target.resolve().is_relative_to(inside) or "\0" in str(relative):
                raise DumpError(f"the cluster returned an object whose name would be written "
                                f"outside {root} ({relative}); nothing more written")
            target.parent.mkdir(parents=True, exist_ok=True)
            parts = relative.parts
            single = (parts[0] == "namespaces" and len(parts) == 3) or len(parts) == 1
            document: dict[str, Any] = items[0] if single else _as_list(items)
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


def unavailable_record(unavailable: Mapping[str, UnavailableKind]) -> dict[str, Any]:
    return {"apiVersion": HCPSCAN_API, "kind": UNAVAILABLE_KIND, "metadata": {"name": "live-read"},
            "kinds": [{"kind": kind, "reason": u.reason, "mayExist": u.may_exist}
                      for kind, u in sorted(unavailable.items())]}


def unavailable_from(record: dict[str, Any]) -> dict[str, UnavailableKind]:
    """The kinds a saved dump says could not be read (entries it cannot read are left out)."""
    out = {}
    for entry in record.get("kinds") or []:
        if isinstance(entry, dict) and isinstance(entry.get("kind"), str) and entry.get("reason"):
            out[entry["kind"]] = UnavailableKind(str(entry["reason"]), bool(entry.get("mayExist", True)))
    return out
