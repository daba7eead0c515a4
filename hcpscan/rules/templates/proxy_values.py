"""Template ``proxy_values``: general conditions on each proxy value, wherever it is written.

The values are those of the proxy consumers the rule selects (by role and
variable: the proxy model, ``hcpscan.analysis.proxy``, says where each is
written and which program reads it), and of plain fields the rule names per
kind (ConfigMap data, container arguments: values the model does not read as
proxy settings). Each value is judged by the conditions the rule lists:

* ``no-credentials``: no ``user:password@`` (with or without a scheme) in a value
  that is not stored in a Secret;
* ``valid``: a proxy URL parses with a scheme its field accepts, a host and a sane
  port; every NO_PROXY entry parses; no template leftover (``<no value>``, ``{{``);
* ``portable``: every NO_PROXY entry is decided as Go decides it by every client
  that may read the value (values only Go programs read are not judged);
* ``reachable``: a workload's pods may open a connection to the proxy its URL names,
  under egress NetworkPolicy and EgressFirewall (the proxy model and the reachability
  graph answer together: ``hcpscan.analysis.proxy_egress``).

A value read by several consumers (a ConfigMap key behind ``envFrom``) is judged
where it is written, so the engine makes one finding of it whose evidence names
every consumer.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from hcpscan.analysis.proxy import ConsumerProxy, Setting
from hcpscan.analysis.proxy.containers import POD_SPEC_PATHS
from hcpscan.analysis.proxy.noproxy import RuntimeRef, bypasses
from hcpscan.analysis.proxy.portability import divergence
from hcpscan.analysis.proxy.settings import CONTAINER, OLM_SUBSCRIPTION, ROLES
from hcpscan.analysis.proxy.validity import (
    accepted_schemes,
    credentials,
    no_proxy_problems,
    openshift_refusals,
    openshift_url_refusal,
    openshift_validated,
    proxy_url_problems,
    scheme_optional,
)
from hcpscan.analysis.proxy.workloads import controlled_pods
from hcpscan.analysis.proxy_egress import (
    BLOCKED,
    UNKNOWN,
    ProxyEndpoint,
    proxy_dns,
    proxy_egress,
    proxy_endpoint,
)
from hcpscan.analysis.reachability.allow import EGRESS, allowing_policy, ip_peers
from hcpscan.analysis.reachability.endpoints import WORKLOAD_KINDS, Workload
from hcpscan.analysis.reachability.scan_graph import GRAPH_READS, REACHABILITY
from hcpscan.core.redact import mask_credentials
from hcpscan.core.userinfo import split_outside_credentials
from hcpscan.findings.fix import AddDocument, NoFix, Remedy, ReplaceKey
from hcpscan.inventory.fieldpath import Step, format_path
from hcpscan.inventory.jsonpaths import compile_query
from hcpscan.inventory.kept import path_kept
from hcpscan.inventory.objects import K8sObject, namespace_of
from hcpscan.model.clusters import OPENSHIFT_NETWORK_READS, networks_for
from hcpscan.model.computed_noproxy import status_copy
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.openshift_noproxy import Refusal
from hcpscan.model.ports import ConnectionSet
from hcpscan.model.readers import GO_READ_OBJECTS, api_server_only, go_reader
from hcpscan.rules.context import PROXY_ANALYSES, Context
from hcpscan.rules.templates import register
from hcpscan.rules.templates.base import (
    NotApplicable,
    NotEvaluable,
    Outcome,
    Settled,
    Template,
    Violation,
    conditions_param,
    roles_param,
)
from hcpscan.rules.templates.noproxy_coverage import (
    controlled_pod,
    field_in,
    per_rule,
    root_of,
    same_value_root,
    value_lead,
    value_readers,
)

CONDITIONS = ("no-credentials", "valid", "portable", "reachable")
URL, NO_PROXY, TEXT = "url", "no_proxy", "text"
_NOT_PROXY_VALUES = frozenset({"server", "--serving-port"})  # read with proxies, but no proxy

_FIELD = {
    "oneOf": [
        {"type": "string", "description": "JSONPath; every string below it is a text value"},
        {"type": "object", "additionalProperties": False, "required": ["path"],
         "properties": {
             "path": {"type": "string", "description": "JSONPath to the value(s)"},
             "type": {"enum": [URL, NO_PROXY, TEXT], "description": "what the value is "
                      "(default text: only no-credentials judges it)"},
             "schemes": {"type": "array", "minItems": 1, "items": {"type": "string"},
                         "description": "schemes a url accepts (default http, https)"}}},
    ]}


_CONTROLLED = "a controller-owned pod: its controller is checked"
# Why a subject had nothing a condition judges.
_NOTHING = {"no-credentials": "no proxy setting or plain field in scope",
            "valid": "no proxy URL or noProxy set",
            "portable": "no noProxy that a non-Go client may read",
            "reachable": "no workload whose pods are given a proxy URL"}


@dataclass(frozen=True, slots=True)
class Value:
    """One value to judge, and where a finding about it goes."""

    text: str
    type: str
    schemes: tuple[str, ...]
    name: str  # variable or field as written
    field: str  # the field a finding points at, in ``at`` or else the subject
    at: K8sObject | None  # another object that holds the value (a ConfigMap many read)
    # Where the value is, for evidence: made only for a finding (it needs the source line,
    # and a large dump has tens of thousands of values for a few hundred findings).
    describe: Callable[[], str] = dataclasses.field(compare=False)
    in_secret: bool = False
    consumer: ConsumerProxy | None = None
    unknown: str = ""  # why the value is not known ('' when it is)
    setting: Setting | None = dataclasses.field(default=None, compare=False)  # a consumer's
    # the object whose plain field holds the value (a Deployment's args[], a ConfigMap key)
    holder: K8sObject | None = dataclasses.field(default=None, compare=False)
    # the field within a document stored in ``field`` (a kubeconfig in a Secret key)
    inner: str = ""

    @property
    def named(self) -> str:
        """The field as a finding names it: inside a stored document, its own field there
        (``clusters[0].cluster.proxy-url``), as the evidence of other kubeconfig findings."""
        return self.inner or self.field

    @property
    def shown(self) -> str:
        return self.describe()

    @property
    def who(self) -> str:
        return self.consumer.name if self.consumer is not None else self.field


def value_type(name: str) -> str:
    """A consumer variable's type from its name: NO_PROXY, noProxy, --no-proxy -> no_proxy."""
    return NO_PROXY if _variable(name) == "noproxy" else URL


def _variable(name: str) -> str:
    """One spelling per variable: NO_PROXY, no_proxy, noProxy, --no-proxy -> noproxy."""
    return name.lower().lstrip("-").replace("_", "").replace("-", "")


def _consumer_values(ctx: Context, subject: K8sObject, roles: frozenset[str],
                     variables: frozenset[str], conditions: list[str], params: dict[str, Any],
                     passed: list[str]) -> Iterator[Value]:
    """The consumers' values some condition judges: a known value no condition applies to
    (``applies``) is left out before its place is worked out - a fleet's containers hold
    tens of thousands of values, and PRX007 judges only the noProxy ones. Its twin
    spelling (no_proxy beside NO_PROXY, one value) is of the same type and consumer, so
    it is left out too, and the twins of a judged value are all kept. When no-credentials
    is the only condition, a known value without '@' is put in ``passed`` instead, as a
    plain field's is: it is looked at, and a credential needs '@'."""
    credentials_only = all(condition == "no-credentials" for condition in conditions)
    for c in ctx.proxy.of(subject):
        if c.kind not in roles:
            continue
        for setting in c.variables.values():
            if setting.name in _NOT_PROXY_VALUES or (variables and setting.name.upper() not in variables):
                continue
            if setting.value is not None and not any(
                    applies(condition, value_type(setting.name), c, setting.value, params)
                    for condition in conditions):
                continue
            if credentials_only and setting.value is not None and "@" not in setting.value:
                passed.append(setting.name)
                continue
            yield _from_setting(subject, c, setting)


def _from_setting(subject: K8sObject, c: ConsumerProxy, setting: Setting) -> Value:
    at, field = root_of(subject, setting)
    inner = ""
    if at is None and subject.held_in is not None and c.object is subject:
        at, field = subject.held_in  # a document stored in a key: the finding goes to the key
        inner = format_path(setting.source.steps) if setting.source.steps else ""
    elif at is None and not field and c.object is subject and setting.source.steps:
        field = format_path(setting.source.steps)
    return Value(setting.value or "", value_type(setting.name), accepted_schemes(c.kind, setting.name),
                 setting.name, field, at, lambda: f"{setting.name} = {setting.value!r} at {setting.source}",
                 in_secret=stored_in_secret(setting), consumer=c,
                 unknown="" if setting.known else f"{c.name}: {setting.name} unknown ({setting.unknown})",
                 setting=setting, inner=inner)


def stored_in_secret(setting: Setting) -> bool:
    """Whether the value is kept in a Secret: written in one (a kubeconfig or drop-in stored
    there), or taken from one (``valueFrom.secretKeyRef``, ``envFrom[].secretRef``, a
    bootstrap file's ``contentFrom.secret``) even when
    the Secret itself is not in the input or is redacted."""
    for src in (setting.source, *setting.via):
        holder = src.holder
        if holder is None:
            continue
        if holder.kind == "Secret" or tuple(src.steps[-2:]) == ("contentFrom", "secret"):
            return True  # written in a Secret, or a bootstrap file's content taken from one
        node = holder.get(src.steps) if src.steps else None
        if isinstance(node, dict) and isinstance(node.get("valueFrom"), dict):
            node = node["valueFrom"]
        if isinstance(node, dict) and any(isinstance(node.get(k), dict)
                                          for k in ("secretKeyRef", "secretRef")):
            return True
    return False


def _field_values(ctx: Context, subject: K8sObject, specs: list[Any],
                  passed: list[str]) -> Iterator[Value]:
    """The plain fields' values. A text value without '@' is put in ``passed`` instead:
    only no-credentials judges a text value, and a credential needs '@'
    (``find_credentials``), so nothing can be wrong with it. A large scan reads hundreds
    of thousands of env values and args; the values to judge are the few with '@'."""
    memos: _Memos = ctx.inventory.derived("proxy_values.field-texts", lambda _inventory: ({}, {}))
    fields, texts = read_fields(ctx, memos, subject, specs)
    for (path, kind, schemes), (clean, judged) in zip(fields, texts, strict=True):
        if clean:
            passed.append(path)
        for text, field in judged:
            yield Value(text, kind, schemes, field, field, None, _described(field, text),
                        holder=subject)


# A JSONPath's leading run of plain fields ($.spec.template.spec.containers), before its
# first step of another sort.
_LEADING_FIELDS = re.compile(r"\$((?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?=[.\[])")
_Texts = tuple[bool, tuple[tuple[str, str], ...]]
_Field = tuple[str, str, tuple[str, ...]]  # (path, type, schemes)
_Read = tuple[_Texts, ...]
# (a rule's field specs -> their plan, (specs, shared node) -> what they read there)
_Memos = tuple[dict[int, tuple[Any, tuple[list[_Field], tuple[str, ...]]]],
               dict[tuple[int, int], tuple[Any, _Read]]]


@lru_cache(maxsize=256)
def _leading_fields(path: str) -> tuple[str, ...]:
    """The fields a plain JSONPath starts with (none for any other path)."""
    lead = _LEADING_FIELDS.match(path)
    if lead is None or not compile_query(path).is_plain:
        return ()
    return tuple(lead.group(1)[1:].split("."))


def _plan(specs: list[Any]) -> tuple[list[_Field], tuple[str, ...]]:
    """A kind's field specs as (path, type, schemes), and the leading fields every one of
    them starts with (none when one is not a plain path)."""
    fields = []
    common: tuple[str, ...] | None = None
    for spec in specs:
        spec = {"path": spec} if isinstance(spec, str) else spec
        fields.append((spec["path"], spec.get("type", TEXT),
                       tuple(spec.get("schemes", ("http", "https")))))
        lead = _leading_fields(spec["path"])
        common = lead if common is None else tuple(
            a for a, _ in itertools.takewhile(lambda pair: pair[0] == pair[1], zip(common, lead)))
    return fields, common or ()


def read_fields(ctx: Context, memos: _Memos, subject: K8sObject, specs: list[Any]
                ) -> tuple[list[_Field], _Read]:
    """The field specs as (path, type, schemes), and per spec (whether the path holds a
    text value without '@', the (text, field) pairs to judge).

    Read once per pod spec: Deployments, StatefulSets and Jobs of one template share
    their pod spec (the loader shares equal specs), so the strings below
    ``$.spec.template.spec`` of a thousand Deployments are the strings below one dict.
    What a plain JSONPath matches below its leading fields depends only on the node those
    fields lead to (the walk is compositional), so a rule's specs are read once per node
    they all start from - the node itself held, so its id is not reused. Other nodes (a
    ConfigMap's data) are seldom shared: they are read per object and not kept."""
    plans, read = memos
    plan = plans.get(id(specs))
    if plan is None or plan[0] is not specs:
        plan = plans[id(specs)] = (specs, _plan(specs))
    fields, common = plan[1]
    node: Any = subject.body
    for name in common:
        if not isinstance(node, dict) or name not in node:
            common = ()  # the walk finds nothing here, or meets a value it does not model
            break
        node = node[name]
    pod_path = POD_SPEC_PATHS.get(subject.kind)
    if not common or pod_path is None or common[:len(pod_path)] != pod_path:
        return fields, _read(ctx, subject, fields)
    key = (id(specs), id(node))
    found = read.get(key)
    if found is None or found[0] is not node:
        found = read[key] = (node, _read(ctx, subject, fields))
    return fields, found[1]


def _read(ctx: Context, subject: K8sObject, fields: list[_Field]) -> _Read:
    return tuple(_texts(ctx.inventory.jsonpath(subject, path), kind) for path, kind, _ in fields)


def _texts(matches: list[tuple[Any, tuple[Step, ...]]], kind: str) -> _Texts:
    clean = False
    judged: list[tuple[str, str]] = []
    for value, steps in matches:
        if value is None:
            continue
        if kind == NO_PROXY and isinstance(value, list):
            value = ",".join(map(str, value))
        for text, path in _strings(value, steps) if kind == TEXT else [(str(value), steps)]:
            if kind == TEXT and "@" not in text:
                clean = True
                continue
            judged.append((text, format_path(path)))
    if not judged:
        return _CLEAN if clean else _NONE  # kept per pod spec: the common answers shared
    return clean, tuple(judged)


_CLEAN: _Texts = (True, ())
_NONE: _Texts = (False, ())


def _described(field: str, text: str) -> Callable[[], str]:
    """A plain field's value as evidence shows it (credentials masked), when asked."""
    return lambda: f"{field} = {mask_credentials(text)!r}"


def _strings(value: Any, steps: tuple[Step, ...], seen: set[int] | None = None
             ) -> Iterator[tuple[str, tuple[Step, ...]]]:
    """Every string below a matched value, with its field path. YAML aliases make one
    object appear at many paths (an alias bomb, at exponentially many): each is walked once."""
    seen = set() if seen is None else seen
    if isinstance(value, str):
        yield value, steps
        return
    if not isinstance(value, dict | list) or id(value) in seen:
        return
    seen.add(id(value))
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, sub in items:
        yield from _strings(sub, steps + ((str(key) if isinstance(value, dict) else key),), seen)


# -- the conditions ---------------------------------------------------------------------------


def no_credentials(value: Value, ctx: Context | None = None) -> Iterator[Violation]:
    if value.in_secret:
        return  # a Secret is where credentials belong
    for cred in credentials(value.text):
        masked = cred.password.strip("*") == ""
        url = cred.masked(value.text)
        violation = _violation(value, "no-credentials", f"stores credentials in plain text: {url}",
                               [f"{value.field} holds {url}" + (" (password masked in this dump)"
                                                                if masked else ""),
                                *_read_by(value)],
                               url=url, user=mask_credentials(cred.user))
        violation.remedy = (NoFix(f"{value.field} holds the password masked ('****'): write "
                                  "the real URL into a Secret by hand and reference it")
                            if masked else _to_secret(value, ctx))
        yield violation


# Consumers whose API takes the proxy URL itself, with no way to name a Secret.
_URL_ONLY = {
    "Proxy": "a cluster Proxy's spec takes the URL itself (no Secret reference); OpenShift "
             "copies it into every node's and operator's environment",
    "HostedCluster": "spec.configuration.proxy takes the URL itself (no Secret reference); "
                     "HyperShift renders it into the hosted cluster's Proxy and the nodes' "
                     "ignition",
    "AddOnDeploymentConfig": "an AddOnDeploymentConfig's proxyConfig takes the URL itself (no "
                             "Secret reference)",
    "KlusterletConfig": "a KlusterletConfig's hubKubeAPIServerConfig.proxyURL takes the URL "
                        "itself (no Secret reference)",
    "KlusterletAddonConfig": "a KlusterletAddonConfig's proxyConfig takes the URL itself (no "
                             "Secret reference)",
    "install-config": "install-config's proxy takes the URL itself; the installer reads no "
                      "Secret for it",
    "machineconfig-file": "a MachineConfig file's contents are written inline (Ignition has no "
                          "Secret source for them)",
}
_OWN_SECRET = ": use a proxy that authenticates without a password in the URL (by source " \
              "address), or keep the manifest itself in a sealed or external secret"
# Consumers whose text can come from a Secret, and the field that names it.
_TEXT_FROM_SECRET = {
    "kubeadm-file": "the file's files[].contentFrom.secret (the whole drop-in in a Secret)",
    "chart-values": "the release's valuesFrom with kind Secret (the proxy values in a Secret)",
    "kubeconfig": "a Secret holding the whole kubeconfig",
}
_SECRET_NAME = re.compile(r"[^a-z0-9-]+")


_ARGS = re.compile(r"(?:^|\.)(?:command|args)\[\d+\]$")
_ENV_VALUE = re.compile(r"(?:^|\.)env\[\d+\]\.value$")


def _plain_field_fix(value: Value) -> str:
    """Why a credential in a plain field (no consumer hcpscan models reads it) is moved by
    a person, worded by the object and field that hold it."""
    holder = value.holder
    where = f"{value.field} of {holder.ref}" if holder is not None else value.field
    if holder is not None and holder.kind == "ConfigMap":
        return (f"{where} is a ConfigMap key: its readers (envFrom, configMapKeyRef, a "
                "mounted file) are not all known, so splitting it is left to a person: move "
                "the key to a Secret and point its readers there")
    if _ARGS.search(value.field):
        return (f"{where} is a container's command line, which cannot name a Secret: put the "
                "URL in a Secret, give the container an env variable from it "
                "(valueFrom.secretKeyRef) and write $(THAT_VARIABLE) in the argument "
                "(Kubernetes expands it), or have the program read the variable itself")
    if _ENV_VALUE.search(value.field):
        return (f"{where} is an env value that holds the URL inside other text (JSON or a "
                "config line); an env value is taken from a Secret whole, not in part: put the "
                "whole value in a Secret key and change the entry to valueFrom.secretKeyRef")
    return (f"{where} is a plain field with no Secret reference hcpscan knows: move the "
            "credential to a Secret and point the field's reader there by hand")


def _to_secret(value: Value, ctx: Context | None = None) -> Remedy | NoFix:
    """A container's ``env[].value`` holding a proxy URL with a password: the URL moved to a
    new Secret beside the workload (``stringData``: the file ``hcpscan fix`` writes holds
    it; reports mask it) and every spelling of the variable in that container holding the
    same URL changed to ``valueFrom.secretKeyRef`` of it."""
    c = value.consumer
    if c is None:
        return NoFix(_plain_field_fix(value))
    if c.kind not in (CONTAINER, OLM_SUBSCRIPTION):  # (OLM copies a Subscription's env entries)
        why = _URL_ONLY.get(c.kind)
        if why:
            return NoFix(why + _OWN_SECRET)
        delivery = _TEXT_FROM_SECRET.get(c.kind)
        if delivery:
            return NoFix(f"{c.name} reads the URL inside text written in {value.field}; moving "
                         f"that text means {delivery}, which hcpscan does not write for you")
        return NoFix(f"{c.name} reads the URL from {value.field}, which has no Secret "
                     "reference hcpscan knows" + _OWN_SECRET)
    setting = c.variables.get(value.name)
    holder = setting.source.holder if setting is not None else None
    steps = tuple(setting.source.steps) if setting is not None else ()
    if holder is not c.object or holder.origin is not None or len(steps) < 3 \
            or steps[-3:-1] != ("env", steps[-2]) or steps[-1] != "value" \
            or not isinstance(steps[-2], int):
        where = holder.ref if holder is not None else value.field
        return NoFix(f"the URL is written in {where} ({value.field}), which {c.name} reads "
                     "through envFrom/valueFrom (and others may too): move that key to a Secret "
                     "and change configMapRef/configMapKeyRef to secretRef/secretKeyRef by hand")
    workload = c.object
    env = workload.get(steps[:-2])
    if not isinstance(env, list):
        return NoFix(f"{format_path(steps[:-2])} of {workload.ref} is not a list")
    name = _SECRET_NAME.sub("-", f"{workload.name}-{c.container or 'operator'}-"
                                 f"{value.name}".lower()).strip("-")[:253].rstrip("-")
    key = value.name
    if ctx is not None and ctx.inventory.get_namespaced("Secret", workload.namespace, name,
                                                        workload.cluster) is not None:
        return NoFix(f"a Secret {namespace_of(workload)}/{name} exists already: put the URL in it "
                     f"under key {key} and reference it with valueFrom.secretKeyRef by hand")
    ref = {"secretKeyRef": {"name": name, "key": key}}
    edits: list[Any] = [ReplaceKey(steps[:-2] + (i, "value"), "valueFrom", ref)
                        for i, entry in enumerate(env)
                        if isinstance(entry, dict) and isinstance(entry.get("name"), str)
                        and _variable(entry["name"]) == _variable(value.name)
                        and entry.get("value") == value.text]
    if not edits:
        return NoFix(f"{format_path(steps)} of {workload.ref} is not written as the value the "
                     "container gets ($(VAR) references): move it to a Secret by hand")
    secret: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret",
                              "metadata": {"name": name}, "type": "Opaque",
                              "stringData": {key: value.text}}
    if workload.namespace:
        secret["metadata"]["namespace"] = workload.namespace
    where = f"{workload.namespace}/{name}" if workload.namespace else name
    of = f"container {c.container}" if c.container else "spec.config.env"
    return Remedy(workload, f"move {value.name} of {of} to Secret {where} "
                            f"(key {key}) and read it with valueFrom.secretKeyRef",
                  (*edits, AddDocument(secret)))


# systemd expands specifiers in Environment= (sources/systemd.py): a '%' the URL needs is
# written '%%' in the drop-in, or systemd drops the assignment.
DROPIN_PERCENT = " (in a systemd drop-in each '%' is written '%%': %25 as %%25)"


def _in_dropin(consumer: str) -> bool:
    """Whether a consumer's variables are a systemd unit's (a drop-in file or its unit)."""
    return ".service.d/" in consumer or consumer.endswith(".service") or ".d/" in consumer \
        and consumer.endswith(".conf")


def valid(value: Value) -> Iterator[Violation]:
    if value.type == URL:
        bare_ok = value.consumer is not None and scheme_optional(value.consumer.kind)
        problems = proxy_url_problems(value.text, value.schemes, bare_ok)
        spaces = "" if value.consumer is None else openshift_url_refusal(value.consumer, value.text)
        problems += [spaces] if spaces else []
        if problems and value.consumer is not None and _in_dropin(value.consumer.name):
            problems = [p + DROPIN_PERCENT if "%25" in p or "percent-encode" in p else p
                        for p in problems]
        if problems:
            shown = mask_credentials(value.text.strip() or value.text)
            yield _violation(value, "valid", "; ".join(problems),
                             [f"{value.named} = {shown!r} " + p for p in problems] + _read_by(value))
    elif value.type == NO_PROXY:
        bad = no_proxy_problems(value.text)
        refused, effect = ([], "") if value.consumer is None else \
            openshift_refusals(value.consumer, value.text)
        if bad or refused:
            malformed = {raw.strip() for raw, _ in bad}
            more = [r for r in refused if r.whole or r.entry not in malformed]
            problems = [f"malformed entries {', '.join(repr(raw) for raw, _ in bad)}"] if bad else []
            if refused:
                said = _refused(more, also=bool(bad))
                problems.append(f"{said}: {effect}" if said else f"OpenShift refuses them: {effect}")
            named = dict.fromkeys([*(raw for raw, _ in bad), *(r.entry for r in more if not r.whole)])
            yield _violation(value, "valid", "; ".join(problems),
                             [f"{value.named} entry {raw!r} {why}" for raw, why in bad]
                             + [f"{value.named} {'value' if r.whole else f'entry {r.entry!r}'} {r.why}"
                                for r in more]
                             + _read_by(value),
                             entries=", ".join(repr(raw) for raw in named))


def _refused(refused: list[Refusal], also: bool) -> str:
    """What OpenShift's validator refuses, said once: the entries, then the value as a whole
    (its spaces; set with no proxy URL)."""
    entries = [r.entry for r in refused if not r.whole]
    parts = [f"{'OpenShift also refuses' if also else 'holds entries OpenShift refuses:'} "
             + ", ".join(repr(raw) for raw in entries)] if entries else []
    return "; ".join(parts + [r.why for r in refused if r.whole])


def _syntax(subject: K8sObject, c: ConsumerProxy) -> Iterator[Violation]:
    """Lines of a drop-in or environment file its reader ignores: the proxy they meant to set
    never reaches the program."""
    for source, why in c.syntax:
        field = field_in(subject, Setting("", "", source)) or source.field.partition(" (")[0]
        yield Violation(field=field, evidence=[f"{source}: {why}", f"read by {c.name}"],
                        values={"consumer": c.name, "variable": "", "field": field,
                                "condition": "valid", "problem": why, "url": "", "user": "",
                                "entries": "", "kinds": "", "endpoint": ""},
                        data={"consumer": {"object": c.object.ref, "field": field},
                              "line": source.field})


def _read_by(value: Value) -> list[str]:
    return [f"read by {value.consumer.name}: {value.shown}"] if value.consumer is not None else []


def portable(value: Value, pinned: dict[str, RuntimeRef]) -> Iterator[Violation]:
    found = [(raw, d) for raw in split_outside_credentials(value.text, ",")
             if (d := divergence(raw.strip(), pinned))]
    if found:
        kinds = " and ".join(sorted({d[0] for _, d in found}))
        entries = ", ".join(raw.strip() for raw, _ in found)
        yield _violation(value, "portable", f"holds {kinds} ({entries}) that some clients read "
                                            "differently from Go",
                         [value.shown, *(line for _, d in found for line in d[1])],
                         entries=entries, kinds=kinds)


def reachable(ctx: Context, value: Value, consumer: ConsumerProxy) -> Iterator[Outcome]:
    """The workload may open TCP to the proxy its value names (see proxy_egress); ``consumer``
    is the value's."""
    endpoint = proxy_endpoint(value.text)
    if endpoint is None:
        return  # no host or port: `valid` reports it
    obj = consumer.object
    workload = Workload.of(obj).graph_name(obj.cluster)
    graph = ctx.reachability()
    if not graph.has_workload(workload):  # e.g. a workload whose pods select nothing
        yield NotEvaluable(f"{value.who}: the reachability graph has no pods for {obj.ref}")
        return
    found = proxy_egress(graph, workload, endpoint, ctx.config.proxy_addresses)
    dns = proxy_dns(graph, ctx.inventory, workload, obj, endpoint)
    if dns is not None and found.verdict != BLOCKED:
        found = dns  # resolved first: no name, no connection
    elif dns is not None:
        found = dataclasses.replace(found, evidence=(*found.evidence, dns.reason))
    if found.verdict == BLOCKED:
        moot = _never_uses_proxy(ctx, consumer)
        if moot is not None:
            yield moot
            return
    if found.verdict == UNKNOWN:
        yield NotEvaluable(f"{value.who}: {found.reason}")
    elif found.verdict == BLOCKED:
        # at the workload, whose policies are the cause, even when the value is shared
        setting = consumer.variables.get(value.name)
        at = dataclasses.replace(value, at=None, field=field_in(obj, setting)) if setting else value
        violation = _violation(at, "reachable", f"cannot reach its proxy {endpoint}: "
                                                f"{found.reason}",
                               [value.shown, *found.evidence], endpoint=str(endpoint))
        violation.remedy = (_proxy_policy(obj, endpoint, found.missing) if found is not dns
                            else NoFix(f"let {obj.ref}'s pods ask the cluster's DNS: an egress "
                                       "NetworkPolicy rule to the DNS pods' namespace on UDP "
                                       "and TCP of the port the DNS pods listen on (5353 for "
                                       "OpenShift's openshift-dns, after the dns-default "
                                       "Service's DNAT; 53 for kube-dns), or give the proxy as "
                                       "an address; which rule to widen is the policy owner's "
                                       "choice"))
        yield violation


def _proxy_policy(workload: K8sObject, endpoint: ProxyEndpoint, missing: IPSpace | None
                  ) -> Remedy | NoFix:
    """A NetworkPolicy beside the workload that lets exactly its pods open TCP to the
    proxy's addresses on its port (the pods are isolated for egress already: BLOCKED)."""
    if missing is None:
        return NoFix(f"the proxy is named by host name {endpoint.host}, and a NetworkPolicy "
                     "names addresses: set inputs.proxy_addresses: {" + endpoint.host +
                     ": [<address>/32]} in the config and hcpscan writes the policy")
    if workload.kind == "Pod":
        selector: Any = {"matchLabels": dict(workload.labels)}
    else:
        selector = workload.get("spec.selector")
    if not isinstance(selector, dict) or not selector:
        return NoFix(f"{workload.ref} states no pod selector to write the policy for")
    namespace = namespace_of(workload)
    body = allowing_policy(f"{workload.name}-egress-to-proxy", namespace, selector,
                           EGRESS, ip_peers(missing),
                           ConnectionSet.port("TCP", endpoint.port), pods_isolated=True)
    return Remedy(workload, f"add NetworkPolicy {namespace}/{body['metadata']['name']} "
                            f"allowing {workload.ref} TCP {endpoint.port} to {missing} only",
                  (AddDocument(body),))


def _never_uses_proxy(ctx: Context, c: ConsumerProxy) -> Outcome | None:
    """An unreachable proxy that does not matter: the program only talks to the API server,
    and its NO_PROXY (as Go reads it) sends the API server's Service IP direct. Not
    evaluable when that IP is not in the input."""
    program = api_server_only(c.image)
    if not program:
        return None
    nets = networks_for(ctx.inventory, c.object)
    if nets is None or not nets.kas_ip:
        return NotEvaluable(f"{c.name}: {program} talks only to the Kubernetes API server; "
                            "whether its NO_PROXY sends the API server's Service IP direct "
                            "depends on the cluster's service network, which is not in the "
                            "input (include the Cluster, the cluster values or the Network)")
    no_proxy = (c.no_proxy.value if c.no_proxy is not None else "") or ""
    host = f"[{nets.kas_ip}]" if ":" in nets.kas_ip else nets.kas_ip
    if not bypasses("go", no_proxy, f"https://{host}:443").bypass:
        return None  # its API calls go to a proxy it cannot reach: a finding
    return NotApplicable(f"{c.name}: {program} talks only to the Kubernetes API server "
                         f"({nets.kas_ip}), which its NO_PROXY sends direct: it never uses the "
                         "proxy")


def _violation(value: Value, condition: str, problem: str, evidence: list[str],
               **extra: str) -> Violation:
    return Violation(field=value.field, subject=value.at, evidence=evidence,
                     values={"consumer": value.who, "variable": value.name, "field": value.named,
                             "condition": condition, "problem": problem, "url": "", "user": "",
                             "entries": "", "kinds": "", "endpoint": "", **extra})


def _twin_key(value: Value) -> tuple[str, str, str] | None:
    return (value.who, _variable(value.name), value.text) if value.consumer is not None else None


def _twins(values: list[Value]) -> dict[tuple[str, str, str] | None, list[str]]:
    """Per consumer, variable and value, the spellings that hold it (NO_PROXY and no_proxy)."""
    found: dict[tuple[str, str, str] | None, list[str]] = {}
    for value in values:
        names = found.setdefault(_twin_key(value), [])
        if value.consumer is not None and value.name not in names:
            names.append(value.name)
    return found


def _pinned(ctx: Context, consumer: ConsumerProxy | None) -> dict[str, RuntimeRef]:
    """The client releases to model: configured (inputs.runtime_versions), else what the
    consumer's image tag states (curlimages/curl:8.5.0), else each client's ranges."""
    pinned = dict(ctx.config.runtime_versions)
    release = consumer.client_release if consumer is not None else None
    if release is not None:
        pinned.setdefault(release.name, release)
    return pinned


def _selected(params: dict[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    """The consumer kinds and the variables (upper case) a rule's params select."""
    return (frozenset(ROLES[r] for r in params.get("consumers", ())),
            frozenset(v.upper() for v in params.get("variables", ())))


def _nothing(params: dict[str, Any]) -> str:
    """Why a subject of the rule had nothing any of its conditions judges."""
    looked = ", ".join(params.get("consumers", ())) + (
        " and plain fields" if params.get("fields") else "")
    return ("; ".join(_NOTHING[c] for c in params["conditions"])
            + (f" (this rule reads {looked})" if looked else ""))


@register
class ProxyValues(Template):
    name = "proxy_values"
    analyses = PROXY_ANALYSES | {REACHABILITY}
    description = ("each proxy value of the selected consumers (and plain fields) meets the "
                   "listed conditions: no-credentials, valid, portable, reachable")
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["conditions"],
        "properties": {
            "conditions": conditions_param(
                CONDITIONS, "no-credentials: no user:password@ outside Secrets; valid: URLs and "
                            "NO_PROXY entries parse, no template leftovers; portable: NO_PROXY "
                            "entries mean the same to every client that reads them; reachable: "
                            "a workload may open a connection to its proxy under egress policy"),
            "consumers": roles_param(
                ROLES, "the proxy consumers whose values are judged (default: none; only "
                       "fields)"),
            "variables": {"type": "array", "items": {"type": "string"},
                          "description": "judge only these variables/fields of the consumers "
                                         "(any case; default all)"},
            "fields": {"type": "object", "additionalProperties": {"type": "array", "items": _FIELD},
                       "description": "per kind, plain fields (JSONPaths) judged besides the "
                                      "consumers' values"},
            "include_go_readers": {"type": "boolean",
                                   "description": "portable: also judge values only Go programs "
                                                  "read (containerd, kubelet, OpenShift images)"},
        },
    }
    reads = ("ConfigMap", "Secret")
    message_fields = {"consumer": "the consumer (or the field when the value is a plain field)",
                      "variable": "the variable or field name", "field": "the field path",
                      "condition": "the condition the value breaks", "problem": "what is wrong",
                      "url": "no-credentials: the URL, password masked", "user": "its user name",
                      "entries": "valid/portable: the NO_PROXY entries at fault",
                      "kinds": "portable: CIDR, *. wildcard, entries separated by spaces",
                      "endpoint": "reachable: the proxy host:port the workload cannot reach"}

    def reads_whole(self, params: dict[str, Any], subjects: tuple[str, ...]) -> tuple[str, ...]:
        # a rule's own ``fields`` (per kind) are JSONPaths into its subjects: a kind is
        # read whole unless each of its paths runs through kept fields
        return tuple(kind for kind, specs in (params.get("fields") or {}).items()
                     if not all(path_kept(kind, spec if isinstance(spec, str) else spec.get("path", ""))
                                for spec in specs))

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        graph = (*GRAPH_READS, *OPENSHIFT_NETWORK_READS) \
            if "reachable" in params.get("conditions", ()) else ()
        return (*self.reads, *graph)

    def settle(self, ctx: Context, subjects: list[K8sObject], params: dict[str, Any]
               ) -> Settled | None:
        # check's first two answers: a pod its controller stands for, and an object that
        # is no consumer and has no plain field of the rule
        fields = params.get("fields", {})
        if not isinstance(fields, dict):
            return None
        controlled = controlled_pods(ctx.inventory)
        own = [s for s in subjects if id(s) not in controlled]
        settled = Settled([])
        if len(own) < len(subjects):
            settled.inapplicable[_CONTROLLED] = len(subjects) - len(own)
        if not own:
            return settled
        read = {kind for kind, specs in fields.items() if specs}
        plain = [s for s in own if s.kind not in read]  # (the proxy model read only for these)
        consumers = {id(o) for o in ctx.proxy.consuming(plain)} if plain else set()
        settled.rest = [s for s in own if s.kind in read or id(s) in consumers]
        if len(settled.rest) < len(own):
            settled.inapplicable[per_rule(ctx, params, "proxy_values.nothing", _nothing)] += \
                len(own) - len(settled.rest)
        return settled

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        if controlled_pod(subject, ctx.inventory):
            yield NotApplicable(_CONTROLLED)
            return
        conditions = params["conditions"]
        specs = params.get("fields", {}).get(subject.kind, ())
        if not specs and not ctx.proxy.of(subject):  # most objects of a scan: nothing to judge
            yield NotApplicable(per_rule(ctx, params, "proxy_values.nothing", _nothing))
            return
        roles, variables = per_rule(ctx, params, "proxy_values", _selected)
        passed: list[str] = []  # paths holding a plain text value no condition can fault
        values = [*(_consumer_values(ctx, subject, roles, variables, conditions, params, passed)
                    if roles else ()),
                  *(_field_values(ctx, subject, specs, passed) if specs else ())]
        seen: set[tuple[str, ...]] = set()
        twins = _twins(values)
        judged = bool(passed) and "no-credentials" in conditions  # they were looked at
        for value in values:
            for condition in conditions:
                if value.unknown and not (condition == "no-credentials" and value.in_secret):
                    if condition != "no-credentials":  # a value not in the input is in no field of it
                        yield NotEvaluable(value.unknown)
                    continue
                if not self._applies(condition, value, params):
                    continue
                judged = True
                # NO_PROXY and no_proxy (HTTPS_PROXY and https_proxy) with one value in one
                # consumer are one problem; a field that is both a consumer's value and a
                # plain field, or a ConfigMap key many consumers read, is judged once
                # (several values written in one field - chart values in a ConfigMap key -
                # are each judged)
                keys: set[tuple[str, ...]] = {
                    (condition, str(id(value.at or subject)), value.field, value.text)}
                if value.consumer is not None:
                    # reach and portability are the value's, whichever variable holds it
                    keys.add((condition, value.who, value.text) if condition in ("portable", "reachable")
                             else (condition, value.who, _variable(value.name), value.text))
                repeat = bool(keys & seen)
                seen |= keys  # a twin's field too: it is not judged again as a plain field
                if repeat:
                    continue
                for outcome in self._judge(ctx, condition, value):
                    if isinstance(outcome, Violation) and condition in ("valid", "portable") \
                            and value.text.strip() and outcome.subject is None \
                            and value.consumer is not None and value.consumer.kind == CONTAINER:
                        own_field = outcome.field
                        outcome.subject, outcome.field = same_value_root(
                            ctx, params, (condition, value.text, str(outcome.values["problem"])),
                            subject, outcome.subject, outcome.field)
                        if outcome.subject is not None:
                            outcome.reader, outcome.reader_field = subject, own_field
                    if isinstance(outcome, Violation) and condition == "portable" \
                            and value.setting is not None and value.text.strip():
                        # one value many consumers read: said of the value, then its readers
                        outcome.lead = value_lead(value.setting, (
                            f"holds {outcome.values['kinds']} ({outcome.values['entries']}) "
                            "that some clients read differently from Go"))
                        outcome.readers = value_readers(ctx, value.setting)
                    if isinstance(outcome, Violation) and len(twins.get(_twin_key(value), ())) > 1:
                        names = " and ".join(twins[_twin_key(value)])
                        outcome.evidence.append(f"{value.who} sets {names} to this one value: "
                                                "one finding for them")
                    yield outcome
        if "valid" in conditions and roles:
            for c in ctx.proxy.of(subject):
                if c.kind in roles and c.syntax:
                    judged = True
                    yield from _syntax(subject, c)
        if not judged:
            yield NotApplicable(per_rule(ctx, params, "proxy_values.nothing", _nothing))

    @staticmethod
    def _judge(ctx: Context, condition: str, value: Value) -> Iterator[Outcome]:
        if condition == "no-credentials":
            yield from no_credentials(value, ctx)
        elif condition == "valid":
            yield from valid(value)
        elif condition == "reachable":
            if value.consumer is not None:  # _applies judges only a consumer's values
                yield from reachable(ctx, value, value.consumer)
        else:
            copied = status_copy(ctx.inventory, value.consumer.cluster, value.text) \
                if value.consumer is not None and value.consumer.kind == CONTAINER else ""
            if copied:  # the docs' "written by a user": this list is the operator's
                yield NotApplicable(f"{value.who}: {value.name} {copied}")
                return
            yield from portable(value, _pinned(ctx, value.consumer))

    @staticmethod
    def _applies(condition: str, value: Value, params: dict[str, Any]) -> bool:
        return applies(condition, value.type, value.consumer, value.text, params)


def applies(condition: str, kind: str, c: ConsumerProxy | None, text: str,
            params: dict[str, Any]) -> bool:
    """Whether ``condition`` judges a value of type ``kind`` (url, no_proxy, text) that
    ``c`` reads (None: a plain field). A Proxy's status is what the cluster computed (its
    noProxy holds the cluster's own CIDRs): only credentials are its user's doing."""
    if condition == "no-credentials":
        return True
    status = c is not None and c.part == "status"
    if condition == "reachable":
        return (kind == URL and c is not None and c.kind == CONTAINER and c.via is None
                and c.object.kind in WORKLOAD_KINDS and bool(text.strip()))
    if condition == "valid":  # (OpenShift's validators take a value of spaces as set)
        return kind != TEXT and not status and (bool(text.strip()) or bool(
            text and c is not None and openshift_validated(c)))
    return (kind == NO_PROXY and not status and bool(text) and c is not None
            and (bool(params.get("include_go_readers")) or not (
                go_reader(c.program, c.image) or c.object.kind in GO_READ_OBJECTS)))
