"""Template ``agreement``: a consumer's proxy settings (or named fields) agree with a reference.

A rule picks its consumers by role (``consumers``), what they must agree with by a named
relation of the model (``reference``), the fields compared (``fields``) and how
(``match``): ``equal`` (both sides hold the same), ``contains`` (the consumer carries
what the reference sets: the same URL, every noProxy entry) or ``present`` (the
consumer sets the field at all). ``when`` limits the check to a reference that uses a
proxy, or that sends one of the consumer's destinations through it (Go's NO_PROXY
reading); ``missing`` says whether a field set on one side only, or a consumer that is
absent, fails. Roles and relations are listed in ``agreement_sides``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hcpscan.analysis.proxy import Setting, bypasses
from hcpscan.inventory.objects import K8sObject
from hcpscan.rules.context import Context
from hcpscan.rules.templates import register
from hcpscan.rules.templates.agreement_sides import (
    FIELDS,
    RELATIONS,
    ROLES,
    URL_FIELDS,
    Side,
    consumer_sides,
    label,
    reference_sides,
)
from hcpscan.rules.templates.base import NotApplicable, NotEvaluable, Outcome, Template, Violation
from hcpscan.rules.templates.proxy_clients import case_readers
from hcpscan.rules.templates.proxy_config import GO, field_in, same_url, split_entries, where

DESTINATIONS = ("server", "ignition-endpoints")
# Relations whose reference follows from the subject alone, not from each consumer.
_OF_SUBJECT = ("hosted-cluster", "management-proxy", "cluster-values", "managed-cluster", "installation")
_MISSING = {"enum": ["fail", "ok"]}
_WORKLOAD = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "names": {"type": "array", "items": {"type": "string"}, "description": "name globs"},
        "namespaces": {"type": "array", "items": {"type": "string"}, "description": "namespace globs"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"},
                   "description": "labels it must carry (value globs)"},
        "static": {"type": "boolean", "description": "only static (mirror) pods"},
    },
}
# What each role and relation reads besides the subject.
_ROLE_READS = {"container": ("ConfigMap", "Secret"), "konnectivity-path": ("Deployment", "StatefulSet"),
               "bootstrap-file": ("Secret",), "systemd-dropin": ("ConfigMap", "Secret"),
               "kubeadm-file": ("Secret",)}
_RELATION_READS = {
    "hosted-cluster": ("HostedCluster",), "management-proxy": ("Proxy",),
    "cluster-values": ("Secret", "ConfigMap", "HelmRelease", "App", "KubeadmControlPlane",
                       "KubeadmControlPlaneTemplate"),
    "managed-cluster": ("Proxy", "Deployment", "DaemonSet", "StatefulSet", "ConfigMap", "Secret"),
    "installation": ("Secret", "ConfigMap", "Proxy", "ClusterPolicy", "Policy"),
    "secret-kubeconfig": ("Secret",),
}


@dataclass(slots=True)
class _Diff:
    """One disagreement on one field."""

    name: str  # canonical field
    problem: str
    at: K8sObject | None
    place: str
    values: dict[str, str]
    evidence: list[str] = field(default_factory=list)
    lacking: bool = False  # the consumer does not set what the reference sets


@register
class Agreement(Template):
    name = "agreement"
    description = ("a consumer's proxy settings (or named kubeconfig fields) agree with a "
                   "reference the model pairs it with: its HostedCluster, the management Proxy, "
                   "its cluster's values, a kubeconfig, its own upper-case variables ...")
    params_schema = {
        "type": "object", "additionalProperties": False,
        "required": ["consumers", "reference", "fields"],
        "properties": {
            "consumers": {
                "type": "object", "additionalProperties": False, "required": ["role"],
                "description": "the subject's consumers to judge",
                "properties": {
                    "role": {"oneOf": [{"enum": sorted(ROLES)},
                                       {"type": "array", "minItems": 1, "items": {"enum": sorted(ROLES)}}],
                             "description": "a role or a list of roles: " + "; ".join(
                                 f"{k}: {v}" for k, v in sorted(ROLES.items()))},
                    "container": {"type": "string", "description": "container: only containers "
                                                                   "whose name matches this glob"},
                    "init_containers": {"type": "boolean",
                                        "description": "container: judge init containers too"},
                    "workloads": {"type": "object", "additionalProperties": _WORKLOAD,
                                  "description": "container: judge only workloads one of these "
                                                 "named selectors picks ({workload} is its name)"},
                    "key": {"type": "string", "description": "kubeconfig (default kubeconfig), "
                                                             "ignition (default value): Secret key"},
                    "path": {"type": "string", "description": "bootstrap-file: the file's path"},
                },
            },
            "reference": {
                "type": "object", "additionalProperties": False, "required": ["relation"],
                "properties": {
                    "relation": {"enum": sorted(RELATIONS), "description": "; ".join(
                        f"{k}: {v}" for k, v in sorted(RELATIONS.items()))},
                    "secret": {"type": "string", "description": "secret-kubeconfig: the Secret"},
                    "key": {"type": "string", "description": "secret-kubeconfig: its key"},
                },
            },
            "fields": {"type": "array", "minItems": 1, "items": {"enum": list(FIELDS)},
                       "description": "the fields compared (URLs without a trailing /, noProxy "
                                      "entry by entry, the CA as written)"},
            "match": {"enum": ["equal", "contains", "present"],
                      "description": "equal (default): both sides hold the same; contains: the "
                                     "consumer carries every field the reference sets (noProxy: "
                                     "every entry); present: the consumer sets the fields"},
            "require": {"enum": ["all", "any"],
                        "description": "present: every field (default) or one of them"},
            "when": {
                "type": "object", "additionalProperties": False,
                "description": "uses_proxy: judge only consumers whose reference uses a proxy "
                               "(else not applicable); proxied: the fields are needed only when "
                               "the reference sends that destination of the consumer through its "
                               "proxy (Go's NO_PROXY reading; direct = compliant)",
                "properties": {"uses_proxy": {"const": True},
                               "proxied": {"enum": list(DESTINATIONS),
                                           "description": "server: a kubeconfig's server; "
                                                          "ignition-endpoints: a stub's sources"}},
            },
            "missing": {"oneOf": [_MISSING, {"type": "object", "propertyNames": {"enum": sorted(ROLES)},
                                             "additionalProperties": _MISSING}],
                        "description": "a field set on one side only, or an absent consumer: "
                                       "fail (default) or ok; or per role"},
        },
    }
    # every kind some role or relation reads; reads_for narrows it to a rule's params
    reads = tuple(dict.fromkeys(k for kinds in (*_ROLE_READS.values(), *_RELATION_READS.values())
                                for k in kinds))
    subject_kinds = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod",
                     "DeploymentConfig", "HostedCluster", "Secret", "SystemdDropIn", "KubeadmConfig",
                     "KubeadmConfigTemplate", "KubeadmControlPlane", "KubeadmControlPlaneTemplate")
    message_fields = {
        "consumer": "the consumer (object, container or file)",
        "container": "the container (container, konnectivity-path roles)",
        "workload": "the name of the consumers.workloads selector that picked the subject",
        "field": "the field that disagrees (canonical name)",
        "fields": "every field that disagrees at one place, comma-separated",
        "variable": "the field as the consumer writes it (HTTPS_PROXY, --https-proxy, proxy-url)",
        "have": "the consumer's value ((unset) when unset)",
        "want": "the reference's value ((unset) when unset)",
        "reference": "the reference (e.g. Proxy cluster status, Secret ns/name)",
        "reference_field": "the reference's field (e.g. Proxy cluster status.httpsProxy)",
        "proxy": "the proxy the reference uses (for the destination, under when.proxied)",
        "destination": "the destination sent through the proxy (when.proxied)",
        "missing": "the fields the consumer does not set (match: present)",
        "problem": "the disagreement in one sentence",
        "hc": "the HostedCluster (relation hosted-cluster)",
        "cluster": "the Cluster API cluster's name (relation cluster-values)",
    }

    def reads_whole(self, params: dict[str, Any], subjects: tuple[str, ...]) -> tuple[str, ...]:
        return ()  # of pods and workloads: containers, templates, owners (inventory/kept.py)

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        roles = _roles(params.get("consumers", {}))
        kinds = [k for role in roles for k in _ROLE_READS.get(role, ())]
        kinds += _RELATION_READS.get(params.get("reference", {}).get("relation", ""), ())
        return tuple(dict.fromkeys(kinds))

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        relation = params["reference"]["relation"]
        case = "lower" if relation == "variable-case" else "effective"
        selector = params["consumers"]
        if (params.get("when") or {}).get("uses_proxy") and relation in _OF_SUBJECT:
            refs = reference_sides(ctx, subject, Side(subject.ref, obj=subject), params["reference"])
            if isinstance(refs, list) and all(r.uses_proxy() is False for r in refs):
                # nothing to agree on, whatever the consumers turn out to be
                yield NotApplicable(f"{label(relation)} uses no proxy")
                return
        for role in _roles(selector):
            missing_ok = _missing_ok(params.get("missing", "fail"), role)
            for side in consumer_sides(ctx, subject, {**selector, "role": role}, case):
                if isinstance(side, (NotApplicable, NotEvaluable)):
                    yield side
                    continue
                yield from self._judge(ctx, subject, side, params, missing_ok)

    def _judge(self, ctx: Context, subject: K8sObject, side: Side, params: dict[str, Any],
               missing_ok: bool) -> Iterator[Outcome]:
        match = params.get("match", "equal")
        if match == "present" and not side.absent and _present(side, params):
            return
        if match != "present" and missing_ok and not (side.settings or side.absent or side.unknown):
            return  # fields set on one side only are left alone, and this side sets none
        refs = reference_sides(ctx, subject, side, params["reference"])
        if isinstance(refs, (NotApplicable, NotEvaluable)):
            yield refs
            return
        chosen = yield from _applicable(side, refs, params)
        if chosen is None:
            return
        ref, extra = chosen
        values = {**side.facts, **ref.facts, "reference": ref.name or side.name, **extra}
        if side.absent:
            if not missing_ok:
                yield Violation(field=side.place, subject=_other(side, subject),
                                values={**values, "problem": side.absent},
                                evidence=[*ref.evidence, *side.evidence])
            return
        if side.unknown:
            yield NotEvaluable(side.unknown)
            return
        diffs = (_lacking(side, ref, params, values) if match == "present"
                 else list(_differences(side, ref, params, values, missing_ok)))
        if any(isinstance(d, NotEvaluable) for d in diffs):
            yield from (d for d in diffs if isinstance(d, NotEvaluable))
            return
        yield from _grouped([d for d in diffs if isinstance(d, _Diff)], subject, side, ref)


def _roles(selector: dict[str, Any]) -> list[str]:
    role = selector.get("role")
    return list(role) if isinstance(role, list) else [str(role)]


def _missing_ok(missing: str | dict[str, str], role: str) -> bool:
    return (missing.get(role, "fail") if isinstance(missing, dict) else missing) == "ok"


def _other(side: Side, subject: K8sObject) -> K8sObject | None:
    """Report on the consumer's object when it is not the subject (a sidecar of an HC)."""
    return side.obj if side.obj is not None and side.obj is not subject else None


def _is_set(setting: Setting | None) -> bool:
    return setting is not None and (not setting.known or bool((setting.value or "").strip()))


def _present(side: Side, params: dict[str, Any]) -> bool:
    found = [_is_set(side.settings.get(f)) for f in params["fields"]]
    return any(found) if params.get("require") == "any" else all(found)


def _applicable(side: Side, refs: list[Side], params: dict[str, Any]
                ) -> Generator[Outcome, None, tuple[Side, dict[str, str]] | None]:
    """The first reference the ``when`` condition holds for, with the message values it
    gives (the generator's return value); yields why none does, when that is not a pass."""
    when = params.get("when") or {}
    relation = params["reference"]["relation"]
    if not when:
        return refs[0], {}
    if "proxied" in when and side.unknown:
        yield NotEvaluable(side.unknown)
        return None
    destinations = side.destinations.get(when.get("proxied", ""), []) if "proxied" in when else []
    if "proxied" in when and not destinations:
        yield NotEvaluable(f"{side.name}: no {when['proxied']} to judge")
        return None
    unknown = ""
    for ref in refs:
        uses = ref.uses_proxy()
        if uses is None:
            unknown = f"{ref.name}: whether it uses a proxy is unknown"
            continue
        if not uses:
            continue
        if "proxied" not in when:
            return ref, {"proxy": _proxy_of(ref, "https") or _proxy_of(ref, "http")}
        proxied = [(d, p) for d in destinations if (p := _proxied(ref, d))]
        if proxied:
            # a copy: references are shared by every subject of a scan
            said = (f"{', '.join(d for d, _ in proxied)} go(es) through {ref.name}'s proxy: not "
                    f"in its noProxy {_no_proxy(ref)!r} (Go rules)")
            return (dataclasses.replace(ref, evidence=[*ref.evidence, said]),
                    {"destination": proxied[0][0], "proxy": proxied[0][1]})
    if unknown:
        yield NotEvaluable(unknown)
    elif when.get("uses_proxy") and not any(r.uses_proxy() for r in refs):
        yield NotApplicable(f"{label(relation)} uses no proxy")
    # else every destination goes direct: judged, and nothing needs the fields
    return None


def _proxy_of(ref: Side, scheme: str) -> str:
    setting = ref.settings.get("httpsProxy" if scheme == "https" else "httpProxy")
    if setting is None:
        return ""
    return setting.value.strip() if setting.value is not None else f"a proxy ({setting.unknown})"


def _no_proxy(ref: Side) -> str:
    if ref.no_proxy is not None:
        return ref.no_proxy
    return ref.value("noProxy")


def _proxied(ref: Side, destination: str) -> str:
    """The proxy ``ref`` sends ``destination`` through ('' when it goes direct)."""
    proxy = _proxy_of(ref, "https" if destination.lower().startswith("https://") else "http")
    if not proxy or bypasses(GO, _no_proxy(ref), destination).bypass:
        return ""
    return proxy


def _lacking(side: Side, ref: Side, params: dict[str, Any], values: dict[str, str]) -> list[_Diff]:
    names = [side.spell(f) for f in params["fields"] if not _is_set(side.settings.get(f))]
    joined = (" or " if params.get("require") == "any" else " and ").join(names)
    problem = f"{side.label} without {joined}" if side.label else f"has no {joined}"
    return [_Diff(params["fields"][0], problem, side.obj, side.place,
                  {**values, "missing": joined, "fields": ", ".join(params["fields"])},
                  [*side.evidence], lacking=True)]


def _differences(side: Side, ref: Side, params: dict[str, Any], values: dict[str, str],
                 missing_ok: bool) -> Iterator[_Diff | NotEvaluable]:
    contains = params.get("match") == "contains"
    for name in params["fields"]:
        have, want = side.settings.get(name), ref.settings.get(name)
        unknown = next((s for s in (have, want) if s is not None and not s.known), None)
        if unknown is not None:
            yield NotEvaluable(f"{side.name}: {unknown.name} unknown ({unknown.unknown})")
            continue
        hv, wv = side.value(name), ref.value(name)
        if (contains and not wv) or (not hv and not wv) or ((not hv or not wv) and missing_ok):
            continue
        found = _disagreement(side, ref, name, hv, wv, contains)
        if found is None:
            continue
        problem, extra = found
        vals = {**values, "field": name, "variable": side.spell(name), "have": hv or "(unset)",
                "want": wv or "(unset)", "reference_field": ref.field_name(name), "problem": problem}
        evidence = _evidence(side, ref, name, have, want) + extra
        if have is not None:
            yield _Diff(name, problem, side.obj, field_in(side.obj, have) if side.obj else "", vals,
                        evidence)
        elif ref.same_consumer and want is not None:  # the twin variable is where it is set
            yield _Diff(name, problem, side.obj, field_in(side.obj, want) if side.obj else "", vals,
                        evidence)
        else:
            yield _Diff(name, problem, side.obj, side.place, vals, evidence, lacking=True)


def _disagreement(side: Side, ref: Side, name: str, hv: str, wv: str,
                  contains: bool) -> tuple[str, list[str]] | None:
    mine, theirs = side.spell(name), ref.field_name(name)
    if not hv or not wv:
        if ref.same_consumer:
            present, other = (mine, ref.spell(name)) if hv else (ref.spell(name), mine)
            return f"only {present} is set, not {other}", []
        return (f"{mine}={hv}, but {theirs} is (unset)", []) if hv else (f"no {mine}", [])
    if name == "noProxy":
        a, b = split_entries(hv), split_entries(wv)
        lacking = [e for e in b if e not in a]
        surplus = [] if contains else [e for e in a if e not in b]
        if not lacking and not surplus:
            return None
        lines = ([f"{mine} lacks {', '.join(lacking)}"] if lacking else []) + (
            [f"{mine} has in addition {', '.join(surplus)}"] if surplus else [])
        if ref.same_consumer:
            return f"{ref.spell(name)} and {mine} differ", lines
        return "; ".join(lines), lines
    if (same_url(hv, wv) if name in URL_FIELDS else hv == wv):
        return None
    if ref.same_consumer:
        return f"{ref.spell(name)} and {mine} differ", []
    return f"{mine}={hv}, but {theirs} is {wv}", []


def _evidence(side: Side, ref: Side, name: str, have: Setting | None,
              want: Setting | None) -> list[str]:
    at = f" at {want.source}" if want is not None and ref.same_consumer else ""
    lines = [f"{ref.field_name(name)} = {ref.value(name)!r}{at}"]
    if have is not None:
        lines.append(f"{have.name} {where(have)}")
    if ref.same_consumer:
        env = {s.name: s.value or "" for s in (have, want) if s is not None}
        lines.append("each client takes: " + case_readers(env, name))
    return lines


def _grouped(diffs: list[_Diff], subject: K8sObject, side: Side, ref: Side) -> Iterator[Violation]:
    """One finding per place: what a consumer lacks is one finding on its anchor, and a
    kubeconfig's fields (one Secret key) one finding naming them all."""
    groups: dict[tuple[int, str], list[_Diff]] = {}
    for d in diffs:
        groups.setdefault((id(d.at), d.place), []).append(d)
    for group in groups.values():
        first = group[0]
        fields = ", ".join(d.name for d in group)
        if all(d.lacking for d in group) and len(group) > 1:
            problem = "no " + ", ".join(d.values["variable"] for d in group)
        else:
            problem = "; ".join(d.problem for d in group)
        evidence: list[str] = []
        for d in group:
            evidence += [e for e in d.evidence if e not in evidence]
        lacking = [d.values.get("missing") or d.values["variable"] for d in group if d.lacking]
        if lacking:
            evidence.append(f"{side.name} has no {', '.join(lacking)}")
        evidence += [e for e in ref.evidence if e not in evidence]
        at = first.at if first.at is not None and first.at is not subject else None
        yield Violation(field=first.place, subject=at,
                        values={**first.values, "fields": first.values.get("fields", fields)
                                if first.lacking and "missing" in first.values else fields,
                                "problem": problem},
                        evidence=evidence)
