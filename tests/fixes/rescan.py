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
        """Findings after the fixes that were not there before. A finding is known by its
        key (rule, object, field); one whose rule said the very same message before is the
        same problem found at a moved place (a consumer's missing noProxy is anchored at
        its proxy URL, which PRX008's fix moves into a Secret), not a new one."""
        old = {f.key for f in self.before}
        said = {(f.rule_id, f.message) for f in self.before}
        return [f for f in self.after if f.key not in old and (f.rule_id, f.message) not in said]


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
