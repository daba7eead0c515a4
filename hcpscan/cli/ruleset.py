"""Rule selection, config file, suppressions and baseline: arguments shared by scan and cluster."""

from __future__ import annotations

import argparse
import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from hcpscan.analysis.reachability.perimeter import PerimeterError, load_perimeter
from hcpscan.cli.inputs import UsageError
from hcpscan.rules.config import ConfigError, ScanConfig, find_config, load_config
from hcpscan.rules.engine import SelectionError
from hcpscan.rules.loader import RuleFileError
from hcpscan.rules.model import Rule
from hcpscan.rules.suppress import BaselineError, Suppressor, read_baseline
from hcpscan.scan import RuleSelection, load_rules


@dataclass(slots=True)
class PreparedRules:
    rules: list[Rule]
    config: ScanConfig
    suppressor: Suppressor


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


def add_rule_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("rules")
    group.add_argument("--rules", action="append", metavar="DIR", default=[],
                       help="add the rule files of DIR to the built-in ones (repeatable)")
    group.add_argument("--select", action="append", metavar="IDS",
                       help="only these rules: ids (any case), families (HCP), categories "
                            "(proxy) or patterns (PRX01*), comma separated (repeatable); an "
                            "entry that names no rule is an error")
    group.add_argument("--ignore", action="append", metavar="IDS",
                       help="skip these rules: ids, families, categories or patterns with * "
                            "(repeatable)")
    config = group.add_mutually_exclusive_group()
    config.add_argument("--config", metavar="FILE",
                        help="config file (default: the nearest .hcpscan.yaml from the working "
                             "directory up to the repository root, never one inside a scanned "
                             "path)")
    config.add_argument("--no-config", action="store_true",
                        help="use no config file, not even a .hcpscan.yaml nearby")
    group.add_argument("--firewall", metavar="FILE",
                       help="perimeter file: the security groups / firewall in front of the nodes "
                            "(format: `hcpscan connectivity --help`); default: inputs.firewall of "
                            "the config")
    group.add_argument("--baseline", metavar="FILE",
                       help="suppress the findings recorded in FILE (see --write-baseline)")
    group.add_argument("--write-baseline", metavar="FILE",
                       help="record the current failing findings in FILE and exit 0")


def prepare_rules(args: argparse.Namespace, scanned: list[Path]) -> PreparedRules:
    """``scanned``: the paths the run reads (none for a live scan); one config
    applies to all of them."""
    config = _config(args, scanned)
    try:
        rules = load_rules(config, RuleSelection([Path(d) for d in args.rules],
                                                 _split(args.select), _split(args.ignore)))
    except RuleFileError as exc:
        raise UsageError(f"rule file {exc.path}:{exc.line or 1}: {exc.message}",
                         "fix the rule file; see `hcpscan rules show <ID>` for a valid example"
                         ) from None
    except SelectionError as exc:
        raise UsageError(str(exc), "give a rule id (PRX008, any case), a family (PRX), a category "
                         "(proxy) or a pattern with * (PRX01*); `hcpscan rules list` lists "
                         "them") from None
    if not rules:
        where = f"the config file {config.path}" if config.path else "--rules (no config file was used)"
        raise UsageError("no rules selected", f"check --select/--ignore and {where}")
    baseline = {}
    if args.baseline:
        try:
            baseline = read_baseline(Path(args.baseline))
        except BaselineError as exc:
            raise UsageError(str(exc), "write a baseline with --write-baseline FILE") from None
    if args.firewall:
        config.firewall = Path(args.firewall)
    if config.firewall is not None:
        try:
            load_perimeter(config.firewall)  # fail early, before any loading
        except PerimeterError as exc:
            raise UsageError(f"perimeter file {exc}", "fix the file; its format is in "
                             "`hcpscan connectivity --help`") from None
    suppressor = Suppressor(config.exemptions, baseline, dt.date.today())
    return PreparedRules(rules, config, suppressor)


def _config(args: argparse.Namespace, scanned: list[Path]) -> ScanConfig:
    if args.no_config:
        return ScanConfig()
    path = Path(args.config) if args.config else find_config(Path.cwd(), scanned)
    if path is None:
        return ScanConfig()
    if not path.is_file():
        raise UsageError(f"config file not found: {path}", "check the --config path")
    try:
        return load_config(path)
    except ConfigError as exc:
        raise UsageError(f"config {exc.path}:{exc.line or 1}: {exc.message}",
                         "fix the config file; its format is in docs/manual.md") from None
