"""`hcpscan noproxy`: a table per URL and runtime, JSON, env mode, and usage errors."""

from __future__ import annotations

import json

import pytest


def test_json_output(run_cli) -> None:
    result = run_cli("noproxy", "--no-proxy", ".svc,10.128.0.0/14", "--runtime", "go",
                     "--runtime", "python", "--format", "json", "https://10.129.0.7",
                     "https://kubernetes.default.svc")
    assert result.code == 0, result.err
    assert json.loads(result.out) == {"schema_version": "1.0", "decisions": [
        {"url": "https://10.129.0.7", "runtime": "go", "version": None, "models": ">= 1.11, < 2.0", "outcome": "direct",
         "variable": None, "bypass": True, "matched": "10.128.0.0/14",
         "reason": "address inside the CIDR"},
        {"url": "https://10.129.0.7", "runtime": "python", "version": None, "models": ">= 3.8, < 4.0", "outcome": "proxy",
         "variable": None, "bypass": False, "matched": None, "reason": "no entry matches"},
        {"url": "https://kubernetes.default.svc", "runtime": "go", "version": None,
         "models": ">= 1.11, < 2.0", "outcome": "direct", "variable": None, "bypass": True, "matched": ".svc",
         "reason": "domain match"},
        {"url": "https://kubernetes.default.svc", "runtime": "python", "version": None,
         "models": ">= 3.8, < 4.0", "outcome": "direct", "variable": None, "bypass": True, "matched": ".svc",
         "reason": "name or domain-suffix match"},
    ]}


def test_table_has_a_column_per_runtime_and_names_the_entry(run_cli) -> None:
    result = run_cli("noproxy", "--no-proxy", "example.com", "--runtime", "go", "--runtime",
                     "java", "http://www.example.com")
    assert result.code == 0
    header, row = result.out.splitlines()[1], result.out.splitlines()[3]
    assert [cell.strip() for cell in header.split("┃")[1:4]] == ["URL", "go", "java"]
    assert "direct (example.com)" in row and "proxy" in row.split("│")[3]


def test_env_mode_follows_each_clients_precedence(run_cli) -> None:
    result = run_cli("noproxy", "--env", "HTTP_PROXY=http://proxy:3128", "--env",
                     "no_proxy=", "--env", "NO_PROXY=example.com", "--runtime", "go",
                     "--runtime", "curl", "--runtime", "node-undici", "--format", "json",
                     "http://example.com")
    assert result.code == 0, result.err
    rows = {r["runtime"]: r for r in json.loads(result.out)["decisions"]}
    assert rows["go"]["bypass"] is True and rows["go"]["matched"] == "example.com"
    assert rows["curl"]["bypass"] is True and rows["curl"]["proxy"] is None  # ignores HTTP_PROXY
    assert rows["node-undici"]["bypass"] is False  # empty no_proxy hides NO_PROXY
    assert rows["node-undici"]["proxy"] == "http://proxy:3128"


def test_help_shows_an_example(run_cli) -> None:
    result = run_cli("noproxy", "--help")
    assert result.code == 0
    assert "examples:" in result.out and "hcpscan noproxy --no-proxy" in result.out


def test_needs_a_list_or_an_environment(run_cli) -> None:
    result = run_cli("noproxy", "https://example.com")
    assert result.code == 2
    assert result.err.startswith("hcpscan: error: give the list")
    assert "Traceback" not in result.err


def test_bad_url_is_a_usage_error(run_cli) -> None:
    result = run_cli("noproxy", "--no-proxy", "x", "http://[::1")
    assert result.code == 2 and "cannot read URL" in result.err and "Traceback" not in result.err


def test_bad_env_pair_is_a_usage_error(run_cli) -> None:
    result = run_cli("noproxy", "--env", "HTTP_PROXY", "http://x")
    assert result.code == 2 and "KEY=VALUE" in result.err


def test_unknown_runtime_is_a_usage_error(run_cli) -> None:
    result = run_cli("noproxy", "--no-proxy", "x", "--runtime", "perl", "http://x")
    assert result.code == 2 and "unknown runtime 'perl'" in result.err and "curl" in result.err


@pytest.mark.parametrize("runtime", ["curl@6.0", "node-undici@9", "curl@eight"])
def test_unknown_version_is_a_usage_error_listing_the_known_ranges(run_cli, runtime: str) -> None:
    result = run_cli("noproxy", "--no-proxy", "x", "--runtime", runtime, "http://x")
    assert result.code == 2 and f"known: {runtime.partition('@')[0]}: >= " in result.err


def test_versions_side_by_side(run_cli) -> None:
    result = run_cli("noproxy", "--no-proxy", "fd00::/8,*.example.test", "--runtime", "curl@7.88",
                     "--runtime", "curl", "--runtime", "node-undici@7", "--runtime",
                     "node-undici", "--format", "json", "http://[fd00::1]/",
                     "http://example.test/")
    assert result.code == 0, result.err
    got = [(r["runtime"], r["version"], r["bypass"]) for r in json.loads(result.out)["decisions"]]
    assert got == [("curl", "7.88", False), ("curl", None, True), ("node-undici", "7.0", False),
                   ("node-undici", None, False), ("curl", "7.88", False), ("curl", None, False),
                   ("node-undici", "7.0", True), ("node-undici", None, False)]


def test_error_outcome_with_the_clients_reason_and_the_variable(run_cli) -> None:
    result = run_cli("noproxy", "--env", "http_proxy=127.0.0.1:3128", "--env",
                     "HTTPS_PROXY=http://127.0.0.1:3129", "--runtime", "node-undici",
                     "--runtime", "ruby", "--runtime", "curl", "--format", "json",
                     "https://api.example.test")
    assert result.code == 0, result.err
    rows = {r["runtime"]: r for r in json.loads(result.out)["decisions"]}
    assert (rows["node-undici"]["outcome"], rows["node-undici"]["variable"]) == \
        ("error", "http_proxy")
    assert "Invalid URL" in rows["node-undici"]["reason"]
    assert (rows["ruby"]["outcome"], rows["ruby"]["bypass"]) == ("error", False)
    assert (rows["curl"]["outcome"], rows["curl"]["variable"], rows["curl"]["proxy"]) == \
        ("proxy", "HTTPS_PROXY", "http://127.0.0.1:3129")


def test_error_outcome_in_the_table(run_cli) -> None:
    result = run_cli("noproxy", "--env", "HTTP_PROXY=http://p:3128", "--env",
                     "REQUEST_METHOD=GET", "--runtime", "go", "http://a.test")
    assert result.code == 0 and "error" in result.out and "CGI" in result.out


def test_undici_8_is_told_apart_by_release(run_cli) -> None:
    # 8.10.1 still lets *.example match example (PR 5777 landed in 8.11.0)
    result = run_cli("noproxy", "--no-proxy", "*.example", "--runtime", "node-undici@8.10.1",
                     "--runtime", "node-undici@8.13.1", "--format", "json", "http://example/")
    rows = json.loads(result.out)["decisions"]
    assert [(r["version"], r["models"], r["outcome"]) for r in rows] == [
        ("8.10.1", ">= 8.10.1, < 8.11", "direct"), ("8.13.1", ">= 8.11, < 9.0", "proxy")]
