"""The fast path of YAML loading: a Rust parser where it reads exactly what PyYAML reads.

Parsing is most of a large scan, and libyaml's loader builds every value
through Python code. yaml-rs (a YAML 1.2 parser written in Rust) builds the
same data about fifteen times faster. The rest of the scanner is defined by
PyYAML's YAML 1.1 reading (which is also how kubectl reads plain scalars), so
the fast path is taken only where the two provably agree; anything else —
anchors, tags, directives, characters or nesting it might treat differently,
a syntax error, a position it cannot find — returns None and the file goes
through PyYAML, so results and messages never depend on which path ran.

Where they agree, and how that is checked:

* Plain scalars are the one place YAML 1.1 and 1.2 resolve differently
  (``yes``, ``0755``, ``1:20``, ``2e5``...). Every token that could be one is
  read both ways. Hashes such as ``config-hash: 2e848593`` are common in
  dumps (a string in 1.1, a float in 1.2), so a number 1.2 made of such a
  token is put back to the 1.1 value — only when no other token gives that
  same number; every other difference sends the file to PyYAML.
* Duplicate mapping keys make yaml-rs fail (its ``Error`` policy costs nothing
  more than last-wins), so such a file goes to PyYAML, which names both lines;
  so do collections as keys (``{{ .Values.x }}``), which PyYAML refuses.
* Positions (each document's start and each ``items`` entry of a List) are
  found in the text: document markers cannot occur inside scalars, and the
  entries of a block sequence start with ``-`` at one indentation. Found
  entries must match the parsed ones in number, or the file goes to PyYAML.

The text checks and the token search never cross a line break, so what a line
yields is remembered across files (a dump repeats most of its lines: every
replica's container spec, labels, ports) and only lines no earlier file had are
searched; the result is the same as searching each whole file
(tests/sources/test_fast_yaml.py holds it, cold and warm, on every real file).

Where the compiled module is built (``_rebuild.c``), a pure-ASCII text -- most
files -- is read by it instead: the token pre-scan, the List positions and the
document markers in one pass or so over the text's bytes, nothing split out or
remembered. The Python functions here stay the definition and the path for
every other text (tests/sources/test_compiled_tokens.py and
test_compiled_positions.py hold the two equal).
"""

from __future__ import annotations

import functools
import math
import os
import re
import threading
import zlib
from collections.abc import Callable, Iterator
from itertools import chain
from operator import itemgetter
from typing import Any

from hcpscan.core.yamldocs import MAX_DEPTH, ParsedDocument, resolve_plain
from hcpscan.inventory.kept import WHOLE, Keep
from hcpscan.inventory.shapes import ANY_KEY

# yaml-rs allocates through its own mimalloc, which by default commits each arena it
# reserves whole: measured, 8 MiB more resident in every process that parses (the main
# one and each parse worker), for no CPU gained. Read when the library loads; a value the
# user set wins. Set only while it loads: left in the environment it was handed to every
# program started later (kubectl kustomize, exec credential plugins), and to a program
# that imports hcpscan, none of which asked for it.
_EAGER_COMMIT = "MIMALLOC_ARENA_EAGER_COMMIT"
_eager_commit_ours = _EAGER_COMMIT not in os.environ
if _eager_commit_ours:
    os.environ[_EAGER_COMMIT] = "0"
yaml_rs: Any
try:
    import yaml_rs
except ImportError:  # pragma: no cover - an accelerator; PyYAML reads everything without it
    yaml_rs = None
finally:
    if _eager_commit_ours:
        os.environ.pop(_EAGER_COMMIT, None)
if os.environ.get("HCPSCAN_FAST_YAML", "").strip() == "0":  # for comparing the two paths
    yaml_rs = None

AVAILABLE = yaml_rs is not None

# The rebuild of parsed trees compiled (``_rebuild.c``, built by ``pip install`` where a C
# compiler is): the same function as ``_canonical``/``_kept``/``_refusable`` below, which
# stay its definition and the path where it is not built, or was built from another
# source. ``HCPSCAN_COMPILED=0`` takes the Python path, to compare.
_REBUILD_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_rebuild.c")


def _built_from_source_beside(module: Any, source: str = _REBUILD_SOURCE) -> bool:
    """Whether the compiled module was built from the ``_rebuild.c`` beside it, where one
    is: in a checkout or an editable install the module built in place stays when the
    source is edited or pulled, and would then not be the code it stands for any more.
    setup.py stamps it with its source's CRC-32. An installed wheel holds no source."""
    try:
        with open(source, "rb") as handle:
            text = handle.read()
    except OSError:
        return True
    return getattr(module, "SOURCE", None) == zlib.crc32(text)


# What this code calls in the compiled module.
_COMPILED_NAMES = ("configure", "canonical", "kept", "refusable", "scalar_tokens",
                   "item_positions", "document_markers", "spec_bytes")
_compiled: Any = None
if os.environ.get("HCPSCAN_COMPILED", "").strip() != "0":
    try:
        from hcpscan.sources import _rebuild as _compiled
    except ImportError:  # pragma: no cover - no compiler where hcpscan was installed
        _compiled = None
    if _compiled is not None and not _built_from_source_beside(_compiled):
        _compiled = None  # stale: `pip install -e .` builds it again
    if _compiled is not None and not all(hasattr(_compiled, name) for name in _COMPILED_NAMES):
        _compiled = None  # an older build beside no source (a wheel installed over another)


# Where a plain scalar (or a node's anchor, alias, tag or complex key) can start:
# after a mapping key's colon, after a sequence dash, at the start of a line (keys),
# and inside flow collections. Each pattern starts with a literal so the regex engine skips ahead
# quickly; the token runs to the next blank or flow indicator.
_FIRST = r"([-+._0-9yYnNoO<=~&*!?%][^ \t\r\n,\[\]{}]*)"
_AFTER_COLON = re.compile(r":[ \t]+" + _FIRST)
_AFTER_DASH = re.compile(r"-(?=[ \t]+" + _FIRST + ")")  # a lookahead: "- - x" is two starts
_LINE_START = re.compile(r"\n[ \t]*" + _FIRST)
_IN_FLOW = tuple(re.compile(start + r"[ \t]*" + _FIRST) for start in (r"\[", r"\{", ",", '":', "':"))
# The same two patterns matching only tokens ``_token`` may keep: not other words, not a
# lone "-" or "---" (a sequence's dash), for searching lines no earlier file had. They
# find the same of those as the patterns above: neither goes on from inside a token (a
# line start never is; the dash's match is the dash). Blanks are taken possessively
# (a token never starts with one: giving them back would try once per blank).
_MAY_MATTER = (r"(?=(?:[yY]es|YES|[nN]o|NO|[oO]n|ON|[oO]ff|OFF):*(?![^ \t\r\n,\[\]{}])"
               r"|[+._0-9<=~&*!?%]|-(?!(?:--)?:*(?![^ \t\r\n,\[\]{}])))")
_AFTER_DASH_MAY_MATTER = re.compile(r"-(?=[ \t]++" + _MAY_MATTER + _FIRST + ")")
_LINE_START_MAY_MATTER = re.compile(r"\n[ \t]*+" + _MAY_MATTER + _FIRST)
# Inside flow collections (where the scan also sees into quoted strings) anchors,
# aliases and tags count only with a name PyYAML would accept: "[*)" in a shell case
# pattern or "[!.]*" in a glob is text.
_ANCHOR_NAME = re.compile(r"[0-9A-Za-z_\-!]")
_FLOW_OPEN = re.compile(r"\[(?!\])|\{(?!\})")  # a flow collection that is not "[]" or "{}"
_BLOCK_HEADERS = tuple(re.compile(indicator + r"[-+0-9]*[ \t]*(?:#[^\n]*)?\r?\n") for indicator in (r"\|", ">"))
# What PyYAML refuses and yaml-rs reads: a tab where indentation or a separator after
# "-" is expected; collection keys; a flow key without a value; a root block scalar
# (its text may start at column 0); surrogate pairs written as escapes.
# Each starts with a literal, so the regex engine skips ahead quickly.
_TABBED = re.compile(r"\n[ ]*(?:-\t|\t)")
_NOT_1_1 = (re.compile(r"\][ \t]*:(?:[ \t]|$)", re.M),
            re.compile(r"\}[ \t]*:(?:[ \t]|$)", re.M), re.compile(r"--- *[|>]"),
            re.compile(r"\\u[dD][89abAB]"))
_NOT_1_1_TEXT = re.compile(r":[\]},]")  # one pass, not three
# Block nesting costs at least one column of indentation or "- " per level, so lines
# indented less than this cannot nest deeper than MAX_DEPTH without flow brackets, and
# yaml-rs refuses flow nesting past a few hundred levels by itself.
_DEEP = re.compile(r"\n[ \t?\-]{%d}" % MAX_DEPTH)
# Characters PyYAML refuses, line breaks of YAML 1.1 only, byte-order marks in a stream.
_UNUSUAL = re.compile(r"[^\x09\x0A\x0D\x20-\x7E\xA0-\u2027\u202A-\uD7FF\uE000-\uFEFE\uFF00-\uFFFD"
                      r"\U00010000-\U0010FFFF]")
_PRINTABLE_ASCII = b"\t\n\r" + bytes(range(0x20, 0x7F))
# Plain words YAML 1.1 reads as booleans and YAML 1.2 as strings.
_BOOLEANS_1_1 = frozenset("yes Yes YES no No NO on On ON off Off OFF".split())

_MEMO_LIMIT = 200_000
_SHARED_LENGTH = 64
# Both readings of the tokens met (a dump has a few thousand distinct ones: 6,160 at
# N = 100, 3,429 in all of ../shared/realworld, none longer than 184 characters), bounded
# in number and in length: at most ~50,000 x 256 characters, whatever the input holds.
_READINGS_LIMIT = 50_000
_TOKEN_LENGTH = 256
_readings: dict[str, tuple[Any, Any] | None] = {}
# Tokens whose two readings are the same value of the same type: a file holding only
# these needs no restoration, which a set difference tells without a call per token.
_agreeing: set[str] = set()
# The agreeing tokens that are numbers, by (type, value): a number a differing token
# gives cannot be put back when an agreeing token of the same file gives it too, which an
# intersection with the file's tokens tells without reading every token of the file.
_agreeing_numbers: dict[tuple[type, Any], set[str]] = {}


# What to keep of a parsed object: its kind's keep (``inventory/kept.py``) when its body may
# be pruned, else None.
KeepOf = Callable[[dict[Any, Any]], "Keep | None"]


def fast_documents(text: str, keep_of: KeepOf | None = None,
                   pruned: set[int] | None = None) -> list[ParsedDocument] | None:
    """Every document of the stream as ``parse_documents`` gives them, or None when
    the fast path cannot vouch for the result.

    With ``keep_of``, an object (a document, or an entry of a List's ``items``) it
    gives a keep for is built already pruned to it, and its body's ``id`` added to
    ``pruned``: the fields left out are never built. That is taken only when the text
    parts left out are still looked through for what the whole rebuild refuses (a
    collection as a key, nesting past ``MAX_DEPTH``), so the same files go to PyYAML."""
    if yaml_rs is None:
        return None
    tokens = _tokens(text)
    restore = None if tokens is None else _restorations(tokens)
    if restore is None:
        return None
    try:
        docs = _documents(text)
    except _NotFast:
        return None
    if len(_strings) > _MEMO_LIMIT:
        _strings.clear()
    try:
        for doc in docs:
            if keep_of is not None and pruned is not None:
                doc.body = _built(doc.body, keep_of, pruned, restore)
            else:
                doc.body = _whole(doc.body, restore, 0)
    except (RecursionError, _NotFast):
        return None  # deeper than MAX_DEPTH: PyYAML's reading says where
    return docs


class _NotFast(Exception):
    pass


def forget(strings_only: bool = False) -> None:
    """Drop what is remembered across files (lines, strings, readings): a load calls it
    when done, so the memos are not alive through the rest of a scan. A parse worker
    drops the strings before each batch: what it sends is pickled a batch at a time, so
    a string is one object in the main process only within a batch anyway, and the
    strings of earlier batches would stay alive in the worker for nothing."""
    _strings.clear()
    if strings_only:
        return
    with _lines_lock:
        _clean_lines.clear()
        _line_tokens.clear()
    _readings.clear()
    _agreeing.clear()
    _agreeing_numbers.clear()


def _plain_text(text: str) -> bool:
    """No directives, document-end markers, deep nesting (the Rust parser recurses)
    or characters the two parsers treat differently: what the whole text tells, and
    the first line. Every later line is looked at by ``_plain_lines``."""
    if text.startswith(("%", "...")):
        return False
    if text and not text.endswith("\n"):
        return False  # a block scalar ending the input is chomped differently
    first = text[:text.find("\n") + 1]  # with its line break
    if "\r" in first[:-2]:
        return False  # a lone carriage return: a line break to PyYAML, not to our line count
    if "\t" in text and text.startswith(("\t", "-\t")):
        return False
    if _NOT_1_1_TEXT.search(first) or any(pattern.search(first) for pattern in _NOT_1_1):
        return False
    if _DEEP.search("\n" + first):
        return False
    if text.isascii():
        return not text.encode("ascii").translate(None, _PRINTABLE_ASCII)
    return _UNUSUAL.search(text) is None


def _plain_lines(joined: str) -> bool:
    """``_plain_text``'s checks of lines after a line break, on lines joined as
    ``"\\n" + "\\n".join(lines) + "\\n"`` (each check is one line's)."""
    if "\n%" in joined or "\n..." in joined:
        return False
    if "\r" in joined and joined.count("\r") != joined.count("\r\n"):
        return False  # lone carriage returns: line breaks to PyYAML, not to our line count
    if "\t" in joined and _TABBED.search(joined):
        return False
    if _NOT_1_1_TEXT.search(joined) or any(pattern.search(joined) for pattern in _NOT_1_1):
        return False
    return _DEEP.search(joined) is None


# Lines already looked at, across files (a dump repeats most of its lines: labels, ports,
# container specs of every replica): each passed ``_plain_lines``, and ``_line_tokens``
# holds, for those that have any, the tokens ``_token`` keeps of what the patterns find
# on the line, block ones and flow ones. Nothing a line yields depends on its file: the
# patterns never cross a line break. Bounded, as the other memos are: in lines, and in
# their length (a long line -- a one-line JSON value, a certificate, an annotation -- is
# hardly ever repeated, and kept it would hold the input's text alive through the load:
# 600 ConfigMaps with one 100 kB value each took the load from 91 to 141 MiB).
_LINES_LIMIT = 16_000
_LINE_LENGTH = 512
# A file larger than this is searched whole, as one text, not line by line: its lines as
# separate strings, and the sets of them, cost several times the text (a 52 MB ConfigMap
# of one block scalar: 653 MiB peak line by line, 294 MiB whole) for lines so many that
# the memo could not keep them anyway (1 MiB: the pre-scan of a dump at parity with
# 4 MiB, where a real must-gather's largest files, 1.3-3.4 MB, were as fast or faster whole).
_WHOLE_TEXT = 1 << 20
_clean_lines: set[str] = set()
_line_tokens: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
_lines_lock = threading.Lock()


def _tokens(text: str) -> set[str] | None:
    """``_scalar_tokens``, compiled where it is built and the text is pure ASCII (most
    files): one pass over the text's bytes, no line split out or remembered. Python's
    patterns and str methods on other characters are the Python code's to answer."""
    if _compiled is not None and text.isascii():
        found = _compiled.scalar_tokens(text)
        if found is not False:  # False: tokens made to collide in its table (a crafted
            return found  # text), which the definition reads
    return _scalar_tokens(text)


def _scalar_tokens(text: str) -> set[str] | None:
    """Tokens that may be plain scalars YAML 1.1 and 1.2 read differently, or None if
    the text is not plain (``_plain_text``), or uses anchors, aliases, tags, complex keys
    or empty block scalars. Block scalars (scripts, embedded configuration) are text, not
    structure, and are not looked into.

    What the patterns find is the same as running each over the whole text; only lines
    no earlier file had are searched (a file above ``_WHOLE_TEXT`` is searched whole)."""
    if not _plain_text(text):
        return None
    if len(text) > _WHOLE_TEXT:
        return _whole_text_tokens(text)
    lines = text.split("\n")
    later = set(lines[1:])  # the first line is not after a line break: it is looked at apart
    spans = _structure(text)
    with _lines_lock:  # the memo is read and written as one step (a clear between would lose tokens)
        if len(_clean_lines) > _LINES_LIMIT:
            _clean_lines.clear()
            _line_tokens.clear()
        new = later.difference(_clean_lines)
        fresh: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        if new:
            joined = "\n" + "\n".join(new) + "\n"
            if not _plain_lines(joined):
                return None
            fresh = _tokens_by_line(joined)
            if len(new) <= _LINES_LIMIT:  # a file of more new lines than that: not kept
                if max(map(len, new)) > _LINE_LENGTH:  # long lines: read from this file only
                    new = {line for line in new if len(line) <= _LINE_LENGTH}
                    _line_tokens.update({line: fresh.pop(line) for line in new & fresh.keys()})
                else:
                    _line_tokens.update(fresh)
                    fresh = {}
                _clean_lines.update(new)
        if spans is None:
            return None
        counted = later if len(spans) == 1 else set(_lines_in(text, lines, spans))
        found = list(map(_line_tokens.__getitem__, _line_tokens.keys() & counted))  # C loops
        found += map(fresh.__getitem__, fresh.keys() & counted)
    block = set(chain.from_iterable(map(itemgetter(0), found)))
    flow = set(chain.from_iterable(map(itemgetter(1), found)))
    first_end = len(lines[0])  # the first line: what the patterns find on it, and line
    for pattern in (_AFTER_COLON, _AFTER_DASH):  # starts in the first 200 characters
        block.update(_found(pattern, text, None, 0, first_end))
    block.update(_found(_LINE_START, "\n" + text[:200], None))
    if _FLOW_OPEN.search(text) is None:
        flow.clear()
    else:
        for pattern in _IN_FLOW:
            flow.update(_found(pattern, text, _ANCHOR_NAME, 0, first_end))
    tokens = block | flow
    if "" in tokens:
        return None  # an anchor, an alias, a tag, a complex key
    return tokens


def _whole_text_tokens(text: str) -> set[str] | None:
    """``_scalar_tokens`` of a plain text, each pattern run over the text itself (the
    search the line memo stands in for): no line is split out or remembered."""
    if not _plain_lines(text):  # the lines after the first: each check is one line's
        return None
    spans = _structure(text)
    if spans is None:
        return None
    tokens: set[str] = set()
    in_flow = _FLOW_OPEN.search(text) is not None
    for start, end in spans:
        tokens |= _found(_AFTER_COLON, text, None, start, end)
        tokens |= _found(_AFTER_DASH, text, None, start, end)
        tokens |= _found(_LINE_START, text, None, max(start - 1, 0), end)
        for pattern in _IN_FLOW if in_flow else ():
            tokens |= _found(pattern, text, _ANCHOR_NAME, start, end)
    tokens |= _found(_LINE_START, "\n" + text[:200], None)
    if "" in tokens:
        return None  # an anchor, an alias, a tag, a complex key
    return tokens


def _token(found: str, names: re.Pattern[str] | None) -> str | None:
    """What a token found by the patterns stands for: itself (a key without its colon)
    when it may read differently, "" for an anchor, alias, tag or complex key (``names``:
    what an anchor's name must start with where one counts only with a name), None
    when it cannot matter (a word, a sequence's dash)."""
    token = found.rstrip(":") or found  # a key
    first = token[0]
    if first in "&*!" and len(token) > 1 and (names is None or names.match(token, 1)):
        return ""  # an anchor, an alias, a tag
    if token == "?":
        return ""  # a complex key
    if first.isalpha():
        return token if token in _BOOLEANS_1_1 else None
    if first not in "&*!?%" and token not in ("-", "---"):
        return token
    return None


# What ends a plain scalar after a token: blanks, then a comment, a value indicator (":"
# before a blank or the line's end), a flow indicator or the line's end. A token followed
# by anything else is the first word of a longer scalar ("message: no nodes available"),
# read as a string either way -- unless it may begin a YAML 1.1 timestamp, the one implicit
# type with blanks inside ("2001-12-14 21:59:43.10 -5", "2001-12-14t21:59:43.10 -05:00"):
# a token starting with a date always counts. Never past the line's end, as the patterns.
_SCALAR_END = re.compile(r"[ \t]*(?:#|:(?![^ \t\r\n])|[,\]}]|\r?\n|\r?\Z)")
_DATE_START = re.compile(r"[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?")


def _whole_scalar(found: str, text: str, end: int) -> bool:
    """Whether the token ``found`` (ending at ``end`` in ``text``) may be a whole plain
    scalar or key, not the first word of a longer one."""
    return (found[-1] == ":" or _SCALAR_END.match(text, end) is not None
            or _DATE_START.match(found) is not None)


def _found(pattern: re.Pattern[str], text: str, names: re.Pattern[str] | None,
           start: int = 0, end: int | None = None) -> set[str]:
    """The tokens ``_token`` keeps of what ``pattern`` finds in ``text[start:end]``, each a
    whole scalar (``_whole_scalar``); anchors, aliases, tags and complex keys ("") always."""
    kept: set[str] = set()
    for match in pattern.finditer(text, start, len(text) if end is None else end):
        found = match.group(1)
        token = _token(found, names)
        if token is None or (token and not _whole_scalar(found, text, match.end(1))):
            continue
        kept.add(token)
    return kept


def _tokens_by_line(joined: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """The tokens that matter of each line of ``joined`` (``_plain_lines``' form)."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    for patterns, names, slot in (((_AFTER_COLON, _AFTER_DASH_MAY_MATTER, _LINE_START_MAY_MATTER), None, 0),
                                  (_IN_FLOW, _ANCHOR_NAME, 1)):
        for pattern in patterns:
            for match in pattern.finditer(joined):
                token = _token(match.group(1), names)
                if token is None or (token and not _whole_scalar(match.group(1), joined, match.end(1))):
                    continue
                at = match.start(1)
                line = joined[joined.rfind("\n", 0, at) + 1 : joined.find("\n", at)]
                found.setdefault(line, ([], []))[slot].append(token)
    return {line: (tuple(block), tuple(flow)) for line, (block, flow) in found.items()}


def _lines_in(text: str, lines: list[str], spans: list[tuple[int, int]]) -> Iterator[str]:
    """The lines after the first that the spans (each from the start or a line break, to
    after a line break or the end) hold."""
    counted = 0  # line breaks before ``at``
    at = 0
    slices = []
    for start, end in spans:
        counted += text.count("\n", at, start)
        first = counted + 1 if start else 1  # a span after the start starts at a line break
        counted += text.count("\n", start, end)
        at = end
        slices.append(lines[first:counted])
    return chain.from_iterable(slices)


def _structure(text: str) -> list[tuple[int, int]] | None:
    """Spans of the text outside block scalars' content; None if a block scalar is
    empty (yaml-rs reads it as a newline, PyYAML as nothing)."""
    headers = sorted((m for pattern in _BLOCK_HEADERS for m in pattern.finditer(text)),
                     key=lambda m: m.start())
    spans: list[tuple[int, int]] = []
    pos = 0
    for header in headers:
        if header.start() < pos:
            continue  # inside the content of an earlier block scalar
        before = header.start() - 1
        while before >= 0 and text[before] in " \t":
            before -= 1
        if before == header.start() - 1 or before < 0 or text[before] not in ":-":
            continue  # not after "key:" or "-": text
        line_start = text.rfind("\n", 0, before) + 1
        column = _node_column(text, line_start, before)
        if column is None:  # a comment, or not sure: look into what follows
            continue
        content_end = _pattern(r"\n {0,%d}[^ \r\n]" % column).search(text, header.end() - 1)
        end = content_end.start() if content_end else len(text)
        if not text[header.end() : end].strip():
            return None
        spans.append((pos, header.end()))
        pos = end
    spans.append((pos, len(text)))
    return spans


def _node_column(text: str, line_start: int, indicator: int) -> int | None:
    """The column of the node a block scalar header belongs to: the key's on
    ``key: |``, the last dash's on ``- |``; None when the line holds a comment."""
    if " #" in text[line_start:indicator] or "\t#" in text[line_start:indicator]:
        return None
    i = line_start
    while text[i] == " ":
        i += 1
    while i < indicator and text[i] == "-" and text[i + 1] in " \t":
        i += 1
        while text[i] in " \t":
            i += 1
    if text[i] == "#":
        return None
    return i - line_start


def _readings_of(token: str) -> tuple[Any, Any] | None:
    """(YAML 1.1 value, YAML 1.2 value) of a plain scalar, or None when YAML 1.1
    needs the composing loader for it (merge and value keys)."""
    try:
        return _readings[token]
    except KeyError:
        pass
    try:
        reading: tuple[Any, Any] | None = (resolve_plain(token), _load(token))
    except Exception:  # noqa: BLE001  any failure on either side: not for the fast path
        reading = None
    if len(token) > _TOKEN_LENGTH:
        return reading  # read again where it recurs: kept, a long one holds the input alive
    if len(_readings) >= _READINGS_LIMIT:
        _readings.clear()
        _agreeing.clear()
        _agreeing_numbers.clear()
    _readings[token] = reading
    if reading is not None and _same(*reading):
        _agreeing.add(token)
        new = reading[1]
        if _restorable(new):
            _agreeing_numbers.setdefault((type(new), new), set()).add(token)
    return reading


def _restorable(value: Any) -> bool:
    """A YAML 1.2 reading that may be put back to its YAML 1.1 value: a number, not NaN."""
    return type(value) in (int, float) and not (isinstance(value, float) and math.isnan(value))


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _restorations(tokens: set[str]) -> dict[tuple[type, Any], Any] | None:
    """YAML 1.2 numbers to turn back into their YAML 1.1 values, or None if some
    token reads differently in a way that cannot be put back safely.

    Only the tokens not known to agree are read: a number can be put back when every
    token of the file giving it reads as one same YAML 1.1 value, and the agreeing
    tokens giving it are found in ``_agreeing_numbers`` (``_restorations_read_whole``,
    reading every token, is the definition; tests hold the two equal)."""
    unsure = tokens - _agreeing
    if not unsure:
        return {}  # every token reads the same either way: nothing to put back
    by_value: dict[tuple[type, Any], set[Any]] = {}
    agreeing_here: set[tuple[type, Any]] = set()  # numbers of unsure tokens that agree (too long to remember)
    for token in unsure:
        reading = _readings_of(token)
        if reading is None:
            return None
        old, new = reading
        if _same(old, new):
            if _restorable(new):
                agreeing_here.add((type(new), new))
            continue
        if not _restorable(new):
            return None  # e.g. 1.1 `yes` (True) is the string 'yes' in 1.2: cannot be told apart
        by_value.setdefault((type(new), new), set()).add((type(old), old))
    restore: dict[tuple[type, Any], Any] = {}
    for key, olds in by_value.items():
        if len(olds) != 1:
            return None  # two tokens give this number and 1.1 reads them differently
        agreeing = _agreeing_numbers.get(key)
        if key in agreeing_here or (agreeing and not agreeing.isdisjoint(tokens)):
            return None  # a token of the file reads as this number both ways
        ((_, old),) = olds
        restore[key] = old
    return restore


def _restorations_read_whole(tokens: set[str]) -> dict[tuple[type, Any], Any] | None:
    """``_restorations`` reading every token of the file: its definition."""
    by_value: dict[tuple[type, Any], set[Any]] = {}
    differing: set[tuple[type, Any]] = set()
    for token in tokens:
        reading = _readings_of(token)
        if reading is None:
            return None
        old, new = reading
        if not _restorable(new):
            if _same(old, new):
                continue
            return None
        key = (type(new), new)
        by_value.setdefault(key, set()).add((type(old), old))
        if not _same(old, new):
            differing.add(key)
    restore: dict[tuple[type, Any], Any] = {}
    for key in differing:
        olds = by_value[key]
        if len(olds) != 1:
            return None
        ((_, old),) = olds
        restore[key] = old
    return restore


# One object per distinct string: ``intern(s, s)``, the memo's bound ``setdefault`` (a
# subclass with ``__missing__`` made every lookup three times slower, measured).
_strings: dict[str, str] = {}
_Intern = Callable[[str, str], str]


def _canonical(value: Any, intern: _Intern, restore: dict[tuple[type, Any], Any], depth: int) -> Any:
    """Parsed data rebuilt the way PyYAML's loading shares it: equal keys and short
    strings are one object (a dump repeats them hundreds of thousands of times: this
    halves the inventory's memory and the cost of passing it between processes),
    and numbers put back to their YAML 1.1 values."""
    kind = type(value)
    if kind is dict:
        return _mapping(value, intern, restore, depth + 1)
    if kind is list:
        return _sequence(value, intern, restore, depth + 1)
    if kind is str:
        return intern(value, value) if len(value) < _SHARED_LENGTH else value
    if (kind is int or kind is float) and restore:
        return restore.get((kind, value), value)
    return value


def _mapping(mapping: dict[Any, Any], intern: _Intern, restore: dict[tuple[type, Any], Any],
             depth: int) -> dict[Any, Any]:
    if depth >= MAX_DEPTH:
        raise _NotFast
    out = {}
    for key, item in mapping.items():
        kind = type(item)
        if kind is str:
            if len(item) < _SHARED_LENGTH:
                item = intern(item, item)
        elif kind is dict:
            item = _mapping(item, intern, restore, depth + 1)
        elif kind is list:
            item = _sequence(item, intern, restore, depth + 1)
        elif restore:
            item = _canonical(item, intern, restore, depth)
        if type(key) is str:
            key = intern(key, key)
        elif type(key) in (frozenset, tuple):
            raise _NotFast  # a collection as a key ("{{ .Values.x }}"): PyYAML refuses it
        else:
            key = _canonical(key, intern, restore, depth)
        out[key] = item
    return out


def _sequence(sequence: list[Any], intern: _Intern, restore: dict[tuple[type, Any], Any],
              depth: int) -> list[Any]:
    # the dispatch of _canonical inlined, as in _mapping: a call per entry is most of the
    # cost of a list of strings or of small mappings (ports, env, conditions)
    if depth >= MAX_DEPTH:
        raise _NotFast
    out: list[Any] = []
    append = out.append
    inner = depth + 1
    for item in sequence:
        kind = type(item)
        if kind is str:
            if len(item) < _SHARED_LENGTH:
                item = intern(item, item)
        elif kind is dict:
            item = _mapping(item, intern, restore, inner)
        elif kind is list:
            item = _sequence(item, intern, restore, inner)
        elif restore and (kind is int or kind is float):
            item = restore.get((kind, item), item)
        append(item)
    return out


def _whole(value: Any, restore: dict[tuple[type, Any], Any], depth: int) -> Any:
    """``_canonical`` of a parsed value, compiled where it is built."""
    if _compiled is not None:
        return _compiled.canonical(value, _strings, restore, depth)
    return _canonical(value, _strings.setdefault, restore, depth)


def _pruned(value: Any, keep: Keep, restore: dict[tuple[type, Any], Any], depth: int) -> Any:
    """``_kept`` of a parsed value, compiled where it is built."""
    if _compiled is not None:
        return _compiled.kept(value, keep, _strings, restore, depth)
    return _kept(value, keep, _strings.setdefault, restore, depth)


def _built(body: Any, keep_of: KeepOf, pruned: set[int], restore: dict[tuple[type, Any], Any]) -> Any:
    """A document's body rebuilt as ``_canonical`` does, each object ``keep_of`` prunes
    (the document, or the entries of a List) built pruned."""
    if type(body) is not dict:
        return _whole(body, restore, 0)
    keep = keep_of(body)
    if keep is not None:
        out = _pruned(body, keep, restore, 0)
        pruned.add(id(out))
        return out
    kind, items = body.get("kind"), body.get("items")
    if type(kind) is not str or not kind.endswith("List") or type(items) is not list:
        return _whole(body, restore, 0)
    if 2 >= MAX_DEPTH:
        raise _NotFast
    entries = []
    for item in items:
        keep = keep_of(item) if type(item) is dict else None
        if keep is None:
            entries.append(_whole(item, restore, 2))
            continue
        entry = _pruned(item, keep, restore, 2)
        pruned.add(id(entry))
        entries.append(entry)
    fields: dict[Any, Any] = {}  # the other fields as _mapping builds them, in their order
    for key, value in body.items():
        if key == "items":
            fields[_strings.setdefault(key, key)] = entries
        else:
            fields.update(_whole({key: value}, restore, 0))
    return fields


def _kept(value: Any, keep: Keep, intern: _Intern, restore: dict[tuple[type, Any], Any],
          depth: int) -> Any:
    """``kept``'s pruning of ``_canonical(value)`` (``inventory/kept.py``), built in one
    pass: what is left out is never built."""
    if keep is WHOLE:
        return _canonical(value, intern, restore, depth)
    kind = type(value)
    if type(keep) is dict and kind is dict:
        if depth + 1 >= MAX_DEPTH:
            raise _NotFast
        every = keep.get(ANY_KEY)
        out = {}
        for key, item in value.items():
            if type(key) is str:
                key = intern(key, key)
            elif type(key) in (frozenset, tuple):
                raise _NotFast
            else:
                key = _canonical(key, intern, restore, depth + 1)
            sub = keep.get(key, every) if type(key) is str else every
            if sub is None:
                if type(item) is dict or type(item) is list:
                    _refusable(item, depth + 2)
                continue
            if sub is WHOLE or item is None:
                out[key] = _canonical(item, intern, restore, depth + 1)
            else:
                out[key] = _kept(item, sub, intern, restore, depth + 1)
        return out
    if type(keep) is list and kind is list:
        if depth + 1 >= MAX_DEPTH:
            raise _NotFast
        inner = keep[0]
        return [None if item is None else _kept(item, inner, intern, restore, depth + 1)
                for item in value]
    return _canonical(value, intern, restore, depth)  # does not fit: kept whole


def _refusable(value: dict[Any, Any] | list[Any], depth: int) -> None:
    """Raise _NotFast where ``_canonical`` would for a collection at ``depth`` (a
    collection as a key, nesting past MAX_DEPTH), without building anything. An empty
    collection above the bound holds nothing to refuse: no call for it (most of a
    pruned ``managedFields`` is ``{}``)."""
    if depth >= MAX_DEPTH:
        raise _NotFast
    inner = depth + 1
    deep = inner >= MAX_DEPTH
    if type(value) is dict:
        for key, item in value.items():
            kind = type(key)
            if kind is frozenset or kind is tuple:
                raise _NotFast
            kind = type(item)
            if (kind is dict or kind is list) and (item or deep):
                _refusable(item, inner)
        return
    for item in value:
        kind = type(item)
        if (kind is dict or kind is list) and (item or deep):
            _refusable(item, inner)


def _load(chunk: str) -> Any:
    if yaml_rs is None:  # callers check available() first
        raise _NotFast
    # A duplicate key fails here (at no cost to normal parsing), so the file goes to
    # PyYAML, which says on which lines both keys are.
    return yaml_rs.loads(chunk, parse_datetime=False,
                         duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.Error)


class _Lines:
    """Line and column of offsets in a text, for offsets asked in increasing order."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.line = 1

    def at(self, offset: int) -> tuple[int, int]:
        if offset < self.offset:
            self.offset, self.line = 0, 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line, offset - (self.text.rfind("\n", 0, offset) + 1) + 1


def _documents(text: str) -> list[ParsedDocument]:
    if _compiled is not None and text.isascii():
        markers: list[int] = _compiled.document_markers(text)  # memmem: str.find stops at every line
    else:
        markers = _document_markers(text)
    chunks: list[tuple[int, int, bool]] = []  # (start, end, explicit)
    first = markers[0] if markers else len(text)
    if _content_at(text, 0, first) is not None:
        chunks.append((0, first, False))
    for i, start in enumerate(markers):
        chunks.append((start, markers[i + 1] if i + 1 < len(markers) else len(text), True))
    lines = _Lines(text)
    docs: list[ParsedDocument] = []
    for index, (start, end, explicit) in enumerate(chunks):
        content = _content_at(text, start + 3 if explicit else start, end)
        try:
            body = _load(text[start:end])
        except Exception:  # noqa: BLE001  the slow path parses it again and reports what is wrong
            raise _NotFast from None
        at = content if content is not None else _next_token(text, end)
        line, column = lines.at(at)
        if at == len(text) and column > 1:
            line, column = line + 1, 1  # libyaml ends a stream on a line of its own
        if isinstance(body, list) and (content is None or text[content] not in "-["):
            raise _NotFast  # the parser saw more than one document in the chunk
        positions = None
        if isinstance(body, dict) and "items" in body:
            positions = _positions(text, content, end, body["items"], column - 1, lines)
        docs.append(ParsedDocument(body, index, line, column, positions))
    return docs


def _document_markers(text: str) -> list[int]:
    """Offsets of the "---" lines that start documents (they cannot occur in scalars)."""
    markers = []
    pos = 0 if text.startswith("---") else text.find("\n---")
    while pos >= 0:
        at = pos if pos == 0 and text.startswith("---") else pos + 1
        if text[at + 3 : at + 4] in ("", " ", "\t", "\r", "\n"):
            markers.append(at)
        pos = text.find("\n---", at + 3)
    return markers


def _content_at(text: str, start: int, end: int) -> int | None:
    """Offset of the first character of content in text[start:end] (not blank, not
    a comment), or None."""
    pos = start
    while pos < end:
        eol = text.find("\n", pos, end)
        stop = end if eol < 0 else eol
        stripped = len(text[pos:stop]) - len(text[pos:stop].lstrip(" \t\r"))
        first = pos + stripped
        if first < stop and text[first] != "#":
            return first
        pos = stop + 1
    return None


def _next_token(text: str, end: int) -> int:
    """Where an empty document's null is marked: the next token after it."""
    found = _content_at(text, end, len(text))
    return len(text) if found is None else found


def _positions(text: str, content: int | None, end: int, items: Any, indent: int,
               lines: _Lines) -> list[tuple[int, int]] | None:
    """``_item_positions``, compiled where it is built and the text is pure ASCII (for a
    list of entries after content: the other cases are the Python code's)."""
    if _compiled is None or content is None or type(items) is not list or not text.isascii():
        return _item_positions(text, content, end, items, indent, lines)
    known, line = (lines.offset, lines.line) if lines.offset <= content else (0, 1)
    found: list[tuple[int, int]] | None = _compiled.item_positions(text, content, end, len(items), indent,
                                                                   known, line)
    if found is None:
        raise _NotFast
    return found


def _item_positions(text: str, content: int | None, end: int, items: Any, indent: int,
                    lines: _Lines) -> list[tuple[int, int]] | None:
    """Line and column of each entry of the top-level ``items`` block sequence (None
    when ``items`` is not a list)."""
    if content is None:
        raise _NotFast
    if text.startswith("items:", content):
        raise _NotFast  # items as the first key: rare, and PyYAML gets it right
    keys = list(_pattern(r"\n" + " " * indent + r"items:([^\n]*)").finditer(text, content, end))
    if len(keys) != 1:
        raise _NotFast  # quoted, or given twice: PyYAML takes positions from the first
    if not isinstance(items, list):
        return None
    count = len(items)
    rest = keys[0].group(1).strip(" \t\r")
    if count == 0 and rest.startswith("[]"):
        return []
    if rest and not rest.startswith("#"):
        raise _NotFast  # a flow sequence, or something else on the key's line
    first = _content_at(text, keys[0].end(), end)
    if first is None:
        raise _NotFast
    seq_indent = first - (text.rfind("\n", 0, first) + 1)
    if seq_indent < indent or not _is_entry(text[first:first + 2]):
        raise _NotFast
    stop = _pattern(r"\n {0,%d}(?:[^ \t\r\n#\-]|-[^ \t\r\n])" % indent).search(text, first, end)
    items_end = stop.start() if stop else end
    dashes = _pattern(r"\n" + " " * seq_indent + r"-(?=[ \t\r\n])")
    entries = [first] + [m.end() - 1 for m in dashes.finditer(text, first, items_end)]
    if len(entries) != count:
        raise _NotFast
    positions: list[tuple[int, int]] = []
    append = positions.append
    # Most entries start on their dash's line, one blank after it ("- apiVersion: v1"):
    # there the content is at the dash's column + 2 and the line is counted on from the
    # entry before. Any other entry is looked for as _content_at does.
    line, prev, column = lines.at(first)[0], first, seq_indent + 3
    for dash in entries:
        start = dash + 2
        if start < end and text[dash + 1] == " " and text[start] not in " \t\r\n#":
            line += text.count("\n", prev, dash)
            prev = dash
            append((line, column))
            continue
        found = _content_at(text, dash + 1, end)
        if found is None or _column(text, found) <= _column(text, dash):
            raise _NotFast  # an empty entry: PyYAML marks it where its null would be
        position = lines.at(found)
        line, prev = position[0], found
        append(position)
    return positions


def _column(text: str, offset: int) -> int:
    return offset - (text.rfind("\n", 0, offset) + 1)


@functools.lru_cache(maxsize=64)
def _pattern(source: str) -> re.Pattern[str]:
    return re.compile(source)


def _is_entry(head: str) -> bool:
    return head[:1] == "-" and head[1:2] in ("", " ", "\r", "\t", "\n")


if _compiled is not None:  # the constants the compiled rebuild shares with the code above
    try:
        _compiled.configure(WHOLE, ANY_KEY, _NotFast, MAX_DEPTH, _SHARED_LENGTH)
    except (AttributeError, TypeError, ValueError):  # a module of another hcpscan: not used
        _compiled = None
COMPILED = _compiled is not None
# inventory.kept._spec_bytes compiled, for pod specs' keys (None: marshal's bytes are digested)
spec_bytes: Callable[[Any], bytes | None] | None = _compiled.spec_bytes if COMPILED else None
