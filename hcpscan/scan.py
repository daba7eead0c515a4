"""One scan, stage by stage: rules over an inventory -> a ScanReport for the reporters.

The CLI (offline and live) calls this; it knows no terminal and no files
besides what it is handed.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from hcpscan import __version__, collector
from hcpscan.analysis.kyverno import POLICY_KINDS as GENERATE_READS
from hcpscan.analysis.proxy.workloads import OWNED_WORKLOADS, WORKLOAD_OWNERS
from hcpscan.analysis.reachability.scan_graph import REACHABILITY
from hcpscan.core.jobs import fork_rules_wanted, jobs
from hcpscan.findings.model import PassedOver, ScanReport, Severity, Status
from hcpscan.fixes.plan import attach_fixes
from hcpscan.inventory import Inventory
from hcpscan.inventory.kept import PRUNABLE
from hcpscan.inventory.resources import plural_of, resources_for
from hcpscan.rules.config import ScanConfig
from hcpscan.rules.context import Context
from hcpscan.rules.engine import Split, check_selectors, evaluate, forking_pays, select_rules
from hcpscan.rules.exposure import hosted_cluster_exposures
from hcpscan.rules.loader import builtin_rules_dir, load_rule_dirs
from hcpscan.rules.model import Rule
from hcpscan.rules.suppress import Suppressor
from hcpscan.rules.templates import TEMPLATES
from hcpscan.sources.loader import ResourceNeeds


class _Served(Protocol):
    @property
    def group(self) -> str: ...

    @property
    def kind(self) -> str: ...


R = TypeVar("R", bound=_Served)

@dataclass(slots=True)
class RuleSelection:
    rule_dirs: list[Path] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)


def load_rules(config: ScanConfig, selection: RuleSelection) -> list[Rule]:
    dirs = [builtin_rules_dir(), *config.rule_dirs, *selection.rule_dirs]
    rules = load_rule_dirs(dirs)
    where = f"{config.path}:" if config.path else "config"
    check_selectors(rules, config.select, f"{where} select")
    check_selectors(rules, config.ignore, f"{where} ignore")
    return select_rules(rules, selection.select or config.select,
                        [*config.ignore, *selection.ignore], config.severity)


def kinds_needed(rules: list[Rule]) -> set[str]:
    # Kyverno policies always: a rule whose kind is absent says what their generate rules
    # make of it on the cluster (engine, analysis.kyverno.generated_note)
    kinds: set[str] = {"Namespace", *GENERATE_READS}
    for rule in rules:
        kinds.update(rule.reads)
    if kinds & OWNED_WORKLOADS:  # whether their makers are in the input decides who is judged
        kinds.update(WORKLOAD_OWNERS)
    return kinds


def served_also_read(rules: list[Rule], served: Iterable[R]) -> list[R]:
    """Of the resources a live server serves (anything with ``group`` and ``kind``), those
    the rules' templates read besides the kinds they name: unknown policy CRDs, so that
    their objects are declared live as offline."""
    templates = {rule.template for rule in rules}
    return [r for r in served
            if any(TEMPLATES[t].reads_served(r.group, r.kind) for t in templates)]


def resource_needs(rules: list[Rule]) -> ResourceNeeds:
    """What loading (and live listing) reads for ``rules``: the resources of the kinds
    they read (inventory/resources.py), namespaces always."""
    plurals = set(resources_for(kinds_needed(rules)))
    for rule in rules:
        plurals.update(rule.needs)  # deprecated in a user's rule file, still read
    groups = {word for rule in rules for word in TEMPLATES[rule.template].reads_groups}
    return ResourceNeeds(frozenset(plurals), frozenset(groups), pruned_kinds(rules))


def pruned_kinds(rules: list[Rule]) -> frozenset[str]:
    """The kinds whose bodies loading may prune to ``inventory/kept.KEPT``: every one no
    rule reads whole. hcpscan's own rules say which kinds they read whole
    (``Template.reads_whole``, and a ``where`` filter reads its subjects whole); a rule of
    the user's reads every kind it reads whole."""
    builtin = os.path.realpath(builtin_rules_dir())
    whole: set[str] = set()
    for rule in rules:
        subjects = rule.applies_to.kinds
        if os.path.dirname(os.path.realpath(rule.info.source)) == builtin:
            whole.update(TEMPLATES[rule.template].reads_whole(rule.params, subjects))
            if rule.applies_to.where:
                whole.update(subjects)
            continue
        if not subjects:
            return frozenset()  # any kind
        whole.update(rule.reads)
        whole.update(kind for kind in PRUNABLE if plural_of(kind) in rule.needs)
    return frozenset(PRUNABLE - whole)


def run_scan(inventory: Inventory, rules: list[Rule], config: ScanConfig,
             suppressor: Suppressor, metadata: dict[str, Any] | None = None,
             clock: RunClock | None = None, fixes: bool = False) -> ScanReport:
    """Evaluate the rules; with a ``clock``, record the stages ``graph`` (building the
    reachability graph, which the first rule that needs it triggers), ``rules`` and
    ``findings`` (ordering them, fixes, exposures); with ``fixes``, give each failing
    finding its fix (``hcpscan.fixes``)."""
    ctx = Context(inventory, config)
    # Sparing until the analyses are dropped: the graph, the proxy index and the flow
    # results are hundreds of thousands of fresh containers at 500 hosted clusters, and a
    # full collection walks them at every burst of allocation (locating a finding's field
    # composes its YAML entry: ~10x slower with full collections running); young
    # collections still free what the rules throw away (the peak is during the rules).
    with collector.sparing():
        # an analysis no rule left reads is dropped (the flow results before the proxy
        # model is built); the graph is kept for the exposures read after the rules
        split: Split | None = None
        if forking_pays(ctx, jobs(), fork_rules_wanted()):  # HCPSCAN_FORK_RULES=1
            from hcpscan.rules.forked import evaluate_forked as split
        findings, results, diagnostics = evaluate(rules, ctx, suppressor, keep={REACHABILITY},
                                                  split=split)
        if clock is not None:
            clock.stage("rules", within={"graph": ctx.build_seconds.get(REACHABILITY, 0.0)})
        findings.sort(key=lambda f: (-f.severity.rank, f.rule_id, str(f.object), f.field))
        if fixes:
            attach_fixes([f for f in findings if f.status is Status.FAIL], [r.info for r in rules])
        exposures = hosted_cluster_exposures(ctx)
        ctx.release()  # freed here, before the collector's older generations run again
        if clock is not None:
            clock.stage("findings")  # ordered, each failing one's fix planned, the exposures
    meta = dict(metadata or {})
    meta.setdefault("clusters", inventory.clusters)
    meta.setdefault("config", config.used())
    return ScanReport(
        tool_version=__version__,
        rules=[r.info for r in rules],
        results=results,
        findings=findings,
        diagnostics=[d.to_json() for d in [*inventory.diagnostics, *diagnostics]],
        inventory_counts=dict(sorted(Counter(o.kind for o in inventory.objects).items())),
        metadata=meta,
        passed_over=[PassedOver(item["reason"], item["count"], item["example"], item.get("by", {}))
                     for item in inventory.skipped.to_json()],
        exposures=exposures,
    )


def exit_status(report: ScanReport, fail_on: Severity, fail_on_incomplete: bool) -> str:
    """'findings', 'incomplete' or 'ok' (the CLI maps these to exit codes)."""
    if any(f.severity.at_least(fail_on) for f in report.failing):
        return "findings"
    if fail_on_incomplete and any(r.status is Status.NOT_EVALUABLE for r in report.results):
        return "incomplete"
    return "ok"


class RunClock:
    """Start/finish time stamps and per-stage seconds for the report's metadata.

    With SOURCE_DATE_EPOCH set (the reproducible-builds convention), time stamps
    are that instant and durations are left out, so reports are byte-for-byte
    reproducible (reports/ is regenerated and checked that way)."""

    def __init__(self) -> None:
        epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
        self.fixed = dt.datetime.fromtimestamp(int(epoch), dt.UTC) if epoch.isdigit() else None
        self.started = self.fixed or dt.datetime.now(dt.UTC)
        self._t0 = self._last = time.perf_counter()
        self.stages: dict[str, float] = {}

    def stage(self, name: str, within: dict[str, float] | None = None) -> None:
        """Close stage ``name``; ``within`` are parts of it timed separately, which
        are recorded as stages of their own and not counted in ``name``."""
        now = time.perf_counter()
        elapsed = now - self._last
        for part, seconds in (within or {}).items():
            self.stages[part] = round(seconds, 3)
            elapsed -= seconds
        self.stages[name] = round(elapsed, 3)
        self._last = now

    def metadata(self) -> dict[str, Any]:
        finished = self.fixed or dt.datetime.now(dt.UTC)
        out: dict[str, Any] = {"started": self.started.isoformat(), "finished": finished.isoformat()}
        if self.fixed is None:
            out["duration"] = round(time.perf_counter() - self._t0, 3)
            out["stage_seconds"] = dict(self.stages)
        return out
