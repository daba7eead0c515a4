"""What every reporter is: a name and a pure ``render(report, options) -> str``.

Reporters depend on :mod:`hcpscan.findings.model` only. Everything that differs
between runs but is not a finding (time stamps, the tool version, the current
directory, the text of source files) reaches them through the report's
metadata or through :class:`ReportOptions`, so the same input always renders to
the same output and snapshots stay stable.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from hcpscan import HOMEPAGE
from hcpscan.core.textcodec import decode_text
from hcpscan.findings.model import ScanReport
from hcpscan.reporters.locations import split_archive_path

ReadText = Callable[[str], "str | None"]


class TerminalLike(Protocol):
    """Where a report goes, as far as colour is concerned: a stream, or a stand-in for a file."""

    def isatty(self) -> bool: ...

INFORMATION_URI = HOMEPAGE

# GitHub code scanning rejects a run with more results than this.
SARIF_MAX_RESULTS = 25_000
# GitHub rejects comments longer than 65,536 characters; stay clearly below.
MARKDOWN_MAX_CHARS = 65_000


def read_file_text(path: str) -> str | None:
    """Default ``read_text``: a plain file on disk, exactly as stored.

    Line endings are kept (``newline=""``) because GitHub's line hash treats
    ``\\r`` as a line break too; undecodable bytes become U+FFFD as they do in
    GitHub's reader. Archive members and virtual paths give ``None`` (the CLI
    passes a ``read_text`` that can open archives).
    """
    if not path or path.startswith("<") or len(split_archive_path(path)) > 1:
        return None
    try:
        with open(path, "rb") as fh:
            return decode_text(fh.read(), errors="replace")  # UTF-16/32 as a scan reads them
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """How to render; the defaults suit a plain, non-interactive run.

    ``sarif_root``: the directory SARIF paths are made relative to (normally
    the repository checkout); ``None`` means the current directory.
    ``sarif_category``: written to ``run.automationDetails.id`` so several
    hcpscan uploads to one repository do not replace each other.
    ``read_text``: returns the text of a finding's file (``Location.path``, as
    the finding has it, including ``archive!member`` paths) or ``None``; used
    only to compute GitHub's ``primaryLocationLineHash``.
    ``color``: ANSI styles in the table; never on when ``NO_COLOR`` is set.
    ``junit_extended``: JUnit attributes beyond the common (Jenkins) JUnit schema.
    """

    sarif_root: str | None = None
    sarif_category: str = "hcpscan"
    read_text: ReadText = read_file_text
    color: bool = False
    width: int = 100
    information_uri: str = INFORMATION_URI
    sarif_max_results: int = SARIF_MAX_RESULTS
    markdown_max_chars: int = MARKDOWN_MAX_CHARS
    markdown_top_findings: int = 50
    # JUnit: add file/line on testcases and totals/properties on <testsuites> (GitLab and
    # pytest read them); off by default, as Jenkins' JUnit schema allows neither.
    junit_extended: bool = False
    # -1 quiet (findings and input problems only), 0 normal, 1 verbose (every reason)
    verbosity: int = 0

    @classmethod
    def for_stream(cls, stream: TerminalLike, environ: Mapping[str, str] | None = None,
                   **overrides: object) -> ReportOptions:
        """Options for writing to ``stream``: colour as :func:`color_wanted` says (a
        ``color`` override wins: report files are never coloured); width from
        ``COLUMNS`` when given."""
        env = os.environ if environ is None else environ
        color = overrides.pop("color", None)  # None: as the stream and environment say
        color = color_wanted(stream, env) if color is None else bool(color)
        width = overrides.pop("width", None) or _columns(env) or 100
        if not isinstance(width, int | str):
            raise TypeError(f"width must be a number, not {width!r}")
        return cls(color=color, width=int(width), **overrides)  # type: ignore[arg-type]


def color_wanted(stream: TerminalLike, environ: Mapping[str, str] | None = None) -> bool:
    """Colour on a terminal; never with ``NO_COLOR``; also when piped with ``FORCE_COLOR``
    (any non-empty value, as force-color.org has it; ``NO_COLOR`` wins)."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _columns(environ: Mapping[str, str]) -> int | None:
    try:
        value = int(environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return value if value > 20 else None


class Reporter(Protocol):
    """One output format. ``render`` is pure: no I/O besides ``options.read_text``."""

    name: str
    media_type: str
    extension: str

    def render(self, report: ScanReport, options: ReportOptions) -> str: ...
