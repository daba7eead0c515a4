"""Listing what the rules need from a live cluster, and turning API objects into inventory objects.

Each resource is listed in pages (``limit``/``continue``); an expired continue
token (410 Gone) restarts that list from the beginning. A list whose continue
tokens go round in a circle, or that brings more items or bytes than its budget,
ends with a warning and its kind is not evaluable (what it read is not used:
rules would judge part of a kind as all of it). Lists run in a bounded
thread pool. A list the server refuses (403) or fails does not end the scan:
its kind is recorded as unavailable, with the permission to grant, so exactly
the rules that need it become not evaluable.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from hcpscan.core.diagnostics import Diagnostic
from hcpscan.core.yamldocs import MAX_DEPTH, lone_surrogate_at, nested_too_deep
from hcpscan.inventory.fieldpath import mapping_at
from hcpscan.inventory.objects import KUBECONFIG, MANAGEMENT, K8sObject, SourceLocation
from hcpscan.inventory.resources import MADE_FROM
from hcpscan.inventory.store import UnavailableKind
from hcpscan.sources.live.client import ApiError, Connection, TransportError
from hcpscan.sources.live.discovery import BUILT_IN_KINDS, ApiResource, Discovery

MAX_PAGES = 10_000  # per list: 5 million objects at the default page size
MAX_RESTARTS = 3  # per list, after expired continue tokens
MAX_ITEMS_PER_LIST = 1_000_000  # per kind (and namespace): above any real cluster's count
MAX_BYTES_PER_LIST = 512 << 20  # per kind (and namespace), as the server sent it
# All the lists of one read together, as the servers sent them: every list is held until
# the rules run, and parsed JSON takes about 3.4 times its size in Python objects, so
# 1 GiB of answers is about 3.5 GiB held - what a 2-core, 7 GB CI runner survives.
MAX_BYTES_TOTAL = 1 << 30
CLUSTER_SCOPED = "_cluster"
RBAC_HINT = "grant it to the scanning user, e.g. with deploy/hcpscan-readonly-clusterrole.yaml"
# Of the kinds hcpscan makes itself (no API server serves them: inventory/resources.py), the
# ones a live read makes, from what it lists; the others come from files only.
_MADE_LIVE = (KUBECONFIG,)


@dataclass(frozen=True, slots=True)
class ListTask:
    resource: ApiResource
    namespace: str | None = None  # None: across all namespaces (or cluster-scoped)

    @property
    def path(self) -> str:
        return self.resource.list_path(self.namespace)


@dataclass(slots=True)
class ListedResource:
    """What one list returned, as the API gave it (kind and apiVersion filled in)."""

    resource: ApiResource
    namespace: str | None
    items: list[dict[str, Any]]


@dataclass(slots=True)
class ClusterRead:
    context: str
    server: str
    listed: list[ListedResource] = field(default_factory=list)
    objects: list[K8sObject] = field(default_factory=list)
    unavailable: dict[str, UnavailableKind] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    lists: int = 0  # list requests made (one per kind, or per kind and namespace)
    forbidden: int = 0  # of them, refused with 403

    @property
    def mostly_forbidden(self) -> bool:
        """Whether more than half of the lists (all, on a cluster that lets the user read
        nothing) were refused: a scan of what is left would pass having read little."""
        return self.lists > 0 and self.forbidden * 2 > self.lists


@dataclass(slots=True)
class _Failure:
    task: ListTask
    reason: str
    may_exist: bool
    diagnostic: Diagnostic | None


@dataclass(frozen=True, slots=True)
class ListBudget:
    """How much one list (one kind, in one namespace or all) may bring: a server that pages
    without end, or a kind larger than any real cluster holds, ends that list, not the scan."""

    max_items: int = MAX_ITEMS_PER_LIST
    max_bytes: int = MAX_BYTES_PER_LIST
    # all the lists of one read together (they are all held until the rules run): the one
    # bound on what a read may bring, whatever the number of kinds and namespaces
    max_total_bytes: int = MAX_BYTES_TOTAL

    @property
    def total_bytes(self) -> int:
        return self.max_total_bytes


class _Tally:
    """Bytes the lists of one read have brought so far, shared by their threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bytes = 0

    def add(self, count: int) -> int:
        with self._lock:
            self._bytes += count
            return self._bytes


def _size(count: int) -> str:
    return f"{count >> 20} MiB" if count >= 1 << 20 else f"{count} bytes"


class ListEnded(Exception):
    """A list stopped before its end: the server's paging cycled, or a budget was spent."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def read_cluster(conn: Connection, discovery: Discovery, kinds: Iterable[str],
                 plurals: Iterable[str] = (), namespaces: list[str] | None = None,
                 page_size: int = 500, concurrency: int = 4,
                 also: Iterable[ApiResource] = (), budget: ListBudget = ListBudget()) -> ClusterRead:
    """List every served resource of ``kinds`` (or named in ``plurals``, or in ``also``),
    all namespaces unless ``namespaces`` is given."""
    kinds, plurals, extra = set(kinds), set(plurals), set(also)
    read = ClusterRead(conn.context, conn.host)
    where = virtual_root(conn.context)
    for kind in sorted(kinds - set(MADE_FROM)):
        if discovery.serving(kind):
            continue
        if kind in BUILT_IN_KINDS:  # every API server serves it: its discovery is wrong
            reason = (f"not read: the API server's discovery does not list {kind}, which every "
                      "Kubernetes API server serves")
            read.unavailable[kind] = UnavailableKind(reason, True)
            read.diagnostics.append(Diagnostic(where, None, reason, hint=(
                "check that --context names a Kubernetes API server, not a front end before "
                "it; `kubectl api-resources` lists what it serves")))
            continue
        read.unavailable[kind] = UnavailableKind(
            f"kind not served: the API server serves no {kind} (its CRD is not installed)", False)
    for gv, why in sorted(discovery.failed.items()):
        read.diagnostics.append(Diagnostic(where, None, f"discovery of {gv} failed: {why}",
                                           severity="warning",
                                           hint="kinds served only by this API group were not read"))
    resources = [r for r in discovery.resources
                 if r.kind in kinds or r.plural in plurals or r in extra]
    if namespaces is not None:
        resources = [r for r in resources if not (r.kind == "Namespace" and not r.group)]
        _get_namespaces(conn, namespaces, read)
    tasks = [ListTask(r, ns) for r in resources
             for ns in (namespaces if namespaces is not None and r.namespaced else [None])]
    tally = _Tally()
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        outcomes = list(pool.map(lambda t: _run(conn, t, page_size, budget, tally), tasks))
    read.lists += len(tasks)
    for outcome in outcomes:
        if isinstance(outcome, _Failure):
            read.forbidden += outcome.reason.startswith("forbidden")
            _record_failure(read, outcome)
        else:
            _refuse_too_deep(outcome, conn.context, read)
            read.listed.append(outcome)
            read.objects.extend(to_object(item, conn.context) for item in outcome.items)
    for made in _MADE_LIVE:
        for source in MADE_FROM[made]:
            if source in read.unavailable and read.unavailable[source].may_exist:
                read.unavailable.setdefault(made, read.unavailable[source])
    return read


def list_all(conn: Connection, path: str, page_size: int,
             selectors: dict[str, str] | None = None,
             budget: ListBudget = ListBudget(), tally: _Tally | None = None
             ) -> list[dict[str, Any]]:
    """Every item of one list, page by page; restart when the continue token expires.
    ``selectors``: ``labelSelector``/``fieldSelector`` query parameters, if any. A
    continue token seen before in this list (A, B, A, ... or any longer cycle) or a
    spent budget (this list's, or with ``tally`` all lists' together) raises ``ListEnded``.
    A list that ends or fails keeps nothing, so what it brought is taken off ``tally``
    again: one list too big cannot end every list after it."""
    counted = [0]
    try:
        return _list_pages(conn, path, page_size, selectors, budget, tally, counted)
    except BaseException:
        if tally is not None:
            tally.add(-counted[0])
        raise


def _list_pages(conn: Connection, path: str, page_size: int, selectors: dict[str, str] | None,
                budget: ListBudget, tally: _Tally | None, counted: list[int]
                ) -> list[dict[str, Any]]:
    restarts = 0
    items: list[dict[str, Any]] = []
    token = ""
    pages = size = 0
    seen: set[str] = set()
    while True:
        query: dict[str, Any] = {"limit": page_size, **(selectors or {})}
        if token:
            query["continue"] = token
        try:
            page, answered = conn.get_sized(path, query)
        except ApiError as exc:
            if exc.status == 410 and token and restarts < MAX_RESTARTS:
                restarts, items, token, seen, size = restarts + 1, [], "", set(), 0
                if tally is not None:  # the pages read so far are dropped
                    tally.add(-counted[0])
                    counted[0] = 0
                continue
            raise
        items.extend(i for i in _page_items(page, path) if isinstance(i, dict))
        pages, size = pages + 1, size + answered
        if len(items) > budget.max_items:
            raise ListEnded(f"more than {budget.max_items} items in {pages} pages",
                            "raise --max-list-items if the cluster really holds that many")
        if size > budget.max_bytes:
            raise ListEnded(f"more than {_size(budget.max_bytes)} in {pages} pages",
                            "raise --max-list-size if the cluster really holds that much")
        counted[0] += answered if tally is not None else 0
        if tally is not None and tally.add(answered) > budget.total_bytes:
            raise ListEnded(f"the lists together brought more than {_size(budget.total_bytes)}",
                            "raise --max-total-size if the cluster really holds that much "
                            "and the machine has the memory (about 3.5 times as much)")
        next_token = str((page.get("metadata") or {}).get("continue") or "")
        if not next_token:
            return items
        if next_token in seen or next_token == token:
            raise ListEnded(f"the server's paging went round in a circle: page {pages + 1} "
                            "would repeat an earlier continue token",
                            "the API server (or an aggregated API behind it) pages wrongly; "
                            "report it to its operator, or raise --page-size to need fewer pages")
        if pages >= MAX_PAGES:
            raise ListEnded(f"the list did not end after {pages} pages",
                            "raise --page-size, or check the API server")
        seen.add(next_token)
        token = next_token


def _page_items(page: dict[str, Any], path: str) -> list[Any]:
    """A list answer's ``items``. An answer without an items array (a ``kind: Status``
    sent with 200, ``items`` missing, a string or a mapping) is no list: read as empty, a
    hostile or broken server made every object of the kind vanish and its rules pass.
    ``items: null`` is an empty list as Go writes it (a nil slice)."""
    items = page.get("items", ())
    if isinstance(items, list) or (items is None and "items" in page):
        return items or []
    said = (f"a {page.get('kind')} ({page.get('message')})" if page.get("kind") == "Status"
            else "no items array" if "items" not in page
            else f"items that are a {type(items).__name__}, not an array")
    raise ApiError(200, "OK", f"the answer is no list: {said}", path)


def _refuse_too_deep(listed: ListedResource, context: str, read: ClusterRead) -> None:
    """Leave out (from the scan and a saved dump alike) objects nested deeper than a file
    may be: the same limit and words as for files."""
    kept = []
    for item in listed.items:
        if nested_too_deep(item):
            obj = to_object(item, context)
            read.diagnostics.append(Diagnostic(obj.source.path, None, f"not read: {obj.ref} is "
                                               f"nested deeper than {MAX_DEPTH} levels",
                                               hint="no Kubernetes object nests that deep: the API "
                                                    "server or an extension returned it; inspect it"))
        elif (field := lone_surrogate_at(item)) is not None:
            # no Kubernetes API server writes one (Go writes U+FFFD): nothing could encode it again
            meta = mapping_at(item, "metadata")
            name = f"{item.get('kind')} {meta.get('namespace') or ''}/{meta.get('name')}"
            read.diagnostics.append(Diagnostic(
                virtual_root(context), None, f"not read: {_shown(name)}: {field} holds a lone "
                "UTF-16 surrogate escape (\\ud800-\\udfff without its pair)",
                hint="the API server or an extension returned it; inspect the object"))
        else:
            kept.append(item)
    listed.items[:] = kept


def _shown(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def to_object(item: dict[str, Any], context: str) -> K8sObject:
    """An API object as an inventory object, located at its virtual path."""
    meta = mapping_at(item, "metadata")
    namespace = str(meta.get("namespace") or "")
    name = str(meta.get("name") or "")
    kind = str(item["kind"])
    path = f"{virtual_root(context)}/{namespace or CLUSTER_SCOPED}/{kind}/{name}.yaml"
    return K8sObject(MANAGEMENT, str(item["apiVersion"]), kind, namespace, name, item,
                     SourceLocation(path, 1, file=""))


def virtual_root(context: str) -> str:
    """``cluster/<context>``; slashes in context names (OpenShift's) would add folders."""
    return "cluster/" + (re.sub(r"[/\\]", "_", context) or "_")


def _typed(item: dict[str, Any], resource: ApiResource) -> dict[str, Any]:
    # Built-in lists omit kind/apiVersion on their items; offline dumps carry them.
    rest = {k: v for k, v in item.items() if k not in ("apiVersion", "kind")}
    return {"apiVersion": item.get("apiVersion") or resource.api_version,
            "kind": item.get("kind") or resource.kind, **rest}


def _run(conn: Connection, task: ListTask, page_size: int, budget: ListBudget,
         tally: _Tally | None = None) -> ListedResource | _Failure:
    try:
        items = list_all(conn, task.path, page_size, budget=budget, tally=tally)
    except ApiError as exc:
        return _api_failure(conn, task, exc)
    except ListEnded as exc:
        scope = f" in namespace {task.namespace}" if task.namespace else ""
        reason = f"not read: listing {task.resource.display}{scope} stopped: {exc.message}"
        return _Failure(task, reason, True, Diagnostic(virtual_root(conn.context), None, reason,
                                                       severity="warning", hint=exc.hint))
    except TransportError as exc:
        reason = f"not read: listing {task.resource.display} failed: {exc.message}"
        return _Failure(task, reason, True, Diagnostic(virtual_root(conn.context), None, reason,
                                                       hint=exc.hint))
    return ListedResource(task.resource, task.namespace, [_typed(i, task.resource) for i in items])


def _api_failure(conn: Connection, task: ListTask, exc: ApiError) -> _Failure:
    resource = task.resource
    scope = f" in namespace {task.namespace}" if task.namespace and resource.namespaced else ""
    where = virtual_root(conn.context)
    if exc.status == 403:
        reason = f"forbidden: grant list on {resource.display}{scope}"
        return _Failure(task, reason, True, Diagnostic(
            where, None, f"cannot read {resource.kind}: {reason} ({exc.message or 'Forbidden'})",
            severity="warning", hint=RBAC_HINT))
    if exc.status == 404 and resource.group:  # removed between discovery and the list (a CRD deleted)
        return _Failure(task, f"kind not served: {resource.display} is no longer served", False, None)
    # a built-in kind cannot stop being served: a 404 is an error (or all such lists would
    # read as "not served" and the scan pass having read nothing)
    detail = f"{exc.status} {exc.reason}".strip() + (f": {exc.message}" if exc.message else "")
    reason = f"not read: listing {resource.display}{scope} failed: {detail}"
    hint = ("the credentials were rejected; renew them and rerun" if exc.status == 401
            else "check that --context names a Kubernetes API server, not a front end before it"
            if exc.status == 200 else "rerun later; the API server answered with an error")
    return _Failure(task, reason, True, Diagnostic(where, None, reason, hint=hint))


def _record_failure(read: ClusterRead, failure: _Failure) -> None:
    kind = failure.task.resource.kind
    previous = read.unavailable.get(kind)
    if previous is None:
        read.unavailable[kind] = UnavailableKind(failure.reason, failure.may_exist)
    elif failure.reason not in previous.reason.split("; "):
        read.unavailable[kind] = UnavailableKind(f"{previous.reason}; {failure.reason}",
                                                 previous.may_exist or failure.may_exist)
    if failure.diagnostic is not None:
        read.diagnostics.append(failure.diagnostic)


def _get_namespaces(conn: Connection, namespaces: list[str], read: ClusterRead) -> None:
    """With --namespace, read just those Namespace objects (get, not list)."""
    core = ApiResource("", "v1", "namespaces", "Namespace", False, ("get",))
    for ns in namespaces:
        try:
            body = conn.get(f"/api/v1/namespaces/{ns}")
        except ApiError as exc:
            if exc.status == 404:
                read.diagnostics.append(Diagnostic(virtual_root(conn.context), None,
                                                   f"namespace {ns} does not exist", severity="warning",
                                                   hint="check the --namespace names"))
                continue
            failure = _api_failure(conn, ListTask(core, None), exc)
            if exc.status == 403:
                failure.reason = f"forbidden: grant get on namespaces ({ns})"
            _record_failure(read, failure)
            continue
        except TransportError as exc:
            _record_failure(read, _Failure(ListTask(core), f"not read: namespace {ns}: {exc.message}",
                                           True, None))
            continue
        item = _typed(body, core)
        read.listed.append(ListedResource(core, ns, [item]))
        read.objects.append(to_object(item, conn.context))
