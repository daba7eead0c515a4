"""One scan, stage by stage: rules over an inventory -> a ScanReport for the reporters.

The CLI (offline and live) calls this; it knows no terminal and no files
besides what it is handed.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner import __version__
from scanner.findings.model import ScanReport, Severity, Status
from scanner.inventory import Inventory
from scanner.rules.config import ScanConfig
from scanner.rules.context import Context
from scanner.rules.engine import evaluate, select_rules
from scanner.rules.loader import builtin_rules_dir, load_rule_dirs
from scanner.rules.model import Rule
from scanner.rules.primitives import PRIMITIVES
from scanner.rules.suppress import Suppressor
from scanner.sources.layout import plural_of
from scanner.sources.loader import ResourceNeeds

# Synthetic kinds come from these resources (or from files outside any dump layout).
_SYNTHETIC_SOURCES = {"Kubeconfig": ("secrets",), "IgnitionConfig": ("secrets",),
                      "SystemdDropIn": ("secrets",)}


@dataclass(slots=True)
class RuleSelection:
    rule_dirs: list[Path] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)


def load_rules(config: ScanConfig, selection: RuleSelection) -> list[Rule]:
    dirs = [builtin_rules_dir(), *config.rule_dirs, *selection.rule_dirs]
    rules = load_rule_dirs(dirs)
    return select_rules(rules, selection.select or config.select,
                        [*config.ignore, *selection.ignore], config.severity)


def kinds_needed(rules: list[Rule]) -> set[str]:
    kinds: set[str] = {"Namespace"}
    for rule in rules:
        kinds.update(rule.applies_to.kinds)
        kinds.update(PRIMITIVES[rule.primitive].reads)
    return kinds


def resource_needs(rules: list[Rule]) -> ResourceNeeds:
    plurals = {"namespaces"}
    for kind in kinds_needed(rules):
        plurals.update(_SYNTHETIC_SOURCES.get(kind, (plural_of(kind),)))
    for rule in rules:
        plurals.update(rule.needs)
    return ResourceNeeds(frozenset(plurals))


def run_scan(inventory: Inventory, rules: list[Rule], config: ScanConfig,
             suppressor: Suppressor, metadata: dict[str, Any] | None = None) -> ScanReport:
    started = time.perf_counter()
    ctx = Context(inventory, config)
    findings, results, diagnostics = evaluate(rules, ctx, suppressor)
    findings.sort(key=lambda f: (-f.severity.rank, f.rule_id, str(f.object), f.field))
    meta = dict(metadata or {})
    meta.setdefault("clusters", inventory.clusters)
    meta["rules_seconds"] = round(time.perf_counter() - started, 3)
    return ScanReport(
        tool_version=__version__,
        rules=[r.info for r in rules],
        results=results,
        findings=findings,
        diagnostics=[d.to_json() for d in [*inventory.diagnostics, *diagnostics]],
        inventory_counts=dict(sorted(Counter(o.kind for o in inventory.objects).items())),
        metadata=meta,
    )


def exit_status(report: ScanReport, fail_on: Severity, fail_on_incomplete: bool) -> str:
    """'findings', 'incomplete' or 'ok' (the CLI maps these to exit codes)."""
    if any(f.severity.at_least(fail_on) for f in report.failing):
        return "findings"
    if fail_on_incomplete and any(r.status is Status.NOT_EVALUABLE for r in report.results):
        return "incomplete"
    return "ok"
