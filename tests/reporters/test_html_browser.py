"""The HTML report in a real headless Chromium (Debian ``chromium``; .ci/run installs it).

The bundled example is scanned through the CLI, the page loaded from disk and
asked, after layout and styles: did anything fail or load from elsewhere, are
the numbers of the same run's JSON report shown on the first screen, did the
style sheet apply under the page's own CSP. About 3 s (one browser for the module).
"""

from __future__ import annotations

import json

import pytest

from hcpscan.findings.model import ObjectRef
from hcpscan.reporters import ReportOptions, render
from tests.browser import Browser, find_chromium
from tests.conftest import ROOT, requirement
from tests.reporters.reports import small_report

_chromium = requirement(find_chromium, "chromium")

# Numbers as the page shows them, read from the rendered DOM: only elements with a
# size, not hidden, and within the first 1280x1600 screen count as shown.
SHOWN = """JSON.stringify((() => {
  const shown = el => { const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && r.bottom <= innerHeight; };
  const read = sel => Object.fromEntries([...document.querySelectorAll(sel)].map(
    el => [el.dataset.severity || el.dataset.rules, shown(el) ? el.innerText.trim() : null]));
  return {severity: read('[data-severity]'), rules: read('[data-rules]'),
          headline: document.getElementById('headline').innerText,
          highColour: getComputedStyle(document.querySelector('[data-severity=high]')).color,
          pictures: document.querySelectorAll('svg.exposure').length,
          text: document.body.innerText};
})())"""


@pytest.fixture(scope="module")
def browser():
    with Browser(width=1280, height=1600) as b:
        yield b


@pytest.fixture(scope="module")
def example(tmp_path_factory, monkeypatch_module):
    from hcpscan.cli.main import main

    out = tmp_path_factory.mktemp("html")
    monkeypatch_module.chdir(ROOT)
    code = main(["scan", "fixtures/example", "--no-config", "--no-progress",
                 "--format", f"html={out / 'example.html'}", "--format", f"json={out / 'example.json'}"])
    assert code == 1  # the example has high findings
    return out / "example.html", json.loads((out / "example.json").read_text())


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_example_loads_with_no_error_and_no_request_but_itself(browser, example):
    page, _ = example
    run = browser.open(page)
    assert run.errors == []
    assert run.requests == [page.resolve().as_uri()]


def test_example_shows_the_counts_of_the_same_run_on_the_first_screen(browser, example, tmp_path):
    page, report = example
    browser.open(page)
    dom = json.loads(browser.evaluate(SHOWN))
    assert dom["severity"] == {sev: str(n) for sev, n in report["summary"]["findings"].items()}
    assert dom["rules"] == {status: str(n) for status, n in report["summary"]["rules"].items()}
    total = sum(report["summary"]["findings"].values())
    assert dom["headline"].startswith(f"{total} findings")
    assert dom["highColour"] == "rgb(200, 30, 30)"  # the style sheet passed the page's CSP
    hosted = report["inventory"]["kinds"]["HostedCluster"]
    assert dom["pictures"] == hosted
    shot = tmp_path / "example.png"
    browser.screenshot(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_hostile_names_stay_text_in_the_browser(browser, tmp_path):
    """Object names are the attacker's: markup in them must neither run nor load."""
    report = small_report()
    hostile = '<img src="https://evil.example/x.png"><script>console.error("pwned")</script>'
    finding = report.findings[0]
    finding.object = ObjectRef("management", "v1", "Service", "hcp-ns", hostile)
    finding.evidence.append(f"\u202e{hostile}")
    page = tmp_path / "hostile.html"
    page.write_text(render("html", report, ReportOptions()), encoding="utf-8")
    run = browser.open(page)
    assert run.errors == [] and run.requests == [page.resolve().as_uri()]
    text = json.loads(browser.evaluate(SHOWN))["text"]
    assert f"Service hcp-ns/{hostile}" in text
    assert f"\\u202e{hostile}" in text  # a bidi override is shown, not obeyed
    assert browser.evaluate("document.querySelectorAll('main img, main script').length") == 0


def test_the_harness_sees_what_a_broken_page_does(browser, tmp_path):
    """The checks above can fail: a page that loads, runs and logs is reported."""
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><img src="http://127.0.0.1:9/x.png">'
                    '<script>console.error("boom"); missing()</script>')
    run = browser.open(page)
    assert any("boom" in e for e in run.errors)
    assert any("missing is not defined" in e for e in run.errors)
    assert "http://127.0.0.1:9/x.png" in run.requests
