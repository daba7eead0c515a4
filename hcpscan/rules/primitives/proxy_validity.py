"""Primitive: proxy URLs and NO_PROXY lists that are malformed, whatever the client.

A proxy URL is ``scheme://[user[:password]@]host[:port][/]``; the scheme a field
accepts depends on the API (``config.openshift.io`` Proxy: ``httpProxy`` http
only, ``httpsProxy`` http or https). NO_PROXY entries are classified by the
proxy model (``parse_no_proxy``); on top of its ``invalid`` entries, this module
reports entries that parse but can never match a host (an empty domain, a port
outside 1-65535, a dotted quad that is no IP address, characters no host name has).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from hcpscan.analysis.proxy import NoProxyEntry, parse_no_proxy
from hcpscan.analysis.proxy.hosts import strict_ip, to_ascii
from hcpscan.findings.redact import mask_credentials
from hcpscan.inventory.fieldpath import format_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.rules.context import Context
from hcpscan.rules.primitives import register
from hcpscan.rules.primitives.base import Outcome, Primitive, Violation
from hcpscan.rules.primitives.consumer_roles import (
    CONSUMERS_PARAM,
    chosen_consumers,
    consumer_reads,
    written_at,
)
from hcpscan.rules.primitives.proxy_config import CONSUMER_KINDS

_HOST_NAME = re.compile(r"^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?$")
_DOTTED_NUMBERS = re.compile(r"^[0-9]+(?:\.[0-9]+){1,3}$")


def proxy_url_problems(value: str, schemes: Iterable[str]) -> list[str]:
    """Why ``value`` is not a usable proxy URL with one of ``schemes`` ([] = fine or unset)."""
    allowed = [s.lower() for s in schemes]
    text = value.strip()
    if not text:
        return []  # empty means unset in every API that has these fields
    expected = " or ".join(f"{s}://" for s in allowed)
    if any(c.isspace() for c in text):
        return ["contains whitespace"]
    if "://" not in text:
        return [f"has no scheme (expected {expected}host:port)"]
    try:
        parts = urlsplit(text)
    except ValueError as exc:
        return [f"is not a URL: {exc}"]
    problems = []
    if parts.scheme.lower() not in allowed:
        problems.append(f"uses scheme {parts.scheme or '(empty)'}:// where only {expected} "
                        "is accepted")
    host = parts.hostname or ""
    if not host:
        problems.append("has no host")
    elif not _valid_host(host):
        problems.append(f"host {host!r} is neither a host name nor an IP address")
    try:
        port = parts.port
    except ValueError:
        problems.append("port is not a number in 1-65535")
    else:
        if port == 0:
            problems.append("port 0 is not a port a proxy can listen on")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        problems.append("carries a path, query or fragment: a proxy URL is "
                        "scheme://[user:password@]host:port")
    return problems


def _valid_host(host: str) -> bool:
    if strict_ip(host) is not None:
        return True
    if _DOTTED_NUMBERS.match(host):
        return False
    return bool(_HOST_NAME.match(to_ascii(host).lower()))


def no_proxy_entry_problem(entry: NoProxyEntry) -> str | None:
    """Why one NO_PROXY entry is malformed, or None."""
    if entry.kind == "invalid":
        if "://" in entry.raw:
            return "is a URL: NO_PROXY takes host names, domains, IPs and CIDRs, no scheme"
        if "/" in entry.raw:
            return "is not a valid CIDR"
        return "is not a host, domain, IP or CIDR"
    if entry.port is not None and not 0 < entry.port < 65536:
        return f"port {entry.port} is outside 1-65535"
    if entry.kind in ("domain", "subdomains"):
        if not entry.host:
            return "names no domain (an empty suffix matches nothing)"
        if _DOTTED_NUMBERS.match(entry.host):
            return "looks like an IP address but is not one"
        if ".." in entry.host:
            return "has an empty label (two dots in a row)"
        if not _HOST_NAME.match(to_ascii(entry.host)):
            return "holds characters no host name has (entries are comma-separated)"
    return None


def no_proxy_problems(value: str) -> list[tuple[str, str]]:
    """(entry as written, why) for every malformed entry of a comma-separated list."""
    out = []
    for entry in parse_no_proxy(value):
        why = no_proxy_entry_problem(entry)
        if why is not None:
            out.append((entry.raw, why))
    return out


_SCHEMES = {"type": "array", "minItems": 1, "items": {"type": "string"}}
_FIELD = {
    "type": "object", "additionalProperties": False, "required": ["path", "type"],
    "properties": {
        "path": {"type": "string", "description": "JSONPath to the value(s)"},
        "type": {"enum": ["url", "no_proxy"]},
        "schemes": {"type": "array", "minItems": 1, "items": {"type": "string"},
                    "description": "schemes a url accepts (default http, https)"},
    },
}


@register
class ProxySettingsValid(Primitive):
    name = "proxy_settings_valid"
    description = "proxy URLs have an accepted scheme and a host; NO_PROXY entries are well formed"
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["fields"],
        "properties": {
            "fields": {"type": "object",
                       "additionalProperties": {"type": "array", "items": _FIELD}},
            "consumers": CONSUMERS_PARAM,
            "schemes": {"type": "object", "additionalProperties": {
                "type": "object", "additionalProperties": _SCHEMES},
                "description": "per consumer kind, per setting name (httpProxy, ...): the "
                               "schemes its API accepts (default http, https)"},
        },
    }

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        return consumer_reads(params.get("consumers", ()))

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        yield from self._fields(ctx, subject, params)
        yield from self._consumers(ctx, subject, params)

    @staticmethod
    def _consumers(ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        """The effective proxy settings of the model's consumers, where the subject writes
        them (chart values, install-configs, KlusterletConfig, ...)."""
        for consumer in chosen_consumers(ctx, subject, params):
            schemes = params.get("schemes", {}).get(_param_name(consumer.kind), {})
            done: set[int] = set()
            for attr in ("http_proxy", "https_proxy", "no_proxy"):
                setting = getattr(consumer, attr)
                at = written_at(subject, setting) if setting is not None and setting.value \
                    else None
                if setting is None or at is None or id(setting) in done:
                    continue
                done.add(id(setting))  # one value serving http and https is judged once
                name = setting.source.field  # with the path inside an embedded document
                if attr == "no_proxy":
                    found = _check_no_proxy(at[1], str(setting.value), name)
                else:
                    found = _check_url(at[1], str(setting.value),
                                       schemes.get(setting.name, ["http", "https"]), name)
                for violation in found:
                    violation.subject = at[0]
                    yield violation

    @staticmethod
    def _fields(ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        for spec in params["fields"].get(subject.kind, ()):
            for value, steps in ctx.inventory.jsonpath(subject, spec["path"]):
                if value is None:
                    continue
                field = format_path(steps)
                if spec["type"] == "url":
                    yield from _check_url(field, str(value), spec.get("schemes", ["http", "https"]))
                else:
                    text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
                    yield from _check_no_proxy(field, text)


def _check_url(field: str, value: str, schemes: list[str], name: str = "") -> Iterable[Violation]:
    problems = proxy_url_problems(value, schemes)
    if problems:
        shown = mask_credentials(value.strip())
        name = name or field
        yield Violation(field=field, values={"field": name, "problem": "; ".join(problems)},
                        evidence=[f"{name} = {shown!r} " + p for p in problems])


def _check_no_proxy(field: str, value: str, name: str = "") -> Iterable[Violation]:
    bad = no_proxy_problems(value)
    if bad:
        entries = ", ".join(repr(raw) for raw, _ in bad)
        name = name or field
        yield Violation(field=field,
                        values={"field": name, "problem": f"malformed entries {entries}"},
                        evidence=[f"{name} entry {raw!r} {why}" for raw, why in bad])


def _param_name(kind: str) -> str:
    """How rules name a consumer kind (``CONSUMER_KINDS``)."""
    return next((name for name, k in CONSUMER_KINDS.items() if k == kind), kind)
