"""Command-line entry point: parses arguments and wires the pipeline stages together."""

from __future__ import annotations

import argparse
import errno
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

from hcpscan import __version__
from hcpscan.cli import exitcodes

# Each module registers one subcommand with `register(subparsers)`. Only the module of the
# command being run is imported: `--version`, `--help` and one command's run import nothing
# else (the rule engine, the live client, networkx...). The one-line help shown by `hcpscan
# --help` is therefore here; tests/cli/test_startup.py checks it is the one each module
# registers.
COMMANDS = {
    "scan": ("hcpscan.cli.scan_cmd", "scan manifests, dumps or archives offline"),
    "fix": ("hcpscan.cli.fix_cmd", "write the changes that clear findings"),
    "cluster": ("hcpscan.cli.cluster_cmd", "scan a live cluster through its API (read-only)"),
    "fleet": ("hcpscan.cli.fleet_cmd", "the fleet matrix from an OCM hub (read-only)"),
    "inventory": ("hcpscan.cli.inventory_cmd", "list the objects read from PATHs"),
    "rules": ("hcpscan.cli.rules_cmd", "list rules or show a rule's documentation"),
    "templates": ("hcpscan.cli.templates_cmd", "list check templates or show one's parameters"),
    "connectivity": ("hcpscan.cli.connectivity_cmd",
                     "list allowed connections, or ask who can reach a workload"),
    "flows": ("hcpscan.cli.flows_cmd", "list the flows a hosted control plane needs open"),
    "noproxy": ("hcpscan.cli.noproxy_cmd", "evaluate a NO_PROXY list per HTTP client for URLs"),
    "proxy": ("hcpscan.cli.proxy_cmd", "list each consumer's effective proxy settings"),
    "completion": ("hcpscan.cli.completion_cmd", "print a shell completion script"),
}
COMMAND_MODULES = tuple(module for module, _ in COMMANDS.values())

DESCRIPTION = """\
hcpscan checks the networking and proxy configuration of Kubernetes hosted
control planes (HyperShift / OpenShift HCP), Open Cluster Management hubs and
Cluster API fleets, from a live cluster or offline from manifests and dumps.

examples:
  hcpscan cluster --kubeconfig ~/.kube/config
  hcpscan scan ./must-gather.local.123
  hcpscan scan gitops/ --format sarif -o hcpscan.sarif
  hcpscan fix gitops/ --diff hcpscan.patch
  hcpscan rules show HCP001
  hcpscan fleet --kubeconfig hub.kubeconfig     # every managed cluster's results, via OCM
  hcpscan noproxy --no-proxy ".svc,10.0.0.0/8" https://10.1.2.3:6443
"""


def chosen_command(argv: Sequence[str]) -> str | None:
    """The command named on the command line (the first word that is not an option of
    hcpscan itself), or None for `hcpscan`, `hcpscan --help`, `hcpscan --version`."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def _imported(module: str) -> ModuleType:
    """A command's module. Importing it makes classes, functions and constants that live
    as long as the process, and next to no garbage: the cyclic collector is paused
    meanwhile and what the first import made is frozen after (``gc.freeze``), so no
    collection walks it again (each one walked it all: about a tenth of a one-file
    scan's CPU)."""
    fresh = module not in sys.modules
    enabled = gc.isenabled()
    gc.disable()
    try:
        return importlib.import_module(module)
    finally:
        if fresh:
            gc.freeze()
        if enabled:
            gc.enable()


class _Parser(argparse.ArgumentParser):
    """argparse's parser, but what it prints (``--version``, ``--help``, usage errors) is
    not lost without a word: argparse drops an ``OSError`` of that write, so ``hcpscan
    --version > /dev/full`` exited 0 having written nothing. The error goes on to ``main``,
    which says it as for any other output. Subcommands' parsers are of this class too."""

    def _print_message(self, message: str, file: Any = None) -> None:
        if message:
            (file or sys.stderr).write(message)


def build_parser(command: str | None = None, all_commands: bool = True) -> argparse.ArgumentParser:
    """The parser; ``all_commands=False`` registers only ``command`` in full and the others
    by name and help (enough for `--help` and for argparse's "invalid choice" message)."""
    parser = _Parser(
        prog="hcpscan", description=DESCRIPTION, epilog=exitcodes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"hcpscan {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        if all_commands or name == command:
            _imported(module).register(subparsers)
        else:
            subparsers.add_parser(name, help=help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    closed = _closed_stream(words)
    if closed is not None:
        return closed
    parser = build_parser(chosen_command(words), all_commands=False)
    try:
        args = parser.parse_args(words)
        if not hasattr(args, "run"):
            parser.print_help(sys.stderr)
            return exitcodes.USAGE
    except BrokenPipeError:
        return exitcodes.OK
    except OSError as exc:  # --version, --help or a usage message the output could not take
        return _unwritable(exc, None)
    from hcpscan.cli.errors import UsageError
    from hcpscan.cli.output import say
    try:
        return int(args.run(args))
    except UsageError as exc:
        # messages quote file names, member names and server answers: all input
        say(f"hcpscan: error: {exc.message}", sys.stderr)
        if exc.hint:
            say(f"hcpscan: hint: {exc.hint}", sys.stderr)
        return exitcodes.USAGE
    except KeyboardInterrupt:
        print("hcpscan: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return exitcodes.OK
    except OSError as exc:
        return _unwritable(exc, args)
    except Exception as exc:  # noqa: BLE001 - the one place that turns bugs into a message
        return _internal_error(args, exc)


def _closed_stream(words: Sequence[str]) -> int | None:
    """A standard stream closed when hcpscan started (``>&-``, ``2>&-``, ``<&-``: Python
    sets it to None): said, exit 2, before anything runs; output that goes nowhere is
    not a result. With standard error closed, only the exit code can say it."""
    if sys.stderr is None:
        return exitcodes.USAGE
    if sys.stdout is None:
        print("hcpscan: error: standard output is closed", file=sys.stderr)
        print("hcpscan: hint: run it with standard output open (redirect it to a file or "
              "/dev/null instead of closing it)", file=sys.stderr)
        return exitcodes.USAGE
    if sys.stdin is None:
        if "-" in words:
            print("hcpscan: error: standard input is closed, but `-` asks to read it",
                  file=sys.stderr)
            print("hcpscan: hint: pipe the manifests in, or name files instead of -",
                  file=sys.stderr)
            return exitcodes.USAGE
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - for the process's life
    return None


def _unwritable(exc: OSError, args: argparse.Namespace | None) -> int:
    """A write the machine refused: said, exit code 2; any other OSError is a bug."""
    if exc.errno not in _NO_ROOM:
        return _internal_error(args or argparse.Namespace(), exc)
    from hcpscan.cli.output import say

    # nothing wrong in hcpscan: a full disk or device took what it wrote (standard output;
    # report files are said where they are written)
    try:
        say(f"hcpscan: error: cannot write: {exc.strerror or exc}", sys.stderr)
        print("hcpscan: hint: free some space, or write the output elsewhere", file=sys.stderr)
    except OSError:
        pass  # standard error cannot take it either: the exit code still says it
    return exitcodes.USAGE


# Write errors that are the machine's, not hcpscan's: no space, over quota, a file too large.
_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _internal_error(args: argparse.Namespace, exc: Exception) -> int:
    if getattr(args, "debug", False):
        raise exc
    from hcpscan.cli.output import say
    from hcpscan.core.redact import mask_auth_values, mask_credentials

    # a library's message may quote what it was given: a header (`Bearer <token>`), a URL
    said = mask_credentials(mask_auth_values(str(exc)))
    say(f"hcpscan: internal error: {type(exc).__name__}: {said}", sys.stderr)
    print("hcpscan: hint: rerun with --debug and report the traceback", file=sys.stderr)
    return exitcodes.INTERNAL


def entry() -> NoReturn:
    """The ``hcpscan`` program (its console script, ``python -m hcpscan``): ``main``, then an
    exit that does not free every object one by one. At 500 hosted clusters the inventory
    and the analyses are millions of small objects: the interpreter's own exit spent 0.59 s
    freeing them, for nothing (0.06 s this way). The exit handlers run and the standard
    streams are flushed as at a normal exit. The normal exit with another thread alive (a
    live scan's client: it waits for it), and under a profiler or tracer (``python -m
    cProfile -m hcpscan`` writes its figures after the program returns)."""
    code = main()
    threading = sys.modules.get("threading")
    if (threading is not None and threading.active_count() > 1) or sys.getprofile() \
            or sys.gettrace():
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # closed when hcpscan started: main said so
            continue
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # the reader stopped early (`| head`), a closed stream
            pass
        except OSError as exc:  # what was printed is lost (a full disk): said, as Python's exit would
            if stream is sys.stdout:
                try:
                    sys.stderr.write(f"hcpscan: error: cannot write to standard output: "
                                     f"{exc.strerror or exc}\n")
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
                code = code if code not in (exitcodes.OK, exitcodes.FINDINGS) else exitcodes.USAGE
    os._exit(code)
