"""Kubeconfig values a user (or a tool) can write that must never end a live scan with an
internal error, hang it, or print a token: trailing newlines of tokens, tokens that no
HTTP header can carry, files that are FIFOs or devices, values of the wrong type."""

from __future__ import annotations

import argparse
import json
import os
import sys

import pytest
import yaml

from hcpscan.cli.main import _internal_error
from tests.live.conftest import TOKEN, USER, write_kubeconfig
from tests.live.test_cluster_scan import hcpscan
from tests.live.test_transport import _one_error_line

EXEC_API = "client.authentication.k8s.io/v1"
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}


def _scan(config, *extra: str) -> tuple[int, str, str]:
    return hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--request-timeout", "5",
                   "--exec-timeout", "5", *extra)


def _token_file(tmp_path, content: bytes):
    path = tmp_path / "token"
    path.write_bytes(content)
    return {"tokenFile": str(path)}


def _exec_plugin(tmp_path, token: str):
    script = tmp_path / "plugin.py"
    credential = {"apiVersion": EXEC_API, "kind": "ExecCredential", "status": {"token": token}}
    script.write_text(f"import sys; sys.stdout.write({json.dumps(credential)!r})")
    return {"exec": {"apiVersion": EXEC_API, "command": sys.executable, "args": [str(script)],
                     "interactiveMode": "Never"}}


@pytest.mark.parametrize("shape", ["tokenFile CRLF", "tokenFile LF", "inline newline", "exec newline"])
def test_a_token_ending_in_a_newline_authenticates(standin, pki, tmp_path, shape):
    # `echo TOKEN > file`, a file saved on Windows, `token: |` in YAML, a plugin's println
    user = {"tokenFile CRLF": lambda: _token_file(tmp_path, TOKEN.encode() + b"\r\n"),
            "tokenFile LF": lambda: _token_file(tmp_path, TOKEN.encode() + b"\n"),
            "inline newline": lambda: {"token": TOKEN + "\n"},
            "exec newline": lambda: _exec_plugin(tmp_path, TOKEN + "\n")}[shape]()
    server = standin([NAMESPACE])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, user=user)
    code, _, err = _scan(config, "--format", f"json={tmp_path / 'r.json'}")
    assert code in (0, 1), err
    assert "internal error" not in err and TOKEN not in err
    assert server.state.requests and {r.user for r in server.state.requests} == {USER}


@pytest.mark.parametrize(("user", "words"), [
    ({"token": "hcpscan-test\ntoken"}, "holds a line break at character 13"),
    ({"token": "hcpscan-tök€n"}, "holds the character U+20AC"),
    ({"token": "hcpscan\x1btoken"}, "holds a control character"),
    ({"token": 12345}, "is not a string"),
    ({"token": " \r\n"}, "is empty (only blanks)"),
])
def test_a_token_no_header_can_carry_is_one_line_exit_2_and_masked(standin, pki, tmp_path, user, words):
    server = standin([NAMESPACE])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, user=user)
    code, out, err = _scan(config)
    assert code == 2 and out == ""
    assert words in _one_error_line(err)
    assert "hcpscan-test" not in err and "tök" not in err and "hcpscan\\x1b" not in err
    assert server.state.requests == []


def test_a_token_file_with_a_line_break_inside_is_refused_masked(standin, pki, tmp_path):
    server = standin([NAMESPACE])
    user = _token_file(tmp_path, b"hcpscan-first\r\nhcpscan-second\r\n")
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, user=user)
    code, _, err = _scan(config)
    line = _one_error_line(err)
    assert code == 2 and "line break" in line and str(tmp_path / "token") in line
    assert "hcpscan-first" not in err and "hcpscan-second" not in err


def _fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return str(path)


@pytest.mark.parametrize(("where", "make"), [
    ("tokenFile", _fifo), ("tokenFile", lambda _: "/dev/zero"),
    ("certificate-authority", _fifo), ("certificate-authority", lambda _: "/dev/zero"),
    ("client-certificate", lambda _: "/dev/zero"),
], ids=["tokenFile-fifo", "tokenFile-dev-zero", "ca-fifo", "ca-dev-zero", "client-certificate-dev-zero"])
def test_a_file_the_kubeconfig_names_that_is_no_regular_file_is_refused(standin, pki, tmp_path,
                                                                        where, make):
    # a FIFO blocked the scan before any timeout applied; /dev/zero as a tokenFile was read
    # until memory ran out; as a CA it was "File does not exist"
    server = standin([NAMESPACE])
    path = make(tmp_path)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    data = yaml.safe_load(config.read_text())
    if where == "certificate-authority":
        cluster = data["clusters"][0]["cluster"]
        del cluster["certificate-authority-data"]
        cluster[where] = path
    elif where == "client-certificate":
        data["users"][0]["user"] = {"client-certificate": path, "client-key": path}
    else:
        data["users"][0]["user"] = {where: path}
    config.write_text(yaml.safe_dump(data))
    code, out, err = _scan(config)
    line = _one_error_line(err)
    assert code == 2 and out == ""
    assert f"{path} is not a regular file" in line
    assert server.state.requests == []


def test_a_token_file_larger_than_any_token_is_refused(standin, pki, tmp_path):
    server = standin([NAMESPACE])
    user = _token_file(tmp_path, b"x" * (2 << 20))
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, user=user)
    code, _, err = _scan(config)
    assert code == 2 and "is larger than 1 MiB" in _one_error_line(err)


@pytest.mark.parametrize(("key", "value"), [("proxy-url", 5), ("server", ["https://a", "https://b"])])
def test_a_cluster_value_of_the_wrong_type_is_one_line_exit_2(standin, pki, tmp_path, key, value):
    server = standin([NAMESPACE])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    data = yaml.safe_load(config.read_text())
    data["clusters"][0]["cluster"][key] = value
    config.write_text(yaml.safe_dump(data))
    code, _, err = _scan(config)
    assert code == 2 and f"the cluster's {key} is not a string" in _one_error_line(err)


def test_an_internal_error_never_prints_a_header_value(capsys):
    # urllib3 and http.client quote the header they refuse; any such path left must not leak it
    code = _internal_error(argparse.Namespace(),
                           ValueError("Invalid header value b'Bearer sekrit-token-value\\n'"))
    err = capsys.readouterr().err
    assert code == 4 and "internal error: ValueError" in err
    assert "sekrit-token-value" not in err and "Bearer ****" in err


def test_an_in_cluster_token_file_ending_in_a_newline_authenticates(standin, pki, tmp_path,
                                                                    monkeypatch):
    from hcpscan.sources.live import ClusterTarget, connect, discover, read_cluster

    server = standin([NAMESPACE])
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text(TOKEN + "\n")
    (account / "ca.crt").write_bytes(pki.ca_pem)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(server.server.server_address[1]))
    conn = connect(ClusterTarget(request_timeout=5, serviceaccount_dir=account))
    read = read_cluster(conn, discover(conn), {"Namespace"})
    assert [o.name for o in read.objects] == ["team-a"]
    assert {r.user for r in server.state.requests} == {USER}
