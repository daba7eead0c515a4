"""Every command's model building, in-process: what `inventory`, `proxy`,
`connectivity` and `scan` build from an inventory, raising on any internal error."""

from __future__ import annotations

import functools
import json

from hcpscan.analysis.proxy.effective import effective_proxies
from hcpscan.analysis.reachability.connlist import connection_list
from hcpscan.analysis.reachability.evaluation import EvaluationOptions
from hcpscan.analysis.reachability.graph import ReachabilityGraph, TargetNotFound
from hcpscan.inventory import Inventory
from hcpscan.reporters import ReportOptions, render
from hcpscan.rules.config import ScanConfig
from hcpscan.rules.model import Rule
from hcpscan.rules.suppress import Suppressor
from hcpscan.scan import RuleSelection, load_rules, run_scan

FORMATS = ("table", "json", "sarif", "junit", "markdown")


@functools.cache
def every_rule() -> tuple[Rule, ...]:
    return tuple(load_rules(ScanConfig(), RuleSelection()))


def build_every_model(inventory: Inventory, formats: tuple[str, ...] = ("json",)) -> None:
    json.dumps([o.to_json() for o in inventory.objects] + [d.to_json() for d in inventory.diagnostics])
    json.dumps([c.to_json() for c in effective_proxies(inventory, "go", include_unset=True)])
    options = EvaluationOptions()
    connection_list(inventory, options).lines()
    graph = ReachabilityGraph(inventory, None, options)
    for cluster in inventory.clusters:
        for workload in graph.workloads(cluster)[:5]:
            try:  # a name with "/" or ":" cannot be asked for: the CLI says so (exit 2)
                graph.exposed_ports(f"{cluster}:{workload.namespace}/{workload.name}[{workload.kind}]")
            except TargetNotFound:
                pass
    report = run_scan(inventory, list(every_rule()), ScanConfig(), Suppressor())
    failed = [d for d in report.diagnostics if "check failed" in d["message"]]
    assert not failed, failed
    for name in formats:
        render(name, report, ReportOptions())
