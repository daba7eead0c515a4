"""Open Cluster Management's controllers, played over the stand-in API servers' HTTP APIs.

There is no OCM hub or klusterlet on our registries, so the fleet tests drive
the loop as OCM would, through the same requests:

* the placement controller writes a PlacementDecision (hub);
* the ManifestWorkReplicaSet controller reads the MWRS and the decisions and
  server-side-applies one ManifestWork per chosen cluster, in the cluster's
  namespace, labelled with the MWRS (hub);
* the work agent reads its cluster's ManifestWork from the hub, applies each
  manifest to its own cluster (a CRD it applies becomes served there, as an API
  server makes it), sets the work's ``Applied`` conditions, and later copies the
  ``feedbackRules`` JSONPaths (evaluated from the object's root, as OCM's
  statusfeedback reader does) into
  ``status.resourceStatus.manifests[].statusFeedback`` on the hub;
* the CronJob controller runs the CronJob's container command (``hcpscan`` and its
  args, in process) against the managed cluster's API and records
  ``lastScheduleTime`` / ``lastSuccessfulTime``.

:func:`simulated_fleet` builds what a hub of N such clusters holds, for scale tests.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from hcpscan.fleet import contract
from tests.live.apiserver import APPLY_PATCH, ClusterState, Served
from tests.live.schemas import openapi

MWRS_LABEL = "work.open-cluster-management.io/manifestworkreplicaset"
PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"


def stamp(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Api:
    """A few requests to one stand-in through hcpscan's own client (TLS, token)."""

    def __init__(self, conn: Any, state: ClusterState) -> None:
        self.conn, self.state = conn, state

    def path(self, api_version: str, kind: str, namespace: str, name: str = "") -> str:
        group, _, version = api_version.rpartition("/")
        resource = next(r for r in self.state.resources
                        if r.group == group and r.version == version and r.kind == kind
                        and "/" not in r.plural)
        base = f"/apis/{api_version}" if group else f"/api/{version}"
        where = f"/namespaces/{namespace}" if resource.namespaced else ""
        return f"{base}{where}/{resource.plural}" + (f"/{name}" if name else "")

    def apply(self, obj: dict[str, Any], manager: str) -> dict[str, Any]:
        meta = obj["metadata"]
        path = self.path(obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"])
        return self.conn.request("PATCH", path, {"fieldManager": manager, "force": "true"},
                                 json.dumps(obj).encode(), APPLY_PATCH)

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any]:
        return self.conn.get(self.path(api_version, kind, namespace, name))

    def list(self, api_version: str, kind: str, namespace: str = "", **query: str) -> list[dict[str, Any]]:
        return self.conn.get(self.path(api_version, kind, namespace), query).get("items") or []


def serve_crd(state: ClusterState, crd: dict[str, Any]) -> None:
    """What kube-apiserver does once a CRD is applied: serve its kind (appliable and
    validated against its schema, as the stand-in validates)."""
    spec = crd["spec"]
    for version in spec["versions"]:
        served = Served(spec["group"], version["name"], spec["names"]["plural"], spec["names"]["kind"],
                        spec["scope"] == "Namespaced")
        if served not in state.resources:
            state.resources.append(served)
        state.appliable.add((served.group, served.plural))
        state.schemas[(served.group, served.kind)] = openapi(version["schema"]["openAPIV3Schema"])


@dataclass
class ManagedCluster:
    name: str
    api: Api  # its own API server
    run: Callable[[list[str]], int]  # runs a container command (hcpscan's args) against it


def place(hub: Api, namespace: str, placement: str, clusters: list[str]) -> None:
    """The placement controller's answer: one PlacementDecision naming ``clusters``."""
    hub.state.add({"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "PlacementDecision",
                   "metadata": {"name": f"{placement}-decision-1", "namespace": namespace,
                                "labels": {PLACEMENT_LABEL: placement}},
                   "status": {"decisions": [{"clusterName": c, "reason": ""} for c in clusters]}})


def replicate(hub: Api, namespace: str, name: str) -> list[str]:
    """The ManifestWorkReplicaSet controller: one ManifestWork per decided cluster."""
    mwrs = hub.get("work.open-cluster-management.io/v1alpha1", "ManifestWorkReplicaSet", namespace, name)
    clusters: list[str] = []
    for ref in mwrs["spec"]["placementRefs"]:
        for decision in hub.list("cluster.open-cluster-management.io/v1beta1", "PlacementDecision",
                                 namespace, labelSelector=f"{PLACEMENT_LABEL}={ref['name']}"):
            clusters += [d["clusterName"] for d in decision["status"]["decisions"]]
    for cluster in clusters:
        hub.apply({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
                   "metadata": {"name": name, "namespace": cluster,
                                "labels": {MWRS_LABEL: f"{namespace}.{name}"}},
                   "spec": mwrs["spec"]["manifestWorkTemplate"]}, "work-replicaset-controller")
    return clusters


def _condition(kind: str, ok: bool, reason: str, message: str, now: dt.datetime) -> dict[str, Any]:
    return {"type": kind, "status": "True" if ok else "False", "reason": reason, "message": message or reason,
            "lastTransitionTime": stamp(now)}


def _resource_meta(index: int, manifest: dict[str, Any], api: Api) -> dict[str, Any]:
    group, _, version = manifest["apiVersion"].rpartition("/")
    plural = next((r.plural for r in api.state.resources if r.group == group and r.kind == manifest["kind"]
                   and "/" not in r.plural), "")
    meta = {"ordinal": index, "group": group, "version": version, "kind": manifest["kind"],
            "resource": plural, "name": manifest["metadata"]["name"]}
    if manifest["metadata"].get("namespace"):
        meta["namespace"] = manifest["metadata"]["namespace"]
    return meta


def agent_apply(hub: Api, cluster: ManagedCluster, work_name: str, now: dt.datetime) -> None:
    """The work agent: apply the work's manifests to its cluster, then report Applied."""
    work = hub.get("work.open-cluster-management.io/v1", "ManifestWork", cluster.name, work_name)
    create_only = {(c["resourceIdentifier"]["group"], c["resourceIdentifier"]["resource"],
                    c["resourceIdentifier"].get("namespace", ""), c["resourceIdentifier"]["name"])
                   for c in work["spec"].get("manifestConfigs") or []
                   if (c.get("updateStrategy") or {}).get("type") == "CreateOnly"}
    manifests = []
    for index, manifest in enumerate(work["spec"]["workload"]["manifests"]):
        meta = _resource_meta(index, manifest, cluster.api)
        group, _, _ = manifest["apiVersion"].rpartition("/")
        exists = cluster.api.state.find(group, manifest["kind"], meta.get("namespace", ""), meta["name"])
        if not (exists and (meta["group"], meta["resource"], meta.get("namespace", ""), meta["name"])
                in create_only):
            cluster.api.apply(manifest, "work-agent")
        if manifest["kind"] == "CustomResourceDefinition":
            serve_crd(cluster.api.state, manifest)
        manifests.append({"resourceMeta": _resource_meta(index, manifest, cluster.api),  # after a CRD
                          "conditions": [_condition("Applied", True, "AppliedManifestComplete",
                                                    "Apply manifest complete", now)]})
    work["status"] = {"conditions": [_condition("Applied", True, "AppliedManifestWorkComplete",
                                                "Apply manifest work complete", now)],
                      "resourceStatus": {"manifests": manifests}}
    hub.apply(_without_server_fields(work), "work-agent")


def run_cronjob(cluster: ManagedCluster, namespace: str, name: str, now: dt.datetime) -> int:
    """The CronJob controller: one scheduled run of the container's command."""
    cronjob = cluster.api.get("batch/v1", "CronJob", namespace, name)
    (container,) = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    status = dict(cronjob.get("status") or {}, lastScheduleTime=stamp(now))
    code = cluster.run(list(container.get("command") or []) + list(container["args"]))
    if code == 0:
        status["lastSuccessfulTime"] = stamp(now)
    cluster.api.apply(_without_server_fields(dict(cronjob, status=status)), "cronjob-controller")
    return code


def _at(obj: dict[str, Any], path: str) -> Any:
    """A feedback JSONPath (``.a.b``) of ``obj``, from its root as OCM evaluates it
    (ocm `work` module, spoke/statusfeedback/reader.go: ``FindResults(obj.UnstructuredContent())``)."""
    node: Any = obj
    for part in path.lstrip(".").split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _field_value(value: Any) -> dict[str, Any] | None:
    if isinstance(value, bool):
        return {"type": "Boolean", "boolean": value}
    if isinstance(value, int):
        return {"type": "Integer", "integer": value}
    if isinstance(value, str):
        return {"type": "String", "string": value}
    return None  # a structure: OCM returns no value for it


def agent_feedback(hub: Api, cluster: ManagedCluster, work_name: str) -> None:
    """The work agent's status feedback: the JSONPaths of ``manifestConfigs`` read on the
    cluster and written into the hub's ManifestWork status."""
    work = hub.get("work.open-cluster-management.io/v1", "ManifestWork", cluster.name, work_name)
    manifests = work["status"]["resourceStatus"]["manifests"]
    for config in work["spec"].get("manifestConfigs") or []:
        ident = config["resourceIdentifier"]
        resource = next((r for r in cluster.api.state.resources
                         if r.group == ident["group"] and r.plural == ident["resource"]), None)
        if resource is None:
            continue
        api_version = f"{resource.group}/{resource.version}" if resource.group else resource.version
        try:
            obj = cluster.api.get(api_version, resource.kind, ident.get("namespace", ""), ident["name"])
        except Exception:  # noqa: BLE001 - not there (yet): no feedback, as OCM
            continue
        values = []
        for rule in config.get("feedbackRules") or []:
            for path in rule.get("jsonPaths") or []:
                value = _field_value(_at(obj, path["path"]))
                if value is not None:
                    values.append({"name": path["name"], "fieldValue": value})
        entry = next((m for m in manifests if m["resourceMeta"].get("group") == ident["group"]
                      and m["resourceMeta"].get("resource") == ident["resource"]
                      and m["resourceMeta"]["name"] == ident["name"]
                      and m["resourceMeta"].get("namespace", "") == ident.get("namespace", "")), None)
        if entry is None:  # as OCM: no feedback for a resource the work did not create
            continue
        entry["statusFeedback"] = {"values": values}
    hub.apply(_without_server_fields(work), "work-agent")


def _without_server_fields(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj["metadata"].items()
            if k not in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")}
    return {**obj, "metadata": meta}


# --- a simulated fleet, for scale -------------------------------------------------------

def _values(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": k, "fieldValue": _field_value(v)} for k, v in values.items() if v is not None]


def generated_name(index: int) -> str:
    """A ManifestWork name as OCM 1.3+'s ManifestWorkReplicaSet controller makes it
    (``generateName: hcpscan``, five random characters; ocm #1421)."""
    return contract.WORK_NAME + "".join("bcdfghjklmnpqrstvwxz2456789"[(index * 7 + k * 13) % 27] for k in range(5))


def simulated_work(cluster: str, template: dict[str, Any], feedback: dict[str, Any] | None,
                   cron: dict[str, str] | None, now: dt.datetime, name: str = contract.WORK_NAME
                   ) -> dict[str, Any]:
    """A ManifestWork as the hub holds it once the agent applied it and fed back."""
    work: dict[str, Any] = {"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
                            "metadata": {"name": name, "namespace": cluster,
                                         "labels": {MWRS_LABEL: "hcpscan-fleet.hcpscan"}},
                            "spec": template}
    manifests = [{"resourceMeta": {"ordinal": 8, "group": "batch", "version": "v1", "kind": "CronJob",
                                   "resource": "cronjobs", "name": contract.CRONJOB_NAME,
                                   "namespace": contract.CRONJOB_NAMESPACE},
                  "statusFeedback": {"values": _values(cron or {})},
                  "conditions": [_condition("Applied", True, "AppliedManifestComplete", "", now)]}]
    if feedback is not None:
        manifests.append({"resourceMeta": {"ordinal": 9, "group": contract.GROUP, "version": contract.VERSION,
                                           "kind": contract.KIND, "resource": contract.PLURAL,
                                           "name": contract.NAME},
                          "statusFeedback": {"values": _values(feedback)},
                          "conditions": [_condition("Applied", True, "AppliedManifestComplete", "", now)]})
    work["status"] = {"conditions": [_condition("Applied", True, "AppliedManifestWorkComplete", "", now)],
                      "resourceStatus": {"manifests": manifests}}
    return work


def managed_cluster(name: str, available: bool = True) -> dict[str, Any]:
    return {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": name}, "spec": {"hubAcceptsClient": True},
            "status": {"conditions": [{"type": "ManagedClusterConditionAvailable",
                                       "status": "True" if available else "Unknown",
                                       "reason": ("ManagedClusterAvailable" if available
                                                  else "ManagedClusterLeaseUpdateStopped"),
                                       "message": "",
                                       "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}


def load_template(path: Any) -> dict[str, Any]:
    (mwrs,) = [d for d in yaml.safe_load_all(path.read_text()) if d]
    return mwrs["spec"]["manifestWorkTemplate"]


@dataclass(frozen=True)
class FleetPlan:
    """How many clusters of a simulated fleet are in each state (the rest are ok)."""

    size: int
    stale: int
    failed: int
    never_reported: int
    no_work: int
    not_placed: int

    def state_of(self, index: int) -> str:
        bounds = [("stale", self.stale), ("failed", self.failed),
                  ("never-reported", self.never_reported), ("no-work", self.no_work),
                  ("not-placed", self.not_placed)]
        start = 0
        for state, count in bounds:
            if start <= index < start + count:
                return state
            start += count
        return "ok"


RULE_POOL = (("HCP001", "high"), ("HCP002", "high"), ("PRX003", "medium"), ("PRX007", "low"),
             ("OCM002", "critical"), ("PRX008", "high"))


def simulated_fleet(plan: FleetPlan, template: dict[str, Any], now: dt.datetime
                    ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """A hub's objects for ``plan``: ManagedClusters, hcpscan's ManifestWorks with their
    status feedback, and PlacementDecisions of 100 clusters each (as OCM splits them);
    and per cluster what ``hcpscan fleet`` must say (state, findings)."""
    objects: list[dict[str, Any]] = []
    expected: dict[str, dict[str, Any]] = {}
    placed: list[str] = []
    for index in range(plan.size):
        name = f"cluster-{index:04d}"
        state = plan.state_of(index)
        objects.append(managed_cluster(name, available=state != "stale"))
        if state == "not-placed":
            expected[name] = {"state": state, "findings": {}}
            continue
        placed.append(name)
        if state == "no-work":
            expected[name] = {"state": state, "findings": {}}
            continue
        rules = {rule: (severity, 1 + (index + k) % 3)
                 for k, (rule, severity) in enumerate(RULE_POOL) if (index >> k) & 1}
        findings = {s: sum(n for sev, n in rules.values() if sev == s) for s in contract.SEVERITIES}
        scanned = {"stale": now - dt.timedelta(hours=40), "failed": now - dt.timedelta(hours=8)}.get(
            state, now - dt.timedelta(hours=1 + index % 5))
        cron = {"lastScheduleTime": stamp(scanned), "lastSuccessfulTime": stamp(scanned)}
        if state == "failed":
            cron["lastScheduleTime"] = stamp(now - dt.timedelta(hours=2))
        feedback = None
        if state == "never-reported":
            cron = {}
        else:
            feedback = {"cluster": name, "scanTime": stamp(scanned), "hcpscanVersion": "0.1.0",
                        "reportDigest": "sha256:%064x" % index,
                        "reportsPublishedTo": "openreports.io/v1alpha1", **findings,
                        "rulesPassed": 40 - len(rules), "rulesFailed": len(rules), "rulesNotEvaluable": 0,
                        "failingRules": contract.encode_rules(rules), "notEvaluableRules": ""}
        # older hubs name the works after the replica set, OCM 1.3+ generates their names
        work_name = contract.WORK_NAME if index % 2 else generated_name(index)
        objects.append(simulated_work(name, template, feedback, cron, now, work_name))
        expected[name] = {"state": state, "findings": findings if feedback else {}, "rules": rules}
    for start in range(0, len(placed), 100):
        objects.append({"apiVersion": "cluster.open-cluster-management.io/v1beta1",
                        "kind": "PlacementDecision",
                        "metadata": {"name": f"hcpscan-fleet-decision-{start // 100 + 1}",
                                     "namespace": "hcpscan-fleet",
                                     "labels": {PLACEMENT_LABEL: "hcpscan-fleet"}},
                        "status": {"decisions": [{"clusterName": c, "reason": ""}
                                                 for c in placed[start:start + 100]]}})
    return objects, expected
