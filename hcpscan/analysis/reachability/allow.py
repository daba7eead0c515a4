"""NetworkPolicy text that allows exactly a connection set: the inverse of ``policies``.

Fixes of required-flow findings need "allow exactly connection set X between
peers P and pods S, and nothing more". Three sizes of the answer:

* ``port_entries(X)``: the ``ports`` list of a rule (``port``/``endPort`` per
  protocol interval), to add to a rule that already names the right peers;
* ``allow_rule(direction, P, X)``: one ``ingress``/``egress`` rule to add to a
  policy that already selects S;
* ``allowing_policy(...)``: a whole NetworkPolicy selecting S.

A new policy isolates the pods it selects in its direction: allow rules add up
across policies, so for pods already isolated it only adds X from/to P, but for
pods that were not, it would deny everything else. ``allowing_policy`` refuses
unless the caller states the pods are isolated already.
"""

from __future__ import annotations

from typing import Any

from hcpscan.model.ipspace import IPSpace
from hcpscan.model.ports import PROTOCOLS, ConnectionSet

INGRESS, EGRESS = "ingress", "egress"


class NotExpressible(ValueError):
    """The connection set or peers cannot be written as NetworkPolicy rules."""


def port_entries(connections: ConnectionSet) -> list[dict[str, Any]]:
    """The ``ports`` entries that allow exactly ``connections`` (an empty set allows
    nothing and has no entries: a rule without ``ports`` would allow every port)."""
    if not connections:
        raise NotExpressible("an empty connection set needs no rule")
    out: list[dict[str, Any]] = []
    for protocol in PROTOCOLS:
        ports = connections.ports(protocol)
        if ports.is_all:
            out.append({"protocol": protocol})
            continue
        for lo, hi in ports:
            entry: dict[str, Any] = {"port": lo, "protocol": protocol}
            if hi != lo:
                entry["endPort"] = hi
            out.append(entry)
    return out


def ip_peers(space: IPSpace) -> list[dict[str, Any]]:
    """``ipBlock`` peers covering exactly ``space`` (one per CIDR of it)."""
    if not space:
        raise NotExpressible("an empty address set names no peer")
    return [{"ipBlock": {"cidr": cidr}} for cidr in space.cidrs()]


def allow_rule(direction: str, peers: list[dict[str, Any]] | None,
               connections: ConnectionSet) -> dict[str, Any]:
    """One rule allowing ``connections`` from (ingress) or to (egress) ``peers``;
    ``peers=None`` means any peer, as a rule without ``from``/``to`` does."""
    if direction not in (INGRESS, EGRESS):
        raise ValueError(f"direction must be {INGRESS} or {EGRESS}")
    rule: dict[str, Any] = {}
    if peers is not None:
        if not peers:
            raise NotExpressible("an empty peer list would mean every peer")
        rule["from" if direction == INGRESS else "to"] = peers
    if not connections.is_all:
        rule["ports"] = port_entries(connections)
    return rule


def allowing_policy(name: str, namespace: str, pod_selector: dict[str, Any], direction: str,
                    peers: list[dict[str, Any]] | None, connections: ConnectionSet, *,
                    pods_isolated: bool) -> dict[str, Any]:
    """A NetworkPolicy that adds exactly ``connections`` from/to ``peers`` for the pods of
    ``namespace`` that ``pod_selector`` selects, which must already be isolated in that
    direction (else the new policy would deny them everything else)."""
    if not pods_isolated:
        raise NotExpressible(f"the pods are not isolated for {direction}: a new policy would "
                             f"deny them every other {direction} connection")
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"podSelector": pod_selector,
                 "policyTypes": ["Ingress" if direction == INGRESS else "Egress"],
                 direction: [allow_rule(direction, peers, connections)]},
    }
