"""The evidence of reachability answers: which layer decided a hop, in words, and where.

``EvidenceWriter`` turns a verdict of the policy tiers, the perimeter file, a
Service or Route, an EgressFirewall rule or a primary/secondary network into an
``Evidence``: the layer, whether it allows, a sentence naming the tier, the
object and the rule that decided, and the ``Place`` they are written at. Places
are found (a document re-read for a field's line) only when evidence is shown.
The queries (``queries.py``) decide; this module only says why.
"""

from __future__ import annotations

from hcpscan.analysis.reachability.admin import ADMIN_TIER, ALLOW, BASELINE_TIER
from hcpscan.analysis.reachability.answers import (
    ADMIN_NETWORK_POLICY,
    BASELINE_ADMIN_NETWORK_POLICY,
    EGRESS_FIREWALL,
    MULTI_NETWORK_POLICY,
    NETWORK_POLICY,
    PERIMETER,
    PRIMARY_NETWORK,
    SERVICE,
    Evidence,
    Place,
)
from hcpscan.analysis.reachability.endpoints import Workload
from hcpscan.analysis.reachability.evaluation import (
    DEFAULT_TIER,
    AnyRule,
    Part,
    PolicyEvaluation,
    Side,
    Verdict,
)
from hcpscan.analysis.reachability.exposure import ROUTER_NAMESPACE, ExposurePath
from hcpscan.analysis.reachability.index import ClusterView
from hcpscan.analysis.reachability.networks import POD
from hcpscan.analysis.reachability.perimeter import Perimeter
from hcpscan.analysis.reachability.policies import EGRESS, INGRESS, NP_TIER, NetworkPolicyModel
from hcpscan.analysis.reachability.secondary import SecondaryNetwork
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.ports import NODE_PORT_RANGE, ConnectionSet, PortSet

LAYER_OF_TIER = {ADMIN_TIER: ADMIN_NETWORK_POLICY, NP_TIER: NETWORK_POLICY,
                 BASELINE_TIER: BASELINE_ADMIN_NETWORK_POLICY, DEFAULT_TIER: NETWORK_POLICY}


class EvidenceWriter:
    """Evidence for the hops of one inventory (and perimeter file, if any)."""

    def __init__(self, inventory: Inventory, perimeter: Perimeter | None = None) -> None:
        self.inventory = inventory
        self.perimeter = perimeter
        self._places: dict[tuple[K8sObject, str], Place] = {}

    def place(self, obj: K8sObject, field: str = "") -> Place:
        """Where a field of an object is written, looked up when evidence is shown."""
        place = self._places.get((obj, field))
        if place is None:
            def find() -> tuple[str, int]:
                loc = self.inventory.locate(obj, field) if field else self.inventory.locate(obj)
                return loc.path, loc.line

            place = self._places[(obj, field)] = Place(find=find)
        return place

    # -- the policy tiers -----------------------------------------------------------------

    def policy(self, direction: str, side: Side, verdict: Verdict, who: str, peer: str,
               protocol: str, port: int) -> Evidence:
        """The policy tiers' say, naming the tier, the object and the rule that decided."""
        if not side.isolated:
            return Evidence(NETWORK_POLICY, True, f"no NetworkPolicy isolates {direction} of {who}")
        passed = (f" (passed on by {verdict.passed_by.display})"
                  if verdict.passed_by is not None else "")
        if verdict.tier in (ADMIN_TIER, BASELINE_TIER):
            (rule,) = verdict.rules
            return Evidence(LAYER_OF_TIER[verdict.tier], verdict.allowed,
                            f"{direction} of {who} {'allowed' if verdict.allowed else 'denied'} "
                            f"for {peer} on {protocol}/{port} by {rule.display}{passed}",
                            self.place(rule.policy.obj, rule.field))
        if verdict.tier == DEFAULT_TIER:
            return Evidence(NETWORK_POLICY, True,
                            f"{direction} of {who}: no AdminNetworkPolicy rule decides {peer} on "
                            f"{protocol}/{port}{passed}, no NetworkPolicy isolates it and no "
                            "BaselineAdminNetworkPolicy rule denies it")
        # Named in a fixed order (not the input's: API order live, file order offline).
        if verdict.allowed:
            deciding = sorted(verdict.rules, key=rule_order)
            names = ", ".join(r.display for r in deciding)
            return Evidence(NETWORK_POLICY, True, f"{direction} of {who} allowed by {names}{passed}",
                            self.place(deciding[0].policy.obj, deciding[0].field))
        ordered = sorted(side.policies, key=lambda p: p.ref)
        names = ", ".join(p.ref for p in ordered)
        return Evidence(NETWORK_POLICY, False,
                        f"{direction} of {who} is isolated by {names} and no rule allows {peer} on "
                        f"{protocol}/{port}{passed}", self.place(ordered[0].obj))

    def ingress(self, view: ClusterView, dst: int, src_bit: int, src_name: str, protocol: str,
                port: int) -> Evidence:
        verdict = view.evaluation.verdict(INGRESS, dst, src_bit, protocol, port)
        return self.policy("ingress", view.evaluation.ingress_side(dst), verdict,
                           class_name(view, dst), src_name, protocol, port)

    def egress(self, view: ClusterView, src: int, dst_bit: int, dst_name: str,
               protocol: str, port: int) -> Evidence:
        verdict = view.evaluation.verdict(EGRESS, src, dst_bit, protocol, port)
        return self.policy("egress", view.evaluation.egress_side(src), verdict,
                           class_name(view, src), dst_name, protocol, port)

    def egress_outside(self, workload: Workload, isolated: bool,
                       isolating: list[NetworkPolicyModel], deciding: list[AnyRule],
                       protocol: str, port: int) -> tuple[Evidence, ...]:
        """Why a workload's egress to outside addresses on ``protocol``/``port`` is
        open or closed: the rules that allow it, else the policies that isolate it."""
        who = workload.ref
        if not isolated:
            return (Evidence(NETWORK_POLICY, True, f"no NetworkPolicy isolates egress of {who}"),)
        if deciding:
            deciding = sorted(deciding, key=rule_order)
            names = ", ".join(r.display for r in deciding)
            return (Evidence(LAYER_OF_TIER[deciding[0].tier], True,
                             f"egress of {who} on {protocol}/{port} allowed by {names}",
                             self.place(deciding[0].policy.obj, deciding[0].field)),)
        if isolating:
            isolating = sorted(isolating, key=lambda p: p.ref)
            names = ", ".join(p.ref for p in isolating)
            return (Evidence(NETWORK_POLICY, False, f"egress of {who} is isolated by {names} and "
                                                    f"no rule allows {protocol}/{port} to outside "
                                                    "addresses", self.place(isolating[0].obj)),)
        return (Evidence(ADMIN_NETWORK_POLICY, False,
                         f"egress of {who} on {protocol}/{port} to outside addresses is denied or "
                         "passed on by AdminNetworkPolicy rules and denied by the "
                         "BaselineAdminNetworkPolicy, or allowed to none of them"),)

    def firewall(self, view: ClusterView, walled: dict[tuple[int, int], list[int]],
                 protocol: str, port: int) -> tuple[Evidence, ...]:
        """The EgressFirewall rules that deny outside atoms: ``walled`` maps (source
        class, firewall rule index) to the atoms the rule denies."""
        out = []
        for (src, index), atoms in sorted(walled.items()):
            firewall = view.evaluation.firewall_of(src)
            if firewall is None:  # walled holds only sources a firewall filtered
                raise RuntimeError(f"no EgressFirewall for class {src}, which one walled")
            rule = firewall.rules[index]
            space = view.space_of(sum(1 << k for k in atoms))
            out.append(Evidence(EGRESS_FIREWALL, False, f"{rule.describe(firewall)} denies "
                                f"{protocol}/{port} to {space}",
                                self.place(firewall.obj, rule.field)))
        return tuple(out)

    # -- ways in from outside -------------------------------------------------------------

    def perimeter_gate(self, atom: IPSpace, protocol: str, port: int | None,
                       via: str | None = None) -> Evidence | None:
        """The perimeter's say on traffic from ``atom`` to ``port`` (``None``: a
        node port not allocated yet, so any port of the NodePort range) taking ``via``."""
        perimeter = self.perimeter.for_way(via) if self.perimeter is not None else None
        if perimeter is None:
            return None
        shown = f"{protocol}/{port}" if port is not None else f"{protocol} node ports"
        if port is None:
            open_ports = perimeter.allowed(atom).intersection(
                ConnectionSet.of(protocol, PortSet.of(NODE_PORT_RANGE))).ports(protocol)
            port = open_ports.intervals[0][0] if open_ports else NODE_PORT_RANGE[0]
        verdict = perimeter.decide(atom, protocol, port)
        return Evidence(PERIMETER, verdict.allowed,
                        f"{perimeter.name}: {verdict.describe(perimeter)} for {shown}",
                        Place(*perimeter.place_of(verdict)))

    def way_in(self, path: ExposurePath, admits: bool) -> Evidence:
        """A Service's or Route's say on an outside range (``admits``: its source
        ranges hold it)."""
        place = self.place(path.obj, path.field)
        if admits:
            return Evidence(SERVICE, True, path.describe(), place)
        # the hop is written where the ranges that keep the source out are
        bound = self.place(*path.bounded_by) if path.bounded_by is not None else place
        return Evidence(SERVICE, False, f"{path.describe()} admits only {path.sources}", bound)

    @staticmethod
    def pod_network_ingress(view: ClusterView, dst: int, part: Part) -> Evidence:
        """What lets outside addresses straight into ``dst``'s pods (its ingress part)."""
        return Evidence(NETWORK_POLICY, True,
                        side_summary(view.evaluation.ingress_side(dst).policies, part))

    # -- networks -------------------------------------------------------------------------

    def secondary(self, net: SecondaryNetwork, evaluation: PolicyEvaluation,
                  direction: str, own: int, peer: int, names: list[str],
                  protocol: str, port: int) -> Evidence:
        """A secondary network's MultiNetworkPolicies' say on one direction of a hop."""
        side = (evaluation.ingress_side if direction == INGRESS else evaluation.egress_side)(own)
        where = f"on secondary network {net.network.name}"
        if not side.isolated:
            return Evidence(MULTI_NETWORK_POLICY, True, f"no MultiNetworkPolicy isolates "
                            f"{direction} of {names[0]} {where}")
        verdict = evaluation.verdict(direction, own, peer, protocol, port)
        if verdict.allowed:
            deciding = sorted(verdict.rules, key=rule_order)
            return Evidence(MULTI_NETWORK_POLICY, True, f"{direction} of {names[0]} {where} "
                            f"allowed by {', '.join(r.display for r in deciding)}",
                            self.place(deciding[0].policy.obj, deciding[0].field))
        ordered = sorted(side.policies, key=lambda p: p.ref)
        return Evidence(MULTI_NETWORK_POLICY, False, f"{direction} of {names[0]} {where} is "
                        f"isolated by {', '.join(p.ref for p in ordered)} and no rule allows "
                        f"{names[1]} on {protocol}/{port}", self.place(ordered[0].obj))

    @staticmethod
    def network_apart(view: ClusterView, src: int, dst: int) -> Evidence | None:
        """Evidence that two classes sit on different primary networks (UDN isolation)."""
        networks = view.evaluation.networks
        if networks[src] == networks[dst] or -1 in (networks[src], networks[dst]):
            return None
        primary = view.primary
        names = [primary.get(view.evaluation.classes[i].namespace, POD).title for i in (src, dst)]
        return Evidence(PRIMARY_NETWORK, False, f"{class_name(view, src)} is on the {names[0]} "
                        f"and {class_name(view, dst)} on the {names[1]}: OVN-Kubernetes keeps "
                        "primary networks apart")


def rule_order(rule: AnyRule) -> tuple[str, str, int]:
    """Rules are named in a fixed order, not the input's (API order live, file order offline)."""
    return rule.policy.ref, rule.direction, rule.index


def class_name(view: ClusterView, index: int) -> str:
    """An endpoint class as evidence names it (the router by its namespace)."""
    if index == view.router:
        return f"the router ({ROUTER_NAMESPACE})"
    return str(view.evaluation.classes[index])


def side_summary(policies: tuple[NetworkPolicyModel, ...], part: Part) -> str:
    if not policies:
        return "no NetworkPolicy isolates ingress"
    return "ingress allowed by " + ", ".join(allowing(part))


def allowing(part: Part) -> list[str]:
    """The part's rules that allow (for the tiers, Deny and Pass rules may match too)."""
    names = [r.display for r in part.rules if r.action == ALLOW]
    return names or ["no policy tier denying it"]


def allowed_by(in_part: Part | None, out_part: Part | None) -> list[str]:
    """What allows an edge of the exported graph, egress side then ingress side."""
    out = ["egress not isolated"] if out_part is None else allowing(out_part)
    out += ["ingress not isolated"] if in_part is None else allowing(in_part)
    return out
