"""API discovery: which kinds the server serves, under which group, version and resource name.

Legacy discovery (``/api``, ``/apis``, then one resource list per group
version), the form every API server since 1.0 answers; kubectl falls back to
it too. A group version whose list fails (an aggregated API that is down) is
recorded and skipped, as kubectl does.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from hcpscan.sources.live.client import ApiError, Connection, LiveError, TransportError

MAX_GROUP_VERSIONS = 5_000  # a large cluster with many CRDs serves a few hundred


@dataclass(frozen=True, slots=True)
class ApiResource:
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def display(self) -> str:
        """kubectl's name for it: ``secrets``, ``hostedclusters.hypershift.openshift.io``."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def list_path(self, namespace: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace is not None and self.namespaced:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"


@dataclass(slots=True)
class Discovery:
    resources: list[ApiResource] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # group version -> why

    def serving(self, kind: str) -> list[ApiResource]:
        """Every group's listable resource of this kind (one version per group)."""
        return [r for r in self.resources if r.kind == kind]

    def named(self, plural: str) -> list[ApiResource]:
        return [r for r in self.resources if r.plural == plural]


def discover(conn: Connection, concurrency: int = 4) -> Discovery:
    """Ask the server what it serves; only the first two requests may end the scan (LiveError)."""
    try:
        core = conn.get("/api")
        groups = conn.get("/apis")
    except ApiError as exc:
        raise _refused(conn, exc) from None
    _check_kubernetes(conn, core, groups)
    ordered: list[tuple[str, list[str]]] = [("", [str(v) for v in core.get("versions") or []])]
    for group in groups.get("groups") or []:
        if not isinstance(group, dict) or not group.get("name"):
            continue
        versions = [str(v.get("version")) for v in group.get("versions") or [] if isinstance(v, dict)]
        preferred = (group.get("preferredVersion") or {}).get("version")
        if preferred in versions:
            versions.remove(preferred)
            versions.insert(0, preferred)
        ordered.append((str(group["name"]), versions))
    pairs = list(dict.fromkeys((g, v) for g, versions in ordered for v in versions))
    if len(pairs) > MAX_GROUP_VERSIONS:  # one request each: a hostile list would never end
        raise LiveError(f"the API server at {conn.host} lists {len(pairs):,} API group versions, "
                        f"more than the {MAX_GROUP_VERSIONS:,} any cluster serves; not read",
                        "check that --context names a Kubernetes API server")
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        answers = list(pool.map(lambda gv: _resource_list(conn, *gv), pairs))
    discovery = Discovery()
    by_pair = dict(zip(pairs, answers))
    for group, versions in ordered:
        seen_kinds: set[str] = set()
        for version in versions:
            listed = by_pair[(group, version)]
            if isinstance(listed, str):
                discovery.failed[f"{group}/{version}" if group else version] = listed
                continue
            for resource in listed:
                if resource.kind not in seen_kinds:  # the preferred version wins
                    seen_kinds.add(resource.kind)
                    discovery.resources.append(resource)
    if "v1" in discovery.failed:  # every Kubernetes API server serves it to every user
        raise LiveError(f"the server at {conn.host} (context {conn.context}) lists the core API "
                        f"v1 but does not serve it ({discovery.failed['v1']}): nothing could be read",
                        "check that --context names a Kubernetes API server, not a front end "
                        "before it")
    served = {r.kind for r in discovery.resources if not r.group}
    if not served & _BUILT_IN:  # an empty (or junk) /api/v1: every rule 'not applicable', exit 0
        raise LiveError(f"the server at {conn.host} (context {conn.context}) serves none of the "
                        f"core kinds every Kubernetes API server serves ({', '.join(sorted(_BUILT_IN))}) "
                        "in its core API v1: nothing could be read",
                        "check that --context names a Kubernetes API server, not a front end "
                        "before it")
    return discovery


# Served in the core API v1 by every Kubernetes API server, to every user (listing them
# may be forbidden; discovery still names them)
_BUILT_IN = frozenset({"Pod", "Service", "ConfigMap", "Secret"})


# Served by every Kubernetes API server hcpscan supports (core v1; apps/v1 and
# networking.k8s.io/v1 since 1.9 and 1.7; batch Jobs and CronJobs in some version): a
# discovery that does not list one is wrong, and its objects would vanish without a word
BUILT_IN_KINDS = frozenset({
    "ConfigMap", "Endpoints", "Event", "LimitRange", "Namespace", "Node", "PersistentVolume",
    "PersistentVolumeClaim", "Pod", "PodTemplate", "ReplicationController", "ResourceQuota",
    "Secret", "Service", "ServiceAccount",
    "ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet",
    "NetworkPolicy", "Job", "CronJob",
})


def _check_kubernetes(conn: Connection, core: dict, groups: dict) -> None:
    """Any HTTPS server answers something: without this a proxy's login page or another
    JSON API would give "nothing served", every rule not evaluable and exit 0."""
    versions = core.get("versions")
    problems = []
    if core.get("kind") != "APIVersions" or not isinstance(versions, list) or "v1" not in versions:
        problems.append("/api is not an APIVersions list with v1")
    if groups.get("kind") != "APIGroupList" or not isinstance(groups.get("groups"), list):
        problems.append("/apis is not an APIGroupList")
    if problems:
        raise LiveError(f"the server at {conn.host} (context {conn.context}) does not look like a "
                        f"Kubernetes API server: {'; '.join(problems)}",
                        "check the server URL of the kubeconfig's cluster (and its proxy-url)")


def _refused(conn: Connection, exc: ApiError) -> LiveError:
    server = f"the API server at {conn.host} (context {conn.context})"
    if exc.status == 401:
        return LiveError(f"{server} rejected the credentials (401 Unauthorized)",
                         "log in again or renew the token, or pick another --context")
    if exc.status == 403:
        return LiveError(f"{server} refused API discovery (403 Forbidden): {exc.message}",
                         "the user needs the system:discovery role (every authenticated user has it)")
    detail = f"{exc.status} {exc.reason}".strip() + (f": {exc.message}" if exc.message else "")
    return LiveError(f"{server} answered {exc.path} with {detail}",
                     "check that the URL is a Kubernetes API server, or rerun later")


def _resource_list(conn: Connection, group: str, version: str) -> list[ApiResource] | str:
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    try:
        body = conn.get(path)
    except ApiError as exc:
        return f"{exc.status} {exc.reason}".strip()
    except TransportError as exc:
        return exc.message
    return list(_listable(body.get("resources") or [], group, version))


def _listable(entries: Iterable[object], group: str, version: str) -> Iterable[ApiResource]:
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        name, kind = entry.get("name"), entry.get("kind")
        verbs = tuple(str(v) for v in entry.get("verbs") or [])
        if not isinstance(name, str) or "/" in name or not isinstance(kind, str) or "list" not in verbs:
            continue  # subresources (pods/log) and resources that cannot be listed
        # entry["group"]/["version"] name the kind of a subresource, not this resource
        yield ApiResource(group, version, name, kind, bool(entry.get("namespaced")), verbs)
