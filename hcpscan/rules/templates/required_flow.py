"""Template ``required-flow``: each flow of the catalog that applies to a HostedCluster is open.

The flows are data (``hcpscan/model/flows.yaml``, ``hcpscan flows list``); the verdict
is the path graph's (``hcpscan.analysis.reachability.required``): a flow passes when
every connection it needs has an open path, and fails naming the first hop that
blocks it — the layer, the object with file:line — the connections missing and those
allowed. A flow whose deciding input is absent is not evaluable, naming that input.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hcpscan.analysis.reachability.opening import Opening, opening
from hcpscan.analysis.reachability.required import (
    BLOCKED,
    NOT_APPLICABLE,
    OPEN,
    UNKNOWN,
    FlowResult,
    evaluate_guest_flow,
)
from hcpscan.analysis.reachability.scan_graph import ENDPOINT_READS, REACHABILITY
from hcpscan.findings.fix import NoFix, Remedy
from hcpscan.inventory import K8sObject
from hcpscan.model.flows import FlowError, cited, flow_by_id, load_flows, parse_flow
from hcpscan.model.hostedcluster import (
    GUEST_KINDS,
    HOSTED_KINDS,
    HostedCluster,
    guest_of,
    hosted_cluster,
)
from hcpscan.model.publishing import INGRESS_CONTROLLER
from hcpscan.rules.context import REQUIRED_FLOWS, Context
from hcpscan.rules.templates import register
from hcpscan.rules.templates.base import NotApplicable, NotEvaluable, Outcome, Violation
from hcpscan.rules.templates.reach import GRAPH_READS, GraphTemplate, opening_remedy

_SHOWN_HOPS = 6  # hops of a path quoted in one finding's evidence


@register
class RequiredFlow(GraphTemplate):
    name = "required-flow"
    description = ("every flow of the required-flow catalog (hcpscan flows list) that applies to a "
                   "HostedCluster (platform, publishing strategy, endpoint access) has an open path "
                   "on the path graph — from the workers' machine network through the perimeter, "
                   "Service or Route and NetworkPolicy, or out of control-plane workloads to DNS, "
                   "outside and the management API server; a failure names the first blocking hop, "
                   "its object and file:line, and the connections missing")
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["flows"],
        "properties": {
            "flows": {"type": "array", "minItems": 1, "uniqueItems": True,
                      "items": {"type": "string"},
                      "description": "ids of catalog flows (hcpscan flows list) or of flows "
                                     "the rule defines"},
            "define": {"type": "array", "items": {"type": "object"},
                       "description": "flows of the rule's own, written as catalog entries "
                                      "(docs/required-flows.md): id, title, from, to, "
                                      "protocols, when, check, seed"},
        },
    }
    # a HostedCluster for the flows into and out of its control plane; a guest cluster's
    # Infrastructure `cluster` for the flows of its own pods (check: guest-egress)
    subject_kinds = (*HOSTED_KINDS, *GUEST_KINDS)
    message_fields = {"flow": "the flow id", "title": "the flow's title",
                      "source": "who sends (the workers' ranges, a workload)",
                      "destination": "the workload and port, or the named destination",
                      "missing": "the connections with no open path (TCP 53, TCP 8091 from 10.0.0.0/24)",
                      "allowed": "the flow's connections that are open",
                      "blocked": "the first blocking hop: layer, what it says, file:line"}

    def caveat(self, ctx: Context) -> str:
        notes = [super().caveat(ctx)]
        index = ctx.built(REQUIRED_FLOWS)
        asked_in = index is not None and any(
            r.flow.check == "ingress" and r.status in (OPEN, BLOCKED) and r.flow.id in index.current
            for results in index.results.values() for r in results)
        graph = ctx.built(REACHABILITY)
        if asked_in and ctx.config.firewall is None and graph is not None and graph.perimeter is not None:
            # the security groups of the manifests stand in front of node ports only
            notes.append("no perimeter file was given: the security groups read from the manifests "
                         "bound the node ports; in front of load balancers and routers the firewall "
                         "is taken as open for the workers' flows (describe it with --firewall or "
                         "inputs.firewall)")
        elif asked_in and ctx.config.firewall is None:
            notes.append("no perimeter was given: the firewall or security group in front of the "
                         "nodes is taken as open for the workers' flows (describe it with "
                         "--firewall or inputs.firewall)")
        return "; ".join(n for n in notes if n)

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        return (*GRAPH_READS, *ENDPOINT_READS, INGRESS_CONTROLLER, *GUEST_KINDS)

    def problems(self, params: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
        found = super().problems(params)
        if found or not isinstance(params, dict):
            return found
        builtin = {f.id for f in load_flows()}
        defined: set[str] = set()
        for i, item in enumerate(params.get("define", [])):
            try:
                flow = parse_flow(item, f"define[{i}]")
            except FlowError as exc:
                found.append((("define", i), str(exc)))
                continue
            if flow.id in builtin:
                found.append((("define", i), f"flow id {flow.id!r} is the catalog's: choose another"))
            defined.add(flow.id)
        return found + [(("flows", i), f"no flow {flow!r} in the catalog (hcpscan flows list) "
                                       "or in define")
                        for i, flow in enumerate(params.get("flows", []))
                        if flow not in builtin | defined]

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        defined = {f.id: f for f in (parse_flow(item) for item in params.get("define", []))}
        flows = [f for f in (defined.get(i) or flow_by_id(i) for i in params["flows"]) if f is not None]
        if subject.kind in GUEST_KINDS:
            yield from self._guest(ctx, subject, [f for f in flows if f.check == "guest-egress"])
            return
        hc = hosted_cluster(subject)
        graph = ctx.reachability()
        index = ctx.flow_index()
        index.current = frozenset(params["flows"])  # the rule being judged, for its caveat
        results: list[FlowResult] = []
        for flow in flows:
            results += index.of(ctx.inventory, graph, hc, flow, ctx.config.worker_cidrs)
        applicable = [r for r in results if r.status != NOT_APPLICABLE]
        if not applicable:
            yield NotApplicable("; ".join(f"{r.flow.id}: {r.reason}" for r in results))
            return
        for result in applicable:
            if result.status == UNKNOWN:
                yield NotEvaluable(f"{result.flow.id}: {result.reason}")
            elif result.status == BLOCKED:
                yield _violation(ctx, subject, result, hc)

    def _guest(self, ctx: Context, infra: K8sObject, flows: list[Any]) -> Iterable[Outcome]:
        """The guest-egress flows of the cluster ``infra`` describes, if it is a guest."""
        if not flows:
            yield NotApplicable("the rule's flows are not flows of a guest cluster's pods")
            return
        why, hc = guest_of(ctx.inventory, infra)
        if not why:
            yield NotApplicable(f"{infra.ref}: not a hosted cluster's guest, or not the object "
                                "that says so for its cluster (its Infrastructure cluster's "
                                "status.controlPlaneTopology is not External; its "
                                "default/kubernetes endpoints are not HyperShift's node-local "
                                "API server proxy alone)")
            return
        graph = ctx.reachability()
        paths = ctx.flow_index().paths
        for flow in flows:
            for result in evaluate_guest_flow(ctx.inventory, graph, paths, infra, hc, flow):
                if result.status == NOT_APPLICABLE:
                    yield NotApplicable(f"{flow.id}: {result.reason}")
                elif result.status == BLOCKED:
                    violation = _violation(ctx, infra, result, hc)
                    violation.evidence.append(f"a hosted cluster's guest: {why}")
                    yield violation


def _violation(ctx: Context, subject: K8sObject, result: FlowResult,
               hc: HostedCluster | None) -> Violation:
    flow, block = result.flow, result.first_block
    hop = block.blocked_by if block is not None else None
    blocked = (f"{hop.summary} [{hop.layer}" + (f", {hop.where}]" if hop.where else "]")
               if hop is not None else "no path")
    workload = result.workload
    source = (workload.ref if flow.check in ("egress", "guest-egress") and workload is not None else
              ", ".join(dict.fromkeys(a.origin for a in result.blocked)) or flow.source_text
              if flow.check == "operator-ingress" else
              "the workers" if flow.check == "ingress" else
              f"the KubeVirt workers ({workload.ref})" if workload is not None else flow.source_text)
    evidence = [f"{flow.id}: {flow.title}; documented in {cited(flow.seed[0])}"]
    for answer in result.blocked:
        evidence.append(f"{answer.origin} → {answer.target} {answer.connection}: blocked by "
                        + (str(answer.blocked_by) if answer.blocked_by else "no path"))
    if block is not None:
        evidence += [f"  hop {i + 1}: {h}" for i, h in enumerate(block.hops[:_SHOWN_HOPS])]
    if result.allowed:
        evidence.append(f"open: {', '.join(result.allowed)}")
    evidence += list(result.notes)
    field, on = _field(ctx, subject, result)
    return Violation(field=field, subject=on,
                     values={"flow": flow.id, "title": flow.title, "source": source,
                             "destination": result.destination, "missing": ", ".join(result.missing),
                             "allowed": ", ".join(result.allowed) or "nothing",
                             "blocked": blocked},
                     evidence=evidence, facts=result.facts(),
                     remedy=_remedy(ctx, subject, result, hc))


def _remedy(ctx: Context, subject: K8sObject, result: FlowResult,
            hc: HostedCluster | None) -> Remedy | NoFix:
    """The change that opens exactly the missing connections where they are blocked
    (``analysis.reachability.opening``), or why none is made."""
    found = opening(ctx.inventory, result, hc, subject.cluster, ctx.reachability().perimeter)
    if not isinstance(found, Opening):
        return NoFix(found.why)
    return opening_remedy(found)


def _field(ctx: Context, subject: K8sObject, result: FlowResult) -> tuple[str, K8sObject | None]:
    """Ingress flows point at the HostedCluster's spec.services entry that publishes the
    target (else its machineNetwork); egress flows at the sending workload."""
    workload = result.workload
    if result.flow.check != "ingress" and workload is not None:
        obj = ctx.inventory.get(workload.kind, workload.namespace, workload.name, subject.cluster)
        if obj is not None:
            return ("spec" if workload.kind == "Pod" else "spec.template.spec"), obj
    hc = hosted_cluster(subject)
    for target in result.flow.targets:
        strategy = hc.publishing.get(target.service) if target.service else None
        if strategy is not None:
            return strategy.field, None
    return ("spec.networking.machineNetwork" if hc.machine_networks else "spec.networking"), None
