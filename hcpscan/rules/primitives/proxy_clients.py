"""Primitives about how different HTTP clients read the same proxy settings.

* ``case_readers``: which case of a variable each client reads, for ``agreement``'s
  ``variable-case`` relation (PRX006);
* ``noproxy_entries_portable`` (PRX007): noProxy entries that some clients
  ignore (CIDRs, ``*.x``, spaces as separators).

Which variable each client reads, and how it matches an entry, comes from the
proxy model (``env.choose`` and ``bypasses``), so the evidence names the
runtimes exactly as the model knows them.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from hcpscan.analysis.proxy import RUNTIME_NAMES, bypasses, parse_no_proxy
from hcpscan.analysis.proxy.env import choose
from hcpscan.analysis.proxy.noproxy import RuntimeRef, releases_where
from hcpscan.analysis.proxy.target import TargetError, parse_target
from hcpscan.inventory.objects import K8sObject
from hcpscan.model.readers import go_reader
from hcpscan.rules.context import Context
from hcpscan.rules.primitives import register
from hcpscan.rules.primitives.base import NotApplicable, Outcome, Primitive, Violation
from hcpscan.rules.primitives.proxy_config import (
    CONSUMER_KINDS,
    GO,
    consumers_of,
    controlled_pod,
    root_of,
)

# Java reads system properties, not these variables (DOMAIN.md §7).
ENV_RUNTIMES = tuple(r for r in RUNTIME_NAMES if r != "java")


def readers(env: dict[str, str], scheme: str, which: str) -> dict[str, list[str]]:
    """variable -> runtimes that take their value from it ("(none)" for runtimes that
    read neither)."""
    out: dict[str, list[str]] = {}
    for rt in ENV_RUNTIMES:
        choice = choose(rt, env, scheme)
        var = choice.proxy_var if which == "proxy" else choice.no_proxy_var
        out.setdefault(var or "(none)", []).append(rt)
    return out


def _readers_text(groups: dict[str, list[str]]) -> str:
    return "; ".join(f"{var}: {', '.join(rts)}" for var, rts in groups.items())


# canonical field -> (scheme whose choice tells who reads it, proxy or no_proxy choice)
_FIELD_CHOICE = {"httpProxy": ("http", "proxy"), "httpsProxy": ("https", "proxy"),
                 "noProxy": ("https", "no_proxy")}


def case_readers(env: dict[str, str], field: str) -> str:
    """Which variable of ``env`` each client takes ``field`` from (``agreement``'s evidence
    on upper- and lower-case variables)."""
    scheme, which = _FIELD_CHOICE[field]
    return _readers_text(readers(env, scheme, which))


# -- PRX007 ---------------------------------------------------------------------------------


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
    if any(c.isspace() for c in raw.strip()):
        return [_name_probe(w) for w in raw.split()]
    if entry and entry[0].kind == "cidr" and entry[0].network is not None:
        net = entry[0].network
        inside = net.network_address + (1 if net.num_addresses > 1 else 0)
        return [f"[{inside}]" if isinstance(inside, ipaddress.IPv6Address) else str(inside)]
    if raw.strip().startswith("*."):
        domain = raw.strip()[2:].partition(":")[0]
        return [f"www.{domain}", domain]
    return []


def _divergence(raw: str, pinned: dict[str, RuntimeRef] | None = None
                ) -> tuple[str, list[str]] | None:
    """(kind of entry, evidence lines) when some client decides differently from Go,
    naming the releases that do when only some of a client's releases do."""
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
            rt, lambda ref, url=url, go=go: bypasses(ref, raw, url).bypass != go,
            (pinned or {}).get(rt)))]
        if differ:
            how = "direct" if go else "through the proxy"
            lines.append(f"{raw!r} for {host}: Go goes {how}, {', '.join(differ)} go"
                         f" {'through the proxy' if go else 'direct'}")
    return (kind, lines) if lines else None


@register
class NoProxyEntriesPortable(Primitive):
    name = "noproxy_entries_portable"
    description = ("noProxy entries (CIDRs, *.x wildcards, space-separated lists) that other "
                   "clients read differently from Go")
    params_schema = {
        "type": "object", "additionalProperties": False,
        "properties": {
            "consumers": {"type": "array", "items": {"enum": sorted(CONSUMER_KINDS)}},
            "include_go_readers": {"type": "boolean",
                                   "description": "also judge values only Go programs read "
                                                  "(containerd, kubelet, OpenShift images ...)"},
        },
    }
    reads = ("ConfigMap", "Secret")

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        kinds = {CONSUMER_KINDS[k] for k in params.get("consumers", CONSUMER_KINDS)}
        if controlled_pod(subject):
            yield NotApplicable("a controller-owned pod: its controller is checked")
            return
        seen: set[tuple[str, str]] = set()
        judged = False
        for c in consumers_of(ctx, subject):
            if c.kind not in kinds or c.part == "status":
                continue  # a Proxy status is computed; its CIDRs come from the cluster
            if go_reader(c.program, c.image) and not params.get("include_go_readers"):
                continue  # only Go reads it: how other clients would read it does not matter
            # the releases to model: configured (inputs.runtime_versions), else what the
            # consumer's image tag states (curlimages/curl:8.5.0), else each client's ranges
            pinned = dict(ctx.config.runtime_versions)
            release = c.client_release
            if release is not None:
                pinned.setdefault(release.name, release)
            for setting in c.variables.values():
                if setting.name.lower().replace("_", "") != "noproxy" or not setting.value:
                    continue
                judged = True
                # NO_PROXY and no_proxy with one value in one consumer are one problem
                if (c.name, setting.value) in seen:
                    continue
                seen.add((c.name, setting.value))
                at, field = root_of(subject, setting)
                found = [(raw, d) for raw in setting.value.split(",")
                         if (d := _divergence(raw.strip(), pinned))]
                if not found:
                    continue
                kinds_found = sorted({d[0] for _, d in found})
                yield Violation(
                    field=field, subject=at,
                    values={"consumer": c.name, "variable": setting.name,
                            "entries": ", ".join(raw.strip() for raw, _ in found),
                            "kinds": " and ".join(kinds_found)},
                    evidence=[f"{setting.name} = {setting.value!r} at {setting.source}",
                              *(line for _, d in found for line in d[1])])
        if not judged:
            yield NotApplicable("no noProxy that a non-Go client may read")

