"""Which proxy variables a client reads, in which order, and what an empty value does.

``evaluate_env(runtime, env, url)`` answers the full question for a process
environment: which proxy (if any) the request uses, the variable it came from,
and the NO_PROXY decision. Facts per client (from each client's source):

* go: ``HTTP_PROXY`` then ``http_proxy`` (same for HTTPS_PROXY, NO_PROXY) — the
  first *non-empty* value wins; https uses only HTTPS_PROXY, http only
  HTTP_PROXY, other schemes never a proxy; under CGI (``REQUEST_METHOD``
  non-empty) an http URL with an HTTP proxy set fails with an error, before
  NO_PROXY or the loopback rule is looked at.
* curl: ``<scheme>_proxy`` then ``<SCHEME>_PROXY`` — but never ``HTTP_PROXY``
  (only lower-case ``http_proxy`` for http); ws/wss fall back to http(s)_proxy;
  then ``all_proxy``/``ALL_PROXY``; ``no_proxy`` before ``NO_PROXY``; empty = unset.
* python (urllib): every ``*_PROXY`` in any case, then lower-case ``*_proxy``
  variables override — an *empty* lower-case one removes the entry; under CGI
  upper-case HTTP_PROXY is dropped; only the URL's own scheme is used.
* requests: urllib's table (plus ``all``/ALL_PROXY as a fallback); NO_PROXY is
  ``no_proxy`` or (when that is empty/unset) ``NO_PROXY``.
* node-undici: ``http_proxy ?? HTTP_PROXY`` — a *defined* lower-case variable
  wins even when empty; https falls back to the http proxy; ``no_proxy ??
  NO_PROXY``. A proxy value that is not an http(s)/socks URL (``127.0.0.1:3128``)
  makes the agent throw, so every request fails - except in 8.0.0 and 8.0.1, which
  prepend ``http://`` (HTTP proxy) or ``https://`` (HTTPS proxy) to a value without
  ``scheme://`` (removed again in 8.0.2).
* proxy-from-env 2.x: ``<scheme>_proxy``, ``all_proxy`` — each lower-case
  first, then upper-case, empty = unset; NO_PROXY from ``no_proxy``. 1.x reads
  ``npm_config_<scheme>_proxy`` before them and ``npm_config_proxy`` before
  ``all_proxy``, and ``npm_config_no_proxy`` before ``no_proxy``.
* ruby (``Net::HTTP``): it looks the proxy up for ``http://host:port`` whatever
  the URL's scheme, so an https request uses ``http_proxy`` (``https_proxy`` is
  never read); lower-case first, then upper-case; a defined empty lower-case
  value wins (and means "no proxy"); under CGI only lower-case ``http_proxy``,
  then ``CGI_HTTP_PROXY``, is used. A value ``URI.parse`` rejects
  (``127.0.0.1:3128``) raises, but only for requests that would use the proxy.
* java: no environment variables; system properties ``http.proxyHost``,
  ``https.proxyHost``, ``http.nonProxyHosts`` given as ``--env`` keys or as ``-D``
  options in ``JAVA_TOOL_OPTIONS``/``JDK_JAVA_OPTIONS``/``JAVA_OPTS``.
* wget: lower-case ``http_proxy``/``https_proxy``/``ftp_proxy``/``no_proxy`` only.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hcpscan.analysis.proxy.decision import Decision
from hcpscan.analysis.proxy.noproxy import RuntimeRef, bypasses, runtime_ref
from hcpscan.analysis.proxy.runtimes.base import Version
from hcpscan.analysis.proxy.runtimes.node import PFE_2
from hcpscan.analysis.proxy.target import Target, parse_target
from hcpscan.core.redact import mask_credentials

Env = Mapping[str, str]
Outcome = Literal["direct", "proxy", "error"]

# RFC 3986 / WHATWG: a URL starts with a scheme; "127.0.0.1:3128" has none.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
GO_CGI_ERROR = "refusing to use HTTP_PROXY value in CGI environment; see golang.org/s/cgihttpproxy"


@dataclass(frozen=True, slots=True)
class EnvChoice:
    """What a client takes from an environment for one URL scheme."""

    proxy: str | None  # the proxy URL, None = no proxy for this scheme
    proxy_var: str | None  # the variable (or property) it came from
    no_proxy: str | None
    no_proxy_var: str | None
    note: str = ""
    error: str = ""  # the client refuses the configuration: its reason
    error_var: str | None = None  # the variable it refuses
    error_if_proxied: bool = False  # the refusal only hits requests that would use the proxy


@dataclass(frozen=True, slots=True)
class EnvDecision:
    runtime: str
    url: str
    bypass: bool  # True = direct (no proxy configured, or NO_PROXY matched)
    proxy: str | None  # the proxy used when not bypassed
    proxy_var: str | None
    matched: str | None  # the NO_PROXY entry that made it direct
    no_proxy_var: str | None
    reason: str
    outcome: Outcome = "direct"
    variable: str | None = None  # the variable that chose the proxy, or that the client refused

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "runtime": self.runtime, "outcome": self.outcome,
                "variable": self.variable, "bypass": self.bypass, "matched": self.matched,
                "proxy": self.proxy if self.outcome == "proxy" else None,
                "proxy_var": self.proxy_var, "no_proxy_var": self.no_proxy_var,
                "reason": self.reason}


def _first_nonempty(env: Env, *names: str) -> tuple[str | None, str | None]:
    for name in names:
        if env.get(name):
            return env[name], name
    return None, None


def _first_defined(env: Env, *names: str) -> tuple[str | None, str | None]:
    for name in names:
        if name in env:
            return env[name], name
    return None, None


def _go(env: Env, scheme: str, version: Version) -> EnvChoice:
    no, no_var = _first_nonempty(env, "NO_PROXY", "no_proxy")
    if scheme == "https":
        proxy, var = _first_nonempty(env, "HTTPS_PROXY", "https_proxy")
    elif scheme == "http":
        proxy, var = _first_nonempty(env, "HTTP_PROXY", "http_proxy")
        if proxy and env.get("REQUEST_METHOD"):
            return EnvChoice(proxy, var, no, no_var, error=GO_CGI_ERROR, error_var=var)
    else:
        return EnvChoice(None, None, no, no_var, f"Go uses no proxy for {scheme or 'this'} URLs")
    if proxy and proxy.partition("://")[0].lower() not in ("http", "https", "socks5"):
        proxy = "http://" + proxy  # Go reads "host:port" (or a bogus scheme) as http
    return EnvChoice(proxy, var, no, no_var)


def _curl(env: Env, scheme: str, version: Version) -> EnvChoice:
    no, no_var = _first_nonempty(env, "no_proxy", "NO_PROXY")
    names = [f"{scheme}_proxy"]
    if scheme != "http":  # HTTP_PROXY is never read (CGI "Proxy:" header injection)
        names.append(f"{scheme.upper()}_PROXY")
    if scheme == "ws":
        names.append("http_proxy")
    elif scheme == "wss":
        names += ["https_proxy", "HTTPS_PROXY"]
    proxy, var = _first_nonempty(env, *names, "all_proxy", "ALL_PROXY")
    note = "curl ignores HTTP_PROXY" if scheme == "http" and env.get("HTTP_PROXY") and \
        var != "http_proxy" else ""
    return EnvChoice(proxy, var, no, no_var, note)


def urllib_proxies(env: Env) -> dict[str, tuple[str, str]]:
    """urllib's getproxies_environment: scheme -> (value, variable)."""
    found: dict[str, tuple[str, str]] = {}
    for name, value in env.items():
        if len(name) > 5 and name[-6] == "_" and name[-5:].lower() == "proxy" and value:
            found[name[:-6].lower()] = (value, name)
    if "REQUEST_METHOD" in env:
        found.pop("http", None)
    for name, value in env.items():
        if name[-6:] == "_proxy":
            if value:
                found[name[:-6].lower()] = (value, name)
            else:
                found.pop(name[:-6].lower(), None)
    return found


def _python(env: Env, scheme: str, version: Version) -> EnvChoice:
    found = urllib_proxies(env)
    proxy, var = found.get(scheme, (None, None))
    no, no_var = found.get("no", (None, None))
    return EnvChoice(proxy, var, no, no_var)


def _requests(env: Env, scheme: str, version: Version) -> EnvChoice:
    found = urllib_proxies(env)
    proxy, var = found.get(scheme) or found.get("all") or (None, None)
    no, no_var = _first_nonempty(env, "no_proxy", "NO_PROXY")
    return EnvChoice(proxy, var, no, no_var)


def _undici_refusal(value: str) -> str:
    """Why undici's ProxyAgent throws for ``value`` ("" when it accepts it)."""
    scheme = _SCHEME.match(value)
    if scheme is None:
        return f"Invalid URL: undici cannot read {value!r} as a proxy URL"
    if scheme.group(1).lower() not in ("http", "https", "socks", "socks5"):
        return f"Invalid URL protocol {scheme.group(1)!r}: the proxy URL must start with http: " \
               "or https:"
    return ""


_UNDICI_NORMALISES = ((8, 0, 0), (8, 0, 2))  # releases that prepend a missing scheme
_SCHEME_SLASHES = re.compile(r"^[a-z][a-z0-9+\-.]*://", re.IGNORECASE)


def _undici_normalised(value: str | None, default: str, version: Version) -> str | None:
    since, until = _UNDICI_NORMALISES
    if not value or not since <= version < until or _SCHEME_SLASHES.match(value):
        return value
    return f"{default}://{value}"


def _undici(env: Env, scheme: str, version: Version) -> EnvChoice:
    no, no_var = _first_defined(env, "no_proxy", "NO_PROXY")
    http, http_var = _first_defined(env, "http_proxy", "HTTP_PROXY")
    https, https_var = _first_defined(env, "https_proxy", "HTTPS_PROXY")
    http = _undici_normalised(http, "http", version)
    https = _undici_normalised(https, "https", version)
    # the agent builds both proxy agents up front: a bad value fails every request
    for value, var in ((http, http_var), (https, https_var)):
        refusal = _undici_refusal(value) if value else ""
        if refusal:
            return EnvChoice(value, var, no, no_var, error=refusal, error_var=var)
    if scheme == "https":
        if https:
            return EnvChoice(https, https_var, no, no_var)
        return EnvChoice(http or None, http_var if http else None, no, no_var,
                         "no HTTPS proxy: undici uses the HTTP proxy for https" if http else "")
    return EnvChoice(http or None, http_var if http else None, no, no_var)


def _pfe(env: Env, scheme: str, version: Version) -> EnvChoice:
    def get(key: str) -> tuple[str | None, str | None]:
        return _first_nonempty(env, key.lower(), key.upper())

    npm = version < PFE_2  # 2.x no longer reads npm's configuration variables
    proxy, var = None, None
    keys = (f"npm_config_{scheme}_proxy", f"{scheme}_proxy", "npm_config_proxy", "all_proxy")
    for key in keys if npm else keys[1::2]:
        proxy, var = get(key)
        if proxy:
            break
    no, no_var = None, None
    for key in ("npm_config_no_proxy", "no_proxy") if npm else ("no_proxy",):
        no, no_var = get(key)
        if no:
            break
    if proxy and "://" not in proxy:
        proxy = f"{scheme}://{proxy}"
    return EnvChoice(proxy, var, no, no_var)


def _ruby(env: Env, scheme: str, version: Version) -> EnvChoice:
    no, no_var = _first_defined(env, "no_proxy", "NO_PROXY")
    if scheme not in ("http", "https"):
        return EnvChoice(None, None, no, no_var, f"Net::HTTP speaks no {scheme or 'such'} URLs")
    # Net::HTTP asks URI::HTTP("http://host:port").find_proxy: always the http_proxy name
    if "REQUEST_METHOD" in env:
        proxy, var = _first_defined(env, "http_proxy")
        if proxy is None:
            proxy, var = _first_defined(env, "CGI_HTTP_PROXY")
    else:
        proxy, var = _first_defined(env, "http_proxy", "HTTP_PROXY")
    if proxy and not _ruby_has_host(proxy):
        return EnvChoice(proxy, var, no, no_var, error=f"URI::InvalidURIError: bad URI(is not "
                         f"URI?): {proxy!r}", error_var=var, error_if_proxied=True)
    return EnvChoice(proxy or None, var, no, no_var,
                     "an empty variable means no proxy" if var and not proxy else "")


def _ruby_has_host(value: str) -> bool:
    """Whether ``URI.parse(value)`` reads a proxy host: a scheme then ``//``; a value
    without a scheme whose first segment holds a ':' is rejected outright."""
    scheme = _SCHEME.match(value)
    return scheme is not None and value[scheme.end():].startswith("//")


def java_properties(env: Env) -> dict[str, str]:
    """System properties from ``-Dk=v`` options and property-shaped keys."""
    props: dict[str, str] = {}
    for var in ("JAVA_OPTS", "JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS"):
        try:
            words = shlex.split(env.get(var, ""))
        except ValueError:
            continue
        for word in words:
            if word.startswith("-D"):
                key, _, value = word[2:].partition("=")
                props[key] = value
    props.update({k: v for k, v in env.items() if "." in k})
    return props


def _java(env: Env, scheme: str, version: Version) -> EnvChoice:
    props = java_properties(env)
    no = props.get("http.nonProxyHosts")
    no_var = "http.nonProxyHosts" if no is not None else None
    for prefix in ((scheme,) if scheme in ("http", "https") else ()) + ("proxy",):
        host = props.get(f"{prefix}.proxyHost" if prefix != "proxy" else "proxyHost")
        if host:
            port = props.get(f"{prefix}.proxyPort" if prefix != "proxy" else "proxyPort", "")
            var = f"{prefix}.proxyHost" if prefix != "proxy" else "proxyHost"
            return EnvChoice(f"http://{host}" + (f":{port}" if port else ""), var, no, no_var)
    return EnvChoice(None, None, no, no_var, "Java reads no proxy environment variables")


def _wget(env: Env, scheme: str, version: Version) -> EnvChoice:
    proxy, var = _first_nonempty(env, f"{scheme}_proxy") if scheme in ("http", "https", "ftp") \
        else (None, None)
    no, no_var = _first_defined(env, "no_proxy")
    return EnvChoice(proxy, var, no, no_var)


_CHOOSERS: dict[str, Callable[[Env, str, Version], EnvChoice]] = {
    "go": _go, "curl": _curl, "python": _python, "requests": _requests,
    "node-undici": _undici, "proxy-from-env": _pfe, "ruby": _ruby, "java": _java, "wget": _wget,
}


def choose(runtime_name: str | RuntimeRef, env: Env, scheme: str) -> EnvChoice:
    ref = runtime_ref(runtime_name)  # raises for an unknown name or version
    return _CHOOSERS[ref.name](env, scheme.lower(), ref.version)


def evaluate_env(runtime_name: str | RuntimeRef, env: Env, url: str | Target) -> EnvDecision:
    target = url if isinstance(url, Target) else parse_target(url)
    ref = runtime_ref(runtime_name)
    runtime_name = ref.name
    choice = choose(ref, env, target.scheme or "http")
    if choice.error and not choice.error_if_proxied:
        return _refused(runtime_name, target, choice, None)
    if not choice.proxy:
        reason = choice.note or f"no proxy variable for {target.scheme or 'http'} URLs"
        return EnvDecision(runtime_name, target.raw, True, None, choice.proxy_var, None,
                           choice.no_proxy_var, reason)
    if runtime_name == "java":
        decision: Decision = bypasses(ref, choice.no_proxy, target)
    else:
        decision = bypasses(ref, choice.no_proxy or "", target)
    if choice.error and not decision.bypass:
        return _refused(runtime_name, target, choice, decision.matched)
    # masked here, as one value: in the sentence a password holding a space would be cut
    reason = decision.reason if decision.bypass else "through " + mask_credentials(choice.proxy)
    if choice.note and not decision.bypass:
        reason += f" ({choice.note})"
    return EnvDecision(runtime_name, target.raw, decision.bypass, choice.proxy, choice.proxy_var,
                       decision.matched, choice.no_proxy_var, reason,
                       "direct" if decision.bypass else "proxy",
                       None if decision.bypass else choice.proxy_var)


def _refused(runtime_name: str, target: Target, choice: EnvChoice,
             matched: str | None) -> EnvDecision:
    """The request fails: the client refuses the proxy configuration."""
    return EnvDecision(runtime_name, target.raw, False, None, choice.proxy_var, matched,
                       choice.no_proxy_var, f"{choice.error_var}: {choice.error}", "error",
                       choice.error_var)
