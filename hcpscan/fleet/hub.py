"""Read what OCM brought back to the hub: ManagedClusters, hcpscan's ManifestWorks (with
their status feedback) and the Placement's decisions. Read-only: ``list`` only.

Four lists, whatever the fleet's size: ManagedClusters (cluster-scoped), the
ManifestWorks the ManifestWorkReplicaSet made (its label, one ``labelSelector``
request across every namespace: OCM 1.3 and later name them ``hcpscan<random>``,
``generateName``, ocm #1421), the ManifestWorks named ``hcpscan`` (one
``fieldSelector`` request: older hubs' replica sets, or a ManifestWork applied by
hand), the PlacementDecisions of the Placement. A kind the hub does not
serve or the user may not list is a note in the matrix, never a silent gap,
except ManagedClusters and ManifestWorks, without which there is no fleet to show.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from hcpscan.fleet import contract
from hcpscan.fleet.matrix import FleetMatrix, as_dict, as_list, classify
from hcpscan.sources.live.client import ApiError, Connection, LiveError
from hcpscan.sources.live.lister import ListEnded, list_all

MANAGED_CLUSTERS = "/apis/cluster.open-cluster-management.io/v1/managedclusters"
MANIFEST_WORKS = "/apis/work.open-cluster-management.io/v1/manifestworks"
DECISIONS = "/apis/cluster.open-cluster-management.io/v1beta1/namespaces/{ns}/placementdecisions"
PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"
# what OCM's ManifestWorkReplicaSet controller labels each ManifestWork with: "<namespace>.<name>"
REPLICASET_LABEL = "work.open-cluster-management.io/manifestworkreplicaset"
RBAC_HINT = ("grant list on managedclusters.cluster.open-cluster-management.io, "
             "manifestworks.work.open-cluster-management.io and "
             "placementdecisions.cluster.open-cluster-management.io on the hub "
             "(deploy/ocm/hcpscan-fleet-reader-rbac.yaml)")


class HubError(LiveError):
    """The hub cannot be read: not an OCM hub, or not allowed."""


@dataclass(frozen=True, slots=True)
class FleetQuery:
    work_name: str = contract.WORK_NAME
    placement: tuple[str, str] | None = ("hcpscan-fleet", "hcpscan-fleet")  # namespace, name
    stale_after: dt.timedelta = dt.timedelta(hours=13)  # two 6-hourly runs and an hour
    page_size: int = 500
    # the ManifestWorkReplicaSet (namespace, name) whose ManifestWorks to read, besides those
    # named work_name
    replicaset: tuple[str, str] | None = ("hcpscan-fleet", contract.WORK_NAME)


def read_fleet(conn: Connection, query: FleetQuery, now: dt.datetime) -> FleetMatrix:
    notes: list[str] = []
    clusters = {_name(o): o for o in _list(conn, MANAGED_CLUSTERS, "ManagedClusters", query) if _name(o)}
    works: dict[str, dict[str, Any]] = {}
    for work in _list(conn, MANIFEST_WORKS, "ManifestWorks", query,
                      {"fieldSelector": f"metadata.name={query.work_name}"}):
        meta = as_dict(work.get("metadata"))
        if meta.get("name") == query.work_name and isinstance(meta.get("namespace"), str):
            works[meta["namespace"]] = work  # a ManifestWork lives in its cluster's namespace
    if query.replicaset is not None:
        key = ".".join(query.replicaset)
        made: dict[str, list[str]] = {}
        for work in _list(conn, MANIFEST_WORKS, "ManifestWorks", query,
                          {"labelSelector": f"{REPLICASET_LABEL}={key}"}):
            meta = as_dict(work.get("metadata"))
            namespace, name = meta.get("namespace"), meta.get("name")
            if (as_dict(meta.get("labels")).get(REPLICASET_LABEL) == key
                    and isinstance(namespace, str) and isinstance(name, str)):
                works[namespace] = work  # the replica set's own work wins over a same-named one
                made.setdefault(namespace, []).append(name)
        notes += [f"{namespace}: ManifestWorkReplicaSet {'/'.join(query.replicaset)} made several "
                  f"ManifestWorks ({', '.join(sorted(names))}); shown: {works[namespace]['metadata']['name']}"
                  for namespace, names in sorted(made.items()) if len(names) > 1]
    placed = _placed(conn, query, notes)
    names = sorted(set(clusters) | set(works) | placed)
    for name in names:
        if name not in clusters:
            notes.append(f"{name}: a ManifestWork or decision names it, but there is no "
                         "ManagedCluster of that name")
    rows = [classify(n, clusters.get(n), works.get(n), n in placed, now, query.stale_after)
            for n in names]
    notes += [f"{row.name}: its reports name the cluster {row.reported_as!r} (--cluster-name, its "
              "Klusterlet's clusterName or a ClusterClaim): reports on it carry that name" for row in rows
              if row.reported_as and row.reported_as != row.name]
    return FleetMatrix(conn.context, now, query.stale_after, rows, notes)


def _name(obj: dict[str, Any]) -> str:
    name = as_dict(obj.get("metadata")).get("name")
    return name if isinstance(name, str) else ""


def _list(conn: Connection, path: str, what: str, query: FleetQuery,
          selectors: dict[str, str] | None = None) -> list[dict[str, Any]]:
    try:
        return list_all(conn, path, query.page_size, selectors)
    except ApiError as exc:
        if exc.status == 404:
            raise HubError(f"context {conn.context} serves no {what} ({path}): not an Open "
                           "Cluster Management hub", "give the hub's kubeconfig (--kubeconfig, "
                           "--context)") from None
        raise HubError(f"cannot list {what} on context {conn.context}: {exc.status} "
                       f"{exc.reason}: {exc.message}", RBAC_HINT) from None
    except ListEnded as exc:  # paging in a circle, or past a budget
        raise HubError(f"cannot list {what} on context {conn.context}: {exc.message}",
                       exc.hint) from None


def _placed(conn: Connection, query: FleetQuery, notes: list[str]) -> set[str]:
    """Clusters the Placement chose (its PlacementDecisions), or none with a note."""
    if query.placement is None:
        return set()
    namespace, name = query.placement
    path = DECISIONS.format(ns=namespace)
    try:
        decisions = list_all(conn, path, query.page_size, {"labelSelector": f"{PLACEMENT_LABEL}={name}"})
    except ApiError as exc:
        notes.append(f"placement {namespace}/{name}: PlacementDecisions not read ({exc.status} "
                     f"{exc.reason}); clusters chosen but without a ManifestWork are not shown")
        return set()
    except ListEnded as exc:
        notes.append(f"placement {namespace}/{name}: PlacementDecisions not read ({exc.message}); "
                     "clusters chosen but without a ManifestWork are not shown")
        return set()
    chosen = set()
    for decision in decisions:
        if as_dict(as_dict(decision.get("metadata")).get("labels")).get(PLACEMENT_LABEL) != name:
            continue
        for entry in as_list(as_dict(decision.get("status")).get("decisions")):
            if isinstance(entry, dict) and isinstance(entry.get("clusterName"), str):
                chosen.add(entry["clusterName"])
    if not decisions:
        notes.append(f"placement {namespace}/{name}: no PlacementDecision found")
    return chosen
