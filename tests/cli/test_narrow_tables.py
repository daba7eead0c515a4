"""proxy and noproxy at 80 and 120 columns: nothing broken mid-word, paths said once."""

from __future__ import annotations

import io
import sys

import pytest

from tests.conftest import FIXTURES


def _run(monkeypatch, columns: int, *args: str) -> str:
    from hcpscan.cli.main import main

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(list(args)) == 0
    return out.getvalue()


@pytest.mark.parametrize("columns", [80, 120])
def test_noproxy_groups_runtimes_per_url_when_the_table_would_break_words(monkeypatch, columns):
    text = _run(monkeypatch, columns, "noproxy", "--no-proxy", ".svc,10.0.0.0/8,*.corp.example.com",
                "https://10.1.2.3:6443", "https://api.corp.example.com")
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= columns
    assert "https://api.corp.example.com" in lines  # whole, on a line of its own
    assert "  direct (10.0.0.0/8): go, curl, requests, ruby" in lines
    assert "  proxy: curl, python, requests, ruby, java, wget" in lines


def test_noproxy_keeps_the_table_where_it_fits(monkeypatch):
    text = _run(monkeypatch, 250, "noproxy", "--no-proxy", "10.0.0.0/8", "https://10.1.2.3:6443")
    assert "┃ URL" in text and "│ https://10.1.2.3:6443 │" in text


def test_proxy_says_the_must_gather_prefix_once(monkeypatch):
    text = _run(monkeypatch, 80, "proxy", str(FIXTURES / "example"), "--no-progress")
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    prefix = "must-gather.local.4242/quay-io-openshift-must-gather-sha256-5be0c0ffee"
    assert text.count(prefix) == 1
    assert "  NO_PROXY: namespaces/clusters-agent-prod/apps/deployments.yaml:635" in lines


def test_noproxy_breaks_a_url_longer_than_the_terminal_after_a_slash(monkeypatch):
    url = "https://console-openshift-console.apps.a-long-cluster-name.example.com/some/long/path"
    lines = _run(monkeypatch, 80, "noproxy", "--no-proxy", ".svc", url).splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[:2] == ["https://console-openshift-console.apps.a-long-cluster-name.example.com/some/",
                         "  long/path"]


def test_input_problems_say_the_shared_folder_once():
    """connectivity/proxy/inventory print input problems in a table: a must-gather's
    100-character prefix folded into every 'where' cell, eight lines each."""
    from rich.console import Console

    from hcpscan.cli.output import diagnostics_table
    from hcpscan.core.diagnostics import Diagnostic

    root = "dump.tar.gz!must-gather/quay-io-openshift-release-dev-sha256-eede85cbd333/namespaces/mon/core"
    rows = [Diagnostic(f"{root}/pods.yaml", line, "pods of one owner carry different labels", "info")
            for line in (4, 4548)]
    console = Console(width=250, record=True, file=io.StringIO())
    console.print(diagnostics_table(rows))
    text = "".join(console.export_text().split())  # the title may wrap inside the path
    assert text.count(root) == 1 and "pods.yaml:4548" in text
    assert f"{root}/pods.yaml" not in text
