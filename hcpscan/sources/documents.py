"""Bytes of one entry -> inventory objects and diagnostics.

Recognised content: Kubernetes objects (single, multi-document, ``List`` and
``*List``), kubeconfig files (``kind: Config``), ignition user-data stubs (JSON
with an ``ignition`` key) and systemd drop-ins (``[Service]`` with
``Environment=``). Everything else becomes a diagnostic, never an exception.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any

from hcpscan.core.diagnostics import Diagnostic
from hcpscan.core.textcodec import UTF8, sniff_encoding, wide_text
from hcpscan.core.yamldocs import (
    MAX_NODES,
    SURROGATE_ESCAPE,
    BadDocument,
    InputLimitError,
    ParsedDocument,
    TooManyNodes,
    YamlSyntaxError,
    load_json,
    lone_surrogate_at,
    node_overrun,
    number_too_long,
    parse_documents,
    read_documents,
)
from hcpscan.inventory.fieldpath import mapping_at
from hcpscan.inventory.kept import KEPT, Keep, kept
from hcpscan.inventory.objects import (
    HCPSCAN_API,
    IGNITION_CONFIG,
    INSTALL_CONFIG_KIND,
    KUBECONFIG,
    SYSTEMD_DROPIN,
    K8sObject,
    SourceLocation,
)
from hcpscan.sources import systemd
from hcpscan.sources.fastyaml import KeepOf, fast_documents
from hcpscan.sources.insights import operator_resource
from hcpscan.sources.interface import Entry

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

# A Go template action ({{ ... }}, Helm's and Prometheus's alike), on one line.
_ACTION = re.compile(r"\{\{.*?\}\}")


class ParseResult:
    __slots__ = ("objects", "diagnostics", "skipped")

    def __init__(self) -> None:
        self.objects: list[K8sObject] = []
        self.diagnostics: list[Diagnostic] = []
        self.skipped: list[tuple[str, str]] = []  # (reason, where)


def _decode(entry: Entry, data: bytes, result: ParseResult) -> str | None:
    """The entry's text: UTF-8, or UTF-16/UTF-32 as YAML 1.2 detects them (a byte order
    mark, or the zero bytes around the first character: ``core.textcodec``), which
    PowerShell's ``>`` writes; None (and a diagnostic) for a binary or undecodable file."""
    codec, bom = sniff_encoding(data)
    if codec != UTF8 or b"\x00" in data[:8192]:
        wide = wide_text(data)
        if wide is not None:
            return _without_document_boms(wide) if "\ufeff" in wide else wide
        also = (f" (it starts as {codec.upper()} text{' with a byte order mark' if bom else ''}, "
                "but is no YAML text in it)" if codec != UTF8 else "")
        result.diagnostics.append(Diagnostic(entry.display, None, "binary file, not a manifest"
                                             + also,
                                             hint="remove it from the scanned paths or unpack it; "
                                                  "a manifest is UTF-8, UTF-16 or UTF-32 text"))
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        result.diagnostics.append(Diagnostic(entry.display, line, f"not UTF-8 text: {exc.reason}",
                                             hint="save the file as UTF-8"))
        return None
    return _without_document_boms(text) if "\ufeff" in text else text


# YAML allows a byte order mark at the start of every document of a stream, not only the
# first (files concatenated with `cat`, or written by tools that add one per document);
# PyYAML reads one after `---` as part of the first key ("\ufeffapiVersion"). Dropped
# there (after a `---` line ending in LF or CRLF), and before a `---` or a directive;
# line numbers are unchanged.
_DOCUMENT_BOM = re.compile(r"(?m)(^(?:---|\.\.\.)(?:[ \t][^\n]*)?\r?\n)\ufeff|^\ufeff(?=---|%|\.\.\.)")


def _without_document_boms(text: str) -> str:
    return _DOCUMENT_BOM.sub(lambda m: m.group(1) or "", text)


_MARKER_LINE = re.compile(r"(?m)^(?:---|\.\.\.)(?:[ \t][^\n]*)?$")
# Where a document's byte order mark was: the ordinal of its `---`/`...` line in the text
# without them, and whether the mark followed that line (else it stood before it).
BomMarks = tuple[tuple[int, bool], ...]


def lift_document_boms(text: str) -> tuple[str, BomMarks]:
    """``text`` read as a scan reads it (the byte order marks at document starts after the
    first dropped), and where they were, so a writer (``hcpscan fix``) can put them back
    with :func:`put_back_document_boms` after editing."""
    if "\ufeff" not in text:
        return text, ()
    found = []
    removed = 0
    for m in _DOCUMENT_BOM.finditer(text):
        after = m.group(1) is not None
        found.append((m.start() + (len(m.group(1)) if after else 0) - removed, after))
        removed += 1
    if not found:
        return text, ()
    lifted = _without_document_boms(text)
    starts = [m.start() for m in _MARKER_LINE.finditer(lifted)]
    marks = []
    for at, after in found:
        index = sum(1 for start in starts if start < at) - (1 if after else 0)
        marks.append((index, after))
    return lifted, tuple(marks)


def put_back_document_boms(text: str, marks: BomMarks) -> str:
    """The inverse of :func:`lift_document_boms` on an edited text whose marker lines
    are the original's (edits change documents, not their separators; new documents are
    appended after them)."""
    if not marks:
        return text
    lines = list(_MARKER_LINE.finditer(text))
    inserts = []
    for index, after in marks:
        if 0 <= index < len(lines):
            line = lines[index]
            inserts.append(line.end() + 1 if after else line.start())
    for at in sorted(inserts, reverse=True):
        text = text[:at] + "\ufeff" + text[at:]
    return text


def parse_entry(entry: Entry, cluster: str, data: bytes, max_nodes: int = MAX_NODES,
                pruned: frozenset[str] = frozenset()) -> ParseResult:
    """A manifest file of more than ``max_nodes`` nodes (``--max-nodes``) is not
    parsed at all: its size does not bound what parsing costs (3 bytes make an
    empty mapping). Objects of the ``pruned`` kinds keep only what ``inventory/kept.py``
    keeps of them (the fast parser builds no more than that)."""
    result = ParseResult()
    text = _decode(entry, data, result)
    if text is None:
        return result
    name = entry.parts[-1] if entry.parts else entry.display
    if name.endswith(".conf"):
        _parse_dropin(entry, cluster, text, result)
        return result
    # libyaml reads the bytes without a copy when they are the text's UTF-8
    overrun = node_overrun(text, max_nodes, data if sniff_encoding(data)[0] == UTF8 else None)
    if overrun is not None:
        result.diagnostics.append(_not_read(entry, overrun))
        return result
    done: set[int] = set()  # ids of the bodies built pruned
    _parse_manifests(entry, cluster, text, result, max_nodes, _keep_of(pruned) if pruned else None, done)
    if pruned:
        for obj in result.objects:
            if obj.kind in pruned and obj.api_version != HCPSCAN_API and id(obj.body) not in done:
                obj.body = kept(obj.kind, obj.body)
    return result


def _keep_of(pruned: frozenset[str]) -> Callable[[dict[Any, Any]], Keep | None]:
    """What to keep of a body that becomes an object of a pruned kind (as ``parse_entry``
    prunes the objects made), None for any other body."""
    def keep_of(body: dict[Any, Any]) -> Keep | None:
        kind = body.get("kind")
        if type(kind) is str and kind in pruned and body.get("apiVersion") != HCPSCAN_API:
            return KEPT[kind]
        return None
    return keep_of


def _location(entry: Entry, doc: ParsedDocument, item: int | None = None) -> SourceLocation:
    if item is None:
        line, column = doc.line, doc.column
    else:
        if doc.item_positions is None:
            raise ValueError(f"{entry.display}: item {item} of a document that is not a List")
        line, column = doc.item_positions[item]
    return SourceLocation(entry.display, line, column, entry.file, entry.member, doc.doc_index, item)


def _parse_manifests(entry: Entry, cluster: str, text: str, result: ParseResult,
                     max_nodes: int, keep_of: KeepOf | None = None, done: set[int] | None = None) -> None:
    """Every document that parses is read, whatever the others hold: template text
    inside strings (Prometheus, Alertmanager, Kyverno) is content, and a bad
    document costs only itself. ``max_nodes`` bounds what JSON read by the JSON
    parser makes, as ``parse_entry`` bounds what YAML makes."""
    fast = fast_documents(text, keep_of, done)
    docs = fast if fast is not None else list(read_documents(text))
    bad = [doc for doc in docs if isinstance(doc, BadDocument)]
    beyond = any(isinstance(doc.error, InputLimitError) for doc in bad)
    if bad and not beyond and entry.display.endswith(".json"):
        _parse_json(entry, cluster, text, result, max_nodes)
        return
    if bad and not beyond and text.lstrip().startswith("{") \
            and _parse_json(entry, cluster, text, result, max_nodes, strict=False):
        return  # JSON Lines in a .yaml file or on standard input
    surrogates = SURROGATE_ESCAPE.search(text) is not None  # else none can have been read
    for doc in docs:
        if isinstance(doc, BadDocument) and isinstance(doc.error, InputLimitError):
            result.diagnostics.append(_not_read(entry, doc.error, doc.line))
        elif isinstance(doc, BadDocument):
            result.diagnostics.append(_bad_document(entry, text, doc, len(docs) > 1))
        else:
            _add_document(entry, cluster, doc, result, surrogates)


def _not_read(entry: Entry, error: InputLimitError, line: int | None = None) -> Diagnostic:
    return Diagnostic(entry.display, error.line or line, f"not read: {error.message}", hint=error.hint)


def _parse_json(entry: Entry, cluster: str, text: str, result: ParseResult, max_nodes: int,
                strict: bool = True) -> bool:
    """JSON that YAML 1.1 cannot read (tabs, some escapes), and JSON values one after the
    other (JSON Lines: `jq -c '.items[]'`, `kubectl get -o json` run twice into one
    file): the JSON parser's reading, each value a document at its line. Not ``strict``
    (a file not named .json), nothing is added unless all of the text is JSON: False."""
    try:
        documents = _json_documents(entry.display, text, max_nodes)
    except TooManyNodes as exc:
        if strict:
            result.diagnostics.append(_not_read(entry, exc))
        return strict
    if not strict and isinstance(documents[-1], Diagnostic | str):
        return False
    surrogates = SURROGATE_ESCAPE.search(text) is not None
    for doc in documents:
        if isinstance(doc, ParsedDocument):
            _add_document(entry, cluster, doc, result, surrogates)
            continue
        if isinstance(doc, str):  # nested too deep, or a number too long
            limit = number_too_long(text) if "integer" in doc else None
            result.diagnostics.append(Diagnostic(entry.display, limit.line if limit else None,
                                                 f"not read: {limit.message if limit else doc}",
                                                 hint=InputLimitError.hint))
        else:
            result.diagnostics.append(doc)
    return True


_JSON_GAP = re.compile(r"[ \t\n\r]*")


def _json_documents(where: str, text: str, max_nodes: int) -> list[ParsedDocument | Diagnostic | str]:
    """Each JSON value of the text, in order; a value that cannot be read ends the list
    as a Diagnostic (invalid JSON, with its line) or a str (beyond a limit)."""
    try:
        body = load_json(text, max_nodes)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            return [Diagnostic(where, exc.lineno, f"invalid JSON: {exc.msg}",
                               hint="fix the syntax at this line")]
    except TooManyNodes:
        raise
    except ValueError as exc:
        return [str(exc)]
    else:
        return [_json_document(body, 0, 1, 1)]
    decoder = json.JSONDecoder()
    found: list[ParsedDocument | Diagnostic | str] = []
    at = _JSON_GAP.match(text, 0).end()  # type: ignore[union-attr]
    line, counted = 1, 0  # lines counted on from the last value: linear in the text
    while at < len(text):
        line, counted = line + text.count("\n", counted, at), at
        column = at - text.rfind("\n", 0, at)
        try:
            body, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            found.append(Diagnostic(where, exc.lineno, f"invalid JSON: {exc.msg}", hint=(
                "fix the syntax at this line; the JSON values before it were read")))
            break
        except RecursionError:
            found.append(f"nested deeper than Python reads ({sys.getrecursionlimit()} levels)")
            break
        except ValueError as exc:
            found.append(str(exc))
            break
        found.append(_json_document(body, len(found), line, column))
        at = _JSON_GAP.match(text, end).end()  # type: ignore[union-attr]
    return found


def _json_document(body: Any, index: int, line: int, column: int) -> ParsedDocument:
    items = body.get("items") if isinstance(body, dict) else None
    # the JSON parser keeps no positions: a List's entries are placed at the value's start
    positions = [(line, column)] * len(items) if isinstance(items, list) else None
    return ParsedDocument(body, index, line, column, positions)


def _bad_document(entry: Entry, text: str, doc: BadDocument, others: bool) -> Diagnostic:
    """An unrendered template when the document's template actions are what breaks
    it (it parses with them blanked out), invalid YAML otherwise."""
    rest = "; the file's other documents were read" if others else ""
    action = _breaking_action(text, doc)
    if action is not None:
        line = text.count("\n", 0, action.start()) + 1
        return Diagnostic(entry.display, line, f"unrendered Helm template ({action.group(0)!r}) "
                          "makes this document invalid YAML: it was not read",
                          hint="render it first, e.g. `helm template <chart> | hcpscan scan -`, "
                               "or scan the rendered output" + rest)
    error = doc.error
    if "expected <document start>" in error.message or "expected '<document start>'" in error.message:
        return Diagnostic(entry.display, error.line or doc.line,
                          "invalid YAML: a document follows the one before it with no `---` line "
                          "between them (after `...`, or a second JSON value): it was not read",
                          hint="put a line `---` before it" + rest)
    hint = "fix the syntax at this line" + rest
    if _ACTION.search(text, doc.start, doc.end):
        hint += "; if this is a Helm template, render it first (`helm template <chart> | hcpscan scan -`)"
    return Diagnostic(entry.display, error.line or doc.line, f"invalid YAML: {error.message}", hint=hint)


def _breaking_action(text: str, doc: BadDocument) -> re.Match[str] | None:
    first = _ACTION.search(text, doc.start, doc.end)
    if first is None:
        return None
    blanked = _ACTION.sub(lambda m: " " * len(m.group(0)), text[doc.start : doc.end])
    try:
        for _ in parse_documents(blanked):
            pass
    except YamlSyntaxError:
        return None
    return first


def _surrogate(where: str, line: int | None, field: str) -> Diagnostic:
    return Diagnostic(where, line, f"not read: {field} holds a lone UTF-16 surrogate escape "
                      "(\\ud800-\\udfff without its pair), which is no character",
                      hint="fix the escape: a character beyond U+FFFF is written as a pair "
                           "(\\ud83d\\ude00); the file's other documents were read")


def _add_document(entry: Entry, cluster: str, doc: ParsedDocument, result: ParseResult,
                  surrogates: bool = False) -> None:
    """``surrogates``: the text may hold a lone surrogate escape; a document (or List
    item) holding one is refused, as nothing after reading could encode it again."""
    body = doc.body
    if body is None:
        return
    where = entry.display
    listed = isinstance(body, dict) and isinstance(body.get("items"), list) \
        and isinstance(body.get("kind"), str) and body["kind"].endswith("List")
    if surrogates and not listed and (field := lone_surrogate_at(body)) is not None:
        result.diagnostics.append(_surrogate(where, doc.line, field))
        return
    for duplicate in doc.duplicates:
        result.diagnostics.append(Diagnostic(
            where, duplicate.second_line,
            f"duplicate key {duplicate.key!r} (lines {duplicate.first_line} and "
            f"{duplicate.second_line}): kubectl refuses this document; hcpscan read the last value",
            hint="keep one of the two; the value on the earlier line was not checked"))
    typed = insights_typed(entry.parts, body)
    operator = operator_resource(entry.parts, body) if isinstance(body, dict) else None
    unread = insights_unread(entry.parts, body)
    if typed is not None:
        body = typed
    elif operator is not None:
        body = operator
    elif unread:
        result.skipped.append((unread, where))
        return
    elif _other_json(entry, body):
        # API answers and tool output beside the manifests (a must-gather's etcd_info/,
        # monitoring/alerts.json; package.json in a repository): data, not a manifest.
        result.skipped.append(("not a manifest (JSON without kind or apiVersion)", where))
        return
    if not isinstance(body, dict):
        objects = isinstance(body, list) and any(isinstance(i, dict) and "kind" in i for i in body[:100])
        result.diagnostics.append(Diagnostic(where, doc.line,
                                             f"not a Kubernetes object (a {type(body).__name__})",
                                             severity="warning",
                                             hint="a manifest document is a mapping with kind "
                                                  "and apiVersion" + (
                                                      "; put objects in a List: {\"apiVersion\": "
                                                      "\"v1\", \"kind\": \"List\", \"items\": [...]}"
                                                      if objects else "")))
        return
    kind = body.get("kind")
    if kind is None and "ignition" in body:
        result.objects.append(_synthetic(entry, cluster, doc, IGNITION_CONFIG, body))
        return
    if kind is None and _install_config(body):
        result.objects.append(_synthetic(entry, cluster, doc, INSTALL_CONFIG_KIND, body))
        return
    if kind == "Config" and ("clusters" in body or "contexts" in body):
        result.objects.append(_synthetic(entry, cluster, doc, KUBECONFIG, body))
        return
    client_side = _client_side(body)
    if client_side:
        result.skipped.append((f"client-side configuration ({client_side}), not a cluster object",
                               f"{where}:{doc.line}"))
        return
    if kind is None and set(body) <= {"metadata", "status"}:
        # Go renderers emit objects whose TypeMeta was never set as bare metadata
        # (hypershift's PowerVS credential Secrets): nothing to check, but counted.
        result.skipped.append(("typeless stub (metadata only, no kind)", f"{where}:{doc.line}"))
        return
    if _other_yaml(body):
        # Tool configuration beside the manifests of a repository (codecov.yml, Jekyll's
        # _config.yml, Artifact Hub's artifacthub-pkg.yml, Helm values): data, not a manifest.
        result.skipped.append(("not a manifest (YAML without kind or apiVersion)",
                               f"{where}:{doc.line}"))
        return
    if kind is not None and not isinstance(kind, str):
        result.diagnostics.append(Diagnostic(
            where, doc.line, f"kind is {_value_words(kind)}, not a string: the document was not read",
            hint="write the kind as a name: kind: ConfigMap"))
        return
    if not isinstance(kind, str) or not kind:
        misspelt = next((k for k in body if isinstance(k, str) and k != "kind"
                         and k.strip(" \ufeff").lower() == "kind"), None)
        result.diagnostics.append(Diagnostic(
            where, doc.line, "document has no 'kind'" + (
                f" (it has {misspelt!r}: field names are case-sensitive)" if misspelt else ""),
            hint="it is written as an object (apiVersion, metadata or spec): add its kind; "
                 "if it is a template's or patch's input, scan the rendered manifests instead"))
        return
    items = body.get("items")
    if (kind == "List" or kind.endswith("List")) and "items" in body and not isinstance(items, list):
        if items is None:
            return  # an empty list, as `kubectl get -o yaml` writes it
        result.diagnostics.append(Diagnostic(where, doc.line,
                                             f"{kind}: items is a {type(items).__name__}, not a list",
                                             hint="a List holds its objects under items: [...]"))
        return
    if (kind == "List" or kind.endswith("List")) and isinstance(items, list):
        default_api = body.get("apiVersion", "v1")
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                result.diagnostics.append(Diagnostic(where, _location(entry, doc, i).line,
                                                     f"items[{i}] is not an object",
                                                     hint="each entry of items must be a mapping "
                                                          "with kind, apiVersion and metadata"))
                continue
            inner = item.get("kind")
            if isinstance(inner, str) and (inner == "List" or (inner.endswith("List") and "items" in item)):
                result.diagnostics.append(Diagnostic(
                    where, _location(entry, doc, i).line,
                    f"items[{i}] is itself a {inner}: a List inside a List is not read",
                    hint="move its items into the outer List's items (kubectl get -o yaml "
                         "writes one List)"))
                continue
            if surrogates and (field := lone_surrogate_at(item)) is not None:
                result.diagnostics.append(_surrogate(where, _location(entry, doc, i).line,
                                                     f"items[{i}].{field}"))
                continue
            if "kind" not in item and kind != "List":
                # Typed lists (PodList) may omit kind/apiVersion on their items.
                item = {"kind": kind[: -len("List")], "apiVersion": default_api, **item}
            _add_object(entry, cluster, item, _location(entry, doc, i), result)
        return
    _add_object(entry, cluster, body, _location(entry, doc), result)


# API groups of configuration files tools read on a workstation, never applied to a cluster:
# oc-mirror's ImageSetConfiguration, kind's cluster config, kubeadm's config file (which holds
# the KubeletConfiguration and KubeProxyConfiguration documents kubeadm hands on beside its own).
_CLIENT_SIDE_GROUPS = {"mirror.openshift.io": "read by oc-mirror", "kind.x-k8s.io": "read by kind",
                       "kubeadm.k8s.io": "read by kubeadm",
                       "kubelet.config.k8s.io": "read by the kubelet, or kubeadm",
                       "kubeproxy.config.k8s.io": "read by kube-proxy, or kubeadm"}


def _client_side(body: dict[str, Any]) -> str:
    api, kind = body.get("apiVersion"), body.get("kind")
    if not isinstance(api, str) or not isinstance(kind, str):
        return ""
    tool = _CLIENT_SIDE_GROUPS.get(api.partition("/")[0]) if "/" in api else None
    return f"{kind}, {tool}" if tool else ""


# An Insights Operator archive keeps the cluster's config objects as JSON without TypeMeta
# (config/proxy.json ...) and gathered objects under config/<resource>/<namespace>/<name>.json.
# (hcpscan.sources.insights describes the whole layout and what is read.)
_INSIGHTS_CONFIG = {"proxy.json": "Proxy", "network.json": "Network",
                    "infrastructure.json": "Infrastructure"}
_INSIGHTS_RESOURCES = {"pod": ("v1", "Pod"), "pods": ("v1", "Pod")}
_INSIGHTS_CLUSTER_RESOURCES = {"node": ("v1", "Node")}
# Cluster config objects the archive holds that no rule reads: passed over, saying which.
_INSIGHTS_UNREAD = {"ingress.json": "Ingress", "authentication.json": "Authentication",
                    "featuregate.json": "FeatureGate", "apiserver.json": "APIServer",
                    "image.json": "Image", "oauth.json": "OAuth"}


def insights_unread(parts: tuple[str, ...], body: Any) -> str:
    """Why an Insights archive's config object is passed over ('' when it is none)."""
    if not isinstance(body, dict) or "kind" in body or len(parts) < 2 or parts[-2] != "config" \
            or parts[-1] not in _INSIGHTS_UNREAD:
        return ""
    return (f"Insights archive: config.openshift.io {_INSIGHTS_UNREAD[parts[-1]]} 'cluster', "
            "which no rule reads")


def insights_typed(parts: tuple[str, ...], body: Any) -> dict[str, Any] | None:
    """An Insights archive document given the kind its path states; None when it is none."""
    if not isinstance(body, dict) or "kind" in body or "config" not in parts[:-1]:
        return None
    at = len(parts) - 1 - parts[::-1].index("config")
    rest = parts[at + 1:]
    meta = body.get("metadata")
    if len(rest) == 1 and rest[0] in _INSIGHTS_CONFIG and isinstance(body.get("spec"), dict):
        name = meta.get("name") if isinstance(meta, dict) else None
        if name not in (None, "cluster"):
            return None
        return {"apiVersion": "config.openshift.io/v1", "kind": _INSIGHTS_CONFIG[rest[0]],
                **body, "metadata": {**(meta or {}), "name": "cluster"}}
    if len(rest) == 3 and rest[0] in _INSIGHTS_RESOURCES and rest[2].endswith(".json") \
            and isinstance(body.get("spec"), dict):
        api, kind = _INSIGHTS_RESOURCES[rest[0]]
        meta = dict(meta) if isinstance(meta, dict) else {}
        meta.setdefault("namespace", rest[1])
        meta.setdefault("name", rest[2].removesuffix(".json"))
        return {"apiVersion": api, "kind": kind, **body, "metadata": meta}
    if len(rest) == 2 and rest[0] in _INSIGHTS_CLUSTER_RESOURCES and rest[1].endswith(".json") \
            and isinstance(body.get("spec"), dict):
        api, kind = _INSIGHTS_CLUSTER_RESOURCES[rest[0]]
        meta = dict(meta) if isinstance(meta, dict) else {}
        meta.setdefault("name", rest[1].removesuffix(".json"))
        return {"apiVersion": api, "kind": kind, **body, "metadata": meta}
    return None


def _install_config(body: dict[str, Any]) -> bool:
    """OpenShift's install-config.yaml: ``apiVersion: v1`` and no kind, with the fields
    the installer requires (baseDomain, platform)."""
    return body.get("apiVersion") == "v1" and "baseDomain" in body and "platform" in body


def _value_words(value: Any) -> str:
    """A value of the wrong type, as a message says it: ``true (a boolean)``."""
    kind = ("a boolean" if isinstance(value, bool) else "a number" if isinstance(value, (int, float))
            else "a set (!!set)" if isinstance(value, (set, frozenset)) else "a mapping"
            if isinstance(value, dict) else "a list" if isinstance(value, list)
            else f"a {type(value).__name__}")
    said = json.dumps(value) if isinstance(value, (bool, int, float)) else ""
    return f"{said} ({kind})" if said else kind


def _other_json(entry: Entry, body: Any) -> bool:
    if not entry.display.endswith(".json"):
        return False
    if isinstance(body, list):  # data, unless it holds objects (then said, as for YAML)
        return not any(isinstance(item, dict) and "kind" in item for item in body[:100])
    return isinstance(body, dict) and not {"kind", "apiVersion", "ignition"} & set(body)


# Top-level keys only an object has: a document holding one means to be a manifest.
_OBJECT_KEYS = frozenset({"metadata", "spec"})
_TYPE_KEYS = frozenset({"kind", "apiversion", "api_version"})


def _other_yaml(body: dict[str, Any]) -> bool:
    """A mapping with neither ``apiVersion`` nor ``kind`` and nothing of an object (no
    ``metadata``/``spec``, no misspelt ``Kind``/``apiversion``) is some other tool's file."""
    for key in body:
        if not isinstance(key, str):
            continue
        if key in _OBJECT_KEYS or key.strip(" \ufeff").lower() in _TYPE_KEYS:
            return False
    return True


def _add_object(entry: Entry, cluster: str, body: dict[str, Any], loc: SourceLocation,
                result: ParseResult) -> None:
    kind = body.get("kind")
    if not isinstance(kind, str) or not kind:
        result.diagnostics.append(Diagnostic(loc.path, loc.line, "object has no 'kind'",
                                             hint="add kind and apiVersion"))
        return
    meta = mapping_at(body, "metadata")
    for field in ("name", "namespace", "generateName"):
        value = meta.get(field)
        if value is not None and not isinstance(value, str):
            # `name: on` is true, `namespace: no` false in YAML 1.1: kubectl and the API
            # server refuse such an object (a name is a string); never read as 'True' or ''
            result.diagnostics.append(Diagnostic(
                loc.path, loc.line, f"{kind}: metadata.{field} is {_value_words(value)}, not a "
                "string: the API server rejects this object, so it was not read",
                hint=f"quote it ({field}: \"on\"): YAML 1.1 reads on, off, yes and no as "
                     "booleans and digits as numbers"))
            return
    if "metadata" in body and not isinstance(body["metadata"], dict):
        result.diagnostics.append(Diagnostic(loc.path, loc.line,
                                             f"{kind}: metadata is a {type(body['metadata']).__name__}, "
                                             "not a mapping", "warning",
                                             "write metadata: {name: ..., namespace: ...}"))
    name = meta.get("name") or meta.get("generateName") or ""
    if not name:
        result.diagnostics.append(Diagnostic(loc.path, loc.line, f"{kind} has no metadata.name",
                                             "warning", "name the object; rules report objects "
                                                        "by namespace and name"))
    api = body.get("apiVersion")
    if not isinstance(api, str) or not api:
        result.diagnostics.append(Diagnostic(loc.path, loc.line, f"{kind} {name!s} has no 'apiVersion'",
                                             severity="warning", hint="add apiVersion"))
        api = ""
    ns = meta.get("namespace") or ""
    result.objects.append(K8sObject(cluster, api, kind, str(ns), str(name), body, loc))


def _synthetic(entry: Entry, cluster: str, doc: ParsedDocument, kind: str,
               body: dict[str, Any]) -> K8sObject:
    name = entry.parts[-1] if entry.parts else entry.display
    if kind == KUBECONFIG and isinstance(body.get("current-context"), str) and body["current-context"]:
        name = f"{name}:{body['current-context']}"
    return K8sObject(cluster, HCPSCAN_API, kind, "", name, body, _location(entry, doc))


def _parse_dropin(entry: Entry, cluster: str, text: str, result: ParseResult) -> None:
    unit = systemd.parse_unit(text, systemd.dropin_unit("/".join(entry.parts) or entry.display))
    if "Service" not in unit.sections:
        result.diagnostics.append(Diagnostic(entry.display, None,
                                             "a .conf file without a [Service] section",
                                             severity="info",
                                             hint="only systemd drop-ins are read from .conf files"))
        return
    for line, message in unit.problems:
        result.diagnostics.append(Diagnostic(entry.display, line, message, severity="warning",
                                             hint="quote each whole assignment: "
                                                  'Environment="NAME=value"'))
    body = {"path": systemd.unit_relative(entry.display, "/".join(entry.parts)), **unit.to_body()}
    loc = SourceLocation(entry.display, unit.sections["Service"], 1, entry.file, entry.member)
    name = "/".join(entry.parts[-2:]) if len(entry.parts) > 1 else entry.parts[-1]
    result.objects.append(K8sObject(cluster, HCPSCAN_API, SYSTEMD_DROPIN, "", name, body, loc))
