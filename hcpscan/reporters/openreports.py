"""OpenReports: results as Kubernetes objects, where platform teams read policy results.

``openreports.io/v1alpha1`` ``Report`` (namespaced) and ``ClusterReport``, as
multi-document YAML. :mod:`hcpscan.reporters.policyreport` writes the same
objects as the older ``wgpolicyk8s.io/v1alpha2`` ``PolicyReport`` /
``ClusterPolicyReport``; both come from :func:`build_reports`.

Layout (docs/manual.md, "OpenReports"):

* one ``Report`` per (cluster, namespace) holding findings, in that namespace;
  findings on cluster-scoped objects go to the cluster's ``ClusterReport``;
* results that have no object (a rule that passed, was not applicable or not
  evaluable) describe the whole scan and go to the ``ClusterReport`` of the
  scan's first cluster (``management`` whenever it is there), which is always
  written, so the coverage travels with the findings;
* the scanned cluster's own name (``hcpscan cluster --cluster-name``, or the
  OCM Klusterlet's clusterName or a ClusterClaim; ``metadata.clusterName`` of the scan) labels
  its reports and is each result's ``properties.cluster``, so a fleet's reports
  say which cluster they are about; without it the label is ``management``;
* each result names its rule twice: ``policy`` and ``rule`` (Policy Reporter
  shows both columns), and a live object's ``uid`` is in its resource reference;
* names come from the cluster only (``hcpscan`` for the management cluster,
  ``hcpscan-<cluster>`` for a guest cluster of a dump), never from a time, so
  applying a new scan updates the objects of the previous one.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import yaml

from hcpscan.findings.model import MANAGEMENT, Finding, RuleInfo, RuleResult, ScanReport, Status
from hcpscan.reporters.interface import ReportOptions
from hcpscan.reporters.summary import config_text, ordered, passed_over_text, rule_index

SOURCE = "hcpscan"
MANAGED_BY = {"app.kubernetes.io/managed-by": "hcpscan"}
CLUSTER_LABEL = "hcpscan.io/cluster"
# The five values of `result` in both APIs; summary counts them in this order.
RESULTS = ("pass", "fail", "warn", "error", "skip")

_NOT_DNS = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True, slots=True)
class ReportKinds:
    """One API's names for the two report kinds, and where it keeps ``source``."""

    api_version: str
    namespaced: str
    cluster_scoped: str
    source_on_report: bool  # OpenReports has a report-level `source`; v1alpha2 only per result


OPENREPORTS = ReportKinds("openreports.io/v1alpha1", "Report", "ClusterReport", True)


def dns_label(text: str) -> str:
    """``text`` as a DNS label (lowercase letters, digits, ``-``; at most 63): kept as it
    is when already one, otherwise cleaned and suffixed with a hash of the original so
    two names that clean alike stay apart."""
    clean = _NOT_DNS.sub("-", text.lower()).strip("-")
    if clean == text and 0 < len(clean) <= 50:
        return clean
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"{clean[:40].strip('-')}-{digest}".lstrip("-")


def report_name(cluster: str) -> str:
    """Stable per cluster: re-applying a later scan updates the same objects."""
    return SOURCE if cluster == MANAGEMENT else f"{SOURCE}-{dns_label(cluster)}"


# The config the run used, as every other report format names it.
CONFIG_ANNOTATION = "hcpscan.io/config"
PASSED_OVER_ANNOTATION = "hcpscan.io/passed-over"


def build_reports(report: ScanReport, kinds: ReportKinds = OPENREPORTS) -> list[dict[str, Any]]:
    """The report objects of a scan: the ``ClusterReport`` s first, then the namespaced
    ``Report`` s by cluster and namespace."""
    infos = rule_index(report)
    stamp = _timestamp(report.metadata.get("started"))
    clusters = list(report.metadata.get("clusters") or []) or [MANAGEMENT]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for finding in ordered(report.findings):
        key = (finding.object.cluster, finding.object.namespace)
        groups[key].append(_finding_result(finding, infos.get(finding.rule_id), stamp, kinds))
    groups[(clusters[0], "")].extend(_scan_results(report, infos, stamp, kinds))
    identity = cluster_identity(report)
    if identity:
        for (cluster, _), results in groups.items():
            for result in results:
                result.setdefault("properties", {})["cluster"] = (
                    identity if cluster == MANAGEMENT else cluster)
    annotations = {CONFIG_ANNOTATION: config} if (config := config_text(report)) is not None else {}
    if report.passed_over:  # input the scan did not read, with its reasons, as every report says
        annotations[PASSED_OVER_ANNOTATION] = "; ".join(passed_over_text(i) for i in report.passed_over)
    return [_report_object(cluster, namespace, results, kinds, annotations, identity)
            for (cluster, namespace), results in sorted(groups.items(), key=_group_order)]


def cluster_identity(report: ScanReport) -> str:
    """The scanned cluster's own name, when the scan knows it (live scans of a managed
    cluster), else empty."""
    name = report.metadata.get("clusterName")
    return name if isinstance(name, str) else ""


def empty_reports(namespaces: list[str], cluster: str = MANAGEMENT,
                  kinds: ReportKinds = OPENREPORTS, identity: str = "") -> list[dict[str, Any]]:
    """A ``Report`` with no results for each namespace: what a namespace whose findings
    are all gone should show instead of the previous scan's."""
    return [_report_object(cluster, namespace, [], kinds, identity=identity)
            for namespace in sorted(namespaces)]


def _group_order(item: tuple[tuple[str, str], Any]) -> tuple[bool, bool, str, str]:
    (cluster, namespace), _ = item
    return (namespace != "", cluster != MANAGEMENT, cluster, namespace)


def _report_object(cluster: str, namespace: str, results: list[dict[str, Any]],
                   kinds: ReportKinds, annotations: dict[str, str] | None = None,
                   identity: str = "") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": report_name(cluster)}
    if namespace:
        metadata["namespace"] = namespace
    named = identity if cluster == MANAGEMENT and identity else cluster
    metadata["labels"] = {**MANAGED_BY, CLUSTER_LABEL: dns_label(named)}
    if annotations:  # which .hcpscan.yaml shaped these results (path and sha256, or none) ...
        metadata["annotations"] = dict(annotations)
    obj: dict[str, Any] = {"apiVersion": kinds.api_version,
                           "kind": kinds.namespaced if namespace else kinds.cluster_scoped,
                           "metadata": metadata}
    if kinds.source_on_report:
        obj["source"] = SOURCE
    counts = {name: 0 for name in RESULTS}
    for result in results:
        counts[result["result"]] += 1
    obj["summary"] = counts
    obj["results"] = results
    return obj


def _finding_result(finding: Finding, info: RuleInfo | None, stamp: dict[str, int] | None,
                    kinds: ReportKinds) -> dict[str, Any]:
    suppressed = finding.status is Status.SUPPRESSED
    result = _result_head(finding.rule_id, info, finding.message, "skip" if suppressed else "fail",
                          stamp, kinds)
    result["severity"] = finding.severity.value
    obj = finding.object
    ref = {"apiVersion": obj.api_version, "kind": obj.kind, "name": obj.name}
    if obj.namespace:
        ref["namespace"] = obj.namespace
    if obj.uid:  # a live object's: Policy Reporter links results to the object by it
        ref["uid"] = obj.uid
    result["resources"] = [ref]
    props = {"field": finding.field, "file": finding.location.path,
             "line": str(finding.location.line), "column": str(finding.location.column),
             "fingerprint": finding.key}
    if finding.location.virtual:
        props["virtualLocation"] = "true"
    if finding.evidence:
        props["evidence"] = "\n".join(finding.evidence)
    if finding.suppression is not None:
        sup = finding.suppression
        props.update({"suppressedBy": sup.source, "justification": sup.justification})
        if sup.expires:
            props["expires"] = sup.expires
    if finding.notes:
        props["notes"] = "\n".join(finding.notes)
    result["properties"] = props
    return result


def _scan_results(report: ScanReport, infos: dict[str, RuleInfo], stamp: dict[str, int] | None,
                  kinds: ReportKinds) -> list[dict[str, Any]]:
    """One result, without resources, per rule that has no finding to speak for it."""
    with_findings = {f.rule_id for f in report.findings}
    out = []
    for rule in sorted(report.results, key=lambda r: r.rule_id):
        if rule.rule_id in with_findings:
            continue
        outcome, message = _rule_outcome(rule, infos.get(rule.rule_id))
        result = _result_head(rule.rule_id, infos.get(rule.rule_id), message, outcome, stamp, kinds)
        props = {"objectsChecked": str(rule.objects_checked)}
        if rule.reason:
            props["reason"] = rule.reason
        result["properties"] = props
        out.append(result)
    return out


def _rule_outcome(rule: RuleResult, info: RuleInfo | None) -> tuple[str, str]:
    """``pass`` only for a rule that looked at objects and found nothing; nothing in
    scope (not applicable) and a rule suppressed as a whole are ``skip``; not
    evaluable is ``error``."""
    title = info.title if info else rule.rule_id
    if rule.status is Status.PASS:
        return "pass", f"{title}: no finding in {rule.objects_checked} object(s)"
    if rule.status is Status.NOT_APPLICABLE:
        return "skip", f"not applicable: {rule.reason or 'nothing in the rule scope'}"
    if rule.status is Status.NOT_EVALUABLE:
        return "error", f"not evaluable: {rule.reason or 'no reason given'}"
    if rule.status is Status.SUPPRESSED:
        return "skip", f"suppressed: {rule.reason or 'no reason given'}"
    return "fail", rule.reason or title


def _result_head(rule_id: str, info: RuleInfo | None, message: str, outcome: str,
                 stamp: dict[str, int] | None, kinds: ReportKinds) -> dict[str, Any]:
    result: dict[str, Any] = {"policy": rule_id, "rule": rule_id}
    if info is not None:
        result["category"] = info.category
        result["severity"] = info.severity.value
    result["result"] = outcome
    result["message"] = message
    if not kinds.source_on_report:
        result["source"] = SOURCE
    if stamp is not None:
        result["timestamp"] = dict(stamp)
    return result


def _timestamp(started: object) -> dict[str, int] | None:
    """The scan's start as a protobuf Timestamp; reporters read no clock."""
    if not isinstance(started, str):
        return None
    try:
        when = dt.datetime.fromisoformat(started.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    seconds = int(when.timestamp())
    return {"seconds": seconds, "nanos": when.microsecond * 1000}


class _Dumper(yaml.SafeDumper):
    """Multi-line text (evidence, notes) as literal blocks, so it reads as written."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and value == value.strip() else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def dump_documents(objects: list[dict[str, Any]]) -> str:
    """Multi-document YAML, one object per document, keys in the order built."""
    return "".join("---\n" + yaml.dump(obj, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                                       width=100)
                   for obj in objects)


class OpenReportsReporter:
    name = "openreports"
    media_type = "application/yaml"
    extension = "yaml"
    kinds = OPENREPORTS

    def render(self, report: ScanReport, options: ReportOptions) -> str:
        return dump_documents(build_reports(report, self.kinds))
