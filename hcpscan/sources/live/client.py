"""Talking to the API server: configuration, authentication, proxy, timeouts and retries.

The kubernetes client does what kubectl's loader does: ``KUBECONFIG`` merging,
contexts, exec plugins, tokens, client certificates, ``insecure-skip-tls-verify``,
``tls-server-name``, in-cluster service accounts. Its ``RESTClientObject``
turns that configuration into a urllib3 pool (a ``ProxyManager`` when a proxy
applies). hcpscan sends plain ``GET`` requests through that pool and does
retries, backoff and pagination itself: the generated API classes only know
built-in kinds, their signatures change between client versions, and a
read-only lister of arbitrary resources needs none of them.

Proxy: ``proxy-url`` of the kubeconfig's cluster wins, as in kubectl (and
``NO_PROXY`` does not apply to it); otherwise ``HTTPS_PROXY``/``NO_PROXY`` from
the environment, never for a loopback server (Go's rule, which kubectl follows).

Fails closed (the cluster may be hostile or compromised): credentials that cannot
be obtained end the scan (``credentials``), each request must be complete within
``request_timeout`` seconds however slowly the server sends it (``deadline``),
and an answer larger than ``max_response_bytes`` is refused, not read.
"""

from __future__ import annotations

import email.utils
import errno
import functools
import ipaddress
import json
import os
import random
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit
from urllib.request import (  # type: ignore[attr-defined]  # proxy_bypass_environment: not in typeshed
    getproxies_environment,
    proxy_bypass_environment,
)

import urllib3
import yaml

from hcpscan.core.userinfo import find_credentials, without_userinfo
from hcpscan.core.yamldocs import InputLimitError, load_json
from hcpscan.sources.bounded import read_bounded
from hcpscan.sources.live.credentials import (
    MAX_SERVER_TEXT,
    CredentialError,
    base_path,
    bearer_token,
    check_readable,
    check_regular,
    read_credential_file,
    run_exec_plugin,
    server_text,
)
from hcpscan.sources.live.deadline import deadline, enforce_deadlines

SERVICEACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
IN_CLUSTER = "in-cluster"

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_BACKOFF = 5.0
MAX_RESPONSE_MIB = 256  # a page of 500 large ConfigMaps fits; an endless body does not
EXEC_TIMEOUT = 60.0  # seconds for an exec credential plugin (a browser login takes a while)
_RELOGIN = "log in again, or switch the user to an exec credential plugin (kubectl dropped auth-providers)"


class LiveError(Exception):
    """The cluster cannot be scanned at all: a message and what to do next."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class ApiError(Exception):
    """The API server answered a request with an error status."""

    def __init__(self, status: int, reason: str, message: str, path: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.path = path


class TransportError(LiveError):
    """No HTTP answer: connection refused, timeout, TLS or proxy failure."""


@dataclass(frozen=True, slots=True)
class ClusterTarget:
    """Which cluster to read and how patiently (the command line's choices)."""

    kubeconfig: str | None = None
    context: str | None = None
    request_timeout: float = 10.0
    attempts: int = 4  # per request, for 429 and 5xx answers
    serviceaccount_dir: Path = SERVICEACCOUNT_DIR
    exec_timeout: float = EXEC_TIMEOUT
    max_response_bytes: int = MAX_RESPONSE_MIB << 20


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    reason: str
    headers: Mapping[str, str]
    data: bytes


@dataclass(slots=True)
class Connection:
    """An authenticated, proxied HTTP connection to one API server."""

    context: str
    host: str
    proxy: str | None
    timeout: float
    attempts: int
    max_response_bytes: int
    _configuration: Any
    _pool: urllib3.PoolManager
    _auth_lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, path: str, query: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """GET a JSON document; retry 429 and 5xx with backoff; raise ApiError or TransportError."""
        return self.request("GET", path, query)

    def get_sized(self, path: str, query: Mapping[str, Any] | None = None
                  ) -> tuple[dict[str, Any], int]:
        """``get``, and the size in bytes of the answer (for the per-kind byte budget)."""
        return self._request("GET", path, query)

    def request(self, method: str, path: str, query: Mapping[str, Any] | None = None,
                body: bytes | None = None, content_type: str | None = None) -> dict[str, Any]:
        """One request with a JSON answer, retried like ``get``. Only ``get`` is used to read
        a cluster; the one writer (``hcpscan/publish.py``, server-side apply of reports,
        idempotent and so safe to retry) sends its PATCH through here."""
        return self._request(method, path, query, body, content_type)[0]

    def _request(self, method: str, path: str, query: Mapping[str, Any] | None = None,
                 body: bytes | None = None, content_type: str | None = None
                 ) -> tuple[dict[str, Any], int]:
        url = self.host + quote(path, safe="/:@-._~") + (f"?{urlencode(query)}" if query else "")
        for attempt in range(1, self.attempts + 1):
            response = self._send(method, url, path, body, content_type)
            if response.status in (200, 201):
                return _json_body(response.data, path), len(response.data)
            error = _api_error(response, path, self._secrets())
            if response.status not in RETRY_STATUSES or attempt == self.attempts:
                raise error
            time.sleep(_backoff(attempt, response.headers.get("Retry-After")))
        raise AssertionError("unreachable")  # the loop always returns or raises

    def _send(self, method: str, url: str, path: str, body: bytes | None = None,
              content_type: str | None = None) -> _Answer:
        """One request, complete (status, headers, body) within ``timeout`` seconds."""
        agent = "hcpscan (read-only)" if method == "GET" else "hcpscan (publishing reports)"
        headers = {"Accept": "application/json", "User-Agent": agent}
        if content_type:
            headers["Content-Type"] = content_type
        headers.update(self._auth_headers())
        try:
            with deadline(self.timeout):
                response = self._pool.request(
                    method, url, body=body, headers=headers, retries=False, redirect=False,
                    preload_content=False,
                    timeout=urllib3.Timeout(connect=self.timeout, read=self.timeout))
                try:
                    data = self._body(response, path)
                except BaseException:
                    response.close()  # half read: the connection cannot carry another request
                    raise
                response.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            raise self._transport_error(exc) from None
        return _Answer(response.status, response.reason or "", response.headers, data)

    def _body(self, response: urllib3.BaseHTTPResponse, path: str) -> bytes:
        """The body, refused beyond ``max_response_bytes`` (counted after decompression)."""
        limit = self.max_response_bytes
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            raise self._too_large(path)
        chunks, size = [], 0
        for chunk in response.stream(1 << 16):
            size += len(chunk)
            if size > limit:
                raise self._too_large(path)
            chunks.append(chunk)
        return b"".join(chunks)

    def _too_large(self, path: str) -> TransportError:
        mib = self.max_response_bytes / (1 << 20)
        return TransportError(f"the API server at {self.host} answered {path} with more than "
                              f"{mib:g} MiB; not read", "lower --page-size, or raise "
                              "--max-response-size if the cluster really holds objects this large")

    def _auth_headers(self) -> dict[str, str]:
        # auth_settings() runs the client's refresh hook (exec plugins, expiring tokens).
        try:
            with self._auth_lock:
                settings = self._configuration.auth_settings()
        except CredentialError as exc:
            raise LiveError(exc.message, exc.hint) from None
        return {s["key"]: s["value"] for s in settings.values()
                if s.get("in") == "header" and s.get("value")}

    def _secrets(self) -> list[str]:
        """The credentials this connection sends, so that a server echoing them is masked."""
        try:
            headers = self._auth_headers()
        except LiveError:
            return []
        values = [v for v in headers.values() if v]
        return values + [v.split(None, 1)[1] for v in values if " " in v.strip()]

    def _transport_error(self, exc: Exception) -> TransportError:
        where = f"the API server at {self.host} (context {self.context})"
        via = f" through the proxy {_redact_userinfo(self.proxy)}" if self.proxy else ""
        hint = f"check that the server is reachable{via}, or raise --request-timeout"
        cause = exc.reason if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason else exc
        if isinstance(cause, urllib3.exceptions.ProxyError):
            inner = getattr(cause, "original_error", None)
            said = (_connection_failure(inner)[0]
                    if isinstance(inner, urllib3.exceptions.NewConnectionError) else _short(cause))
            return TransportError(f"cannot reach {where} through the proxy "
                                  f"{_redact_userinfo(self.proxy)}: {said}",
                                  "check proxy-url in the kubeconfig or HTTPS_PROXY/NO_PROXY, "
                                  "and that the proxy runs")
        if isinstance(cause, urllib3.exceptions.SSLError):
            return TransportError(f"TLS error talking to {where}: {_short(cause)}",
                                  "check the cluster's certificate-authority(-data) in the kubeconfig")
        # NewConnectionError (refused, no route, unknown name) subclasses ConnectTimeoutError
        if isinstance(cause, urllib3.exceptions.NewConnectionError):
            why, next_step = _connection_failure(cause)
            return TransportError(f"cannot connect to {where}{via}: {why}",
                                  next_step + (f" (and that the proxy {_redact_userinfo(self.proxy)}"
                                               " is right)" if self.proxy else ""))
        if isinstance(cause, urllib3.exceptions.ConnectTimeoutError):
            return TransportError(f"no connection to {where}{via} within {self.timeout:g} s", hint)
        if isinstance(cause, urllib3.exceptions.ReadTimeoutError):
            return TransportError(f"no answer from {where}{via} within {self.timeout:g} s", hint)
        return TransportError(f"request to {where}{via} failed: {_short(cause)}", hint)

    def close(self) -> None:
        self._pool.clear()


def connect(target: ClusterTarget) -> Connection:
    """Load the configuration (kubeconfig or in-cluster) and open a connection pool."""
    try:
        from kubernetes.client import Configuration
        from kubernetes.client.rest import RESTClientObject
    except ImportError:  # the `live` extra: offline scans never need it
        raise LiveError("reading a live cluster needs the kubernetes client, which is not "
                        "installed", "pip install 'hcpscan[live]' (offline scans of dumps and "
                        "manifests do not need it)") from None

    configuration = Configuration()
    kubeconfig = _kubeconfig_path(target)
    if kubeconfig is None:
        context, cluster = _load_in_cluster(target, configuration)
    else:
        context, cluster = _load_kubeconfig(kubeconfig, target, configuration)
    try:
        check_readable({"client certificate": configuration.cert_file,
                        "client key": configuration.key_file,
                        "certificate authority": configuration.ssl_ca_cert})
    except CredentialError as exc:
        raise LiveError(exc.message, exc.hint) from None
    host = configuration.host.rstrip("/")
    proxy = cluster.get("proxy-url") or _environment_proxy(host)
    configuration.proxy = proxy or None
    if hasattr(configuration, "no_proxy"):
        configuration.no_proxy = None  # decided above, as kubectl does
    configuration.retries = False
    configuration.connection_pool_maxsize = 16
    try:
        pool = RESTClientObject(configuration).pool_manager
    except (ValueError, OSError, ImportError) as exc:
        where = (f"the proxy-url of context {context}'s cluster in {kubeconfig}"
                 if cluster.get("proxy-url") and kubeconfig else
                 "the proxy-url of the kubeconfig" if cluster.get("proxy-url") else
                 "the proxy of the environment (HTTPS_PROXY)" if proxy else "the kubeconfig")
        raise LiveError(f"cannot set up the connection to {host}: {_without_secrets(str(exc), proxy)}",
                        f"check the TLS files and {where}") from None
    enforce_deadlines(pool)
    return Connection(context, host, proxy or None, target.request_timeout, target.attempts,
                      target.max_response_bytes, configuration, pool)


def _kubeconfig_path(target: ClusterTarget) -> str | None:
    """--kubeconfig, else KUBECONFIG, else ~/.kube/config, else None (in-cluster)."""
    if target.kubeconfig:
        if not Path(target.kubeconfig).is_file():
            raise LiveError(f"kubeconfig not found: {target.kubeconfig}", "check the --kubeconfig path")
        return target.kubeconfig
    env = os.environ.get("KUBECONFIG", "")
    existing = [p for p in env.split(os.pathsep) if p and Path(p).is_file()]
    if existing:
        return os.pathsep.join(existing)
    if env.strip(os.pathsep):
        raise LiveError(f"no file of KUBECONFIG={env} exists", "check the KUBECONFIG variable")
    default = Path.home() / ".kube" / "config"
    if default.is_file():
        return str(default)
    if os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT"):
        return None
    raise LiveError("no kubeconfig found and not running in a pod",
                    "give --kubeconfig PATH, set KUBECONFIG, or create ~/.kube/config")


def _load_kubeconfig(path: str, target: ClusterTarget, configuration: Any) -> tuple[str, dict[str, Any]]:
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.kube_config import KubeConfigMerger

    clusters, contexts, current = _read_kubeconfigs(path)
    name = target.context or current
    if not name:
        raise LiveError(f"the kubeconfig {path} has no current-context",
                        "pick one with --context NAME (see `kubectl config get-contexts`)")
    if name not in contexts:
        known = ", ".join(sorted(contexts)) or "none"
        raise LiveError(f"context {name!r} not found in {path} (contexts: {known})",
                        "pick one with --context NAME (see `kubectl config get-contexts`)")
    try:
        merged = KubeConfigMerger(path).config
        loader = _fail_closed_loader()(config_dict=merged, config_base_path=None, active_context=name)
        loader.exec_timeout = target.exec_timeout
        loader.load_and_set(configuration)
    except CredentialError as exc:
        raise LiveError(f"no credentials for context {name!r} of {path}: {exc.message}",
                        exc.hint) from None
    except (ConfigException, OSError, ValueError, TypeError, KeyError) as exc:
        raise LiveError(f"cannot use context {name!r} of {path}: {_short(exc)}",
                        "check the context's cluster (server, proxy-url, certificate-authority) "
                        "and user (token, client certificate or exec plugin)") from None
    cluster_name = (contexts[name] or {}).get("cluster")
    return name, clusters.get(cluster_name, {}) if isinstance(cluster_name, str) else {}


@functools.cache
def _fail_closed_loader() -> type:
    """The kubernetes client's kubeconfig loader, with exec plugins run by
    :func:`run_exec_plugin`: with a timeout, and an exception instead of a log line
    (and an anonymous scan) when they fail."""
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.dateutil import parse_rfc3339
    from kubernetes.config.kube_config import FileOrData, KubeConfigLoader

    class FailClosedLoader(KubeConfigLoader):  # type: ignore[misc]
        exec_timeout: float = EXEC_TIMEOUT

        def _load_authentication(self) -> None:
            # the client reads a user the kubeconfig lacks as "no credentials"; kubectl refuses
            wanted = self._current_context["context"].safe_get("user")
            if wanted and not self._user:
                raise CredentialError(f"the context's user {wanted!r} is not in the kubeconfig",
                                      "add the user, or pick another --context")
            super()._load_authentication()

        def _load_auth_provider_token(self) -> str | None:
            # the client skips an unknown provider or an unusable token and goes on anonymously
            if "auth-provider" not in self._user:
                return None
            name = self._user["auth-provider"].safe_get("name")
            try:
                token = super()._load_auth_provider_token()
            except Exception as exc:  # noqa: BLE001 - any failure of a provider fails closed
                raise CredentialError(f"the kubeconfig's auth-provider {name!r} failed: "
                                      f"{_short(exc)}", _RELOGIN) from None
            if not token:
                raise CredentialError(f"the kubeconfig's auth-provider {name!r} gave no usable "
                                      "token (unknown provider, or a malformed id-token)", _RELOGIN)
            return token

        def _load_user_token(self) -> bool | None:
            # the client reads a tokenFile whatever it is (a FIFO blocks, /dev/zero grows
            # without end) and sends the token untrimmed (a file's newline broke the header)
            user = self._user
            token = user.safe_get("token")
            if not token and "tokenFile" in user:
                path = os.path.normpath(os.path.join(self._get_base_path(user.path),
                                                     str(user["tokenFile"])))
                token, where = read_credential_file("token", path), f"the tokenFile {path}"
            else:
                where = "the kubeconfig's user"
            if not token:
                return None
            self.token = f"Bearer {bearer_token(token, where)}"
            return True

        def _load_cluster_info(self) -> None:
            server, proxy = self._cluster.safe_get("server"), self._cluster.safe_get("proxy-url")
            for key, value in (("server", server), ("proxy-url", proxy)):
                if value is not None and not isinstance(value, str):
                    raise ConfigException(f"the cluster's {key} is not a string "
                                          f"({type(value).__name__})")
            base = self._get_base_path(self._cluster.path)
            for section, key, what in ((self._cluster, "certificate-authority", "certificate authority"),
                                       (self._user, "client-certificate", "client certificate"),
                                       (self._user, "client-key", "client key")):
                name = section.safe_get(key) if section else None
                if isinstance(name, str) and name and not section.safe_get(f"{key}-data"):
                    check_regular(what, os.path.normpath(os.path.join(base, name)))
            super()._load_cluster_info()

        def _load_from_exec_plugin(self) -> bool | None:
            if "exec" not in self._user:
                return None
            status = run_exec_plugin(self._user["exec"].value, base_path(self._cluster.path),
                                     self.exec_timeout, self._cluster.value)
            if status.get("token"):
                command = self._user["exec"].safe_get("command")
                self.token = f"Bearer {bearer_token(status['token'], f'the exec plugin {command!r}')}"
            else:
                for attr, key in (("cert_file", "clientCertificateData"), ("key_file", "clientKeyData")):
                    setattr(self, attr, FileOrData(status, None, data_key_name=key,
                                                   base64_file_content=False,
                                                   temp_file_path=self._temp_file_path).as_file())
            if "expirationTimestamp" in status:
                self.expiry = parse_rfc3339(status["expirationTimestamp"])
            return True

    return FailClosedLoader


def _read_kubeconfigs(path: str) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], str]:
    """Clusters, contexts and current-context of KUBECONFIG-style merged files (first wins)."""
    clusters: dict[str, dict[str, Any]] = {}
    contexts: dict[str, dict[str, Any]] = {}
    current = ""
    for part in path.split(os.pathsep):
        try:  # under the budgets of an input file (size, nodes, depth): PyYAML recurses
            data = yaml.safe_load(read_bounded(Path(part))) or {}
        except InputLimitError as exc:
            where = f"{part}:{exc.line}" if exc.line else part
            raise LiveError(f"cannot read kubeconfig {where}: {exc.message}",
                            "check that it is a readable kubeconfig file") from None
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise LiveError(f"cannot read kubeconfig {part}: {_short(exc)}",
                            "check that it is a readable kubeconfig file") from None
        if not isinstance(data, dict):
            raise LiveError(f"{part} is not a kubeconfig", "give a kubeconfig file (kind: Config)")
        for entry in data.get("clusters") or []:
            if isinstance(entry, dict) and isinstance(entry.get("cluster"), dict):
                clusters.setdefault(str(entry.get("name")), entry["cluster"])
        for entry in data.get("contexts") or []:
            if isinstance(entry, dict):
                contexts.setdefault(str(entry.get("name")), entry.get("context") or {})
        current = current or str(data.get("current-context") or "")
    return clusters, contexts, current


def _load_in_cluster(target: ClusterTarget, configuration: Any) -> tuple[str, dict[str, Any]]:
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.incluster_config import InClusterConfigLoader

    if target.context:
        raise LiveError("--context needs a kubeconfig, but none was found (running in a pod)",
                        "give --kubeconfig PATH or drop --context")
    class TrimmedTokenLoader(InClusterConfigLoader):  # type: ignore[misc]
        # the token file read bounded, regular only and trimmed, as a kubeconfig's tokenFile
        def _read_token_file(self) -> None:
            path = self._token_filename
            token = bearer_token(read_credential_file("service account token", path),
                                 f"the service account token file {path}")
            if not token:
                raise ConfigException("Token file exists but empty.")
            self.token = f"bearer {token}"
            self.token_expires_at = datetime.now() + self._token_refresh_period

    loader = TrimmedTokenLoader(token_filename=str(target.serviceaccount_dir / "token"),
                                cert_filename=str(target.serviceaccount_dir / "ca.crt"))
    try:
        loader.load_and_set(configuration)
    except CredentialError as exc:
        raise LiveError(f"cannot use the pod's service account: {exc.message}", exc.hint) from None
    except (ConfigException, OSError) as exc:
        raise LiveError(f"cannot use the pod's service account: {_short(exc)}",
                        "mount a service account token, or give --kubeconfig PATH") from None
    return IN_CLUSTER, {}


def _environment_proxy(host: str) -> str | None:
    hostname = urlsplit(host).hostname or ""
    if _is_loopback(hostname) or proxy_bypass_environment(hostname):
        return None
    proxies = getproxies_environment()
    return proxies.get(urlsplit(host).scheme) or proxies.get("all")


def _is_loopback(hostname: str) -> bool:
    if hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def _json_body(data: bytes, path: str) -> dict[str, Any]:
    try:
        body = load_json(data)
    except (ValueError, UnicodeDecodeError):
        raise ApiError(200, "OK", "the answer is not JSON", path) from None
    if not isinstance(body, dict):
        raise ApiError(200, "OK", "the answer is not a JSON object", path)
    return body


def _api_error(response: _Answer, path: str, secrets: Sequence[str] = ()) -> ApiError:
    message = ""
    try:
        status = json.loads(response.data)
        if isinstance(status, dict):
            message = str(status.get("message") or "")
    except (ValueError, UnicodeDecodeError, RecursionError):
        message = response.data[:MAX_SERVER_TEXT * 2].decode("utf-8", errors="replace").strip()
    return ApiError(response.status, server_text(response.reason or "", secrets),
                    server_text(message, secrets), path)


def _backoff(attempt: int, retry_after: str | None) -> float:
    """Seconds to wait before the next attempt: Retry-After when given (ASCII digits, or
    an HTTP date), else exponential. Anything else a server sends there is ignored
    (``str.isdigit`` took superscripts and other scripts' digits, which ``float`` refuses)."""
    value = (retry_after or "").strip()
    if _DELAY_SECONDS.fullmatch(value):
        return min(float(value), MAX_BACKOFF)
    if value:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            when = None
        if when is not None and when.tzinfo is not None:
            return min(max((when - datetime.now(UTC)).total_seconds(), 0.0), MAX_BACKOFF)
    return min(0.2 * 2 ** (attempt - 1), MAX_BACKOFF) * (0.5 + random.random() / 2)


_DELAY_SECONDS = re.compile(r"[0-9]+", re.ASCII)


def _redact_userinfo(url: str | None) -> str:
    """The proxy URL without its user name and password (the one userinfo parser decides
    where they end: the last ``@``)."""
    if not url:
        return ""
    bare = without_userinfo(url)
    return bare if bare == url.strip() else bare.replace("://", "://****@", 1)


def _without_secrets(text: str, proxy: str | None) -> str:
    """``text`` (a URL parser's complaint about the proxy URL, which may quote a part of its
    network location: ``'u:PW' is not a valid host or port``) with the proxy URL's user
    name and password, and each piece of the password, masked."""
    for cred in find_credentials(proxy or ""):
        pieces = {cred.password, cred.user, *re.split(r"[/?#@:\s]", cred.password)}
        for piece in sorted(pieces, key=len, reverse=True):
            if len(piece) >= 2:
                text = text.replace(piece, "****")
    return server_text(text)


def _connection_failure(exc: BaseException) -> tuple[str, str]:
    """What went wrong opening a connection, in words (never urllib3's class names), and
    the next step: waiting longer helps a timeout, not a refusal or an unknown name."""
    if isinstance(exc, urllib3.exceptions.NameResolutionError):
        return ("the host name does not resolve",
                "check the server address in the kubeconfig and your DNS (VPN?)")
    cause = exc.__cause__ or exc.__context__
    # a socks proxy's error holds the socket's error
    number = getattr(cause, "errno", None) or getattr(getattr(cause, "socket_err", None), "errno", None)
    if number == errno.ECONNREFUSED:
        return ("the connection was refused (nothing listens on that port)",
                "check the server address and port in the kubeconfig, and that the API "
                "server runs")
    if number in (errno.EHOSTUNREACH, errno.ENETUNREACH):
        return ("no route to the host", "check the network path (VPN, firewall) to the server")
    text = (getattr(cause, "strerror", None) or _short(exc)).strip()
    return text[:1].lower() + text[1:], "check the server address in the kubeconfig and that it is reachable"


_CONNECTION_REPR = re.compile(r"^\w*Connection\(host=[^)]*\):\s*")


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    # urllib3 prefixes messages with the connection object's repr
    if line.startswith("<") and ">: " in line:
        line = line.split(">: ", 1)[1]
    line = _CONNECTION_REPR.sub("", line)  # or with its class name: never shown
    return server_text(line)  # a proxy or server may echo what it was sent
