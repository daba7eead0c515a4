"""Apply the fixes of a scan to files: every remedy planned on the text earlier fixes left.

Planning each remedy again on the current text (rather than splicing the
offsets each fix computed alone) lets two fixes of one file combine: two
findings that each add entries to one noProxy end as one value with both.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from hcpscan.findings.fix import Fix, NoFix, Remedy
from hcpscan.findings.model import Finding
from hcpscan.fixes.diffs import unified
from hcpscan.fixes.plan import FileTexts, plan


@dataclass(slots=True)
class Outcome:
    """What ``fix_all`` did: files changed, and the findings it could not change."""

    texts: FileTexts
    applied: list[tuple[Finding, Fix]] = field(default_factory=list)
    by_hand: list[tuple[Finding, Fix]] = field(default_factory=list)  # manual / commands
    none: list[tuple[Finding, str]] = field(default_factory=list)  # no automatic change: why

    @property
    def changed(self) -> dict[str, str]:
        """File -> new text as the file is to hold it (its BOM and line ends kept), for
        files whose text changed."""
        return {p: self.texts.written(p, t) for p, t in self.texts.current.items()
                if t != self.texts.original[p]}

    def diff(self, relative_to: str = ".") -> str:
        out = []
        changed = self.changed
        for path in sorted(changed):
            shown = os.path.relpath(path, relative_to).replace(os.sep, "/")
            original = self.texts.written(path, self.texts.original[path])
            out.append(unified(original.splitlines(keepends=True),
                               changed[path].splitlines(keepends=True),
                               f"a/{shown}", f"b/{shown}"))
        return "".join(out)


def _place_order(finding: Finding) -> tuple[str, int, int]:
    remedy = finding.remedy
    if not isinstance(remedy, Remedy):
        return ("", 0, 0)
    source = remedy.target.source
    return (source.file, -source.doc_index, -source.line)


def _with_folded(findings: Iterable[Finding]) -> list[Finding]:
    """Every finding, and the findings folded into it whose remedy changes another object
    (one noProxy string a chart renders into ten workloads is one finding, but ten edits)."""
    out: list[Finding] = []
    for finding in findings:
        out.append(finding)
        targets = {id(finding.remedy.target)} if isinstance(finding.remedy, Remedy) else set()
        for other in finding.folded:
            if isinstance(other.remedy, Remedy) and id(other.remedy.target) not in targets \
                    and other.status is finding.status:
                targets.add(id(other.remedy.target))
                out.append(other)
    return out


def fix_all(findings: Iterable[Finding], no_fix_why: dict[str, str]) -> Outcome:
    """Plan every failing finding's remedy in turn on the files' current text."""
    outcome = Outcome(FileTexts())
    # Bottom of each file first: an edit never moves the lines of an object still to fix.
    findings = sorted(_with_folded(findings), key=_place_order)
    for finding in findings:
        remedy = finding.remedy
        if isinstance(remedy, Remedy):
            done = plan(remedy, outcome.texts)
            (outcome.applied if done.changes else outcome.by_hand).append((finding, done))
            if not done.changes and not done.manual and not done.commands:
                outcome.by_hand.pop()  # already holds the change (an earlier fix made it)
        elif isinstance(remedy, NoFix):
            outcome.none.append((finding, remedy.why))
        else:
            outcome.none.append((finding, no_fix_why.get(finding.rule_id, "")
                                 or "the rule offers no automatic fix"))
    return outcome
