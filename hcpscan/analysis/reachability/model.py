"""What one cluster's reachability is computed from: endpoint classes, policies, namespaces."""

from __future__ import annotations

from dataclasses import dataclass, field

from hcpscan.analysis.reachability.admin import AdminPolicyModel, read_admin_policies
from hcpscan.analysis.reachability.egressfirewall import EgressFirewallModel, read_firewalls
from hcpscan.analysis.reachability.endpoints import (
    EndpointClass,
    collect_endpoints,
    group_classes,
    namespace_labels,
    namespaces_in,
    split_workloads,
)
from hcpscan.analysis.reachability.evaluation import EvaluationOptions
from hcpscan.analysis.reachability.policies import INGRESS, NetworkPolicyModel, read_policies
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.model.ipspace import IPSpace


@dataclass(slots=True)
class ClusterModel:
    cluster: str
    classes: list[EndpointClass]
    policies: list[NetworkPolicyModel]
    namespaces: dict[str, dict[str, str]]
    # AdminNetworkPolicies in evaluation order, then the BaselineAdminNetworkPolicy
    admin: list[AdminPolicyModel] = field(default_factory=list)
    firewalls: dict[str, EgressFirewallModel] = field(default_factory=dict)  # by namespace

    def policy_blocks(self, direction: str | None = None, admin: bool = True) -> list[IPSpace]:
        """Every address peer of every policy - ipBlocks, and with ``admin`` ANP/BANP
        networks and nodes - (of one direction when given)."""
        out = []
        for policy in self.policies:
            for rule in policy.ingress + policy.egress:
                if direction is not None and rule.direction != direction:
                    continue
                for peer in rule.peers or ():
                    if peer.ip_block is not None:
                        out.append(peer.ip_block)
        for apolicy in self.admin if admin else ():
            for arule in apolicy.ingress + apolicy.egress:
                if direction is None or arule.direction == direction:
                    out.extend(p.addresses for p in arule.peers if p.addresses is not None)
        if admin and direction != INGRESS:
            out.extend(r.addresses for f in self.firewalls.values() for r in f.rules if r.addresses)
        return out


def read_clusters(inventory: Inventory, options: EvaluationOptions,
                  diagnostics: list[Diagnostic]) -> list[ClusterModel]:
    models = []
    for cluster in inventory.clusters:
        endpoints = collect_endpoints(inventory, cluster)
        policies = read_policies(inventory, cluster, diagnostics)
        admin = read_admin_policies(inventory, cluster, diagnostics)
        firewalls = read_firewalls(inventory, cluster, diagnostics)
        if not endpoints and not policies and not admin:
            continue
        classes = group_classes(endpoints, inventory, by_ip=options.ipblock_selects_pods)
        names = set(namespaces_in(inventory, cluster, classes)) | {p.namespace for p in policies}
        namespaces = {n: namespace_labels(inventory, cluster, n) for n in sorted(names)}
        _warn_label_gaps(classes, inventory, diagnostics)
        models.append(ClusterModel(cluster, classes, policies, namespaces, admin, firewalls))
    return models


def _warn_label_gaps(classes: list[EndpointClass], inventory: Inventory,
                     diagnostics: list[Diagnostic]) -> None:
    for workload, members, obj in split_workloads(classes):
        label_sets = {tuple(sorted(c.labels.items())) for c in members}
        if len(label_sets) < 2:
            continue
        loc = inventory.locate(obj)
        diagnostics.append(Diagnostic(
            loc.path, loc.line, f"pods of {workload.ref} carry different labels; its connections "
            "are the union over its pods", "info",
            "pods of one owner normally share labels; check for a half-finished rollout"))

