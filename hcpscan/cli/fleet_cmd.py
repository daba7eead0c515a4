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
its findings per severity, and cluster x rule. Read-only: three lists on the
hub (ManagedClusters, the ManifestWorks named hcpscan, the Placement's
PlacementDecisions), whatever the fleet's size. docs/fleet.md explains the loop.

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
    parser.add_argument("--placement", default="hcpscan-fleet/hcpscan-fleet", metavar="NS/NAME",
                        help="the Placement choosing the clusters, to show those chosen that never "
                             "got the work (default: hcpscan-fleet/hcpscan-fleet; 'none' to skip)")
    parser.add_argument("--stale-after", type=float, default=13.0, metavar="HOURS",
                        help="a scan older than this is stale (default: 13, two 6-hourly runs and "
                             "an hour)")
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument("-o", "--output", metavar="PATH", help="write the output here instead of stdout")
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
    text = render(matrix, args.format)
    if args.output:
        try:
            Path(args.output).write_text(text)
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror}", "give a writable path") from None
        print(f"hcpscan: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    failing = matrix.failing(Severity(args.fail_on))
    incomplete = matrix.incomplete()
    if incomplete:
        print(f"hcpscan: {len(incomplete)} placed cluster(s) without a current scan: "
              + ", ".join(f"{r.name} ({r.state.value})" for r in incomplete[:10])
              + (" ..." if len(incomplete) > 10 else ""), file=sys.stderr)
    if failing:
        print(f"hcpscan: {len(failing)} cluster(s) with findings at or above {args.fail_on}",
              file=sys.stderr)
        return exitcodes.FINDINGS
    if incomplete and args.fail_on_incomplete:
        return exitcodes.INCOMPLETE
    return exitcodes.OK


def _query(args: argparse.Namespace) -> FleetQuery:
    if not args.stale_after > 0:
        raise UsageError("--stale-after must be more than 0 hours", "e.g. --stale-after 13")
    if not args.request_timeout > 0:
        raise UsageError("--request-timeout must be more than 0 seconds", "e.g. --request-timeout 30")
    if not 1 <= args.page_size <= 10_000:
        raise UsageError("--page-size must be between 1 and 10000", "the default, 500, suits most hubs")
    placement: tuple[str, str] | None = None
    if args.placement != "none":
        namespace, slash, name = args.placement.partition("/")
        if not slash or not namespace or not name:
            raise UsageError(f"--placement {args.placement!r} is not NAMESPACE/NAME",
                             "e.g. --placement hcpscan-fleet/hcpscan-fleet, or none")
        placement = (namespace, name)
    return FleetQuery(args.work_name, placement, dt.timedelta(hours=args.stale_after), args.page_size)
