"""The change that opens a blocked required flow: exactly its missing connections, at the
layer that blocks them.

A required flow (``required.FlowResult``) that is blocked names, per missing connection,
the first hop that blocks it: its layer and where it is written (file:line). This module
turns those hops into the smallest change of the input that opens exactly the missing
connection set and nothing more, or says why no change is safe:

* **NetworkPolicy** (the subject's pods are isolated and no rule allows the connection):
  a *new* NetworkPolicy selecting exactly the subject's pods, with one rule per peer
  allowing the missing connections to/from it. Allow rules add up across policies, so
  for pods already isolated the new policy adds exactly that set. Appending a rule to the
  blocking policy would open it for every pod that policy selects (a default-deny
  selects the whole namespace), so it is not done.
* **AdminNetworkPolicy** (an ANP ``Deny`` rule): a new ANP one priority number before
  the denying one (so it is evaluated first), whose subject is exactly the subject's pods
  and whose one rule ``Allow``s exactly the missing connections from/to the peers. Not
  ``Pass``: that hands the connection to the namespace's NetworkPolicies, which may deny
  it, so the flow would stay shut. Refused when that priority is taken or below 0.
* **A LoadBalancer's source ranges**: the missing worker ranges appended to
  ``spec.networking.apiServer.allowedCIDRBlocks`` of the HostedCluster (the API server's
  load balancer, which the operator renders from it), to the source ranges of a Service
  nobody reconciles (``loadBalancerSourceRanges``, or the legacy annotation when that alone
  holds them), or to the IngressController's ``allowedSourceRanges``
  of the router that serves the Route.
* **The perimeter file** (``--firewall``): allow rules for exactly the worker ranges on
  the entry port, put first (its rules are read top to bottom); the same change is to be
  made in the firewall or security group it describes, which hcpscan never changes.
* Refused, with the reason: an EgressFirewall (the cluster admin's), a
  BaselineAdminNetworkPolicy (a NetworkPolicy would isolate the pods), a UDN, a Service
  the HyperShift operator reconciles, no Service or Route at all.

The checks in ``required`` decide the hops; nothing here judges, and a hop further on
that also blocks is named by the next scan.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hcpscan.analysis.reachability.allow import (
    EGRESS,
    INGRESS,
    NotExpressible,
    allow_rule,
    allowing_policy,
    port_entries,
)
from hcpscan.analysis.reachability.answers import (
    ADMIN_NETWORK_POLICY,
    BASELINE_ADMIN_NETWORK_POLICY,
    EGRESS_FIREWALL,
    MULTI_NETWORK_POLICY,
    NETWORK_POLICY,
    PERIMETER,
    PRIMARY_NETWORK,
    SERVICE,
)
from hcpscan.analysis.reachability.paths import NO_WAY, Hop, PathAnswer
from hcpscan.analysis.reachability.perimeter import Perimeter, PerimeterStack, stacked
from hcpscan.analysis.reachability.required import (
    VIRT_LAUNCHER,
    FlowResult,
    dns_pods,
    hosted_kas,
)
from hcpscan.analysis.reachability.routers import hcp_route_router, serving_controllers
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.inventory.objects import BUILT_DOCUMENT, SourceLocation, namespace_of
from hcpscan.model.destinations import (
    DNS,
    HOSTED_KAS,
    MANAGEMENT_KAS,
    OUTSIDE,
    PROXY,
    address_space,
    management_kas_endpoints,
    proxy_endpoint,
)
from hcpscan.model.hostedcluster import HostedCluster
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.ports import ConnectionSet, PortSet, normalise_protocol
from hcpscan.model.publishing import DeclaredWay, declared_way
from hcpscan.model.sourceranges import SOURCE_RANGES_ANNOTATION, load_balancer_source_ranges

NAME_LABEL = "kubernetes.io/metadata.name"  # every namespace carries its name as a label
ANP_API = "policy.networking.k8s.io/v1alpha1"
_REF = re.compile(r"^(?P<ns>[^/]*)/(?P<name>[^\[]+)\[(?P<kind>[^\]]+)\]$")
_LB_SOURCE_FIELDS = ("spec", "loadBalancerSourceRanges")
_LB_SOURCE_ANNOTATION = ("metadata", "annotations", SOURCE_RANGES_ANNOTATION)


@dataclass(frozen=True, slots=True)
class Opening:
    """The change: ``documents`` written after ``target``'s document, ``append`` items
    added to list fields of ``target`` (field steps, items), ``replace`` list fields
    written anew with these items."""

    target: K8sObject
    summary: str
    documents: tuple[dict[str, Any], ...] = ()
    append: tuple[tuple[tuple[str | int, ...], tuple[str, ...]], ...] = ()
    replace: tuple[tuple[tuple[str | int, ...], tuple[str, ...]], ...] = ()  # a list set anew
    prepend: tuple[tuple[tuple[str | int, ...], tuple[Any, ...]], ...] = ()  # before item 0
    # entries added to a comma-separated value (the legacy source-ranges annotation)
    entries: tuple[tuple[tuple[str | int, ...], tuple[str, ...]], ...] = ()
    scalars: tuple[tuple[tuple[str | int, ...], str], ...] = ()  # fields set to a value


@dataclass(frozen=True, slots=True)
class Refusal:
    why: str


def opening(inventory: Inventory, result: FlowResult, hc: HostedCluster | None,
            cluster: str, perimeter: Perimeter | None = None) -> Opening | Refusal:
    """The change that opens exactly the missing connections of a blocked ``result``
    (``perimeter``: the ``--firewall`` file the scan read, for a perimeter hop)."""
    blocked = result.blocked
    if not blocked:
        return Refusal("nothing is blocked")
    hops = [(a, a.blocked_by) for a in blocked]
    for answer, hop in hops:
        if hop is None or hop.layer == NO_WAY:
            return Refusal(f"{answer.origin} → {answer.target} {answer.connection} has no way "
                           "in (no Service or Route exposes the port): publishing it is the "
                           "HostedCluster's spec.services, not a rule to open")
    layers = {hop.layer for _, hop in hops if hop is not None}
    if len(layers) > 1:
        return Refusal("the missing connections are blocked at several layers ("
                       + ", ".join(sorted(layers)) + "): open each where it is blocked; the "
                       "finding's facts name every hop")
    layer = layers.pop()
    far = [(a, h) for a, h in hops if h is not None and _far_side(result, h)]
    try:
        if far and layer == NETWORK_POLICY and len(far) == len(hops):
            return _peer_policy(inventory, result, cluster, hops)
        if far:
            answer, hop = far[0]
            return Refusal(f"{answer.origin} → {answer.target} {answer.connection} is blocked on "
                           f"the other end: {hop.summary}" + (f" ({hop.where})" if hop.where else "")
                           + "; a policy for the subject's pods would not open it: allow it "
                           "where that hop names")
        if layer == NETWORK_POLICY:
            return _network_policy(inventory, result, hc, cluster, hops)
        if layer == ADMIN_NETWORK_POLICY:
            return _admin_policy(inventory, result, hc, cluster, hops)
        if layer == SERVICE:
            return _source_ranges(inventory, result, hc, cluster, hops)
    except NotExpressible as exc:
        return Refusal(str(exc))
    if layer == PERIMETER:
        return _perimeter_rules(perimeter, result, cluster, hops)
    return Refusal(_REFUSED.get(layer, f"the {layer} layer blocks it, which hcpscan does not "
                                       "change"))


_REFUSED = {
    EGRESS_FIREWALL: "an EgressFirewall blocks it: the namespace's EgressFirewall is the "
                     "cluster admin's egress control (one per namespace, often generated by "
                     "policy), so hcpscan does not widen it; add an Allow rule for the missing "
                     "destinations before its Deny rules",
    BASELINE_ADMIN_NETWORK_POLICY: "the BaselineAdminNetworkPolicy denies it and no "
                                   "NetworkPolicy isolates the pods: a new NetworkPolicy would "
                                   "isolate them and deny every other connection; allow it in "
                                   "the BaselineAdminNetworkPolicy or with a NetworkPolicy that "
                                   "lists everything the pods need",
    PRIMARY_NETWORK: "the pods are on different primary networks (UserDefinedNetworks): "
                     "only a change of network opens it",
    MULTI_NETWORK_POLICY: "a MultiNetworkPolicy of a secondary network blocks it; the "
                          "required flows use the pod network",
}


_ENTRY = re.compile(r"for (?P<protocol>TCP|UDP|SCTP)/(?P<port>\d+)(?:-(?P<end>\d+))?$")


def _perimeter_rules(perimeter: Perimeter | None, result: FlowResult, cluster: str,
                     hops: list[tuple[PathAnswer, Hop | None]]) -> Opening | Refusal:
    """Allow rules put first in the perimeter file (its rules are read top to bottom), one
    per entry port, admitting exactly the worker ranges kept out there. The file describes
    the firewall or security group in front of the nodes: the summary says to make the same
    change there (hcpscan never changes a firewall)."""
    if isinstance(perimeter, PerimeterStack):  # only the layers that blocked, and the file
        named = [hop.summary for _, hop in hops if hop is not None]
        perimeter = stacked(*(layer for layer in perimeter.layers if layer.fronts is None
                              or any(layer.name in text for text in named))) or perimeter
    by_port: dict[tuple[str, int, int | None], list[str]] = {}
    for answer, hop in hops:
        found = _ENTRY.search(hop.summary) if hop is not None else None
        if found is None or not answer.origin.startswith("range "):
            return Refusal("the perimeter (--firewall) blocks it at a port hcpscan cannot name; "
                           "admit the worker ranges there before the rule that denies them")
        end = int(found["end"]) if found["end"] else None
        key = (found["protocol"], int(found["port"]), end)
        source = answer.origin.removeprefix("range ")
        if source not in by_port.setdefault(key, []):
            by_port[key].append(source)
    shown = "; ".join(f"{', '.join(s)} on {p}/{n}" + (f"-{e}" if e else "")
                      for (p, n, e), s in by_port.items())
    if (groups := _groups_keeping_out(perimeter, by_port, [h for _, h in hops if h])):
        return Refusal(groups)
    rules = [{"name": _name(f"{result.flow.id}-{protocol}-{port}"), "action": "allow",
              "sources": sources, "ports": [_perimeter_port(protocol, port, end)]}
             for (protocol, port, end), sources in by_port.items()]
    return perimeter_first(perimeter, cluster, rules, f"admit {shown}")


def _perimeter_port(protocol: str, port: int, end: int | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"protocol": protocol, "port": port}
    if end is not None and end != port:
        entry["endPort"] = end
    return entry


def perimeter_first(perimeter: Perimeter | None, cluster: str, rules: list[dict[str, Any]],
                    what: str) -> Opening | Refusal:
    """``rules`` put first in the perimeter file the scan read (``--firewall``): its rules
    are read top to bottom, so nothing after them shadows them. The file describes the
    firewall or security group in front of the nodes; the summary says to make the same
    change there."""
    perimeter = _perimeter_file(perimeter)
    if perimeter is None or not perimeter.path or not Path(perimeter.path).is_file():
        return Refusal(f"the perimeter (--firewall) decides it; {what} in the firewall or "
                       "security group in front of the nodes, before the rules that decide "
                       "otherwise (and describe it to hcpscan with --firewall)")
    try:
        body = yaml.safe_load(Path(perimeter.path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return Refusal(f"the perimeter file {perimeter.path} cannot be read again")
    if not isinstance(body, dict):
        return Refusal(f"the perimeter file {perimeter.path} is not a mapping")
    path = perimeter.path
    obj = K8sObject(cluster, str(body.get("apiVersion") or "hcpscan.io/v1"), "Perimeter", "",
                    Path(path).name, body, SourceLocation(path=path, line=1, file=path))
    return Opening(obj, f"{what} first in {perimeter.name} ({path}); make the same change in "
                        "the firewall or security group it describes",
                   prepend=((("rules",), tuple(rules)),))


def _layers(perimeter: Perimeter | None) -> tuple[Perimeter, ...]:
    if perimeter is None:
        return ()
    return perimeter.layers if isinstance(perimeter, PerimeterStack) else (perimeter,)


def _perimeter_file(perimeter: Perimeter | None) -> Perimeter | None:
    """The ``--firewall`` file among the perimeters the scan stacked (it stands in front of
    every way in: ``fronts`` None). The security groups read from manifests (an AWSCluster's
    status, an ACK SecurityGroup) are never that file: their rules are not hcpscan's
    perimeter format, and a rule written into the manifest would not be read as one."""
    return next((p for p in _layers(perimeter) if p.fronts is None and p.path), None)


def _groups_keeping_out(perimeter: Perimeter | None,
                        by_port: dict[tuple[str, int, int | None], list[str]],
                        hops: list[Hop]) -> str:
    """Why not, when security groups read from manifests keep a worker range out on its
    entry port: traffic must pass every perimeter, and a rule put first in the perimeter
    file opens only the file. Empty when every such group admits them."""
    said = " ".join(h.summary for h in hops)
    out = []
    for layer in _layers(perimeter):
        if layer.fronts is None or layer.name not in said:
            continue  # the perimeter file, or groups not in front of this way in
        for (protocol, port, end), sources in by_port.items():
            wanted = ConnectionSet.of(normalise_protocol(protocol), PortSet.of((port, end or port)))
            shut = [s for s in sources
                    if layer.allowed(IPSpace.from_cidrs([s])).intersection(wanted) != wanted]
            if shut:
                where = f"{layer.path}:{layer.default_line}" if layer.default_line else layer.path
                out.append(f"{', '.join(shut)} on {protocol}/{port}" + (f"-{end}" if end else "")
                           + f" by {layer.name}" + (f" ({where})" if where else ""))
    if not out:
        return ""
    return ("security groups keep the workers out: " + "; ".join(out) + ". hcpscan does not "
            "write security-group rules: add an ingress rule admitting exactly these ranges "
            "on these ports to the group (in the cloud, or where it is declared: the ACK or "
            "Crossplane SecurityGroup's ingress rules, a CAPA cluster's "
            "spec.network.additionalNodeIngressRules — its status is the controller's "
            "output), then scan again")


_ENTRY_TEXT = re.compile(r"^(?P<port>\d+)(?:-(?P<end>\d+))?$")


def perimeter_narrowing(perimeter: Perimeter | None, cluster: str, name: str,
                        entries: list[tuple[str, str]], allowed: IPSpace) -> Opening | Refusal:
    """A NodePort open beyond ``allowed``: first in the perimeter file, allow ``allowed``
    and deny every other address on exactly the entry ports (``entries``: protocol and
    port or range text), so only the workers reach them there."""
    cidrs = allowed.cidrs()
    if not cidrs or not entries:
        return Refusal("no allowed range or entry port to write")
    rules: list[dict[str, Any]] = []
    for protocol, text in dict.fromkeys(entries):
        found = _ENTRY_TEXT.match(text)
        if found is None:
            return Refusal(f"the entry port ({text}) is not known: set it (nodePort.port) so the "
                           "perimeter rule can name it")
        port = int(found["port"])
        end = int(found["end"]) if found["end"] else None
        if end is not None and end != port:
            return Refusal(f"the entry port is a node port the API server allocates ({text}); "
                           "set nodePort.port so the perimeter rule can name one port")
        ports = [_perimeter_port(protocol.upper(), port, end)]
        base = _name(f"{name}-{protocol}-{port}")
        rules.append({"name": _name(f"{base}-workers"), "action": "allow", "sources": cidrs,
                      "ports": ports})
        rules.append({"name": _name(f"{base}-others"), "action": "deny",
                      "sources": ["0.0.0.0/0", "::/0"], "ports": ports})
    shown = ", ".join(f"{p}/{t}" for p, t in dict.fromkeys(entries))
    return perimeter_first(perimeter, cluster, rules,
                           f"admit only {', '.join(cidrs)} to {shown}")


# -- NetworkPolicy ------------------------------------------------------------------------


def _direction(result: FlowResult) -> str:
    return INGRESS if result.flow.check in ("ingress", "operator-ingress") else EGRESS


def _network_policy(inventory: Inventory, result: FlowResult, hc: HostedCluster | None,
                    cluster: str, hops: list[tuple[PathAnswer, Hop | None]]) -> Opening | Refusal:
    workload = result.workload
    if workload is None:
        return Refusal("the flow names no workload to write a policy for")
    obj = inventory.get(workload.kind, workload.namespace, workload.name, cluster)
    if obj is None:
        return Refusal(f"{workload.ref} is not in the input")
    shared = result.flow.check == "worker-egress"  # every KubeVirt worker of the cluster
    selector = {"matchLabels": dict(VIRT_LAUNCHER)} if shared else pod_selector(obj)
    if selector is None:
        return Refusal(f"{workload.ref} states no pod selector to write the policy for")
    direction = _direction(result)
    by_peer: dict[str, tuple[list[dict[str, Any]] | None, ConnectionSet, str]] = {}
    for answer, _hop in hops:
        wanted = _wanted(inventory, result, hc, cluster, answer)
        if isinstance(wanted, Refusal):
            return wanted
        for peers, shown, ports in wanted:
            for protocol, port in ports:
                key = repr(peers)
                old = by_peer.get(key)
                conn = ConnectionSet.port(protocol, port)
                by_peer[key] = (peers, conn if old is None else old[1].union(conn), shown)
    rules = [allow_rule(direction, peers, conns) for peers, conns, _ in by_peer.values()]
    base = "kubevirt-workers" if shared else workload.name
    name = _free_name(inventory, "NetworkPolicy", workload.namespace, cluster,
                      f"{base}-allow-{result.flow.id}")
    body = allowing_policy(name, workload.namespace, selector, direction, None,
                           ConnectionSet.all(), pods_isolated=True)
    body["spec"][direction] = rules
    target = _object_at(inventory, hops[0][1]) if hops[0][1] is not None else None
    if target is None or target.kind != "NetworkPolicy" or target.namespace != workload.namespace:
        target = obj
    opened = "; ".join(f"{c} {'from' if direction == INGRESS else 'to'} {shown}"
                       for _, c, shown in by_peer.values())
    who = f"the KubeVirt workers of {workload.namespace}" if shared else workload.ref
    node_ports = sorted({h.target for a, _ in hops for h in a.hops
                         if h.layer == SERVICE and _node_snat(inventory, cluster, h.target)})
    caveat = (f" (through {', '.join(node_ports)}: where the node SNATs the workers' "
              "addresses, admit the nodes' addresses instead)"
              if node_ports and direction == INGRESS else "")
    return Opening(target, f"add NetworkPolicy {workload.namespace}/{name} allowing {who} "
                           f"{direction} {opened} only{caveat}", documents=(body,))


def admitting_range(inventory: Inventory, workload_ref: tuple[str, str, str], cidr: str,
                    protocol: str, port: int, cluster: str, blocked_at: list[Hop],
                    ways: list[str]) -> Opening | Refusal:
    """A worker range the NetworkPolicies isolating a workload's pods keep out of one port
    (HCP003: the API server's): a new NetworkPolicy for exactly those pods admitting exactly
    ``cidr`` on ``protocol``/``port``, beside the blocking policy (``blocked_at``: the
    blocking hops, every one a NetworkPolicy's)."""
    kind, namespace, name = workload_ref
    obj = inventory.get_namespaced(kind, namespace, name, cluster)
    if obj is None:
        return Refusal(f"{namespace}/{name}[{kind}] is not in the input")
    selector = pod_selector(obj)
    if selector is None:
        return Refusal(f"{obj.ref} states no pod selector to write the policy for")
    policy = _free_name(inventory, "NetworkPolicy", namespace, cluster,
                        f"{name}-allow-workers-{protocol}-{port}")
    conns = ConnectionSet.port(protocol, port)
    try:
        body = allowing_policy(policy, namespace, selector, INGRESS,
                               [{"ipBlock": {"cidr": cidr}}], conns, pods_isolated=True)
    except NotExpressible as exc:
        return Refusal(str(exc))
    targets = [o for o in (_object_at(inventory, h) for h in blocked_at) if o is not None]
    target = next((o for o in targets if o.kind == "NetworkPolicy" and namespace_of(o) == namespace),
                  obj)
    snat = sorted({w for w in ways if _node_snat(inventory, cluster, w)})
    caveat = (f" (through {', '.join(snat)}: where the node SNATs the workers' addresses, "
              "admit the nodes' addresses instead)" if snat else "")
    return Opening(target, f"add NetworkPolicy {namespace}/{policy} allowing "
                           f"{namespace}/{name}[{kind}] ingress {conns} from {cidr} only{caveat}",
                   documents=(body,))


def _node_snat(inventory: Inventory, cluster: str, way: str) -> bool:
    """Whether traffic taking ``way`` may reach the pods from a node's address: a NodePort,
    and a LoadBalancer that forwards to node ports with externalTrafficPolicy Cluster (the
    default: kube-proxy masquerades it), as HyperShift's own ``kas`` and ``nodeport-*``
    policies assume by admitting every source."""
    if way.startswith("NodePort Service"):
        return True
    found = _VIA.match(way)
    if found is None or found["type"] != "LoadBalancer":
        return False
    svc = inventory.get("Service", found["ns"], found["name"], cluster)
    spec = svc.body.get("spec") if svc is not None else None
    return not isinstance(spec, dict) or spec.get("externalTrafficPolicy") != "Local"


# The port each management-cluster DNS's pods listen on (required.dns_pods judges the same)
_DNS_POD_PORT = {"openshift-dns": 5353, "kube-system": 53}


def _wanted(inventory: Inventory, result: FlowResult, hc: HostedCluster | None, cluster: str,
            answer: PathAnswer) -> list[tuple[list[dict[str, Any]], str, list[tuple[str, int]]]] | Refusal:
    """The peers of one missing connection, how to name them, and the connections to open
    to them. When the input does not say which DNS the management cluster runs, each DNS's
    pods get their own port (OpenShift's 5353, kube-dns's 53), not every port to both."""
    if answer.target == DNS and _direction(result) == EGRESS:
        ports, _note, pods = dns_pods(inventory, cluster)
        out = []
        for pod in pods:
            own = ports if len(pods) == 1 or pod.namespace not in _DNS_POD_PORT \
                else (_DNS_POD_PORT[pod.namespace],)
            peer = {"namespaceSelector": {"matchLabels": {NAME_LABEL: pod.namespace}},
                    "podSelector": {"matchLabels": dict(pod.labels)} if pod.labels else {}}
            out.append(([peer], f"the DNS pods in {pod.namespace}",
                        [(p, port) for port in own for p in ("TCP", "UDP")]))
        return out
    found = _peers(inventory, result, hc, cluster, answer)
    if isinstance(found, Refusal):
        return found
    peers, shown = found
    return [(peers, shown, _ports(inventory, cluster, answer))]


def _far_side(result: FlowResult, hop: Hop) -> bool:
    """Whether a policy hop decides the other end's side of the connection: the egress of
    the pods a flow into the subject comes from (an egress default-deny in the operators'
    namespace), or the ingress of those a flow out of it goes to. A policy for the subject's
    pods opens neither, and one in the other direction could isolate them."""
    if hop.layer not in (NETWORK_POLICY, ADMIN_NETWORK_POLICY):
        return False
    other = EGRESS if _direction(result) == INGRESS else INGRESS
    return hop.summary.startswith(f"{other} ")


def _peer_policy(inventory: Inventory, result: FlowResult, cluster: str,
                 hops: list[tuple[PathAnswer, Hop | None]]) -> Opening | Refusal:
    """The other end's side blocks (its pods' egress, for a flow into the subject): a new
    NetworkPolicy for exactly the other end's pods allowing exactly the missing connections
    to/from the subject's pods, beside the policy that isolates them."""
    workload = result.workload
    subject = (inventory.get(workload.kind, workload.namespace, workload.name, cluster)
               if workload is not None else None)
    selector = pod_selector(subject) if subject is not None else None
    if workload is None or selector is None or result.flow.check == "worker-egress":
        return Refusal("the other end of the flow blocks it and the subject's pods have no "
                       "selector to name there: allow it where the blocking hop names")
    direction = _direction(result)
    other = EGRESS if direction == INGRESS else INGRESS
    subject_peer = [{"namespaceSelector": {"matchLabels": {NAME_LABEL: workload.namespace}},
                     "podSelector": selector}]
    by_end: dict[str, tuple[K8sObject, ConnectionSet, Hop | None]] = {}
    for answer, hop in hops:
        ref = answer.origin if direction == INGRESS else answer.target
        end = _workload_object(inventory, ref, cluster)
        if end is None or pod_selector(end) is None:
            return Refusal(f"{ref} blocks it on its side and is not a workload of the input "
                           "with a pod selector: allow it where the blocking hop names")
        conn = ConnectionSet.port(answer.protocol, answer.port)
        old = by_end.get(ref)
        by_end[ref] = (end, conn if old is None else old[1].union(conn), hop)
    bodies, said = [], []
    target: K8sObject | None = None
    for ref, (end, conns, hop) in by_end.items():
        # one per subject namespace: the operators serve every hosted cluster's, and one
        # name for two would be one object once applied
        to = "" if end.namespace == workload.namespace else f"-{workload.namespace}"
        name = _free_name(inventory, "NetworkPolicy", end.namespace, cluster,
                          f"{end.name}-allow-{result.flow.id}{to}")
        bodies.append(allowing_policy(name, end.namespace, pod_selector(end) or {}, other,
                                      subject_peer, conns, pods_isolated=True))
        said.append(f"NetworkPolicy {end.namespace}/{name} allowing {ref} {other} {conns} "
                    f"{'to' if other == EGRESS else 'from'} {workload.ref} only")
        if target is None:
            at = _object_at(inventory, hop)
            target = at if at is not None and at.kind == "NetworkPolicy" and \
                at.namespace == end.namespace else end
    if target is None:
        return Refusal("nothing to open")
    return Opening(target, "add " + "; ".join(said), documents=tuple(bodies))


def _ports(inventory: Inventory, cluster: str, answer: PathAnswer) -> list[tuple[str, int]]:
    """The connections to open for one missing answer: DNS on both protocols at the DNS
    pods' port (a policy that opened one would be HCP004's finding; the other protocol is
    open already or missing too), else the answer's own."""
    if answer.target == DNS:
        ports, _note, _pods = dns_pods(inventory, cluster)
        return [(p, port) for port in ports for p in ("TCP", "UDP")]
    return [(answer.protocol, answer.port)]


def _peers(inventory: Inventory, result: FlowResult, hc: HostedCluster | None, cluster: str,
           answer: PathAnswer) -> tuple[list[dict[str, Any]], str] | Refusal:
    """The NetworkPolicy peers of one missing connection, and how to name them."""
    if _direction(result) == INGRESS:
        if answer.origin.startswith("range "):
            cidr = answer.origin.removeprefix("range ")
            return [{"ipBlock": {"cidr": cidr}}], cidr
        source = _workload_object(inventory, answer.origin, cluster)
        if source is None:
            return Refusal(f"{answer.origin} is not in the input")
        selector = pod_selector(source)
        if selector is None:
            return Refusal(f"{answer.origin} states no pod selector")
        return [{"namespaceSelector": {"matchLabels": {NAME_LABEL: source.namespace}},
                 "podSelector": selector}], answer.origin
    target = answer.target
    if target == DNS:
        _ports_, _note, pods = dns_pods(inventory, cluster)
        return ([{"namespaceSelector": {"matchLabels": {NAME_LABEL: p.namespace}},
                  "podSelector": {"matchLabels": dict(p.labels)} if p.labels else {}}
                 for p in pods], "the DNS pods in " + " and ".join(p.namespace for p in pods))
    if target == OUTSIDE:
        # the flow's destination is any outside address on the port (its endpoints are
        # not in the input): the check passes for any, so one is what it needs
        return [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "any outside address"
    space: IPSpace | None
    if target == PROXY or target.startswith(PROXY + " "):  # "proxy host:port" since the proxy is a node
        found = proxy_endpoint(hc.proxy) if hc is not None else None
        if found is None:
            return Refusal("the HostedCluster names no usable proxy URL")
        space = address_space(found[0])
        if space is None:
            return Refusal(f"the proxy is named by host name {found[0]}, and a NetworkPolicy "
                           "names addresses: add an egress rule to its address by hand")
    elif target == MANAGEMENT_KAS:
        space = management_kas_endpoints(inventory, cluster)
        if space is None:
            return Refusal("the management API server's addresses (default/kubernetes "
                           "Endpoints) are not in the input: a policy needs them")
    elif target == HOSTED_KAS:
        space = hosted_kas(inventory, cluster, hc)[0]
    else:
        return Refusal(f"{target} is not a destination hcpscan writes policies for")
    return [{"ipBlock": {"cidr": c}} for c in space.cidrs()], str(space)


def pod_selector(obj: K8sObject) -> dict[str, Any] | None:
    """The selector of a workload's pods: a Pod's own labels, else ``spec.selector``."""
    if obj.kind == "Pod":
        return {"matchLabels": dict(obj.labels)} if obj.labels else None
    selector = obj.get("spec.selector")
    if isinstance(selector, dict) and selector:
        if "matchLabels" in selector or "matchExpressions" in selector:
            return selector
        return {"matchLabels": selector}  # a ReplicationController's plain map
    return None


def _workload_object(inventory: Inventory, ref: str, cluster: str) -> K8sObject | None:
    found = _REF.match(ref)
    if found is None:
        return None
    return inventory.get(found["kind"], found["ns"], found["name"], cluster)


def _free_name(inventory: Inventory, kind: str, namespace: str, cluster: str, text: str) -> str:
    """``_name(text)``, or with a number when the input already holds a ``kind`` of that
    name there (a policy written by an earlier fix that no longer opens the flow): the new
    document must not replace an object nobody asked to change."""
    name = _name(text)
    for n in range(2, 100):
        if inventory.get(kind, namespace, name, cluster) is None:
            break
        name = _name(f"{text}-{n}")
    return name


def _name(text: str) -> str:
    """An object name the API server takes (a flow a user defines may have any id); one
    too long keeps its start and ends in a digest of the whole, so two long names that
    differ only at the end (the namespace, a number) stay apart."""
    name = re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-.")
    if len(name) <= 63:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:54].rstrip('-.')}-{digest}"


# -- AdminNetworkPolicy -------------------------------------------------------------------


def _admin_policy(inventory: Inventory, result: FlowResult, hc: HostedCluster | None,
                  cluster: str, hops: list[tuple[PathAnswer, Hop | None]]) -> Opening | Refusal:
    denying = {id(o): o for o in (_object_at(inventory, h) for _, h in hops if h is not None)
               if o is not None}
    if not denying:
        return Refusal("the blocking hop does not say which AdminNetworkPolicy denies it: add "
                       "an Allow rule for the missing connections before its Deny rule")
    if len(denying) > 1:
        return Refusal("several AdminNetworkPolicies deny the missing connections: allow them "
                       "before each")
    anp = next(iter(denying.values()))
    if anp.kind != "AdminNetworkPolicy":
        return Refusal(f"the hop names {anp.ref}, not an AdminNetworkPolicy")
    priority = anp.get("spec.priority")
    if isinstance(priority, bool) or not isinstance(priority, int):
        return Refusal(f"{anp.ref} has no integer priority")
    workload = result.workload
    if priority - 1 < 0:
        return Refusal(f"{anp.ref} has priority {priority}: an Allow rule must come before it, "
                       f"and priority {priority - 1} is below 0; add the Allow rule to that "
                       "policy before its Deny rule")
    obj = (inventory.get(workload.kind, workload.namespace, workload.name, cluster)
           if workload is not None else None)
    selector = pod_selector(obj) if obj is not None else None
    if workload is None or selector is None:
        return Refusal("the flow's subject workload states no pod selector")
    direction = _direction(result)
    subject = {"pods": {"namespaceSelector": {"matchLabels": {NAME_LABEL: workload.namespace}},
                        "podSelector": selector}}
    by_peer: dict[str, tuple[list[dict[str, Any]], ConnectionSet, str]] = {}
    for answer, _hop in hops:
        asked = _wanted(inventory, result, hc, cluster, answer)
        if isinstance(asked, Refusal):
            return asked
        for peers, shown, ports in asked:
            anp_peers = [_anp_peer(p, direction) for p in peers]
            if any(p is None for p in anp_peers):
                return Refusal("an AdminNetworkPolicy names addresses (networks) on egress only: "
                               "the workers' ranges cannot be let in by one; allow them before "
                               f"the Deny of {anp.name}")
            for protocol, port in ports:
                conn = ConnectionSet.port(protocol, port)
                key = repr(peers)
                old = by_peer.get(key)
                by_peer[key] = ([p for p in anp_peers if p is not None],
                                conn if old is None else old[1].union(conn), shown)
    rules = []
    for i, (peers, conns, _shown) in enumerate(by_peer.values()):
        rule: dict[str, Any] = {"name": _name(f"allow-{result.flow.id}" + (f"-{i + 1}" if i else "")),
                                "action": "Allow",
                                "from" if direction == INGRESS else "to": peers}
        rule["ports"] = [_anp_port(e) for e in port_entries(conns)]
        rules.append(rule)
    # cluster-scoped: one per HCP namespace the same Deny shuts (a second document of the
    # same name would replace the first when applied, leaving that namespace shut)
    name = _free_name(inventory, "AdminNetworkPolicy", "", cluster,
                      f"allow-{result.flow.id}-{workload.namespace}")
    wanted = _free_priority(inventory, anp, priority, name)
    if wanted is None:
        return Refusal(f"{anp.ref} has priority {priority}: an Allow rule must come before it, "
                       f"and every priority from 0 to {priority - 1} is taken (by the input's "
                       "AdminNetworkPolicies or the other Allows this fix writes before it; "
                       "two at one priority have no defined order); add the Allow rule to "
                       "that policy before its Deny rule")
    body = {"apiVersion": ANP_API, "kind": "AdminNetworkPolicy", "metadata": {"name": name},
            "spec": {"priority": wanted, "subject": subject, direction: rules}}
    opened = "; ".join(f"{c} {'from' if direction == INGRESS else 'to'} {shown}"
                       for _, c, shown in by_peer.values())
    return Opening(anp, f"add AdminNetworkPolicy {name} (priority {wanted}, before {anp.name}'s "
                        f"{priority}) allowing {workload.ref} {direction} {opened} only",
                   documents=(body,))


def _free_priority(inventory: Inventory, anp: K8sObject, priority: int, name: str) -> int | None:
    """A priority before ``priority`` (the Deny's) that no AdminNetworkPolicy of the input
    holds and no other new Allow of this scan was given, the nearest first; the same new
    policy (by name) keeps the one it got. Any of them precedes the Deny for the one
    connection the Allow names: none before the Deny decides it (the Deny does)."""
    given: dict[tuple[str, str], int] = inventory.derived("anp-allow-priorities", lambda _: {})
    key = (anp.cluster, name)
    if key in given:
        return given[key]
    taken = {o.get("spec.priority") for o in inventory.of_kind("AdminNetworkPolicy")
             if o.cluster == anp.cluster}
    taken |= {p for (c, _n), p in given.items() if c == anp.cluster}
    for wanted in range(priority - 1, -1, -1):
        if wanted not in taken:
            given[key] = wanted
            return wanted
    return None


def _anp_peer(peer: dict[str, Any], direction: str) -> dict[str, Any] | None:
    if "ipBlock" in peer:
        return {"networks": [peer["ipBlock"]["cidr"]]} if direction == EGRESS else None
    return {"pods": {"namespaceSelector": peer.get("namespaceSelector", {}),
                     "podSelector": peer.get("podSelector", {})}}


def _anp_port(entry: dict[str, Any]) -> dict[str, Any]:
    if "endPort" in entry:
        return {"portRange": {"protocol": entry["protocol"], "start": entry["port"],
                              "end": entry["endPort"]}}
    return {"portNumber": {"protocol": entry["protocol"], "port": entry["port"]}}


# -- source ranges ------------------------------------------------------------------------


def _source_ranges(inventory: Inventory, result: FlowResult, hc: HostedCluster | None,
                   cluster: str, hops: list[tuple[PathAnswer, Hop | None]]) -> Opening | Refusal:
    """Widen the source ranges that keep the workers out by exactly the missing ranges."""
    missing = list(dict.fromkeys(a.origin.removeprefix("range ") for a, _ in hops
                                 if a.origin.startswith("range ")))
    if not missing or any(not a.origin.startswith("range ") for a, _ in hops):
        return Refusal("the blocked sources are not address ranges")
    objects = {id(o): o for o in (_object_at(inventory, h) for _, h in hops if h is not None)
               if o is not None}
    if len(objects) != 1:
        return Refusal("the blocking hop names no one object in the input")
    obj = next(iter(objects.values()))
    if hc is not None and obj is hc.obj:  # the HostedCluster (or the copy standing in for it)
        return _declared(inventory, result, hc, missing)
    if obj.kind == "Service":
        if obj.get("spec.type") != "LoadBalancer":
            return Refusal(f"{obj.ref} is a {obj.get('spec.type')} Service; its source ranges "
                           "are not what blocks")
        if _reconciled(obj, hc):
            if hc is not None and _from_allowed_cidrs(obj, hc):
                # the input holds the operator's render: a changed HostedCluster would leave
                # it trailing until the next render, so the change is named, not made here
                return Refusal(f"the control-plane operator renders {obj.ref}'s "
                               "loadBalancerSourceRanges from spec.networking.apiServer."
                               f"allowedCIDRBlocks of {hc.source_label} (an edit of the Service is "
                               f"undone): add {', '.join(missing)} there, in the HostedCluster's "
                               "source (from Git, hcpscan fix makes that change)")
            # every other Service of the HCP namespace (konnectivity-server, ignition,
            # oauth): the control-plane operator sets its type, ports and selector and
            # keeps the rest (kas/service.go ReconcileKonnectivityServerService); no
            # HostedCluster field carries source ranges for it
            shown = ", ".join(missing)
            # where the ranges that keep the workers out are written: adding to an empty
            # field beside the annotation would replace the annotation's ranges
            home = (f"its annotation {SOURCE_RANGES_ANNOTATION} (the field is empty, so the "
                    "annotation bounds the load balancer)"
                    if load_balancer_source_ranges(obj).from_annotation
                    else "spec.loadBalancerSourceRanges")
            if hc is None or obj.namespace != hc.control_plane_namespace:
                return Refusal(f"{obj.ref} is owned by {_owner(obj)}, whose controller may "
                               "reconcile it (an edit of the input's copy may be undone): add "
                               f"{shown} to {home} where that owner takes them from, or in the "
                               "cloud firewall in front of it")
            return Refusal(
                f"{obj.ref} is reconciled by the HyperShift operator (HCP namespace"
                + (", owner " + _owner(obj) if _owner(obj) else "") + "), which sets no "
                "loadBalancerSourceRanges on it and reads none from the HostedCluster: the "
                "ranges were set on the Service itself (by hand or another controller), and "
                "the operator keeps them. The input is the operator's object, so hcpscan "
                f"does not write it: add {shown} to {home} of the live "
                f"Service (`kubectl -n {obj.namespace} edit service {obj.name}`) where it was "
                "set, or admit them in the cloud firewall in front of it; a re-created "
                "Service comes back without any ranges")
        ranges = load_balancer_source_ranges(obj)
        if ranges.malformed:
            return Refusal(f"{obj.ref}: {ranges.malformed_text()}; correct it first")
        if ranges.from_annotation:  # the field is empty: the annotation is what bounds
            new = tuple(c for c in missing if c not in ranges.cidrs)
            return Opening(obj, f"add {', '.join(new)} to {obj.ref} annotation "
                                f"{SOURCE_RANGES_ANNOTATION} (the field is empty, so the "
                                "annotation bounds the load balancer)",
                           entries=((_LB_SOURCE_ANNOTATION, new),))
        return _widen(obj, _LB_SOURCE_FIELDS, missing, f"{obj.ref} spec.loadBalancerSourceRanges")
    if obj.kind == "IngressController":
        return _ingress_controller(obj, missing)
    return Refusal(f"{obj.ref} ({obj.kind}) bounds the sources, which hcpscan does not widen")


def _declared(inventory: Inventory, result: FlowResult, hc: HostedCluster,
              missing: list[str]) -> Opening | Refusal:
    """A flow judged from the HostedCluster alone: its declared way keeps the workers out."""
    service = next((t.service for t in result.flow.targets if t.service), None)
    if service is None:
        return Refusal("the flow names no published service")
    way = declared_way(inventory, hc, service, hcp_route_router(inventory, hc))
    if not isinstance(way, DeclaredWay):
        return Refusal(f"{service} has no declared way in to widen")
    if way.kind == "LoadBalancer" and way.field == "spec.networking.apiServer.allowedCIDRBlocks":
        return _widen(hc.obj, ("spec", "networking", "apiServer", "allowedCIDRBlocks"), missing,
                      f"{hc.obj.ref} spec.networking.apiServer.allowedCIDRBlocks")
    if way.kind == "Route":
        controller = hcp_route_router(inventory, hc) or inventory.get(
            "IngressController", "openshift-ingress-operator", "default", hc.obj.cluster)
        if controller is not None:
            return _ingress_controller(controller, missing)
    return Refusal(f"{service} is published as {way.kind}, which has no source range to widen")


def _ingress_controller(controller: K8sObject, missing: list[str]) -> Opening | Refusal:
    for root in ("spec", "status"):
        strategy = controller.get(f"{root}.endpointPublishingStrategy")
        if isinstance(strategy, dict):
            break
    else:
        return Refusal(f"{controller.ref} states no endpointPublishingStrategy")
    if root != "spec":
        return Refusal(f"{controller.ref}'s publishing is in its status (defaulted by the "
                       "operator): set spec.endpointPublishingStrategy with allowedSourceRanges "
                       f"that add {', '.join(missing)}")
    lb = strategy.get("loadBalancer")
    if strategy.get("type") != "LoadBalancerService" or not isinstance(lb, dict) \
            or not lb.get("allowedSourceRanges"):
        return Refusal(f"{controller.ref} is not bounded by allowedSourceRanges")
    return _widen(controller, ("spec", "endpointPublishingStrategy", "loadBalancer",
                               "allowedSourceRanges"), missing,
                  f"{controller.ref} allowedSourceRanges (the router also admits them for its "
                  "other Routes)")


def _widen(obj: K8sObject, steps: tuple[str, ...], missing: list[str], where: str
           ) -> Opening | Refusal:
    present = obj.get(steps)
    if present is not None and not isinstance(present, list):
        return Refusal(f"{where} is not a list")
    if not present:
        return Refusal(f"{where} is empty (every address): something else keeps the workers out")
    new = tuple(c for c in missing if c not in present)
    return Opening(obj, f"add {', '.join(new)} to {where}", append=((steps, new),))


def _reconciled(service: K8sObject, hc: HostedCluster | None) -> bool:
    if _owner(service):
        return True
    return hc is not None and service.namespace == hc.control_plane_namespace


def _owner(obj: K8sObject) -> str:
    owners = obj.get("metadata.ownerReferences")
    if isinstance(owners, list):
        for o in owners:
            if isinstance(o, dict) and o.get("kind"):
                return f"{o.get('kind')} {o.get('name', '')}".strip()
    return ""


def _from_allowed_cidrs(service: K8sObject, hc: HostedCluster) -> bool:
    """The LoadBalancer Services whose source ranges the control-plane operator renders
    from ``allowedCIDRBlocks``: the API server's and the hosted control plane's own router
    (HyperShift control-plane-operator kas/service.go, ingress/router.go); Konnectivity's
    and Ignition's get none."""
    return service.name in ("kube-apiserver", "router") and service.namespace == \
        hc.control_plane_namespace


# -- where a hop is written ---------------------------------------------------------------


_NAMED_BY = {NETWORK_POLICY: "NetworkPolicy", ADMIN_NETWORK_POLICY: "AdminNetworkPolicy"}


def _object_at(inventory: Inventory, hop: Hop | None) -> K8sObject | None:
    """The object whose document holds the hop's file:line (the last that starts at or
    before it). Objects built by kustomize share their kustomization's place: a policy
    is then the one the hop's text names."""
    if hop is None or not hop.path:
        return None
    best: K8sObject | None = None
    for obj in _in_file(inventory, hop.path):
        if obj.source.doc_index == BUILT_DOCUMENT:
            return _named_in(inventory, hop)
        if hop.line and obj.source.line <= hop.line and \
                (best is None or obj.source.line > best.source.line):
            best = obj
    return best


def _named_in(inventory: Inventory, hop: Hop) -> K8sObject | None:
    kind = _NAMED_BY.get(hop.layer)
    if kind is None:
        return None
    for obj in inventory.of_kind(kind):
        named = f"{obj.namespace}/{obj.name}" if obj.namespace else f"{kind} {obj.name} "
        if named in hop.summary:
            return obj
    return None


def _in_file(inventory: Inventory, path: str) -> Iterable[K8sObject]:
    index: dict[str, list[K8sObject]] = inventory.derived("objects-by-path", _by_path)
    return index.get(path, [])


def _by_path(inventory: Inventory) -> dict[str, list[K8sObject]]:
    out: dict[str, list[K8sObject]] = {}
    for obj in inventory:
        if obj.source.embedded_in is None:
            out.setdefault(obj.source.path, []).append(obj)
    return out


# -- narrowing an exposure (HCP001, HCP002) -------------------------------------------------

# Services HyperShift's operators render in an HCP namespace: their source ranges are
# reconciled, so an edit of them is undone
RENDERED_SERVICES = frozenset({
    "ignition-server", "ignition-server-proxy", "konnectivity-server", "kube-apiserver",
    "kube-apiserver-private", "oauth-openshift", "router", "private-router",
    "openshift-apiserver", "openshift-oauth-apiserver"})
_VIA = re.compile(r"^(?:(?P<type>NodePort|LoadBalancer) Service|Route|Ingress) "
                  r"(?P<ns>[^/]+)/(?P<name>.+)$")


def narrowing(inventory: Inventory, hc: HostedCluster | None, vias: list[str], cluster: str,
              allowed: IPSpace, workers_only: frozenset[str]) -> Opening | None:
    """The one edit that admits only ``allowed`` on every way in ``vias``, when it is safe
    and lasts: ``loadBalancerSourceRanges`` of a LoadBalancer Service nobody reconciles
    whose node ports are not allocated (else they stay open on every node), or the
    ``allowedSourceRanges`` of the one router serving a Route when that router serves
    nothing but Routes to ``workers_only`` services of the HCP namespace: not the default
    router, its selectors pinned to this HCP namespace (they would not admit another hosted
    cluster's), and no other Route of the input admitted (narrowing a shared router shuts
    every other Route's clients out). None otherwise (the caller says
    why and where to close it instead)."""
    cidrs = tuple(allowed.cidrs())
    if not cidrs:
        return None
    found: dict[int, Opening] = {}
    for via in vias:
        m = _VIA.match(via)
        if m is None or m["type"] == "NodePort" or via.startswith("Ingress "):
            return None
        if m["type"] == "LoadBalancer":
            svc = inventory.get("Service", m["ns"], m["name"], cluster)
            if svc is None or _owner(svc) or svc.name in RENDERED_SERVICES \
                    or svc.get("spec.allocateLoadBalancerNodePorts") is not False:
                return None
            found[id(svc)] = _narrow_service(svc, cidrs)
            continue
        route = inventory.get("Route", m["ns"], m["name"], cluster)
        controller = _dedicated_router(inventory, hc, route, workers_only) if route else None
        if controller is None:
            return None
        found[id(controller)] = _set_list(
            controller, ("spec", "endpointPublishingStrategy", "loadBalancer",
                         "allowedSourceRanges"), cidrs,
            f"{controller.ref} allowedSourceRanges (it serves only the workers' Routes of "
            f"{m['ns']})")
    if len(found) != 1:
        return None
    return next(iter(found.values()))


def _dedicated_router(inventory: Inventory, hc: HostedCluster | None, route: K8sObject,
                      workers_only: frozenset[str]) -> K8sObject | None:
    if hc is None or route.namespace != hc.control_plane_namespace:
        return None
    labels = inventory.namespace_labels(namespace_of(route), route.cluster)
    serving = serving_controllers(inventory, route.cluster, labels, dict(route.labels))
    if len(serving) != 1:
        return None
    controller = serving[0]
    if controller.name == "default":
        return None  # the cluster's own router: its Routes are not all in any input
    # pinned to this HCP namespace: the same labels on another hosted cluster's namespace
    # and Routes (HyperShift labels them with their namespace) must not be admitted
    other = route.namespace + "-another"
    ns_other = {k: (other if v == route.namespace else v) for k, v in labels.items()}
    ns_other[NAME_LABEL] = other
    route_other = {k: (other if v == route.namespace else v) for k, v in route.labels.items()}
    if controller in serving_controllers(inventory, route.cluster, ns_other, route_other):
        return None  # a shard for every hosted cluster: the others' workers need it too
    strategy = controller.get("spec.endpointPublishingStrategy")
    if not isinstance(strategy, dict) or strategy.get("type") != "LoadBalancerService" \
            or not isinstance(strategy.get("loadBalancer"), dict) \
            or str(strategy["loadBalancer"].get("scope") or "External") != "External":
        return None
    for admitted in inventory.of_kind("Route"):
        if admitted.cluster != route.cluster:
            continue
        ns_labels = inventory.namespace_labels(admitted.namespace, admitted.cluster)
        if controller not in serving_controllers(inventory, admitted.cluster, ns_labels,
                                                 dict(admitted.labels)):
            continue
        if admitted.namespace != route.namespace or \
                str(admitted.get("spec.to.name") or "") not in workers_only:
            return None  # it serves a Route someone other than the workers needs
    return controller


def _narrow_service(svc: K8sObject, cidrs: tuple[str, ...]) -> Opening:
    """Set a LoadBalancer Service's source ranges to ``cidrs`` where they are read from,
    leaving no annotation that says otherwise: the annotation when it alone holds them (the
    field is empty), else the field — and an annotation the field shadows is set to the
    same ranges, so the Service does not read two ways."""
    ranges = load_balancer_source_ranges(svc)
    value = ",".join(cidrs)
    if ranges.from_annotation:
        return Opening(svc, f"set {svc.ref} annotation {SOURCE_RANGES_ANNOTATION} to {value} "
                            f"(was {svc.annotations.get(SOURCE_RANGES_ANNOTATION)}; the field is "
                            "empty, so the annotation bounds the load balancer)",
                       scalars=((_LB_SOURCE_ANNOTATION, value),))
    found = _set_list(svc, _LB_SOURCE_FIELDS, cidrs, f"{svc.ref} spec.loadBalancerSourceRanges")
    if not ranges.shadowed_annotation:
        return found
    return Opening(svc, found.summary + f", and its annotation {SOURCE_RANGES_ANNOTATION} "
                   "(which the field overrides) to the same ranges", append=found.append,
                   replace=found.replace, scalars=((_LB_SOURCE_ANNOTATION, value),))


def _set_list(obj: K8sObject, steps: tuple[str, ...], cidrs: tuple[str, ...], where: str) -> Opening:
    present = obj.get(steps)
    shown = ", ".join(cidrs)
    if present is None:
        return Opening(obj, f"set {where} to {shown}", append=((steps, cidrs),))
    was = ", ".join(map(str, present)) if isinstance(present, list) else str(present)
    return Opening(obj, f"set {where} to {shown} (was {was or 'empty'})",
                   replace=((steps, cidrs),))
