"""The JSON report follows its published schema and carries the documented fields."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest

from hcpscan.reporters import JSON_SCHEMA_PATH, REPORTERS, SCHEMA_VERSION, ReportOptions
from tests.reporters.reports import many_findings, report_with


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(JSON_SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def document(report, options: ReportOptions | None = None) -> dict:
    return json.loads(REPORTERS["json"].render(report, options or ReportOptions()))


def errors(validator, doc) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(doc)]


def test_realistic_report_matches_the_schema(validator, realistic):
    assert errors(validator, document(realistic)) == []


def test_many_findings_and_an_empty_scan_match_the_schema(validator):
    assert errors(validator, document(report_with(many_findings(50)))) == []
    assert errors(validator, document(report_with([]))) == []


def test_schema_rejects_what_it_does_not_document(validator, realistic):
    doc = document(realistic)
    doc["findings"][0]["status"] = "pass"
    doc["findings"][1]["object"].pop("apiVersion")
    doc["rules"][0]["status"] = "ok"
    assert len(errors(validator, doc)) == 3


def test_suppressed_finding_must_say_why(validator, realistic):
    doc = document(realistic)
    suppressed = next(f for f in doc["findings"] if f["status"] == "suppressed")
    del suppressed["suppression"]
    assert errors(validator, doc)


def test_schema_version_is_stated(realistic):
    doc = document(realistic)
    assert doc["schema_version"] == SCHEMA_VERSION == "1.3"


def test_finding_fields(realistic):
    doc = document(realistic)
    archive = next(f for f in doc["findings"] if f["object"]["name"] == "allow-dns")
    assert archive["rule_id"] == "HCP-NET-004"
    assert archive["severity"] == "high"
    assert archive["status"] == "fail"
    assert archive["object"] == {"cluster": "hostedcluster-prod",
                                 "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                                 "namespace": "openshift-dns", "name": "allow-dns"}
    assert archive["location"]["path"].startswith("dumps/hypershift-dump.tar.gz!")
    assert archive["location"]["line"] == 9
    assert archive["field"] == "spec.egress[0].ports[0]"
    assert archive["evidence"] == ["egress to 53/UDP allowed by NetworkPolicy "
                                   "openshift-dns/allow-dns", "no rule allows 53/TCP"]


def test_findings_are_most_severe_first(realistic):
    order = ["critical", "high", "medium", "low", "info"]
    severities = [f["severity"] for f in document(realistic)["findings"]]
    assert severities == sorted(severities, key=order.index)


def test_rules_carry_every_status_with_reasons(realistic):
    rules = {r["rule_id"]: r for r in document(realistic)["rules"]}
    assert {r["status"] for r in rules.values()} == {"fail", "pass", "not-evaluable",
                                                     "suppressed"}
    assert rules["HCP-NET-011"]["reason"] == "no Service objects in the input"
    assert rules["HCP-NET-001"]["title"] == "Ignition endpoint reachable from any source"


def test_summary_diagnostics_inventory_and_metadata(realistic):
    doc = document(realistic)
    assert doc["summary"]["findings"] == {"critical": 2, "high": 3, "medium": 0, "low": 0,
                                          "info": 1}
    assert doc["summary"]["suppressed"]["medium"] == 1
    assert doc["summary"]["rules"] == {"fail": 4, "pass": 1, "not-evaluable": 1, "not-applicable": 0,
                                       "suppressed": 2}
    assert doc["diagnostics"][0]["message"] == "archive is truncated"
    assert doc["inventory"] == {"total": 8, "kinds": {"HostedCluster": 1, "NetworkPolicy": 6,
                                                      "Secret": 1}}
    assert doc["scan"]["started"] == "2026-02-03T04:05:06Z"
    assert doc["tool"] == {"name": "hcpscan", "version": "0.1.0",
                           "information_uri": "https://github.com/hcpscan/hcpscan"}


def test_metadata_of_any_python_type_becomes_json(realistic):
    realistic.metadata.update(started=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                              paths=[Path("gitops")], clusters={"b", "a"})
    scan = document(realistic)["scan"]
    assert scan["started"] == "2026-01-02T03:04:05+00:00"
    assert scan["paths"] == ["gitops"]
    assert scan["clusters"] == ["a", "b"]
