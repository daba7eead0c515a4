"""Reading meaning out of dump paths: must-gather / ``oc adm inspect`` and ``hypershift dump``.

Layouts (DOMAIN.md §8)::

    [must-gather.local.<id>/<image-dir>/]namespaces/<ns>/<ns>.yaml
    ...namespaces/<ns>/<group>/<plural>.yaml            a List
    ...namespaces/<ns>/<group>/<plural>/<name>.yaml     one object
    ...namespaces/<ns>/pods/<pod>/<pod>.yaml            (logs below it)
    ...cluster-scoped-resources/<group>/<plural>[/<name>].yaml
    hostedcluster-<name>/namespaces/...                 the guest cluster of a hypershift dump

The functions here are pure: they look at path parts only, so directories and
archive members are treated alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hcpscan.inventory.objects import MANAGEMENT

_GUEST = re.compile(r"^hostedcluster-(?P<name>.+)$")
_YAML = (".yaml", ".yml", ".json")

NOISE_PLURALS = frozenset({"events"})


@dataclass(frozen=True, slots=True)
class Placement:
    cluster: str
    # Parts up to and including the folder holding namespaces/ or
    # cluster-scoped-resources/: objects are unique within one such root.
    inspect_root: tuple[str, ...] | None = None
    plural: str | None = None
    namespace: str | None = None
    is_log: bool = False
    group: str | None = None  # the API group folder (``core`` for the core group)


def cluster_of(parts: tuple[str, ...]) -> str:
    cluster = MANAGEMENT
    for part in parts[:-1]:
        if _GUEST.match(part):
            cluster = part
    return cluster


def _stem(name: str) -> str:
    for ext in _YAML:
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def place(parts: tuple[str, ...]) -> Placement:
    cluster = cluster_of(parts)
    root_at = None
    for i in range(len(parts) - 1):
        if parts[i] in ("namespaces", "cluster-scoped-resources"):
            root_at = i
    if root_at is None:
        return Placement(cluster)
    root = parts[:root_at]
    rest = parts[root_at + 1 :]
    if parts[root_at] == "namespaces":
        return _place_namespaced(cluster, root, rest)
    return _place_cluster_scoped(cluster, root, rest)


def _place_namespaced(cluster: str, root: tuple[str, ...], rest: tuple[str, ...]) -> Placement:
    if not rest:
        return Placement(cluster)
    ns = rest[0]
    name = rest[-1]
    is_log = name.endswith(".log") or "logs" in rest[1:-1]
    plural: str | None = None
    group: str | None = None
    if len(rest) == 2 and _stem(name) == ns:
        plural = "namespaces"
    elif len(rest) >= 3 and rest[1] == "pods":
        plural = "pods"
    elif len(rest) == 3:  # <ns>/<group>/<plural>.yaml
        plural, group = _stem(name), rest[1]
    elif len(rest) == 4:  # <ns>/<group>/<plural>/<name>.yaml
        plural, group = rest[2], rest[1]
    return Placement(cluster, root, plural, ns, is_log, group)


def _place_cluster_scoped(cluster: str, root: tuple[str, ...], rest: tuple[str, ...]) -> Placement:
    plural: str | None = None
    if len(rest) == 2:
        plural = _stem(rest[1])
    elif len(rest) == 3:
        plural = rest[1]
    group = rest[0] if plural is not None else None
    return Placement(cluster, root, plural, None, rest[-1].endswith(".log") if rest else False,
                     group)
