"""Credentials given in any form a client accepts never reach `proxy` or `noproxy` output."""

from __future__ import annotations

import json

import pytest

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: exporter, namespace: monitoring}
spec:
  template:
    spec:
      containers:
      - name: exporter
        env:
        - {name: HTTPS_PROXY, value: "svc-proxy:Spring2026@proxy.corp.example.com:3128"}
        - {name: HTTP_PROXY, value: "http://svc-proxy:Spring2026@proxy.corp.example.com:3128"}
"""


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_proxy_masks_passwords_without_a_scheme(run_cli, tmp_path, fmt):
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    result = run_cli("proxy", str(tmp_path), "--no-progress", "--format", fmt)
    assert result.code == 0, result.err
    assert "Spring2026" not in result.out
    assert "svc-proxy:****@proxy.corp.example.com:3128" in result.out


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_noproxy_does_not_echo_credentials_given_in_env(run_cli, fmt):
    result = run_cli("noproxy", "--env", "HTTPS_PROXY=svc-proxy:Spring2026@proxy:3128",
                     "--env", "HTTP_PROXY=http://svc-proxy:Spring2026@proxy:3128",
                     "--env", "NO_PROXY=.svc", "https://api.example.com", "http://www.example.com",
                     "--runtime", "go", "--format", fmt)
    assert result.code == 0, result.err
    assert "Spring2026" not in result.out
    assert "svc-proxy:****@proxy:3128" in result.out
    if fmt == "json":
        assert any(row["proxy"] and "****" in row["proxy"] for row in json.loads(result.out)["decisions"])


def test_usage_errors_do_not_echo_credentials(run_cli):
    result = run_cli("noproxy", "--env", "HTTPS_PROXY:svc-proxy:Spring2026@proxy:3128",
                     "https://api.example.com")
    assert result.code == 2 and "Spring2026" not in result.err


@pytest.mark.parametrize("fmt", ["table", "json"])
@pytest.mark.parametrize("proxy", ["http://u:pa ss9Q@proxy:3128", "http://u:pa/ss9Q@proxy:3128",
                                   "http://jdoe@corp.example.com:pa ss9Q@proxy:3128"])
def test_noproxy_masks_a_password_holding_a_space_or_slash(run_cli, fmt, proxy):
    """The decision's sentence ("through <proxy>") embedded the URL unquoted, so a
    password holding a space was cut in two there and its end shown."""
    result = run_cli("noproxy", "--env", f"HTTPS_PROXY={proxy}", "--env", "NO_PROXY=.svc",
                     "https://api.example.com", "--runtime", "go", "--format", fmt)
    assert "ss9Q" not in result.out + result.err
