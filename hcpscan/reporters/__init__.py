"""Reporters: turn a :class:`~hcpscan.findings.model.ScanReport` into text.

Usage from the CLI::

    from hcpscan.reporters import REPORTERS, ReportOptions, render

    options = ReportOptions.for_stream(sys.stdout, sarif_category="hcpscan/prod")
    text = render("sarif", report, options)

Each reporter is pure (no clock, no environment besides ``NO_COLOR`` for the
table, no file access besides ``options.read_text``) and depends only on the
findings model.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from hcpscan.findings.model import ScanReport
from hcpscan.reporters.formats import JSON_DOCUMENTS, SCAN_FORMATS
from hcpscan.reporters.interface import Reporter, ReportOptions, color_wanted, read_file_text
from hcpscan.reporters.json import SCHEMA_VERSION


class _Reporters(Mapping[str, Reporter]):
    """One reporter per registered format (formats.SCAN_FORMATS), in its order, each
    imported when first asked for: a scan writing JSON does not import the table's
    terminal library or the XML writer."""

    def __init__(self) -> None:
        self._formats = {fmt.name: fmt for fmt in SCAN_FORMATS}
        self._loaded: dict[str, Reporter] = {}

    def __getitem__(self, name: str) -> Reporter:
        reporter = self._loaded.get(name)
        if reporter is None:
            fmt = self._formats[name]
            reporter = fmt.load()
            if reporter.name != fmt.name:
                raise RuntimeError(f"format {fmt.name!r} is registered with {fmt.reporter}, "
                                   f"whose name is {reporter.name!r}")
            self._loaded[name] = reporter
        return reporter

    def __iter__(self) -> Iterator[str]:
        return iter(self._formats)

    def __len__(self) -> int:
        return len(self._formats)


REPORTERS: Mapping[str, Reporter] = _Reporters()

JSON_SCHEMA_PATH: Path = JSON_DOCUMENTS["scan"].schema_path


def render(name: str, report: ScanReport, options: ReportOptions | None = None) -> str:
    """Render ``report`` in format ``name`` (a key of :data:`REPORTERS`)."""
    try:
        reporter = REPORTERS[name]
    except KeyError:
        known = ", ".join(sorted(REPORTERS))
        raise ValueError(f"unknown report format {name!r} (known: {known})") from None
    return reporter.render(report, options or ReportOptions())


__all__ = ["JSON_SCHEMA_PATH", "REPORTERS", "SCHEMA_VERSION", "ReportOptions", "Reporter",
           "color_wanted", "read_file_text", "render"]
