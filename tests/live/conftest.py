"""Fixtures for live-scan tests: the stand-in API server, kubeconfigs, kubectl and tinyproxy."""

from __future__ import annotations

import base64
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from hcpscan.sources.loader import load_paths
from tests.live.apiserver import ClusterState, Served, StandInServer, catalog, server_context, unused_port
from tests.live.pki import CertificateAuthority, KeyPair

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parents[1] / "fixtures" / "example"
TOKEN = "hcpscan-test-token"
USER = "system:serviceaccount:hcpscan:scanner"

_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
               "NO_PROXY", "no_proxy", "KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No proxy, kubeconfig or in-cluster settings leak in from the machine running the tests."""
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@dataclass
class Pki:
    ca: CertificateAuthority
    folder: Path
    server_context: ssl.SSLContext

    @property
    def ca_pem(self) -> bytes:
        return self.ca.cert_pem


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    ca = CertificateAuthority()
    return Pki(ca, folder, server_context(ca, folder))


@pytest.fixture(scope="session")
def example_bodies() -> list[dict[str, Any]]:
    """The bundled must-gather, read with hcpscan's own loader."""
    result = load_paths([str(EXAMPLE)])
    assert result.objects and not result.diagnostics, "fixtures/example did not load cleanly"
    return [obj.body for obj in result.objects]


@dataclass
class StandIn:
    server: StandInServer
    state: ClusterState

    @property
    def url(self) -> str:
        return self.server.url

    def paths(self, method: str = "GET") -> list[str]:
        return [r.path for r in self.state.requests if r.method == method]


@pytest.fixture
def standin(pki: Pki) -> Iterator[Any]:
    """Start stand-in API servers: ``standin(objects, resources=...)``; all stop after the test."""
    started: list[StandInServer] = []

    def start(objects: list[dict[str, Any]] = (), resources: list[Served] | None = None) -> StandIn:
        state = ClusterState(resources if resources is not None else catalog(), tokens={TOKEN: USER})
        for body in objects:
            state.add(body)
        server = StandInServer(state, pki.server_context).start()
        started.append(server)
        return StandIn(server, state)

    yield start
    for server in started:
        server.stop()


def write_kubeconfig(path: Path, server: str, ca_pem: bytes, *, token: str | None = TOKEN,
                     context: str = "standin", proxy_url: str | None = None,
                     user: dict[str, Any] | None = None) -> Path:
    cluster: dict[str, Any] = {"server": server,
                               "certificate-authority-data": base64.b64encode(ca_pem).decode()}
    if proxy_url:
        cluster["proxy-url"] = proxy_url
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "standin-cluster", "cluster": cluster}],
        "contexts": [{"name": context, "context": {"cluster": "standin-cluster", "user": "scanner"}}],
        "users": [{"name": "scanner", "user": user if user is not None else {"token": token}}],
    }
    path.write_text(yaml.safe_dump(config))
    return path


def client_certificate(pki: Pki, name: str) -> KeyPair:
    return pki.ca.issue(name, server=False, organizations=("hcpscan-readers",))


@pytest.fixture
def kubectl(tmp_path: Path):
    """Run the real kubectl (DOMAIN.md §9) against a kubeconfig; fails clearly when missing."""
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.fail("kubectl is not on PATH; .ci/run installs Debian's kubernetes-client when missing")

    def run(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([binary, "--kubeconfig", str(kubeconfig), "--cache-dir",
                               str(tmp_path / "kubectl-cache"), "--request-timeout", "10s", *args],
                              capture_output=True, text=True, timeout=60, check=False)

    return run


@dataclass
class Tinyproxy:
    url: str
    log: Path


@pytest.fixture
def tinyproxy(tmp_path: Path) -> Iterator[Tinyproxy]:
    """A real forward proxy on 127.0.0.1 logging to a temp file (DOMAIN.md §9)."""
    binary = shutil.which("tinyproxy")
    if binary is None:
        pytest.fail("tinyproxy is not installed; .ci/run installs it (apt-get install tinyproxy)")
    folder = tmp_path / "tinyproxy"
    folder.mkdir()
    log = folder / "tinyproxy.log"
    process, port = _start_tinyproxy(binary, folder, log)
    try:
        yield Tinyproxy(f"http://127.0.0.1:{port}", log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        if process.stderr:
            process.stderr.close()


def _start_tinyproxy(binary: str, folder: Path, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    """tinyproxy listening on a free loopback port. The port is picked before tinyproxy
    binds it, so another process (a parallel test worker) may take it first: then
    tinyproxy exits at start and it is tried again on another port."""
    for attempt in range(3):
        port = unused_port()
        conf = folder / "tinyproxy.conf"
        conf.write_text("\n".join([
            f"Port {port}", "Listen 127.0.0.1", "Timeout 30", "MaxClients 20",
            f"LogFile \"{log}\"", "LogLevel Info", f"PidFile \"{folder / 'tinyproxy.pid'}\"",
            "Allow 127.0.0.1", "DisableViaHeader Yes", "",
        ]))
        process = subprocess.Popen([binary, "-d", "-c", str(conf)], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while True:
            if process.poll() is not None:
                err = process.stderr.read().decode(errors="replace") if process.stderr else ""
                if process.stderr:
                    process.stderr.close()
                if attempt == 2:
                    pytest.fail(f"tinyproxy exited at start ({process.returncode}): {err.strip()}")
                break
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return process, port
            except OSError:
                if time.monotonic() > deadline:
                    process.kill()
                    process.wait(timeout=5)
                    pytest.fail("tinyproxy did not listen within 10 s")
                time.sleep(0.05)
    raise AssertionError("unreachable: the last attempt fails the test")
