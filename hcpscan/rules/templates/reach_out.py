"""The ``reach`` template's scope, out direction and listener condition (see reach.py).

Out: whether a workload's egress — NetworkPolicy of every tier, then EgressFirewall —
lets it open each port and protocol to a destination. Destinations are named in the
model (``hcpscan.model.destinations``) or given as a CIDR; what "reached" means is the
destination's: some outside address for ``outside``, every endpoint for
``management-kas`` and for a CIDR, any peer for ``dns`` (there an egress rule's ports
count whoever its peers are: the DNS pods are seldom in the input).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from hcpscan.analysis.reachability.allow import port_entries
from hcpscan.analysis.reachability.endpoints import Workload
from hcpscan.analysis.reachability.policies import is_network_policy
from hcpscan.analysis.reachability.queries import dns_pods
from hcpscan.findings.fix import AppendItems, NoFix, Remedy
from hcpscan.inventory import K8sObject
from hcpscan.model.destinations import (
    DISPLAY,
    DNS,
    MANAGEMENT_KAS,
    NAMED_DESTINATIONS,
    OUTSIDE,
    binds_loopback,
    management_kas_endpoints,
)
from hcpscan.model.hostedcluster import HOSTED_KINDS, HostedCluster
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.ports import ConnectionSet, union_all
from hcpscan.model.workloads import workload_name
from hcpscan.rules.context import Context
from hcpscan.rules.templates.base import NotEvaluable, Outcome, Violation

if TYPE_CHECKING:
    from hcpscan.analysis.reachability.graph import ReachabilityGraph

_SHOWN = 5  # workloads named in one finding before "and N more"


@dataclass(slots=True)
class Scope:
    """What one check on one subject is about: the HostedCluster (when the subject is one
    or runs in its control-plane namespace), the workloads picked per selector item, and
    the field a finding about traffic to those workloads points at."""

    subject: K8sObject
    hc: HostedCluster | None
    picked: list[tuple[dict[str, Any], list[Workload]]]

    def graph_name(self, workload: Workload) -> str:
        return workload.graph_name(self.subject.cluster)

    def field_for(self, item: dict[str, Any]) -> str:
        if self.subject.kind in HOSTED_KINDS and self.hc is not None:
            strategy = self.hc.publishing.get(item.get("service") or "")
            return strategy.field if strategy else "spec.services"
        return "spec.containers" if self.subject.kind == "Pod" else "spec.template.spec.containers"

    def ports(self, item: dict[str, Any], params: dict[str, Any]) -> list[int] | None:
        """The item's ports (its own, else the rule's); None when one is ``kas`` and no
        HostedCluster says which port its API server uses."""
        wanted = item.get("ports") or ([item["port"]] if "port" in item else params.get("ports", []))
        if "kas" in wanted and self.hc is None:
            return None
        return [self.hc.kas_port if p == "kas" and self.hc is not None else int(p) for p in wanted]


def protocols_of(params: dict[str, Any]) -> list[str]:
    return list(params.get("protocols") or [params.get("protocol", "TCP")])


@dataclass(frozen=True, slots=True)
class Destination:
    name: str  # a named destination or a CIDR
    space: IPSpace | None  # every address must be reached; None: outside (some) or dns (any peer)
    note: str = ""  # how the input fell short of the name, for the evidence


def destination(ctx: Context, to: str, cluster: str) -> Destination:
    if to == MANAGEMENT_KAS:
        endpoints = management_kas_endpoints(ctx.inventory, cluster)
        if endpoints is None:
            return Destination(OUTSIDE, None, "the management API server's endpoints "
                               "(default/kubernetes Endpoints) are not in the input: judged as "
                               "egress to any outside address")
        return Destination(MANAGEMENT_KAS, endpoints)
    if to in NAMED_DESTINATIONS:
        return Destination(to, None)
    return Destination(to, IPSpace.from_cidrs([to]))


def check_out(ctx: Context, graph: ReachabilityGraph, scope: Scope,
              params: dict[str, Any]) -> Iterable[Outcome]:
    subject = scope.subject
    if subject.kind in HOSTED_KINDS and scope.hc is not None and \
            not graph.workloads(subject.cluster, scope.hc.control_plane_namespace):
        ns = scope.hc.control_plane_namespace
        yield NotEvaluable(f"{scope.hc.namespace_not_read}: its workloads and "
                           "NetworkPolicies decide egress (`oc get deployments,networkpolicies "
                           f"-n {ns} -o yaml`)")
        return
    absent = none_present(scope) if subject.kind in HOSTED_KINDS else None
    if absent is not None:  # (a policy selecting no pod is judged by what it selects: none)
        yield absent
        return
    seen: set[tuple[Workload, int, str, str]] = set()
    for item, workloads in scope.picked:
        ports = scope.ports(item, params)
        if ports is None:
            yield NotEvaluable("port kas needs a HostedCluster: its API server port")
            return
        dest = destination(ctx, item.get("to", params.get("to", OUTSIDE)), subject.cluster)
        if dest.name == DNS:  # DNS pods behind a Service on another port: say which one counts
            dnat = "; ".join(str(n) for n in graph.dnat_notes(subject.cluster))
            dest = replace(dest, note=dnat)
        if params.get("expect") == "all-protocols-if-any":
            yield from _protocols_agree(ctx, graph, scope, workloads, dest, ports, protocols_of(params))
            continue
        for workload in workloads:
            for port in ports:
                for protocol in protocols_of(params):
                    if (workload, port, protocol, dest.name) not in seen:
                        seen.add((workload, port, protocol, dest.name))
                        yield from _reachable(ctx, graph, scope, workload, dest, port, protocol)


def none_present(scope: Scope) -> NotEvaluable | None:
    """Why nothing can be judged when none of the workloads the rule picks is in the
    input (a pass would claim traffic of workloads nobody saw), else None."""
    if not scope.picked or any(workloads for _, workloads in scope.picked):
        return None
    names = ", ".join(_selector_text(item) for item, _ in scope.picked)
    where = scope.hc.control_plane_namespace if scope.hc else scope.subject.namespace
    return NotEvaluable(f"no {names} workload in HCP namespace {where} in the input")


def _selector_text(item: dict[str, Any]) -> str:
    if item.get("app"):
        return str(item["app"])
    labels = item.get("labels") or {}
    if not labels:
        return "selected"
    return "labelled " + ",".join(f"{k}={v}" for k, v in labels.items())


def _workload_field(ctx: Context, workload: Workload, cluster: str) -> tuple[str, K8sObject | None]:
    obj = ctx.inventory.get_namespaced(workload.kind, workload.namespace, workload.name, cluster)
    return ("spec.template.spec" if obj is not None and workload.kind != "Pod" else "spec"), obj


def _reachable(ctx: Context, graph: ReachabilityGraph, scope: Scope, workload: Workload,
               dest: Destination, port: int, protocol: str) -> Iterable[Outcome]:
    name = scope.graph_name(workload)
    if dest.name == DNS:
        if _opener(graph, name, dest)(protocol, port):
            return
        blocked, evidence = f"DNS on {port}", [f"no egress rule of any NetworkPolicy opens "
                                               f"{protocol}/{port} for {workload.ref}"]
    else:
        egress = graph.egress_outside(name, port, protocol)
        if dest.space is not None:
            missing = dest.space.intersection(egress.allowed.complement())
            blocked = f"{DISPLAY.get(dest.name, dest.name)} ({missing})"
        else:
            missing = IPSpace() if egress.allowed else egress.allowed.complement()
            blocked = "every outside address"
        if not missing:
            return
        evidence = [str(e) for e in egress.evidence]
    field, obj = _workload_field(ctx, workload, scope.subject.cluster)
    yield Violation(field=field, subject=obj,
                    values={"workload": workload.ref, "port": port, "protocol": protocol,
                            "blocked": blocked},
                    evidence=evidence + ([dest.note] if dest.note else []))


def _opener(graph: ReachabilityGraph, name: str, dest: Destination) -> Callable[[str, int], bool]:
    """Whether ``name``'s egress opens (protocol, port) to ``dest``; for DNS the rules are
    read once per workload, whatever the ports asked."""
    if dest.name == DNS:
        return graph.egress_rules_open(name)[1].allows

    def opens(protocol: str, port: int) -> bool:
        allowed = graph.egress_outside(name, port, protocol).allowed
        return allowed.contains(dest.space) if dest.space is not None else bool(allowed)

    return opens


def _protocols_agree(ctx: Context, graph: ReachabilityGraph, scope: Scope,
                     workloads: list[Workload], dest: Destination, ports: list[int],
                     protocols: list[str]) -> Iterable[Outcome]:
    """Once a workload gets out to ``dest`` on one protocol (on any of the ports), it must
    on all of them. On a NetworkPolicy, the finding points at its egress rules that open
    only some protocols; elsewhere at each workload."""
    lacking: dict[Workload, list[str]] = {}
    short: dict[Workload, list[str]] = {}  # what each workload lacks (or all: none open)
    for workload in workloads:
        if dest.name == DNS:  # the egress rules' ports alone: asked once per workload
            have = list(graph.protocols_open(scope.graph_name(workload), tuple(ports),
                                             tuple(protocols)))
        else:
            opens = _opener(graph, scope.graph_name(workload), dest)
            have = [p for p in protocols if any(opens(p, port) for port in ports)]
        if len(have) < len(protocols):
            short[workload] = [p for p in protocols if p not in have]
        if have and len(have) < len(protocols):
            lacking[workload] = short[workload]
    if dest.name == DNS and short and is_network_policy(scope.subject) \
            and (unknown := _names_without_dns_pods(ctx, graph, scope, ports, short)):
        yield NotEvaluable(unknown)  # the named port may open what lacks, or may not
        return
    if not lacking:
        return
    if is_network_policy(scope.subject):
        named = (lambda name, protocol: graph.dns_named_port(scope.subject.cluster, name, protocol)) \
            if dest.name == DNS else None
        yield from _partial_rules(scope.subject, lacking, dest, ports, protocols, named)
        return
    for workload, missing in lacking.items():
        field, obj = _workload_field(ctx, workload, scope.subject.cluster)
        have = [p for p in protocols if p not in missing]
        yield Violation(field=field, subject=obj,
                        values={"workload": workload.ref, "workloads": workload.ref,
                                "have": "/".join(have), "missing": "/".join(missing)},
                        evidence=[_missing_text(missing, ports, [workload])]
                        + ([dest.note] if dest.note else []))


def _names_without_dns_pods(ctx: Context, graph: ReachabilityGraph, scope: Scope,
                            ports: list[int], short: dict[Workload, list[str]]) -> str:
    """Why the policy's DNS egress is not known: an egress rule that may select the DNS
    pods names its port (``port: dns``) in a protocol a workload lacks, which means the
    number the DNS pods' container port of that name has, and those pods are not in the
    input. A rule whose peers cannot be the DNS pods (a bare podSelector: the policy's own
    namespace) or whose names are of a protocol the workload has opens nothing in doubt.
    '' when nothing is named so or the DNS pods are there (the name resolves on them), and
    when none of the policy's own egress rules could open DNS on any protocol, whatever a
    name means (a default deny: it has no rule a finding could point at)."""
    policy = scope.subject
    rules = policy.get("spec.egress")
    if not any(_rule_protocols(rule, ports, lambda _name, _protocol: frozenset(ports))
               for rule in (rules if isinstance(rules, list) else [])):
        return ""
    _ports, _note, dns = dns_pods(ctx.inventory, policy.cluster)
    named: dict[str, None] = {}
    for workload, missing in short.items():
        for rule, names in graph.names_to_pods(scope.graph_name(workload), dns, missing):
            for spec in names:
                text = f"{rule.display} names port {getattr(spec, 'name', spec)!r}"
                protocol, field = getattr(spec, "protocol", ""), getattr(spec, "field", "")
                text += f" ({protocol})" if protocol else ""
                if field:
                    loc = ctx.inventory.locate(rule.policy.obj, field)
                    text += f" at {loc.path}:{loc.line}"
                named[text] = None
    if not named:
        return ""
    return (f"NetworkPolicy {policy.namespace}/{policy.name} selects workloads whose DNS egress "
            f"a named port may complete: {'; '.join(named)}. A named port "
            "means the number of the destination pods' container port of that name, and the "
            "cluster's DNS pods are not in the input, so whether DNS is open on TCP and UDP "
            "is not known (OpenShift's dns-default pods name dns 5353/UDP and dns-tcp 5353/TCP, "
            "CoreDNS's dns 53/UDP and dns-tcp 53/TCP, but a cluster may differ). Add the DNS "
            "pods to the input and scan again: `oc get daemonset dns-default -n openshift-dns "
            "-o yaml` (or the Pods), or `kubectl get deployment coredns -n kube-system -o yaml` "
            "with the kube-dns Service")


def _partial_rules(policy: K8sObject, lacking: dict[Workload, list[str]], dest: Destination,
                   ports: list[int], protocols: list[str], named: NamedPort = None
                   ) -> Iterable[Outcome]:
    rules = policy.get("spec.egress") or []
    for i, rule in enumerate(rules if isinstance(rules, list) else []):
        opened = [p for p in protocols if p in _rule_protocols(rule, ports, named)]
        if not opened or len(opened) == len(protocols):
            continue
        missing = [p for p in protocols if any(p in m for m in lacking.values())]
        names = [w.ref for w in sorted(lacking)]
        shown = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more"
                                             if len(names) > _SHOWN else "")
        yield Violation(
            field=f"spec.egress[{i}].ports",
            remedy=_other_protocols(policy, i, rule, opened, missing, ports, named),
            values={"have": "/".join(opened), "missing": "/".join(missing), "workloads": shown},
            evidence=[f"egress rule #{i + 1} opens {DISPLAY.get(dest.name, dest.name)} on "
                      f"{'/'.join(opened)} only", _missing_text(missing, ports, sorted(lacking))]
            + ([dest.note] if dest.note else []))


def _other_protocols(policy: K8sObject, index: int, rule: dict[str, Any], opened: list[str],
                     missing: list[str], ports: list[int], named: NamedPort = None
                     ) -> Remedy | NoFix:
    """Open the missing protocols on the ports the rule opens for the others, to the same
    peers: exactly the connections the rule's own intent lacks."""
    wanted = union_all(ConnectionSet.port(protocol, port) for protocol in missing
                       for port in ports if set(opened) & _rule_protocols(rule, [port], named))
    if not wanted:
        return NoFix("the rule opens DNS on a named port; which number it resolves to is "
                     "not in the input")
    return Remedy(policy, f"open {wanted} in egress rule #{index + 1} of {policy.ref}, to "
                          "the peers it already names",
                  (AppendItems(("spec", "egress", index, "ports"), tuple(port_entries(wanted))),))


def _missing_text(missing: list[str], ports: list[int], workloads: list[Workload]) -> str:
    return (f"no egress rule of any NetworkPolicy opens {'/'.join(missing)} "
            f"{'/'.join(map(str, ports))} for {', '.join(w.ref for w in workloads)}")


# A named port's numbers on the destination's pods: (name, protocol) -> numbers.
NamedPort = Callable[[str, str], frozenset[int]] | None


def _rule_protocols(rule: Any, ports: list[int], named: NamedPort = None) -> set[str]:
    """The protocols an egress rule's ``ports`` open on any of ``ports`` (ranges included;
    a named port where ``named`` resolves it)."""
    if not isinstance(rule, dict) or not isinstance(rule.get("ports"), list):
        return set()
    found = set()
    for port in rule["ports"]:
        if not isinstance(port, dict):
            continue
        protocol = str(port.get("protocol", "TCP")).upper()
        if isinstance(port.get("port"), str) and named is not None:
            if named(port["port"], protocol) & set(ports):
                found.add(protocol)
            continue
        if not isinstance(port.get("port"), int):
            continue
        first, last = port["port"], port.get("endPort") or port["port"]
        if any(first <= p <= last for p in ports):
            found.add(str(port.get("protocol", "TCP")).upper())
    return found


def listeners(subject: K8sObject, spec: dict[str, Any], platform: str | None = None
              ) -> Iterable[Outcome]:
    """Listeners of the subject's containers that must bind loopback and do not: a flag
    naming another address, or no flag (the default address). ``platform``: the HostedCluster's
    platform type, for listeners scoped to some platforms."""
    if spec.get("workloads") is not None and subject.name not in spec["workloads"] \
            and workload_name(subject) not in spec["workloads"]:
        return
    if spec.get("platforms") and platform not in spec["platforms"]:
        return
    base = "spec.containers" if subject.kind == "Pod" else "spec.template.spec.containers"
    containers = subject.get(base) or []
    flags, default = tuple(spec["flags"]), spec["default"]
    disabled = frozenset(spec.get("disabled") or ())
    for ci, container in enumerate(containers if isinstance(containers, list) else []):
        if not isinstance(container, dict):
            continue
        args = [str(a) for a in container.get("args") or []]
        for ai, (flag, value) in _flag_values(args, flags):
            if value.strip() not in disabled and not binds_loopback(value):
                yield Violation(field=f"{base}[{ci}].args[{ai}]",
                                values={"ports": value or "(empty)", "via": flag,
                                        "sources": "every address of the pod"},
                                evidence=[f"{flag}={value} listens beyond 127.0.0.1"])
        command = [str(a) for a in container.get("command") or []]
        if not list(_flag_values(command + args, flags)) and not binds_loopback(default):
            yield Violation(field=f"{base}[{ci}]",
                            values={"ports": default, "via": "default bind address",
                                    "sources": "every address of the pod"},
                            evidence=[f"container {container.get('name')} sets no "
                                      f"{'/'.join(flags)}: the default address {default} "
                                      "listens on every address of the pod"])


def _flag_values(args: list[str], flags: tuple[str, ...]) -> Iterable[tuple[int, tuple[str, str]]]:
    """(index, (flag, value)) for ``--flag=value`` and ``--flag value``."""
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        if flag not in flags:
            continue
        if eq:
            yield i, (flag, value)
        elif i + 1 < len(args):
            yield i + 1, (flag, args[i + 1])
