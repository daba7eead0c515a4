"""Values from the input cannot forge report lines: control characters, newlines and bidi
overrides in names, values and file names are shown as visible escapes in the terminal,
Markdown and JUnit; JSON and SARIF keep them exact (they are structured)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

FORGED = "Coverage: 25 rules: 25 passed, 0 failed, 0 not evaluable, 0 suppressed"
# erase the line, go up one, then a forged line; an OSC 52 clipboard write; a bidi override
NAME = f"proxy-env\x1b[2K\x1b[1A\r\n{FORGED}\x1b]52;c;cm0gLXJmIH4=\x07\u202e"
CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: "proxy-env\\e[2K\\e[1A\\r\\nCoverage: 25 rules: 25 passed, 0 failed, 0 not evaluable, \
0 suppressed\\e]52;c;cm0gLXJmIH4=\\a\\u202E"
  namespace: monitoring
data:
  HTTPS_PROXY: http://svc-proxy:Spring2026@proxy.corp.example.com:3128
"""
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    folder = tmp_path / "dump"
    folder.mkdir()
    (folder / "configmaps.yaml").write_text(CONFIGMAP)
    return folder


def _forged_lines(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.lstrip("*# ").startswith(prefix)]


def test_table_shows_control_characters_as_escapes(run_cli, dump):
    result = run_cli("scan", str(dump), "--no-config", "--no-progress", "--format", "table")
    assert result.code == 1
    assert not RAW.search(result.out)
    assert "proxy-env\\x1b[2K\\x1b[1A\\r\\nCoverage: 25 rules" in result.out
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07\\u202e" in result.out
    coverage = _forged_lines(result.out, "Coverage:")
    assert len(coverage) == 1 and FORGED not in coverage[0]


def test_concise_view_keeps_each_finding_on_one_visible_line(run_cli, dump):
    result = run_cli("scan", str(dump), "--no-config", "--no-progress", "--format", "concise")
    assert result.code == 1
    assert not RAW.search(result.out)
    assert "proxy-env\\x1b[2K\\x1b[1A" in result.out
    assert [line for line in result.out.splitlines() if line.startswith("Coverage:")] == [
        line for line in result.out.splitlines() if line.startswith("Coverage:") and FORGED not in line]


def test_markdown_and_junit_escape_and_json_sarif_stay_exact(run_cli, dump, tmp_path):
    files = {fmt: tmp_path / f"report.{fmt}" for fmt in ("markdown", "junit", "json", "sarif")}
    result = run_cli("scan", str(dump), "--no-config", "--no-progress",
                     *(f"--format={fmt}={path}" for fmt, path in files.items()))
    assert result.code == 1
    markdown, junit = files["markdown"].read_text(), files["junit"].read_text()
    for text in (markdown, junit):
        assert not RAW.search(text.replace("\n", "").replace("\t", ""))
        assert "\\x1b[2K" in text and "\\u202e" in text
    assert len(_forged_lines(markdown, "Coverage:")) == 1
    assert not any(line.startswith(FORGED) for line in junit.splitlines())
    report = json.loads(files["json"].read_text())
    assert NAME in {f["object"]["name"] for f in report["findings"]}
    sarif = json.loads(files["sarif"].read_text())
    assert any(NAME in r["message"]["text"] for r in sarif["runs"][0]["results"])


def test_file_names_in_diagnostics_and_errors_are_escaped(run_cli, tmp_path):
    folder = tmp_path / "dump"
    folder.mkdir()
    (folder / f"x\n{FORGED}\x1b[31m.yaml").write_text("kind: [unclosed\n")
    result = run_cli("scan", str(folder), "--no-config", "--no-progress")
    assert result.code == 2
    assert not RAW.search(result.err)
    assert f"x\\n{FORGED}\\x1b[31m.yaml" in result.err
    assert not any(line.startswith(FORGED) for line in result.err.splitlines())


def test_proxy_and_inventory_commands_escape_values(run_cli, dump, tmp_path):
    (dump / "deploy.yaml").write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: "shop\\e[2J"}
spec:
  template:
    spec:
      containers:
      - name: app
        env:
        - {name: HTTPS_PROXY, value: "http://proxy:3128\\n\\e]52;c;aGk=\\a"}
""")
    proxy = run_cli("proxy", str(dump), "--no-progress")
    assert not RAW.search(proxy.out)
    assert "\\x1b]52;c;aGk=" in proxy.out and "shop\\x1b[2J" in proxy.out
    inventory = run_cli("inventory", str(dump), "--no-progress")
    assert not RAW.search(inventory.out) and "shop\\x1b[2J" in inventory.out


def test_markdown_values_cannot_open_html_that_hides_the_rest(run_cli, tmp_path):
    (tmp_path / "proxy.yaml").write_text("""\
apiVersion: config.openshift.io/v1
kind: Proxy
metadata: {name: cluster}
spec: {httpProxy: "http://proxy:3128", noProxy: ".svc,<!--,<details>"}
""")
    result = run_cli("scan", str(tmp_path), "--no-config", "--no-progress", "--format", "markdown")
    assert result.code == 0  # a medium finding, below the default --fail-on high
    assert "&lt;!--" in result.out and "&lt;details>" in result.out
    assert "<!--" not in result.out
