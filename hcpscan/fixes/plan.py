"""Remedies -> fixes: where each change is written and the exact edit there.

A check's ``Remedy`` names an inventory object and edits of its body. Where
that object came from decides what the fix can be:

* a YAML file of its own: exact text edits (``textedit``), shown as
  replacements and a unified diff;
* a kustomize build: the base file below the kustomize root that holds the
  object is edited when it writes the changed fields as the build shows them;
  otherwise the fix names the kustomization and the field to change;
* Helm output (``# Source: chart/templates/x.yaml``), a document held in
  another object's field (a kubeconfig in a Secret), an archive member: the
  fix names the file or object and field to change, since editing the output
  would not last;
* a live cluster: the ``kubectl patch`` / ``kubectl apply`` commands and the
  manifests they apply; nothing is ever sent to the cluster.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml

from hcpscan.core.redact import mask_credentials
from hcpscan.core.textcodec import UTF8, sniff_encoding
from hcpscan.findings.fix import (
    AddDocument,
    Edit,
    FileChange,
    Fix,
    NoFix,
    Remedy,
    ReplaceKey,
    Replacement,
    SetField,
)
from hcpscan.findings.model import Finding, RuleInfo
from hcpscan.fixes.diffs import opcodes, unified, window
from hcpscan.fixes.textedit import (
    EditError,
    _node_of,
    _target_node,
    edit_document,
    edit_text,
    intend,
    resolved_edit,
    scalar_text,
    spans_of,
)
from hcpscan.inventory.fieldpath import format_path, get_path
from hcpscan.inventory.objects import BUILT_DOCUMENT, K8sObject
from hcpscan.model.hostedcluster import copied_from, unknown_hosted_cluster
from hcpscan.sources.documents import BomMarks, lift_document_boms, put_back_document_boms
from hcpscan.sources.kustomize import outermost_kustomization, selector_labels

_HELM_SOURCE = re.compile(r"^# Source: (?P<template>\S.*)$", re.MULTILINE)
_NO_REMEDY = ("the check found no single change that clears this finding here "
              "(see the rule's fix section)")


@dataclass(slots=True)
class Place:
    """Where a remedy's edits are written: a file (disk path), document and List item."""

    file: str
    shown: str  # the path reports name
    doc_index: int
    item_index: int | None
    item_at: tuple[int, int] | None = None  # a List item's line and column in the file


class NotUTF8(ValueError):
    """A file a scan read in another encoding (UTF-16/32): fix names its changes by hand."""


@dataclass(slots=True)
class FileTexts:
    """The text of each file as fixes change it (``hcpscan fix`` applies several)."""

    original: dict[str, str] = field(default_factory=dict)
    current: dict[str, str] = field(default_factory=dict)
    # How a file was written where fixes do not edit it: a byte-order mark and CRLF line
    # ends are taken off to plan (PyYAML's positions, and lines inserted with "\n"), and
    # put back on what is written or diffed, so a Windows checkout stays as it was.
    form: dict[str, tuple[str, str]] = field(default_factory=dict)
    # Objects read live: their bodies as the commands planned so far leave them, so a
    # second fix of one value patches it with both changes (the commands run in order).
    bodies: dict[int, Any] = field(default_factory=dict)
    # Byte order marks at the start of later documents (files concatenated with `cat`):
    # taken off as a scan takes them off, put back where they were on what is written.
    boms: dict[str, BomMarks] = field(default_factory=dict)

    def read(self, path: str) -> str:
        if path not in self.current:
            with open(path, "rb") as fh:
                data = fh.read()
            codec, _ = sniff_encoding(data)
            if codec != UTF8:  # read by a scan (core.textcodec), never written back so
                raise NotUTF8(f"the file is {codec.upper()}, and hcpscan fix writes UTF-8 "
                              "files only: save it as UTF-8 to have it fixed")
            text = data.decode("utf-8")
            bom = "\ufeff" if text.startswith("\ufeff") else ""
            text = text[len(bom):]
            crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
            if crlf:
                text = text.replace("\r\n", "\n")
            self.form[path] = (bom, "\r\n" if crlf else "\n")
            text, marks = lift_document_boms(text)  # as a scan reads it; put back on writing
            if marks:
                self.boms[path] = marks
            self.original[path] = self.current[path] = text
        return self.current[path]

    def written(self, path: str, text: str) -> str:
        """``text`` (one of this file's) as the file holds it: its byte-order mark and
        line ends back."""
        bom, newline = self.form.get(path, ("", "\n"))
        text = put_back_document_boms(text, self.boms.get(path, ()))
        return bom + (text.replace("\n", newline) if newline != "\n" else text)


def attach_fixes(findings: Iterable[Finding], rules: Iterable[RuleInfo]) -> None:
    """Give every failing finding its ``fix``: the change that clears it, or why none."""
    infos = {r.id: r for r in rules}
    # Each file fix is shown alone (planned on the file as read, which is read once); fixes
    # of one live object are planned in sequence, as the commands run.
    texts = FileTexts()
    for finding in findings:
        finding.fix = fix_for(finding, infos.get(finding.rule_id), texts)


def fix_for(finding: Finding, info: RuleInfo | None, texts: FileTexts | None = None) -> Fix | None:
    remedy = finding.remedy
    if isinstance(remedy, NoFix):
        return Fix(False, remedy.why)
    if isinstance(remedy, Remedy):
        return plan(remedy, texts, keep=False)
    if info is not None and info.docs.autofix == "none":
        return Fix(False, info.docs.autofix_why)
    if info is not None and info.docs.autofix == "offered":
        return Fix(False, _NO_REMEDY)
    return None


def plan(remedy: Remedy, texts: FileTexts | None = None, keep: bool = True) -> Fix:
    """The fix for one remedy, planned on the current text of ``texts`` (and, with ``keep``,
    applied to it, so the next fix of the file sees it)."""
    try:
        return _plan(remedy, texts, keep)
    except EditError as exc:  # the object's own value is not what the remedy expects
        return Fix(False, f"{remedy.summary}: not made automatically ({exc})")


def _plan(remedy: Remedy, texts: FileTexts | None, keep: bool) -> Fix:
    target = remedy.target
    source = copied_from(target)
    if source is not None:  # the operator's copy: an edit of it is undone at the next sync
        namespace, name = source
        which, command = ((f"HostedCluster {namespace}/{name}", f"oc -n {namespace} edit "
                           f"hostedcluster {name}") if namespace is not None else
                          (unknown_hosted_cluster(target),
                           f"oc -n <its namespace> edit hostedcluster {name}"))
        return Fix(True, remedy.summary, manual=_by_hand(
            remedy, f"{which}, not {target.ref} (the HyperShift operator writes the "
                    "HostedControlPlane from its HostedCluster and undoes an edit of it; "
                    f"`{command}`, or the HostedCluster's manifest in Git), the same fields"))
    if target.origin is not None and target.source.embedded_in:
        outer = _held_document(remedy)
        if outer is None or not outer.target.source.file or outer.target.source.file == "<stdin>":
            # (a live Secret's patch would carry its whole data into the report's commands)
            return Fix(True, remedy.summary, manual=_embedded(remedy))
        fix = _plan(outer, texts, keep)
        if fix.manual:  # the key cannot be edited in place: the change inside it, by hand
            return Fix(True, remedy.summary, manual=_embedded(remedy))
        return fix
    if not target.source.file or target.source.file == "<stdin>":
        return _live(remedy, (texts or FileTexts()).bodies)
    if target.source.member is not None:
        return Fix(True, remedy.summary, manual=_by_hand(remedy, f"{target.source.path} (inside "
                                                         "an archive: edit the file it was "
                                                         "packed from)"))
    place: Place | str = (_kustomize_base(remedy) if target.source.doc_index == BUILT_DOCUMENT
                          else Place(target.source.file, target.source.path,
                                     target.source.doc_index, target.source.item_index,
                                     (target.source.line, target.source.column)))
    if isinstance(place, str):
        return Fix(True, remedy.summary, manual=place)
    if target.source.doc_index == BUILT_DOCUMENT:
        remedy = _past_common_labels(remedy, target.source.file, place.file)
    elif (top := outermost_kustomization(place.file)) is not None:
        # a file below a kustomize root read unbuilt (no kubectl, a failed build): the
        # user's build adds the labels all the same
        remedy = _past_common_labels(remedy, top, place.file)
    texts = texts or FileTexts()
    try:
        before = texts.read(place.file)
    except (OSError, UnicodeDecodeError, NotUTF8) as exc:
        return Fix(True, remedy.summary, manual=_by_hand(remedy, f"{place.shown} ({exc})"))
    helm = _helm_template(before, place.doc_index)
    if helm:
        return Fix(True, remedy.summary, manual=_by_hand(
            remedy, f"the Helm template {helm} (this file is rendered output; change the chart "
                    "or its values so the rendered field reads as shown)"))
    try:
        after = edit_document(before, place.doc_index, place.item_index, remedy.edits,
                              place.item_at)
    except EditError as exc:
        return Fix(True, remedy.summary, manual=_by_hand(remedy, f"{place.shown} ({exc})"))
    if keep:
        texts.current[place.file] = after
    if after == before:
        return Fix(True, remedy.summary)  # an earlier fix of this run made the change
    hidden = ((_secret_lines(before, place.doc_index, place.item_index),
               _secret_lines(after, place.doc_index, place.item_index))
              if target.kind == "Secret" else None)
    return Fix(True, remedy.summary, changes=(file_change(place.shown, before, after, hidden),))


def file_change(shown: str, before: str, after: str,
                hidden: tuple[set[int], set[int]] | None = None) -> FileChange:
    """The change as reports show it. ``hidden``: lines (0-based, before and after) holding
    a Secret's data, shown as a hash of their text only."""
    skipped, a, b = window(before, after)  # the changed lines and their context only
    shown_a, shown_b = (a, b) if hidden is None else (
        _hide(a, {i - skipped for i in hidden[0]}), _hide(b, {i - skipped for i in hidden[1]}))
    replacements = []
    for tag, i1, i2, j1, j2 in opcodes(a, b):
        if tag == "equal":
            continue
        replacements.append(Replacement(i1 + 1 + skipped, 1, i2 + 1 + skipped, 1,
                                        mask_credentials("".join(shown_a[i1:i2])),
                                        mask_credentials("".join(shown_b[j1:j2]))))
    # Reports are uploaded and pasted: a proxy password on a line of context must not reach
    # them (`hcpscan fix` writes its diff from the texts, unmasked).
    diff = mask_credentials(unified(shown_a, shown_b, f"a/{shown}", f"b/{shown}",
                                    skipped=skipped))
    return FileChange(shown, tuple(replacements), diff)


def _secret_lines(text: str, doc_index: int, item_index: int | None) -> set[int]:
    """The lines of a Secret document's ``data`` and ``stringData`` values (tokens, keys,
    a kubeconfig): a report shows that they changed, never what they hold."""
    try:
        node = _target_node(_node_of(text, doc_index), item_index)
    except EditError:
        return set()
    lines: set[int] = set()
    if not isinstance(node, yaml.MappingNode):
        return lines
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value in ("data", "stringData") \
                and isinstance(value, yaml.MappingNode):
            for k, v in value.value:
                last = v.end_mark.line - (1 if v.end_mark.column == 0 and
                                          v.end_mark.line > k.start_mark.line else 0)
                lines.update(range(k.start_mark.line, last + 1))
    return lines


def _hide(lines: list[str], hidden: set[int]) -> list[str]:
    out = []
    for i, line in enumerate(lines):
        if i not in hidden:
            out.append(line)
            continue
        body = line.rstrip("\n")
        indent = body[:len(body) - len(body.lstrip())]
        digest = hashlib.sha256(body.encode()).hexdigest()[:12]
        out.append(f"{indent}<Secret data, {len(body.strip())} characters, sha256 {digest}>"
                   + line[len(body):])
    return out


# -- where the change is written ------------------------------------------------------------


def _helm_template(text: str, doc_index: int) -> str:
    """The chart template a document of ``helm template`` output was rendered from: the
    ``# Source:`` comment among the lines before the document's first content line."""
    spans = spans_of(text)
    if doc_index >= len(spans):
        return ""
    at = spans[doc_index - 1][1] if doc_index > 0 else 0
    while at < len(text):  # line by line from there, never the rest of the file at once
        newline = text.find("\n", at)
        line_end = len(text) if newline < 0 else newline + 1
        stripped = text[at:line_end].strip()
        at = line_end
        if not stripped or stripped == "---":
            continue
        if not stripped.startswith("#"):
            return ""
        found = _HELM_SOURCE.match(stripped)
        if found:
            return found["template"].strip()
    return ""


def _kustomize_base(remedy: Remedy) -> Place | str:
    """The file below the kustomize root that writes the object, when its edited fields
    read there as in the build (then editing it changes the build exactly); else what
    to change by hand."""
    target = remedy.target
    root = os.path.dirname(target.source.file)
    candidates = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith((".yaml", ".yml")) or name.startswith("kustomization"):
                continue
            path = os.path.join(folder, name)
            for index, body in _read_docs(path):
                if (isinstance(body, dict) and body.get("kind") == target.kind
                        and _same_name(str((body.get("metadata") or {}).get("name", "")),
                                       target.name)):
                    candidates.append((path, index, body))
    shown = os.path.relpath(target.source.path)
    where = f"the kustomize sources of {shown}"
    if len(candidates) != 1:
        return _by_hand(remedy, where + (": no base file writes this object" if not candidates
                                         else ": several base files write this object"))
    path, index, body = candidates[0]
    for e in remedy.edits:
        steps = getattr(e, "steps", None)
        if steps is not None and get_path(body, steps) != get_path(target.body, steps):
            return _by_hand(remedy, f"{path} (a kustomize patch sets {format_path(steps)}; "
                                    "change the patch)")
    return Place(path, os.path.relpath(path), index, None)


def _past_common_labels(remedy: Remedy, root_file: str, path: str) -> Remedy:
    """A new NetworkPolicy written into a kustomize base: kustomize adds the kustomizations'
    ``commonLabels`` (and ``labels`` with ``includeSelectors``) to its pod selectors'
    ``matchLabels`` - the peers' too, so a policy for the DNS pods or another namespace's
    operator would select pods that do not carry them, i.e. none. Every selector that
    would change is written as the same ``matchExpressions`` (``In`` one value), which
    kustomize leaves as written; one that already holds those labels stays as it is."""
    added = selector_labels(root_file, path)
    if not added:
        return remedy
    edits, moved = [], []
    for edit in remedy.edits:
        if isinstance(edit, AddDocument) and edit.body.get("kind") == "NetworkPolicy":
            body = copy.deepcopy(edit.body)
            moved += _expressions(body, added)
            edit = AddDocument(body)
        edits.append(edit)
    if not moved:
        return remedy
    shown = ", ".join(f"{k}={v}" for k, v in added.items())
    return Remedy(remedy.target, f"{remedy.summary} (its {', '.join(dict.fromkeys(moved))} "
                                 f"written as matchExpressions: the kustomization adds {shown} "
                                 "to every matchLabels of a NetworkPolicy, which the pods it "
                                 "names do not all carry)", tuple(edits))


def _expressions(body: dict[str, Any], added: dict[str, str]) -> list[str]:
    spec = body.get("spec")
    if not isinstance(spec, dict):
        return []
    selectors = [("podSelector", spec.get("podSelector"))]
    for direction, side in (("ingress", "from"), ("egress", "to")):
        rules = spec.get(direction)
        for rule in rules if isinstance(rules, list) else ():
            peers = rule.get(side) if isinstance(rule, dict) else None
            for peer in peers if isinstance(peers, list) else ():
                if isinstance(peer, dict):
                    selectors.append((f"{direction} peers' podSelector", peer.get("podSelector")))
    moved = []
    for where, selector in selectors:
        if not isinstance(selector, dict):
            continue
        labels = selector.get("matchLabels")
        if not isinstance(labels, dict) or not labels or \
                all(labels.get(k) == v for k, v in added.items()):
            continue  # kustomize leaves it as it is (absent, empty) or changes nothing
        expressions = [{"key": k, "operator": "In", "values": [v]} for k, v in labels.items()]
        selector.pop("matchLabels")
        selector["matchExpressions"] = expressions + list(selector.get("matchExpressions") or [])
        moved.append(where)
    return moved


def _read_docs(path: str) -> list[tuple[int, object]]:
    try:
        with open(path, encoding="utf-8") as fh:
            return list(enumerate(yaml.safe_load_all(fh)))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []


def _same_name(base: str, built: str) -> bool:
    """kustomize's namePrefix/nameSuffix keep the base name inside the built one."""
    return bool(base) and (base == built or base in built)


# -- fixes a person makes ------------------------------------------------------------------


def _held_document(remedy: Remedy) -> Remedy | None:
    """A document kept in a ConfigMap or Secret key (a kubeconfig in ``data.kubeconfig``):
    the remedy's edits made on the key's text, as written there (the other lines of the
    document stay), and that text set again in the key - base64 again for ``data`` of a
    Secret. None when the key is not plain text or base64 of it, or holds more than the
    one document the inventory read."""
    target = remedy.target
    origin = target.origin
    if origin is None or not target.source.embedded_in:
        return None  # not a document kept in another object's key
    field, _, key = target.source.embedded_in.partition(".")
    if origin.kind not in ("Secret", "ConfigMap") or field not in ("data", "stringData") \
            or any(isinstance(e, AddDocument) for e in remedy.edits):
        return None
    if (origin.kind, origin.namespace, origin.name) == ("ConfigMap", "kube-system",
                                                        "cluster-config-v1"):
        return None  # the installer's record of a cluster that exists: nothing reads it again
    raw = (origin.body.get(field) or {}).get(key)
    if not isinstance(raw, str):
        return None
    encoded = origin.kind == "Secret" and field == "data"
    try:
        inner = base64.b64decode("".join(raw.split()), validate=True).decode() if encoded else raw
        if _read_docs_text(inner) != [target.body]:
            return None
        changed = edit_text(inner, 0, None, remedy.edits)
    except (ValueError, EditError):  # binascii.Error and UnicodeDecodeError are ValueErrors
        return None
    if changed == inner:
        return Remedy(origin, remedy.summary, ())
    value = base64.b64encode(changed.encode()).decode() if encoded else changed
    return Remedy(origin, f"{remedy.summary} (in {target.source.embedded_in}"
                          + (", base64" if encoded else "") + ")",
                  (SetField((field, key), value),))


def _read_docs_text(text: str) -> list[object]:
    try:
        return list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return []


def _embedded(remedy: Remedy) -> str:
    target = remedy.target
    if target.origin is None:
        raise ValueError(f"{target.ref}: an embedded target without the object it is embedded in")
    return _by_hand(remedy, f"the document in {target.source.embedded_in} of {target.origin.ref} "
                            f"({target.origin.source.path})")


def _by_hand(remedy: Remedy, where: str) -> str:
    lines = [f"change {where}:"]
    lines += [f"  {_edit_text(remedy.target, e)}" for e in remedy.edits]
    # Shown in reports, never applied: a proxy password a new Secret holds stays out.
    return mask_credentials("\n".join(lines))


def _edit_text(target: K8sObject, e: Edit) -> str:
    if isinstance(e, AddDocument):
        return "add this object:\n" + _indent(yaml.safe_dump(e.body, sort_keys=False), 4)
    resolved = resolved_edit(e, target.body)
    if resolved is None:
        return f"{format_path(e.steps)} already holds the change"
    if isinstance(resolved, SetField):
        return f"set {format_path(resolved.steps)} to {scalar_text(resolved.value)}"
    if isinstance(resolved, ReplaceKey):
        return (f"replace {format_path(resolved.steps)} by {resolved.key}: "
                f"{json.dumps(resolved.value)}")
    return (f"{'insert first in' if resolved.first else 'append to'} "
            f"{format_path(resolved.steps)}: " + ", ".join(json.dumps(i) for i in resolved.items))


def _indent(text: str, n: int) -> str:
    return "".join(" " * n + line for line in text.splitlines(keepends=True))


# -- live clusters -------------------------------------------------------------------------


def _live(remedy: Remedy, bodies: dict[int, Any]) -> Fix:
    target = remedy.target
    body = bodies.setdefault(id(target), copy.deepcopy(target.body))
    where = f" -n {target.namespace}" if target.namespace else ""
    ops: list[dict[str, object]] = []
    commands: list[str] = []
    manifests: list[tuple[str, str]] = []
    for e in remedy.edits:
        if isinstance(e, AddDocument):
            meta = e.body.get("metadata") or {}
            name = "-".join(str(p) for p in (e.body.get("kind", "object").lower(),
                                               meta.get("namespace"), meta.get("name")) if p)
            manifests.append((f"{name}.yaml", yaml.safe_dump(e.body, sort_keys=False)))
            commands.append(f"kubectl apply -f {name}.yaml")
            continue
        resolved = resolved_edit(e, body)
        if resolved is None:
            continue
        existed = get_path(body, resolved.steps) is not None
        intend(body, resolved)
        pointer = "/" + "/".join(str(s).replace("~", "~0").replace("/", "~1")
                                 for s in resolved.steps)
        if isinstance(resolved, ReplaceKey):
            ops.append({"op": "remove", "path": pointer})
            ops.append({"op": "add", "path": pointer.rsplit("/", 1)[0] + "/"
                        + resolved.key.replace("~", "~0").replace("/", "~1"),
                        "value": resolved.value})
        elif isinstance(resolved, SetField):
            ops.append({"op": "add", "path": pointer, "value": resolved.value})
        elif not existed:
            ops.append({"op": "add", "path": pointer, "value": list(resolved.items)})
        elif resolved.first:
            ops += [{"op": "add", "path": f"{pointer}/{n}", "value": i}
                    for n, i in enumerate(resolved.items)]
        else:
            ops += [{"op": "add", "path": pointer + "/-", "value": i} for i in resolved.items]
    if ops:
        patch = json.dumps(ops, separators=(",", ":"))
        kind = target.kind.lower() + ("." + target.api_version.split("/")[0]
                                      if "/" in target.api_version
                                      and "." in target.api_version.split("/")[0] else "")
        commands.insert(0, f"kubectl patch {kind} {target.name}{where} --type=json "
                           f"-p {shlex.quote(patch)}")
    return Fix(True, remedy.summary, commands=tuple(commands), manifests=tuple(manifests))
