"""Inventory objects: a Kubernetes (or Kubernetes-like) document plus where it came from."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

MANAGEMENT = "management"

# Kinds the scanner synthesises from files that are not Kubernetes objects.
HCPSCAN_API = "hcpscan.io/v1"
# The record in which a dump saved by `hcpscan cluster --save-dump` lists the kinds it could not read.
UNAVAILABLE_KIND = "UnavailableKinds"
KUBECONFIG = "Kubeconfig"
IGNITION_CONFIG = "IgnitionConfig"
SYSTEMD_DROPIN = "SystemdDropIn"
# An Insights Operator archive keeps a ConfigMap's keys as files with the inside of every PEM
# block anonymized: the keys whose certificates are therefore not in the input.
CONFIGMAP_ANONYMIZED = "hcpscan.io/insights-anonymized-keys"
INSTALL_CONFIG_KIND = "InstallConfig"  # an OpenShift install-config.yaml (apiVersion v1, no kind)


BUILT_DOCUMENT = -1  # SourceLocation.doc_index of objects a tool built from the file


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where a document starts: a file on disk or a member of an archive.

    ``path`` is what a user sees (``dump.tar.gz!ns/x.yaml`` for archive members);
    ``file``/``member`` say how to read the text again; ``doc_index`` and
    ``item_index`` say which YAML document and which ``items[]`` entry it is, so
    a field's own line can be found later without keeping parse trees around.
    """

    path: str
    line: int
    column: int = 1
    file: str = ""
    member: str | None = None
    doc_index: int = 0
    item_index: int | None = None
    # BUILT_DOCUMENT: the object was built from this file (``kubectl kustomize``), not
    # written in it, so its fields have no line of their own.
    # For objects derived from another one (a kubeconfig inside a Secret):
    # the field of the parent document that holds this object's text.
    embedded_in: str | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt by its constructor: pickling every object a parse worker sends field by
        # field through the dataclass's own state methods cost a fifth more each way. The
        # arguments are every field, read in the constructor's order by a getter made from
        # the class's own list: a field added later is never left out, nor passed in
        # another's place.
        return (SourceLocation, _LOCATION_FIELDS(self))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "line": self.line, "column": self.column}
        if self.embedded_in:
            out["field"] = self.embedded_in
        return out


DEFAULT_NAMESPACE = "default"


def namespace_of(obj: K8sObject) -> str:
    """The namespace a namespaced object lands in: one written without
    ``metadata.namespace`` lands in ``default``, as ``kubectl apply`` puts it. The one
    home of that fact: the reachability graph, rules and fixes all ask here."""
    return obj.namespace or DEFAULT_NAMESPACE


@dataclass(slots=True, eq=False)
class K8sObject:
    """One object of the inventory.

    ``kind``/``api_version`` are authoritative (synthetic kinds such as
    ``Kubeconfig`` keep the file's own content in ``body``). ``cluster`` is
    ``management`` unless the layout says otherwise (``hostedcluster-<name>``).
    """

    cluster: str
    api_version: str
    kind: str
    namespace: str
    name: str
    body: dict[str, Any]
    source: SourceLocation
    # The object this one was extracted from, e.g. the Secret holding a kubeconfig.
    origin: K8sObject | None = None
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)
    # True: checked against its kind's shape (inventory/shapes.py) where it was parsed, in
    # a parse worker, and found to fit; the inventory checks every other object itself.
    shape_fits: bool = field(default=False, repr=False)

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt by its constructor (see SourceLocation.__reduce__)
        return (K8sObject, _OBJECT_FIELDS(self))

    @property
    def metadata(self) -> dict[str, Any]:
        meta = self.body.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def labels(self) -> dict[str, str]:
        labels = self.metadata.get("labels")
        return labels if isinstance(labels, dict) else {}

    @property
    def annotations(self) -> dict[str, str]:
        ann = self.metadata.get("annotations")
        return ann if isinstance(ann, dict) else {}

    @property
    def held_in(self) -> tuple[K8sObject, str] | None:
        """(the object, its field) this document is written inside of - a kubeconfig or an
        install-config stored in a Secret or ConfigMap key - where findings about it belong."""
        if self.origin is not None and self.source.embedded_in:
            return self.origin, self.source.embedded_in
        return None

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0] if "/" in self.api_version else ""

    @property
    def ref(self) -> str:
        """Human reference: ``[cluster:]Kind ns/name``."""
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        prefix = "" if self.cluster == MANAGEMENT else f"{self.cluster}:"
        return f"{prefix}{self.kind} {where}"

    @property
    def identity(self) -> tuple[str, str, str, str, str]:
        return (self.cluster, self.group, self.kind, self.namespace, self.name)

    def get(self, path: str | tuple[str | int, ...], default: Any = None) -> Any:
        """Plain dotted-path access (``spec.networking.clusterNetwork``); lists by ``[n]``."""
        from hcpscan.inventory.fieldpath import get_path

        return get_path(self.body, path, default)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cluster": self.cluster,
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "source": self.source.to_json(),
        }
        if self.origin is not None:
            out["origin"] = {
                "kind": self.origin.kind,
                "namespace": self.origin.namespace,
                "name": self.origin.name,
            }
        return out


# Each class's fields, in its constructor's order (``__reduce__``).
_LOCATION_FIELDS: Callable[[SourceLocation], tuple[Any, ...]] = attrgetter(
    *(f.name for f in fields(SourceLocation)))
_OBJECT_FIELDS: Callable[[K8sObject], tuple[Any, ...]] = attrgetter(*(f.name for f in fields(K8sObject)))


def anonymized_keys(obj: K8sObject) -> frozenset[str]:
    """The keys of a ConfigMap whose certificates an Insights archive anonymized."""
    annotations = obj.metadata.get("annotations")
    value = annotations.get(CONFIGMAP_ANONYMIZED) if isinstance(annotations, dict) else None
    return frozenset(k for k in value.split(",") if k) if isinstance(value, str) else frozenset()


# A PEM block whose inside the Insights Operator replaced.
_ANONYMIZED_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]+-----\s*ANONYMIZED\s*-----END [A-Z0-9 ]+-----")
_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]+-----")


def anonymized(text: str) -> bool:
    """Every PEM block of ``text`` was anonymized (an Insights archive): its certificates are
    not in the input."""
    blocks = _PEM.findall(text)
    return bool(blocks) and len(_ANONYMIZED_PEM.findall(text)) == len(blocks)
