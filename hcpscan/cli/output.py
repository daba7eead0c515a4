"""Terminal output helpers shared by commands (rich, honouring NO_COLOR and non-TTYs)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import IO, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hcpscan.findings.redact import shown
from hcpscan.reporters.interface import color_wanted
from hcpscan.sources.interface import Diagnostic


def console_for(stream: IO[str]) -> Console:
    """No ANSI codes at all (colour or bold) with NO_COLOR or when not a terminal
    (unless FORCE_COLOR); a readable width when piped (COLUMNS, else 120) instead of
    rich's 80."""
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
    table = Table(title="could not read", title_justify="left")
    table.add_column("severity")
    table.add_column("where", overflow="fold")
    table.add_column("problem", overflow="fold")
    table.add_column("what to do", overflow="fold")
    for d in diagnostics:
        where = f"{d.path}:{d.line}" if d.line else d.path
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
