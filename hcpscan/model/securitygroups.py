"""AWS security groups as manifests declare them: their ingress rules, and who is in them.

A security group is allow-only and stateful: traffic into a member is let in when some
ingress rule of some group attached to it admits the source and the port (replies need
no rule), and nothing else is. A rule's source is address ranges or the members of
another group. This module reads, exactly and with each rule's place:

* Cluster API AWS (``infrastructure.cluster.x-k8s.io``): ``AWSCluster`` and
  ``AWSManagedControlPlane`` ``status.networkStatus.securityGroups.<role>`` (``id``,
  ``name``, ``ingressRule[]``: ``protocol``, ``fromPort``, ``toPort``, ``cidrBlocks``,
  ``ipv6CidrBlocks``, ``sourceSecurityGroupIDs``, ``sourceSecurityGroupRoles``), the
  role overrides ``spec.network.securityGroupOverrides``, and the machines'
  ``additionalSecurityGroups`` (``AWSMachineTemplate`` ``spec.template.spec``,
  ``AWSMachine`` ``spec``) by ``id``;
* ACK (``ec2.services.k8s.aws``) ``SecurityGroup``: ``status.id``, ``spec.name``,
  ``spec.ingressRules[]`` (``ipProtocol``, ``fromPort``, ``toPort``, ``ipRanges[].cidrIP``,
  ``ipv6Ranges[].cidrIPv6``, ``userIDGroupPairs[].groupID``);
* Crossplane's upbound provider (``ec2.aws.upbound.io``): ``SecurityGroup``
  (``status.atProvider.id``, ``spec.forProvider.name``), ``SecurityGroupIngressRule``
  (``spec.forProvider``: ``ipProtocol``, ``fromPort``, ``toPort``, ``cidrIpv4``, ``cidrIpv6``,
  ``referencedSecurityGroupId``, the group by ``securityGroupId`` / ``securityGroupIdRef`` /
  ``securityGroupIdSelector``) and ``SecurityGroupRule`` (``type: ingress``, ``protocol``,
  ``fromPort``, ``toPort``, ``cidrBlocks``, ``ipv6CidrBlocks``, ``sourceSecurityGroupId``,
  ``self``, the group as above);
* HyperShift: the groups a HostedCluster's workers are in — ``status.platform.aws.
  defaultWorkerSecurityGroupID``, each NodePool's ``spec.platform.aws.securityGroups[].id``
  and the ``additionalSecurityGroups`` of the AWSMachineTemplates in its HCP namespace.

Protocols other than TCP, UDP and SCTP (ICMP, ESP, IP-in-IP) carry no port traffic
hcpscan judges and are read as admitting none of it; ``-1`` (all) admits every port of
every protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hcpscan.inventory import Inventory, K8sObject
from hcpscan.model.hostedcluster import HostedCluster, hosted_cluster_for_namespace, hosted_clusters
from hcpscan.model.ipspace import AddressError, IPSpace, parse_network
from hcpscan.model.ports import ConnectionSet, PortSet

CAPA_GROUP = "infrastructure.cluster.x-k8s.io"
CAPA_EKS_GROUP = "controlplane.cluster.x-k8s.io"
ACK_GROUP = "ec2.services.k8s.aws"
UPBOUND_GROUP = "ec2.aws.upbound.io"
# The kinds read here (one home; the inventory's kind -> resource table lists them).
SECURITY_GROUP_KINDS = ("AWSCluster", "AWSManagedControlPlane", "AWSMachineTemplate", "AWSMachine",
                        "SecurityGroup", "SecurityGroupIngressRule", "SecurityGroupRule", "NodePool")
# CAPA's roles; which machines each group is attached to is CAPA's (GetCoreSecurityGroups):
# every machine is in ``node`` and (not on EKS) ``lb``, control-plane machines also in
# ``controlplane``; ``apiserver-lb`` fronts the cluster's own API load balancer and
# ``bastion`` the bastion host.
ROLE_NODE, ROLE_LB, ROLE_CONTROL_PLANE = "node", "lb", "controlplane"
WORKER_ROLES = (ROLE_NODE, ROLE_LB)
# EKS managed node groups (AWSManagedMachinePool) are in the EKS cluster group that CAPA
# reports as ``cluster`` (not in ``node``): a management cluster on EKS runs its pods there
EKS_WORKER_ROLES = (ROLE_NODE, "node-eks-additional", "cluster")

# A LoadBalancer Service's own groups (AWS): the cloud provider (CCM) puts a Classic load
# balancer in the groups ``LB_GROUPS`` names instead of the one it makes (which admits
# its source ranges — model.sourceranges: the field, else the legacy annotation — and every
# address without them, on the Service's ports), and in
# ``LB_EXTRA_GROUPS`` beside it; for an NLB (``LB_TYPE: nlb``) it reads neither (an NLB it
# makes has no group; it opens the nodes' groups to the source ranges instead). The AWS
# Load Balancer Controller's NLB (``LB_TYPE: external``/``nlb-ip``, loadBalancerClass
# ``service.k8s.aws/nlb``) takes ``LB_GROUPS`` as its frontend groups (instead of the one it
# makes) — and AWS sets an NLB's groups only when it is created with some.
LB_GROUPS = "service.beta.kubernetes.io/aws-load-balancer-security-groups"
LB_EXTRA_GROUPS = "service.beta.kubernetes.io/aws-load-balancer-extra-security-groups"
LB_TYPE = "service.beta.kubernetes.io/aws-load-balancer-type"
LBC_CLASS = "service.k8s.aws/nlb"
CLASSIC, CCM_NLB = "Classic load balancer", "NLB (cloud provider)"
LBC_NLB = "NLB (AWS Load Balancer Controller)"

_PROTOCOLS = {"tcp": "TCP", "6": "TCP", "udp": "UDP", "17": "UDP", "sctp": "SCTP", "132": "SCTP"}
_ALL = ("-1", "all")


@dataclass(frozen=True, slots=True)
class IngressRule:
    """One ingress rule: the connections it admits, from which ranges or groups' members."""

    connections: ConnectionSet
    cidrs: tuple[str, ...]
    source_groups: tuple[str, ...] = ()  # group ids
    source_roles: tuple[str, ...] = ()  # CAPA roles of the same cluster
    self_source: bool = False  # Crossplane ``self``: the group's own members
    description: str = ""
    obj: K8sObject | None = None
    path: tuple[str | int, ...] = ()  # the rule's field, for its line
    problems: tuple[str, ...] = ()  # what of it could not be read (values of the wrong type)
    prefix_lists: tuple[str, ...] = ()  # managed prefix lists: addresses not in the manifests


@dataclass(slots=True)
class SecurityGroup:
    """A group the input describes (its rules are known) — by id when it has one."""

    id: str
    name: str
    obj: K8sObject
    path: tuple[str | int, ...]
    origin: str  # how it is declared: "CAPA status", "ACK", "Crossplane"
    role: str = ""
    rules: list[IngressRule] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)  # its AWS tags (ACK, Crossplane)

    @property
    def label(self) -> str:
        shown = self.id or f"{self.obj.kind} {self.obj.name}"
        named = self.name if self.name and self.name != self.id else ""
        role = f"{self.role} role" if self.role else ""
        extra = ", ".join(p for p in (named, role) if p)
        return f"security group {shown}" + (f" ({extra})" if extra else "")


@dataclass(slots=True)
class CapaCluster:
    """A Cluster API AWS cluster object and the groups of its roles."""

    obj: K8sObject
    eks: bool
    roles: dict[str, str]  # role -> group id (status, overridden by spec.network.securityGroupOverrides)
    overrides: dict[str, str]


@dataclass(slots=True)
class SecurityGroups:
    """Every security group the input declares, and who the workers' groups belong to."""

    groups: dict[str, SecurityGroup] = field(default_factory=dict)  # by id (else by object)
    capa: list[CapaCluster] = field(default_factory=list)
    # group id -> the HostedClusters whose workers are in it, and where that is said
    worker_groups: dict[str, list[tuple[HostedCluster, str]]] = field(default_factory=dict)
    # (AWSMachineTemplate/AWSMachine outside HCP namespaces, its additional group ids)
    machine_groups: list[tuple[K8sObject, tuple[str, ...]]] = field(default_factory=list)

    def find(self, group_id: str) -> SecurityGroup | None:
        return self.groups.get(group_id)


def security_groups(inventory: Inventory) -> SecurityGroups:
    """The security groups of the input, read once per inventory."""
    return inventory.derived("security-groups", _read)


def _read(inventory: Inventory) -> SecurityGroups:
    out = SecurityGroups()
    for obj in inventory.of_kind("AWSCluster", "AWSManagedControlPlane"):
        if obj.group in (CAPA_GROUP, CAPA_EKS_GROUP):
            _capa(out, obj)
    for obj in inventory.of_kind("SecurityGroup"):
        if obj.group == ACK_GROUP:
            _ack(out, obj)
        elif obj.group == UPBOUND_GROUP:
            _upbound_group(out, obj)
    upbound = [o for o in inventory.of_kind("SecurityGroup") if o.group == UPBOUND_GROUP]
    for obj in inventory.of_kind("SecurityGroupIngressRule", "SecurityGroupRule"):
        if obj.group == UPBOUND_GROUP:
            _upbound_rule(out, obj, upbound)
    _workers(inventory, out)
    return out


# -- Cluster API AWS ---------------------------------------------------------------------


def _capa(out: SecurityGroups, obj: K8sObject) -> None:
    spec, status = _map(obj.body.get("spec")), _map(obj.body.get("status"))
    network = _map(spec.get("network"))
    overrides = {str(k): str(v) for k, v in _map(network.get("securityGroupOverrides")).items()
                 if isinstance(v, str) and v}
    groups = _map(_map(status.get("networkStatus")).get("securityGroups"))
    roles: dict[str, str] = {}
    for role, raw in groups.items():
        group = _map(raw)
        gid = str(group.get("id") or "")
        if not gid:
            continue
        roles[str(role)] = gid
        path: tuple[str | int, ...] = ("status", "networkStatus", "securityGroups", str(role))
        sg = SecurityGroup(gid, str(group.get("name") or ""), obj, path, "CAPA status", str(role))
        for i, rule in enumerate(_list(group.get("ingressRule"))):
            sg.rules.append(_capa_rule(obj, rule, (*path, "ingressRule", i)))
        out.groups.setdefault(gid, sg)
    roles.update(overrides)  # an override names the group CAPA attaches instead
    out.capa.append(CapaCluster(obj, obj.kind == "AWSManagedControlPlane", roles, overrides))


def _capa_rule(obj: K8sObject, raw: Any, path: tuple[str | int, ...]) -> IngressRule:
    if not isinstance(raw, dict):
        return IngressRule(ConnectionSet.none(), (), obj=obj, path=path,
                           problems=("the rule is not a mapping: it admits nothing",))
    said: list[str] = []
    rule = raw
    return IngressRule(
        _connections(rule.get("protocol"), rule.get("fromPort"), rule.get("toPort"), said),
        (*_strings(rule.get("cidrBlocks"), "cidrBlocks", said),
         *_strings(rule.get("ipv6CidrBlocks"), "ipv6CidrBlocks", said)),
        _strings(rule.get("sourceSecurityGroupIDs"), "sourceSecurityGroupIDs", said),
        _strings(rule.get("sourceSecurityGroupRoles"), "sourceSecurityGroupRoles", said),
        description=str(rule.get("description") or ""), obj=obj, path=path, problems=tuple(said))


# -- ACK ---------------------------------------------------------------------------------


def _ack(out: SecurityGroups, obj: K8sObject) -> None:
    spec, status = _map(obj.body.get("spec")), _map(obj.body.get("status"))
    gid = str(status.get("id") or "")
    sg = SecurityGroup(gid, str(spec.get("name") or obj.name), obj, ("spec",), "ACK",
                       tags={str(_map(t).get("key")): str(_map(t).get("value") or "")
                             for t in _list(spec.get("tags")) if _map(t).get("key")})
    for i, raw in enumerate(_list(spec.get("ingressRules"))):
        if not isinstance(raw, dict):
            sg.rules.append(IngressRule(ConnectionSet.none(), (), obj=obj, path=("spec", "ingressRules", i),
                                        problems=("the rule is not a mapping: it admits nothing",)))
            continue
        said: list[str] = []
        rule = raw
        cidrs = [*_strings([_map(r).get("cidrIP") for r in _list(rule.get("ipRanges"))],
                           "ipRanges[].cidrIP", said),
                 *_strings([_map(r).get("cidrIPv6") for r in _list(rule.get("ipv6Ranges"))],
                           "ipv6Ranges[].cidrIPv6", said)]
        pairs = _strings([_map(p).get("groupID") for p in _list(rule.get("userIDGroupPairs"))],
                         "userIDGroupPairs[].groupID", said)
        lists = _strings([_map(p).get("prefixListID") for p in _list(rule.get("prefixListIDs"))],
                         "prefixListIDs[].prefixListID", said)
        sg.rules.append(IngressRule(
            _connections(rule.get("ipProtocol"), rule.get("fromPort"), rule.get("toPort"), said),
            tuple(cidrs), pairs, obj=obj, path=("spec", "ingressRules", i), problems=tuple(said),
            prefix_lists=lists))
    out.groups.setdefault(gid or f"{obj.ref}", sg)


# -- Crossplane (upbound provider-aws) ---------------------------------------------------


def _upbound_group(out: SecurityGroups, obj: K8sObject) -> None:
    spec, status = _map(obj.body.get("spec")), _map(obj.body.get("status"))
    gid = str(_map(status.get("atProvider")).get("id") or "")
    name = str(_map(spec.get("forProvider")).get("name") or obj.name)
    tags = {str(k): str(v) for k, v in _map(_map(spec.get("forProvider")).get("tags")).items()}
    out.groups.setdefault(gid or obj.ref, SecurityGroup(gid, name, obj, ("spec",), "Crossplane",
                                                        tags=tags))


def _upbound_rule(out: SecurityGroups, obj: K8sObject, groups: list[K8sObject]) -> None:
    fp = _map(_map(obj.body.get("spec")).get("forProvider"))
    if obj.kind == "SecurityGroupRule" and str(fp.get("type") or "") != "ingress":
        return  # an egress rule: security groups let replies back without one
    owner = _owner(out, fp, groups)
    if owner is None:
        return  # its group is not in the input: it attaches to nothing hcpscan can tell
    path: tuple[str | int, ...] = ("spec", "forProvider")
    said: list[str] = []
    if obj.kind == "SecurityGroupIngressRule":
        rule = IngressRule(_connections(fp.get("ipProtocol"), fp.get("fromPort"), fp.get("toPort"), said),
                           (*_strings(fp.get("cidrIpv4"), "cidrIpv4", said),
                            *_strings(fp.get("cidrIpv6"), "cidrIpv6", said)),
                           _strings(fp.get("referencedSecurityGroupId"), "referencedSecurityGroupId", said),
                           description=str(fp.get("description") or ""), obj=obj, path=path,
                           problems=tuple(said),
                           prefix_lists=_strings(fp.get("prefixListId"), "prefixListId", said))
    else:
        rule = IngressRule(_connections(fp.get("protocol"), fp.get("fromPort"), fp.get("toPort"), said),
                           (*_strings(fp.get("cidrBlocks"), "cidrBlocks", said),
                            *_strings(fp.get("ipv6CidrBlocks"), "ipv6CidrBlocks", said)),
                           _strings(fp.get("sourceSecurityGroupId"), "sourceSecurityGroupId", said),
                           self_source=fp.get("self") is True,
                           description=str(fp.get("description") or ""), obj=obj, path=path,
                           problems=tuple(said),
                           prefix_lists=_strings(fp.get("prefixListIds"), "prefixListIds", said))
    owner.rules.append(rule)


def _owner(out: SecurityGroups, fp: dict[str, Any], groups: list[K8sObject]) -> SecurityGroup | None:
    """The group a Crossplane rule belongs to: by id, by reference or by selector."""
    gid = fp.get("securityGroupId")
    if isinstance(gid, str) and gid in out.groups:
        return out.groups[gid]
    ref = _map(fp.get("securityGroupIdRef")).get("name")
    labels = _map(_map(fp.get("securityGroupIdSelector")).get("matchLabels"))
    for obj in groups:
        if (ref and obj.name == ref) or (labels and not ref and all(
                obj.labels.get(k) == v for k, v in labels.items())):
            return next((g for g in out.groups.values() if g.obj is obj), None)
    return None


# -- which cluster's machines a group is for ------------------------------------------------

# The AWS cloud provider finds a cluster's node groups by the tag
# ``kubernetes.io/cluster/<cluster id>`` (``owned`` or ``shared``); OpenShift's installer
# names its groups ``<infrastructure name>-node`` / ``-lb`` (``-worker-sg`` before 4.16).
CLUSTER_TAG = "kubernetes.io/cluster/"
_INSTALLER_SUFFIXES = ("-node", "-lb", "-worker-sg")


def marks_cluster(group: SecurityGroup, cluster_id: str) -> str:
    """How ``group`` says it is for the machines of the cluster ``cluster_id`` (its tag or
    its installer name), or ''."""
    if not cluster_id:
        return ""
    tag = CLUSTER_TAG + cluster_id
    if group.tags.get(tag, "").lower() in ("owned", "shared"):
        return f"tag {tag}={group.tags[tag]}"
    if group.name in (cluster_id + s for s in _INSTALLER_SUFFIXES):
        return f"name {group.name} (the installer's for {cluster_id})"
    return ""


# -- a load balancer's groups -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LoadBalancerGroups:
    """The groups a LoadBalancer Service's annotations put its load balancer in."""

    svc: K8sObject
    balancer: str  # CLASSIC | CCM_NLB | LBC_NLB
    annotation: str  # the annotation read (LB_GROUPS or LB_EXTRA_GROUPS)
    names: tuple[str, ...]  # group ids or names, as written
    replaces: bool  # True: the groups instead of the provider's own; False: beside it
    ignored: tuple[str, ...] = ()  # annotations the balancer does not read (named)


def load_balancer_kind(svc: K8sObject) -> str:
    """Which AWS load balancer a LoadBalancer Service gets: CLASSIC, CCM_NLB or LBC_NLB."""
    kind = str(svc.annotations.get(LB_TYPE) or "").strip().lower()
    if kind in ("external", "nlb-ip") or svc.get("spec.loadBalancerClass") == LBC_CLASS:
        return LBC_NLB
    return CCM_NLB if kind == "nlb" else CLASSIC


def load_balancer_groups(svc: K8sObject) -> LoadBalancerGroups | None:
    """The groups the annotations of ``svc`` attach to its load balancer, as far as its
    balancer reads them; None when it has neither annotation."""
    named = {key: tuple(v.strip() for v in str(svc.annotations.get(key) or "").split(",") if v.strip())
             for key in (LB_GROUPS, LB_EXTRA_GROUPS)}
    if not any(named.values()):
        return None
    balancer = load_balancer_kind(svc)
    if balancer == CCM_NLB:
        return LoadBalancerGroups(svc, balancer, "", (), False,
                                  tuple(k for k, v in named.items() if v))
    if named[LB_GROUPS]:
        ignored = (LB_EXTRA_GROUPS,) if named[LB_EXTRA_GROUPS] and balancer == LBC_NLB else ()
        names = named[LB_GROUPS] + (named[LB_EXTRA_GROUPS] if balancer == CLASSIC else ())
        return LoadBalancerGroups(svc, balancer, LB_GROUPS, tuple(dict.fromkeys(names)), True, ignored)
    if balancer == LBC_NLB:  # the controller reads only LB_GROUPS for an NLB
        return LoadBalancerGroups(svc, balancer, "", (), False, (LB_EXTRA_GROUPS,))
    return LoadBalancerGroups(svc, balancer, LB_EXTRA_GROUPS, named[LB_EXTRA_GROUPS], False)


def resolve(groups: SecurityGroups, name: str) -> SecurityGroup | None:
    """A group named by id, else by its name (one group of that name only)."""
    found = groups.find(name)
    if found is not None:
        return found
    by_name = [g for g in groups.groups.values() if g.name == name]
    return by_name[0] if len(by_name) == 1 else None


# -- who is in which group ---------------------------------------------------------------


def _workers(inventory: Inventory, out: SecurityGroups) -> None:
    by_ref = {(hc.obj.cluster, hc.namespace, hc.name): hc for hc in hosted_clusters(inventory)}
    for hc in by_ref.values():
        gid = _map(_map(_map(hc.obj.body.get("status")).get("platform")).get("aws")).get(
            "defaultWorkerSecurityGroupID")
        if isinstance(gid, str) and gid:
            out.worker_groups.setdefault(gid, []).append(
                (hc, f"{hc.obj.ref} status.platform.aws.defaultWorkerSecurityGroupID"))
    for pool in inventory.of_kind("NodePool"):
        spec = _map(pool.body.get("spec"))
        owner = by_ref.get((pool.cluster, pool.namespace, str(spec.get("clusterName") or "")))
        if owner is None:
            continue
        for i, entry in enumerate(_list(_map(_map(spec.get("platform")).get("aws")).get("securityGroups"))):
            gid = _map(entry).get("id")
            if isinstance(gid, str) and gid:
                out.worker_groups.setdefault(gid, []).append(
                    (owner, f"{pool.ref} spec.platform.aws.securityGroups[{i}]"))
    for machine in inventory.of_kind("AWSMachineTemplate", "AWSMachine"):
        if machine.group != CAPA_GROUP:
            continue
        spec = _map(machine.body.get("spec"))
        if machine.kind == "AWSMachineTemplate":
            spec = _map(_map(spec.get("template")).get("spec"))
        ids = tuple(_group_reference(g) for g in _list(spec.get("additionalSecurityGroups"))
                    if _group_reference(g))
        pools_of = hosted_cluster_for_namespace(inventory, machine.namespace, machine.cluster)
        if pools_of is not None:  # HyperShift's machines of a NodePool: the workers' groups
            for gid in ids:
                out.worker_groups.setdefault(gid, []).append(
                    (pools_of, f"{machine.ref} additionalSecurityGroups"))
        elif ids:
            out.machine_groups.append((machine, ids))


def _group_reference(ref: Any) -> str:
    """A machine's additional group: its id, or (named by filters the cloud resolves) a
    text that no described group has, so the group counts as named but not described."""
    entry = _map(ref)
    if isinstance(entry.get("id"), str) and entry["id"]:
        return str(entry["id"])
    filters = [f"{_map(f).get('name')}={','.join(map(str, _list(_map(f).get('values'))))}"
               for f in _list(entry.get("filters"))]
    return f"matched by filters {'; '.join(filters)}" if filters else ""


def members(groups: SecurityGroups, group_id: str) -> tuple[IPSpace, list[str]]:
    """The addresses of a group's members as far as the input tells (a HostedCluster's
    workers: its machine network), and the sentences that say so."""
    space, said = IPSpace(), []
    for hc, where in groups.worker_groups.get(group_id, []):
        if hc.machine_networks:
            space = space.union(IPSpace.from_cidrs(hc.machine_networks))
            said.append(f"the workers of {hc.obj.ref} ({where}; {', '.join(hc.machine_networks)})")
    return space, said


# -- values ------------------------------------------------------------------------------


def _connections(protocol: Any, first: Any, last: Any, said: list[str]) -> ConnectionSet:
    """What an ingress rule admits: ``-1`` every port of every protocol; TCP/UDP/SCTP the
    ports ``first``-``last`` (both absent, or ``-1``: every port); ICMP, ESP and other
    protocols none (they carry no port traffic hcpscan judges). A value of the wrong type
    admits nothing and is said in ``said``."""
    if protocol is None or isinstance(protocol, bool) or not isinstance(protocol, (str, int)):
        said.append(f"protocol {protocol!r} is not a protocol: the rule admits nothing")
        return ConnectionSet.none()
    text = str(protocol).strip().lower()
    if text in _ALL:
        return ConnectionSet.all()
    name = _PROTOCOLS.get(text)
    if name is None:
        return ConnectionSet.none()
    if first is None and last is None:
        return ConnectionSet.of(name, PortSet.all())
    for value, field_name in ((first, "fromPort"), (last, "toPort")):
        if not isinstance(value, int) or isinstance(value, bool):
            said.append(f"{field_name} {value!r} is not a number: the rule admits nothing")
            return ConnectionSet.none()
    low, high = int(first), int(last)
    if low == -1 or (low <= 0 and high >= 65535):
        return ConnectionSet.of(name, PortSet.all())
    low, high = max(low, 1), min(high, 65535)
    if low > high:
        said.append(f"fromPort {first} is above toPort {last}: the rule admits nothing")
        return ConnectionSet.none()
    return ConnectionSet.of(name, PortSet.of((low, high)))


def cidr_space(cidrs: tuple[str, ...]) -> tuple[IPSpace, list[str]]:
    """The addresses of a rule's CIDRs (host bits masked off, as AWS canonicalises
    ``10.0.0.1/16`` to ``10.0.0.0/16``), and the ones that are not addresses (named)."""
    space, bad = IPSpace(), []
    for text in cidrs:
        try:
            space = space.union(IPSpace.from_networks([parse_network(text, strict=False)]))
        except AddressError:
            bad.append(text)
    return space, bad


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _strings(value: Any, name: str = "", said: list[str] | None = None) -> tuple[str, ...]:
    """The strings of a field (one string or a list of them); what is not one is said."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    items = value if isinstance(value, list) else [value]
    out = tuple(v for v in items if isinstance(v, str) and v)
    wrong = [v for v in items if not isinstance(v, str) and v is not None]
    if wrong and said is not None:
        said.append(f"{name}: {', '.join(repr(v) for v in wrong)} is not a string: left out")
    return out
