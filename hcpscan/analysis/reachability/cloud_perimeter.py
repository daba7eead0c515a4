"""The perimeter the manifests declare: the AWS security groups in front of the nodes.

The hosted control planes' pods and node ports run on the management cluster's worker
machines; what the cloud lets in to them is the union of the security groups attached
to those machines (``hcpscan.model.securitygroups`` reads them). Which groups those are
follows Cluster API AWS, when the input holds the management cluster's own CAPA cluster
object (a self-managed, pivoted management cluster): CAPA attaches its ``node`` and (not on
EKS) ``lb`` role groups to every machine — ``securityGroupOverrides`` naming other groups
instead — beside each machine's ``additionalSecurityGroups``. The groups are given to
the reachability graph as one perimeter (allow rules, deny by default), each rule with
its own file and line, beside the ``--firewall`` file (traffic passes both).

A source group admits its members: the workers of a HostedCluster whose NodePools or
default worker group it is (their machine network). A group attached but not described
in the input (no CAPA status, no ACK or Crossplane object with its id) leaves the
perimeter open to question: a flow it would block is not evaluable, naming the group.
"""

from __future__ import annotations

from hcpscan.analysis.reachability.perimeter import (
    ALLOW,
    DENY,
    DIRECT,
    Perimeter,
    PerimeterRule,
    load_balancer_way,
)
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.objects import MANAGEMENT
from hcpscan.model.hostedcluster import HostedCluster, hosted_cluster_for_namespace, hosted_clusters
from hcpscan.model.ingress import ON_HOST
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.ports import NODE_PORT_RANGE, ConnectionSet, PortSet
from hcpscan.model.securitygroups import (
    EKS_WORKER_ROLES,
    LBC_NLB,
    WORKER_ROLES,
    CapaCluster,
    IngressRule,
    LoadBalancerGroups,
    SecurityGroup,
    SecurityGroups,
    cidr_space,
    load_balancer_groups,
    marks_cluster,
    members,
    resolve,
    security_groups,
)
from hcpscan.model.sourceranges import load_balancer_source_ranges

# The machines' groups stand in front of node ports and pod addresses. A LoadBalancer
# Service's (and a router's) load balancer is the cloud provider's: it admits the Service's
# loadBalancerSourceRanges (the router's allowedSourceRanges), read as the way's own
# sources, and opens the machines' groups to itself with rules the CAPA status never lists.
# A router published HostNetwork or NodePortService takes Route traffic on the machines
# themselves: that traffic meets the groups (at the router's host or node ports).
FRONTS = ("NodePort", ON_HOST, DIRECT)
WHAT_TO_GIVE = ("describe it: the CAPA cluster object's status (`oc get awsclusters -A -o yaml`), "
                "an ACK or Crossplane SecurityGroup with that id, or a perimeter file (--firewall)")


def undescribed_groups(unknowns: tuple[str, ...]) -> str:
    """Why a connection the security groups shut is not evaluable: each thing the input
    does not give (a group attached but not described, the addresses of a group's
    members), with what to give."""
    return "; ".join(unknowns)


def _undescribed(gid: str) -> str:
    return (f"security group {gid} is attached to the management cluster's machines but its "
            "rules are not in the input; " + WHAT_TO_GIVE)


def fronting_groups(inventory: Inventory, diagnostics: list[Diagnostic]
                    ) -> list[tuple[str, str]]:
    """(group id, why it is attached) for the groups in front of the management
    cluster's worker machines, as far as the input tells (see ``attached_groups``)."""
    return [(gid, why) for gid, why, _guess in attached_groups(inventory, diagnostics)]


def attached_groups(inventory: Inventory, diagnostics: list[Diagnostic]
                    ) -> list[tuple[str, str, bool]]:
    """(group id, why it is attached, whether that is a guess) for the groups in front of
    the management cluster's worker machines."""
    if not inventory.of_kind("AWSCluster", "AWSManagedControlPlane", "AWSMachineTemplate", "AWSMachine",
                             "SecurityGroup"):
        return []  # no group and nothing that attaches one (most inputs): read nothing more
    sgs = security_groups(inventory)
    own = [c for c in sgs.capa if c.obj.cluster == MANAGEMENT and c.roles
           and hosted_cluster_for_namespace(inventory, c.obj.namespace) is None]
    instances = _node_instances(inventory)
    if instances:  # the input shows the management cluster's machines: their CAPA cluster
        own = [c for c in own if _machine_instances(inventory, c) & instances]
    if len(own) > 1:
        where = inventory.locate(own[0].obj)
        diagnostics.append(Diagnostic(
            where.path, where.line,
            f"{len(own)} Cluster API AWS clusters ({', '.join(c.obj.ref for c in own)}): which one "
            "is this management cluster is not in the input, so their security groups are not "
            "taken as its perimeter", "warning",
            "give the management cluster's security groups in a perimeter file (--firewall)"))
        return []
    out: list[tuple[str, str]] = []
    for capa in own:
        out += _capa_attached(capa)
        out += [(gid, f"{machine.ref} additionalSecurityGroups")
                for machine, ids in sgs.machine_groups for gid in ids
                if machine.namespace == capa.obj.namespace]
    guessed: list[tuple[str, str]] = []
    if not own:  # no CAPA object says which groups the machines are in
        out = _marked(inventory, sgs, instances)
        if not out:
            guessed = _inferred(inventory, sgs)
    merged: dict[str, list[str]] = {}
    for gid, why in out + guessed:  # one group attached several ways (e.g. overrides naming one group)
        merged.setdefault(gid, []).append(why)
    guesses = {gid for gid, _ in guessed}
    return [(gid, _joined(whys), gid in guesses) for gid, whys in merged.items()]


def _marked(inventory: Inventory, sgs: SecurityGroups, instances: set[str]) -> list[tuple[str, str]]:
    """Without a CAPA cluster object, the groups the input itself says are the management
    machines': named in the ``additionalSecurityGroups`` of an AWSMachine that is one of
    the management cluster's Nodes (``spec.providerID``), or tagged / named for the
    management cluster (``model.securitygroups.marks_cluster``, its id the
    ``Infrastructure`` status ``infrastructureName``)."""
    out = [(gid, f"{machine.ref} additionalSecurityGroups (its instance is a Node of the management "
                 "cluster)")
           for machine, ids in sgs.machine_groups if machine.kind == "AWSMachine" and instances
           and _instance_of(machine) & instances for gid in ids]
    infra = inventory.get("Infrastructure", "", "cluster", MANAGEMENT)
    status = infra.get("status") if infra is not None else None
    cluster_id = str(status.get("infrastructureName") or "") if isinstance(status, dict) else ""
    for key, group in sgs.groups.items():
        how = marks_cluster(group, cluster_id) if group.origin != "CAPA status" else ""
        if how and key not in sgs.worker_groups:
            out.append((key, f"{group.obj.ref} {how}, the management cluster's (Infrastructure "
                             f"cluster status.infrastructureName {cluster_id})"))
    return out


def _instance_of(machine: K8sObject) -> set[str]:
    out = set()
    for field in ("spec.instanceID", "spec.providerID"):
        value = machine.get(field)
        if isinstance(value, str) and value:
            out.add(value.rpartition("/")[2])
    return out


def _joined(whys: list[str]) -> str:
    """'AWSCluster ns/x spec.network.securityGroupOverrides.node, .lb' for one object."""
    head, _, first = whys[0].rpartition(" ")
    rest = [w.rpartition(" ")[2] for w in whys[1:] if w.rpartition(" ")[0] == head]
    others = [w for w in whys[1:] if w.rpartition(" ")[0] != head]
    shown = f"{head} {first}" + "".join(f", .{r.rpartition('.')[2]}" for r in rest)
    return ", ".join([shown, *others])


def _inferred(inventory: Inventory, sgs: SecurityGroups) -> list[tuple[str, str]]:
    """Groups declared as objects (ACK, Crossplane) that admit a HostedCluster's workers
    to a port its control plane publishes (the API server port, a node port or load
    balancer port of a Service of its HCP namespace): in front of that control plane,
    when nothing says which groups the management machines are in. A group the workers
    are in themselves fronts the workers, and is not taken."""
    out = []
    clusters = [hc for hc in hosted_clusters(inventory) if hc.obj.cluster == MANAGEMENT]
    balancers = _load_balancers_groups(inventory, sgs)
    for key, group in sgs.groups.items():
        if group.origin == "CAPA status" or key in sgs.worker_groups or key in balancers:
            continue  # CAPA's own, the workers', or a load balancer's (its Service says so)
        found = next(((hc, port) for hc in clusters for rule in group.rules
                      if _admits_workers(sgs, hc, rule)
                      for port in _published_ports(inventory, hc) if rule.connections.allows("TCP", port)),
                     None)
        if found is not None:
            hc, port = found
            out.append((key, f"{group.obj.ref}, guessed to be in front of them: it admits the workers of "
                             f"{hc.obj.ref} to TCP {port}, which their control plane publishes, and "
                             "no Cluster API object, tag or name says which groups the machines are in"))
    return out


def _load_balancers_groups(inventory: Inventory, sgs: SecurityGroups) -> set[str]:
    """The keys of the groups a LoadBalancer Service's annotations attach to its load
    balancer: they are that load balancer's, not the machines'."""
    out: set[str] = set()
    for svc in inventory.of_kind("Service"):
        found = load_balancer_groups(svc) if svc.get("spec.type") == "LoadBalancer" else None
        for name in found.names if found is not None else ():
            group = resolve(sgs, name)
            out.update(k for k, g in sgs.groups.items() if g is group)
    return out


def _admits_workers(sgs: SecurityGroups, hc: HostedCluster, rule: IngressRule) -> bool:
    if any(h.obj is hc.obj for gid in rule.source_groups for h, _ in sgs.worker_groups.get(gid, [])):
        return True
    return bool(hc.machine_networks) and cidr_space(rule.cidrs)[0].overlaps(
        IPSpace.from_cidrs(hc.machine_networks))


def _published_ports(inventory: Inventory, hc: HostedCluster) -> list[int]:
    """The ports the control plane publishes to its workers: the API server's load
    balancer port when it is published as a LoadBalancer, and the ports of the
    NodePort and LoadBalancer Services of its namespace in the input."""
    ports = [hc.kas_service_port] if hc.published_as("APIServer") == "LoadBalancer" else []
    for svc in inventory.in_namespace("Service", hc.control_plane_namespace, hc.obj.cluster):
        kind = svc.get("spec.type")
        for entry in svc.get("spec.ports") or []:
            if not isinstance(entry, dict):
                continue
            value = entry.get("nodePort") if kind == "NodePort" else \
                entry.get("port") if kind == "LoadBalancer" else None
            if isinstance(value, int) and not isinstance(value, bool):
                ports.append(value)
    return list(dict.fromkeys(ports))


def _node_instances(inventory: Inventory) -> set[str]:
    """The EC2 instance ids of the management cluster's Nodes (``spec.providerID``)."""
    out = set()
    for node in inventory.of_kind("Node"):
        provider = node.get("spec.providerID")
        if node.cluster == MANAGEMENT and isinstance(provider, str) and provider.startswith("aws://"):
            out.add(provider.rpartition("/")[2])
    return out


def _machine_instances(inventory: Inventory, capa: CapaCluster) -> set[str]:
    """The instance ids of the AWSMachines of a CAPA cluster (its namespace; the cluster
    label when they carry one)."""
    name = capa.obj.labels.get("cluster.x-k8s.io/cluster-name") or capa.obj.name
    out = set()
    for machine in inventory.in_namespace("AWSMachine", capa.obj.namespace, capa.obj.cluster):
        label = machine.labels.get("cluster.x-k8s.io/cluster-name")
        if label not in (None, name):
            continue
        for field in ("spec.instanceID", "spec.providerID"):
            value = machine.get(field)
            if isinstance(value, str) and value:
                out.add(value.rpartition("/")[2])
    return out


def _capa_attached(capa: CapaCluster) -> list[tuple[str, str]]:
    roles = EKS_WORKER_ROLES if capa.eks else WORKER_ROLES
    return [(capa.roles[role], f"{capa.obj.ref} " + (
        f"spec.network.securityGroupOverrides.{role}" if role in capa.overrides
        else f"status.networkStatus.securityGroups.{role}")) for role in roles if role in capa.roles]


def manifest_perimeter(inventory: Inventory, diagnostics: list[Diagnostic]) -> Perimeter | None:
    """The security groups in front of the management cluster's workers as one
    perimeter; None when the input names none."""
    found = attached_groups(inventory, diagnostics)
    if not found:
        return None
    attached = [(gid, why) for gid, why, _ in found]
    guessed = [gid for gid, _, guess in found if guess]
    sgs = security_groups(inventory)
    described = [g for gid, _ in attached if (g := sgs.find(gid)) is not None]
    undescribed = tuple(dict.fromkeys(gid for gid, _ in attached if sgs.find(gid) is None))
    rules: list[PerimeterRule] = []
    unknowns = [_undescribed(gid) for gid in undescribed]
    if guessed:  # a block resting on a guessed attachment is not a fact about the machines
        unknowns.append(
            f"security group {', '.join(guessed)} is only guessed to be in front of the management "
            "cluster's machines (it admits the hosted workers to a port their control plane "
            "publishes); say which groups they are in: a Cluster API AWS cluster object "
            "(securityGroupOverrides / status), an AWSMachine's additionalSecurityGroups, the tag "
            "kubernetes.io/cluster/<infrastructureName> on the group, or a perimeter file (--firewall)")
    # the management machines' own groups: a rule naming one admits those machines, not
    # anyone whose addresses the input leaves out
    own = {gid for gid, _ in attached} | {gid for c in sgs.capa for gid in c.roles.values()}
    # AWS HostedClusters whose workers' default group the input does not give (a GitOps
    # tree has no status): a group no object places the workers in may still hold them
    unplaced = [hc for hc in hosted_clusters(inventory) if hc.obj.cluster == MANAGEMENT
                and hc.platform == "AWS" and not hc.obj.get("status.platform.aws.defaultWorkerSecurityGroupID")]
    fronted = _fronted_node_ports(inventory)
    for group in described:
        rules += _rules(inventory, sgs, group, diagnostics, unknowns, own if unplaced else None,
                        fronted)
    labels = [g.label for g in described] + [f"security group {gid} (not in the input)"
                                             for gid in undescribed]
    name = ", ".join(labels) if labels else "security groups"
    first = described[0] if described else None
    place = inventory.locate(first.obj, first.path) if first is not None else None
    why = "; ".join(f"{reason} ({gid})" for gid, reason in attached)
    text = (f"no ingress rule admits it (security groups deny what no rule allows); attached "
            f"to the management cluster's machines by {why}")
    if undescribed:
        text += f"; {', '.join(undescribed)} is attached but its rules are not in the input"
    return Perimeter(name, DENY, tuple(rules), place.path if place else "",
                     place.line if place else None, text, tuple(dict.fromkeys(unknowns)), FRONTS)


def _rules(inventory: Inventory, sgs: SecurityGroups, group: SecurityGroup,
           diagnostics: list[Diagnostic], unknowns: list[str], own: set[str] | None,
           fronted: ConnectionSet) -> list[PerimeterRule]:
    out = []
    for i, rule in enumerate(group.rules):
        place = inventory.locate(rule.obj, rule.path) if rule.obj is not None else None
        # a source group nobody is placed in matters where the rule opens a node port of a
        # control plane (the ways the groups front)
        opens_node_port = bool(rule.connections.intersection(fronted))
        sources, shown = _sources(sgs, group, rule, unknowns, own if opens_node_port else None)
        if rule.prefix_lists and opens_node_port:  # who is in a prefix list is the cloud's
            unknowns.append(f"{group.label} admits prefix list {', '.join(rule.prefix_lists)} to a "
                            "control plane's node port, and its addresses are not in the input; "
                            "give a perimeter file (--firewall)")
            shown += [f"prefix list {p} (addresses not in the input)" for p in rule.prefix_lists]
        said = list(rule.problems)
        if bad := cidr_space(rule.cidrs)[1]:
            said.append(f"{', '.join(bad)} is not a CIDR: the rule is read without it")
        if place is not None:
            diagnostics.extend(Diagnostic(place.path, place.line, f"{group.label}: {problem}", "warning",
                                          "fix the value (the cloud API refuses it)")
                               for problem in said)
        where = "/".join(str(p) for p in rule.path[-2:]) if rule.path else f"rule #{i + 1}"
        name = f"{group.label} {where}" + (f" ({rule.description})" if rule.description else "")
        out.append(PerimeterRule(name, ALLOW, sources, rule.connections, tuple(shown),
                                 place.path if place else "", place.line if place else None))
    return out


def _fronted_node_ports(inventory: Inventory) -> ConnectionSet:
    """The node ports of the management cluster's control-plane Services (NodePort and
    LoadBalancer) and of the HostedClusters' NodePort publishing (a GitOps tree without
    the HCP namespace), the whole node-port range for one not allocated yet."""
    out = ConnectionSet.none()
    for hc in hosted_clusters(inventory):
        if hc.obj.cluster != MANAGEMENT:
            continue
        for way in hc.publishing.values():
            if way.type == "NodePort":
                out = out.union(ConnectionSet.of("TCP", PortSet.single(way.node_port) if way.node_port
                                                 else PortSet.of(NODE_PORT_RANGE)))
        for svc in inventory.in_namespace("Service", hc.control_plane_namespace, hc.obj.cluster):
            if svc.get("spec.type") not in ("NodePort", "LoadBalancer"):
                continue
            for entry in svc.get("spec.ports") or []:
                if not isinstance(entry, dict):
                    continue
                value = entry.get("nodePort")
                ports = (PortSet.single(value) if isinstance(value, int) and not isinstance(value, bool)
                         and 0 < value < 65536 else PortSet.of(NODE_PORT_RANGE))
                protocol = str(entry.get("protocol") or "TCP").upper()
                if protocol in ("TCP", "UDP", "SCTP"):
                    out = out.union(ConnectionSet.of(protocol, ports))
    return out


def _sources(sgs: SecurityGroups, group: SecurityGroup, rule: IngressRule,
             unknowns: list[str], own: set[str] | None) -> tuple[IPSpace, list[str]]:
    """The addresses a rule admits: its CIDRs and the members of the groups it names
    (workers whose addresses the input does not give are added to ``unknowns``, and,
    when ``own`` is given — some AWS HostedCluster's default worker group is not in the
    input — a group neither ``own`` (the management machines') nor placed on workers:
    it may be the hosted workers' default group)."""
    space, _bad = cidr_space(rule.cidrs)
    shown = [c for c in rule.cidrs]
    ids = list(rule.source_groups)
    if rule.self_source and group.id:
        ids.append(group.id)
    for role in rule.source_roles:
        capa = next((c for c in sgs.capa if c.obj is group.obj), None)
        gid = capa.roles.get(role) if capa is not None else None
        if gid:
            ids.append(gid)
        else:
            shown.append(f"members of the {role} role group (not in the input)")
    for gid in dict.fromkeys(ids):
        unknowns += [f"security group {gid} admits the workers of {hc.obj.ref} ({where}), whose "
                     "addresses the input does not give: set its spec.networking.machineNetwork"
                     for hc, where in sgs.worker_groups.get(gid, []) if not hc.machine_networks]
        found, said = members(sgs, gid)
        if own is not None and gid not in sgs.worker_groups and gid not in own:
            unknowns.append(
                f"{group.label} admits the members of security group {gid}, and the input does "
                "not say who is in it: give the "
                "HostedCluster's status (status.platform.aws.defaultWorkerSecurityGroupID) or name "
                "it in a NodePool's spec.platform.aws.securityGroups")
        space = space.union(found)
        shown.append(f"members of {gid}: " + "; ".join(said) if said else
                     f"members of {gid} (whose addresses the input does not give)")
    return space, shown


# -- a LoadBalancer Service's own groups ----------------------------------------------------


def load_balancer_perimeters(inventory: Inventory, diagnostics: list[Diagnostic]) -> list[Perimeter]:
    """One perimeter per LoadBalancer Service of the management cluster whose annotations
    put its load balancer in security groups (``model.securitygroups.load_balancer_groups``):
    the groups' rules, and — for the extra groups — the group the cloud provider makes
    beside them (the Service's loadBalancerSourceRanges on its ports). Each fronts only
    that Service's load balancer."""
    out = []
    for svc in inventory.of_kind("Service"):
        if svc.cluster != MANAGEMENT or svc.get("spec.type") != "LoadBalancer":
            continue
        found = load_balancer_groups(svc)
        if found is None:
            continue
        for key in found.ignored:
            where = inventory.locate(svc, ("metadata", "annotations", key))
            diagnostics.append(Diagnostic(
                where.path, where.line,
                f"Service {svc.namespace}/{svc.name}: its {found.balancer} does not read {key}; "
                "the groups it names are not judged", "warning",
                "an NLB the cloud provider makes has no security group (it opens the nodes' groups to "
                "loadBalancerSourceRanges); the AWS Load Balancer Controller reads "
                "aws-load-balancer-security-groups"))
        if found.names:
            out.append(_load_balancer_perimeter(inventory, svc, found, diagnostics))
    return out


def _load_balancer_perimeter(inventory: Inventory, svc: K8sObject, found: LoadBalancerGroups,
                             diagnostics: list[Diagnostic]) -> Perimeter:
    sgs = security_groups(inventory)
    ports = ConnectionSet.none()
    for entry in svc.get("spec.ports") or []:
        if isinstance(entry, dict) and isinstance(entry.get("port"), int):
            protocol = str(entry.get("protocol") or "TCP").upper()
            if protocol in ("TCP", "UDP", "SCTP"):
                ports = ports.union(ConnectionSet.of(protocol, PortSet.single(entry["port"])))
    described = [(name, g) for name in found.names if (g := resolve(sgs, name)) is not None]
    undescribed = [name for name in found.names if resolve(sgs, name) is None]
    ref = f"Service {svc.namespace}/{svc.name}"
    annotation = inventory.locate(svc, ("metadata", "annotations", found.annotation))
    unknowns = [f"security group {name} is attached to the load balancer of {ref} "
                f"({found.annotation}) but its rules are not in the input; describe it: an ACK or "
                "Crossplane SecurityGroup with that id or name, or a perimeter file (--firewall)"
                for name in undescribed]
    rules: list[PerimeterRule] = []
    if not found.replaces:  # the provider's own group stays: it admits the source ranges
        ranges = load_balancer_source_ranges(svc)
        sources = ranges.space() if not ranges.malformed else IPSpace.everything()
        place = inventory.locate(svc, ranges.path or "spec.ports")
        said = f"; read as every address: {ranges.malformed_text()}" if ranges.malformed else ""
        rules.append(PerimeterRule(
            f"the group the cloud provider makes for {ref} (its load-balancer source ranges "
            f"on its ports{', from ' + ranges.where if ranges.declared else ''}{said})",
            ALLOW, sources, ports, (ranges.cidrs if ranges.declared and not ranges.malformed
                                    else ("0.0.0.0/0", "::/0")), place.path, place.line))
    for _name, group in described:
        rules += _rules(inventory, sgs, group, diagnostics, unknowns, None, ports)
    labels = [g.label for _, g in described] + [f"security group {n} (not in the input)"
                                               for n in undescribed]
    text = (f"no ingress rule admits it (security groups deny what no rule allows); the load "
            f"balancer of {ref} is in them by {found.annotation}"
            + (" (instead of the group the cloud provider makes)" if found.replaces else ""))
    if found.balancer == LBC_NLB:
        text += ("; an NLB has security groups only when it was created with some: had the "
                 "annotation been added after, AWS admits every address and the groups are not "
                 "in front of it")
    # a connection no rule admits is written at the group (where a rule would go), else at
    # the annotation naming groups the input does not describe
    first = described[0][1] if described else None
    place = inventory.locate(first.obj, first.path) if first is not None else annotation
    return Perimeter(f"{', '.join(labels)} of the load balancer of {ref}", DENY, tuple(rules),
                     place.path, place.line, text, tuple(dict.fromkeys(unknowns)),
                     (load_balancer_way(svc.namespace, svc.name),))
