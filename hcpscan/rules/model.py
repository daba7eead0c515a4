"""A loaded rule: its report-facing info plus what the engine needs to evaluate it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hcpscan.findings.model import RuleInfo


@dataclass(frozen=True, slots=True)
class AppliesTo:
    kinds: tuple[str, ...]
    api_versions: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()  # globs
    names: tuple[str, ...] = ()  # globs
    labels: tuple[tuple[str, str], ...] = ()
    where: str | None = None  # JSONPath filter
    clusters: str = "all"  # all | management | guest


@dataclass(frozen=True, slots=True)
class Rule:
    info: RuleInfo
    applies_to: AppliesTo
    template: str
    params: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    # deprecated: resources (plurals) a user's rule file still names under ``needs:``; they are
    # read besides the ones hcpscan derives from ``reads`` (scan.resource_needs)
    needs: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def reads(self) -> tuple[str, ...]:
        """Every kind the rule looks at: its subjects and what its template reads for its params."""
        from hcpscan.rules.templates import TEMPLATES

        return (*self.applies_to.kinds, *TEMPLATES[self.template].reads_for(self.params))
