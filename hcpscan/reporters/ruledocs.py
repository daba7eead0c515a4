"""A rule's documentation as Markdown and as plain text, in ruff's section order.

The same sections are used for SARIF ``help`` (shown by GitHub on the alert
page) and are meant for ``hcpscan rules show``: what the rule does, why that
is bad, YAML that fails and YAML that passes, how to fix it, known problems
and references. Empty sections are left out.
"""

from __future__ import annotations

from hcpscan.findings.model import RuleInfo

WHAT = "What it does"
WHY = "Why is this bad?"
FAILING = "Failing example"
PASSING = "Passing example"
FIX = "How to fix"
KNOWN = "Known problems"
REFERENCES = "References"


def sections(rule: RuleInfo) -> list[tuple[str, str, bool]]:
    """(heading, body, body_is_yaml) for each non-empty section."""
    docs = rule.docs
    refs = "\n".join(f"- {ref}" for ref in docs.references)
    candidates = [
        (WHAT, docs.what or rule.title, False),
        (WHY, docs.why, False),
        (FAILING, docs.failing, True),
        (PASSING, docs.passing, True),
        (FIX, docs.fix, False),
        (KNOWN, docs.known_problems, False),
        (REFERENCES, refs, False),
    ]
    return [(head, body.strip("\n"), is_yaml) for head, body, is_yaml in candidates
            if body.strip()]


def _fence(body: str) -> str:
    """A code fence longer than any backtick run inside the YAML."""
    longest, run = 0, 0
    for char in body:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def markdown(rule: RuleInfo) -> str:
    out: list[str] = []
    for head, body, is_yaml in sections(rule):
        out.append(f"## {head}\n")
        if is_yaml:
            fence = _fence(body)
            out.append(f"{fence}yaml\n{body}\n{fence}\n")
        else:
            out.append(f"{body}\n")
    return "\n".join(out).rstrip("\n") + "\n"


def page(rule: RuleInfo) -> str:
    """The whole page of a rule: its title, severity, category and tags, then the sections
    (``hcpscan rules show`` and ``docs/rules/<ID>.md``)."""
    tags = f" · tags: {', '.join(rule.tags)}" if rule.tags else ""
    return (f"# {rule.id}: {rule.title}\n\nSeverity: **{rule.severity.value}** · category: "
            f"`{rule.category}`{tags}\n\n{markdown(rule)}")


def text(rule: RuleInfo) -> str:
    out: list[str] = []
    for head, body, is_yaml in sections(rule):
        if is_yaml:
            body = "\n".join(f"    {line}" if line else "" for line in body.splitlines())
        out.append(f"{head}\n{body}\n")
    return "\n".join(out).rstrip("\n") + "\n"
