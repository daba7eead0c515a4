"""JUnit XML: parses, and its counts add up to the rules × objects that ran."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hcpscan.reporters import REPORTERS, ReportOptions
from tests.reporters.reports import ignition_finding, report_with


def parse(report, **options) -> ET.Element:
    return ET.fromstring(REPORTERS["junit"].render(report, ReportOptions(**options)).encode())


def suite(root: ET.Element, rule_id: str) -> ET.Element:
    return next(s for s in root.iter("testsuite") if s.get("name", "").startswith(rule_id))


def test_totals(realistic):
    root = parse(realistic)
    assert root.tag == "testsuites"
    cases = list(root.iter("testcase"))
    # NET-001: 2 failing + rest, NET-004: 2 failing + rest, NET-009, INFO-001: 1 failing each;
    # PROXY-002, PROXY-005 (suppressed), NET-011 (not evaluable): skipped; NET-010: passing
    assert root.get("tests") == str(len(cases)) == "12"
    assert root.get("failures") == str(sum(1 for c in cases if c.find("failure") is not None))
    assert root.get("failures") == "6"
    # Jenkins' schema has no skipped on <testsuites>: the suites carry it
    assert root.get("skipped") is None
    assert sum(int(s.get("skipped")) for s in root.findall("testsuite")) == 3
    assert parse(realistic, junit_extended=True).get("skipped") == "3"
    assert root.get("errors") == "0"


def test_one_suite_per_rule_with_its_own_counts(realistic):
    root = parse(realistic)
    assert len(root.findall("testsuite")) == len(realistic.results)
    for element in root.findall("testsuite"):
        cases = element.findall("testcase")
        assert element.get("tests") == str(len(cases))
        assert element.get("failures") == str(sum(c.find("failure") is not None for c in cases))


def test_one_testcase_per_failing_object_plus_the_clean_rest(realistic):
    ignition = suite(parse(realistic), "HCP-NET-001")
    names = [c.get("name") for c in ignition.findall("testcase")]
    assert names == ["NetworkPolicy hcp-ns/nodeport-ignition",
                     "NetworkPolicy hcp-ns/nodeport-ignition-proxy", "3 other objects pass"]
    failure = ignition.find("testcase/failure")
    assert failure.get("type") == "critical"
    assert "0.0.0.0/0 → 9090/TCP" in failure.text
    first = ignition.find("testcase")
    assert first.get("file") is None and first.get("line") is None  # not in Jenkins' schema
    assert "at: gitops/hcp/networkpolicies.yaml:26" in failure.text
    extended = suite(parse(realistic, junit_extended=True), "HCP-NET-001").find("testcase")
    assert extended.get("file") == "gitops/hcp/networkpolicies.yaml" and extended.get("line") == "26"


def test_two_findings_on_one_object_are_one_testcase():
    one = ignition_finding()
    two = ignition_finding(line=13)
    two.field = "spec.ingress[0].ports[0].protocol"
    root = parse(report_with([one, two]))
    cases = [c for c in root.iter("testcase") if c.find("failure") is not None]
    assert len(cases) == 1
    assert cases[0].find("failure").text.count("[critical]") == 2


def test_not_evaluable_is_skipped_with_the_reason(realistic):
    case = suite(parse(realistic), "HCP-NET-011").find("testcase")
    assert "no Service objects in the input" in case.find("skipped").get("message")


def test_suppressed_object_is_skipped_with_the_justification(realistic):
    case = suite(parse(realistic), "HCP-PROXY-002").find("testcase")
    assert case.find("failure") is None
    assert "secondary network is reached without the proxy" in case.find("skipped").get(
        "message")


def test_passing_rule_is_a_passing_testcase(realistic):
    cases = suite(parse(realistic), "HCP-NET-010").findall("testcase")
    assert [c.get("name") for c in cases] == ["all 3 objects pass"]
    assert list(cases[0]) == []


def test_control_characters_do_not_break_the_xml():
    finding = ignition_finding()
    finding.message = "bad\x00byte\x1b[31m in a value"
    root = parse(report_with([finding]))
    assert "bad\\x00byte\\x1b[31m" in next(root.iter("failure")).get("message")
