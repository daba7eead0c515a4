"""One registry of outputs (hcpscan/reporters/formats.py): `scan --format` accepts exactly
its formats, REPORTERS is built from it, and every command's `--format json` is a
versioned document that validates against the JSON Schema shipped for it."""

from __future__ import annotations

import argparse
import json
import re

import jsonschema
import pytest

from hcpscan.cli.main import build_parser
from hcpscan.cli.reporting import FORMATS
from hcpscan.reporters import JSON_SCHEMA_PATH, REPORTERS, SCHEMA_VERSION
from hcpscan.reporters.formats import JSON_DOCUMENTS, SCAN_FORMAT_NAMES, SCAN_FORMATS, json_document
from tests.conftest import FIXTURES, ROOT

EXAMPLE = str(FIXTURES / "example")
HCP007 = str(FIXTURES / "rules" / "HCP007" / "fail")  # required flows: hosted clusters, one blocked

# The command line whose JSON each registered document is checked on: the bundled
# example estate (an HTTPS proxy with a CA bundle, embedded manifests, passed-over files).
COMMANDS = {
    "scan": ("scan", EXAMPLE, "--no-config", "--no-progress", "--format", "json"),
    "proxy": ("proxy", EXAMPLE, "--all", "--no-progress", "--format", "json"),
    "inventory": ("inventory", EXAMPLE, "--no-progress", "--format", "json"),
    "rules list": ("rules", "list", "--format", "json"),
    "noproxy": ("noproxy", "--env", "HTTPS_PROXY=http://svc:Spring2026@proxy.corp:3128",
                "--env", "NO_PROXY=.svc,10.128.0.0/14", "https://10.129.0.7",
                "https://api.example.com", "--runtime", "go", "--runtime", "python",
                "--format", "json"),
    "connectivity": ("connectivity", EXAMPLE, "--no-progress", "--format", "json"),
    "templates list": ("templates", "list", "--format", "json"),
    "templates show": ("templates", "show", "reference_exists", "--format", "json"),
    "flows list": ("flows", "list", "--format", "json"),
    "flows show": ("flows", "show", "workers-to-konnectivity", "--format", "json"),
}
PROXY = "clusters-agent-prod/ignition-server-proxy"  # a workload of the example behind a NodePort
# connectivity's other answers, each with the list field it must fill
CONNECTIVITY = {
    "changes": ("connectivity", "diff", EXAMPLE, str(FIXTURES / "reachability"), "--no-progress",
                "--format", "json"),
    "reaches": ("connectivity", EXAMPLE, "--to", PROXY, "--port", "8443", "--no-progress",
                "--format", "json"),
    "exposed": ("connectivity", EXAMPLE, "--to", PROXY, "--no-progress", "--format", "json"),
    "answers": ("connectivity", HCP007, "--path", "--from", "workers", "--to",
                "clusters-edge/kube-apiserver", "--port", "8091", "--no-progress", "--format", "json"),
    "results": ("connectivity", HCP007, "--flow", "workers-to-konnectivity", "--no-progress",
                "--format", "json"),
}


def _errors(document: object, command: str) -> list[str]:
    schema = JSON_DOCUMENTS[command].load_schema()
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def test_scan_formats_reporters_and_cli_are_one_list():
    assert FORMATS == SCAN_FORMAT_NAMES
    assert list(REPORTERS) == list(SCAN_FORMAT_NAMES)
    assert len(set(SCAN_FORMAT_NAMES)) == len(SCAN_FORMATS)
    for fmt in SCAN_FORMATS:
        assert REPORTERS[fmt.name].name == fmt.name
        assert type(REPORTERS[fmt.name]).__name__ == fmt.reporter.partition(":")[2]


def test_scan_help_and_the_unknown_format_message_name_every_registered_format(run_cli):
    helped = run_cli("scan", "--help")
    assert helped.code == 0
    listed = " ".join(helped.out.split())  # argparse wraps the help text
    unknown = run_cli("scan", EXAMPLE, "--format", "yaml")
    assert unknown.code == 2 and "unknown format 'yaml'" in unknown.err
    for name in SCAN_FORMAT_NAMES:
        assert name in listed, name
        assert name in unknown.err, name


def _offered_formats(action: argparse.Action) -> tuple[str, ...]:
    """The values a --format option takes: its choices, or (for the repeatable FMT[=FILE]
    options of scan, cluster and fleet, which check the name themselves) the list its help
    gives after 'one of'."""
    if action.choices:
        return tuple(action.choices)
    listed = re.search(r"one of ([\w, -]+?);", " ".join((action.help or "").split()))
    assert listed, f"{action.option_strings}: neither choices nor 'one of ...;' in its help"
    return tuple(name.strip() for name in listed.group(1).split(","))


def _commands_offering_json(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands_offering_json(sub, (*path, name))
        elif "--format" in action.option_strings and "json" in _offered_formats(action):
            yield " ".join(path)


def test_every_command_with_json_output_is_registered():
    """Walks the CLI's own parsers: a new command (or subcommand) offering --format json
    that has no registered, versioned document fails here."""
    offering = set(_commands_offering_json(build_parser()))
    assert {"scan", "cluster", "proxy", "flows list", "connectivity"} <= offering  # the walk works
    registered = {name for doc in JSON_DOCUMENTS.values() for name in (doc.command, *doc.also)}
    assert offering == registered
    # each is run and validated here, but fleet (it reads a hub: tests/fleet/test_matrix.py)
    # and cluster (a live scan: the scan report, checked through `scan`)
    assert set(COMMANDS) == set(JSON_DOCUMENTS) - {"fleet"}


def test_a_json_option_the_walk_cannot_read_fails_it():
    parser = argparse.ArgumentParser(prog="hcpscan")
    sub = parser.add_subparsers()
    sub.add_parser("newcmd").add_argument("--format", choices=("table", "json"))
    sub.add_parser("other").add_argument("--format", action="append", help="one of table, json; repeat")
    assert set(_commands_offering_json(parser)) == {"newcmd", "other"}
    sub.add_parser("opaque").add_argument("--format", action="append", help="a format")
    with pytest.raises(AssertionError, match="neither choices"):
        list(_commands_offering_json(parser))


@pytest.mark.parametrize("command", sorted(JSON_DOCUMENTS))
def test_each_schema_is_shipped_valid_and_accepts_its_version(command):
    doc = JSON_DOCUMENTS[command]
    path = doc.schema_path
    assert path.parent == JSON_SCHEMA_PATH.parent and path.suffix == ".json"  # package data: *.json
    schema = doc.load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "schema_version" in schema["required"]
    assert schema["additionalProperties"] is False
    version = jsonschema.Draft202012Validator(schema["properties"]["schema_version"])
    assert version.is_valid(doc.version)
    assert not version.is_valid("0.9")
    assert f"`hcpscan {command} --format json`" in schema["description"]
    if "version" in schema["properties"]:  # the field written before schema_version, kept
        assert schema["properties"]["version"]["const"] == 1
        assert schema["properties"]["version"]["description"].startswith("Deprecated")


def test_the_scan_report_version_is_the_registered_one():
    assert SCHEMA_VERSION == JSON_DOCUMENTS["scan"].version
    assert JSON_SCHEMA_PATH == JSON_DOCUMENTS["scan"].schema_path


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_json_validates_against_its_schema(run_cli, command):
    result = run_cli(*COMMANDS[command])
    assert result.code in (0, 1), result.err
    document = json.loads(result.out)
    assert document["schema_version"] == JSON_DOCUMENTS[command].version
    assert next(iter(document)) == "schema_version"
    assert _errors(document, command) == []
    body = [v for k, v in document.items() if k != "schema_version" and isinstance(v, list | dict)]
    assert any(body), f"{command}: the example must give it something to show"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_schemas_reject_a_document_without_its_version_or_with_an_unknown_field(run_cli, command):
    document = json.loads(run_cli(*COMMANDS[command]).out)
    unversioned = {k: v for k, v in document.items() if k != "schema_version"}
    assert any("'schema_version' is a required property" in e for e in _errors(unversioned, command))
    assert _errors({**document, "unexpected": 1}, command)
    assert _errors({**document, "schema_version": "2.0"}, command)


@pytest.mark.parametrize("field", sorted(CONNECTIVITY))
def test_each_connectivity_answer_validates_against_the_connectivity_schema(run_cli, field):
    result = run_cli(*CONNECTIVITY[field])
    assert result.code in (0, 1), result.err
    document = json.loads(result.out)
    assert document["schema_version"] == JSON_DOCUMENTS["connectivity"].version
    assert document[field], f"the example must give connectivity {field} something"
    assert _errors(document, "connectivity") == []
    assert _errors({**document, "connections": []}, "connectivity")  # one answer per document


def test_json_document_puts_the_registered_version_first_and_refuses_an_unknown_command():
    assert list(json_document("proxy", {"consumers": []})) == ["schema_version", "consumers"]
    with pytest.raises(ValueError, match="no JSON document"):
        json_document("nosuch", {})


def test_the_docs_list_every_format_and_schema():
    page = (ROOT / "docs" / "output-formats.md").read_text(encoding="utf-8")
    for name in SCAN_FORMAT_NAMES:
        assert f"`{name}`" in page, name
    rows = {line.split("|")[1].strip(): line for line in page.splitlines() if line.startswith("| `hcpscan ")}
    for doc in JSON_DOCUMENTS.values():
        row = next((line for head, line in rows.items()
                    if head.startswith(f"`hcpscan {doc.command} --format json`")), "")
        assert f"`{doc.schema}`" in row and f"| `{doc.version}` |" in row, doc.command


@pytest.mark.parametrize("args", [
    # a guest cluster's flow: results name the guest cluster, not a HostedCluster
    ("connectivity", str(FIXTURES / "rules" / "HCP010" / "fail"), "--flow", "guest-pods-to-kas"),
    # a path blocked at a perimeter file: blocked_by names the rule file
    ("connectivity", str(FIXTURES / "rules" / "HCP007" / "pass"), "--firewall",
     str(FIXTURES / "required-flows" / "sg-kas-only.yaml"), "--path", "--from", "10.50.0.0/24",
     "--to", "clusters-bm/ignition-server-proxy", "--port", "8443"),
], ids=["guest-flow", "perimeter-path"])
def test_the_other_flow_and_path_answers_validate_too(run_cli, args):
    result = run_cli(*args, "--no-progress", "--format", "json")
    assert result.code == 1, result.err  # both are blocked
    document = json.loads(result.out)
    assert document["schema_version"] == JSON_DOCUMENTS["connectivity"].version
    assert document.get("results") or document.get("answers")
    assert _errors(document, "connectivity") == []
    assert _errors({**document, "version": 2}, "connectivity")  # the old field stays 1
    if document.get("results"):
        first = {**document["results"][0], "status": "maybe"}
        assert _errors({**document, "results": [first]}, "connectivity")
    else:
        first = {**document["answers"][0], "hops": [{"from": "a"}]}
        assert _errors({**document, "answers": [first]}, "connectivity")
