"""The re-scan proof: apply fixes to a copy of an input, scan again, compare."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from hcpscan.findings.model import Finding, Status
from hcpscan.fixes.apply import Outcome, fix_all
from tests.rules.harness import scan


@dataclass
class Rescan:
    before: list[Finding]
    after: list[Finding]
    outcome: Outcome

    @property
    def applied(self) -> set[str]:
        return {f.key for f, _ in self.outcome.applied}

    def still_failing(self) -> list[Finding]:
        return [f for f in self.after if f.key in self.applied]

    def new(self) -> list[Finding]:
        old = {f.key for f in self.before}
        return [f for f in self.after if f.key not in old]


def failing(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.status is Status.FAIL]


def fix_copy_and_rescan(source: Path, workdir: Path, rule_id: str | None = None) -> Rescan:
    """Copy ``source`` under ``workdir``, apply the fixes of ``rule_id``'s findings (all
    rules' when None) there, and scan the copy again with every rule."""
    copy = workdir / source.name
    shutil.copytree(source, copy)
    before = failing(scan([copy], []).findings)
    outcome = fix_all([f for f in before if rule_id is None or f.rule_id == rule_id], {})
    for path, text in outcome.changed.items():
        Path(path).write_text(text)
    return Rescan(before, failing(scan([copy], []).findings), outcome)
