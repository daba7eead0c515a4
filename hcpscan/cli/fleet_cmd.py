"""`hcpscan fleet`: the whole fleet's scan results, as OCM brought them back to the hub."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from hcpscan.cli import exitcodes
from hcpscan.cli.inputs import UsageError
from hcpscan.findings.model import Severity
from hcpscan.fleet.contract import WORK_NAME
from hcpscan.fleet.hub import FleetQuery, read_fleet
from hcpscan.fleet.render import FORMATS, render
from hcpscan.sources.live import ClusterTarget, LiveError, connect

DESCRIPTION = """\
Read, from an Open Cluster Management hub, what every managed cluster's hcpscan
CronJob (deploy/ocm/) sent back through OCM's status feedback, and print the
fleet matrix: per cluster the state of its scan (ok, stale, failed,
never-reported, not-applied, no-work, not-placed), the time of its last scan,
its findings per severity, and cluster x rule. Read-only: four lists on the
hub (ManagedClusters, the ManifestWorks the ManifestWorkReplicaSet made and
those named hcpscan, the Placement's PlacementDecisions), whatever the fleet's
size. docs/fleet.md explains the loop.

examples:
  hcpscan fleet --kubeconfig hub.kubeconfig
  hcpscan fleet --kubeconfig hub.kubeconfig --format json -o fleet.json
  hcpscan fleet --fail-on medium --fail-on-incomplete      # for CI
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("fleet", help="the fleet matrix from an OCM hub (read-only)",
                                   description=DESCRIPTION, epilog=exitcodes.EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kubeconfig", metavar="PATH",
                        help="the hub's kubeconfig (default: KUBECONFIG, ~/.kube/config, else in-cluster)")
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: current-context)")
    parser.add_argument("--work-name", default=WORK_NAME, metavar="NAME",
                        help=f"the name of hcpscan's ManifestWorks (default: {WORK_NAME}, the "
                             "ManifestWorkReplicaSet's name)")
    parser.add_argument("--replicaset", default=f"hcpscan-fleet/{WORK_NAME}", metavar="NS/NAME",
                        help="the ManifestWorkReplicaSet whose ManifestWorks to read, by the label "
                             "OCM puts on them (OCM 1.3+ names them hcpscan<random>); default: "
                             f"hcpscan-fleet/{WORK_NAME}; 'none' to read only the ManifestWorks "
                             "named --work-name")
    parser.add_argument("--placement", default="hcpscan-fleet/hcpscan-fleet", metavar="NS/NAME",
                        help="the Placement choosing the clusters, to show those chosen that never "
                             "got the work (default: hcpscan-fleet/hcpscan-fleet; 'none' to skip)")
    parser.add_argument("--stale-after", type=float, default=13.0, metavar="HOURS",
                        help="a scan older than this is stale (default: 13, two 6-hourly runs and "
                             "an hour)")
    parser.add_argument("--format", action="append", metavar="FMT[=FILE]",
                        help=f"output format, one of {', '.join(FORMATS)}; repeat for several, each "
                             "optionally with its own file (--format table --format html=fleet.html). "
                             "Default: table")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the (single) output without =FILE to FILE instead of stdout")
    parser.add_argument("--exit-zero", action="store_true",
                        help="exit 0 whatever the fleet's findings and scans (a scheduled job whose "
                             "output is read elsewhere); a hub that cannot be read still exits 2")
    parser.add_argument("--fail-on", choices=[s.value for s in Severity], default="high",
                        help="exit 1 when any cluster has a finding at or above this severity "
                             "(default: high)")
    parser.add_argument("--fail-on-incomplete", action="store_true",
                        help="exit 3 when a placed cluster's scan is stale, failed, never reported "
                             "or not applied (and no finding already made it exit 1)")
    parser.add_argument("--request-timeout", type=float, default=30.0, metavar="SECONDS",
                        help="give up on one request after this long (default: 30)")
    parser.add_argument("--page-size", type=int, default=500, metavar="N",
                        help="objects per list request (default: 500)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    query = _query(args)
    outputs = _outputs(args)
    try:
        conn = connect(ClusterTarget(args.kubeconfig, args.context, args.request_timeout))
    except LiveError as exc:
        raise UsageError(exc.message, exc.hint) from None
    try:
        matrix = read_fleet(conn, query, dt.datetime.now(dt.UTC))
    except LiveError as exc:
        raise UsageError(exc.message, exc.hint) from None
    finally:
        conn.close()
    for fmt, path in outputs:
        text = render(matrix, fmt)
        if path is None:
            sys.stdout.write(text)
            continue
        try:
            Path(path).write_text(text)
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror}", "give a writable path") from None
        print(f"hcpscan: wrote {path}", file=sys.stderr)
    failing = matrix.failing(Severity(args.fail_on))
    incomplete = matrix.incomplete()
    if incomplete:
        print(f"hcpscan: {len(incomplete)} placed cluster(s) without a current scan: "
              + ", ".join(f"{r.name} ({r.state.value})" for r in incomplete[:10])
              + (" ..." if len(incomplete) > 10 else ""), file=sys.stderr)
    if failing:
        print(f"hcpscan: {len(failing)} cluster(s) with findings at or above {args.fail_on}",
              file=sys.stderr)
    if args.exit_zero:
        return exitcodes.OK
    if failing:
        return exitcodes.FINDINGS
    if incomplete and args.fail_on_incomplete:
        return exitcodes.INCOMPLETE
    return exitcodes.OK


def _outputs(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """(format, file or None for stdout) per --format; -o takes the one without a file."""
    out: list[tuple[str, str | None]] = []
    for value in args.format or ["table"]:
        fmt, eq, path = value.partition("=")
        if fmt not in FORMATS:
            raise UsageError(f"unknown format {fmt!r}", f"one of {', '.join(FORMATS)}")
        if eq and not path:
            raise UsageError(f"--format {value}: no file after '='", f"e.g. --format {fmt}=fleet.{fmt}")
        out.append((fmt, path or None))
    to_stdout = [i for i, (_, path) in enumerate(out) if path is None]
    if len(to_stdout) > 1:
        raise UsageError("more than one --format without a file would share standard output",
                         "give all but one a file: --format json=fleet.json")
    if args.output:
        if not to_stdout:
            raise UsageError("-o needs a --format without =FILE", "e.g. --format html -o fleet.html")
        out[to_stdout[0]] = (out[to_stdout[0]][0], args.output)
    return out


def _query(args: argparse.Namespace) -> FleetQuery:
    if not 0 < args.stale_after <= 24 * 366:
        raise UsageError("--stale-after must be more than 0 hours and at most a year (8784)",
                         "e.g. --stale-after 13")
    if not args.work_name.strip():
        raise UsageError("--work-name needs a name", f"the default is {WORK_NAME}")
    if not args.request_timeout > 0:
        raise UsageError("--request-timeout must be more than 0 seconds", "e.g. --request-timeout 30")
    if not 1 <= args.page_size <= 10_000:
        raise UsageError("--page-size must be between 1 and 10000", "the default, 500, suits most hubs")
    placement = _namespaced("--placement", args.placement, "hcpscan-fleet/hcpscan-fleet")
    replicaset = _namespaced("--replicaset", args.replicaset, f"hcpscan-fleet/{WORK_NAME}")
    return FleetQuery(args.work_name, placement, dt.timedelta(hours=args.stale_after), args.page_size,
                      replicaset)


def _namespaced(option: str, value: str, example: str) -> tuple[str, str] | None:
    if value == "none":
        return None
    namespace, slash, name = value.partition("/")
    if not slash or not namespace or not name or "/" in name:
        raise UsageError(f"{option} {value!r} is not NAMESPACE/NAME", f"e.g. {option} {example}, or none")
    return namespace, name
