"""Fixes: the change to the input that clears a finding.

Two layers, both plain data:

* A ``Remedy`` is what a check knows when it fires: which object and field to
  change and how (append these noProxy entries, add these NetworkPolicy ports,
  add this document), stated on the object's decoded body. Templates yield it
  with their violation; they never see files.
* A ``Fix`` is the remedy turned into exact text edits of the user's files (by
  ``hcpscan.fixes``): replacements at line/column regions, the unified diff a
  reviewer reads, and for objects read from a live cluster the ``kubectl``
  commands. A finding whose rule offers no automatic change carries a ``Fix``
  with ``automatic=False`` and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hcpscan.inventory.fieldpath import Step
    from hcpscan.inventory.objects import K8sObject


# -- what a check asks for ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SetField:
    """Set the field at ``steps`` (its parent mapping must exist) to a scalar."""

    steps: tuple[Step, ...]
    value: str | int | bool


@dataclass(frozen=True, slots=True)
class AppendItems:
    """Append ``items`` to the sequence at ``steps`` (created when absent); with ``first``,
    put them before its first item (a first-match rule list: a firewall's rules)."""

    steps: tuple[Step, ...]
    items: tuple[Any, ...]
    first: bool = False


@dataclass(frozen=True, slots=True)
class AppendEntries:
    """Add ``entries`` to a comma-separated list value (a noProxy string) or a YAML list of
    them at ``steps``; the field is created when absent. Entries already there are kept
    once, so the edit can be planned again on text another fix changed."""

    steps: tuple[Step, ...]
    entries: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReplaceKey:
    """Replace the mapping entry at ``steps`` (its last step a key) by ``key: value``, in
    its place: an env entry's ``value: <url>`` becoming ``valueFrom: {secretKeyRef: ...}``.
    Nothing to do when the entry is gone and ``key`` holds ``value`` already."""

    steps: tuple[Step, ...]
    key: str
    value: Any


@dataclass(frozen=True, slots=True)
class AddDocument:
    """A new object written after the subject's document, in the same file."""

    body: dict[str, Any]


Edit = SetField | AppendItems | AppendEntries | ReplaceKey | AddDocument


@dataclass(frozen=True, slots=True)
class Remedy:
    """The minimal change to ``target`` that clears one finding."""

    target: K8sObject
    summary: str  # one line a reviewer reads: "add TCP 5353 to egress rule #1"
    edits: tuple[Edit, ...]


@dataclass(frozen=True, slots=True)
class NoFix:
    """Why no automatic change is safe for this finding."""

    why: str


# -- what a report shows ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Replacement:
    """Text ``deleted`` between (start_line, start_column) and (end_line, end_column)
    (1-based, end exclusive) replaced by ``inserted``; an insertion deletes nothing."""

    start_line: int
    start_column: int
    end_line: int
    end_column: int
    deleted: str
    inserted: str

    def to_json(self) -> dict[str, Any]:
        return {"start": {"line": self.start_line, "column": self.start_column},
                "end": {"line": self.end_line, "column": self.end_column},
                "deleted": self.deleted, "inserted": self.inserted}


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str  # as the finding's location names it
    replacements: tuple[Replacement, ...]
    diff: str  # unified diff of the whole file's change

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "replacements": [r.to_json() for r in self.replacements],
                "diff": self.diff}


@dataclass(frozen=True, slots=True)
class Fix:
    automatic: bool
    summary: str = ""  # what the change does, or why there is none
    changes: tuple[FileChange, ...] = ()
    # Objects read from a live cluster: the commands that make the change (never run).
    commands: tuple[str, ...] = ()
    manifests: tuple[tuple[str, str], ...] = ()  # (file name, YAML) the commands apply
    # The value is written elsewhere (a kustomize base, a Helm chart, a document inside a
    # Secret): which file and key to change, since patching the output would not last.
    manual: str = ""

    @property
    def diff(self) -> str:
        return "".join(c.diff for c in self.changes)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"automatic": self.automatic, "summary": self.summary}
        if self.changes:
            out["changes"] = [c.to_json() for c in self.changes]
        if self.commands:
            out["commands"] = list(self.commands)
        if self.manifests:
            out["manifests"] = [{"name": n, "yaml": y} for n, y in self.manifests]
        if self.manual:
            out["manual"] = self.manual
        return out
