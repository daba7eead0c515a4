"""What the inventory keeps of the bulkiest kinds: the fields hcpscan reads, and no more.

A dump's Pods and their controllers (ReplicaSets, Deployments, StatefulSets, DaemonSets,
Jobs, CronJobs) outnumber everything else; each carries affinity, tolerations, probes,
resources, security contexts, container statuses and ``managedFields`` that no rule,
model or reporter reads. Keeping every field made the
inventory grow with the whole input (1.5 GiB at 500 hosted clusters), and every field
was built twice when parse workers sent trees to the main process. So the parse
workers keep only this table's fields of these kinds, before a result leaves them.

The table names the fields read (those ``inventory/shapes.py`` checks the types of, and
a few it does not) down to the container's fields; below that a field is kept whole. Three
widenings keep every result exact:

* ``metadata`` (of the object and of a pod template) is kept whole but for
  ``managedFields``: names, labels, annotations, owners and ``uid`` feed the inventory,
  selectors, owner chains and reports;
* every top-level field is kept (a described one pruned), so the locator still
  recognises a ``List`` entry by its keys and finds lines by composing that entry alone;
* a value whose type does not fit its shape is kept whole, so the shape check finds the
  same first misfit, at the same field, as on the whole object.

A reader of these kinds reads only fields of this table. What may read any field keeps
its kinds whole: a CEL expression's subject, a rule's own JSONPath that leaves the table
(``path_kept``), a ``where`` filter, any rule from a user's rule folder. Each template
says which kinds it reads whole (``Template.reads_whole``), and ``scan.pruned_kinds``
decides per scan from the selected rules.
"""

from __future__ import annotations

import hashlib
import marshal
import re
import struct
import sys
from collections.abc import Callable
from typing import Any

from hcpscan.core.yamldocs import MAX_NODES
from hcpscan.inventory.shapes import ANY_KEY


class _Whole:
    """Keep the value as it is."""


WHOLE = _Whole()
DROP = None  # a field no reader looks at, left out even where every other field is kept
# A keep: WHOLE, a mapping of field to keep (ANY_KEY: every other field; a field missing
# with no ANY_KEY, or DROP: left out), or a one-element list (the keep of every entry).
Keep = _Whole | dict[str, Any] | list[Any]


def _fields(*names: str) -> dict[str, Keep]:
    return dict.fromkeys(names, WHOLE)


_METADATA: Keep = {ANY_KEY: WHOLE, "managedFields": DROP}
# A container: its name and image (who the consumer is), env and envFrom (proxy variables,
# followed into ConfigMaps and Secrets), args and command (flags: listeners, proxy and CA
# files), ports (what it serves), restartPolicy (a native sidecar listens: reachability
# endpoints), volumeMounts (their shape is checked).
_CONTAINER: Keep = _fields("name", "image", "env", "envFrom", "args", "command", "ports",
                           "restartPolicy", "volumeMounts")
_POD_SPEC: Keep = {"containers": [_CONTAINER], "initContainers": [_CONTAINER],
                   # dnsPolicy and hostAliases: whether a proxy's host name is asked of the
                   # cluster's DNS (PRX014)
                   **_fields("hostNetwork", "volumes", "nodeSelector", "dnsPolicy",
                             "hostAliases")}
_WORKLOAD: Keep = {ANY_KEY: WHOLE, "metadata": _METADATA, "spec": {
    **_fields("selector", "replicas"), "template": {"metadata": _METADATA, "spec": _POD_SPEC}}}

_CRONJOB: Keep = {ANY_KEY: WHOLE, "metadata": _METADATA, "spec": {"jobTemplate": {"spec": {
    "template": {"metadata": _METADATA, "spec": _POD_SPEC}}}}}

# The one table: per kind, the fields kept (a top-level field not named is kept whole).
# Pods and their controllers; DeploymentConfigs and ReplicationControllers (OpenShift's
# older pair, whose shapes hcpscan does not check) are kept whole.
KEPT: dict[str, Keep] = {
    "Pod": {ANY_KEY: WHOLE, "metadata": _METADATA, "spec": _POD_SPEC,
            "status": _fields("podIP", "podIPs", "hostIP")},
    "ReplicaSet": _WORKLOAD, "Deployment": _WORKLOAD, "StatefulSet": _WORKLOAD,
    "DaemonSet": _WORKLOAD, "Job": _WORKLOAD, "CronJob": _CRONJOB,
}
# Kinds whose bodies the parse workers prune (when no selected rule reads them whole).
PRUNABLE = frozenset(KEPT)


def kept(kind: str, body: Any) -> Any:
    """``body`` with only the fields of ``KEPT[kind]`` (new containers where pruned; the
    values kept are shared with ``body``)."""
    keep = KEPT.get(kind)
    if keep is None or type(body) is not dict:
        return body
    return _pruned(body, keep)


def _pruned(value: Any, keep: Keep) -> Any:
    if type(keep) is dict:
        if type(value) is not dict:
            return value  # does not fit: the shape check names it
        every = keep.get(ANY_KEY)
        out = {}
        for key, item in value.items():
            sub = keep.get(key, every) if type(key) is str else every
            if sub is None:
                continue
            out[key] = item if sub is WHOLE or item is None else _pruned(item, sub)
        return out
    if type(keep) is list:
        if type(value) is not list:
            return value
        inner = keep[0]
        return [item if item is None else _pruned(item, inner) for item in value]
    return value


_PLAIN_PATH = re.compile(r"\$(?:\.[A-Za-z0-9_-]+|\.\*|\[\*\]|\[[0-9]+\])*")
_STEP = re.compile(r"\.([A-Za-z0-9_-]+|\*)|\[(\*|[0-9]+)\]")


def path_kept(kind: str, jsonpath: str) -> bool:
    """Whether pruning ``kind`` keeps everything the JSONPath can match: a plain path
    (``$.spec.containers[*].env[*].value``) that runs through kept fields; any other
    expression (filters, recursive descent, a kind not pruned) says False."""
    keep = KEPT.get(kind)
    if keep is None or not _PLAIN_PATH.fullmatch(jsonpath):
        return keep is None
    for name, index in _STEP.findall(jsonpath[1:]):
        if keep is WHOLE:
            return True
        if type(keep) is list:
            if not index:
                return False  # a field of a list: matches nothing either way, but say no
            keep = keep[0]
            continue
        if index or name == "*" or type(keep) is not dict:
            return False
        keep = keep.get(name, keep.get(ANY_KEY))
        if keep is None:
            return False
    return keep is WHOLE


# Where each pruned kind holds its pod spec. Replicas of one ReplicaSet, the ReplicaSet and
# its Deployment hold equal pod specs once pruned (what differs - node, status, the
# template hash label - is elsewhere or dropped): the inventory keeps one of them.
_POD_SPEC_AT: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",), **{kind: ("spec", "template", "spec") for kind in (
        "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job")},
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


def _holder(kind: str, body: Any) -> tuple[dict[str, Any], str] | None:
    """(the mapping that holds the pod spec, its key): a mapping pruning made, so
    this object's own."""
    steps = _POD_SPEC_AT.get(kind)
    if steps is None or type(body) is not dict:
        return None
    for step in steps[:-1]:
        body = body.get(step)
        if type(body) is not dict:
            return None
    return (body, steps[-1]) if type(body.get(steps[-1])) is dict else None


_DIGEST = 16  # bytes of a spec's digest
# Prefixes the digest of a spec marshal cannot write, made from its repr: equal reprs do
# not make equal values, so such specs are also compared (``share_spec``).
_BY_REPR = b"r"


def spec_key(kind: str, body: Any, aliased: bool = True, most: int = MAX_NODES,
             written: Callable[[Any], bytes | None] | None = None) -> bytes | None:
    """A digest of the pruned body's pod spec (computed where the parsing happens), by
    which equal specs are found; None when there is none to share, or when the spec may
    not be written out (``_written``): such a spec stays its own. ``aliased``: whether the
    spec may hold YAML aliases at all (False: its text has none, so nothing to look for);
    ``most``: the most values it may write (the load's ``--max-nodes``).

    Made from the spec's bytes in marshal's version 2, which writes no back-references
    and tells every type apart: equal bytes are values of the same types, with the same
    contents in the same order (``True`` is not ``1``, ``1`` is not ``1.0``, a mapping's
    keys in another order are other bytes). Two specs with one digest are therefore taken
    for one without comparing them (a 128-bit BLAKE2b digest: the chance that two of a
    million different specs meet is below 10^-26).

    ``written``: the compiled ``_spec_bytes`` (``sources._rebuild.spec_bytes``), whose
    bytes, where it writes the spec, are digested instead of marshal's (under another
    BLAKE2b personalisation: the two kinds of key never meet). They tell the same values
    apart as marshal's (``_spec_bytes``), without making a bytes object of every string."""
    held = _holder(kind, body)
    if held is None:
        return None
    spec = held[0][held[1]]
    if aliased and _written(spec) > most:
        return None
    if written is not None:
        data = written(spec)
        if data is not None:
            return hashlib.blake2b(data, digest_size=_DIGEST, person=_SPEC_BYTES).digest()
    try:  # marshal's version 2 writes no back-references: equal values, equal bytes
        data = marshal.dumps(spec, 2)
    except ValueError:  # a value marshal does not write (a YAML tag's object), or nested
        try:  # past its depth limit (aliases of aliases: ``&a1 [*a0]``, ``&a2 [*a1]``...)
            text = repr(spec)
        except (RecursionError, ValueError):  # nested past repr's limit too: its own spec
            return None
        return _BY_REPR + hashlib.blake2b(text.encode(), digest_size=_DIGEST).digest()
    return hashlib.blake2b(data, digest_size=_DIGEST).digest()


# The personalisation of digests of ``_spec_bytes``' bytes (marshal's have none).
_SPEC_BYTES = b"hcpscan-spec"
_SPEC_DEPTH = 512  # nesting ``_spec_bytes`` writes (deeper: the marshal key decides)
_LONG_LONG = 1 << 63


def _spec_bytes(value: Any) -> bytes | None:
    """The bytes a pod spec's key is a digest of where hcpscan's compiled module is built
    (its ``spec_bytes`` is this function, in C). Each value is a tag, then: for a string,
    a mapping or a list its length (below 256 one byte under a lowercase tag, else 8
    bytes little-endian under an uppercase one) and its UTF-8 bytes or entries in order;
    for an int from 0 to 255 one byte (``i``), any other of 64 bits 8 bytes in two's
    complement (``I``); for a float its 8 bytes as ``struct`` writes them (``-0.0`` is not
    ``0.0``, a NaN is its own bits); None, True and False nothing more. Each tag tells
    how long what follows is, so two values write the same bytes exactly when marshal
    writes the same bytes for them: same types (``True`` is not ``1``), same contents,
    same order. None for what it does not write (the marshal key decides then): an int
    past 64 bits, a string with a lone surrogate, any other type (a subclass, a tuple),
    nesting past ``_SPEC_DEPTH``."""
    out = bytearray()
    return bytes(out) if _spec_write(out, value, 0) else None


def _spec_length(out: bytearray, small: bytes, large: bytes, length: int) -> None:
    out += small + bytes((length,)) if length < 256 else large + length.to_bytes(8, "little")


def _spec_write(out: bytearray, value: Any, depth: int) -> bool:
    if depth > _SPEC_DEPTH:
        return False
    if value is None or value is True or value is False:
        out += b"N" if value is None else b"T" if value is True else b"F"
        return True
    kind = type(value)
    if kind is str:
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        _spec_length(out, b"s", b"S", len(data))
        out += data
    elif kind is int:
        if not -_LONG_LONG <= value < _LONG_LONG:
            return False
        if 0 <= value < 256:
            _spec_length(out, b"i", b"I", value)
        else:
            out += b"I" + (value % (1 << 64)).to_bytes(8, "little")
    elif kind is float:
        out += b"f" + struct.pack("<d", value)
    elif kind is dict:
        _spec_length(out, b"d", b"D", len(value))
        for key, item in value.items():
            if not (_spec_write(out, key, depth + 1) and _spec_write(out, item, depth + 1)):
                return False
    elif kind is list:
        _spec_length(out, b"l", b"L", len(value))
        for item in value:
            if not _spec_write(out, item, depth + 1):
                return False
    else:
        return False
    return True


_ENDLESS = sys.maxsize


def _written(value: Any) -> int:
    """How many values (keys included) marshal's version 2 writes for ``value``: it writes
    what an alias names again at each alias, so a mapping or list that holds itself is
    endless (at two places inside, ``containers: &c [{ports: *c, env: *c}]``, twice as
    many at each level down to marshal's depth limit: never done, all memory taken), and
    aliases of aliases multiply (a "billion laughs"). Each is looked at once."""
    inside: set[int] = set()  # the containers on the way down to the one looked at
    sizes: dict[int, int] = {}  # those whose insides were all looked at
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, leaving = stack.pop()
        children = item.values() if type(item) is dict else item
        if leaving:
            inside.discard(id(item))
            size = 1 + len(item) if type(item) is dict else 1
            for child in children:
                size += sizes[id(child)] if type(child) in _CONTAINERS else 1
            sizes[id(item)] = min(size, _ENDLESS)
            continue
        if id(item) in inside:
            return _ENDLESS
        if id(item) in sizes:
            continue
        inside.add(id(item))
        stack.append((item, True))
        stack.extend((child, False) for child in children if type(child) in _CONTAINERS)
    return sizes.get(id(value), 1)


_CONTAINERS = frozenset((dict, list, tuple))


def share_spec(kind: str, body: Any, key: bytes, specs: dict[bytes, Any]) -> None:
    """Make the pod spec of ``body`` the first one seen under ``key`` (the bodies are
    never changed after loading, so equal values may be one object). A key made from
    marshal's bytes (``spec_key``) is the spec's value; under any other key the two
    specs are compared first."""
    held = _holder(kind, body)
    if held is None:
        return
    holder, name = held
    spec = holder[name]
    first = specs.setdefault(key, spec)
    if first is spec:
        return
    if len(key) == _DIGEST:
        holder[name] = first
        return
    try:
        equal = first == spec
    except RecursionError:  # a YAML alias that holds itself: such a spec stays its own
        equal = False
    if equal:
        holder[name] = first


def exact(key: bytes) -> bool:
    """Whether a key made by ``spec_key`` is the spec's value (not a marked repr digest)."""
    return len(key) == _DIGEST


def leave_spec(kind: str, body: Any) -> None:
    """``None`` in place of the pod spec of ``body`` (the keys keep their order): for a
    body sent to a process that already holds an equal spec (``put_spec``)."""
    held = _holder(kind, body)
    if held is not None:
        held[0][held[1]] = None


def put_spec(kind: str, body: Any, spec: Any) -> bool:
    """Put a pod spec back where ``leave_spec`` left ``None``; False if ``body`` has no
    such place."""
    steps = _POD_SPEC_AT.get(kind)
    if steps is None:
        return False
    for step in steps[:-1]:
        body = body.get(step) if type(body) is dict else None
    if type(body) is not dict or steps[-1] not in body or body[steps[-1]] is not None:
        return False
    body[steps[-1]] = spec
    return True
