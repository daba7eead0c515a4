"""Lazy start-up: `--version`, `--help` and a one-file offline scan import only what they use.

Each case runs in a fresh interpreter (imports are per process) and lists the modules it
imported; the heavy libraries a scan of one file does not need (networkx for the graph
export, the kubernetes/urllib3 live client, jsonschema for validating rule files and
configs, cryptography for CA bundles) must stay out.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

from hcpscan.cli import main as cli_main
from tests.conftest import FIXTURES, ROOT

HEAVY = {"networkx", "kubernetes", "urllib3", "jsonschema", "cryptography", "requests"}

# The distributions an offline scan of one manifest imports, besides hcpscan and the
# standard library: a new one here is a start-up cost every user pays on every run.
# rich draws the terminal table: a scan writing JSON does not load it.
ONE_FILE_SCAN_DISTRIBUTIONS = {"PyYAML", "yaml-rs", "jsonpath-ng", "cel-expr-python", "idna"}
# The reporter modules of the formats a one-file JSON scan does not write.
OTHER_REPORTERS = {f"hcpscan.reporters.{name}" for name in (
    "table", "concise", "sarif", "junit", "markdown", "html", "openreports", "policyreport",
    "github", "gitlab")}

_PROBE = textwrap.dedent("""\
    import sys
    before = set(sys.modules)  # the interpreter's own start-up (site, .pth hooks)
    import contextlib, io, json
    from importlib.metadata import packages_distributions
    from hcpscan.cli.main import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = main(sys.argv[1:])
        except SystemExit as exc:
            code = exc.code
    tops = {name.split(".")[0] for name in set(sys.modules) - before}
    owners = packages_distributions()
    dists = sorted({d for top in tops if top not in sys.stdlib_module_names
                    for d in owners.get(top, ())})
    print(json.dumps({"code": code, "out": out.getvalue(), "tops": sorted(tops),
                      "dists": dists, "hcpscan": sorted(m for m in sys.modules
                                                         if m.startswith("hcpscan"))}))
""")


def imported_by(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def test_version_imports_no_command():
    seen = imported_by("--version")
    assert seen["code"] == 0 and seen["out"].startswith("hcpscan ")
    assert seen["hcpscan"] == ["hcpscan", "hcpscan.cli", "hcpscan.cli.exitcodes", "hcpscan.cli.main"]
    assert not HEAVY & set(seen["tops"])


def test_help_lists_every_command_without_importing_them():
    seen = imported_by("--help")
    assert seen["code"] == 0
    for name, (_, help_text) in cli_main.COMMANDS.items():
        assert name in seen["out"] and help_text in seen["out"]
    assert not any(m.endswith("_cmd") for m in seen["hcpscan"])
    assert not HEAVY & set(seen["tops"])


def test_one_file_scan_imports_only_what_it_uses(tmp_path):
    """One file holding a HostedCluster and its HCP namespace: the rules run, the
    reachability graph is built, and still none of the heavy libraries is imported."""
    folder = FIXTURES / "rules" / "HCP001" / "fail"
    manifest = tmp_path / "hosted-cluster.yaml"
    manifest.write_text("\n---\n".join((folder / name).read_text()
                                        for name in ("hostedcluster.yaml", "hcp-namespace.yaml")))
    seen = imported_by("scan", str(manifest), "--format", "json")
    report = json.loads(seen["out"])
    assert {f["rule_id"] for f in report["findings"]} >= {"HCP001"}
    assert "hcpscan.analysis.reachability.graph" in seen["hcpscan"]
    # the required-flow path graph that HCP007/HCP008 and a failing HCP001/HCP002 ask is
    # answered over its own hops; networkx is loaded only to export it (--paths-out)
    assert not HEAVY & set(seen["tops"]), HEAVY & set(seen["tops"])
    plain = imported_by("scan", str(manifest), "--format", "json", "--select", "HCP003,HCP005,HCP006")
    assert "hcpscan.analysis.reachability.graph" in plain["hcpscan"]
    assert not HEAVY & set(plain["tops"]), HEAVY & set(plain["tops"])
    assert set(seen["dists"]) - {"hcpscan"} == ONE_FILE_SCAN_DISTRIBUTIONS
    assert set(plain["dists"]) - {"hcpscan"} == ONE_FILE_SCAN_DISTRIBUTIONS
    assert not any(m.startswith("hcpscan.sources.live") for m in seen["hcpscan"])
    others = {module for name, (module, _) in cli_main.COMMANDS.items() if name != "scan"}
    assert not others & set(seen["hcpscan"])
    # only the format written is imported (the table's rich, junit's XML writer are not)
    assert not OTHER_REPORTERS & set(seen["hcpscan"]) and "hcpscan.reporters.json" in seen["hcpscan"]
    assert not {"rich", "xml"} & set(seen["tops"]) and not {"rich", "xml"} & set(plain["tops"])
    # the parse workers' pool is imported when an input is large enough to start it
    assert not {"multiprocessing", "concurrent"} & set(seen["tops"]), seen["tops"]


def test_the_table_format_loads_its_reporter_and_rich(tmp_path):
    manifest = tmp_path / "proxy.yaml"
    manifest.write_text((FIXTURES / "rules" / "PRX008" / "fail" / "cluster-proxy.yaml").read_text())
    seen = imported_by("scan", str(manifest), "--format", "table")
    assert "PRX008" in seen["out"]
    assert "hcpscan.reporters.table" in seen["hcpscan"] and "rich" in seen["tops"]
    assert not (OTHER_REPORTERS - {"hcpscan.reporters.table"}) & set(seen["hcpscan"])


def test_a_command_is_imported_with_the_collector_paused_then_frozen():
    """Importing the scan command runs no cyclic collection (dozens did, each walking all
    that was imported so far), and what it made is frozen (no later collection walks it);
    the collector is on again after (a young collection while registering is cheap)."""
    probe = textwrap.dedent("""\
        import gc, json
        from hcpscan.cli import main
        runs = []
        gc.callbacks.append(lambda phase, info: runs.append(info["generation"]) if phase == "stop" else None)
        frozen = gc.get_freeze_count()
        main.build_parser("scan", all_commands=False)
        print(json.dumps({"runs": runs, "frozen": gc.get_freeze_count() - frozen,
                          "enabled": gc.isenabled()}))
    """)
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=True)
    seen = json.loads(done.stdout)
    assert len(seen["runs"]) <= 3 and seen["enabled"]  # registering the arguments may start one
    assert seen["frozen"] > 10_000  # the rule engine, templates and analyses' classes and functions


def test_the_help_main_shows_is_the_help_each_command_registers():
    """main.py names each command's help so `--help` need not import the command."""
    parser = cli_main.build_parser(all_commands=True)
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    registered = {action.dest: action.help for action in commands._choices_actions}
    assert registered == {name: help_text for name, (_, help_text) in cli_main.COMMANDS.items()}


def test_a_command_after_hcpscan_options_is_still_found():
    assert cli_main.chosen_command(["--debug", "scan", "x.yaml"]) == "scan"
    assert cli_main.chosen_command(["--version"]) is None
    assert cli_main.chosen_command(["nosuch", "scan"]) is None


def test_an_unknown_command_is_a_usage_error_naming_the_commands(run_cli):
    result = run_cli("scna", "x.yaml")
    assert result.code == 2
    assert "invalid choice: 'scna'" in result.err and "scan" in result.err
