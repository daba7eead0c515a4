"""Terminal output helpers shared by commands (rich, honouring NO_COLOR and non-TTYs).

rich is imported by the helpers that draw with it, when first called: a command whose
output is JSON, or plain lines, never loads it (start-up is mostly imports)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any

from hcpscan.core.diagnostics import Diagnostic
from hcpscan.core.redact import shown
from hcpscan.reporters.interface import color_wanted

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def escape(text: str) -> str:
    """``text`` with rich markup escaped (rich.markup.escape, imported when first used)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def console_for(stream: IO[str]) -> Console:
    """No ANSI codes at all (colour or bold) with NO_COLOR or when not a terminal
    (unless FORCE_COLOR); a readable width when piped (COLUMNS, else 120) instead of
    rich's 80."""
    from rich.console import Console

    tty = stream.isatty()
    plain = not color_wanted(stream)
    width = None
    if not tty:
        try:
            width = int(os.environ.get("COLUMNS", "")) or 120
        except ValueError:
            width = 120
    return Console(file=stream, no_color=plain, color_system=None if plain else "auto",
                   highlight=False, soft_wrap=False, emoji=False, width=width,
                   force_terminal=False if plain else (True if not tty else None))


def cells(*values: object) -> list[str]:
    """Table cells shown as given: user text such as [fd00::1] or [Service] is not
    rich markup, passwords are masked and control characters are visible escapes.
    A list or tuple is a cell of several lines, each line shown that way."""
    return [escape("\n".join(shown(line) for line in value) if isinstance(value, (list, tuple))
                   else shown(value)) for value in values]


def say(text: str, stream: IO[str] | None = None) -> None:
    """Print one line of plain (not rich) output that holds input-derived text."""
    print(shown(text), file=stream)


def diagnostics_table(diagnostics: Iterable[Diagnostic]) -> Table:
    """The input problems; a folder every path shares (a must-gather's long prefix) is
    said once in the title, so the "where" column holds short relative paths."""
    from rich.table import Table

    from hcpscan.reporters.table import MAX_DIAGNOSTIC_ROWS, more_diagnostics

    diagnostics = list(diagnostics)
    root = common_folder([d.path for d in diagnostics])
    title = "could not read" + (f" (files under {escape(shown(root))}/)" if root else "")
    table = Table(title=title, title_justify="left", caption_justify="left",
                  caption=more_diagnostics(len(diagnostics), "--format json"))
    diagnostics = diagnostics[:MAX_DIAGNOSTIC_ROWS]
    table.add_column("severity")
    table.add_column("where", overflow="fold")
    table.add_column("problem", overflow="fold")
    table.add_column("what to do", overflow="fold")
    for d in diagnostics:
        path = d.path[len(root) + 1:] if root and d.path.startswith(root + "/") else d.path
        where = f"{path}:{d.line}" if d.line else path
        table.add_row(*cells(d.severity, where, d.message, d.hint))
    return table


def passed_over_line(inventory: Any) -> str | None:
    """``passed over: 1 hidden folder, 2 not a regular file`` — what every command says
    about input it did not read (scan's reports carry it in each format)."""
    counts = inventory.skipped.counts
    if not counts:
        return None
    return "passed over: " + ", ".join(f"{n} {shown(reason)}" for reason, n in sorted(counts.items()))


def say_passed_over(inventory: Any) -> None:
    """The passed-over line on standard error, so a command's own output (JSON, CSV, DOT)
    stays clean."""
    line = passed_over_line(inventory)
    if line:
        console_for(sys.stderr).print(line, style="dim", markup=False)


def table_fits(header: list[str], rows: list[list[str]], width: int) -> bool:
    """Whether a rich table of these cells fits ``width`` columns without breaking a word
    (each column as wide as its longest word or line piece, plus borders and padding)."""
    widest = [len(h) for h in header]
    for row in rows:
        for k, cell in enumerate(row):
            for word in str(cell).split():
                widest[k] = max(widest[k], len(word))
    return sum(widest) + 3 * len(header) + 1 <= width


def console_width(stream: IO[str]) -> int:
    return console_for(stream).width


def wrapped(text: str, width: int, indent: str) -> list[str]:
    """``text`` wrapped between words, continuation lines under ``indent``. A word longer
    than a line (a NO_PROXY list, a path) breaks after one of its commas or slashes, as
    its own separators allow, never inside a name."""
    room = max(10, width - len(indent))
    pieces: list[tuple[str, str]] = []  # (glue before, piece)
    for k, word in enumerate(text.split(" ")):
        parts = re.findall(r"[^,/]*[,/]|[^,/]+$", word) if len(word) > room else [word]
        pieces += [(" " if k and j == 0 else "", part) for j, part in enumerate(parts or [""])]
    lines, line = [], ""
    for glue, piece in pieces:
        if line.strip() and len(line) + len(glue) + len(piece) > width:
            lines.append(line.rstrip())
            line = indent + piece
        else:
            line += glue + piece
    lines.append(line.rstrip())
    return lines


def common_folder(paths: list[str]) -> str:
    """The folder every path lies in (``""`` when none is shared), to print once instead
    of in every row: a must-gather's 100-character prefix."""
    folders = [os.path.dirname(p) for p in paths if p and not p.startswith("<")]
    if len(folders) < 2:
        return ""
    try:
        root = os.path.commonpath(folders)
    except ValueError:
        return ""
    return root if root not in ("", ".", "/") else ""
