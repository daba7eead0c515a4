"""Diagnostics: what the user gave that could not be (fully) read or evaluated, and
the input passed over on purpose, counted per reason. Every stage reports with these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something the user gave that could not be (fully) read or evaluated."""

    path: str
    line: int | None
    message: str
    severity: str = "error"  # error | warning | info
    hint: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "severity": self.severity,
        }
        if self.hint:
            out["hint"] = self.hint
        return out

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        text = f"{where}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


@dataclass(slots=True)
class SkipRecord:
    """Input passed over on purpose, counted per reason so nothing vanishes silently.

    ``details`` breaks a reason down where one count hides what a reader needs
    (the resources a scan left out because no selected rule reads them)."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)
    details: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, reason: str, example: str, detail: str | None = None) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        self.examples.setdefault(reason, example)
        if detail is not None:
            by = self.details.setdefault(reason, {})
            by[detail] = by.get(detail, 0) + 1

    def to_json(self) -> list[dict[str, Any]]:
        out = []
        for reason, count in sorted(self.counts.items()):
            entry: dict[str, Any] = {"reason": reason, "count": count, "example": self.examples[reason]}
            if reason in self.details:
                entry["by"] = dict(sorted(self.details[reason].items()))
            out.append(entry)
        return out
