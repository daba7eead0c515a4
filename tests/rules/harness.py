"""Scan fixtures through the real pipeline (loader -> inventory -> rules) without the CLI."""

from __future__ import annotations

import re
from pathlib import Path

from hcpscan.findings.model import ScanReport
from hcpscan.inventory import Inventory
from hcpscan.rules.config import ScanConfig
from hcpscan.rules.suppress import Suppressor
from hcpscan.scan import RuleSelection, load_rules, resource_needs, run_scan
from hcpscan.sources.loader import load_paths

EXPECT = re.compile(r"#\s*expect:\s*(?P<ids>[A-Z0-9, ]+)")


def scan(paths: list[Path], select: list[str], config: ScanConfig | None = None,
         suppressor: Suppressor | None = None) -> ScanReport:
    config = config or ScanConfig()
    rules = load_rules(config, RuleSelection(select=select))
    # Read what the selected rules need and no more, as the CLI does: a rule run alone
    # must see every kind its template reads.
    result = load_paths([str(p) for p in paths], needs=resource_needs(rules))
    inventory = Inventory(result.objects, result.diagnostics, result.skipped)
    return run_scan(inventory, rules, config, suppressor or Suppressor(config.exemptions))


def expected_markers(folder: Path, rule_id: str) -> set[tuple[str, int]]:
    """(file, line) of every `# expect: RULE` comment in a fixture folder."""
    out = set()
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix not in (".yaml", ".yml", ".json", ".conf", ""):
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            m = EXPECT.search(line)
            if m and rule_id in {i.strip() for i in m["ids"].split(",")}:
                out.add((str(path), number))
    return out
