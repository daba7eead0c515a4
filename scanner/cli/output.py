"""Terminal output helpers shared by commands (rich, honouring NO_COLOR and non-TTYs)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import IO

from rich.console import Console
from rich.table import Table

from scanner.sources.interface import Diagnostic


def console_for(stream: IO[str]) -> Console:
    no_color = bool(os.environ.get("NO_COLOR")) or not stream.isatty()
    return Console(file=stream, no_color=no_color, highlight=False,
                   soft_wrap=not stream.isatty(), emoji=False)


def diagnostics_table(diagnostics: Iterable[Diagnostic]) -> Table:
    table = Table(title="could not read", title_justify="left")
    table.add_column("severity")
    table.add_column("where", overflow="fold")
    table.add_column("problem", overflow="fold")
    table.add_column("what to do", overflow="fold")
    for d in diagnostics:
        where = f"{d.path}:{d.line}" if d.line else d.path
        table.add_row(d.severity, where, d.message, d.hint)
    return table
