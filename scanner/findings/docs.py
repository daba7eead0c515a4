"""A rule's documentation as Markdown (ruff-style sections), for `rules show` and SARIF help."""

from __future__ import annotations

from scanner.findings.model import RuleInfo


def rule_markdown(info: RuleInfo) -> str:
    d = info.docs
    parts = [f"# {info.id}: {info.title}", "",
             f"Severity: **{info.severity.value}** · category: `{info.category}`"
             + (f" · tags: {', '.join(info.tags)}" if info.tags else ""), ""]
    for heading, body in (("What it does", d.what), ("Why is this bad?", d.why)):
        if body:
            parts += [f"## {heading}", "", body.strip(), ""]
    if d.failing:
        parts += ["## Example that fails", "", "```yaml", d.failing.rstrip(), "```", ""]
    if d.passing:
        parts += ["## Use instead", "", "```yaml", d.passing.rstrip(), "```", ""]
    if d.fix:
        parts += ["## How to fix", "", d.fix.strip(), ""]
    if d.known_problems:
        parts += ["## Known problems", "", d.known_problems.strip(), ""]
    if d.references:
        parts += ["## References", ""] + [f"- {ref}" for ref in d.references] + [""]
    return "\n".join(parts)
