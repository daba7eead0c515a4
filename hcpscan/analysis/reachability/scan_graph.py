"""The reachability graph a scan shares between its rules, and what it reads.

Built here (the analysis stage), once per scan and only when a rule asks for it;
the rule context hands it to templates (``Context.reachability()``), so neither
``scan.py`` nor the exposure report reaches into a template module for it.
"""

from __future__ import annotations

from pathlib import Path

from hcpscan.analysis.reachability.cloud_perimeter import load_balancer_perimeters, manifest_perimeter
from hcpscan.analysis.reachability.coverage import POLICY_LIKE_KINDS
from hcpscan.analysis.reachability.endpoints import WORKLOAD_KINDS
from hcpscan.analysis.reachability.graph import ReachabilityGraph, build_reachability
from hcpscan.analysis.reachability.perimeter import Perimeter, PerimeterError, load_perimeter, stacked
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.model.hostedcluster import HostedCluster
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.securitygroups import SECURITY_GROUP_KINDS

REACHABILITY = "reachability"  # the name the graph is shared under in the rule context
# Everything the graph reads: endpoints and their owners, policies of every tier and
# the ways in (one home for the endpoint kinds: the reachability endpoints module), and
# the security groups in front of the nodes (model/securitygroups.py).
GRAPH_READS = ("Pod", *WORKLOAD_KINDS, "Namespace", "NetworkPolicy", "Service", "Route", "Ingress",
               "HostedCluster", "HostedControlPlane", "Node", "Infrastructure", *POLICY_LIKE_KINDS,
               *SECURITY_GROUP_KINDS)
ENDPOINT_READS = ("Endpoints", "EndpointSlice")  # where management-kas lives


def scan_graph(inventory: Inventory, firewall: Path | str | None,
               diagnostics: list[Diagnostic]) -> ReachabilityGraph:
    """The graph of ``inventory`` with the perimeter file ``firewall`` (if any) in front
    of the security groups the manifests declare; what the perimeter file or the
    policies could not give is appended to ``diagnostics``."""
    perimeter = None
    if firewall is not None:
        try:
            perimeter = load_perimeter(firewall)
        except PerimeterError as exc:
            diagnostics.append(Diagnostic(exc.path, exc.line, str(exc)))
    graph = build_reachability(inventory, with_manifest_perimeter(inventory, perimeter, diagnostics))
    diagnostics.extend(graph.diagnostics)
    return graph


def with_manifest_perimeter(inventory: Inventory, perimeter: Perimeter | None,
                            diagnostics: list[Diagnostic]) -> Perimeter | None:
    """The perimeter file (if any) in front of the security groups the manifests attach
    to the management cluster's workers (if any): traffic passes both. When a group
    attached is not described in the input, the file alone is the perimeter."""
    groups = manifest_perimeter(inventory, diagnostics)
    balancers = load_balancer_perimeters(inventory, diagnostics)
    if perimeter is not None:  # a group's rules are not in the input: the file says what gets in
        groups = None if groups is not None and groups.undescribed else groups
        balancers = [b for b in balancers if not b.undescribed]
    return stacked(perimeter, groups, *balancers)


def worker_space(hc: HostedCluster, worker_cidrs: list[str] | tuple[str, ...]
                 ) -> tuple[IPSpace, str] | None:
    """Where worker nodes live: the HostedCluster's machineNetwork, else the configured
    worker_cidrs; None when neither says."""
    if hc.machine_networks:
        return IPSpace.from_cidrs(hc.machine_networks), "spec.networking.machineNetwork"
    if worker_cidrs:
        return IPSpace.from_cidrs(worker_cidrs), "worker_cidrs in the config"
    return None


def outside_text(outside: IPSpace, workers: IPSpace) -> str:
    """Outside addresses beyond the worker subnets, as findings and pictures name them."""
    if outside == workers.complement():
        return f"any address outside {', '.join(workers.cidrs())}" if workers else "any address"
    return str(outside)
