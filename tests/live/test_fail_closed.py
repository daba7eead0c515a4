"""Live mode fails closed: no anonymous scan when credentials fail, no request without an end,
no answer without a size limit, no scan of a server that is not a Kubernetes API."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time

import pytest

from tests.live.apiserver import DRIBBLE_FOR
from tests.live.conftest import TOKEN, USER, write_kubeconfig
from tests.live.test_cluster_scan import hcpscan
from tests.live.test_transport import _one_error_line

EXEC_API = "client.authentication.k8s.io/v1beta1"
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}


def _plugin(tmp_path, body: str) -> dict:
    script = tmp_path / "plugin.py"
    script.write_text(body)
    return {"exec": {"apiVersion": EXEC_API, "command": sys.executable, "args": [str(script)]}}


GOOD = json.dumps({"apiVersion": EXEC_API, "kind": "ExecCredential", "status": {"token": TOKEN}})


@pytest.mark.parametrize(("user", "words"), [
    ({"exec": {"apiVersion": EXEC_API, "command": "hcpscan-no-such-plugin"}}, "cannot be run"),
    ("import sys; sys.stderr.write('login expired\\n'); sys.exit(3)", "exit code 3: login expired"),
    ("print('<html>sign in</html>')", "did not write an ExecCredential"),
    ("print('{\"apiVersion\": \"%s\", \"kind\": \"ExecCredential\", \"status\": {}}')" % EXEC_API,
     "neither a token nor a client certificate"),
    ({"tokenFile": "/nonexistent/hcpscan-token"}, "hcpscan-token"),
    ({"auth-provider": {"name": "azure", "config": {}}}, "auth-provider 'azure' gave no usable token"),
    ({"auth-provider": {"name": "oidc", "config": {"id-token": "not-a-jwt"}}}, "auth-provider 'oidc'"),
    ({"client-certificate": "/nonexistent/client.crt", "client-key": "/nonexistent/client.key"},
     "/nonexistent/client.crt"),
])
def test_a_credential_failure_is_exit_2_never_an_anonymous_scan(standin, pki, tmp_path, user, words):
    server = standin([NAMESPACE])
    if isinstance(user, str):
        user = _plugin(tmp_path, user)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, user=user)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--request-timeout", "2")
    assert code == 2 and out == ""
    assert words in _one_error_line(err)
    assert server.state.requests == []  # nothing was sent without credentials


def test_a_context_whose_user_is_missing_is_exit_2(standin, pki, tmp_path):
    server = standin([NAMESPACE])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    config.write_text(config.read_text().replace("name: scanner", "name: someone-else"))
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--request-timeout", "2")
    assert code == 2 and "user 'scanner' is not in the kubeconfig" in _one_error_line(err)
    assert server.state.requests == []


def test_an_exec_plugin_that_hangs_is_given_up_after_exec_timeout(standin, pki, tmp_path):
    server = standin([NAMESPACE])
    user = _plugin(tmp_path, "import time; time.sleep(30)")
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, user=user)
    started = time.monotonic()
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--exec-timeout", "0.5")
    assert code == 2 and "no credential within 0.5 s" in _one_error_line(err)
    assert time.monotonic() - started < 5


def test_a_working_exec_plugin_still_authenticates(standin, pki, tmp_path):
    server = standin([NAMESPACE])
    user = _plugin(tmp_path, f"print({GOOD!r})")
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, user=user)
    out = tmp_path / "r.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--format", f"json={out}")
    assert code in (0, 1), err
    assert {r.user for r in server.state.requests} == {USER}


def test_request_timeout_bounds_the_whole_request_not_each_read(standin, pki, tmp_path):
    server = standin([NAMESPACE])
    server.state.misbehave["/api"] = "dribble-headers"  # a header line every 0.25 s
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    started = time.monotonic()
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--request-timeout", "1")
    elapsed = time.monotonic() - started
    assert code == 2 and "within 1 s" in _one_error_line(err)
    assert elapsed < DRIBBLE_FOR - 1, elapsed


def test_an_endless_answer_is_refused_at_the_size_limit(standin, pki, tmp_path):
    server = standin([NAMESPACE])
    server.state.misbehave["/api"] = "endless-body"
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config",
                           "--max-response-size", "1", "--request-timeout", "5")
    assert code == 2 and "answered /api with more than 1 MiB" in _one_error_line(err)


def test_a_server_that_is_not_a_kubernetes_api_is_exit_2(standin, pki, tmp_path):
    server = standin([NAMESPACE])
    server.state.misbehave["/api"] = "not-kubernetes"
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config")
    assert code == 2 and out == ""
    assert "does not look like a Kubernetes API server" in _one_error_line(err)


def _dribbling_proxy(stop: threading.Event) -> int:
    """An HTTP proxy that answers CONNECT with a status line, then one header line every
    0.25 s for at most 8 s: the tunnel is never set up within any sane time."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(8)

    def serve() -> None:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        ends = time.monotonic() + 8
        try:
            client.settimeout(2)
            client.recv(65536)  # the CONNECT request
            client.sendall(b"HTTP/1.1 200 Connection established\r\n")
            while time.monotonic() < ends and not stop.is_set():
                client.sendall(b"X-Dribble: 1\r\n")
                time.sleep(0.25)
        except OSError:
            pass
        finally:
            client.close()
            listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def test_request_timeout_bounds_a_proxy_that_dribbles_its_connect_answer(standin, pki, tmp_path):
    server = standin([NAMESPACE])
    stop = threading.Event()
    port = _dribbling_proxy(stop)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem,
                              proxy_url=f"http://127.0.0.1:{port}")
    started = time.monotonic()
    try:
        code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config",
                               "--request-timeout", "1")
    finally:
        stop.set()
    elapsed = time.monotonic() - started
    assert code == 2, err
    assert elapsed < 5, elapsed  # without a whole-request deadline the proxy holds it 8 s
