"""JUnit XML is valid against the common (Jenkins) JUnit schema unless extras are asked for."""

from __future__ import annotations

from pathlib import Path

import xmlschema

from tests.conftest import FIXTURES

SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("schemas") / "junit-common.xsd")


def _errors(xml: str) -> list[str]:
    return [f"{e.path}: {e.reason}" for e in SCHEMA.iter_errors(xml)]


def _scan(run_cli, tmp_path, *extra: str) -> str:
    out = tmp_path / "junit.xml"
    # the example has a config, suppressions, not-evaluable rules and passed-over input
    result = run_cli("scan", str(FIXTURES / "example"), "--format", f"junit={out}", *extra)
    assert result.code in (0, 1), result.err
    return out.read_text(encoding="utf-8")


def test_the_example_is_valid_junit(run_cli, tmp_path):
    xml = _scan(run_cli, tmp_path)
    assert "<failure" in xml and "<skipped" in xml
    assert _errors(xml) == []


def test_extras_on_request_carry_file_and_line(run_cli, tmp_path):
    xml = _scan(run_cli, tmp_path, "--junit-extended")
    errors = _errors(xml)
    # exactly what the common schema does not know: file/line on testcases, skipped on the root
    assert errors and all("'file'" in e or "'line'" in e or "'skipped'" in e or "properties" in e
                          for e in errors), errors
    assert ' file="' in xml and ' line="' in xml


def test_realistic_report_is_valid(realistic):
    from hcpscan.reporters import REPORTERS, ReportOptions

    assert _errors(REPORTERS["junit"].render(realistic, ReportOptions())) == []
