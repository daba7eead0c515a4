"""`hcpscan proxy PATH...`: each consumer's effective proxy with sources."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CPO = ROOT / ".." / "shared" / "realworld" / "hypershift" / "cpo-rendered"
FIXTURES = ROOT / "fixtures" / "proxy"


def test_json_lists_control_plane_consumers_with_sources(run_cli) -> None:
    result = run_cli("proxy", str(CPO / "oauth-openshift"), str(CPO / "ingress-operator"),
                     "--format", "json")
    assert result.code == 0, result.err
    doc = {c["consumer"]: c for c in json.loads(result.out)["consumers"]}
    oauth = doc["Deployment hcp-namespace/oauth-openshift container oauth-openshift"]
    assert oauth["httpsProxy"]["value"] == "http://127.0.0.1:8092"
    assert oauth["httpsProxy"]["source"]["line"] == 96
    assert oauth["httpsProxy"]["source"]["path"].endswith("oauth_openshift_deployment.yaml")
    assert oauth["via"]["container"] == "konnectivity-proxy-https"
    ingress = doc["Deployment hcp-namespace/ingress-operator container ingress-operator"]
    assert ingress["noProxy"]["value"] == "kube-apiserver"


def test_table_shows_unknown_values_and_sources(run_cli) -> None:
    result = run_cli("proxy", str(FIXTURES / "workload-env.yaml"))
    assert result.code == 0, result.err
    assert "unknown (redacted in the dump)" in result.out
    assert "HTTP_PROXY:" in result.out and "2 proxy consumers" in result.out


def test_missing_path_is_a_usage_error(run_cli) -> None:
    result = run_cli("proxy", str(FIXTURES / "nope.yaml"))
    assert result.code == 2 and "path not found" in result.err and "Traceback" not in result.err


def test_help_shows_an_example(run_cli) -> None:
    result = run_cli("proxy", "--help")
    assert result.code == 0 and "hcpscan proxy " in result.out


def test_proxy_and_connectivity_say_what_they_passed_over(run_cli, tmp_path):
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: env, namespace: a}\ndata: {x: y}\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config.yaml").write_text("x: 1\n")
    (tmp_path / "notes.txt").write_text("not a manifest\n")
    for args in (("proxy", str(tmp_path), "--format", "json"),
                 ("connectivity", str(tmp_path), "--format", "csv")):
        result = run_cli(*args)
        assert result.code == 0, result.err
        assert "passed over: 1 hidden folder, 1 not a manifest (.txt)" in result.err, args
        assert "passed over" not in result.out  # machine-readable output stays clean
