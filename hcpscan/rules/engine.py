"""Evaluate rules over an inventory: subjects, check templates, findings, coverage.

Every rule ends in exactly one status: fail, pass, not-evaluable (with the
reason) or suppressed, so "no findings" never hides "could not check".
"""

from __future__ import annotations

import dataclasses
import difflib
import fnmatch
import re
import string
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from typing import Any

from hcpscan.analysis.kyverno import generated_note
from hcpscan.analysis.reachability.coverage import kinds_named_alike, same_name_other_group
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.core.redact import mask_credentials
from hcpscan.findings.model import (
    Finding,
    Location,
    ObjectRef,
    RuleResult,
    Severity,
    Status,
)
from hcpscan.inventory.fieldpath import format_path
from hcpscan.inventory.jsonpaths import compile_query
from hcpscan.inventory.objects import MANAGEMENT, K8sObject
from hcpscan.inventory.placeholders import Unrendered, render_command
from hcpscan.inventory.store import UnavailableKind
from hcpscan.model.hostedcluster import HOSTED_CONTROL_PLANE, STANDS_IN_FOR, judged_at
from hcpscan.model.workloads import names_match
from hcpscan.rules.context import Context
from hcpscan.rules.model import AppliesTo, Rule
from hcpscan.rules.suppress import Suppressor
from hcpscan.rules.templates import TEMPLATES, NotApplicable, NotEvaluable, Violation
from hcpscan.rules.templates.base import Outcome, Settled, Template


class SelectionError(ValueError):
    """A ``--select``/``--ignore`` (or config ``select``/``ignore``) entry that names no rule."""

    def __init__(self, selector: str, nearest: list[str], option: str, pattern: str = "") -> None:
        self.selector, self.nearest, self.option = selector, nearest, option
        near = f"; nearest: {', '.join(nearest)}" if nearest else ""
        near += f" (all ids starting so: {pattern!r})" if pattern else ""
        super().__init__(f"{option} {selector!r} names no rule, rule family or category{near}")


# "<Kind> <namespace>/<name>: why" - one object's reason, as subjects' reasons are written
_OBJECT_REASON = re.compile(r"^([A-Z][A-Za-z0-9]* [^\s:;]+): (.+)$", re.DOTALL)
NAMED = 3  # objects named when many share one reason


def joined_reasons(reasons: Iterable[str]) -> str:
    """A rule's reasons as one line: the objects that share a reason are said together, and
    past ``NAMED`` of them only so many are named, with how many there are (a must-gather
    gives one reason per EndpointSlice: hundreds, each the same words)."""
    by_why: dict[str, list[str]] = {}
    alone: list[str] = []
    for reason in sorted(reasons):
        found = _OBJECT_REASON.match(reason)
        if found is None:
            alone.append(reason)
        else:
            by_why.setdefault(found.group(2), []).append(found.group(1))
    out = list(alone)
    for why, objects in by_why.items():
        if len(objects) <= NAMED:
            out += [f"{o}: {why}" for o in objects]
        else:
            out.append(f"{len(objects)} objects ({', '.join(objects[:NAMED])} and "
                       f"{len(objects) - NAMED} more): {why}")
    return "; ".join(sorted(out))


def _family(rule_id: str) -> str:
    """``PRX`` of ``PRX008`` (``ACME`` of ``ACME-NET-001``): the letters an id starts with."""
    letters = _LEADING_LETTERS.match(rule_id)
    return letters.group(0) if letters else rule_id


_LEADING_LETTERS = re.compile(r"[A-Za-z]+")


def matches_selector(rule: Rule, selector: str) -> bool:
    """A rule id, a rule family (``HCP``: the letters of its ids), a category (``proxy``),
    or a pattern with ``*`` (``PRX01*``); case does not matter. A bare prefix such as
    ``PRX01`` is no selector: a typo must not select a range of rules."""
    wanted = selector.strip().upper()
    if "*" in wanted or "?" in wanted:
        return fnmatch.fnmatchcase(rule.id.upper(), wanted)
    return wanted in (rule.id.upper(), _family(rule.id).upper(), rule.info.category.upper())


def check_selectors(rules: list[Rule], selectors: Iterable[str], option: str) -> None:
    """Raise ``SelectionError`` for the first selector that matches none of ``rules``,
    naming the ids (families, categories) nearest to it."""
    for selector in selectors:
        if any(matches_selector(rule, selector) for rule in rules):
            continue
        names = sorted({r.id for r in rules} | {_family(r.id) for r in rules}
                       | {r.info.category for r in rules})
        upper = {n.upper(): n for n in names}
        wanted = selector.strip().upper().replace("*", "")
        starting = [n for n in names if wanted and n.upper().startswith(wanted)]
        close = [upper[n] for n in difflib.get_close_matches(wanted, list(upper), n=4, cutoff=0.6)]
        nearest = list(dict.fromkeys([*starting, *close]))[:4]
        raise SelectionError(selector, nearest, option,
                             f"{selector.strip()}*" if len(starting) > 1 else "")


def select_rules(rules: list[Rule], select: Iterable[str] = (), ignore: Iterable[str] = (),
                 severity: dict[str, str] | None = None) -> list[Rule]:
    """The rules ``select`` names (all when empty) minus those ``ignore`` names; a selector
    that names no rule raises ``SelectionError`` rather than being silently ignored."""
    select, ignore = list(select), list(ignore)
    check_selectors(rules, select, "--select")
    check_selectors(rules, ignore, "--ignore")
    severity = {key.strip().upper(): value for key, value in (severity or {}).items()}
    ids = {rule.id.upper() for rule in rules}
    for key in severity:
        if key not in ids:
            near = difflib.get_close_matches(key, sorted(ids), n=4, cutoff=0.6)
            raise SelectionError(key, near, "severity override")
    chosen = []
    for rule in rules:
        if select and not any(matches_selector(rule, s) for s in select):
            continue
        if any(matches_selector(rule, s) for s in ignore):
            continue
        override = severity.get(rule.id.upper())
        if override:
            rule = dataclasses.replace(rule, info=dataclasses.replace(rule.info,
                                                                      severity=Severity(override)))
        chosen.append(rule)
    return chosen


def subjects_of(applies: AppliesTo, ctx: Context) -> list[K8sObject]:
    objects = ctx.inventory.of_kind(*applies.kinds)
    if applies.clusters == "all" and not (applies.api_versions or applies.namespaces or applies.names
                                          or applies.labels or applies.where) \
            and not kinds_named_alike(applies.kinds):
        return objects  # scoped by kind alone: every object of the kinds (a fresh list)
    return in_scope(objects, applies)


def in_scope(objects: list[K8sObject], applies: AppliesTo) -> list[K8sObject]:
    """The objects ``applies`` scopes a rule to, each asked every condition
    (``subjects_of``'s definition)."""
    out = []
    for obj in objects:
        if applies.api_versions and obj.api_version not in applies.api_versions:
            continue
        if not applies.api_versions and same_name_other_group(obj):
            continue  # e.g. a Calico NetworkPolicy is not a subject of a NetworkPolicy rule
        if applies.clusters == "management" and obj.cluster != MANAGEMENT:
            continue
        if applies.clusters == "guest" and obj.cluster == MANAGEMENT:
            continue
        if applies.namespaces and not any(fnmatch.fnmatchcase(obj.namespace, p)
                                          for p in applies.namespaces):
            continue
        if applies.names and not names_match(obj, applies.names):
            continue
        if any(obj.labels.get(k) != v for k, v in applies.labels):
            continue
        if applies.where and not any(value for value, _ in
                                     compile_query(applies.where).matches(obj.body)):
            continue
        out.append(obj)
    return out


class _Values(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def render_message(template: str, values: dict[str, Any]) -> str:
    return string.Formatter().vformat(template, (), _Values(values))


def unknown_placeholders(template: str, values: dict[str, Any]) -> list[str]:
    """Names in ``{...}`` the values do not hold (they are printed as written)."""
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(template) if name]
    except ValueError:
        return []
    return sorted({name.split(".")[0].split("[")[0] for name in fields} - set(values))


def object_ref(obj: K8sObject) -> ObjectRef:
    uid = obj.metadata.get("uid")
    return ObjectRef(obj.cluster, obj.api_version, obj.kind, obj.namespace, obj.name,
                     uid if isinstance(uid, str) else "")


def location_of(ctx: Context, obj: K8sObject, field: str) -> Location:
    if not obj.source.file:  # live objects: a stable virtual path
        return Location(obj.source.path, 1, 1, virtual=True)
    loc = ctx.inventory.locate(obj, field)
    return Location(loc.path, loc.line, loc.column)


# What evaluating one rule gives: its findings, its result and its diagnostics.
RuleOutcome = tuple[list[Finding], RuleResult, list[Diagnostic]]

# Below this many objects the rules take a fraction of a second: a fork does not pay
# (measured: N = 100 hosted clusters, 22,000 objects, 1.7 s of rules, gain 0.4 s).
FORK_MIN_OBJECTS = 10_000

# Evaluates the rules some other way (``hcpscan.rules.forked``): their outcomes in order,
# or None to leave them to ``evaluate``.
Split = Callable[[list[Rule], Context, Suppressor, "Collection[str] | None"],
                 "list[RuleOutcome] | None"]


def forking_pays(ctx: Context, jobs: int, wanted: bool) -> bool:
    """Whether the rules over ``ctx`` are worth splitting across ``jobs`` processes when
    the user ``wanted`` it (``core.jobs.fork_rules_wanted``)."""
    return wanted and jobs > 1 and len(ctx.inventory.objects) >= FORK_MIN_OBJECTS


def evaluate(rules: list[Rule], ctx: Context, suppressor: Suppressor | None = None,
             keep: Collection[str] | None = None, split: Split | None = None
             ) -> tuple[list[Finding], list[RuleResult], list[Diagnostic]]:
    """Every rule's findings and result. With ``keep`` (the analyses read after the
    rules), an analysis is dropped as soon as no rule left may read it (the templates
    declare theirs), so the next one is built in the memory it held. With ``split``
    (``hcpscan.rules.forked.evaluate_forked``) the rules may be evaluated in two
    processes: the same findings, results and diagnostics, in the same order."""
    suppressor = suppressor or Suppressor()
    outcomes = split(rules, ctx, suppressor, keep) if split is not None else None
    if outcomes is None:
        outcomes = list(evaluate_some(rules, range(len(rules)), ctx, suppressor, keep).values())
    findings: list[Finding] = []
    results: list[RuleResult] = []
    diagnostics: list[Diagnostic] = []
    for rule_findings, result, diags in outcomes:
        findings.extend(rule_findings)
        results.append(result)
        diagnostics.extend(diags)
    diagnostics.extend(ctx.diagnostics)
    return findings, results, diagnostics


def evaluate_some(rules: list[Rule], which: Iterable[int], ctx: Context, suppressor: Suppressor,
                  keep: Collection[str] | None) -> dict[int, RuleOutcome]:
    """The outcomes of the rules at the indexes ``which`` (in order), dropping each
    analysis outside ``keep`` once no rule left among them may read it."""
    which = list(which)
    chosen = [rules[i] for i in which]
    last_reader = _last_readers(chosen)
    outcomes: dict[int, RuleOutcome] = {}
    for n, (i, rule) in enumerate(zip(which, chosen, strict=True)):
        outcomes[i] = _evaluate_rule(rule, ctx, suppressor)
        if keep is not None:
            for name in ctx.built_names():
                if name not in keep and last_reader(name) <= n:
                    ctx.drop(name)
    return outcomes


def _last_readers(rules: list[Rule]) -> Callable[[str], int]:
    """analysis name -> the index of the last rule that may read it (-1: none)."""
    last: dict[str, int] = {}
    any_reader = -1  # the last rule whose template may read any analysis
    for i, rule in enumerate(rules):
        names = TEMPLATES[rule.template].analyses
        if names is None:
            any_reader = i
            continue
        for name in names:
            last[name] = i
    return lambda name: max(last.get(name, -1), any_reader)


def _judged_here(ctx: Context, subjects: list[K8sObject], inapplicable: Counter[str]
                 ) -> list[K8sObject]:
    """``subjects`` less those judged at another object of the input (a HostedControlPlane
    whose HostedCluster is in the input: the same cluster, judged once, at its source)."""
    if not ctx.inventory.of_kind(HOSTED_CONTROL_PLANE) or \
            not any(s.kind == HOSTED_CONTROL_PLANE for s in subjects):
        return subjects
    kept = []
    for subject in subjects:
        at = judged_at(ctx.inventory, subject)
        if at is None:
            kept.append(subject)
        else:
            inapplicable[f"{subject.ref} is judged at {at.ref}, which it copies"] += 1
    return kept


def _evaluate_rule(rule: Rule, ctx: Context, suppressor: Suppressor
                   ) -> tuple[list[Finding], RuleResult, list[Diagnostic]]:
    template = TEMPLATES[rule.template]
    unreadable = _unreadable_reason(rule, ctx)
    if unreadable:
        return [], RuleResult(rule.id, Status.NOT_EVALUABLE, unreadable), []
    subjects = subjects_of(rule.applies_to, ctx)
    if not subjects:
        kinds = "/".join(rule.applies_to.kinds)
        absent = not ctx.inventory.of_kind(*rule.applies_to.kinds)
        reason = (_absent_reason(rule, ctx) if absent
                  else f"no {kinds} matches the rule's scope")
        unseen = absent and any(ctx.inventory.unavailable[k].unseen for k in rule.applies_to.kinds
                                if k in ctx.inventory.unavailable)
        # objects of the kind a Kyverno generate rule of the input makes on the cluster
        generated = generated_note(ctx.inventory, rule.applies_to.kinds) if absent else ""
        if generated:
            reason, unseen = f"{reason}; {generated}", True
        return [], RuleResult(rule.id, Status.NOT_EVALUABLE if unseen else Status.NOT_APPLICABLE,
                              reason), []
    findings: list[Finding] = []
    reasons: Counter[str] = Counter()
    inapplicable: Counter[str] = Counter()  # why subjects held nothing to check
    checked = 0
    diagnostics: list[Diagnostic] = []
    subjects = _judged_here(ctx, subjects, inapplicable)
    unrendered = {id(s): found for s in subjects if (found := ctx.inventory.unrendered_in(s))} \
        if ctx.inventory.has_unrendered else {}
    # objects with unrendered fields are never settled in bulk: each is asked of check
    settled = settle(template, ctx, [s for s in subjects if id(s) not in unrendered]
                     if unrendered else subjects, rule.params)
    if settled is not None:  # subjects the template answered in bulk, as check would
        subjects = settled.rest + [s for s in subjects if id(s) in unrendered] \
            if unrendered else settled.rest
        inapplicable.update(settled.inapplicable)
        checked += settled.passed
    unknown: dict[str, list[str]] = {}  # placeholder -> names the check does provide
    for subject in subjects:
        try:
            outcomes = list(template.check(ctx, subject, rule.params))
        except Exception as exc:  # noqa: BLE001 - one broken check must not stop the scan
            # an exception's text may quote input (Python's URL errors quote the netloc)
            reason = mask_credentials(f"check failed on {subject.ref}: {type(exc).__name__}: {exc}")
            reasons[reason] += 1
            diagnostics.append(Diagnostic(subject.source.path, subject.source.line,
                                          f"{rule.id}: {reason}", hint="please report this bug"))
            continue
        if id(subject) in unrendered:
            outcomes = _unjudged(subject, unrendered[id(subject)], outcomes)
        looked = not outcomes
        for outcome in outcomes:
            if isinstance(outcome, NotApplicable):
                inapplicable[outcome.reason] += 1
                continue
            if isinstance(outcome, NotEvaluable):
                reason = outcome.reason
                reasons[reason if reason.startswith(subject.ref) else f"{subject.ref}: {reason}"] += 1
                continue
            looked = True
            findings.append(_finding(rule, ctx, subject, outcome, suppressor, unknown))
        checked += looked
    findings = _one_per_place(findings)
    if unknown:
        names = sorted(unknown)
        diagnostics.append(Diagnostic(
            rule.info.source or rule.id, None,
            f"{rule.id}: the message uses {', '.join('{' + n + '}' for n in names)}, which check "
            f"{rule.template} does not give its findings; printed as written", severity="warning",
            hint="use one of " + ", ".join("{" + n + "}" for n in unknown[names[0]])))
    caveat = template.caveat(ctx)
    for finding in findings:
        if caveat:
            finding.evidence.append(caveat)
    failing = sum(1 for f in findings if f.status is Status.FAIL)
    suppressed = len(findings) - failing
    if failing:
        status, reason = Status.FAIL, f"{failing} finding(s)"
    elif suppressed:
        status, reason = Status.SUPPRESSED, f"{suppressed} finding(s), all suppressed"
    elif reasons:
        status, reason = Status.NOT_EVALUABLE, joined_reasons(reasons)
    elif checked:
        status, reason = Status.PASS, ""
    else:  # every subject held nothing to check: a pass would claim what was not looked at
        status, reason = Status.NOT_APPLICABLE, joined_reasons(inapplicable) or "nothing to check"
    if (failing or suppressed) and reasons:
        reason += "; also not evaluable for " + joined_reasons(reasons)
    if caveat and status in (Status.PASS, Status.FAIL, Status.SUPPRESSED):
        reason = f"{reason}; {caveat}" if reason else caveat
    return findings, RuleResult(rule.id, status, reason, failing, suppressed, checked), diagnostics


def _unjudged(subject: K8sObject, unrendered: tuple[Unrendered, ...],
              outcomes: list[Outcome]) -> list[Outcome]:
    """What a check says of an object with fields left as template variables: neither a
    pass nor a finding holds until they are rendered (a finding may rest on what the
    variable would supply); only what the check itself could not judge is kept."""
    if outcomes and all(isinstance(o, NotEvaluable) for o in outcomes):
        return outcomes
    fields = ", ".join(f"{format_path(u.path)} is {u.text}" for u in unrendered)
    return [NotEvaluable(f"{subject.ref}: {fields}, a template variable clusterctl has not "
                         f"rendered ({render_command(subject.source.path)})")]


def settle(template: Template, ctx: Context, subjects: list[K8sObject],
           params: dict[str, Any]) -> Settled | None:
    """``template.settle``: None (every subject asked of ``check``) when it fails, so a
    broken shortcut costs time, never a result; ``check`` then says what is wrong."""
    try:
        return template.settle(ctx, subjects, params)
    except Exception:  # noqa: BLE001 - asking check of each subject is always right
        return None


def _one_per_place(findings: list[Finding]) -> list[Finding]:
    """A rule's findings at one place (object and field) are one problem with one cause —
    a ConfigMap value that several workloads read, a publishing strategy that exposes two
    ports: one finding, whose evidence names every case after the first."""
    merged: dict[tuple[str, Status], Finding] = {}
    for finding in findings:
        # a suppressed reader never hides one that is not (and the other way round)
        first = merged.setdefault((finding.key, finding.status), finding)
        if first is finding:
            continue
        # a reader whose finding is already worded by the value with every reader says
        # nothing the first one does not: its sentence is not repeated as "also"
        same = finding.message == first.message
        for line in ((*(() if same else (f"also: {finding.message}",)), *finding.evidence)):
            if line not in first.evidence:
                first.evidence.append(line)
        first.folded.append(finding)
        first.readers = list(dict.fromkeys([*first.readers, *finding.readers]))
        _led_by_value(first)
    return list(merged.values())


def _led_by_value(finding: Finding) -> None:
    """A value more than one consumer reads is one root cause: its finding is worded by the
    value (the template's lead), then names every reader; ``data.readers`` lists them."""
    if finding.lead and len(finding.readers) > 1:
        finding.message = f"{finding.lead}; read by " + ", ".join(finding.readers)
        finding.data = {**finding.data, "readers": list(finding.readers)}


def _unreadable_reason(rule: Rule, ctx: Context) -> str:
    """Why the rule cannot be judged at all: a kind it checks or reads that the
    source could not list although objects of it may exist (RBAC, errors)."""
    unavailable = ctx.inventory.unavailable
    if not unavailable:
        return ""
    kinds = rule.reads
    reasons = {unavailable[k].reason for k in kinds if k in unavailable and unavailable[k].may_exist
               and not _stood_for_in_full(k, unavailable)}
    return "; ".join(sorted(reasons))


def _stood_for_in_full(kind: str, unavailable: dict[str, UnavailableKind]) -> bool:
    """Whether ``kind`` only stands in for a kind that was read in full: every
    HostedControlPlane a cluster serves is written from a HostedCluster it serves too."""
    source = STANDS_IN_FOR.get(kind)
    return source is not None and source not in unavailable


def _absent_reason(rule: Rule, ctx: Context) -> str:
    """No subject at all: say which kinds the API server does not serve, if any."""
    unavailable = ctx.inventory.unavailable
    kinds = rule.applies_to.kinds
    # a stand-in's kind absent for the same reason as the kind it stands in for says nothing more
    kinds = tuple(k for k in kinds if not (STANDS_IN_FOR.get(k) in kinds and k in unavailable
                                           and STANDS_IN_FOR[k] in unavailable))
    not_served = [unavailable[k].reason for k in kinds if k in unavailable]
    if not not_served:
        return f"kind absent: no {'/'.join(kinds)} in the input"
    rest = [k for k in kinds if k not in unavailable]
    if rest:
        not_served.append(f"kind absent: no {'/'.join(rest)} in the input")
    return "; ".join(dict.fromkeys(not_served))


def _masked(data: Any) -> Any:
    """``data`` with every string's proxy credentials masked, as messages are."""
    if isinstance(data, str):
        return mask_credentials(data)
    if isinstance(data, dict):
        return {k: _masked(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_masked(v) for v in data]
    return data


def _finding(rule: Rule, ctx: Context, subject: K8sObject, violation: Violation,
             suppressor: Suppressor, unknown: dict[str, list[str]]) -> Finding:
    obj = violation.subject or subject
    values = {"kind": obj.kind, "namespace": obj.namespace, "name": obj.name, "object": obj.ref,
              "cluster": obj.cluster, **violation.values}
    for name in unknown_placeholders(rule.message, values):
        unknown.setdefault(name, sorted(values))
    # Reports are uploaded (SARIF to code scanning) and pasted into tickets: no
    # password a template quotes may reach them.
    finding = Finding(rule_id=rule.id, severity=rule.info.severity, object=object_ref(obj),
                      field=violation.field, location=location_of(ctx, obj, violation.field),
                      message=mask_credentials(render_message(rule.message, values)),
                      evidence=[mask_credentials(e) for e in violation.evidence],
                      remedy=violation.remedy,
                      data=_masked(violation.data), facts=violation.facts,
                      lead=mask_credentials(violation.lead),
                      readers=[mask_credentials(r) for r in violation.readers
                               or ([str(violation.values["consumer"])]
                                   if violation.values.get("consumer") else [])])
    _led_by_value(finding)
    # a folded reader's problem is silenced by the reader's own suppressions, not by those of
    # the object it is reported at (an annotation on one workload is no exemption for others)
    reader = violation.reader
    suppressor.apply(finding, reader or obj, rule.info.category,
                     object_ref(reader) if reader is not None else None)
    if reader is not None and finding.status is Status.FAIL:
        probe = dataclasses.replace(finding, notes=[], status=Status.FAIL, suppression=None)
        suppressor.apply(probe, obj, rule.info.category)
        if probe.suppression is not None and probe.suppression.source != "baseline":
            # the first place is exempt, this reader is not: report it at its own place
            finding.object, finding.field = object_ref(reader), violation.reader_field
            finding.location = location_of(ctx, reader, violation.reader_field)
    return finding
