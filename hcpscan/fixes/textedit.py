"""Exact text edits of a YAML file at the positions its parser reports.

Why text edits and not a round-trip YAML library: PyYAML (already the parser)
reports each node's start and end offset, so a fix replaces exactly the
scalar it changes, or inserts lines after the last item of a sequence, and
every other byte of the file stays as the user wrote it — comments, key
order, quoting, flow mappings such as ``{port: 53, protocol: UDP}``, blank
lines. A round-trip dumper re-emits the whole document and reflows what it
does not model (line widths, flow-style spacing, indentation of sequences),
which a reviewer would have to read as changes. Each planned edit is proved:
the edited text is parsed again and must equal the original document with the
intended change and nothing else, or no edit is made.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from typing import Any

import yaml

from hcpscan.findings.fix import AddDocument, AppendEntries, AppendItems, Edit, ReplaceKey, SetField
from hcpscan.inventory.fieldpath import Step, get_path

Splice = tuple[int, int, str]  # (start offset, end offset, inserted text)


class EditError(ValueError):
    """The edit cannot be made exactly; the message says why."""


def edit_document(text: str, doc_index: int, item_index: int | None, edits: tuple[Edit, ...],
                  item_at: tuple[int, int] | None = None) -> str:
    """``edit_text`` on the document's own text (and a List item's own lines, ``item_at``
    = its line and column), so a fix in a large dump costs its object, not the file;
    new documents are appended to the file. Falls back to the whole file when the cut
    text does not read as the object."""
    if "\r" in text:
        raise EditError("the file has CR line ends; edit it by hand")
    own = tuple(e for e in edits if not isinstance(e, AddDocument))
    if own:
        before = text
        text = _edit_own_text(text, doc_index, item_index, own, item_at)
        if _ANCHOR.search(before):  # an edit of the object's own text may reach others
            _check_the_rest(before, text, doc_index, item_index)
    for e in edits:
        if isinstance(e, AddDocument):
            if e.body in _documents(text):
                continue  # an earlier fix of this run wrote it (one policy for many pods)
            longer = _add_document(text, e.body)
            if _documents(longer[len(text):]) != [e.body]:
                raise EditError("the new document does not read back as intended")
            text = longer
    return text


# A YAML anchor (`&name`), which aliases (`*name`) elsewhere in the file repeat
_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s\[\]{},]+")


def _check_the_rest(before: str, after: str, doc_index: int, item_index: int | None) -> None:
    """An object edited on its own lines in a file with anchors: the whole file still
    parses and every other document (and List entry) reads as before. Replacing a value
    that carries an anchor dropped it, and the aliases elsewhere no longer parsed."""
    why = "edit it by hand (the value is shared through a YAML anchor with other objects)"
    try:
        old, new = _documents(before), _documents(after)
    except EditError:
        raise EditError(f"the edit would leave the file unparseable; {why}") from None
    if len(old) != len(new):
        raise EditError(f"the edit would change other documents; {why}")
    for index, (was, now) in enumerate(zip(old, new)):
        if index != doc_index:
            if was != now:
                raise EditError(f"the edit would change other documents; {why}")
        elif item_index is not None and isinstance(was, dict) and isinstance(now, dict):
            was_items, now_items = was.get("items"), now.get("items")
            if not isinstance(was_items, list) or not isinstance(now_items, list) \
                    or len(was_items) != len(now_items) \
                    or any(a != b for i, (a, b) in enumerate(zip(was_items, now_items))
                           if i != item_index):
                raise EditError(f"the edit would change other entries of the List; {why}")


@functools.lru_cache(maxsize=8)
def spans_of(text: str) -> list[tuple[int, int]]:
    """Where each document of a file starts and ends, found once per text (a str keeps
    its hash, so a file many fixes look at is scanned once)."""
    from hcpscan.core.yamldocs import document_spans

    return document_spans(text)


def _edit_own_text(text: str, doc_index: int, item_index: int | None, edits: tuple[Edit, ...],
                   item_at: tuple[int, int] | None) -> str:
    if text.startswith("%") or "\n%" in text:
        return edit_text(text, doc_index, item_index, edits)  # directives: the whole stream
    spans = spans_of(text)
    if doc_index >= len(spans):
        raise EditError(f"document {doc_index + 1} is not in the file")
    start, end = spans[doc_index]
    if item_index is not None and item_at is not None:
        cut = _item_span(text, start, end, *item_at)
        if cut is not None:
            first, last, indent = cut
            snippet = " " * indent + text[first + indent:last]
            try:
                edited = edit_text(snippet, 0, None, edits)
            except EditError:
                edited = None
            if edited is not None and edited[:indent] == " " * indent:
                return text[:first + indent] + edited[indent:] + text[last:]
    return text[:start] + edit_text(text[start:end], 0, item_index, edits) + text[end:]


def _item_span(text: str, start: int, end: int, line: int, column: int
                ) -> tuple[int, int, int] | None:
    """(first offset, end offset, indent) of a List item whose mapping starts at ``line``
    and ``column``: its lines run to the first content line indented less."""
    first = _line_start(text, line)
    if first is None:
        return None
    indent = column - 1
    if not start <= first < end or len(text) < first + indent:
        return None
    at = text.find("\n", first)
    at = end if at < 0 or at >= end else at + 1
    while at < end:
        nxt = text.find("\n", at)
        line_end = end if nxt < 0 or nxt >= end else nxt + 1
        content = text[at:line_end].lstrip(" ")
        if content.strip() and not content.startswith("#") and \
                line_end - at - len(content) < indent:
            break
        at = line_end
    return first, at, indent


def _line_start(text: str, line: int) -> int | None:
    """The offset line ``line`` (1-based) starts at; None past the last line break. Split
    in C: a List item may be tens of thousands of lines into a namespace's dump."""
    if line <= 1:
        return 0
    head = text.split("\n", line - 1)
    return len(text) - len(head[-1]) if len(head) == line else None


def edit_text(text: str, doc_index: int, item_index: int | None, edits: tuple[Edit, ...]) -> str:
    """The text with ``edits`` made to one document (``items[item_index]`` of a List)."""
    if "\r" in text:
        raise EditError("the file has CR line ends; edit it by hand")
    for e in edits:
        before = _documents(text)
        if doc_index >= len(before):
            raise EditError(f"document {doc_index + 1} is not in the file")
        expected = copy.deepcopy(before)
        target = _target(expected[doc_index], item_index)
        if isinstance(e, AddDocument):
            text = _add_document(text, e.body)
            expected.append(e.body)
        else:
            node = _target_node(_node_of(text, doc_index), item_index)
            resolved = resolved_edit(e, target)
            if resolved is None:
                continue  # already there
            text = _apply(text, _plan(text, node, resolved))
            intend(target, resolved)
        try:
            after = _documents(text)
        except EditError:
            raise EditError("the edit would leave the file unparseable; edit it by hand (the "
                            "value is shared through a YAML anchor with other objects?)") from None
        if after != expected:
            raise EditError("the edited text does not read back as the intended change")
    return text


# -- documents and nodes -------------------------------------------------------------------


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it


def _documents(text: str) -> list[Any]:
    try:
        return list(yaml.load_all(text, Loader=_LOADER))
    except yaml.YAMLError as exc:
        raise EditError(f"the file does not parse: {exc}") from exc


def _node_of(text: str, doc_index: int) -> yaml.Node:
    loader = _LOADER(text)
    try:
        node = None
        for _ in range(doc_index + 1):
            if not loader.check_node():
                raise EditError(f"document {doc_index + 1} is not in the file")
            node = loader.get_node()
    finally:
        loader.dispose()
    if node is None:
        raise EditError("empty document")
    return node


def _target(doc: Any, item_index: int | None) -> Any:
    return doc if item_index is None else doc["items"][item_index]


def _target_node(node: yaml.Node, item_index: int | None) -> yaml.Node:
    if item_index is None:
        return node
    child = _child(node, "items")
    if not isinstance(child, yaml.SequenceNode) or item_index >= len(child.value):
        raise EditError("the List item is not in the file")
    return child.value[item_index]


def _child(node: yaml.Node, step: Step) -> yaml.Node | None:
    if isinstance(step, int):
        if isinstance(node, yaml.SequenceNode) and 0 <= step < len(node.value):
            return node.value[step]
        return None
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == step:
                return value
    return None


def _walk(node: yaml.Node, steps: tuple[Step, ...]) -> yaml.Node | None:
    for step in steps:
        found = _child(node, step)
        if found is None:
            return None
        node = found
    return node


# -- what each edit means on the decoded body -----------------------------------------------


Resolved = SetField | AppendItems | ReplaceKey


def resolved_edit(e: Edit, target: Any) -> Resolved | None:
    """An edit planned against the current value (None when nothing is left to do)."""
    if isinstance(e, ReplaceKey):
        parent = get_path(target, e.steps[:-1])
        old = e.steps[-1]
        if not isinstance(parent, dict):
            raise EditError(f"{_path(e.steps[:-1])} is not a mapping in the object")
        if old not in parent:
            if parent.get(e.key) == e.value:
                return None  # an earlier fix made it
            raise EditError(f"{_path(e.steps)} is not in the object")
        if e.key != old and e.key in parent:
            raise EditError(f"{_path(e.steps[:-1])} has {e.key} already")
        return e
    if isinstance(e, AppendEntries):
        current = get_path(target, e.steps)
        if isinstance(current, list):
            have = {str(x).strip() for x in current}
            return resolved_edit(AppendItems(e.steps, tuple(x for x in e.entries if x not in have)),
                             target)
        if current is not None and not isinstance(current, str):
            raise EditError(f"{_path(e.steps)} is neither a list nor a string")
        text = current or ""
        have = {x.strip() for x in text.split(",") if x.strip()}
        new = [x for x in dict.fromkeys(e.entries) if x not in have]
        if not new:
            return None
        kept = text.rstrip().rstrip(",")
        return SetField(e.steps, ",".join([kept, *new] if kept else new))
    if isinstance(e, AppendItems):
        current = get_path(target, e.steps)
        items = tuple(x for x in e.items if not (isinstance(current, list) and x in current))
        return AppendItems(e.steps, items, e.first) if items else None
    if isinstance(e, SetField):
        return None if get_path(target, e.steps) == e.value else e
    raise EditError(f"unknown edit {e!r}")


def intend(target: Any, e: Resolved) -> None:
    """Make the edit on a decoded body (what the text must read back as)."""
    parent = get_path(target, e.steps[:-1])
    last = e.steps[-1]
    if not (isinstance(parent, dict) or (isinstance(parent, list) and isinstance(last, int))):
        raise EditError(f"{_path(e.steps[:-1])} is not in the object")
    box: Any = parent  # a dict, or a list indexed by an int: checked just above
    if isinstance(e, ReplaceKey):
        if not isinstance(parent, dict):
            raise EditError(f"{_path(e.steps[:-1])} is not a mapping")
        # in place, so the key order reads as the text will (dicts compare unordered anyway)
        items = [(e.key, copy.deepcopy(e.value)) if k == last else (k, v) for k, v in parent.items()]
        parent.clear()
        parent.update(items)
        return
    if isinstance(e, SetField):
        box[last] = e.value
    else:
        current = get_path(target, e.steps)
        if current is None:
            box[last] = list(e.items)
        elif e.first:
            current[0:0] = e.items
        else:
            current.extend(e.items)


def _path(steps: tuple[Step, ...]) -> str:
    return "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps).lstrip(".")


# -- planning text splices ------------------------------------------------------------------


def _plan(text: str, root: yaml.Node, e: Resolved) -> Splice:
    parent = _walk(root, e.steps[:-1])
    if parent is None:
        raise EditError(f"{_path(e.steps[:-1])} is not in the file")
    if isinstance(e, ReplaceKey):
        return _replace_key(text, parent, e)
    node = _child(parent, e.steps[-1])
    if isinstance(e, SetField):
        if node is None:
            return _add_key(text, parent, e.steps[-1], e.value)
        if not isinstance(node, yaml.ScalarNode):
            raise EditError(f"{_path(e.steps)} is not a scalar")
        return _replace_scalar(text, node, e.value)
    if node is None:
        return _add_key(text, parent, e.steps[-1], list(e.items))
    if not isinstance(node, yaml.SequenceNode):
        raise EditError(f"{_path(e.steps)} is not a list")
    if e.first and node.value:
        return _prepend(text, node, e.items)
    return _append(text, node, e.items)


def _replace_key(text: str, mapping: yaml.Node, e: ReplaceKey) -> Splice:
    """``key: value`` written over the old entry's key and value, on its lines (a comment
    after the old value stays): a flow value, so no indentation is guessed."""
    if not isinstance(mapping, yaml.MappingNode):
        raise EditError(f"{_path(e.steps[:-1])} is not a mapping")
    for key, value in mapping.value:
        if isinstance(key, yaml.ScalarNode) and key.value == e.steps[-1]:
            if isinstance(value, yaml.ScalarNode) and value.style in ("|", ">"):
                raise EditError("the value is a block scalar; edit it by hand")
            if not isinstance(value, yaml.ScalarNode) and not value.flow_style:
                raise EditError(f"{_path(e.steps)} is a block collection; edit it by hand")
            return (key.start_mark.index, value.end_mark.index,
                    f"{scalar_text(e.key, flow=True)}: {flow_text(e.value)}")
    raise EditError(f"{_path(e.steps)} is not in the file")


def _apply(text: str, splice: Splice) -> str:
    start, end, inserted = splice
    return text[:start] + inserted + text[end:]


def _replace_scalar(text: str, node: yaml.ScalarNode, value: Any) -> Splice:
    if node.style == "|" and isinstance(value, str):
        return _replace_literal(text, node, value)
    if node.style in ("|", ">"):
        raise EditError("the value is a block scalar; edit it by hand")
    flow = _in_flow(text, node)
    return node.start_mark.index, node.end_mark.index, scalar_text(value, node.style or "", flow)


def _replace_literal(text: str, node: yaml.ScalarNode, value: str) -> Splice:
    """A literal block (``key: |``, a document kept in a ConfigMap or Secret key) written
    again with the new value: its header line (a comment after ``|`` stays) and each line at
    the block's indentation, so the lines the value did not change read as before. The
    chomping indicator follows the value's final newline; the read-back check refuses what
    a literal block cannot hold this way."""
    start, end = node.start_mark.index, node.end_mark.index
    header_end = text.find("\n", start)
    if header_end < 0 or header_end >= end:
        raise EditError("the block scalar has no content lines; edit it by hand")
    header = text[start:header_end]
    indicator = header.split("#", 1)[0].rstrip()
    if indicator not in ("|", "|-"):
        raise EditError(f"the block scalar is written {indicator!r}; edit it by hand")
    body = text[header_end + 1:end]
    first = next((line for line in body.split("\n") if line.strip()), "")
    indent = len(first) - len(first.lstrip(" "))
    if indent == 0 or value[:1] in (" ", "\n") or value.endswith("\n\n") \
            or "\t" in value or "\r" in value:
        raise EditError("the new value cannot be written as this literal block")
    chomp = "" if value.endswith("\n") else "-"
    lines = (value[:-1] if value.endswith("\n") else value).split("\n")
    content = "".join((" " * indent + line if line else "") + "\n" for line in lines)
    # blank lines after the last content line belong to the file's layout: kept
    last = body.rstrip("\n").rfind("\n") + 1
    tail = body[last:]
    trailing = tail[tail.find("\n") + 1:] if "\n" in tail else ""
    if not body.endswith("\n"):
        content = content[:-1]  # the block ran to the end of a file without a final newline
    return start, end, "|" + chomp + header[len(indicator):] + "\n" + content + trailing


def _in_flow(text: str, node: yaml.Node) -> bool:
    """Whether the node sits inside a flow collection (plain scalars may not hold , [ ] { })."""
    line_start = text.rfind("\n", 0, node.start_mark.index) + 1
    before = text[line_start:node.start_mark.index]
    return before.count("{") + before.count("[") > before.count("}") + before.count("]")


def scalar_text(value: Any, style: str = "", flow: bool = False) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    value = str(value)
    if style == "'" and "\n" not in value:
        return "'" + value.replace("'", "''") + "'"
    if style == '"' or not _plain_safe(value, flow):
        return json.dumps(value)
    return value


def _plain_safe(value: str, flow: bool) -> bool:
    if not value or value != value.strip() or "\n" in value or "#" in value:
        return False
    if flow and any(c in value for c in ",[]{}"):
        return False
    try:
        return yaml.safe_load(f"k: {value}") == {"k": value}
    except yaml.YAMLError:
        return False


def flow_text(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{scalar_text(k, flow=True)}: {flow_text(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow_text(v) for v in value) + "]"
    return scalar_text(value, flow=True)


class _Dumper(yaml.SafeDumper):
    """Safe dumping, with text of several lines as a literal block (a drop-in's lines read
    as the file will) where YAML allows one (else the emitter picks a quoted style)."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    """Several lines as a literal block; text that would not read back plain in double
    quotes, as Kubernetes manifests quote ``"0600"``."""
    style = "|" if "\n" in value.rstrip("\n") else None if _plain_safe(value, False) else '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _dump(value: Any) -> str:
    return yaml.dump(value, Dumper=_Dumper, default_flow_style=False, sort_keys=False,
                     width=10_000, allow_unicode=True)


def _block_lines(value: Any, indent: int) -> list[str]:
    dumped = _dump(value)
    return [" " * indent + line for line in dumped.splitlines()]


def _line_end_after(text: str, node: yaml.Node) -> int:
    """The offset just past the line where the node's last leaf ends."""
    leaf = node
    while isinstance(leaf, (yaml.MappingNode, yaml.SequenceNode)) and leaf.value:
        leaf = leaf.value[-1][1] if isinstance(leaf, yaml.MappingNode) else leaf.value[-1]
    index = leaf.end_mark.index
    if isinstance(leaf, (yaml.MappingNode, yaml.SequenceNode)) and leaf.flow_style is False:
        index = leaf.start_mark.index  # an empty block collection cannot be: defensive
    if index > 0 and text[index - 1] == "\n":
        return index  # a block scalar ends at the start of the next line
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline + 1


def _ending(text: str, at: int) -> str:
    """A newline to put first when inserting at the end of a file that has none."""
    return "\n" if at == len(text) and text and not text.endswith("\n") else ""


def _append(text: str, seq: yaml.SequenceNode, items: tuple[Any, ...]) -> Splice:
    if seq.flow_style and not seq.value and any(isinstance(i, (dict, list)) for i in items):
        block = _empty_flow_to_block(text, seq, items)
        if block is not None:
            return block
    if seq.flow_style:
        if seq.value:
            at = seq.value[-1].end_mark.index
            return at, at, "".join(", " + flow_text(i) for i in items)
        close = text.rfind("]", seq.start_mark.index, seq.end_mark.index)
        return close, close, ", ".join(flow_text(i) for i in items)
    column = seq.start_mark.column
    first = seq.value[0]
    as_flow = (isinstance(first, yaml.MappingNode) and first.flow_style) or \
        isinstance(first, yaml.ScalarNode)
    at = _line_end_after(text, seq)
    return at, at, _ending(text, at) + "".join(_item_lines(i, column, as_flow) for i in items)


def _prepend(text: str, seq: yaml.SequenceNode, items: tuple[Any, ...]) -> Splice:
    """``items`` before the first item of a non-empty sequence, in its style: a flow
    sequence's ``[``, a block sequence's first ``-`` line (its comments stay above)."""
    first = seq.value[0]
    if seq.flow_style:
        at = first.start_mark.index
        return at, at, "".join(flow_text(i) + ", " for i in items)
    column = seq.start_mark.column
    at = text.rfind("\n", 0, seq.start_mark.index) + 1
    if text[at:seq.start_mark.index].strip():
        raise EditError("the list's first item does not start its line")
    as_flow = (isinstance(first, yaml.MappingNode) and first.flow_style) or \
        isinstance(first, yaml.ScalarNode)
    return at, at, "".join(_item_lines(i, column, as_flow) for i in items)


def _empty_flow_to_block(text: str, seq: yaml.SequenceNode, items: tuple[Any, ...]
                         ) -> Splice | None:
    """``key: []  # comment`` given its first mappings: ``key:  # comment`` and block items
    below at the key's column, as a list of objects is written (not one long flow line).
    None when the ``[]`` is not a mapping value alone on its key's line."""
    start, end = seq.start_mark.index, seq.end_mark.index
    line_start = text.rfind("\n", 0, start) + 1
    before = text[line_start:start]
    key = before.strip()
    if not key.endswith(":") or key.startswith("-") or ":" in key[:-1] or "{" in key:
        return None
    newline = text.find("\n", end)
    line_end = len(text) if newline < 0 else newline + 1
    rest = text[end:line_end]
    if rest.strip() and not rest.strip().startswith("#"):
        return None
    column = len(before) - len(before.lstrip(" "))
    lines = "".join(_item_lines(i, column, False) for i in items)
    if rest.strip():  # the comment stays on the key's line
        return start, line_end, rest.rstrip("\n") + "\n" + lines
    return line_start + len(before.rstrip()), line_end, "\n" + lines


def _item_lines(item: Any, column: int, as_flow: bool) -> str:
    pad = " " * column
    if as_flow or not isinstance(item, (dict, list)):
        return f"{pad}- {flow_text(item)}\n"
    lines = _block_lines(item, column + 2)
    lines[0] = pad + "- " + lines[0][column + 2:]
    return "\n".join(lines) + "\n"


def _add_key(text: str, mapping: yaml.Node, key: Step, value: Any) -> Splice:
    if not isinstance(mapping, yaml.MappingNode) or not isinstance(key, str):
        raise EditError(f"cannot add {key!r} there: the parent is not a mapping")
    if mapping.flow_style or not mapping.value:
        if mapping.value:
            at = mapping.value[-1][1].end_mark.index
            return at, at, f", {scalar_text(key, flow=True)}: {flow_text(value)}"
        close = text.rfind("}", mapping.start_mark.index, mapping.end_mark.index)
        if close < 0:
            raise EditError("the mapping to add to is empty and not written as {}")
        return close, close, f"{scalar_text(key, flow=True)}: {flow_text(value)}"
    column = mapping.value[0][0].start_mark.column
    pad = " " * column
    at = _line_end_after(text, mapping)
    if isinstance(value, list):
        body = f"{pad}{scalar_text(key)}:\n" + "".join(_item_lines(i, column, False) for i in value)
    else:
        body = f"{pad}{scalar_text(key)}: {scalar_text(value)}\n"
    return at, at, _ending(text, at) + body


def _add_document(text: str, body: dict[str, Any]) -> str:
    dumped = _dump(body)
    sep = "" if not text or text.endswith("\n") else "\n"
    return f"{text}{sep}---\n{dumped}"
