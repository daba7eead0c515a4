"""What the stand-in validates applied objects against, per (group, kind).

* built-in kinds: the JSON Schema of the kubernetes client's model of the kind
  (generated from Kubernetes' own OpenAPI: field names, types, required fields,
  no unknown fields), plus ObjectMeta's name rules;
* OpenReports: the CRDs in ../shared/conformance/openreports (tests.k8sschema);
* CustomResourceDefinition (the kubernetes client's model) and hcpscan's own
  ScanSummary (its CRD's schema, hcpscan/fleet/contract.py);
* Open Cluster Management's Placement, ManagedClusterSetBinding,
  ManifestWorkReplicaSet and ManifestWork with its status (where status feedback
  lands, required fields and condition reasons included): written here from the published API field lists
  (open-cluster-management-io/api ``cluster/v1beta1``, ``cluster/v1beta2``,
  ``work/v1``, ``work/v1alpha1``), covering the fields deploy/ may use; an object
  schema is closed, so a misspelt or unknown field is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import jsonschema
import kubernetes.client

from hcpscan.fleet import contract
from tests.conftest import SHARED
from tests.k8sschema import OBJECT_META, CrdValidator, errors_against_crd, load_crd, to_json_schema

Validator = Callable[[dict[str, Any]], list[str]]
OPENREPORTS_CRDS = SHARED / "conformance" / "openreports"


def _messages(validator: jsonschema.protocols.Validator, obj: dict[str, Any]) -> list[str]:
    out = []
    for top in validator.iter_errors(obj):
        for error in _leaves(top):
            where = ".".join(str(p) for p in error.absolute_path) or "(root)"
            out.append(f"{where}: {error.message}")
    return sorted(set(out))


def _leaves(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    """Optional fields are "the type, or null": report what is wrong inside, not "no match"."""
    if not error.context:
        return [error]
    inner = [leaf for sub in error.context if not (sub.validator == "type" and sub.validator_value == "null")
             for leaf in _leaves(sub)]
    return inner or [error]


@cache
def _model_validator(model_name: str) -> jsonschema.protocols.Validator:
    model = getattr(kubernetes.client, model_name)
    if not hasattr(model, "model_json_schema"):
        raise RuntimeError("the kubernetes client is too old to describe its models (pydantic); "
                           "upgrade it: pip install -U kubernetes")
    schema = model.model_json_schema(by_alias=True, mode="serialization")
    schema["properties"]["metadata"] = OBJECT_META
    return jsonschema.Draft202012Validator(schema)


def builtin(model_name: str) -> Validator:
    """A built-in kind, e.g. ``builtin("V1CronJob")``."""
    return lambda obj: _messages(_model_validator(model_name), obj)


def crd(path_name: str, version: str) -> Validator:
    definition = load_crd(OPENREPORTS_CRDS / path_name)
    return lambda obj: errors_against_crd(obj, definition, version)


def openapi(schema: dict[str, Any]) -> Validator:
    """A schema in the CRD dialect (OpenAPI v3 with Kubernetes extensions)."""
    translated = to_json_schema(schema)
    translated["properties"]["metadata"] = OBJECT_META
    validator = CrdValidator(translated)
    return lambda obj: _messages(validator, obj)


# --- Open Cluster Management, from the published field lists -------------------------------

def _s(**extra: Any) -> dict[str, Any]:
    return {"type": "string", **extra}


def _obj(required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    return out


def _array(items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, **extra}


def _label_selector() -> dict[str, Any]:
    requirement = _obj(("key", "operator"), key=_s(), operator=_s(), values=_array(_s()))
    return _obj(matchLabels={"type": "object", "additionalProperties": _s()},
                matchExpressions=_array(requirement))


def _top(spec: dict[str, Any]) -> dict[str, Any]:
    return _obj(("spec",), apiVersion=_s(), kind=_s(), metadata={"type": "object"}, spec=spec)


def _placement() -> dict[str, Any]:
    cluster_selector = _obj(labelSelector=_label_selector(), claimSelector=_obj(
        matchExpressions=_array(_obj(("key", "operator"), key=_s(), operator=_s(), values=_array(_s())))),
        celSelector=_obj(celExpressions=_array(_s())))
    toleration = _obj(key=_s(), operator=_s(enum=["Exists", "Equal"]), value=_s(),
                      effect=_s(enum=["NoSelect", "PreferNoSelect", "NoSelectIfNew"]),
                      tolerationSeconds={"type": "integer", "format": "int64"})
    return _top(_obj(
        clusterSets=_array(_s()), numberOfClusters={"type": "integer", "format": "int32", "minimum": 0},
        predicates=_array(_obj(requiredClusterSelector=cluster_selector)),
        prioritizerPolicy=_obj(mode=_s(enum=["Additive", "Exact"]), configurations=_array(_obj(
            scoreCoordinate=_obj(("type",), type=_s(enum=["BuiltIn", "AddOn"]), builtIn=_s(),
                                 addOn=_obj(("resourceName", "scoreName"), resourceName=_s(),
                                            scoreName=_s())),
            weight={"type": "integer", "format": "int32", "minimum": -10, "maximum": 10}))),
        spreadPolicy=_obj(spreadConstraints=_array(_obj(("topologyKey", "topologyKeyType"),
                                                        topologyKey=_s(),
                                                        topologyKeyType=_s(enum=["Label", "Claim"]),
                                                        maxSkew={"type": "integer", "format": "int32"},
                                                        whenUnsatisfiable=_s(enum=["DoNotSchedule",
                                                                                   "ScheduleAnyway"])))),
        tolerations=_array(toleration),
        decisionStrategy=_obj(groupStrategy=_obj(
            clustersPerDecisionGroup={"x-kubernetes-int-or-string": True},
            decisionGroups=_array(_obj(groupName=_s(), groupClusterSelector=cluster_selector))))))


def _manifest_work_spec() -> dict[str, Any]:
    manifest = {"type": "object", "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True}
    identifier = _obj(("resource", "name"), group=_s(), resource=_s(), name=_s(), namespace=_s())
    strategy = _obj(("type",), type=_s(enum=["Update", "CreateOnly", "ServerSideApply", "ReadOnly"]),
                    serverSideApply=_obj(fieldManager=_s(), force={"type": "boolean"},
                                         ignoreFields=_array(_obj(("condition", "jsonPaths"),
                                                                  condition=_s(),
                                                                  jsonPaths=_array(_s())))))
    feedback = _obj(("type",), type=_s(enum=["WellKnownStatus", "JSONPaths"]),
                    jsonPaths=_array(_obj(("name", "path"), name=_s(), path=_s(), version=_s())))
    return _obj(
        workload=_obj(manifests=_array(manifest)),
        deleteOption=_obj(propagationPolicy=_s(enum=["Foreground", "Orphan", "SelectivelyOrphan"]),
                          selectivelyOrphans=_obj(orphaningRules=_array(identifier)),
                          ttlSecondsAfterFinished={"type": "integer", "format": "int64"}),
        manifestConfigs=_array(_obj(("resourceIdentifier",), resourceIdentifier=identifier,
                                    updateStrategy=strategy, feedbackRules=_array(feedback))))


def _condition() -> dict[str, Any]:
    """metav1.Condition: a non-empty CamelCase reason, as the API server requires."""
    return _obj(("type", "status", "lastTransitionTime", "reason", "message"), type=_s(),
                status=_s(enum=["True", "False", "Unknown"]), lastTransitionTime=_s(),
                reason=_s(minLength=1, pattern="^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"),
                message=_s(), observedGeneration={"type": "integer"})


def _manifest_work() -> dict[str, Any]:
    """ManifestWork with its status (work/v1 ManifestWorkStatus): where status feedback lands."""
    value = _obj(("type",), type=_s(enum=["Integer", "String", "Boolean", "JsonRaw"]),
                 integer={"type": "integer"}, string=_s(), boolean={"type": "boolean"},
                 jsonRaw=_s(maxLength=1024))
    meta = _obj(("ordinal",), ordinal={"type": "integer"}, group=_s(), version=_s(), kind=_s(), resource=_s(),
                name=_s(), namespace=_s())
    manifest = _obj(("resourceMeta", "conditions"), resourceMeta=meta,
                    statusFeedback=_obj(values=_array(_obj(("name", "fieldValue"), name=_s(),
                                                           fieldValue=value))),
                    conditions=_array(_condition()))
    status = _obj(conditions=_array(_condition()),
                  resourceStatus=_obj(manifests=_array(manifest)))
    top = _top(_manifest_work_spec())
    top["properties"]["status"] = status
    return top


def _rollout_strategy() -> dict[str, Any]:
    timing = {"progressDeadline": _s(), "maxFailures": {"x-kubernetes-int-or-string": True},
              "minSuccessTime": _s()}
    return _obj(type=_s(enum=["All", "Progressive", "ProgressivePerGroup"]),
                all=_obj(**timing),
                progressive=_obj(**timing, maxConcurrency={"x-kubernetes-int-or-string": True},
                                 mandatoryDecisionGroups=_array(_obj(groupName=_s(),
                                                                     groupIndex={"type": "integer"}))),
                progressivePerGroup=_obj(**timing,
                                         mandatoryDecisionGroups=_array(_obj(
                                             groupName=_s(), groupIndex={"type": "integer"}))))


def _manifest_work_replica_set() -> dict[str, Any]:
    return _top(_obj(("placementRefs",),
                     manifestWorkTemplate=_manifest_work_spec(),
                     placementRefs=_array(_obj(("name",), name=_s(minLength=1),
                                               rolloutStrategy=_rollout_strategy()), minItems=1),
                     cascadeDeletionPolicy=_s(enum=["Background", "Foreground"])))


def _managed_cluster_set_binding() -> dict[str, Any]:
    return _top(_obj(("clusterSet",), clusterSet=_s(minLength=1)))


def validators() -> dict[tuple[str, str], Validator]:
    """Every kind the stand-in can validate, by (group, kind)."""
    return {
        ("", "Namespace"): builtin("V1Namespace"),
        ("", "ServiceAccount"): builtin("V1ServiceAccount"),
        ("rbac.authorization.k8s.io", "ClusterRole"): builtin("V1ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"): builtin("V1ClusterRoleBinding"),
        ("rbac.authorization.k8s.io", "Role"): builtin("V1Role"),
        ("rbac.authorization.k8s.io", "RoleBinding"): builtin("V1RoleBinding"),
        ("batch", "CronJob"): builtin("V1CronJob"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"): builtin("V1CustomResourceDefinition"),
        ("hcpscan.io", "ScanSummary"): openapi(
            contract.scan_summary_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]),
        ("openreports.io", "Report"): crd("openreports.io_reports.yaml", "v1alpha1"),
        ("openreports.io", "ClusterReport"): crd("openreports.io_clusterreports.yaml", "v1alpha1"),
        ("cluster.open-cluster-management.io", "Placement"): openapi(_placement()),
        ("cluster.open-cluster-management.io", "ManagedClusterSetBinding"):
            openapi(_managed_cluster_set_binding()),
        ("work.open-cluster-management.io", "ManifestWorkReplicaSet"):
            openapi(_manifest_work_replica_set()),
        ("work.open-cluster-management.io", "ManifestWork"): openapi(_manifest_work()),
    }
