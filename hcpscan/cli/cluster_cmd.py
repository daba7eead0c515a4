"""`hcpscan cluster`: scan a live cluster through its API, read-only."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hcpscan import collector
from hcpscan.cli import exitcodes
from hcpscan.cli.inputs import UsageError
from hcpscan.cli.reporting import add_report_arguments, write_failure_reports, write_reports
from hcpscan.cli.ruleset import PreparedRules, add_rule_arguments, prepare_rules
from hcpscan.findings.model import ScanReport
from hcpscan.fixes.script import write_fix_script
from hcpscan.fleet.contract import report_digest, scan_summary
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.store import UnavailableKind
from hcpscan.publish import FIELD_MANAGER, check_served, publish_reports, served_apis
from hcpscan.reporters.openreports import OPENREPORTS, build_reports, cluster_identity, empty_reports
from hcpscan.reporters.policyreport import POLICYREPORT
from hcpscan.scan import RunClock, kinds_needed, resource_needs, run_scan, served_also_read
from hcpscan.sources.live import ClusterTarget, LiveError, connect, discover, read_cluster
from hcpscan.sources.live.client import EXEC_TIMEOUT, MAX_RESPONSE_MIB, ApiError, Connection
from hcpscan.sources.live.dump import DumpError, check_dump_dir, write_dump
from hcpscan.sources.live.lister import (
    MAX_BYTES_PER_LIST,
    MAX_BYTES_TOTAL,
    MAX_ITEMS_PER_LIST,
    RBAC_HINT,
    ListBudget,
    ListedResource,
)

DESCRIPTION = """\
Scan a running cluster through its API with the same rules and reports as
`hcpscan scan`. Read-only: only `get`/`list` requests, and only for the kinds
the selected rules need (discovery decides which exist); --publish-reports
then server-side-applies the results as OpenReports objects, the one write. Findings point at
virtual paths cluster/<context>/<namespace>/<Kind>/<name>.yaml.

The kubeconfig is found as kubectl finds it (--kubeconfig, KUBECONFIG,
~/.kube/config, else the pod's service account); tokens, client certificates,
exec plugins and the cluster's proxy-url are honoured. A kind the user may not
list makes the rules that need it not evaluable, naming the permission to grant.

examples:
  hcpscan cluster
  hcpscan cluster --context mgmt-hub --namespace clusters,clusters-prod
  hcpscan cluster --format sarif=hcpscan.sarif --save-dump ./hcpscan-dump
  hcpscan scan ./hcpscan-dump          # the same scan, offline
  hcpscan cluster --publish-reports    # and apply the results as OpenReports objects
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("cluster", help="scan a live cluster through its API (read-only)",
                                   description=DESCRIPTION, epilog=exitcodes.EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_argument_group("cluster")
    group.add_argument("--kubeconfig", metavar="PATH",
                       help="kubeconfig file (default: KUBECONFIG, ~/.kube/config, else in-cluster)")
    group.add_argument("--context", metavar="NAME", help="kubeconfig context (default: current-context)")
    scope = group.add_mutually_exclusive_group()
    scope.add_argument("-n", "--namespace", action="append", metavar="NS",
                       help="read only these namespaces (repeatable, comma separated); cluster-scoped "
                            "kinds are still read")
    scope.add_argument("-A", "--all-namespaces", action="store_true",
                       help="read every namespace (the default)")
    group.add_argument("--request-timeout", type=float, default=10.0, metavar="SECONDS",
                       help="give up on a request that is not complete (connected, headers and "
                            "body read) after this long, however slowly the server sends "
                            "(default: 10)")
    group.add_argument("--max-response-size", type=float, default=MAX_RESPONSE_MIB, metavar="MIB",
                       help=f"refuse an answer larger than this many MiB (default: {MAX_RESPONSE_MIB})")
    group.add_argument("--exec-timeout", type=float, default=EXEC_TIMEOUT, metavar="SECONDS",
                       help="give up on an exec credential plugin after this long (default: "
                            f"{EXEC_TIMEOUT:g})")
    group.add_argument("--page-size", type=int, default=500, metavar="N",
                       help="objects per list request (default: 500)")
    group.add_argument("--concurrency", type=int, default=4, metavar="N",
                       help="list requests in flight at once (default: 4)")
    group.add_argument("--max-list-items", type=int, default=MAX_ITEMS_PER_LIST, metavar="N",
                       help="stop listing a kind (its rules become not evaluable) after this many "
                            f"objects (default: {MAX_ITEMS_PER_LIST})")
    group.add_argument("--max-list-size", type=float, default=MAX_BYTES_PER_LIST >> 20,
                       metavar="MIB", help="stop listing a kind after this many MiB of answers "
                                           f"(default: {MAX_BYTES_PER_LIST >> 20})")
    group.add_argument("--max-total-size", type=float, default=MAX_BYTES_TOTAL >> 20,
                       metavar="MIB", help="stop any list once all lists together brought this "
                                           "many MiB of answers: the bound on what a read holds "
                                           "(about 3.5 times that in memory; default: "
                                           f"{MAX_BYTES_TOTAL >> 20})")
    group.add_argument("--save-dump", metavar="DIR",
                       help="also write what was read to DIR in must-gather layout (rerun it with "
                            "`hcpscan scan DIR`); DIR must be new or empty")
    group.add_argument("--write-fixes", metavar="DIR",
                       help="write the fixes of the findings to DIR: fixes.sh with the `kubectl "
                            "patch` / `kubectl apply` commands (never run by hcpscan) and the "
                            "manifests they apply; DIR must be new or empty")
    group.add_argument("--keep-secrets", action="store_true",
                       help="with --save-dump, keep Secret values and proxy passwords instead of "
                            "redacting them as must-gather does and masking them as reports do")
    group.add_argument("--publish-reports", action="store_true",
                       help="after the scan, server-side-apply the results as OpenReports Report/"
                            "ClusterReport objects into the scanned cluster (the only write hcpscan "
                            "makes; needs deploy/hcpscan-publisher-rbac.yaml). Without the "
                            "OpenReports CRDs, wgpolicyk8s.io PolicyReports where served; and a "
                            "ScanSummary (scansummaries.hcpscan.io) where served, which OCM "
                            "feedback carries to the hub (docs/fleet.md)")
    group.add_argument("--cluster-name", metavar="NAME",
                       help="the name of the scanned cluster in its reports and ScanSummary "
                            "(default with --publish-reports: the OCM Klusterlet's spec.clusterName, "
                            "else the value of the ClusterClaim id.k8s.io, else of the ClusterClaim "
                            "name, else none)")
    add_rule_arguments(parser)
    add_report_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except UsageError as exc:
        where = f"cluster/{args.context}" if args.context else "cluster"
        write_failure_reports(args, exc, where, {"mode": "live", "context": args.context or ""})
        raise


def _run(args: argparse.Namespace) -> int:
    clock = RunClock()
    _check_arguments(args)
    prepared = prepare_rules(args, [])
    namespaces = _namespaces(args)
    plurals = resource_needs(prepared.rules).plurals or frozenset()  # as loading files reads
    target = ClusterTarget(args.kubeconfig, args.context, args.request_timeout,
                           exec_timeout=args.exec_timeout,
                           max_response_bytes=int(args.max_response_size * (1 << 20)))
    try:
        conn = connect(target)
    except LiveError as exc:
        raise UsageError(exc.message, exc.hint) from None
    try:
        return _scan(args, clock, prepared, conn, namespaces, plurals)
    finally:
        conn.close()


def _scan(args: argparse.Namespace, clock: RunClock, prepared: PreparedRules, conn: Connection,
          namespaces: list[str] | None, plurals: frozenset[str]) -> int:
    try:
        discovery = discover(conn, args.concurrency)
        read = read_cluster(conn, discovery, kinds_needed(prepared.rules), plurals, namespaces,
                            args.page_size, args.concurrency,
                            also=served_also_read(prepared.rules, discovery.resources),
                            budget=ListBudget(args.max_list_items,
                                              int(args.max_list_size * (1 << 20)),
                                              int(args.max_total_size * (1 << 20))))
    except LiveError as exc:
        raise UsageError(exc.message, exc.hint) from None
    clock.stage("read")
    if args.save_dump:
        _save_dump(Path(args.save_dump), read.listed, args.keep_secrets, read.unavailable)
    with collector.building():
        inventory = Inventory(read.objects, read.diagnostics, unavailable=read.unavailable)
    metadata = {"mode": "live", "context": read.context, "server": read.server,
                "namespaces": namespaces or ["*"]}
    identity = _cluster_name(args, conn)
    if identity:
        metadata["clusterName"] = identity
    report = run_scan(inventory, prepared.rules, prepared.config, prepared.suppressor, metadata,
                      fixes=True)
    clock.stage("rules")
    report.metadata.update(clock.metadata())
    code = write_reports(args, report, prepared)
    if args.write_fixes:
        _write_fixes(Path(args.write_fixes), report, read.context)
    if read.mostly_forbidden and code != exitcodes.USAGE:
        print(f"hcpscan: error: the API server refused {read.forbidden} of {read.lists} list(s) "
              f"the rules need (403 Forbidden) to the user of context {read.context}; the scan "
              "read too little to pass", file=sys.stderr)
        print(f"hcpscan: hint: {RBAC_HINT}", file=sys.stderr)
        code = exitcodes.FORBIDDEN
    if args.publish_reports:
        _publish(conn, report, _namespaces_read(read.objects))
    return code


def _write_fixes(root: Path, report: ScanReport, context: str) -> None:
    try:
        written = write_fix_script(root, report.failing, context)
    except OSError as exc:
        raise UsageError(f"cannot write the fixes to {root}: {exc.strerror}",
                         "give a new, writable folder to --write-fixes") from None
    print(f"hcpscan: wrote {written} fix command(s) to {root / 'fixes.sh'}; review it, then run "
          "it yourself (hcpscan never changes a cluster)", file=sys.stderr)


def _namespaces_read(objects: list[K8sObject]) -> set[str]:
    return {o.name for o in objects if o.kind == "Namespace"} | {o.namespace for o in objects if o.namespace}


# Where a managed cluster finds its own name, in the order asked: the Klusterlet's
# spec.clusterName (the name the OCM hub knows it by; plain OCM creates no claim
# naming the cluster), then the ClusterClaims id.k8s.io (KEP-2149) and
# ACM's "name".
KLUSTERLET_PATH = "/apis/operator.open-cluster-management.io/v1/klusterlets/klusterlet"
CLUSTER_CLAIMS = ("id.k8s.io", "name")
CLAIMS_PATH = "/apis/cluster.open-cluster-management.io/v1alpha1/clusterclaims"


def _cluster_name(args: argparse.Namespace, conn: Connection) -> str:
    """``--cluster-name``, else (publishing only: up to three GETs) the Klusterlet's
    clusterName or a ClusterClaim; else empty, with a warning."""
    if args.cluster_name is not None:
        name = args.cluster_name.strip()
        if not name:
            raise UsageError("--cluster-name needs a name", "e.g. --cluster-name prod-east-1")
        return name
    if not args.publish_reports:
        return ""
    sources = [(KLUSTERLET_PATH, "clusterName", "Klusterlet klusterlet")]
    sources += [(f"{CLAIMS_PATH}/{claim}", "value", f"ClusterClaim {claim}") for claim in CLUSTER_CLAIMS]
    for path, key, what in sources:
        try:
            spec = conn.get(path).get("spec")
        except (ApiError, LiveError):  # not served, not there, not allowed: the next, else none
            continue
        value = spec.get(key) if isinstance(spec, dict) else None
        if isinstance(value, str) and value.strip():
            print(f"hcpscan: cluster name {value.strip()} ({what})", file=sys.stderr)
            return value.strip()
    print("hcpscan: warning: no cluster name (no Klusterlet clusterName, no ClusterClaim id.k8s.io "
          "or name): the reports are labelled management and the ScanSummary names no cluster; "
          "give --cluster-name NAME", file=sys.stderr)
    return ""


def _publish(conn: Connection, report: ScanReport, namespaces: set[str]) -> None:
    """Apply the report objects of ``report`` (OpenReports, else PolicyReport, whichever
    the cluster serves), empty the earlier report of every namespace read that has no
    finding now, then the ScanSummary where served; any failure is exit code 2, after
    the other reports were written."""
    try:
        reports_api, summary = served_apis(conn)
        if reports_api is None and not summary:
            check_served(conn)  # raises: says what to install
    except LiveError as exc:
        raise UsageError(exc.message, exc.hint) from None
    kinds = POLICYREPORT if reports_api == POLICYREPORT.api_version else OPENREPORTS
    identity = cluster_identity(report)
    objects = build_reports(report, kinds) if reports_api else []
    with_reports = {o["metadata"].get("namespace") for o in objects}
    replace = empty_reports(sorted(namespaces - with_reports), kinds=kinds,
                            identity=identity) if reports_api else []
    if reports_api is None:
        print(f"hcpscan: warning: context {conn.context} serves neither the OpenReports nor the "
              "PolicyReport CRDs: no report objects published, only the ScanSummary's counts "
              "(install the OpenReports CRDs, e.g. in the ManifestWork: deploy/ocm/regenerate.py "
              "--openreports-crds DIR)", file=sys.stderr)
    elif reports_api != OPENREPORTS.api_version:
        print(f"hcpscan: context {conn.context} has no OpenReports CRDs; publishing "
              f"{reports_api} PolicyReports instead", file=sys.stderr)
    extra = ([scan_summary(report, identity, report_digest(objects),
                           reports_api or "none")] if summary else [])
    try:
        done = publish_reports(conn, [*objects, *extra], replace, check=False)
    except LiveError as exc:
        raise UsageError(exc.message, exc.hint) from None
    for failure in done.failed:
        print(f"hcpscan: not published: {failure}", file=sys.stderr)
    if done.failed:
        total = len(done.failed) + len(done.applied) + len(done.emptied)
        raise UsageError(f"{len(done.failed)} of {total} report "
                         f"object(s) were not published to context {conn.context}",
                         "see the messages above; the other objects were applied")
    emptied = f", emptied {len(done.emptied)} whose findings are gone" if done.emptied else ""
    summaries = [a for a in done.applied if a.startswith("ScanSummary ")]
    if summaries:
        emptied += f", and {summaries[0]} for the fleet"
    print(f"hcpscan: published {len(done.applied) - len(summaries)} report object(s){emptied} to context "
          f"{conn.context} (server-side apply, field manager {FIELD_MANAGER}); read them with `kubectl get "
          f"{_plurals(kinds) if reports_api else 'scansummaries.hcpscan.io'} -A "
          "-l app.kubernetes.io/managed-by=hcpscan`", file=sys.stderr)


def _plurals(kinds: object) -> str:
    return ("clusterreports.openreports.io,reports.openreports.io" if kinds is OPENREPORTS
            else "clusterpolicyreports.wgpolicyk8s.io,policyreports.wgpolicyk8s.io")


def _check_arguments(args: argparse.Namespace) -> None:
    if not args.request_timeout > 0:
        raise UsageError("--request-timeout must be more than 0 seconds", "e.g. --request-timeout 10")
    if not args.exec_timeout > 0:
        raise UsageError("--exec-timeout must be more than 0 seconds", "e.g. --exec-timeout 60")
    if not 0 < args.max_response_size < 1 << 40:  # not inf or nan
        raise UsageError("--max-response-size must be more than 0 MiB", "e.g. --max-response-size 256")
    if not 1 <= args.page_size <= 10_000:
        raise UsageError("--page-size must be between 1 and 10000", "the default, 500, suits most clusters")
    if args.max_list_items < 1 or not 0 < args.max_list_size < 1 << 40:
        raise UsageError("--max-list-items and --max-list-size must be more than 0",
                         f"the defaults are {MAX_ITEMS_PER_LIST} and {MAX_BYTES_PER_LIST >> 20}")
    if not 0 < args.max_total_size < 1 << 40:  # a number of MiB; not 'inf' or 'nan'
        raise UsageError("--max-total-size must be a number of MiB more than 0",
                         f"the default is {MAX_BYTES_TOTAL >> 20}")
    if not 1 <= args.concurrency <= 32:
        raise UsageError("--concurrency must be between 1 and 32", "the default is 4")
    if args.keep_secrets and not args.save_dump:
        raise UsageError("--keep-secrets only applies to --save-dump DIR", "add --save-dump DIR")
    if args.save_dump:
        try:
            check_dump_dir(Path(args.save_dump))
        except DumpError as exc:
            raise UsageError(str(exc), "give a new folder to --save-dump") from None


def _namespaces(args: argparse.Namespace) -> list[str] | None:
    if not args.namespace:
        return None
    names = [n.strip() for value in args.namespace for n in value.split(",") if n.strip()]
    if not names:
        raise UsageError("--namespace needs a name", "e.g. --namespace clusters")
    return list(dict.fromkeys(names))


def _save_dump(root: Path, listed: list[ListedResource], keep_secrets: bool,
               unavailable: dict[str, UnavailableKind]) -> None:
    try:
        files = write_dump(root, listed, keep_secrets, unavailable)
    except DumpError as exc:
        raise UsageError(str(exc), "give a new, writable folder to --save-dump") from None
    redaction = ("Secret values and proxy passwords kept" if keep_secrets
                 else "Secret values redacted, proxy passwords masked")
    print(f"hcpscan: wrote {files} file(s) to {root} ({redaction}); rescan offline with "
          f"`hcpscan scan {root}`", file=sys.stderr)
