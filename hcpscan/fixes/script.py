"""The fixes of a live scan as a script a person reviews and runs: hcpscan never writes
to a cluster. ``fixes.sh`` holds one ``kubectl patch`` (JSON patch of the exact fields)
or ``kubectl apply`` (of a manifest written beside it) per fix, each after a comment
naming the finding; findings with no automatic change are listed with the reason."""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from pathlib import Path

from hcpscan.findings.model import Finding


def write_fix_script(root: Path, findings: Iterable[Finding], context: str) -> int:
    """Write ``root/fixes.sh`` and the manifests; the number of commands written."""
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise FileExistsError(17, "the folder is not new or empty")
    root.mkdir(parents=True, exist_ok=True)
    prefix = f"kubectl --context {shlex.quote(context)} " if context else "kubectl "
    lines = ["#!/bin/sh", "# Written by `hcpscan cluster --write-fixes`: review, then run it "
             "from this folder.", "set -eu", ""]
    count = 0
    for finding in findings:
        fix = finding.fix
        if fix is None:
            continue
        lines.append(f"# {finding.rule_id} {finding.object}: {_one_line(finding.message)}")
        if not fix.automatic or not (fix.commands or fix.manual):
            lines += [f"#   no automatic fix: {_one_line(fix.summary)}", ""]
            continue
        lines.append(f"#   fix: {_one_line(fix.summary)}")
        for name, text in fix.manifests:
            (root / name).write_text(text, encoding="utf-8")
        for command in fix.commands:
            lines.append(prefix + command.removeprefix("kubectl "))
            count += 1
        lines += [f"#   {line}" for line in fix.manual.splitlines()]
        lines.append("")
    (root / "fixes.sh").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return count


def _one_line(text: str) -> str:
    return " ".join(text.split())
