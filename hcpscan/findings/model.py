"""Findings and rule results: what the rule engine hands to the reporters.

Reporters depend on this module only (never on sources or rules), so every
fact a report shows must be here: the rule's docs, each finding's object,
field and location, and the coverage (rule results per status).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from dataclasses import field as _field  # Finding has a member named field
from enum import Enum
from typing import Any

from hcpscan.findings.fix import Fix, NoFix, Remedy
from hcpscan.inventory.objects import MANAGEMENT  # reporters name clusters through this module


class Severity(str, Enum):
    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Higher is more severe."""
        return {"critical": 4, "high": 3, "medium": 2, "low": 1, "info": 0}[self.value]

    def at_least(self, other: Severity) -> bool:
        return self.rank >= other.rank


class Status(str, Enum):
    FAIL = "fail"
    PASS = "pass"
    NOT_EVALUABLE = "not-evaluable"
    NOT_APPLICABLE = "not-applicable"  # nothing in the rule's scope: checked nothing, passed nothing
    SUPPRESSED = "suppressed"


@dataclass(frozen=True, slots=True)
class RuleDocs:
    what: str = ""
    why: str = ""
    failing: str = ""  # YAML that makes the rule fire
    passing: str = ""  # YAML that does not
    fix: str = ""
    known_problems: str = ""
    references: tuple[str, ...] = ()
    # Whether the rule's findings carry an automatic fix ("" = not said, user rules), and
    # when not, why no automatic change is safe.
    autofix: str = ""  # "offered" | "none"
    autofix_why: str = ""


@dataclass(frozen=True, slots=True)
class RuleInfo:
    id: str
    title: str
    severity: Severity
    category: str
    docs: RuleDocs = RuleDocs()
    tags: tuple[str, ...] = ()
    precision: str = "high"  # SARIF precision: very-high | high | medium | low
    source: str = ""  # the rule file
    help_uri: str = ""  # the rule's public page (built-in rules only: docs/rules/<ID>.md)


@dataclass(frozen=True, slots=True)
class ObjectRef:
    cluster: str
    api_version: str
    kind: str
    namespace: str
    name: str
    # The live object's metadata.uid (empty for files without one); not part of the
    # identity, so the same object read from a dump and live is one object.
    uid: str = field(default="", compare=False)

    def to_json(self) -> dict[str, str]:
        return {"cluster": self.cluster, "apiVersion": self.api_version, "kind": self.kind,
                "namespace": self.namespace, "name": self.name}

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        prefix = "" if self.cluster == MANAGEMENT else f"{self.cluster}:"
        return f"{prefix}{self.kind} {where}"


@dataclass(frozen=True, slots=True)
class Location:
    """Where a finding points. ``virtual`` locations (live scans, objects with no
    file) use ``cluster/<context>/<ns>/<kind>/<name>.yaml`` at line 1."""

    path: str
    line: int = 1
    column: int = 1
    virtual: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "line": self.line, "column": self.column}
        if self.virtual:
            out["virtual"] = True
        return out


@dataclass(frozen=True, slots=True)
class Suppression:
    kind: str  # "inSource" (annotation) | "external" (config exemption, baseline)
    source: str  # "annotation" | "config" | "baseline"
    justification: str
    expires: str | None = None


@dataclass(slots=True)
class Finding:
    rule_id: str
    severity: Severity
    object: ObjectRef
    field: str  # field path of the offending value, e.g. spec.ingress[0].ports[0].port
    location: Location
    message: str
    evidence: list[str] = _field(default_factory=list)
    status: Status = Status.FAIL
    suppression: Suppression | None = None
    notes: list[str] = _field(default_factory=list)  # e.g. "exemption expired on 2026-01-01"
    facts: dict[str, Any] = _field(default_factory=dict)  # structured, for fixes (see Violation)
    # What the check says would clear it (hcpscan.fixes turns it into ``fix``); not reported.
    remedy: Remedy | NoFix | None = _field(default=None, repr=False, compare=False)
    # The findings at other objects folded into this one (one root cause, one finding): each
    # keeps its own remedy, so ``hcpscan fix`` clears every reader, not only the first.
    folded: list[Finding] = _field(default_factory=list, repr=False, compare=False)
    fix: Fix | None = None
    data: dict[str, Any] = _field(default_factory=dict)  # exact values a fix needs (JSON-ready)
    # The problem said of a value many consumers read, and those readers (see Violation.lead):
    # a finding with more than one reader is worded by the value, then every reader.
    lead: str = _field(default="", repr=False, compare=False)
    readers: list[str] = _field(default_factory=list, repr=False, compare=False)

    @property
    def key(self) -> str:
        """Stable identity: rule + cluster + object + field path, never a line number,
        so edits elsewhere in a file do not make an old finding new."""
        o = self.object
        raw = "\x1f".join((self.rule_id, o.cluster, o.api_version.split("/")[0] if "/" in o.api_version
                           else "", o.kind, o.namespace, o.name, self.field))
        return hashlib.sha256(raw.encode()).hexdigest()[:32]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule_id": self.rule_id,
            "severity": self.severity.value,
            "status": self.status.value,
            "object": self.object.to_json(),
            "location": self.location.to_json(),
            "field": self.field,
            "message": self.message,
            "evidence": list(self.evidence),
            "fingerprint": self.key,
        }
        if self.suppression:
            out["suppression"] = {"kind": self.suppression.kind, "source": self.suppression.source,
                                  "justification": self.suppression.justification,
                                  "expires": self.suppression.expires}
        if self.notes:
            out["notes"] = list(self.notes)
        if self.facts:
            out["facts"] = self.facts
        if self.fix is not None:
            out["fix"] = self.fix.to_json()
        if self.data:
            out["data"] = self.data
        return out


@dataclass(slots=True)
class RuleResult:
    rule_id: str
    status: Status
    reason: str = ""
    findings: int = 0  # failing findings (not suppressed)
    suppressed: int = 0
    objects_checked: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"rule_id": self.rule_id, "status": self.status.value, "reason": self.reason,
                "findings": self.findings, "suppressed": self.suppressed,
                "objects_checked": self.objects_checked}


@dataclass(frozen=True, slots=True)
class PassedOver:
    """Input the scan did not read, on purpose, for one reason: how much, one
    example, and where it helps a count per resource (``by``)."""

    reason: str
    count: int
    example: str = ""
    by: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"reason": self.reason, "count": self.count, "example": self.example}
        if self.by:
            out["by"] = dict(self.by)
        return out


@dataclass(frozen=True, slots=True)
class WayIn:
    """One way outside addresses are offered into a hosted control plane: a NodePort or
    LoadBalancer Service, or a Route through the router, to one pod port."""

    layer: str  # NodePort | LoadBalancer | Route
    via: ObjectRef  # the Service or Route that opens it
    protocol: str
    entry_port: int | None  # port at the perimeter; None = a node port not allocated yet
    pod_port: int
    targets: tuple[str, ...]  # workloads behind it, "namespace/name[Kind]"
    admitted: str  # outside addresses that get through every layer; "" = none
    beyond_workers: str  # the part of them outside the worker subnets; "" = none
    blocked_by: str  # when nothing is admitted: the layer that stops it, and why
    location: Location


@dataclass(frozen=True, slots=True)
class HostedClusterExposure:
    """What a HostedCluster's control plane offers to outside addresses (from the
    reachability analysis the HCP rules ran), for pictures of it."""

    hosted_cluster: ObjectRef
    control_plane_namespace: str
    workers: tuple[str, ...]  # worker subnets; () when neither input gives them
    ways_in: tuple[WayIn, ...]


@dataclass(slots=True)
class ScanReport:
    """Everything one run produced; the reporters' only input."""

    tool_version: str
    rules: list[RuleInfo]
    results: list[RuleResult]
    findings: list[Finding]
    diagnostics: list[dict[str, Any]]  # Diagnostic.to_json() of everything not read/evaluated
    inventory_counts: dict[str, int]  # kind -> count
    metadata: dict[str, Any] = field(default_factory=dict)  # paths, clusters, started, duration...
    # Per HostedCluster, when the reachability analysis ran (an HCP rule needed it).
    exposures: list[HostedClusterExposure] = field(default_factory=list)
    passed_over: list[PassedOver] = field(default_factory=list)  # sorted by reason

    def rule(self, rule_id: str) -> RuleInfo | None:
        for info in self.rules:
            if info.id == rule_id:
                return info
        return None

    @property
    def failing(self) -> list[Finding]:
        return [f for f in self.findings if f.status is Status.FAIL]
