"""Finding a field's own line in the user's file, after loading kept no parse trees.

A finding or an evidence line needs one of a document's fields. Most objects of
a dump are entries of large Lists (a namespace's pods.yaml is half a megabyte),
so an entry is read on its own: its lines run from where it starts to the first
line indented less than it. Plain block-style entries are read off those lines
(``entrylines``: exact, or "do not know"); any other is composed again (with
positions) by PyYAML. The entry's keys must be the object's, or its document is
composed as before; recent results are kept, since findings cluster in a few files.

The cost of a finding must not grow with the input: a document of a
multi-document file is composed from its own lines (where each document starts
and ends is found once per file), never by composing every document before it;
and an archive member's bytes are those loading read and kept (``MemberReader``):
the archive is not streamed again, or, past what is kept, once more for all findings.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import yaml

from hcpscan.core.textcodec import UTF8, decode_text, sniff_encoding
from hcpscan.core.yamldocs import compose_document, document_spans, locate_in
from hcpscan.inventory.fieldpath import Step
from hcpscan.inventory.objects import SourceLocation

# Line breaks of YAML 1.1 besides "\n" (and "\r\n"): with them in a file, lines are
# not cut out of it, the whole document is composed.
_OTHER_BREAKS = ("\x85", "\u2028", "\u2029")
# Keys a typed List's items may lack and loading adds (kind, apiVersion of PodList items).
_ADDED_KEYS = {"kind", "apiVersion"}
# Answers kept (a few tuples each); a scan's findings and evidence ask a few thousand.
_ANSWERS_KEPT = 100_000


# Reads an archive member's bytes: (archive file, member) -> bytes, or None. The sources
# stage provides it (sources.walk.ArchiveMembers); the inventory does not open archives.
MemberReader = Callable[[str, str], "bytes | None"]


class Locator:
    def __init__(self, read_member: MemberReader | None = None) -> None:
        self._texts: OrderedDict[tuple[str, str | None], tuple[bytes | None, list[str] | None]] = \
            OrderedDict()
        self._nodes: OrderedDict[tuple, tuple[Any, int] | None] = OrderedDict()
        self._spans: OrderedDict[tuple[str, str | None], list[tuple[int, str]] | None] = \
            OrderedDict()
        self._read_member = read_member
        # (source, steps, id(body)) -> (body, answer): the rules ask the same field of an
        # object again after its entry left the few composed nodes kept (each rule walks
        # every hosted cluster); the body is held so its id is not reused
        self._answers: dict[tuple[SourceLocation, tuple[Step, ...], int],
                            tuple[Any, tuple[int, int] | None]] = {}

    def field(self, source: SourceLocation, body: Any,
              steps: tuple[Step, ...]) -> tuple[int, int] | None:
        """(line, column) of the field, or of its nearest present parent."""
        key = (source, steps, id(body))
        known = self._answers.get(key)
        if known is not None and known[0] is body:
            return known[1]
        found = self._field(source, body, steps)
        if len(self._answers) < _ANSWERS_KEPT:
            self._answers[key] = (body, found)
        return found

    def _field(self, source: SourceLocation, body: Any,
               steps: tuple[Step, ...]) -> tuple[int, int] | None:
        if source.item_index is not None:
            found = self._cached(("item", source.file, source.member, source.doc_index,
                                  source.item_index), lambda: self._read_item(source, body))
            if found is not None:
                node, offset = found
                if isinstance(node, dict):  # read off the entry's lines (entrylines)
                    from hcpscan.inventory.entrylines import locate as locate_read
                    read = locate_read(node, offset, source.column - 1, steps)
                    if read is not None:
                        return read
                    composed = self._compose_item(source, body)  # (an empty item on the way)
                    node = None if composed is None else composed[0]
                # (not found in the entry: its document is composed, as for any entry)
                where = None if node is None else locate_in(node, None, steps)
                if where is not None:
                    return where[0] + offset, where[1]
        whole = source.item_index is None
        found = self._cached(("document", source.file, source.member, source.doc_index, whole),
                             lambda: self._read_document(source) if whole
                             else self._compose_document(source))
        if found is None:
            return None
        if isinstance(found[0], dict):  # read off the document's lines (entrylines)
            from hcpscan.inventory.entrylines import locate as locate_read
            read = locate_read(found[0], found[1], 0, steps)
            if read is not None:
                return read
            found = self._compose_document(source)  # (an empty item on the way)
            if found is None:
                return None
        where = locate_in(found[0], source.item_index, steps)
        return None if where is None else (where[0] + found[1], where[1])

    def _cached(self, key: tuple, compose: Callable[[], tuple[Any, int] | None]) -> tuple[Any, int] | None:
        if key in self._nodes:
            self._nodes.move_to_end(key)
            return self._nodes[key]
        found = compose()
        self._nodes[key] = found
        if len(self._nodes) > 64:
            self._nodes.popitem(last=False)
        return found

    def _read_document(self, source: SourceLocation) -> tuple[Any, int] | None:
        """The document's position tree read off its lines (``entrylines``) and the line
        (0-based) of its first key, else its composed node (``_compose_document``)."""
        _, lines = self._text(source)
        spans = None if lines is None else self._document_spans(source, lines)
        if spans is not None and source.doc_index < len(spans):
            first_line, text = spans[source.doc_index]
            from hcpscan.inventory.entrylines import read_document
            read = read_document(text, first_line)
            if read is not None:
                return read
        return self._compose_document(source)

    def _compose_document(self, source: SourceLocation) -> tuple[Any, int] | None:
        """The document's node and the line its text starts after: composed from its
        own lines when the file's documents could be told apart, else from the file."""
        data, lines = self._text(source)
        if data is None:
            return None
        spans = self._document_spans(source, lines)
        if spans is not None and source.doc_index < len(spans):
            first_line, text = spans[source.doc_index]
            node = compose_document(text, 0)
            if node is not None:
                return node, first_line
        wide = sniff_encoding(data)[0] != UTF8  # UTF-16/32: composed from its text
        node = compose_document(decode_text(data, "replace") if wide else data, source.doc_index)
        return None if node is None else (node, 0)

    def _document_spans(self, source: SourceLocation, lines: list[str] | None
                        ) -> list[tuple[int, str]] | None:
        """Each document's first line (0-based) and text, found once per file."""
        key = (source.file, source.member)
        if key not in self._spans:
            self._spans[key] = None if lines is None else _documents_of("".join(lines))
            if len(self._spans) > 64:
                self._spans.popitem(last=False)
        return self._spans[key]

    def _read_item(self, source: SourceLocation, body: Any) -> tuple[Any, int] | None:
        """The entry's position tree read off its lines (``entrylines``), else its
        composed node; and its first line (0-based)."""
        start = self._entry_start(source, body)
        if start is None:
            return None
        lines, first, indent = start
        from hcpscan.inventory.entrylines import read_entry  # (its patterns: when first asked)
        tree = read_entry(lines, first, indent)
        if tree is None:
            return self._compose_item(source, body)
        return (tree, first) if _keys_fit(set(tree), body) else None

    def _compose_item(self, source: SourceLocation, body: Any) -> tuple[Any, int] | None:
        cut = self._entry_lines(source, body)
        if cut is None:
            return None
        lines, first, end, indent = cut
        snippet = " " * indent + lines[first][indent:] + "".join(lines[first + 1 : end])
        node = compose_document(snippet, 0)
        if not isinstance(node, yaml.MappingNode):
            return None
        keys = {key.value for key, _ in node.value if isinstance(key, yaml.ScalarNode)}
        return (node, first) if _keys_fit(keys, body) else None

    def _entry_lines(self, source: SourceLocation, body: Any
                     ) -> tuple[list[str], int, int, int] | None:
        """The file's lines, and where the entry's run: its first line, the line after its
        last (the first line indented less than it) and its column (0-based)."""
        start = self._entry_start(source, body)
        if start is None:
            return None
        lines, first, indent = start
        return lines, first, entry_end(lines, first, indent), indent

    def _entry_start(self, source: SourceLocation, body: Any) -> tuple[list[str], int, int] | None:
        """The file's lines, and the entry's first line and column (0-based), where an
        object's entry can start there."""
        _, lines = self._text(source)
        if lines is None or not isinstance(body, dict):
            return None
        first, indent = source.line - 1, source.column - 1
        if not 0 <= first < len(lines) or len(lines[first]) <= indent:
            return None
        return lines, first, indent

    def _text(self, source: SourceLocation) -> tuple[bytes | None, list[str] | None]:
        key = (source.file, source.member)
        if key in self._texts:
            self._texts.move_to_end(key)
            return self._texts[key]
        data = self._read(source)
        found = (data, None if data is None else _lines(data))
        self._texts[key] = found
        if len(self._texts) > 64:
            self._texts.popitem(last=False)
        return found


    def _read(self, source: SourceLocation) -> bytes | None:
        if not source.file or source.file == "<stdin>":
            return None
        if source.member is not None:
            return self._read_member(source.file, source.member) if self._read_member else None
        try:
            with open(source.file, "rb") as fh:
                return fh.read()
        except OSError:
            return None


def entry_end(lines: list[str], first: int, indent: int) -> int:
    """The line after a List entry starting at ``lines[first]``, column ``indent``: the
    first line with content indented less than it."""
    end = first + 1
    while end < len(lines):
        text = lines[end]
        content = text.lstrip(" ")
        if content.strip() and not content.startswith("#") and len(text) - len(content) < indent:
            break
        end += 1
    return end


def _keys_fit(keys: set[Any], body: dict[Any, Any]) -> bool:
    """The entry's keys are the object's (but those loading adds): else it was not cut
    where it ends."""
    return keys <= set(body) and not set(body) - keys - _ADDED_KEYS


def _documents_of(text: str) -> list[tuple[int, str]] | None:
    if text.startswith("%") or "\n%" in text:
        return None  # directives apply from the top: compose the whole stream
    out, line, counted = [], 0, 0
    for start, end in document_spans(text):
        line += text.count("\n", counted, start)  # only what lies since the last document:
        counted = start                           # once over the file, not once per document
        out.append((line, text[start:end]))
    return out


def _lines(data: bytes) -> list[str] | None:
    """The text's lines (ends kept), or None where PyYAML would count lines otherwise."""
    try:
        text = decode_text(data)  # UTF-8, or UTF-16/32 as a scan reads it
    except UnicodeDecodeError:
        return None
    if any(b in text for b in _OTHER_BREAKS) or text.count("\r") != text.count("\r\n"):
        return None
    return text.splitlines(keepends=True)
