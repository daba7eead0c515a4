"""Whether a NO_PROXY entry means the same to every HTTP client that may read it.

Go, curl, Python, Node, Ruby and wget disagree on CIDRs, ``*.`` wildcards and
space-separated lists (DOMAIN.md §7). An entry is probed with hosts that show
what it is meant to cover, and each client's decision (``bypasses``, per
release where releases differ) is compared with Go's, which every Kubernetes
component uses.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from functools import lru_cache

from hcpscan.analysis.proxy.noproxy import RUNTIME_NAMES, RuntimeRef, bypasses, parse_no_proxy, releases_where
from hcpscan.analysis.proxy.target import Target, TargetError, parse_target
from hcpscan.core.userinfo import find_credentials, split_outside_credentials

GO = "go"
# Java reads system properties, not these variables (DOMAIN.md §7).
ENV_RUNTIMES = tuple(r for r in RUNTIME_NAMES if r != "java")


def _name_probe(word: str) -> str:
    """A host an entry is meant to cover: a subdomain for ``.x``/``*.x``, else the name."""
    host = word.strip().partition(":")[0] if word.count(":") == 1 else word.strip()
    if host.startswith(("*.", ".")):
        return "www." + host.lstrip("*").lstrip(".")
    return host


def _probes(raw: str) -> list[str]:
    """Hosts that show what an entry means: an address inside a CIDR, a subdomain and
    the apex of a ``*.`` domain, every word of an entry with spaces in it."""
    entry = parse_no_proxy(raw)
    if any(c.isspace() for c in raw.strip()):  # a credential is one word, and no host to probe
        return [_name_probe(w) for w in split_outside_credentials(raw, " \t\r\n\f\v")
                if w.strip() and not find_credentials(w)]
    if entry and entry[0].kind == "cidr" and entry[0].network is not None:
        net = entry[0].network
        inside = net.network_address + (1 if net.num_addresses > 1 else 0)
        return [f"[{inside}]" if isinstance(inside, ipaddress.IPv6Address) else str(inside)]
    if raw.strip().startswith("*."):
        domain = raw.strip()[2:].partition(":")[0]
        return [f"www.{domain}", domain]
    return []


def _differs(raw: str, url: Target, go: bool) -> Callable[[RuntimeRef], bool]:
    """Whether a release decides ``url`` under ``raw`` otherwise than Go (``go``: direct)."""
    def differs(ref: RuntimeRef) -> bool:
        return bypasses(ref, raw, url).bypass != go
    return differs


def divergence(raw: str, pinned: dict[str, RuntimeRef] | None = None
               ) -> tuple[str, list[str]] | None:
    """(kind of entry, evidence lines) when some client decides differently from Go,
    naming the releases that do when only some of a client's releases do."""
    if len(raw) > _REMEMBERED_LENGTH:
        return _divergence(raw, pinned)
    found = _remembered(raw, tuple(sorted((pinned or {}).items())))
    return (found[0], list(found[1])) if found is not None else None


# A fleet's noProxy lists repeat in every control plane: each entry is probed once per
# pinned releases. Entries up to 1 Ki characters, the last 4,096 asked, are remembered.
_REMEMBERED_LENGTH = 1024


@lru_cache(maxsize=4096)
def _remembered(raw: str, pinned: tuple[tuple[str, RuntimeRef], ...]
                ) -> tuple[str, tuple[str, ...]] | None:
    found = _divergence(raw, dict(pinned))
    return (found[0], tuple(found[1])) if found is not None else None


def _divergence(raw: str, pinned: dict[str, RuntimeRef] | None) -> tuple[str, list[str]] | None:
    hosts = _probes(raw)
    if not hosts:
        return None
    kind = ("entries separated by spaces" if any(c.isspace() for c in raw.strip())
            else "a CIDR" if "/" in raw else "a *. wildcard")
    lines = []
    for host in hosts:
        try:
            url = parse_target(f"https://{host}")
        except TargetError:
            continue  # a word that is no host (``[::1]}``) shows nothing about the entry
        go = bypasses(GO, raw, url).bypass
        differ = [text for rt in ENV_RUNTIMES if rt != GO and (text := releases_where(
            rt, _differs(raw, url, go),
            (pinned or {}).get(rt)))]
        if differ:
            how = "direct" if go else "through the proxy"
            lines.append(f"{raw!r} for {host}: Go goes {how}, {', '.join(differ)} go"
                         f" {'through the proxy' if go else 'direct'}")
    return (kind, lines) if lines else None
