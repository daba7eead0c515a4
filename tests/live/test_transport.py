"""Pagination, retries, timeouts, errors, proxies and the ways to authenticate."""

from __future__ import annotations

import json
import socket
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from hcpscan.sources.live import ClusterTarget, connect, discover, read_cluster
from hcpscan.sources.live.client import IN_CLUSTER, LiveError, _environment_proxy
from tests.live.apiserver import Fault, unused_port
from tests.live.conftest import TOKEN, USER, client_certificate, write_kubeconfig
from tests.live.test_cluster_scan import hcpscan


def _read(config: Path, kinds: set[str], page_size: int = 500):  # type: ignore[no-untyped-def]
    conn = connect(ClusterTarget(str(config), request_timeout=5))
    return read_cluster(conn, discover(conn), kinds, page_size=page_size)


def _expected(bodies: list[dict], kind: str) -> list[tuple[str, str]]:
    return sorted((b["metadata"].get("namespace", ""), b["metadata"]["name"]) for b in bodies
                  if b["kind"] == kind)


def test_small_pages_read_every_object_once(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    read = _read(config, {"Secret", "Deployment"}, page_size=2)
    for kind in ("Secret", "Deployment"):
        got = sorted((o.namespace, o.name) for o in read.objects if o.kind == kind)
        assert got == _expected(example_bodies, kind)
    pages = [r for r in server.state.requests if r.path == "/api/v1/secrets"]
    assert len(pages) == -(-len(_expected(example_bodies, "Secret")) // 2)
    assert all(r.query["limit"] == "2" for r in pages)


def test_an_expired_continue_token_restarts_the_list(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    server.state.expire_continue.update({"secrets", "deployments"})
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    read = _read(config, {"Secret", "Deployment"}, page_size=10)
    assert not read.unavailable and not read.diagnostics
    for kind in ("Secret", "Deployment"):
        got = sorted((o.namespace, o.name) for o in read.objects if o.kind == kind)
        assert got == _expected(example_bodies, kind)  # complete, no duplicates
    secrets = [r for r in server.state.requests if r.path == "/api/v1/secrets"]
    assert [r.status for r in secrets[:3]] == [200, 410, 200]
    assert "continue" in secrets[1].query and "continue" not in secrets[2].query


def test_throttling_and_server_errors_are_retried(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    server.state.faults["/api/v1/secrets"] = Fault(429, 2, retry_after="0")
    server.state.faults["/apis/apps/v1/deployments"] = Fault(503, 1)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    read = _read(config, {"Secret", "Deployment"})
    assert not read.unavailable
    assert Counter(o.kind for o in read.objects) == {"Secret": 61, "Deployment": 87}
    statuses = [r.status for r in server.state.requests if r.path == "/api/v1/secrets"]
    assert statuses == [429, 429, 200]


def test_a_list_that_keeps_failing_is_reported_and_the_rest_scanned(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    server.state.faults["/api/v1/configmaps"] = Fault(500, 100)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    out = tmp_path / "r.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--format", f"json={out}")
    report = json.loads(out.read_text())
    assert code == 2, err  # input that could not be read, as offline
    assert [r.status for r in server.state.requests if r.path == "/api/v1/configmaps"] == [500] * 4
    reasons = {r["rule_id"]: r["reason"] for r in report["rules"]}
    assert any("not read: listing configmaps failed: 500" in reason for reason in reasons.values())
    assert report["inventory"]["kinds"]["Secret"] == 61


def _one_error_line(err: str) -> str:
    assert "Traceback" not in err
    (line,) = [line for line in err.splitlines() if line.startswith("hcpscan: error:")]
    return line


def test_unreachable_server_is_a_one_line_error(pki, tmp_path):
    config = write_kubeconfig(tmp_path / "kubeconfig", f"https://127.0.0.1:{unused_port()}", pki.ca_pem)
    started = time.monotonic()
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--request-timeout", "2")
    assert code == 2 and out == ""
    assert "cannot connect to the API server at https://127.0.0.1:" in _one_error_line(err)
    assert time.monotonic() - started < 2


def test_a_server_that_never_answers_times_out(pki, tmp_path):
    with socket.socket() as silent:  # accepts TCP connections (backlog) but never speaks TLS
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        config = write_kubeconfig(tmp_path / "kubeconfig", f"https://127.0.0.1:{silent.getsockname()[1]}",
                                  pki.ca_pem)
        started = time.monotonic()
        code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--request-timeout", "2")
        elapsed = time.monotonic() - started
    assert code == 2
    assert "within 2 s" in _one_error_line(err)
    assert 1.5 < elapsed < 5


def test_a_slow_server_times_out(standin, pki, tmp_path):
    server = standin([])
    server.state.delay = 3
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    started = time.monotonic()
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--request-timeout", "1")
    assert code == 2
    assert "no answer from the API server" in _one_error_line(err) and "within 1 s" in err
    assert time.monotonic() - started < 3


def test_bad_credentials_are_a_one_line_error(standin, pki, tmp_path):
    server = standin([])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, token="expired")
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--request-timeout", "2")
    assert code == 2
    assert "rejected the credentials (401 Unauthorized)" in _one_error_line(err)


def test_an_untrusted_server_certificate_is_a_one_line_error(standin, pki, tmp_path):
    from tests.live.pki import CertificateAuthority

    server = standin([])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, CertificateAuthority("other").cert_pem)
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--request-timeout", "2")
    assert code == 2 and "TLS error" in _one_error_line(err)


def test_proxy_url_goes_through_a_real_proxy(standin, pki, tmp_path, tinyproxy, example_bodies,
                                             monkeypatch):
    server = standin(example_bodies)
    # kubectl ignores NO_PROXY for a kubeconfig's proxy-url; so does hcpscan
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, proxy_url=tinyproxy.url)
    out = tmp_path / "r.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--format", f"json={out}",
                           "--request-timeout", "5")
    assert code in (0, 1), err
    assert json.loads(out.read_text())["inventory"]["kinds"]["Secret"] == 61
    log = tinyproxy.log.read_text()
    assert f"CONNECT {server.server.address} HTTP/" in log, log[-2000:]


def test_a_dead_proxy_url_is_a_one_line_error(standin, pki, tmp_path):
    server = standin([])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem,
                              proxy_url=f"http://127.0.0.1:{unused_port()}")
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--request-timeout", "2")
    assert code == 2 and "through the proxy http://127.0.0.1:" in _one_error_line(err)


def test_environment_proxy_is_not_used_for_a_loopback_server(standin, pki, tmp_path, monkeypatch):
    server = standin([])
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{unused_port()}")
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    conn = connect(ClusterTarget(str(config), request_timeout=2))
    assert conn.proxy is None and discover(conn).resources


def test_environment_proxy_applies_elsewhere_unless_no_proxy(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp.example.com:3128")
    assert _environment_proxy("https://api.hub.example.com:6443") == "http://proxy.corp.example.com:3128"
    monkeypatch.setenv("NO_PROXY", ".example.com")
    assert _environment_proxy("https://api.hub.example.com:6443") is None


def test_exec_plugin_credentials(standin, pki, tmp_path):
    server = standin([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}])
    credential = json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                             "status": {"token": TOKEN}})
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": ["-c", f"print({credential!r})"]}}
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, user=user)
    read = _read(config, {"Namespace"})
    assert [o.name for o in read.objects] == ["team-a"]
    assert {r.user for r in server.state.requests} == {USER}


def test_client_certificate_credentials(standin, pki, tmp_path):
    server = standin([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}])
    pair = client_certificate(pki, "hcpscan-reader")
    import base64

    user = {"client-certificate-data": base64.b64encode(pair.cert_pem).decode(),
            "client-key-data": base64.b64encode(pair.key_pem).decode()}
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, user=user)
    read = _read(config, {"Namespace"})
    assert [o.name for o in read.objects] == ["team-a"]
    assert {r.user for r in server.state.requests} == {"cert:hcpscan-reader"}


def test_in_cluster_service_account(standin, pki, tmp_path, monkeypatch):
    server = standin([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}])
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text(TOKEN)
    (account / "ca.crt").write_bytes(pki.ca_pem)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(server.server.server_address[1]))
    conn = connect(ClusterTarget(request_timeout=5, serviceaccount_dir=account))
    assert conn.context == IN_CLUSTER
    read = read_cluster(conn, discover(conn), {"Namespace"})
    assert [o.source.path for o in read.objects] == ["cluster/in-cluster/_cluster/Namespace/team-a.yaml"]


def test_kubeconfig_variable_and_contexts(standin, pki, tmp_path, monkeypatch):
    server = standin([])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, context="hub")
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{config}")
    assert connect(ClusterTarget(request_timeout=2)).context == "hub"
    code, _, err = hcpscan("cluster", "--context", "spoke")
    assert code == 2 and "context 'spoke' not found" in _one_error_line(err) and "(contexts: hub)" in err


def test_no_kubeconfig_anywhere(monkeypatch):
    with pytest.raises(LiveError, match="no kubeconfig found and not running in a pod"):
        connect(ClusterTarget())
    code, _, err = hcpscan("cluster", "--kubeconfig", "/nonexistent/kubeconfig")
    assert code == 2 and "kubeconfig not found: /nonexistent/kubeconfig" in _one_error_line(err)
