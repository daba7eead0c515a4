"""The one registry of what hcpscan writes: the report formats of ``hcpscan scan`` and the
versioned JSON documents of every command.

``SCAN_FORMATS`` names each ``--format`` of ``scan`` and the reporter class that renders
it; ``hcpscan.reporters.REPORTERS`` is built from it and ``hcpscan scan --format`` accepts
exactly these names. ``JSON_DOCUMENTS`` gives, for each command with ``--format json``, the
``schema_version`` it writes and the JSON Schema (shipped beside this module) its output
follows. A command writes its JSON through :func:`json_document`, so the version it
writes is the one registered here.

``schema_version`` is ``MAJOR.MINOR``: a MINOR bump only adds fields (consumers ignore
fields they do not know); a MAJOR bump renames, removes or changes the meaning of one.
Adding a format: docs/output-formats.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import IO, Any

SCHEMA_DIR = Path(__file__).parent


@dataclass(frozen=True, slots=True)
class ReportFormat:
    """One ``hcpscan scan --format`` value."""

    name: str
    reporter: str  # "module:Class" under hcpscan.reporters, imported when first needed
    summary: str  # one line for docs and help

    def load(self) -> Any:
        module, _, cls = self.reporter.partition(":")
        return getattr(import_module(f"hcpscan.reporters.{module}"), cls)()


# In the order `hcpscan scan --help` lists them.
SCAN_FORMATS: tuple[ReportFormat, ...] = (
    ReportFormat("table", "table:TableReporter", "the detailed terminal table"),
    ReportFormat("concise", "concise:ConciseReporter", "one line per finding (path:line:col: ID ...)"),
    ReportFormat("json", "json:JsonReporter", "the whole report, schema hcpscan-report.schema.json"),
    ReportFormat("sarif", "sarif:SarifReporter", "SARIF 2.1.0 for code scanning"),
    ReportFormat("junit", "junit:JunitReporter", "JUnit XML, one testcase per rule"),
    ReportFormat("markdown", "markdown:MarkdownReporter", "a pull-request comment"),
    ReportFormat("html", "html:HtmlReporter", "one self-contained page"),
    ReportFormat("openreports", "openreports:OpenReportsReporter",
                 "openreports.io/v1alpha1 Report/ClusterReport YAML"),
    ReportFormat("policyreport", "policyreport:PolicyReportReporter",
                 "wgpolicyk8s.io/v1alpha2 PolicyReport YAML"),
    ReportFormat("github", "github:GithubReporter", "GitHub Actions workflow annotations"),
    ReportFormat("gitlab", "gitlab:GitlabReporter", "GitLab code-quality JSON"),
)
SCAN_FORMAT_NAMES: tuple[str, ...] = tuple(f.name for f in SCAN_FORMATS)


@dataclass(frozen=True, slots=True)
class JsonDocument:
    """What ``hcpscan <command> --format json`` writes."""

    command: str
    version: str  # MAJOR.MINOR
    schema: str  # file name beside this module
    # other commands that write this same document (`cluster` writes the scan report)
    also: tuple[str, ...] = ()

    @property
    def schema_path(self) -> Path:
        return SCHEMA_DIR / self.schema

    def load_schema(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.schema_path.read_text(encoding="utf-8"))
        return loaded


# Every command's document, the scan report (reporters/json.py) included.
JSON_DOCUMENTS: dict[str, JsonDocument] = {
    doc.command: doc for doc in (
        JsonDocument("scan", "1.3", "hcpscan-report.schema.json", also=("cluster",)),
        JsonDocument("proxy", "1.0", "hcpscan-proxy.schema.json"),
        JsonDocument("noproxy", "1.0", "hcpscan-noproxy.schema.json"),
        JsonDocument("inventory", "1.0", "hcpscan-inventory.schema.json"),
        JsonDocument("rules list", "1.0", "hcpscan-rules.schema.json"),
        JsonDocument("connectivity", "1.1", "hcpscan-connectivity.schema.json"),
        JsonDocument("templates list", "1.0", "hcpscan-templates.schema.json"),
        JsonDocument("templates show", "1.0", "hcpscan-templates.schema.json"),
        JsonDocument("fleet", "1.0", "hcpscan-fleet.schema.json"),
        JsonDocument("flows list", "1.0", "hcpscan-flows.schema.json"),
        JsonDocument("flows show", "1.0", "hcpscan-flows.schema.json"),
    )
}


def json_document(command: str, fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` as the registered document of ``command``: ``schema_version`` first."""
    try:
        doc = JSON_DOCUMENTS[command]
    except KeyError:
        raise ValueError(f"no JSON document is registered for {command!r}") from None
    return {"schema_version": doc.version, **fields}


def write_json(command: str, fields: dict[str, Any], stream: IO[str], *,
               ensure_ascii: bool = True) -> None:
    """Write ``command``'s JSON document (indented, one final newline) to ``stream``."""
    json.dump(json_document(command, fields), stream, indent=2, ensure_ascii=ensure_ascii)
    stream.write("\n")
