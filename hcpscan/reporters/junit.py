"""JUnit XML, for CI systems that show test reports (GitLab, Jenkins, Azure DevOps).

One ``<testsuite>`` per rule, one ``<testcase>`` per rule × object:

* an object with failing findings: a testcase with one ``<failure>`` listing them;
* an object whose findings are all suppressed: a skipped testcase with the
  justification;
* the objects a failing rule checked without finding anything: one passing
  testcase ("N other objects") so the totals add up;
* a passing rule: one passing testcase; a rule that was not evaluable or is
  suppressed as a whole: one skipped testcase with the reason.

Input passed over on purpose (hidden files, logs, resources no selected rule
reads...) is one more suite, ``hcpscan input passed over``: a skipped testcase
per reason, with the count.

By default the XML is valid against the common JUnit schema (Jenkins' xunit
``junit-10.xsd``): ``<testsuites>`` carries only name, tests, failures and errors,
a testcase only name and classname, and the scan's configuration is a
``<properties>`` of the first suite. ``ReportOptions.junit_extended`` adds what
GitLab and pytest also read: ``file``/``line`` on each failing testcase, and
``skipped`` and the properties on ``<testsuites>``.

Input that could not be read (error diagnostics; a run that ended with exit code
2 before any rule ran has only those) is the suite ``hcpscan input errors``: one
``<error>`` testcase per problem, so a CI system shows why the scan failed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field

from hcpscan.core.redact import shown
from hcpscan.findings.model import Finding, ObjectRef, RuleResult, ScanReport, Status
from hcpscan.reporters.interface import ReportOptions
from hcpscan.reporters.summary import config_text, ordered, passed_over_text, rule_index, where

# XML 1.0 cannot carry these even escaped; `shown` has made the others visible already.
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


def _xml_text(value: object) -> str:
    """One input-derived value: masked, control characters (newlines too) visible."""
    return _NOT_XML.sub("\ufffd", shown(value))


class JunitReporter:
    name = "junit"
    media_type = "application/xml"
    extension = "xml"

    def render(self, report: ScanReport, options: ReportOptions) -> str:
        root = build_tree(report, extended=options.junit_extended)
        ET.indent(root)
        body = ET.tostring(root, encoding="unicode")
        return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'


@dataclass
class _Counts:
    tests: int = 0
    failures: int = 0
    skipped: int = 0
    errors: int = 0

    def add(self, other: _Counts) -> None:
        self.tests += other.tests
        self.failures += other.failures
        self.skipped += other.skipped
        self.errors += other.errors


@dataclass
class _Suite:
    element: ET.Element
    counts: _Counts = field(default_factory=_Counts)
    extended: bool = False

    def case(self, classname: str, name: str, finding: Finding | None = None) -> ET.Element:
        attrs = {"classname": _xml_text(classname), "name": _xml_text(name)}
        if finding is not None and self.extended:
            attrs["file"] = _xml_text(finding.location.path)
            attrs["line"] = str(finding.location.line)
        self.counts.tests += 1
        return ET.SubElement(self.element, "testcase", attrs)

    def skip(self, case: ET.Element, message: str) -> None:
        ET.SubElement(case, "skipped", {"message": _xml_text(message)})
        self.counts.skipped += 1

    def fail(self, case: ET.Element, findings: list[Finding]) -> None:
        first = findings[0]
        failure = ET.SubElement(case, "failure", {"message": _xml_text(first.message),
                                                  "type": first.severity.value})
        failure.text = "\n\n".join(_describe(f) for f in findings)
        self.counts.failures += 1


def _describe(finding: Finding) -> str:
    """Lines of our own, each value escaped so it cannot add lines of its own."""
    lines = [f"[{finding.severity.value}] {_xml_text(finding.message)}",
             f"object: {_xml_text(finding.object)}", f"at: {_xml_text(where(finding.location))}"]
    if finding.field:
        lines.append(f"field: {_xml_text(finding.field)}")
    lines.extend(f"evidence: {_xml_text(item)}" for item in finding.evidence)
    lines.extend(f"note: {_xml_text(note)}" for note in finding.notes)
    return "\n".join(lines)


def build_tree(report: ScanReport, extended: bool = False) -> ET.Element:
    infos = rule_index(report)
    by_rule: dict[str, dict[ObjectRef, list[Finding]]] = defaultdict(lambda: defaultdict(list))
    for finding in ordered(report.findings):
        by_rule[finding.rule_id][finding.object].append(finding)
    results = {r.rule_id: r for r in report.results}
    for rule_id in by_rule:  # findings of a rule with no result still show up
        results.setdefault(rule_id, RuleResult(rule_id, Status.FAIL))
    root = ET.Element("testsuites", {"name": "hcpscan"})
    config = config_text(report)
    if config is not None and extended:
        _config_properties(root, config)
    # Jenkins' schema allows <properties> in a suite only: the first suite carries them
    unplaced = config if not extended else None
    started = report.metadata.get("started")
    total = _Counts()
    for rule_id in sorted(results):
        info = infos.get(rule_id)
        suite_name = f"{rule_id}: {info.title}" if info and info.title else rule_id
        attrs = {"name": _xml_text(suite_name)}
        if isinstance(started, str):
            attrs["timestamp"] = started
        suite = _Suite(ET.SubElement(root, "testsuite", attrs), extended=extended)
        if unplaced is not None:
            _config_properties(suite.element, unplaced)
            unplaced = None
        _fill(suite, results[rule_id], by_rule.get(rule_id, {}))
        _set_counts(suite.element, suite.counts)
        total.add(suite.counts)
    if report.passed_over:
        suite = _Suite(ET.SubElement(root, "testsuite", {"name": "hcpscan input passed over"}))
        if unplaced is not None:
            _config_properties(suite.element, unplaced)
        for item in report.passed_over:
            suite.skip(suite.case("hcpscan.input", item.reason),
                       f"passed over, not read: {passed_over_text(item)}")
        _set_counts(suite.element, suite.counts)
        total.add(suite.counts)
    errors = [d for d in report.diagnostics if d.get("severity") == "error"]
    if errors:
        suite = _Suite(ET.SubElement(root, "testsuite", {"name": "hcpscan input errors"}))
        for d in errors:
            place = f"{d.get('path')}:{d['line']}" if d.get("line") else str(d.get("path"))
            case = suite.case("hcpscan.input", place)
            error = ET.SubElement(case, "error", {"message": _xml_text(d.get("message", ""))})
            error.text = _xml_text(d.get("hint", "")) or None
            suite.counts.errors += 1
        _set_counts(suite.element, suite.counts)
        total.add(suite.counts)
    _set_counts(root, total, skipped=extended)
    return root


def _config_properties(parent: ET.Element, config: str) -> None:
    properties = ET.SubElement(parent, "properties")
    ET.SubElement(properties, "property", {"name": "hcpscan.config", "value": _xml_text(config)})


def _fill(suite: _Suite, result: RuleResult, objects: dict[ObjectRef, list[Finding]]) -> None:
    classname = f"hcpscan.{result.rule_id}"
    if result.status is Status.NOT_EVALUABLE and not objects:
        suite.skip(suite.case(classname, "not evaluable"),
                   f"not evaluable: {result.reason or 'no reason given'}")
        return
    if result.status is Status.NOT_APPLICABLE:
        suite.skip(suite.case(classname, "not applicable"),
                   f"not applicable: {result.reason or 'nothing in the rule scope'}")
        return
    if result.status is Status.SUPPRESSED and not objects:
        suite.skip(suite.case(classname, "rule suppressed"),
                   f"suppressed: {result.reason or 'no reason given'}")
        return
    for obj in sorted(objects, key=str):
        findings = objects[obj]
        case = suite.case(classname, str(obj), findings[0])
        failing = [f for f in findings if f.status is not Status.SUPPRESSED]
        if failing:
            suite.fail(case, failing)
        else:
            sup = findings[0].suppression
            why = f"{sup.justification} ({sup.source})" if sup else "no justification recorded"
            suite.skip(case, f"suppressed: {why}")
    clean = result.objects_checked - len(objects)
    if not objects or clean > 0:
        name = "all objects pass" if not objects else (
            f"{clean} other object{' passes' if clean == 1 else 's pass'}")
        if not objects and result.objects_checked:
            name = f"all {result.objects_checked} objects pass"
        suite.case(classname, name)


def _set_counts(element: ET.Element, counts: _Counts, skipped: bool = True) -> None:
    element.set("tests", str(counts.tests))
    element.set("failures", str(counts.failures))
    element.set("errors", str(counts.errors))
    if skipped:
        element.set("skipped", str(counts.skipped))
