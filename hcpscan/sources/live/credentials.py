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
import stat
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hcpscan.core.redact import mask_auth_values, mask_credentials
from hcpscan.core.yamldocs import load_json
from hcpscan.sources.walk import FileTooLarge, NotRegularFile, read_bounded, size_text

EXEC_API_VERSIONS = frozenset({"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"})
MAX_PLUGIN_OUTPUT = 1 << 20  # an ExecCredential is a few kilobytes
MAX_PLUGIN_STDERR = 64 << 10  # of which the last line is shown when the plugin fails
LEFTOVER_WAIT = 2.0  # seconds for the pipes to close once the plugin has exited
# A token, certificate, key or CA bundle a kubeconfig names is kilobytes; /dev/zero is endless
MAX_CREDENTIAL_FILE = 1 << 20


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
    """The plugin's standard output. Both pipes are read while it runs, each with a cap
    (a plugin that writes without end is stopped at the cap, not buffered whole), and the
    plugin and whatever it started are killed at ``timeout``."""
    name = args[0]
    try:
        # its own session, so a plugin that forks cannot outlive the timeout
        process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, cwd=cwd or None, env=env,
                                   start_new_session=True)
    except OSError as exc:
        raise CredentialError(f"the exec credential plugin {name!r} cannot be run: "
                              f"{exc.strerror or exc}", _INSTALL) from None
    too_much = threading.Event()
    out = _CappedPipe(process.stdout, MAX_PLUGIN_OUTPUT, too_much)
    err = _CappedPipe(process.stderr, MAX_PLUGIN_STDERR, None)  # keeps the last bytes
    ends = time.monotonic() + timeout
    try:
        while process.poll() is None and not too_much.is_set() and time.monotonic() < ends:
            too_much.wait(min(0.05, max(0.0, ends - time.monotonic())))
    finally:
        if process.poll() is None or too_much.is_set():
            _kill(process)
        # after the plugin exits, a child it left behind may hold the pipes open
        out.join(min(LEFTOVER_WAIT, max(0.1, ends - time.monotonic())))
        err.join(0.1)
        if out.is_alive() or err.is_alive():  # a child it started still holds the pipes
            _kill(process)
    if too_much.is_set():
        raise CredentialError(f"the exec credential plugin {name!r} wrote more than "
                              f"{MAX_PLUGIN_OUTPUT} bytes; stopped", _FIX_USER)
    if process.returncode is None or process.returncode < 0 and time.monotonic() >= ends:
        raise CredentialError(f"the exec credential plugin {name!r} gave no credential within "
                              f"{timeout:g} s", "run it by hand to see what it waits for (a "
                              "browser login?), or raise --exec-timeout")
    if process.returncode != 0:
        lines = err.text().strip().splitlines()  # a plugin's words may hold a token: masked
        why = f": {server_text(mask_credentials(lines[-1]))[:300]}" if lines else ""
        raise CredentialError(f"the exec credential plugin {name!r} failed with exit code "
                              f"{process.returncode}{why}", "log in again (run the plugin by hand)")
    return out.text()


class _CappedPipe(threading.Thread):
    """Reads a pipe to its end in the background, keeping at most ``cap`` bytes: the first
    ones, setting ``overflow`` when more come (standard output), or the last ones when
    ``overflow`` is None (standard error, whose last line says why)."""

    def __init__(self, pipe: Any, cap: int, overflow: threading.Event | None) -> None:
        super().__init__(daemon=True)
        self._pipe, self._cap, self._overflow = pipe, cap, overflow
        self._data = bytearray()
        self.start()

    def run(self) -> None:
        try:
            while chunk := self._pipe.read1(1 << 16):
                self._data += chunk
                if len(self._data) > self._cap:
                    if self._overflow is not None:
                        self._overflow.set()
                        return
                    del self._data[:-self._cap]
        except (OSError, ValueError):
            return  # the pipe was closed under us: the plugin was killed

    def text(self) -> str:
        return bytes(self._data[:self._cap]).decode("utf-8", "replace")


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _status(out: str, name: str, api_version: object) -> dict[str, Any]:
    try:
        credential = load_json(out)  # a deep answer is a ValueError, not a RecursionError
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
    if cert_ok:
        problem = client_pair_problem(status["clientCertificateData"], status["clientKeyData"])
        if problem:
            raise CredentialError(f"the exec credential plugin {name!r} returned a client "
                                  f"certificate and key that cannot be used: {problem}", _FIX_USER)
    return status


def client_pair_problem(certificate: str, key: str) -> str:
    """Why a PEM client certificate and key cannot authenticate ('' when they can): not
    PEM, not a certificate or a private key, or a key that is not the certificate's.
    Said before TLS would say only "[SSL] PEM lib"."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        cert = x509.load_pem_x509_certificate(certificate.encode())
    except ValueError:
        return "clientCertificateData is no PEM certificate"
    try:
        private = serialization.load_pem_private_key(key.encode(), password=None)
    except (ValueError, TypeError):
        return "clientKeyData is no PEM private key (without passphrase)"
    except Exception:  # noqa: BLE001 - cryptography raises UnsupportedAlgorithm for odd keys
        return "clientKeyData holds a key type that cannot be used"
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    encoding = serialization.Encoding.DER
    if cert.public_key().public_bytes(encoding, public) != private.public_key().public_bytes(
            encoding, public):
        return "clientKeyData is not the key of clientCertificateData"
    return ''


def check_regular(what: str, path: str) -> None:
    """A file a kubeconfig names (token, client certificate or key, CA) is a regular file
    of at most ``MAX_CREDENTIAL_FILE`` bytes, as the kubeconfig itself must be: a FIFO
    would block the scan before any timeout applies, ``/dev/zero`` would be read until
    memory runs out. A file that does not exist is said where it is read."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return
    if not stat.S_ISREG(status.st_mode):
        raise CredentialError(f"the {what} file {path} is not a regular file (a FIFO, socket "
                              "or device is never read)", "point the kubeconfig at the file itself")
    if status.st_size > MAX_CREDENTIAL_FILE:
        raise CredentialError(f"the {what} file {path} is larger than "
                              f"{size_text(MAX_CREDENTIAL_FILE)}; not read",
                              "check the path in the kubeconfig: no credential file is this large")


def read_credential_file(what: str, path: str) -> str:
    """The text of a credential file a kubeconfig names (a ``tokenFile``), regular and
    bounded as :func:`check_regular` says, opened without blocking."""
    try:
        data = read_bounded(path, MAX_CREDENTIAL_FILE, regular_only=True)
    except NotRegularFile:
        check_regular(what, path)  # says why
        raise CredentialError(f"the {what} file {path} is not a regular file", _FIX_USER) from None
    except FileTooLarge:
        raise CredentialError(f"the {what} file {path} is larger than "
                              f"{size_text(MAX_CREDENTIAL_FILE)}; not read",
                              "check the path in the kubeconfig: no credential file is this large"
                              ) from None
    except OSError as exc:
        raise CredentialError(f"cannot read the {what} file {path}: {exc.strerror or exc}",
                              "check the path in the kubeconfig and its permissions") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CredentialError(f"the {what} file {path} is not UTF-8 text",
                              "check the path in the kubeconfig") from None


def bearer_token(token: object, where: str) -> str:
    """``token`` as an ``Authorization: Bearer`` header carries it. Surrounding whitespace
    is trimmed (client-go trims a ``tokenFile``; the newline an editor, ``echo`` or a
    Windows CRLF leaves is never part of a token). A line break, another control
    character or a character beyond Latin-1 inside cannot be sent in an HTTP header:
    refused, the token never shown."""
    if not isinstance(token, str):
        raise CredentialError(f"the token of {where} is not a string", _FIX_USER)
    token = token.strip()
    if not token:  # never an anonymous scan
        raise CredentialError(f"the token of {where} is empty (only blanks)", _FIX_USER)
    for at, char in enumerate(token):
        if ord(char) < 0x20 or ord(char) == 0x7f or ord(char) > 0xff:
            what = ("a line break" if char in "\r\n" else "a control character"
                    if ord(char) < 0x100 else f"the character U+{ord(char):04X}")
            raise CredentialError(f"the token of {where} (****, {len(token)} characters) holds "
                                  f"{what} at character {at + 1}, which an HTTP header cannot "
                                  "carry", "check the token: as issued, a token is one line of ASCII")
    return token


def check_readable(files: Mapping[str, str | None]) -> None:
    """Every credential or CA file the configuration names is a regular file and can be read."""
    for what, path in files.items():
        if not path:
            continue
        check_regular(what, path)
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


# What a server, a front end before it or a credential plugin said is repeated this long
# at most, masked (here, not in client.py, as the plugin's words need it too)
MAX_SERVER_TEXT = 300  # characters of a server's error message repeated to the user


def server_text(text: str, secrets: Sequence[str] = ()) -> str:
    """What a server (or a front end before it) said, as hcpscan may repeat it: the
    credentials it was sent and anything shaped like ``Bearer <token>`` masked, and at
    most ``MAX_SERVER_TEXT`` characters (a hostile answer can be megabytes)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 4:
            text = text.replace(secret, "****")
    text = mask_auth_values(text)
    text = " ".join(text.split())
    if len(text) > MAX_SERVER_TEXT:
        text = f"{text[:MAX_SERVER_TEXT]}... ({len(text) - MAX_SERVER_TEXT} more characters)"
    return text
