"""What the reachability queries answer: peers, paths, evidence and where it is written.

Every answer says *which layer* decided: ``perimeter`` (the ``--firewall``
file), ``service`` (a NodePort/LoadBalancer Service or a Route that opens a
way in), ``network-policy`` (ingress of the destination, egress of the
source), ``admin-network-policy`` / ``baseline-admin-network-policy`` (the
AdminNetworkPolicy tiers around it). Evidence carries the file and line of the object or rule that
decided (its ``Place``), so a finding can point at it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from hcpscan.analysis.reachability.endpoints import Workload
from hcpscan.analysis.reachability.exposure import ExposurePath
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.ports import ConnectionSet

PERIMETER, SERVICE, NETWORK_POLICY = "perimeter", "service", "network-policy"
ADMIN_NETWORK_POLICY = "admin-network-policy"
BASELINE_ADMIN_NETWORK_POLICY = "baseline-admin-network-policy"
EGRESS_FIREWALL = "egress-firewall"  # OVN-Kubernetes EgressFirewall, on the way out
PRIMARY_NETWORK = "primary-network"  # UserDefinedNetworks keep their pods apart
MULTI_NETWORK_POLICY = "multi-network-policy"  # on a secondary network (a NAD's)
POD_NETWORK = "pod network"  # the way between pods, or from outside straight to a pod


@dataclass(frozen=True, slots=True)
class Peer:
    """A source or destination: a workload of a cluster, or outside addresses."""

    cluster: str
    workload: Workload | None = None
    addresses: IPSpace | None = None

    @property
    def is_external(self) -> bool:
        return self.workload is None

    @property
    def name(self) -> str:
        if self.workload is not None:
            return self.workload.ref
        return f"{self.addresses}[External]"

    def __str__(self) -> str:
        return self.name

    def to_json(self) -> dict[str, Any]:
        if self.workload is not None:
            return {"cluster": self.cluster, "workload": self.workload.ref}
        if self.addresses is None:  # every query gives one of the two
            raise ValueError("a Peer with neither a workload nor addresses")
        return {"cluster": self.cluster, "addresses": self.addresses.cidrs()}


class Place:
    """Where an object or rule is written: a file and line, or how to find them.

    Finding a field's line re-reads its document, and queries gather far more
    evidence than findings quote, so a place given ``find`` looks only on first
    use. Places are equal when their files and lines are."""

    __slots__ = ("_path", "_line", "_find")

    def __init__(self, path: str | None = None, line: int | None = None,
                 find: Callable[[], tuple[str | None, int | None]] | None = None) -> None:
        self._path, self._line, self._find = path, line, find

    def _found(self) -> None:
        if self._find is not None:
            self._path, self._line = self._find()
            self._find = None

    @property
    def path(self) -> str | None:
        self._found()
        return self._path

    @property
    def line(self) -> int | None:
        self._found()
        return self._line

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Place):
            return NotImplemented
        return (self.path, self.line) == (other.path, other.line)

    def __hash__(self) -> int:
        return 0  # equality needs the file and line, which a hash must not look up

    def __repr__(self) -> str:
        return f"Place({self.path!r}, {self.line!r})"


NOWHERE = Place()


class _Say(Protocol):
    @property
    def layer(self) -> str: ...
    @property
    def allows(self) -> bool: ...
    @property
    def summary(self) -> str: ...
    @property
    def path(self) -> str | None: ...
    @property
    def line(self) -> int | None: ...


def _where(say: _Say) -> str:
    if not say.path:
        return ""
    return f"{say.path}:{say.line}" if say.line else say.path


class LayerSay:
    """What a layer says about a flow, as text and JSON: for ``Evidence`` and for the path
    graph's ``Hop`` (one step of a path), which both carry layer, allows, summary and the
    place (path, line) of the object that decided."""

    __slots__ = ()

    @property
    def where(self: _Say) -> str:
        return _where(self)

    def said(self: _Say) -> str:
        verb = "allows" if self.allows else "blocks"
        where = _where(self)
        return f"{self.layer} {verb}: {self.summary}" + (f" ({where})" if where else "")

    def said_json(self: _Say) -> dict[str, Any]:
        return {"layer": self.layer, "allows": self.allows, "summary": self.summary,
                "path": self.path, "line": self.line}


@dataclass(frozen=True, slots=True)
class Evidence(LayerSay):
    """One layer's say on a flow."""

    layer: str
    allows: bool
    summary: str
    at: Place = NOWHERE  # where the object or rule that decided is written

    @property
    def path(self) -> str | None:
        return self.at.path

    @property
    def line(self) -> int | None:
        return self.at.line

    def __str__(self) -> str:
        return self.said()

    def to_json(self) -> dict[str, Any]:
        return self.said_json()


@dataclass(frozen=True, slots=True)
class PathResult:
    """One way a flow can take (pod network, a NodePort, a Route...) and its verdict."""

    via: str
    allowed: bool
    evidence: tuple[Evidence, ...]

    @property
    def blocked_by(self) -> Evidence | None:
        return next((e for e in self.evidence if not e.allows), None)

    def to_json(self) -> dict[str, Any]:
        return {"via": self.via, "allowed": self.allowed,
                "evidence": [e.to_json() for e in self.evidence]}


@dataclass(frozen=True, slots=True)
class Reach:
    """Can ``source`` open a ``protocol``/``port`` connection to ``target``, and why."""

    source: Peer
    target: Peer
    protocol: str
    port: int
    paths: tuple[PathResult, ...]

    @property
    def allowed(self) -> bool:
        return any(p.allowed for p in self.paths)

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        """Evidence of the paths that allow (or of every path, when none does)."""
        chosen = [p for p in self.paths if p.allowed] or list(self.paths)
        return tuple(e for p in chosen for e in p.evidence)

    @property
    def layers(self) -> set[str]:
        return {e.layer for e in self.evidence}

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source.to_json(), "target": self.target.to_json(),
                "protocol": self.protocol, "port": self.port, "allowed": self.allowed,
                "paths": [p.to_json() for p in self.paths]}


@dataclass(frozen=True, slots=True)
class ExposedPort:
    """Pod ports of a target that outside addresses reach one way (``via``)."""

    target: Peer
    via: str
    connections: ConnectionSet
    sources: IPSpace
    evidence: tuple[Evidence, ...]

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target.to_json(), "via": self.via,
                "connections": str(self.connections), "sources": self.sources.cidrs(),
                "evidence": [e.to_json() for e in self.evidence]}


@dataclass(frozen=True, slots=True)
class WayInVerdict:
    """One way in from outside (a NodePort/LoadBalancer Service or a Route to one pod
    port) and the outside addresses that get through every layer on it."""

    path: ExposurePath
    workloads: tuple[Workload, ...]
    admitted: IPSpace
    blocked_by: Evidence | None  # the first blocking layer met, for a range that is stopped


@dataclass(frozen=True, slots=True)
class Egress:
    """Where ``source`` may send ``protocol``/``port`` outside the cluster, and why."""

    source: Peer
    protocol: str
    port: int
    isolated: bool  # egress isolated by some NetworkPolicy
    allowed: IPSpace  # outside addresses its egress rules admit on protocol/port
    evidence: tuple[Evidence, ...]

    @property
    def blocked(self) -> bool:
        return not self.allowed

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source.to_json(), "protocol": self.protocol, "port": self.port,
                "isolated": self.isolated, "allowed": self.allowed.cidrs(),
                "evidence": [e.to_json() for e in self.evidence]}
