"""``hcpscan cluster --publish-reports``: the only write hcpscan ever makes.

Server-side apply of already-rendered OpenReports objects (``Report``,
``ClusterReport``; :func:`hcpscan.reporters.openreports.build_reports` makes
them) into the scanned cluster: ``PATCH`` with ``application/apply-patch+yaml``,
field manager ``hcpscan``, ``force=true`` (hcpscan owns these objects; a field
another manager set is taken over rather than failing the CronJob). The names
are stable, so each run updates the previous run's objects.

Nothing here reads the cluster's other objects and the read path
(:mod:`hcpscan.sources.live`) never writes; this module only depends on the
connection. It needs ``create``, ``patch`` and ``get`` on
``reports.openreports.io`` and ``clusterreports.openreports.io``
(``deploy/hcpscan-publisher-rbac.yaml``), nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hcpscan.sources.live.client import ApiError, Connection, LiveError

GROUP, VERSION = "openreports.io", "v1alpha1"
PLURALS = {"Report": "reports", "ClusterReport": "clusterreports"}
# Every kind hcpscan may write: (apiVersion, kind) -> (plural, namespaced). The report
# APIs in the order they are preferred, then the fleet's ScanSummary.
WRITABLE = {
    ("openreports.io/v1alpha1", "Report"): ("reports", True),
    ("openreports.io/v1alpha1", "ClusterReport"): ("clusterreports", False),
    ("wgpolicyk8s.io/v1alpha2", "PolicyReport"): ("policyreports", True),
    ("wgpolicyk8s.io/v1alpha2", "ClusterPolicyReport"): ("clusterpolicyreports", False),
    ("hcpscan.io/v1alpha1", "ScanSummary"): ("scansummaries", False),
}
REPORT_APIS = ("openreports.io/v1alpha1", "wgpolicyk8s.io/v1alpha2")
SUMMARY_API = "hcpscan.io/v1alpha1"
FIELD_MANAGER = "hcpscan"
MANAGED_BY = "app.kubernetes.io/managed-by"  # the well-known label key
APPLY_PATCH = "application/apply-patch+yaml"
RBAC_FILE = "deploy/hcpscan-publisher-rbac.yaml"
RBAC_HINT = (f"grant create, patch and get on reports.{GROUP} and clusterreports.{GROUP} "
             f"(and policyreports/clusterpolicyreports.wgpolicyk8s.io, scansummaries.hcpscan.io "
             f"where served; kubectl apply -f {RBAC_FILE}), or drop --publish-reports")


class PublishError(LiveError):
    """Nothing can be published: the CRDs are not installed, or writing is forbidden."""


@dataclass(slots=True)
class Published:
    applied: list[str] = field(default_factory=list)  # "Report ns/name"
    emptied: list[str] = field(default_factory=list)  # earlier reports whose findings are gone
    failed: list[str] = field(default_factory=list)  # "Report ns/name: why"


def served_apis(conn: Connection) -> tuple[str | None, bool]:
    """Which report API the cluster serves with ``patch`` on both of its kinds
    (OpenReports preferred, else ``wgpolicyk8s.io/v1alpha2`` PolicyReport, else None),
    and whether it serves ``ScanSummary`` (the fleet's CRD). Decided at run time, so
    a cluster without OpenReports still gets results where its tools read them."""
    reports = next((api for api in REPORT_APIS if _serves(conn, api)), None)
    return reports, _serves(conn, SUMMARY_API)


def publish_reports(conn: Connection, objects: Iterable[dict[str, Any]],
                    replace_if_present: Iterable[dict[str, Any]] = (),
                    check: bool = True) -> Published:
    """Apply every object of ``objects``, and each of ``replace_if_present`` (empty
    reports of namespaces without findings) only where an earlier hcpscan report
    exists, so fixed findings do not linger without hcpscan needing list or delete.
    An object the server rejects is recorded and the rest still go; raises
    :class:`PublishError` when none can go (CRDs missing, RBAC forbids).
    ``check=False``: the caller already chose the APIs with :func:`served_apis`."""
    if check:
        check_served(conn)
    done = Published()
    for obj in objects:
        if _apply(conn, obj, done):
            done.applied.append(_describe(obj))
    for obj in replace_if_present:
        if _earlier_report(conn, obj, done) and _apply(conn, obj, done):
            done.emptied.append(_describe(obj))
    return done


def _apply(conn: Connection, obj: dict[str, Any], done: Published) -> bool:
    try:
        conn.request("PATCH", _path(obj), {"fieldManager": FIELD_MANAGER, "force": "true"},
                     json.dumps(obj).encode(), APPLY_PATCH)
    except ApiError as exc:
        _record(conn, obj, exc, done)
        return False
    return True


def _earlier_report(conn: Connection, obj: dict[str, Any], done: Published) -> bool:
    """Whether hcpscan published this object before: it exists and carries the same
    ``app.kubernetes.io/managed-by`` label as ``obj`` (not someone else's report)."""
    try:
        found = conn.get(_path(obj))
    except ApiError as exc:
        if exc.status != 404:
            _record(conn, obj, exc, done)
        return False
    ours = ((obj.get("metadata") or {}).get("labels") or {}).get(MANAGED_BY)
    theirs = ((found.get("metadata") or {}).get("labels") or {}).get(MANAGED_BY)
    return ours is not None and theirs == ours


def _record(conn: Connection, obj: dict[str, Any], exc: ApiError, done: Published) -> None:
    name = _describe(obj)
    if exc.status in (401, 403):
        raise PublishError(f"cannot publish {name} to context {conn.context}: "
                           f"{exc.reason or exc.status}: {exc.message}", RBAC_HINT) from None
    done.failed.append(f"{name}: {exc.status} {exc.reason}: {exc.message}")


def _serves(conn: Connection, api_version: str) -> bool:
    """Whether ``api_version`` is served with ``patch`` on each of its kinds hcpscan
    writes; 404 is "no"; any other failure of discovery is a :class:`PublishError`."""
    try:
        listing = conn.get(f"/apis/{api_version}")
    except ApiError as exc:
        if exc.status == 404:
            return False
        raise PublishError(f"cannot publish reports: discovery of {api_version} failed: "
                           f"{exc.status} {exc.reason}: {exc.message}", RBAC_HINT) from None
    served = {r.get("name"): r for r in listing.get("resources") or [] if isinstance(r, dict)}
    plurals = [plural for (api, _), (plural, _) in WRITABLE.items() if api == api_version]
    return all("patch" in (served.get(p) or {}).get("verbs", []) for p in plurals)


def check_served(conn: Connection) -> None:
    """The cluster must serve both kinds (the OpenReports CRDs) with ``patch``."""
    install = (f"install the OpenReports CRDs (reports.{GROUP}, clusterreports.{GROUP}; "
               "https://openreports.io), or the wgpolicyk8s.io/v1alpha2 PolicyReport CRDs, or at "
               "least deploy/hcpscan-scansummary-crd.yaml (the fleet's counts only); or drop "
               "--publish-reports")
    try:
        listing = conn.get(f"/apis/{GROUP}/{VERSION}")
    except ApiError as exc:
        if exc.status == 404:
            raise PublishError(f"cannot publish reports: context {conn.context} does not serve "
                               f"{GROUP}/{VERSION} (the OpenReports CRDs are not installed)",
                               install) from None
        raise PublishError(f"cannot publish reports: discovery of {GROUP}/{VERSION} failed: "
                           f"{exc.status} {exc.reason}: {exc.message}", RBAC_HINT) from None
    served = {r.get("name"): r for r in listing.get("resources") or [] if isinstance(r, dict)}
    missing = [p for p in PLURALS.values() if "patch" not in (served.get(p) or {}).get("verbs", [])]
    if missing:
        raise PublishError(f"cannot publish reports: context {conn.context} does not serve "
                           f"{', '.join(m + '.' + GROUP for m in missing)} with patch", install)


def _path(obj: dict[str, Any]) -> str:
    api, kind, meta = obj.get("apiVersion"), obj.get("kind"), obj.get("metadata") or {}
    known = WRITABLE.get((str(api), str(kind)))
    if known is None:
        raise ValueError(f"not an object hcpscan publishes: {api}/{kind}")
    plural, namespaced = known
    base = f"/apis/{api}"
    if namespaced:
        return f"{base}/namespaces/{meta['namespace']}/{plural}/{meta['name']}"
    return f"{base}/{plural}/{meta['name']}"


def _describe(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    where = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta.get("name")
    return f"{obj.get('kind')} {where}"
