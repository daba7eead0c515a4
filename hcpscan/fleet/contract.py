"""What a managed cluster's scan hands to the hub, through OCM itself.

A scan run by the CronJob (``hcpscan cluster --publish-reports``) writes, besides
its OpenReports objects, one cluster-scoped ``ScanSummary`` named ``hcpscan``
whose ``status`` carries the scan's health and counts. The ManifestWork that put
the CronJob there declares feedback rules (``manifestConfigs[].feedbackRules``,
type ``JSONPaths``); the OCM work agent copies the values they name into the
hub's ``ManifestWork.status.resourceStatus.manifests[].statusFeedback``. So the
hub learns, per cluster and with no extra agent or network path:

* from the CronJob: ``lastScheduleTime`` and ``lastSuccessfulTime`` (a run that
  started after the last success failed, or still runs);
* from the ScanSummary: when the scan ran, the findings per severity, which rules
  failed (with severity and count) or could not be evaluated, the digest of the
  published reports and where they went.

OCM feedback values are scalars (integer, string, boolean), hence the rule lists
as one compact string each (:func:`encode_rules` / :func:`decode_rules`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from hcpscan.core.userinfo import split_outside_credentials
from hcpscan.findings.model import ScanReport, Severity, Status

GROUP, VERSION = "hcpscan.io", "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND, PLURAL = "ScanSummary", "scansummaries"
NAME = "hcpscan"  # one per cluster, updated by every run
CRD_NAME = f"{PLURAL}.{GROUP}"

# The CronJob deploy/ puts on every managed cluster, and the ManifestWork carrying it.
CRONJOB_NAMESPACE, CRONJOB_NAME = "hcpscan", "hcpscan"
WORK_NAME = "hcpscan"  # a ManifestWorkReplicaSet names its ManifestWorks after itself

SEVERITIES = tuple(s.value for s in Severity)  # most severe first

# feedback name -> JSONPath. The OCM work agent evaluates a JSONPaths rule against the
# whole object, not its status (open-cluster-management-io/ocm
# `work` module, spoke/statusfeedback/reader.go: FindResults(obj.UnstructuredContent());
# its own rules and tests read ".status.readyReplicas", ".metadata.name"), so every
# path starts at the root.
CRONJOB_FEEDBACK = {"lastScheduleTime": ".status.lastScheduleTime",
                    "lastSuccessfulTime": ".status.lastSuccessfulTime"}
SUMMARY_FEEDBACK = {
    "cluster": ".status.cluster",
    "scanTime": ".status.scanTime",
    "hcpscanVersion": ".status.hcpscanVersion",
    "reportDigest": ".status.reportDigest",
    "reportsPublishedTo": ".status.reportsPublishedTo",
    **{severity: f".status.findings.{severity}" for severity in SEVERITIES},
    "rulesPassed": ".status.rules.passed",
    "rulesFailed": ".status.rules.failed",
    "rulesNotEvaluable": ".status.rules.notEvaluable",
    "failingRules": ".status.failingRules",
    "notEvaluableRules": ".status.notEvaluableRules",
}

# a count of at most 9 digits: a hub's garbage ('=high:' and 5,000 digits) is an item not
# read, never Python's integer-conversion limit; a rule id as long as a DNS label at most
_RULE_ITEM = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]{0,62})=([a-z]+):([0-9]{1,9})$")


def feedback_rules(paths: dict[str, str]) -> list[dict[str, Any]]:
    """One ``JSONPaths`` feedback rule naming every path of ``paths``."""
    return [{"type": "JSONPaths",
             "jsonPaths": [{"name": name, "path": path} for name, path in paths.items()]}]


def manifest_configs() -> list[dict[str, Any]]:
    """``spec.manifestConfigs`` of the ManifestWork: what comes back to the hub.

    OCM runs feedback rules only for resources the work itself created, hence the
    ScanSummary seed among the work's manifests (:func:`scan_summary_seed`), applied
    ``CreateOnly`` so the agent never overwrites the status each scan writes."""
    return [
        {"resourceIdentifier": {"group": "batch", "resource": "cronjobs",
                                "namespace": CRONJOB_NAMESPACE, "name": CRONJOB_NAME},
         "feedbackRules": feedback_rules(CRONJOB_FEEDBACK)},
        {"resourceIdentifier": {"group": GROUP, "resource": PLURAL, "name": NAME},
         "feedbackRules": feedback_rules(SUMMARY_FEEDBACK),
         "updateStrategy": {"type": "CreateOnly"}},
    ]


def scan_summary_seed() -> dict[str, Any]:
    """The ScanSummary as the ManifestWork creates it, before any scan: no status."""
    return {"apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": NAME, "labels": {"app.kubernetes.io/managed-by": "hcpscan"}}}


def encode_rules(rules: dict[str, tuple[str, int]]) -> str:
    """``{"HCP001": ("high", 2)}`` -> ``"HCP001=high:2"``, comma separated, sorted."""
    return ",".join(f"{rule}={severity}:{count}" for rule, (severity, count) in sorted(rules.items()))


def decode_rules(text: str) -> tuple[dict[str, tuple[str, int]], list[str]]:
    """The inverse of :func:`encode_rules`; items that do not parse are returned apart,
    so a reader can say what it could not read instead of dropping it."""
    rules: dict[str, tuple[str, int]] = {}
    bad: list[str] = []
    # never split inside a credential: a fragment ('http://u:Zq9') is a password no
    # masking recognises once a reader shows the item
    for item in filter(None, (part.strip() for part in split_outside_credentials(text, ","))):
        match = _RULE_ITEM.match(item)
        if match and match.group(2) in SEVERITIES:
            rules[match.group(1)] = (match.group(2), int(match.group(3)))
        else:
            bad.append(item)
    return rules, bad


def report_digest(objects: list[dict[str, Any]]) -> str:
    """``sha256:`` of the published report objects as canonical JSON, in order, without
    the results' ``timestamp`` (the scan's start, different every run): two runs whose
    reports say the same have the same digest, so the hub sees when a cluster's results
    changed."""
    timeless = [{**obj, "results": [{k: v for k, v in result.items() if k != "timestamp"}
                                    if isinstance(result, dict) else result
                                    for result in obj["results"]]}
                if isinstance(obj.get("results"), list) else obj for obj in objects]
    canonical = json.dumps(timeless, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class SummaryCounts:
    findings: dict[str, int]  # severity -> failing findings (suppressed ones not counted)
    failing: dict[str, tuple[str, int]]  # rule -> (its most severe finding's severity, count)
    not_evaluable: list[str]
    passed: int


def summarize(report: ScanReport) -> SummaryCounts:
    findings = Counter(f.severity.value for f in report.failing)
    failing: dict[str, tuple[str, int]] = {}
    for finding in report.failing:
        severity, count = failing.get(finding.rule_id, (finding.severity.value, 0))
        if Severity(finding.severity.value).rank > Severity(severity).rank:
            severity = finding.severity.value
        failing[finding.rule_id] = (severity, count + 1)
    not_evaluable = sorted(r.rule_id for r in report.results if r.status is Status.NOT_EVALUABLE)
    passed = sum(1 for r in report.results if r.status is Status.PASS)
    return SummaryCounts({s: findings.get(s, 0) for s in SEVERITIES}, failing, not_evaluable, passed)


def scan_summary(report: ScanReport, cluster: str, digest: str, published_to: str) -> dict[str, Any]:
    """The ``ScanSummary`` object of one scan (``published_to``: the report API the
    results went to, or ``none``)."""
    counts = summarize(report)
    status: dict[str, Any] = {
        "cluster": cluster,
        "scanTime": str(report.metadata.get("started") or ""),
        "hcpscanVersion": report.tool_version,
        "reportDigest": digest,
        "reportsPublishedTo": published_to,
        "findings": counts.findings,
        "rules": {"passed": counts.passed, "failed": len(counts.failing),
                  "notEvaluable": len(counts.not_evaluable)},
        "failingRules": encode_rules(counts.failing),
        "notEvaluableRules": ",".join(counts.not_evaluable),
    }
    return {"apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": NAME, "labels": {"app.kubernetes.io/managed-by": "hcpscan"}},
            "status": status}


def scan_summary_crd() -> dict[str, Any]:
    """The CRD of ``ScanSummary`` (carried by the ManifestWork). No status subresource:
    the one writer applies the whole object, status included, in one request."""
    integer = {"type": "integer", "minimum": 0}
    string = {"type": "string"}
    status = {
        "type": "object",
        "properties": {
            "cluster": string, "scanTime": string, "hcpscanVersion": string,
            "reportDigest": string,
            "reportsPublishedTo": {"type": "string",
                                   "description": "the report API the results went to, or none"},
            "findings": {"type": "object", "properties": {s: integer for s in SEVERITIES}},
            "rules": {"type": "object", "properties": {"passed": integer, "failed": integer,
                                                       "notEvaluable": integer}},
            "failingRules": {"type": "string",
                             "description": "RULE=severity:count, comma separated"},
            "notEvaluableRules": {"type": "string", "description": "rule ids, comma separated"},
        },
    }
    columns = [{"name": "Scanned", "type": "string", "jsonPath": ".status.scanTime"},
               *({"name": s.capitalize(), "type": "integer", "jsonPath": f".status.findings.{s}"}
                 for s in SEVERITIES[:3]),
               {"name": "Failing", "type": "string", "jsonPath": ".status.failingRules",
                "priority": 1}]
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME, "labels": {"app.kubernetes.io/name": "hcpscan"}},
        "spec": {
            "group": GROUP, "scope": "Cluster",
            "names": {"kind": KIND, "listKind": f"{KIND}List", "plural": PLURAL,
                      "singular": KIND.lower()},
            "versions": [{"name": VERSION, "served": True, "storage": True,
                          "additionalPrinterColumns": columns,
                          "schema": {"openAPIV3Schema": {
                              "type": "object",
                              "description": "The health and counts of the last hcpscan run on "
                                             "this cluster; ManifestWork feedback carries its "
                                             "status to the OCM hub.",
                              "properties": {"apiVersion": string, "kind": string,
                                             "metadata": {"type": "object"},
                                             "status": status}}}}],
        },
    }
