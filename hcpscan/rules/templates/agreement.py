"""Template ``agreement``: a consumer's proxy settings (or named fields) agree with a reference.

A rule picks its consumers by role (``consumers``), what they must agree with by a named
relation of the model (``reference``), the fields compared (``fields``) and how
(``match``): ``equal`` (both sides hold the same), ``contains`` (the consumer carries
what the reference sets: the same URL, every noProxy entry) or ``present`` (the
consumer sets the field at all). ``when`` limits the check to a reference that uses a
proxy, or that sends one of the consumer's destinations through it (Go's NO_PROXY
reading); ``missing`` says whether a field set on one side only, or a consumer that is
absent, fails. Roles and relations are listed in ``hcpscan.analysis.proxy.sides``.
"""

from __future__ import annotations

import base64
import dataclasses
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hcpscan.analysis.proxy import Setting, bypasses
from hcpscan.analysis.proxy.clients import case_readers
from hcpscan.analysis.proxy.pem import parse_bytes_field
from hcpscan.analysis.proxy.sides import (
    FIELDS,
    RELATIONS,
    ROLES,
    URL_FIELDS,
    Absent,
    Side,
    Unknown,
    consumer_sides,
    label,
    reference_sides,
    settled_sides,
)
from hcpscan.analysis.proxy.trust import describe
from hcpscan.analysis.proxy.validity import credentials
from hcpscan.core.gobytes import go_bytes
from hcpscan.findings.fix import AppendItems, NoFix, Remedy, SetField
from hcpscan.inventory.fieldpath import format_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.model.capi import BOOTSTRAP_FILES, CLOUD_API_PROVIDERS, PROVIDER_LABEL, provider_proxy_fix
from hcpscan.model.clusters import networks_for
from hcpscan.model.hostedcluster import (
    HOSTED_KINDS,
    MANAGEMENT_PROXY_WORKLOADS,
    management_proxy_fix,
)
from hcpscan.model.networks import network
from hcpscan.rules.context import PROXY_ANALYSES, Context
from hcpscan.rules.templates import register
from hcpscan.rules.templates.base import (
    NotApplicable,
    NotEvaluable,
    Outcome,
    Settled,
    Template,
    Violation,
)
from hcpscan.rules.templates.noproxy_coverage import (
    GO,
    _missed,
    field_in,
    per_rule,
    same_url,
    split_entries,
    where,
)
from hcpscan.sources.systemd import parse_unit

DESTINATIONS = ("server", "ignition-endpoints")


def _skipped(side: Absent | Unknown) -> NotApplicable | NotEvaluable:
    """A side the analysis could not resolve, as the rule's outcome."""
    return NotApplicable(side.reason) if isinstance(side, Absent) else NotEvaluable(side.reason)
# Relations whose reference follows from the subject alone, not from each consumer.
_OF_SUBJECT = ("hosted-cluster", "management-proxy", "cluster-values", "managed-cluster", "installation")
# ... and those whose reference is one for the whole scan, whatever the subject.
_OF_SCAN = ("management-proxy", "installation")
_MISSING = {"enum": ["fail", "ok"]}
_WORKLOAD = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "names": {"type": "array", "items": {"type": "string"}, "description": "name globs"},
        "namespaces": {"type": "array", "items": {"type": "string"}, "description": "namespace globs"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"},
                   "description": "labels it must carry (value globs)"},
        "static": {"type": "boolean", "description": "only static (mirror) pods"},
        "hcp": {"type": "boolean", "description": "only in a hosted control plane's namespace "
                                                  "(a HostedCluster's in the input, or a pod "
                                                  "template with HyperShift's control-plane "
                                                  "labels)"},
        "containers": {"type": "array", "items": {"type": "string"},
                       "description": "container name globs judged in this workload (default: "
                                      "the consumers.container glob)"},
    },
}
# What each role and relation reads besides the subject.
_ROLE_READS = {"container": ("ConfigMap", "Secret"), "konnectivity-path": ("Deployment", "StatefulSet"),
               # the Cluster and its infrastructure cluster (CAPVCD writes containerd's drop-in)
               "bootstrap-file": ("Secret", "Cluster", "VCDCluster"),
               "systemd-dropin": ("ConfigMap", "Secret"),
               "kubeadm-file": ("Secret",),
               "app-config": ("ConfigMap", "Secret")}
_RELATION_READS = {
    "hosted-cluster": ("HostedCluster", "HostedControlPlane"), "management-proxy": ("Proxy",),
    "cluster-values": ("Secret", "ConfigMap", "HelmRelease", "App", "KubeadmControlPlane",
                       "KubeadmControlPlaneTemplate", "Cluster", "VCDCluster"),
    "managed-cluster": ("Proxy", "Deployment", "DaemonSet", "StatefulSet", "ConfigMap", "Secret"),
    "installation": ("Secret", "ConfigMap", "Proxy", "ClusterPolicy", "Policy", "MutatingPolicy",
                     "NamespacedMutatingPolicy"),
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


def _generated_from(ctx: Context, subject: K8sObject, params: dict[str, Any]) -> str:
    """Why ``subject`` is judged at the Secret it is generated from ('' when it is not)."""
    source = params.get("generated_from")
    if not source or subject.kind != "Secret" or subject.name == source:
        return ""
    if ctx.inventory.get("Secret", subject.namespace, source, subject.cluster) is None:
        return ""
    return f"judged at Secret {subject.namespace}/{source}, which it is generated from"


@register
class Agreement(Template):
    name = "agreement"
    analyses = PROXY_ANALYSES
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
                    "namespace": {"type": "string",
                                  "description": "secret-kubeconfig: the Secret's namespace "
                                                 "(default: the consumer's)"},
                },
            },
            "fields": {"type": "array", "minItems": 1, "items": {"enum": list(FIELDS)},
                       "description": "the fields compared (URLs without a trailing /, noProxy "
                                      "entry by entry, the CA as written)"},
            "match": {"enum": ["equal", "contains", "present", "routes"],
                      "description": "equal (default): both sides hold the same; contains: the "
                                     "consumer carries every field the reference sets (noProxy: "
                                     "every entry); present: the consumer sets the fields; "
                                     "routes (with when.proxied): the consumer's own fields send "
                                     "each destination the reference proxies through a proxy "
                                     "too (the scheme's proxy, its own noProxy, Go's reading)"},
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
            "generated_from": {
                "type": "string",
                "description": "a Secret the subject (a Secret) is generated from: while a Secret "
                               "of this name is in the subject's namespace the subject is judged "
                               "there, not itself (one finding per root cause)"},
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
                     "DeploymentConfig", "HostedCluster", "HostedControlPlane", "Secret",
                     "SystemdDropIn", "KubeadmConfig",
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
        workloads = params.get("consumers", {}).get("workloads") or {}
        if any(isinstance(w, dict) and w.get("hcp") for w in workloads.values()):
            kinds += HOSTED_KINDS  # which namespaces are a hosted control plane's
        return tuple(dict.fromkeys(kinds))

    def settle(self, ctx: Context, subjects: list[K8sObject], params: dict[str, Any]
               ) -> Settled | None:
        # check's answers that follow from indexes: the scan's reference uses no proxy, or
        # no role gives the subject a side (skipped, or nothing to compare)
        if not subjects:
            return Settled([])  # (no reference nor model is read for none)
        deferred = [s for s in subjects if _generated_from(ctx, s, params)]
        if deferred:
            settled = self.settle(ctx, [s for s in subjects if s not in deferred], params)
            if settled is not None:
                for subject in deferred:
                    settled.inapplicable[_generated_from(ctx, subject, params)] += 1
            return settled
        relation = params["reference"]["relation"]
        if (params.get("when") or {}).get("uses_proxy") and relation in _OF_SUBJECT:
            if relation not in _OF_SCAN:
                return None
            if per_rule(ctx, params, "agreement.no-proxy", _uses_no_proxy(ctx, subjects[0])):
                return Settled([], Counter({f"{label(relation)} uses no proxy": len(subjects)}))
        answers = [settled_sides(ctx, subjects, selector, bare)
                   for selector, _missing_ok, bare in per_rule(ctx, params, "agreement", _role_plan)]
        settled = Settled([])
        skipped_for: list[str] = []  # every settled subject's reasons, counted once at the end
        for subject, sides in zip(subjects, zip(*answers, strict=True), strict=True):
            if None in sides:
                settled.rest.append(subject)
                continue
            reasons = [absent.reason for skipped in sides for absent in skipped or ()]
            if reasons:
                skipped_for += reasons
            else:
                settled.passed += 1
        settled.inapplicable.update(skipped_for)
        return settled

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        source = _generated_from(ctx, subject, params)
        if source:
            yield NotApplicable(source)
            return
        relation = params["reference"]["relation"]
        case = "lower" if relation == "variable-case" else "effective"
        if (params.get("when") or {}).get("uses_proxy") and relation in _OF_SUBJECT:
            no_proxy = _uses_no_proxy(ctx, subject)
            # the management Proxy and the installation are the scan's: asked once per rule
            if per_rule(ctx, params, "agreement.no-proxy", no_proxy) if relation in _OF_SCAN \
                    else no_proxy(params):
                # nothing to agree on, whatever the consumers turn out to be
                yield NotApplicable(f"{label(relation)} uses no proxy")
                return
        for selector, missing_ok, bare in per_rule(ctx, params, "agreement", _role_plan):
            for side in consumer_sides(ctx, subject, selector, case, bare):
                if isinstance(side, (Absent, Unknown)):
                    yield _skipped(side)
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
        if isinstance(refs, (Absent, Unknown)):
            yield _skipped(refs)
            return
        chosen = yield from _applicable(side, refs, params)
        if chosen is None:
            return
        ref, extra = chosen
        values = {**side.facts, **ref.facts, "reference": ref.name or side.name, **extra}
        if side.absent:
            if not missing_ok:
                violation = Violation(field=side.place, subject=_other(side, subject),
                                      values={**values, "problem": side.absent},
                                      evidence=[*ref.evidence, *side.evidence])
                if params["consumers"].get("role") == "bootstrap-file":
                    violation.remedy = dropin_remedy(ctx, side, ref, str(params["consumers"]["path"]))
                _management_proxy_remedy(violation, subject, params)
                yield violation
            return
        if side.unknown:
            yield NotEvaluable(side.unknown)
            return
        diffs = (_lacking(side, ref, params, values) if match == "present"
                 else _unrouted(side, ref, params, values) if match == "routes"
                 else list(_differences(side, ref, params, values, missing_ok)))
        if any(isinstance(d, NotEvaluable) for d in diffs):
            yield from (d for d in diffs if isinstance(d, NotEvaluable))
            return
        bootstrap = params["consumers"].get("role") == "bootstrap-file" and match == "present"
        for violation in _grouped([d for d in diffs if isinstance(d, _Diff)], subject, side, ref):
            if bootstrap:
                violation.remedy = dropin_lines_remedy(ctx, side, ref,
                                                       str(params["consumers"]["path"]))
            _management_proxy_remedy(violation, subject, params)
            yield violation


def _management_proxy_remedy(violation: Violation, subject: K8sObject,
                             params: dict[str, Any]) -> None:
    """A control-plane workload's management proxy is fixed where HyperShift takes it from."""
    if not (params["reference"]["relation"] == "management-proxy" and params.get("match") == "present"
            and subject.kind == "Deployment"):
        return
    provider = subject.labels.get(PROVIDER_LABEL)
    if isinstance(provider, str) and provider in CLOUD_API_PROVIDERS:
        violation.remedy = NoFix(provider_proxy_fix(subject.name, subject.namespace or "",
                                                    CLOUD_API_PROVIDERS[provider]))
    elif subject.name in MANAGEMENT_PROXY_WORKLOADS:
        violation.remedy = NoFix(management_proxy_fix(subject.name, subject.namespace or ""))


# The variables of a proxy drop-in, in both spellings, as seed 003 writes them.
_DROPIN_LINES = (("HTTP_PROXY", "httpProxy"), ("http_proxy", "httpProxy"),
                 ("HTTPS_PROXY", "httpsProxy"), ("https_proxy", "httpsProxy"),
                 ("NO_PROXY", "noProxy"), ("no_proxy", "noProxy"))


# What a node's own clients (containerd, kubelet: Go) must reach direct: the drop-in a fix
# writes gets these besides the cluster values' noProxy (the cluster chart adds them too).
CLUSTER_OWN = ("service-network", "pod-network", "machine-network", "kas-service-ip", "svc",
               "cluster-domain", "localhost", "loopback")


def _dropin_values(ctx: Context, obj: K8sObject, ref: Side) -> dict[str, str]:
    """The proxy values a drop-in gets: the reference's, its noProxy completed with the
    cluster's own destinations it misses (as PRX005 judges a Go client's noProxy)."""
    values = {name: ref.value(name) for name in ("httpProxy", "httpsProxy", "noProxy")}
    if values["httpProxy"] or values["httpsProxy"]:
        adds = _missed(values["noProxy"], networks_for(ctx.inventory, obj), CLUSTER_OWN, GO)[2]
        have = split_entries(values["noProxy"])
        values["noProxy"] = ",".join([*have, *(a for a in dict.fromkeys(adds) if a not in have)])
    return values


def dropin_remedy(ctx: Context, side: Side, ref: Side, path: str) -> Remedy | NoFix:
    """A bootstrap config that writes no proxy drop-in at ``path``: the file entry added to
    its ``files`` with the reference's proxy (the cluster values), inline, in the shape seed
    003 gives. A drop-in that exists (from a Secret that is missing, or without the proxy
    variables) is the fleet's own delivery: the finding says what to change."""
    obj = side.obj
    if obj is None or not side.absent.startswith("writes no "):
        return NoFix(f"{side.name} {side.absent}: the drop-in is delivered "
                     + ("from a Secret the cluster chart renders; create that Secret (or render "
                        "it) with the proxy values" if "Secret" in side.absent else
                        "in a way hcpscan does not rewrite; write its content by hand"))
    files = BOOTSTRAP_FILES.get(obj.kind)
    if files is None:
        return NoFix(f"a {obj.kind} writes no bootstrap files")
    if not path.startswith("/etc/systemd/system/") or not path.endswith(".conf"):
        return NoFix(f"{path} is not a systemd drop-in hcpscan knows how to write")
    lines = ["[Service]"]
    values = _dropin_values(ctx, obj, ref)
    for variable, name in _DROPIN_LINES:
        value = values[name]
        if not value:
            continue
        if credentials(value):
            return NoFix(f"{ref.field_name(name)} holds a password: written inline the drop-in "
                         "would store it in plain text (PRX008); deliver the drop-in with "
                         "files[].contentFrom.secret")
        if any(c in value for c in '"\\%$') or any(c.isspace() for c in value):
            return NoFix(f"{ref.field_name(name)} = {value!r} needs systemd quoting; write the "
                         "drop-in by hand")
        lines.append(f'Environment="{variable}={value}"')
    if len(lines) == 1:
        return NoFix(f"{ref.name or 'the reference'} states no proxy value to write")
    entry = {"path": path, "permissions": "0600", "content": "\n".join(lines) + "\n"}
    return Remedy(obj, f"add {path} to {format_path(files)} of {obj.ref} with the proxy of "
                       f"{ref.name or 'the cluster values'}", (AppendItems(files, (entry,)),))


def dropin_lines_remedy(ctx: Context, side: Side, ref: Side, path: str) -> Remedy | NoFix:
    """A drop-in written inline (``content``, plain or base64) without some proxy
    variables: the missing ``Environment=`` lines (both spellings, the reference's values)
    added after its own lines, which stay as written."""
    obj = side.obj
    files = BOOTSTRAP_FILES.get(obj.kind) if obj is not None else None
    items = obj.get(files) if obj is not None and files is not None else None
    index = next((i for i, f in enumerate(items) if isinstance(f, dict)
                  and str(f.get("path", "")).strip() == path), None) if isinstance(items, list) else None
    if obj is None or files is None or not isinstance(items, list) or index is None:
        return NoFix(f"{side.name} is not written in a bootstrap config's files")
    item = items[index]
    content, encoding = item.get("content"), str(item.get("encoding") or "")
    if not isinstance(content, str) or encoding not in ("", "base64", "b64"):
        return NoFix(f"{side.name} is delivered from a Secret or in {encoding!r} encoding: add "
                     "the proxy variables where it is rendered")
    try:
        text = base64.b64decode("".join(content.split()), validate=True).decode() if encoding \
            else content
    except ValueError:
        return NoFix(f"{format_path(files + (index, 'content'))} cannot be decoded")
    if "EnvironmentFile=" in text:
        return NoFix(f"{side.name} reads an EnvironmentFile (whose values win over Environment= "
                     "lines): set the proxy variables in that file")
    have = {k: v for k, (v, _line) in parse_unit(text).environment.items()}  # kept as set
    added = []
    values = _dropin_values(ctx, obj, ref)
    for variable, name in _DROPIN_LINES:
        twin = variable.lower() if variable.isupper() else variable.upper()
        value = have.get(twin, values[name])  # one value for both spellings
        if not value or variable in have:
            continue
        if credentials(value) or any(c in value for c in '"\\%$') or \
                any(c.isspace() for c in value):
            return NoFix(f"{ref.field_name(name)} cannot be written inline into the drop-in "
                         "(a password, or characters systemd would need quoted): write it by hand")
        added.append(f'Environment="{variable}={value}"')
    if not added:
        return NoFix(f"{side.name} sets the variables in a way hcpscan does not read; fix it by hand")
    sections = [line.strip() for line in text.splitlines() if line.strip().startswith("[")]
    if not sections or sections[-1] != "[Service]":
        added.insert(0, "[Service]")  # the lines go to the end: under a [Service] header
    longer = text + ("" if not text or text.endswith("\n") else "\n") + "\n".join(added) + "\n"
    value = base64.b64encode(longer.encode()).decode() if encoding else longer
    names = ", ".join(a.split("=")[1].strip('"') for a in added if "=" in a)
    return Remedy(obj, f"add {names} to {path} in {format_path(files + (index, 'content'))} "
                       f"of {obj.ref}",
                  (SetField(files + (index, "content"), value),))


def _uses_no_proxy(ctx: Context, subject: K8sObject) -> Callable[[dict[str, Any]], bool]:
    """Whether the rule's reference for ``subject`` certainly uses no proxy (given the params)."""
    def no_proxy(params: dict[str, Any]) -> bool:
        refs = reference_sides(ctx, subject, Side(subject.ref, obj=subject), params["reference"])
        return isinstance(refs, list) and all(r.uses_proxy() is False for r in refs)
    return no_proxy


def _role_plan(params: dict[str, Any]) -> tuple[tuple[dict[str, Any], bool, bool], ...]:
    """Per role of the rule's consumers: its selector (read, never changed),
    whether a field set on one side only is ok, and whether containers that set nothing
    get a side (a side that sets nothing is left alone when only what is set is compared:
    _judge returns at once, so the model need not make one per bare container)."""
    match = params.get("match", "equal")
    plan = []
    for role in _roles(params["consumers"]):
        missing_ok = _missing_ok(params.get("missing", "fail"), role)
        plan.append(({**params["consumers"], "role": role}, missing_ok,
                     match == "present" or not missing_ok))
    return tuple(plan)


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


def _unrouted(side: Side, ref: Side, params: dict[str, Any], values: dict[str, str]
              ) -> list[_Diff]:
    """``match: routes``: the first destination the reference proxies that the consumer's own
    fields send direct -- no proxy for the destination's scheme (a client reading
    httpProxy/httpsProxy as Go's httpproxy does never falls back to the other one), or its
    own noProxy covering the destination. One finding per consumer."""
    when = params.get("when") or {}
    prefix = f"{side.label}." if side.label else ""
    for destination in side.destinations.get(when.get("proxied", ""), []):
        if not _proxied(ref, destination) or _proxied(side, destination):
            continue
        https = destination.lower().startswith("https://")
        name, other = ("httpsProxy", "httpProxy") if https else ("httpProxy", "httpsProxy")
        if not any(_is_set(side.settings.get(f)) for f in (name, other)):
            problem = (f"has an empty {prefix}{side.spell(name)}" if name in side.settings
                       else f"has no {side.label}" if side.label else f"has no {name} or {other}")
            return [_Diff(name, problem, side.obj, side.place,
                          {**values, "destination": destination, "missing": prefix + name,
                           "fields": name}, [*side.evidence], lacking=True)]
        if not _is_set(side.settings.get(name)):
            problem = (f"has {prefix}{side.spell(other)} but no {prefix}{side.spell(name)}, the "
                       f"only proxy a{'n https' if https else ' http'}:// source goes through")
            return [_Diff(name, problem, side.obj, side.place,
                          {**values, "destination": destination, "missing": prefix + name,
                           "fields": name}, [*side.evidence], lacking=True)]
        said = f"{prefix}{side.spell('noProxy')} {_no_proxy(side)!r}"
        return [_Diff("noProxy", f"sends {destination} direct ({said} covers it)", side.obj,
                      side.place, {**values, "destination": destination, "fields": "noProxy"},
                      [*side.evidence, f"{destination} goes direct by {side.name}'s own {said} "
                                       "(Go rules)"])]
    return []


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
        unshown = [e for e in surplus if ref.open_no_proxy and (
            not ref.open_only_networks or ("/" in e and network(e) is not None))]
        surplus = [e for e in surplus if e not in unshown]
        if not lacking and not surplus:
            return None
        lines = ([f"{mine} lacks {', '.join(lacking)}"] if lacking else []) + (
            [f"{mine} has in addition {', '.join(surplus)}"] if surplus else []) + (
            [f"{', '.join(unshown)} may be in {theirs}: {ref.open_no_proxy}"] if unshown else [])
        if ref.same_consumer:
            return f"{ref.spell(name)} and {mine} differ", lines
        return "; ".join(lines), lines
    if name == CA_FIELD:
        return _ca_disagreement(mine, theirs, hv, wv)
    if (same_url(hv, wv) if name in URL_FIELDS else hv == wv):
        return None
    if ref.same_consumer:
        return f"{ref.spell(name)} and {mine} differ", []
    return f"{mine}={hv}, but {theirs} is {wv}", []


CA_FIELD = "certificate-authority-data"


def _ca_disagreement(mine: str, theirs: str, hv: str, wv: str) -> tuple[str, list[str]] | None:
    """Two CA fields differ as OCM's IsHubKubeconfigValid compares them: the decoded bytes
    (reflect.DeepEqual), so the same certificates in another order or with other line ends
    differ too. The difference is said as the certificates one side lacks or adds, or as
    what else differs; fields that cannot both be decoded are compared as written."""
    if hv == wv:
        return None
    ha, wa = go_bytes(hv or ""), go_bytes(wv or "")
    if isinstance(ha, str) or isinstance(wa, str):
        return f"{mine} is not {theirs} as written, and not both can be decoded", []
    if ha == wa:
        return None
    a, b = parse_bytes_field(hv), parse_bytes_field(wv)
    if a.problems or b.problems or not a.certificates or not b.certificates:
        return f"{mine} is not {theirs} (decoded bytes), and not both can be read as certificates", []
    have = {c.sha256 for c in a.certificates}
    want = {c.sha256 for c in b.certificates}
    if have == want:
        how = [w for w, differs in (
            ("order", [c.sha256 for c in a.certificates] != [c.sha256 for c in b.certificates]),
            ("line ends", (b"\r\n" in ha) != (b"\r\n" in wa))) if differs] or ["text around them"]
        line = (f"{mine} holds the same certificates as {theirs}, other bytes: "
                f"{'/'.join(how)} (OCM compares the bytes and bootstraps again)")
        return line, [line]
    lacking = list(dict.fromkeys(describe(c) for c in b.certificates if c.sha256 not in have))
    extra = list(dict.fromkeys(describe(c) for c in a.certificates if c.sha256 not in want))
    lines = ([f"{mine} lacks {', '.join(lacking)}"] if lacking else []) + (
        [f"{mine} has in addition {', '.join(extra)}"] if extra else [])
    return "; ".join(lines), lines


def _ca_listing(value: str | None) -> str:
    """What a CA field holds, said as its certificates (never the base64 blob)."""
    bundle = parse_bytes_field(value)
    if bundle.problems or not bundle.certificates:
        return "no readable certificate (" + "; ".join(p.message for p in bundle.problems) + ")"
    count = len(bundle.certificates)
    return (f"{count} certificate{'s' if count > 1 else ''}: "
            + ", ".join(describe(c) for c in bundle.certificates))


def _evidence(side: Side, ref: Side, name: str, have: Setting | None,
              want: Setting | None) -> list[str]:
    if name == CA_FIELD and not ref.same_consumer:
        lines = [f"{ref.field_name(name)} holds {_ca_listing(ref.value(name))}"]
        if have is not None:
            lines.append(f"{have.name} at {have.source} holds {_ca_listing(have.value)}")
        return lines
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
