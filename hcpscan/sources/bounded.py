"""The YAML files a user gives besides the input - rule files (``--rules``), the config
file, the perimeter file - read under the same budgets as input files: no larger than
an input file may be, and no more nodes than one may make (an alias counts as what it
repeats), and no deeper than one may nest (PyYAML's composer recurses: deeper, it
ends in a RecursionError), all checked before any parser builds anything. A FIFO or device is never
opened (reading it could block for ever)."""

from __future__ import annotations

from pathlib import Path

from hcpscan.core.textcodec import UTF8, decode_text, sniff_encoding
from hcpscan.core.yamldocs import MAX_NODES, InputLimitError, _first_too_deep, node_overrun, too_deep
from hcpscan.sources.interface import InputLimits

MAX_FILE_BYTES = InputLimits().max_file_size


def read_bounded(path: Path, max_bytes: int | None = None, max_nodes: int = MAX_NODES) -> str:
    """The text of ``path`` (UTF-8, or UTF-16/32: ``core.textcodec``); ``InputLimitError``
    (with the line where the node count passes the limit, when known) past a budget;
    ``OSError`` or ``UnicodeDecodeError`` when it cannot be read as text. ``max_bytes``:
    ``MAX_FILE_BYTES`` unless given."""
    max_bytes = MAX_FILE_BYTES if max_bytes is None else max_bytes
    if path.exists() and not path.is_file():
        raise InputLimitError("not a regular file (a FIFO, socket or device is never opened)",
                              None, None)
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputLimitError(f"larger than {max_bytes >> 20} MiB, the limit of an input file",
                              None, None)
    text = decode_text(data)  # UTF-8, or UTF-16/32 as YAML 1.2 detects them
    overrun = node_overrun(text, max_nodes, data if sniff_encoding(data)[0] == UTF8 else None)
    if overrun is not None:
        raise overrun
    deep = _first_too_deep(text)
    if deep is not None:
        raise too_deep(deep[1])
    return text
