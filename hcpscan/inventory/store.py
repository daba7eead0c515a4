"""The inventory: every object the scan read, indexed for the queries rules and analyses make."""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hcpscan.core.diagnostics import Diagnostic, SkipRecord
from hcpscan.core.yamldocs import YamlSyntaxError, node_overrun, parse_documents
from hcpscan.inventory.duplicates import cluster_scoped, duplicate_diagnostics
from hcpscan.inventory.fieldpath import Step, format_path, parse_path
from hcpscan.inventory.jsonpaths import compile_query
from hcpscan.inventory.locator import Locator, MemberReader
from hcpscan.inventory.objects import (
    DEFAULT_NAMESPACE,
    HCPSCAN_API,
    INSTALL_CONFIG_KIND,
    KUBECONFIG,
    MANAGEMENT,
    SYSTEMD_DROPIN,
    K8sObject,
    SourceLocation,
)
from hcpscan.inventory.placeholders import Unrendered, render_command, template_variable
from hcpscan.inventory.secrets import secret_values
from hcpscan.inventory.shapes import Misfit, first_misfit, remembering

KUBECONFIG_SECRET_KEYS = ("kubeconfig", "value")
# Where OpenShift keeps an install-config inside an object: the installer leaves it in
# ConfigMap kube-system/cluster-config-v1 (key install-config); Hive's ClusterDeployments
# read it from a Secret (key install-config.yaml).
INSTALL_CONFIG_CONFIGMAP = ("kube-system", "cluster-config-v1", "install-config")
INSTALL_CONFIG_SECRET_KEY = "install-config.yaml"


@dataclass(frozen=True, slots=True)
class UnavailableKind:
    """A kind the source could not read in full (live scans), and why.

    ``may_exist`` tells the two cases apart: the API server refused or failed
    the list (objects may exist unseen, so every rule that reads the kind is
    not evaluable), or it does not serve the kind at all (nothing can exist,
    as in a dump without such objects).
    """

    reason: str  # e.g. "kind not served: ..." or "forbidden: grant list on secrets ..."
    may_exist: bool
    # Never looked for (a must-gather does not gather the kind): the rules that check
    # the kind are not evaluable when none was read; rules that only consult it are
    # judged on what the input holds, as offline scans always are.
    unseen: bool = False


class Inventory:
    def __init__(self, objects: Iterable[K8sObject], diagnostics: Iterable[Diagnostic] = (),
                 skipped: SkipRecord | None = None,
                 unavailable: Mapping[str, UnavailableKind] | None = None,
                 read_member: MemberReader | None = None) -> None:
        """``read_member`` reads an archive member again to find a field's line (offline
        sources pass theirs; without it, fields in archive members keep their document's
        line)."""
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        self._locator = Locator(read_member)
        # id -> (object, its fields left as ${VAR}): see _unrendered
        self._unrendered_fields: dict[int, tuple[K8sObject, tuple[Unrendered, ...]]] = {}
        self.objects: list[K8sObject] = self._fitting(objects)
        self.skipped = skipped or SkipRecord()
        # Kinds a live source could not list (offline inputs: always empty).
        self.unavailable: dict[str, UnavailableKind] = dict(unavailable or {})
        self._derive_kubeconfigs()
        self._derive_install_configs()
        self._by_kind: dict[str, list[K8sObject]] = defaultdict(list)
        self._by_ref: dict[tuple[str, str, str, str], list[K8sObject]] = defaultdict(list)
        for obj in self.objects:
            self._by_kind[obj.kind].append(obj)
            self._by_ref[(obj.cluster, obj.kind, obj.namespace, obj.name)].append(obj)
        self._declare_duplicates()
        self._by_namespace: dict[tuple[str, str, str], list[K8sObject]] | None = None
        self._derived: dict[str, Any] = {}

    def _declare_duplicates(self) -> None:
        """Objects written more than once (see duplicates.py), looked for among the few
        names the index holds twice, or once without a namespace and once in default."""
        refs = self._by_ref
        candidates = [o for (cluster, kind, namespace, name), found in refs.items()
                      if len(found) > 1 or (not namespace and (cluster, kind, DEFAULT_NAMESPACE,
                                                               name) in refs)
                      or (namespace == DEFAULT_NAMESPACE and (cluster, kind, "", name) in refs)
                      for o in found]
        # a cluster-scoped kind written with namespaces (kustomize overlays): one object
        scoped: dict[tuple[str, str, str], list[K8sObject]] = {}
        for (cluster, kind, _namespace, name), found in refs.items():
            if found and cluster_scoped(found[0].group, kind):
                scoped.setdefault((cluster, kind, name), []).extend(found)
        listed = {id(o) for o in candidates}
        candidates += [o for found in scoped.values() if len(found) > 1 for o in found
                       if id(o) not in listed]
        if candidates:
            self.diagnostics.extend(duplicate_diagnostics(candidates, self.locate))

    # -- queries ---------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.objects)

    def __iter__(self) -> Iterator[K8sObject]:
        return iter(self.objects)

    @property
    def kinds(self) -> set[str]:
        return set(self._by_kind)

    @property
    def clusters(self) -> list[str]:
        found = {o.cluster for o in self.objects}
        return sorted(found, key=lambda c: (c != MANAGEMENT, c))

    def of_kind(self, *kinds: str) -> list[K8sObject]:
        if len(kinds) == 1:
            return list(self._by_kind.get(kinds[0], ()))
        return [o for k in kinds for o in self._by_kind.get(k, ())]

    def in_namespace(self, kind: str, namespace: str, cluster: str = MANAGEMENT) -> list[K8sObject]:
        """Objects of a kind in one namespace (as written: ``""`` is not ``default``),
        in inventory order; the index is built on first use."""
        if self._by_namespace is None:
            index: dict[tuple[str, str, str], list[K8sObject]] = defaultdict(list)
            for obj in self.objects:
                index[(obj.cluster, obj.kind, obj.namespace)].append(obj)
            self._by_namespace = dict(index)
        return list(self._by_namespace.get((cluster, kind, namespace), ()))

    def derived(self, key: str, build: Callable[[Inventory], Any]) -> Any:
        """A value computed from the objects on first use and kept (an index that
        analyses consult per object would otherwise be rebuilt per object)."""
        if key not in self._derived:
            self._derived[key] = build(self)
        return self._derived[key]

    def get(self, kind: str, namespace: str, name: str, cluster: str = MANAGEMENT) -> K8sObject | None:
        found = self._by_ref.get((cluster, kind, namespace, name))
        return found[0] if found else None

    def get_namespaced(self, kind: str, namespace: str, name: str,
                       cluster: str = MANAGEMENT) -> K8sObject | None:
        """The namespaced object ``kind namespace/name``, where one written without a
        namespace is in ``default`` (see objects.namespace_of)."""
        found = self.get(kind, namespace, name, cluster)
        if found is None and namespace in (DEFAULT_NAMESPACE, ""):
            found = self.get(kind, "" if namespace else DEFAULT_NAMESPACE, name, cluster)
        return found

    def query(self, kind: str | None = None, *, api_version: str | None = None,
              namespace: str | None = None, name: str | None = None,
              labels: Mapping[str, str] | None = None, cluster: str | None = None) -> list[K8sObject]:
        if kind and namespace is not None and name is not None and cluster is not None:
            pool = self._by_ref.get((cluster, kind, namespace, name), [])  # one object, usually
        else:
            pool = self._by_kind.get(kind, []) if kind else self.objects
        out = []
        for obj in pool:
            if api_version is not None and obj.api_version != api_version:
                continue
            if namespace is not None and obj.namespace != namespace:
                continue
            if name is not None and obj.name != name:
                continue
            if cluster is not None and obj.cluster != cluster:
                continue
            if labels and any(obj.labels.get(k) != v for k, v in labels.items()):
                continue
            out.append(obj)
        return out

    def jsonpath(self, obj: K8sObject, expr: str) -> list[tuple[Any, tuple[Step, ...]]]:
        """Values matched by a JSONPath expression, each with its field path."""
        return compile_query(expr).matches(obj.body)

    def namespace_labels(self, namespace: str, cluster: str = MANAGEMENT) -> dict[str, str]:
        ns = self.get("Namespace", "", namespace, cluster)
        labels = dict(ns.labels) if ns else {}
        labels.setdefault("kubernetes.io/metadata.name", namespace)
        return labels

    def counts(self) -> list[tuple[str, str, str, int]]:
        """(cluster, kind, namespace, count), sorted."""
        counter = Counter((o.cluster, o.kind, o.namespace) for o in self.objects)
        return sorted(((c, k, n, v) for (c, k, n), v in counter.items()),
                      key=lambda row: (row[0] != MANAGEMENT, row[0], row[1], row[2]))

    # -- source locations -----------------------------------------------------

    def locate(self, obj: K8sObject, path: str | tuple[Step, ...] = ()) -> SourceLocation:
        """Where a field stands in the user's file: its own line when it exists,
        else its nearest present parent, else the document start."""
        steps = parse_path(path)
        if obj.origin is not None and obj.source.embedded_in:
            return self.locate(obj.origin, obj.source.embedded_in)
        if obj.kind == SYSTEMD_DROPIN and obj.api_version == HCPSCAN_API:
            lines = obj.body.get("environmentLines", {})
            if len(steps) >= 2 and steps[0] == "environment" and steps[1] in lines:
                return dataclasses.replace(obj.source, line=lines[steps[1]], column=1)
            ignored = obj.body.get("ignoredLines") or []
            if len(steps) >= 2 and steps[0] == "ignoredLines" and isinstance(steps[1], int) \
                    and isinstance(ignored, list) and 0 <= steps[1] < len(ignored) \
                    and isinstance(ignored[steps[1]], list) and ignored[steps[1]] \
                    and isinstance(ignored[steps[1]][0], int):
                return dataclasses.replace(obj.source, line=ignored[steps[1]][0], column=1)
            return obj.source
        if not steps:
            return obj.source
        found = self._locator.field(obj.source, obj.body, steps)
        if found is None:
            return obj.source
        line, column = found
        return dataclasses.replace(obj.source, line=line, column=column)

    # -- checked objects -------------------------------------------------------

    def _fitting(self, objects: Iterable[K8sObject]) -> list[K8sObject]:
        """The objects whose fields have the types the API server requires (see
        ``shapes``); each other one is an error at its offending field, and left out:
        it cannot exist in a cluster, and no command may meet it."""
        kept, objects = [], list(objects)
        with remembering():  # (checked where it was parsed: a parse worker's object that fits)
            misfits = [first_misfit(obj.kind, obj.body)
                       if obj.api_version != HCPSCAN_API and not obj.shape_fits else None
                       for obj in objects]
        for obj, misfit in zip(objects, misfits, strict=True):
            if misfit is not None and template_variable(obj.get(misfit[0])) is not None:
                misfit = self._unrendered(obj, misfit)
            if misfit is None:
                kept.append(obj)
                continue
            path, found, expected = misfit
            loc = self.locate(obj, path)
            self.diagnostics.append(Diagnostic(
                loc.path, loc.line, f"{obj.ref} is left out: {format_path(path)} is {found}, "
                f"not {expected}", hint="the API server rejects this object, so it does not exist "
                                        "in a cluster; fix the field's type"))
        return kept

    def _unrendered(self, obj: K8sObject, misfit: Misfit | None) -> Misfit | None:
        """A template's object whose fields are whole ``${VAR}`` placeholders where the API
        wants a mapping or list (clusterctl substitutes YAML there): each is a warning and
        taken out of the object's body (copied along its path, never changed in place), so
        the object is kept; the rules that check it are not evaluable for it (see
        ``unrendered_in``). Returns the first misfit that is no placeholder, if any."""
        found: list[Unrendered] = []
        while misfit is not None:
            path = misfit[0]
            value = obj.get(path)
            variable = template_variable(value)
            if variable is None or not path:
                break
            loc = self.locate(obj, path)
            self.diagnostics.append(Diagnostic(
                loc.path, loc.line, f"{obj.ref} {format_path(path)} is the unrendered template "
                f"variable {str(value).strip()} (clusterctl/envsubst), where the API wants "
                f"{misfit[2]}: the rules that check {obj.ref} are not evaluable for it",
                "warning", "render the template with its variables set and scan the result: "
                + render_command(loc.path)))
            found.append(Unrendered(path, str(value).strip(), variable))
            obj.body = _without(obj.body, path)
            misfit = first_misfit(obj.kind, obj.body)
        if found:
            self._unrendered_fields[id(obj)] = (obj, tuple(found))
        return misfit

    @property
    def has_unrendered(self) -> bool:
        """Whether any object has a field left as an unrendered template variable."""
        return bool(self._unrendered_fields)

    def unrendered_in(self, obj: K8sObject) -> tuple[Unrendered, ...]:
        """The fields of ``obj`` left as unrendered template variables (usually none)."""
        held = self._unrendered_fields.get(id(obj))
        return held[1] if held is not None and held[0] is obj else ()

    # -- derived objects -------------------------------------------------------

    def _derive_kubeconfigs(self) -> None:
        derived = []
        for secret in self.objects:
            if secret.kind != "Secret":
                continue
            values = secret_values(secret)
            for key in KUBECONFIG_SECRET_KEYS:
                value = values.get(key)
                if value is None or value.text is None:
                    continue
                body = _kubeconfig_body(value.text)
                if body is None:
                    continue
                field = "data" if key in (secret.body.get("data") or {}) else "stringData"
                if isinstance(body, str):
                    self._unreadable_kubeconfig(secret, (field, key), body)
                    continue
                loc = dataclasses.replace(secret.source, embedded_in=f"{field}.{key}")
                derived.append(K8sObject(secret.cluster, HCPSCAN_API, KUBECONFIG, secret.namespace,
                                         f"{secret.name}/{key}", body, loc, origin=secret))
        self.objects.extend(derived)

    def _unreadable_kubeconfig(self, secret: K8sObject, path: tuple[Step, ...], why: str) -> None:
        """A key that names clusters but holds no readable kubeconfig: the rules on
        kubeconfigs (proxy-url, CA data) would pass over it unsaid."""
        loc = self.locate(secret, path)
        self.diagnostics.append(Diagnostic(
            loc.path, loc.line, f"{secret.ref} {format_path(path)} looks like a kubeconfig (it "
            f"names clusters) but cannot be read: {why}; no rule checks it", "warning",
            "make the key hold one kubeconfig YAML document (kubectl config view --raw "
            "--kubeconfig FILE reads it back)"))

    def _derive_install_configs(self) -> None:
        derived = []
        for holder, field, text in _embedded_install_configs(self.objects):
            try:
                docs = list(parse_documents(text))
            except YamlSyntaxError:
                continue
            if len(docs) != 1 or not isinstance(docs[0].body, dict):
                continue
            loc = dataclasses.replace(holder.source, embedded_in=format_path(field))
            derived.append(K8sObject(holder.cluster, HCPSCAN_API, INSTALL_CONFIG_KIND,
                                     holder.namespace, f"{holder.name}/{field[1]}",
                                     docs[0].body, loc, origin=holder))
        self.objects.extend(derived)


def _embedded_install_configs(objects: Iterable[K8sObject]
                              ) -> Iterator[tuple[K8sObject, tuple[str, str], str]]:
    """(object, field, text) of every install-config held in a ConfigMap or Secret."""
    namespace, name, key = INSTALL_CONFIG_CONFIGMAP
    for obj in objects:
        if obj.kind == "ConfigMap" and (obj.namespace, obj.name) == (namespace, name):
            text = (obj.body.get("data") or {}).get(key)
            if isinstance(text, str):
                yield obj, ("data", key), text
        elif obj.kind == "Secret":
            value = secret_values(obj).get(INSTALL_CONFIG_SECRET_KEY)
            if value is not None and value.text is not None:
                field = "data" if INSTALL_CONFIG_SECRET_KEY in (obj.body.get("data") or {}) \
                    else "stringData"
                yield obj, (field, INSTALL_CONFIG_SECRET_KEY), value.text


def _kubeconfig_body(text: str) -> dict[str, Any] | str | None:
    """The kubeconfig the text holds; why not, when it names clusters but cannot be
    read as one; None when it is no kubeconfig."""
    if "clusters" not in text:
        return None
    overrun = node_overrun(text)
    if overrun is not None:
        return overrun.message
    try:
        docs = list(parse_documents(text))
    except YamlSyntaxError as exc:
        return f"{exc.message}" + (f" (line {exc.line} of the key)" if exc.line else "")
    if len(docs) != 1 or not isinstance(docs[0].body, dict):
        return "it is not one YAML mapping"
    body = docs[0].body
    if "clusters" not in body and body.get("kind") != "Config":
        return None  # the word is in a value only (an ignition stub's URL naming clusters-...)
    return body if isinstance(body.get("clusters"), list) else "its clusters is not a list"


def _without(body: dict[str, Any], path: tuple[Step, ...]) -> dict[str, Any]:
    """``body`` without the field at ``path``, copied along the path only (the rest is
    shared, as parsed objects share their pod specs)."""
    def drop(node: Any, steps: tuple[Step, ...]) -> Any:
        head, rest = steps[0], steps[1:]
        if isinstance(node, dict):
            copy = dict(node)
            if rest:
                copy[head] = drop(node[head], rest)
            else:
                copy.pop(head, None)
            return copy
        if isinstance(node, list) and isinstance(head, int):
            items = list(node)
            if rest:
                items[head] = drop(node[head], rest)
            else:
                items[head] = None  # an entry written empty: accepted by every shape
            return items
        return node
    return drop(body, path)  # type: ignore[no-any-return]
