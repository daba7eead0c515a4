"""`hcpscan connectivity PATH --path` and `--flow ID`: one path, or one required flow, hop by hop.

Both ask the path graph (``hcpscan.analysis.reachability.paths``) the rules ask: a
path query from an address range, a workload or the workers of a HostedCluster to a
workload's port prints every hop of the open path with its evidence, or the hops up
to the first that blocks; a flow query prints the verdict of one catalog flow
(``hcpscan flows list``) for each HostedCluster of the input, as HCP007/HCP008 judge
it. ``--paths-out FILE`` writes the hops asked as node-link JSON, GraphML or DOT.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from hcpscan import FLOW_CATALOG_URL
from hcpscan.analysis.reachability.evaluation import EvaluationOptions
from hcpscan.analysis.reachability.graph import ReachabilityGraph, TargetNotFound
from hcpscan.analysis.reachability.paths import PathAnswer, PathGraph
from hcpscan.analysis.reachability.perimeter import Perimeter
from hcpscan.analysis.reachability.required import (
    BLOCKED,
    evaluate_flow,
    evaluate_guest_flow,
    perimeter_unknown,
)
from hcpscan.analysis.reachability.scan_graph import with_manifest_perimeter, worker_space
from hcpscan.cli.inputs import UsageError
from hcpscan.cli.output import say
from hcpscan.inventory import Inventory
from hcpscan.model.flows import Flow, FlowError, flow_by_id, load_flows
from hcpscan.model.hostedcluster import (
    GUEST_KINDS,
    HostedCluster,
    guest_of,
    hosted_cluster_for_namespace,
    hosted_clusters,
)

WORKERS = "workers"  # --from workers: the machine network of the target's HostedCluster


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("paths and required flows")
    group.add_argument("--path", action="store_true",
                       help="with --to, --port and --from: print the hops of the open path with "
                            "their evidence, or the hops up to the first that blocks; --from "
                            "takes a CIDR, a workload or `workers` (the target's HostedCluster's "
                            "machine network)")
    group.add_argument("--flow", metavar="ID",
                       help="judge one required flow (hcpscan flows list) for every HostedCluster "
                            "of the input, as HCP007/HCP008 do, with each path's hops")
    group.add_argument("--flows", metavar="FILE",
                       help="with --flow: a flow catalog file of your own (`hcpscan flows --help`)")
    group.add_argument("--hosted-cluster", metavar="NS/NAME",
                       help="with --flow or --from workers: only this HostedCluster (or the "
                            "HostedControlPlane standing in for it)")
    group.add_argument("--worker-cidr", action="append", default=[], metavar="CIDR",
                       help="worker subnets where the HostedCluster states no machineNetwork")
    group.add_argument("--paths-out", metavar="FILE",
                       help="write the path graph asked: FILE.json (networkx node-link), "
                            "FILE.graphml or FILE.dot")


def wanted(args: argparse.Namespace) -> bool:
    return bool(args.path or args.flow)


def check_arguments(args: argparse.Namespace) -> None:
    if args.path and (args.to is None or args.port is None or args.source is None):
        raise UsageError("--path answers one question: give --to, --port and --from",
                         "e.g. --path --from workers --to clusters-x/kube-apiserver --port 8091")
    if args.flow is not None and not args.flow.strip():  # '' would list connections instead
        raise UsageError("--flow needs a flow id", "list them with `hcpscan flows list`")
    if args.flow and (args.path or args.to is not None):
        raise UsageError("--flow judges a catalog flow: leave out --path and --to")
    if args.flows and not args.flow:
        raise UsageError("--flows names the catalog --flow ID is taken from: give --flow too")
    if args.paths_out is not None and not args.paths_out.strip():  # '' wrote nothing, exit 0
        raise UsageError("--paths-out needs a file name", "e.g. --paths-out paths.json")
    if args.paths_out and not wanted(args):  # a listing has no hops: nothing was written
        raise UsageError("--paths-out writes the hops of --path or --flow: give one of them",
                         "e.g. --flow workers-to-kas --paths-out paths.json")
    if args.paths_out and Path(args.paths_out).suffix.lower() not in (".json", ".graphml", ".dot", ".gv"):
        raise UsageError(f"--paths-out {args.paths_out}: name a .json, .graphml or .dot file")
    if args.paths_out:  # said before the work, not after it
        target = Path(args.paths_out)
        if target.is_dir():
            raise UsageError(f"--paths-out {args.paths_out} is a directory",
                             "name a file in it, e.g. paths.json")
        if not target.parent.is_dir():
            raise UsageError(f"--paths-out {args.paths_out}: no folder {target.parent}",
                             "create the folder first, or name a file in an existing one")
    for cidr in args.worker_cidr:
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            raise UsageError(f"--worker-cidr {cidr!r} is not a CIDR",
                             "e.g. --worker-cidr 10.0.0.0/24") from None


def run(args: argparse.Namespace, inventory: Inventory, perimeter: Perimeter | None,
        options: EvaluationOptions) -> tuple[list[Any], bool]:
    """Answer the question; returns the graph's diagnostics and whether the answer is
    "blocked" (a path, or a flow for some HostedCluster) for the caller's exit code."""
    said: list[Any] = []  # what the security groups in the manifests could not give
    graph = ReachabilityGraph(inventory, with_manifest_perimeter(inventory, perimeter, said), options)
    graph.diagnostics.extend(said)
    paths = PathGraph(inventory)
    if args.flow:
        doc = _flows(args, inventory, graph, paths)
        blocked = any(r["status"] == BLOCKED for r in doc["results"])
    else:
        answers = _path(args, inventory, graph, paths)
        doc = {"answers": [a.to_json() for a in answers]}
        blocked = any(not a.open and not a.unknown for a in answers)
    if args.format == "json":
        from hcpscan.reporters.formats import write_json

        # "version": 1 is what this wrote before schema_version; kept for old readers
        write_json("connectivity", {"version": 1, **doc}, sys.stdout)
    if args.paths_out:
        try:
            paths.write(Path(args.paths_out))
        except OSError as exc:  # a full disk, a read-only folder, /dev/full
            raise UsageError(f"cannot write --paths-out {args.paths_out}: {exc.strerror or exc}",
                             "give a writable file with room for the graph") from None
    return list(graph.diagnostics), blocked


def path_answers(inventory: Inventory, graph: ReachabilityGraph, paths: PathGraph, source: str,
                 target: str, port: int, protocol: str,
                 worker_cidrs: list[str] | None = None, hc_name: str | None = None) -> list[PathAnswer]:
    """The path query: one answer per source range (``workers``: each machine network CIDR
    of the target's HostedCluster), or one for a workload source."""
    reach0 = graph.can_reach("0.0.0.0/32", target, port, protocol)  # resolves the target
    target_name = reach0.target.name
    namespace = target_name.split("/")[0]
    sources = [source]
    if source == WORKERS:
        hc = _hosted_cluster(inventory, hc_name, namespace, reach0.target.cluster)
        workers = worker_space(hc, worker_cidrs or [])
        if workers is None:
            raise UsageError(f"{hc.obj.ref} states no spec.networking.machineNetwork",
                             "give the worker subnets with --worker-cidr")
        sources = workers[0].cidrs()
    answers = []
    for src in sources:
        reach = graph.can_reach(src, target, port, protocol)
        origin = f"range {src}" if reach.source.is_external else reach.source.name
        paths.add_reach(reach, origin, target_name, ways_only=reach.source.is_external)
        answer = paths.answer(origin, target_name, reach.protocol, port)
        # blocked at a security group the input does not describe: unknown, as the flow says
        answers.append(replace(answer, unknown=unknown)
                       if (unknown := perimeter_unknown(graph, [answer])) else answer)
    return answers


def _path(args: argparse.Namespace, inventory: Inventory, graph: ReachabilityGraph,
          paths: PathGraph) -> list[PathAnswer]:
    try:
        answers = path_answers(inventory, graph, paths, args.source, args.to, args.port,
                               args.protocol, args.worker_cidr, args.hosted_cluster)
    except TargetNotFound as exc:
        raise UsageError(str(exc), "run `hcpscan connectivity PATH` to list the workloads the "
                                   "inputs hold") from None
    if args.format != "json":
        for answer in answers:
            for line in answer.lines():
                say(line)
    return answers


def _hosted_cluster(inventory: Inventory, name: str | None, namespace: str,
                    cluster: str) -> HostedCluster:
    if name:
        found = [hc for hc in hosted_clusters(inventory) if hc.obj.ref.endswith(name) or
                 name in _names(hc)]
        if not found:
            raise UsageError(f"no HostedCluster (or HostedControlPlane) {name} in the input")
        return found[0]
    hc = hosted_cluster_for_namespace(inventory, namespace, cluster)
    if hc is None:
        raise UsageError(f"--from workers: no HostedCluster (or HostedControlPlane) has "
                         f"{namespace} as its HCP namespace",
                         "give --hosted-cluster NS/NAME, or --from a CIDR")
    return hc


def _names(hc: HostedCluster) -> tuple[str, str]:
    """How --hosted-cluster names a hosted cluster: its HostedCluster's namespace/name, or
    the namespace/name of the HostedControlPlane standing in for it."""
    return f"{hc.namespace}/{hc.name}", f"{hc.obj.namespace}/{hc.obj.name}"


def _flows(args: argparse.Namespace, inventory: Inventory, graph: ReachabilityGraph,
           paths: PathGraph) -> dict[str, Any]:
    try:
        flow = flow_by_id(args.flow, load_flows(args.flows))
    except FlowError as exc:
        raise UsageError(str(exc), f"the catalog's fields: {FLOW_CATALOG_URL}") from None
    if flow is None:
        raise UsageError(f"no flow {args.flow}", "list them with `hcpscan flows list`")
    if flow.check == "guest-egress":
        return {"flow": flow.to_json(), "results": _guest_flows(args, inventory, graph, paths, flow)}
    clusters = [hc for hc in hosted_clusters(inventory)
                if not args.hosted_cluster or args.hosted_cluster in _names(hc)]
    if not clusters:
        raise UsageError("no HostedCluster (or HostedControlPlane) in the input"
                         + (f" named {args.hosted_cluster}"
                                                             if args.hosted_cluster else ""))
    out = []
    for hc in clusters:
        for result in evaluate_flow(inventory, graph, paths, hc, flow, args.worker_cidr):
            item = {"hosted_cluster": f"{hc.obj.namespace}/{hc.obj.name}", "status": result.status,
                    "reason": result.reason, **result.facts(),
                    "answers": [a.to_json() for a in result.answers]}
            out.append(item)
            if args.format == "json":
                continue
            head = f"{hc.label}: {flow.id}: {result.status}"
            say(head + (f" ({result.reason})" if result.reason else "")
                + (f" — {result.destination}" if result.destination else ""))
            for answer in result.answers:
                for line in answer.lines():
                    say(f"  {line}")
    return {"flow": flow.to_json(), "results": out}


def _guest_flows(args: argparse.Namespace, inventory: Inventory, graph: ReachabilityGraph,
                 paths: PathGraph, flow: Flow) -> list[dict[str, Any]]:
    """A guest-egress flow for each hosted cluster's guest the input holds (a hypershift
    dump's hostedcluster-<name> folder, or an Infrastructure with controlPlaneTopology
    External), as HCP010 judges it: one result per workload whose egress a policy isolates."""
    out = []
    guests = [(obj, *guest_of(inventory, obj)) for kind in GUEST_KINDS
              for obj in inventory.of_kind(kind)]
    guests = [g for g in guests if g[1]]  # guest_of answers at one object per cluster
    if not guests:
        raise UsageError("no hosted cluster's guest in the input", "give a hypershift dump's "
                         "hostedcluster-<name> folder, the guest's Infrastructure cluster "
                         "(status.controlPlaneTopology: External) or its default/kubernetes "
                         "endpoints")
    for infra, why, hc in guests:
        label = (f"guest cluster {infra.cluster}" if infra.cluster.startswith("hostedcluster-")
                 else f"the input's cluster (a guest: {why})") + (f" of {hc.label}"
                                                    if hc is not None else "")
        results = evaluate_guest_flow(inventory, graph, paths, infra, hc, flow)
        if args.format != "json" and not results:
            say(f"{label}: {flow.id}: open (no policy isolates the egress of any workload; {why})")
        for result in results:
            out.append({"guest_cluster": infra.cluster, "status": result.status,
                        "reason": result.reason, **result.facts(),
                        "answers": [a.to_json() for a in result.answers]})
            if args.format == "json":
                continue
            say(f"{label}: {flow.id}: {result.status}"
                + (f" ({result.reason})" if result.reason else "")
                + (f" — {result.destination}" if result.destination else ""))
            for answer in result.answers:
                for line in answer.lines():
                    say(f"  {line}")
    return out
