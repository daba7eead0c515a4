"""What each HostedCluster's control plane offers to outside addresses, for the report.

Read from the reachability graph the HCP rules built (never built just for this:
a scan whose rules did not need the graph has no exposure to show), so a picture
and the HCP001/HCP002 findings always come from the same analysis.
"""

from __future__ import annotations

from hcpscan.analysis.reachability.answers import WayInVerdict
from hcpscan.analysis.reachability.graph import ReachabilityGraph
from hcpscan.analysis.reachability.scan_graph import REACHABILITY, outside_text, worker_space
from hcpscan.findings.model import HostedClusterExposure, WayIn
from hcpscan.model.hostedcluster import hosted_clusters
from hcpscan.model.ipspace import IPSpace
from hcpscan.rules.context import Context
from hcpscan.rules.engine import location_of, object_ref


def hosted_cluster_exposures(ctx: Context) -> list[HostedClusterExposure]:
    graph = ctx.built(REACHABILITY)
    if not isinstance(graph, ReachabilityGraph):
        return []
    out = []
    for hc in hosted_clusters(ctx.inventory):
        workers = worker_space(hc, ctx.config.worker_cidrs)
        cidrs = tuple(workers[0].cidrs()) if workers else ()
        ways = [_way_in(ctx, verdict, workers[0] if workers else None)
                for verdict in graph.ways_in(hc.obj.cluster, hc.control_plane_namespace)]
        out.append(HostedClusterExposure(object_ref(hc.obj), hc.control_plane_namespace, cidrs,
                                         tuple(ways)))
    return out


def _way_in(ctx: Context, verdict: WayInVerdict, workers: IPSpace | None) -> WayIn:
    path, admitted, blocked = verdict.path, verdict.admitted, verdict.blocked_by
    if workers is None:  # unknown worker subnets: every admitted address counts as beyond
        beyond = _addresses(admitted)
    else:
        outside = admitted.intersection(workers.complement())
        beyond = outside_text(outside, workers) if outside else ""
    return WayIn(
        layer=path.via, via=object_ref(path.obj), protocol=path.protocol,
        entry_port=path.entry_port, pod_port=path.pod_port,
        targets=tuple(w.ref for w in verdict.workloads),
        admitted=_addresses(admitted), beyond_workers=beyond,
        blocked_by="" if admitted or blocked is None else f"{blocked.layer}: {blocked.summary}",
        location=location_of(ctx, path.obj, path.field))


def _addresses(space: IPSpace) -> str:
    if not space:
        return ""
    return "any address" if space == IPSpace.everything() else str(space)
