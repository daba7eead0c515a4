"""Suppressions: object annotations, config exemptions (with expiry) and a baseline file.

A baseline is keyed on rule + cluster + object + field path (``Finding.key``),
never on line numbers, so edits elsewhere in a file do not resurrect findings.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import json
from pathlib import Path
from typing import Any

from hcpscan.findings.model import Finding, ObjectRef, Status, Suppression
from hcpscan.inventory.objects import K8sObject
from hcpscan.rules.config import Exemption

ANNOTATION = "hcpscan.io/ignore"
BASELINE_VERSION = 1


class BaselineError(Exception):
    pass


def parse_annotation(value: str) -> tuple[set[str], str]:
    """``"HCP001,PRX005: reason"`` -> ({"HCP001", "PRX005"}, "reason")."""
    ids, _, reason = value.partition(":")
    return {i.strip() for i in ids.split(",") if i.strip()}, reason.strip()


class Suppressor:
    def __init__(self, exemptions: list[Exemption] | None = None,
                 baseline: dict[str, dict[str, Any]] | None = None,
                 today: dt.date | None = None) -> None:
        self.exemptions = exemptions or []
        self.baseline = baseline or {}
        self.today = today or dt.date.today()

    def apply(self, finding: Finding, obj: K8sObject, category: str,
              ref: ObjectRef | None = None) -> None:
        """Mark ``finding`` suppressed when something says so; note expired exemptions.
        ``ref``: the object config exemptions match (default: the finding's)."""
        annotation = obj.annotations.get(ANNOTATION)
        if isinstance(annotation, str):
            ids, reason = parse_annotation(annotation)
            if finding.rule_id in ids or category in ids or "all" in ids:
                self._suppress(finding, Suppression("inSource", "annotation",
                                                    reason or "no reason given in the annotation"))
                return
        for exemption in self.exemptions:
            if not _exemption_matches(exemption, finding, category, ref):
                continue
            if exemption.expires and exemption.expires < self.today:
                finding.notes.append(f"exemption for {exemption.rule} expired on "
                                     f"{exemption.expires.isoformat()} ({exemption.reason})")
                continue
            self._suppress(finding, Suppression(
                "external", "config", exemption.reason,
                exemption.expires.isoformat() if exemption.expires else None))
            return
        if finding.key in self.baseline:
            self._suppress(finding, Suppression("external", "baseline",
                                                "accepted in the baseline file"))

    @staticmethod
    def _suppress(finding: Finding, suppression: Suppression) -> None:
        finding.status = Status.SUPPRESSED
        finding.suppression = suppression


def _exemption_matches(ex: Exemption, finding: Finding, category: str,
                       ref: ObjectRef | None = None) -> bool:
    o = ref or finding.object
    return ((ex.rule in (finding.rule_id, category, "*"))
            and fnmatch.fnmatchcase(o.namespace, ex.namespace)
            and fnmatch.fnmatchcase(o.name, ex.name)
            and fnmatch.fnmatchcase(o.kind, ex.kind)
            and fnmatch.fnmatchcase(o.cluster, ex.cluster))


def write_baseline(path: Path, findings: list[Finding]) -> int:
    entries = sorted(({"key": f.key, "rule_id": f.rule_id, "object": f.object.to_json(),
                       "field": f.field} for f in findings if f.status is Status.FAIL),
                     key=lambda e: (e["rule_id"], e["key"]))
    path.write_text(json.dumps({"version": BASELINE_VERSION, "findings": entries}, indent=2) + "\n",
                    encoding="utf-8")
    return len(entries)


def read_baseline(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}:{exc.lineno}: baseline is not valid JSON: {exc.msg}") from None
    except (RecursionError, UnicodeDecodeError, ValueError) as exc:  # nested too deep, not UTF-8
        why = "nested too deep" if isinstance(exc, RecursionError) else "not UTF-8 text"
        raise BaselineError(f"{path}: baseline is not valid JSON: {why}") from None
    if not isinstance(data, dict) or data.get("version") != BASELINE_VERSION \
            or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{path}: not an hcpscan baseline (expected version "
                            f"{BASELINE_VERSION} with a findings list); write one with "
                            "--write-baseline")
    return {e["key"]: e for e in data["findings"] if isinstance(e, dict) and "key" in e}
