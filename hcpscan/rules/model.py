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
    primitive: str
    params: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    needs: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.info.id
