"""Credentials fail closed: a kubeconfig user that cannot be turned into credentials ends the scan.

The kubernetes client logs a failing exec plugin (missing, non-zero exit, output
that is no ExecCredential) and goes on without credentials; a scan would then
run anonymously, see nothing, and blame RBAC. hcpscan runs exec plugins itself,
non-interactively and within ``exec_timeout`` seconds, and raises
:class:`CredentialError` for every failure; files the user section names
(token, client certificate and key, CA) must be readable.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

EXEC_API_VERSIONS = frozenset({"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"})
MAX_PLUGIN_OUTPUT = 1 << 20  # an ExecCredential is a few kilobytes


class CredentialError(Exception):
    """The kubeconfig's user cannot be authenticated: the reason and what to do."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def run_exec_plugin(spec: Mapping[str, Any], cwd: str | None, timeout: float,
                    cluster: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Run a kubeconfig ``user.exec`` plugin; return its ExecCredential ``status``."""
    command, api_version = spec.get("command"), spec.get("apiVersion")
    if not isinstance(command, str) or not command:
        raise CredentialError("the kubeconfig's exec plugin names no command", _FIX_USER)
    args = [command, *(str(a) for a in spec.get("args") or [])]
    env = dict(os.environ)
    env.update({str(e.get("name")): str(e.get("value")) for e in spec.get("env") or []
                if isinstance(e, Mapping)})
    info: dict[str, Any] = {"apiVersion": api_version, "kind": "ExecCredential",
                            "spec": {"interactive": False}}
    if spec.get("provideClusterInfo") and cluster is not None:
        info["spec"]["cluster"] = dict(cluster)
    env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
    out = _run(args, cwd, env, timeout)
    return _status(out, command, api_version)


def _run(args: list[str], cwd: str | None, env: dict[str, str], timeout: float) -> str:
    name = args[0]
    try:
        # its own session, so a plugin that forks cannot outlive the timeout
        process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, cwd=cwd or None, env=env,
                                   start_new_session=True)
    except OSError as exc:
        raise CredentialError(f"the exec credential plugin {name!r} cannot be run: "
                              f"{exc.strerror or exc}", _INSTALL) from None
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise CredentialError(f"the exec credential plugin {name!r} gave no credential within "
                              f"{timeout:g} s", "run it by hand to see what it waits for (a "
                              "browser login?), or raise --exec-timeout") from None
    if process.returncode != 0:
        lines = err.decode("utf-8", "replace").strip().splitlines()
        why = f": {lines[-1][:300]}" if lines else ""
        raise CredentialError(f"the exec credential plugin {name!r} failed with exit code "
                              f"{process.returncode}{why}", "log in again (run the plugin by hand)")
    if len(out) > MAX_PLUGIN_OUTPUT:
        raise CredentialError(f"the exec credential plugin {name!r} wrote more than "
                              f"{MAX_PLUGIN_OUTPUT} bytes", _FIX_USER)
    return out.decode("utf-8", "replace")


def _status(out: str, name: str, api_version: object) -> dict[str, Any]:
    try:
        credential = json.loads(out)
    except ValueError:
        credential = None
    if not isinstance(credential, dict) or credential.get("kind") != "ExecCredential":
        raise CredentialError(f"the exec credential plugin {name!r} did not write an "
                              "ExecCredential (JSON) on its standard output", _FIX_USER)
    if credential.get("apiVersion") != api_version or api_version not in EXEC_API_VERSIONS:
        raise CredentialError(f"the exec credential plugin {name!r} answered apiVersion "
                              f"{credential.get('apiVersion')!r}, the kubeconfig asks for "
                              f"{api_version!r}", _FIX_USER)
    status = credential.get("status")
    if not isinstance(status, dict):
        raise CredentialError(f"the exec credential plugin {name!r} returned no status", _FIX_USER)
    token_ok = isinstance(status.get("token"), str) and status["token"].strip()
    cert_ok = all(isinstance(status.get(k), str) and status[k].strip()
                  for k in ("clientCertificateData", "clientKeyData"))
    if not (token_ok or cert_ok):
        raise CredentialError(f"the exec credential plugin {name!r} returned neither a token nor "
                              "a client certificate and key", _FIX_USER)
    return status


def check_readable(files: Mapping[str, str | None]) -> None:
    """Every credential or CA file the configuration names can be read."""
    for what, path in files.items():
        if not path:
            continue
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise CredentialError(f"cannot read the {what} file {path}: {exc.strerror or exc}",
                                  "check the path in the kubeconfig and its permissions") from None


def base_path(path: str | None) -> str | None:
    """Where relative paths of a kubeconfig section resolve: its file's folder."""
    return str(Path(path).resolve().parent) if path else None


_FIX_USER = "check the kubeconfig's user (exec plugin), or pick another --context"
_INSTALL = "install the plugin or put it on PATH (kubectl would fail the same way)"
