"""Offline input shared by the commands that read paths: arguments, loading, progress."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable

from hcpscan import collector
from hcpscan.cli import exitcodes
from hcpscan.cli.errors import UsageError
from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import HCPSCAN_API, UNAVAILABLE_KIND, K8sObject
from hcpscan.inventory.store import UnavailableKind
from hcpscan.sources.gathered import not_collected
from hcpscan.sources.interface import InputLimits
from hcpscan.sources.loader import LoadResult, PathNotFound, ResourceNeeds, load_paths
from hcpscan.sources.walk import CONFIG_NAMES, DEFAULT_LIMITS, ArchiveMembers, size_text

PATHS_HELP = (
    "files, directories, must-gather / `oc adm inspect` / `hypershift dump` trees, "
    ".tar/.tar.gz/.tgz/.tar.xz/.txz/.tar.bz2/.zip archives, or - for standard input"
)


_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def byte_size(text: str) -> int:
    """A size as given on the command line: bytes, or a number with K, M or G (binary units)."""
    value = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = value[-1:] if value[-1:] in _UNITS else ""
    number = value[: len(value) - len(unit)]
    if not number.isascii() or not number.isdigit() or int(number) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 500M, 2G)")
    if len(number) > 20 or int(number) * _UNITS[unit] > MAX_BYTE_SIZE:
        raise argparse.ArgumentTypeError(f"{text!r} is larger than {MAX_BYTE_SIZE >> 30}G, "
                                         "more than any input hcpscan reads")
    return int(number) * _UNITS[unit]


MAX_BYTE_SIZE = 1 << 40  # 1024G: a size beyond it is a typo, and overflows what reads take


def node_count(text: str) -> int:
    """A number of nodes as given on the command line: a count, or one with K or M (thousands, millions)."""
    value = text.strip().upper().replace("_", "").replace(",", "")
    scale = {"K": 1000, "M": 1000**2}.get(value[-1:], 1)
    number = value[:-1] if scale > 1 else value
    if not number.isascii() or not number.isdigit() or len(number) > 15 or int(number) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of nodes (e.g. 20000000, 20M)")
    return int(number) * scale


def add_path_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help=PATHS_HELP)
    parser.add_argument("--max-file-size", type=byte_size, metavar="SIZE",
                        default=DEFAULT_LIMITS.max_file_size,
                        help="do not read files or archive members larger than this "
                             f"(default {size_text(DEFAULT_LIMITS.max_file_size)}; e.g. 500M, 2G)")
    parser.add_argument("--max-nodes", type=node_count, metavar="N",
                        default=DEFAULT_LIMITS.max_nodes,
                        help="do not parse files that make more than N nodes (mappings, lists "
                             f"and values; default {DEFAULT_LIMITS.max_nodes:,}; e.g. 20000000, 20M)")
    parser.add_argument("--follow-symlinks", action="store_true",
                        help="read symbolic links to files outside the scanned folder "
                             "(default: passed over and counted)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", dest="progress", action="store_true", default=None,
                       help="show a progress bar while reading (default: on a terminal)")
    group.add_argument("--no-progress", dest="progress", action="store_false",
                       help="never show a progress bar")


def _show_progress(args: argparse.Namespace) -> bool:
    if args.progress is not None:
        return bool(args.progress)
    return sys.stderr.isatty() and not os.environ.get("NO_COLOR") and not os.environ.get("CI")


def load_inventory(args: argparse.Namespace, needs: ResourceNeeds | None = None,
                   applied_config: str | None = None, kinds: Iterable[str] = ()) -> Inventory:
    """Load the paths of a command; raise ``UsageError`` when there is nothing to scan.
    ``applied_config``: the config file the run uses (given with --config), which is
    not reported as "inside a scanned path, not applied" even when it is there.
    ``kinds``: those the rules check, whose absence from a must-gather is noted."""
    limits = input_limits(args)
    with collector.building():
        inventory, result = _build_inventory(args, needs, applied_config, kinds, limits)
    if not inventory.objects:
        problems = "; ".join(str(d) for d in inventory.diagnostics[:3])  # objects left out too
        passed = inventory.skipped.counts
        if passed and not problems:  # e.g. only tool configuration or fragments without kind
            problems = "passed over: " + ", ".join(
                f"{n} {reason}" for reason, n in sorted(passed.items()))
        raise UsageError(
            f"no Kubernetes objects found in {', '.join(args.paths)}"
            + (f" ({problems})" if problems else ""),
            "point hcpscan at manifests, a must-gather or hypershift dump, or an archive of one")
    return inventory


def _build_inventory(args: argparse.Namespace, needs: ResourceNeeds | None, applied_config: str | None,
                     kinds: Iterable[str], limits: InputLimits) -> tuple[Inventory, LoadResult]:
    try:
        if _show_progress(args):
            result = _load_with_progress(args.paths, needs, limits)
        else:
            result = load_paths(args.paths, needs, limits=limits)
    except PathNotFound as exc:
        raise UsageError(f"path not found: {exc.args[0]}",
                         "check the spelling; give a file, a directory or an archive") from None
    objects, unavailable = _recorded_unavailable(result.objects)
    present = {o.kind for o in objects}
    for kind, why in not_collected(result.dumps.gathered(), kinds, present,
                                   result.dumps.crd_lists()).items():
        unavailable.setdefault(kind, why)
    diagnostics = result.diagnostics
    if applied_config is not None:
        applied = os.path.realpath(applied_config)
        # hidden files are never read, so their only diagnostic is the walker's notice
        diagnostics = [d for d in diagnostics if os.path.basename(d.path) not in CONFIG_NAMES
                       or os.path.realpath(d.path) != applied]
    return Inventory(objects, diagnostics, result.skipped, unavailable=unavailable,
                     read_member=ArchiveMembers().read), result


def input_limits(args: argparse.Namespace) -> InputLimits:
    return InputLimits(max_file_size=args.max_file_size, max_nodes=args.max_nodes,
                       follow_symlinks=args.follow_symlinks)


def _recorded_unavailable(objects: list[K8sObject]) -> tuple[list[K8sObject], dict[str, UnavailableKind]]:
    """A dump saved by ``hcpscan cluster --save-dump`` records the kinds the live read
    could not list: they are as unavailable offline as they were live."""
    def recorded(obj: K8sObject) -> bool:
        return obj.kind == UNAVAILABLE_KIND and obj.api_version == HCPSCAN_API

    records = [o for o in objects if recorded(o)]
    if not records:
        return objects, {}
    from hcpscan.sources.live.dump import unavailable_from  # the live package only when needed

    unavailable: dict[str, UnavailableKind] = {}
    for record in records:
        unavailable.update(unavailable_from(record.body))
    return [o for o in objects if not recorded(o)], unavailable


def _load_with_progress(paths: list[str], needs: ResourceNeeds | None,  # type: ignore[no-untyped-def]
                        limits: InputLimits):
    from rich.markup import escape
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from hcpscan.core.redact import shown

    with Progress(SpinnerColumn(), TextColumn("reading {task.fields[files]} files"),
                  TextColumn("[dim]{task.description}"), TimeElapsedColumn(),
                  transient=True, console=_stderr_console()) as bar:
        task = bar.add_task("", files=0)

        def tick(files: int, path: str) -> None:
            if files % 25 == 0:
                bar.update(task, files=files, description=escape(shown(path)[-60:]))

        return load_paths(paths, needs, progress=tick, limits=limits)


def _stderr_console():  # type: ignore[no-untyped-def]
    from rich.console import Console

    return Console(stderr=True)


def exit_code_for_input(inventory: Inventory) -> int:
    """Input that could not be read makes the run fail even when it found nothing."""
    if any(d.severity == "error" for d in inventory.diagnostics):
        return exitcodes.USAGE
    return exitcodes.OK
