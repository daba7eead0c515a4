"""NO_PROXY evaluation per client runtime: does a request go direct or through the proxy?

``bypasses(runtime, no_proxy, url)`` is the one entry point rules need; the
runtime modules under ``runtimes/`` hold each client's own reading of the list,
researched from its source (see each module's docstring).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass

from hcpscan.analysis.proxy.decision import Decision
from hcpscan.analysis.proxy.hosts import strict_ip
from hcpscan.analysis.proxy.runtimes import curl, go, java, python_urllib, requests, ruby, wget
from hcpscan.analysis.proxy.runtimes.base import (
    AddressRules,
    IPNetwork,
    Runtime,
    Version,
    VersionError,
    parse_version,
    version_text,
)
from hcpscan.analysis.proxy.runtimes.node import ProxyFromEnv, Undici
from hcpscan.analysis.proxy.target import Target, parse_target
from hcpscan.core.userinfo import split_outside_credentials

# Order: Go first (what Kubernetes and OpenShift components use), then by popularity.
_IN_ORDER: tuple[Runtime, ...] = (go, curl, python_urllib, requests, Undici(), ProxyFromEnv(),
                                  ruby, java, wget)
RUNTIMES: dict[str, Runtime] = {r.NAME: r for r in _IN_ORDER}
RUNTIME_NAMES: tuple[str, ...] = tuple(RUNTIMES)


class UnknownRuntime(ValueError):
    pass


def runtime(name: str) -> Runtime:
    try:
        return RUNTIMES[name]
    except KeyError:
        raise UnknownRuntime(f"unknown runtime {name!r}; known: {', '.join(RUNTIME_NAMES)}") from None


@dataclass(frozen=True, slots=True)
class RuntimeRef:
    """A client and the release whose behaviour to model: ``curl@7.88``, ``node-undici@7``."""

    name: str
    version: Version  # the release asked for, or the first of the newest modelled range
    explicit: bool = True  # False: no release was given, the newest behaviour applies

    @property
    def runtime(self) -> Runtime:
        return RUNTIMES[self.name]

    @property
    def era_label(self) -> str:
        """The release range whose behaviour applies: ``>= 7.86, < 8.9``."""
        return next(e.label for e in self.runtime.ERAS if e.holds(self.version))

    @property
    def version_given(self) -> str | None:
        return version_text(self.version) if self.explicit else None

    def __str__(self) -> str:
        return f"{self.name}@{version_text(self.version)}" if self.explicit else self.name


def known_versions(name: str) -> str:
    """What ``name@...`` accepts, for messages: ``curl@7.86..9 (... ranges)``."""
    return f"{name}: " + "; ".join(e.label for e in runtime(name).ERAS)


def runtime_ref(text: str | RuntimeRef) -> RuntimeRef:
    """Read ``name`` or ``name@version``; raises ``UnknownRuntime`` with what is known."""
    if isinstance(text, RuntimeRef):
        return text
    name, at, version_part = text.strip().partition("@")
    rt = runtime(name)
    if not at:
        return RuntimeRef(name, rt.ERAS[-1].since, explicit=False)
    try:
        version = parse_version(version_part)
    except VersionError as exc:
        raise UnknownRuntime(f"{text!r}: {exc}; known: {known_versions(name)}") from None
    if not any(e.holds(version) for e in rt.ERAS):
        raise UnknownRuntime(f"{text!r}: version {version_part} is not modelled; known: "
                             f"{known_versions(name)}")
    return RuntimeRef(name, version)


def era_refs(name: str) -> tuple[RuntimeRef, ...]:
    """One reference per modelled behaviour of ``name``, oldest first."""
    return tuple(RuntimeRef(name, e.since) for e in runtime(name).ERAS)


def releases_where(name: str, holds: Callable[[RuntimeRef], bool],
                   pinned: RuntimeRef | None = None) -> str | None:
    """Which modelled releases of ``name`` satisfy ``holds``, for messages: None for
    none, ``name`` for all, else ``name before 8.18`` / ``name 8.0+`` / ``name
    >= 7.86, < 8.9`` per run of adjacent ranges. A ``pinned`` release (configured
    for the consumer) is the only one asked about."""
    if pinned is not None:
        return str(pinned) if holds(pinned) else None
    eras = runtime(name).ERAS
    mask = [holds(RuntimeRef(name, e.since)) for e in eras]
    if not any(mask):
        return None
    if all(mask):
        return name
    parts, i = [], 0
    while i < len(eras):
        if not mask[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(eras) and mask[j + 1]:
            j += 1
        since, until = version_text(eras[i].since), version_text(eras[j].until)
        parts.append(f"before {until}" if i == 0 else f"{since}+" if j == len(eras) - 1
                     else f">= {since}, < {until}")
        i = j + 1
    return f"{name} {' and '.join(parts)}"


def bypasses(runtime_name: str | RuntimeRef, no_proxy: str | None,
             url: str | Target) -> Decision:
    """Whether ``runtime_name`` (``name`` or ``name@version``) sends ``url`` direct when
    its NO_PROXY list is ``no_proxy``.

    For ``java`` the list is ``http.nonProxyHosts`` (``|``-separated); ``None``
    means the property is unset (the JDK default list applies). For every other
    runtime ``None`` is the same as an empty list.
    """
    target = url if isinstance(url, Target) else parse_target(url)
    ref = runtime_ref(runtime_name)
    if ref.name == java.NAME:
        return java.decide(no_proxy, target, ref.version)
    return ref.runtime.decide(no_proxy or "", target, ref.version)


def address_rules(runtime_name: str | RuntimeRef, no_proxy: str | None,
                  port: int | None) -> AddressRules:
    ref = runtime_ref(runtime_name)
    if ref.name == java.NAME:
        return java.address_rules(no_proxy, port, ref.version)
    return ref.runtime.address_rules(no_proxy or "", port, ref.version)


@dataclass(frozen=True, slots=True)
class NoProxyEntry:
    """One comma-separated entry, classified the way most clients would read it.

    A runtime-neutral view for rules ("this list holds a CIDR, which Python and
    Node ignore"); the decisions themselves come from ``bypasses``.
    """

    raw: str
    kind: str  # "wildcard" | "cidr" | "ip" | "domain" (apex+subdomains) | "subdomains" | "invalid"
    host: str = ""  # lower case, without a leading "*." / "." and without the port
    port: int | None = None
    network: IPNetwork | None = None


def parse_no_proxy(value: str | None) -> tuple[NoProxyEntry, ...]:
    out = []
    for piece in split_outside_credentials(value or "", ","):  # a password's ',' splits nothing
        raw = piece.strip()
        if not raw:
            continue
        if raw == "*":
            out.append(NoProxyEntry(raw, "wildcard"))
            continue
        try:
            if "/" in raw:
                net = ipaddress.ip_network(raw.lower(), strict=False)
                out.append(NoProxyEntry(raw, "cidr", str(net.network_address), network=net))
                continue
        except ValueError:
            out.append(NoProxyEntry(raw, "invalid"))
            continue
        split = go.split_host_port(raw.lower())
        host, port = split if split is not None else (raw.lower(), "")
        if port and not port.isdigit() or not host:
            out.append(NoProxyEntry(raw, "invalid"))
            continue
        number = int(port) if port else None
        ip = strict_ip(host)
        if ip is not None:
            out.append(NoProxyEntry(raw, "ip", str(ip), number, ipaddress.ip_network(ip)))
        elif host.startswith(("*.", ".")):
            out.append(NoProxyEntry(raw, "subdomains", host.lstrip("*").lstrip("."), number))
        elif "*" in host or any(c.isspace() for c in host):
            out.append(NoProxyEntry(raw, "invalid"))
        else:
            out.append(NoProxyEntry(raw, "domain", host, number))
    return tuple(out)
