"""A CA kept in a Go ``[]byte`` field (kubeconfig ``certificate-authority-data``, an
AddOnDeploymentConfig's ``caBundle``) is read as Go reads it: standard base64, CR and LF
skipped; raw PEM there is no bundle. The real kubectl is the oracle."""

from __future__ import annotations

import base64
import shutil
import subprocess

import pytest

from hcpscan.analysis.proxy.pem import NOT_BASE64, go_bytes, parse_bytes_field
from tests.conftest import require
from tests.rules.ocm_inputs import MANAGEMENT_PROXY, agent_secret

PEM = """\
-----BEGIN CERTIFICATE-----
MIIBlDCCATugAwIBAgIUTRaPj2x8cnkALdfGAzJE5nG5HTUwCgYIKoZIzj0EAwIw
IDENMAsGA1UECgwEVGVzdDEPMA0GA1UEAwwGaHViLWNhMB4XDTI2MTEyNzEzMjg1
NloXDTM2MTEyNDEzMjg1NlowIDENMAsGA1UECgwEVGVzdDEPMA0GA1UEAwwGaHVi
LWNhMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEl9fg7E3opcYdLD4f/vfsa2U9
yRhM9I6qMV5l7ntdUSVPB6No8NfiAtl8a4w/RfJWmEu/0QqET6lT780VaefSd6NT
MFEwHQYDVR0OBBYEFCZfXN0yyUBnyWBoTxW72Hs+XV2OMB8GA1UdIwQYMBaAFCZf
XN0yyUBnyWBoTxW72Hs+XV2OMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwID
RwAwRAIgTscEh5kin3Z+jDgV8bjtO93b5gohCku9hTVGV7yxkWgCIGK6MbOJ1dr4
HiqMkSVZwUBgqMobvDzAMreSbAUWQt+w
-----END CERTIFICATE-----
"""
ONE_LINE = base64.b64encode(PEM.encode()).decode()
WRAPPED = base64.encodebytes(PEM.encode()).decode()
VALUES = {
    "one line": ONE_LINE,
    "wrapped at 76": WRAPPED,
    "wrapped, CRLF": WRAPPED.replace("\n", "\r\n"),
    "raw PEM": PEM,
    "a space inside": ONE_LINE[:20] + " " + ONE_LINE[20:],
    "padding dropped": ONE_LINE.rstrip("="),
    "URL-safe alphabet": ONE_LINE.replace("+", "-").replace("/", "_"),
    "padding added": ONE_LINE + "====",
    "a second value after the padding": ONE_LINE + base64.b64encode(b"AB").decode(),
}


def _kubeconfig(ca: str) -> str:
    lines = "".join(f"      {line}\n" for line in ca.replace("\r\n", "\n").splitlines())
    crlf = "\r\n" in ca
    return ("apiVersion: v1\nkind: Config\nclusters:\n- name: hub\n  cluster:\n"
            "    server: https://api.hub.example.com:6443\n"
            + (f'    certificate-authority-data: "{ca.encode("unicode_escape").decode()}"\n'
               if crlf else f"    certificate-authority-data: |\n{lines}")
            + "contexts:\n- name: hub\n  context: {cluster: hub, user: u}\n"
            "current-context: hub\nusers:\n- name: u\n  user: {token: t}\n")


@pytest.mark.parametrize("name", sorted(VALUES))
def test_go_bytes_loads_what_kubectl_loads(name, tmp_path):
    kubectl = shutil.which("kubectl")
    require(kubectl, "kubectl")
    value = VALUES[name]
    path = tmp_path / "kubeconfig"
    path.write_text(_kubeconfig(value))
    done = subprocess.run([str(kubectl), "--kubeconfig", str(path), "config", "view", "--raw",
                           "-o", "jsonpath={.clusters[0].cluster.certificate-authority-data}"],
                          capture_output=True, text=True, timeout=60)
    ours = go_bytes(value)
    if done.returncode == 0:
        assert ours == PEM.encode(), (name, ours)
        assert len(parse_bytes_field(value)) == 1
    else:
        assert "illegal base64 data" in done.stderr, done.stderr
        assert isinstance(ours, str), name
        assert parse_bytes_field(value).problems[0].message.startswith(NOT_BASE64)


def test_extra_padding_is_refused_as_go_refuses_it():
    """Go's StdEncoding ends the data at the padding of the last quantum; Python's
    b64decode accepts more '=' (and data after them)."""
    assert go_bytes("QUJDREVG") == b"ABCDEF" and go_bytes("QUJDRA==\r\n") == b"ABCD"
    assert go_bytes("QUJDREVG====") == "illegal base64 data at input byte 8"
    assert go_bytes("QUJDRA===") == "illegal base64 data at input byte 8"
    assert go_bytes("QQ==QUJD") == "illegal base64 data at input byte 4"
    assert go_bytes("=QUJ") == "illegal base64 data at input byte 0"


def test_raw_pem_is_said_to_be_pem():
    bundle = parse_bytes_field(PEM)
    assert len(bundle) == 0
    assert "input byte 0" in bundle.problems[0].message
    assert "PEM written as is" in bundle.problems[0].message


def test_ocm002_does_not_pass_a_kubeconfig_that_fails_to_load(tmp_path):
    from hcpscan.findings.model import Status
    from tests.conftest import FIXTURES
    from tests.rules.harness import scan

    fixture = FIXTURES / "rules" / "PRX012" / "fail" / "ocm-pem-not-base64.yaml"
    report = scan([fixture], ["OCM002"])
    assert report.findings == []
    assert report.results[0].status is Status.NOT_EVALUABLE
    assert "holds no readable certificate" in report.results[0].reason
    assert "PRX012 reports it" in report.results[0].reason


def test_a_kubeconfig_client_go_cannot_load_is_not_judged_as_if_it_loaded(tmp_path):
    """An http proxy-url (no PRX012) and PEM pasted into certificate-authority-data: the
    klusterlet never loads the kubeconfig, so OCM001 does not pass it; it says why."""
    from hcpscan.findings.model import Status
    from tests.rules.harness import scan

    ca = "".join(f"        {line}\n" for line in PEM.splitlines())
    (tmp_path / "m.yaml").write_text(MANAGEMENT_PROXY + "---\n" + agent_secret(f"""\
apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster:
    server: https://api.hub.example.com:6443
    proxy-url: http://proxy.corp.example.com:3128
    certificate-authority-data: |
{ca}contexts:
- name: hub
  context: {{cluster: hub, user: agent}}
current-context: hub
"""))
    report = scan([tmp_path], ["OCM001"])
    assert report.results[0].status is Status.NOT_EVALUABLE, report.results[0].reason
    assert ("fails to load as client-go loads it: clusters[0].cluster.certificate-authority-data "
            "is not base64 (illegal base64 data at input byte 0)") in report.results[0].reason


DUPLICATE = """\
apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster: {server: "https://api.hub.example.com:6443"}
- name: hub
  cluster: {server: "https://api.hub.example.com:6443", proxy-url: "http://proxy.corp.example.com:3128"}
contexts:
- name: default
  context: {cluster: hub, user: bootstrap}
current-context: default
users:
- name: bootstrap
  user: {token: abc}
"""


@pytest.mark.parametrize("listed", ["clusters", "users", "contexts"])
def test_a_kubeconfig_with_a_repeated_name_fails_to_load_as_kubectl_says(listed, tmp_path):
    """client-go turns clusters, users and contexts into maps and refuses a second entry
    of one name ('duplicate name ... in list'): OCM001 does not judge either entry."""
    from hcpscan.findings.model import Status
    from tests.rules.harness import scan

    kubectl = shutil.which("kubectl")
    require(kubectl, "kubectl")
    text = DUPLICATE
    if listed != "clusters":  # one cluster; the repeated entry is a user or a context
        text = text.replace("- name: hub\n  cluster: {server: \"https://api.hub.example.com:6443\"}\n",
                            "", 1)
        text = (text.replace("  user: {token: abc}\n", "  user: {token: abc}\n- name: bootstrap\n"
                             "  user: {token: def}\n") if listed == "users" else
                text.replace("current-context", "- name: default\n  context: {cluster: hub, "
                             "user: bootstrap}\ncurrent-context"))
    (tmp_path / "kubeconfig").write_text(text)
    done = subprocess.run([str(kubectl), "--kubeconfig", str(tmp_path / "kubeconfig"), "config",
                           "view"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "duplicate name" in done.stderr, done.stderr
    (tmp_path / "m.yaml").write_text(MANAGEMENT_PROXY + "---\n" + agent_secret(text))
    (tmp_path / "kubeconfig").unlink()
    report = scan([tmp_path], ["OCM001"])
    assert report.results[0].status is Status.NOT_EVALUABLE, report.results[0].reason
    reason = report.results[0].reason
    assert "fails to load as client-go loads it" in reason
    assert "duplicate name" in reason and f"in list {listed}" in reason
