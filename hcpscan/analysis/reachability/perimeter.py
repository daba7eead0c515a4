"""The perimeter: security groups or firewalls in front of the cluster's nodes.

Kubernetes objects do not show what a cloud security group, a hardware
firewall or a node firewall lets in, yet that layer is often the only one
that narrows a port opened by an allow-all NetworkPolicy (HyperShift's
``nodeport-ignition-proxy`` allows 8443 from anywhere). ``hcpscan
connectivity --firewall FILE`` reads it from a small YAML file::

    apiVersion: hcpscan.io/v1
    kind: Perimeter
    metadata:
      name: mgmt-workers-sg          # optional, shown in evidence
    default: deny                    # allow | deny when no rule matches (default: deny)
    rules:                           # optional: without rules the default decides all
    - name: workers-to-ignition      # optional; shown in evidence (default: rule #N)
      action: allow                  # allow | deny (required)
      sources:                       # CIDRs or addresses (required, at least one)
      - 192.168.122.0/24
      ports:                         # optional: absent = every port of every protocol
      - protocol: TCP                # TCP | UDP | SCTP (default TCP)
        port: 8443                   # optional: absent = every port of the protocol
        endPort: 8443                # optional: a range port..endPort
    - name: nodeports-from-workers
      action: allow
      sources: [192.168.122.0/24]
      ports: [{protocol: TCP, port: 30000, endPort: 32767}]
    - name: everyone-else
      action: deny
      sources: [0.0.0.0/0, "::/0"]

Rules are read top to bottom and the first rule whose sources hold the client
address and whose ports hold the destination port decides, as in a firewall
chain or a network ACL; a security group (allow rules only, implicit deny) is
the same file with ``default: deny``. The perimeter filters only traffic that
enters from outside the cluster, on the port as it arrives at the node: the
pod port for direct pod traffic, the ``nodePort`` for NodePort Services, the
Service ``port`` for LoadBalancer Services, 443 (80 without TLS) for Routes — and for a
Route whose router is published on the machines, the port the router takes it on there
(``hostNetwork.httpsPort`` for HostNetwork, the ``router-nodeport-<name>`` Service's node
port for NodePortService).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from hcpscan import PERIMETER_FORMAT_URL
from hcpscan.core.yamldocs import InputLimitError
from hcpscan.inventory.fieldpath import mapping_at
from hcpscan.model.ipspace import AddressError, IPSpace, cut
from hcpscan.model.ports import PROTOCOLS, ConnectionSet, PortSet, normalise_protocol
from hcpscan.sources.bounded import read_bounded

ALLOW, DENY = "allow", "deny"
DIRECT = "direct"  # traffic straight to a pod address, through no Service or Route


def load_balancer_way(namespace: str, name: str) -> str:
    """The way into one LoadBalancer Service's own load balancer (a perimeter of its own
    security groups fronts only it)."""
    return f"load balancer of Service {namespace}/{name}"


class PerimeterError(ValueError):
    """A perimeter file that cannot be used: where, what, and what to do."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.message = message


@dataclass(frozen=True, slots=True)
class PerimeterRule:
    name: str
    action: str
    sources: IPSpace
    ports: ConnectionSet
    source_cidrs: tuple[str, ...]
    path: str = ""
    line: int | None = None

    def matches(self, source: IPSpace, protocol: str, port: int) -> bool:
        return self.sources.contains(source) and self.ports.allows(protocol, port)


@dataclass(frozen=True, slots=True)
class PerimeterVerdict:
    allowed: bool
    rule: PerimeterRule | None  # None: the default decided
    layer: Perimeter | None = None  # in a stack of perimeters: the one that decided

    def describe(self, perimeter: Perimeter) -> str:
        decided = self.layer or perimeter
        of = f" of {decided.name}" if decided is not perimeter else ""
        if self.rule is None:
            if decided.default_text:
                return decided.default_text
            return f"no rule of {decided.name} matches; default {decided.default}"
        return (f"rule {self.rule.name!r}{of} ({self.rule.action} from "
                f"{', '.join(self.rule.source_cidrs)})")


@dataclass(frozen=True, slots=True)
class Perimeter:
    name: str
    default: str
    rules: tuple[PerimeterRule, ...]
    path: str = ""
    # read from manifests (security groups): where the default stands, what it says,
    # and the groups attached whose rules the input does not hold
    default_line: int | None = None
    default_text: str = ""
    undescribed: tuple[str, ...] = ()
    # the ways in it stands in front of (ExposurePath.via, DIRECT for pod traffic);
    # None: every way (a firewall file describes all traffic into the cluster)
    fronts: tuple[str, ...] | None = None

    def for_way(self, via: str | None) -> Perimeter | None:
        """The perimeter traffic taking the way ``via`` (None: straight to a pod) meets."""
        if self.fronts is None or (via or DIRECT) in self.fronts:
            return self
        return None

    def place_of(self, verdict: PerimeterVerdict) -> tuple[str, int | None]:
        """Where the verdict is written: its rule's file and line, else the default's."""
        layer = verdict.layer or self
        if verdict.rule is not None:
            return verdict.rule.path or layer.path, verdict.rule.line
        return layer.path, layer.default_line

    def cidrs(self) -> list[IPSpace]:
        return [r.sources for r in self.rules]

    def decide(self, source: IPSpace, protocol: str, port: int) -> PerimeterVerdict:
        """The verdict for traffic from ``source`` (one piece of the external
        space, cut by the rules' CIDRs) to ``port``."""
        for rule in self.rules:
            if rule.matches(source, protocol, port):
                return PerimeterVerdict(rule.action == ALLOW, rule)
        return PerimeterVerdict(self.default == ALLOW, None)

    def admitting(self, protocol: str, first: int, last: int) -> tuple[IPSpace, IPSpace]:
        """(the addresses let in on every port of ``first``-``last``, those let in on some):
        the two differ for an entry port not known in advance (an unallocated node port)."""
        wanted = ConnectionSet.of(normalise_protocol(protocol), PortSet.of((first, last)))
        every, some = [], []
        for piece in cut(self.cidrs(), IPSpace.everything()):
            got = self.allowed(piece).intersection(wanted)
            if got:
                some.append(piece)
            if got == wanted:
                every.append(piece)
        return IPSpace.union_of(every), IPSpace.union_of(some)

    def allowed(self, source: IPSpace) -> ConnectionSet:
        """Every port the perimeter lets in from ``source``."""
        remaining, allowed = ConnectionSet.all(), ConnectionSet.none()
        for rule in self.rules:
            if not rule.sources.contains(source):
                continue
            if rule.action == ALLOW:
                allowed = allowed.union(remaining.intersection(rule.ports))
            remaining = remaining.difference(rule.ports)
        if self.default == ALLOW:
            allowed = allowed.union(remaining)
        return allowed


@dataclass(frozen=True, slots=True)
class PerimeterStack(Perimeter):
    """Perimeters traffic passes one after another (a firewall file in front of the
    security groups read from manifests): it gets in when every one lets it in."""

    layers: tuple[Perimeter, ...] = ()

    def cidrs(self) -> list[IPSpace]:
        return [c for layer in self.layers for c in layer.cidrs()]

    def decide(self, source: IPSpace, protocol: str, port: int) -> PerimeterVerdict:
        verdict = PerimeterVerdict(True, None)
        for layer in self.layers:
            verdict = replace(layer.decide(source, protocol, port), layer=layer)
            if not verdict.allowed:
                break
        return verdict

    def allowed(self, source: IPSpace) -> ConnectionSet:
        out = ConnectionSet.all()
        for layer in self.layers:
            out = out.intersection(layer.allowed(source))
        return out

    def for_way(self, via: str | None) -> Perimeter | None:
        return stacked(*(layer.for_way(via) for layer in self.layers))


def unknowns_behind(perimeter: Perimeter | None, summaries: list[str]) -> tuple[str, ...]:
    """What the input does not give about the perimeter layers named in ``summaries`` (the
    say of the hops they blocked): a group not described in front of one load balancer
    leaves only the flows that layer blocks unknown, not those the machines' groups block."""
    if perimeter is None or not perimeter.undescribed:
        return ()
    layers = perimeter.layers if isinstance(perimeter, PerimeterStack) else (perimeter,)
    return tuple(dict.fromkeys(u for layer in layers if layer.undescribed
                               and any(layer.name in text for text in summaries)
                               for u in layer.undescribed))


def stacked(*perimeters: Perimeter | None) -> Perimeter | None:
    """The perimeters given (``None``: absent) as one: itself when only one is."""
    present = tuple(p for p in perimeters if p is not None)
    if len(present) <= 1:
        return present[0] if present else None
    return PerimeterStack(" and ".join(p.name for p in present), DENY, (), present[0].path,
                          undescribed=tuple(u for p in present for u in p.undescribed),
                          layers=present)


def load_perimeter(path: str | Path) -> Perimeter:
    name = str(path)
    try:  # under the budgets of an input file
        text = read_bounded(Path(path))
    except InputLimitError as exc:
        raise PerimeterError(name, exc.line, f"not read: {exc.message}") from None
    except OSError as exc:
        raise PerimeterError(name, None, f"cannot read the perimeter file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise PerimeterError(name, None, "the perimeter file is not UTF-8 text") from None
    return parse_perimeter(text, name)


def parse_perimeter(text: str, path: str = "<perimeter>") -> Perimeter:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise PerimeterError(path, mark.line + 1 if mark else None,
                             f"not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(doc, dict):
        raise PerimeterError(path, 1, "expected a mapping with `default:` and `rules:` (the format: "
                                      f"{PERIMETER_FORMAT_URL})")
    kind = doc.get("kind", "Perimeter")
    if kind != "Perimeter":
        raise PerimeterError(path, _line(root, "kind"), f"kind must be Perimeter, not {kind!r}")
    default = str(doc.get("default", DENY)).lower()
    if default not in (ALLOW, DENY):
        raise PerimeterError(path, _line(root, "default"), "default must be allow or deny")
    meta = mapping_at(doc, "metadata")
    label = f"perimeter {meta.get('name') or Path(path).name}"
    rules_raw = doc.get("rules") or []  # none: the default decides everything
    if not isinstance(rules_raw, list):
        raise PerimeterError(path, _line(root, "rules"), "`rules:` must be a list of rules")
    rules_node = _child(root, "rules")
    rules = []
    for i, raw in enumerate(rules_raw):
        node = rules_node.value[i] if rules_node is not None and i < len(rules_node.value) else None
        rules.append(_rule(raw, i, path, node))
    # a connection no rule matches is decided by `default:` (its line; the document's
    # first line when the default is implied)
    return Perimeter(label, default, tuple(rules), path, default_line=_line(root, "default") or 1)


def _rule(raw: Any, index: int, path: str, node: Any) -> PerimeterRule:
    line = node.start_mark.line + 1 if node is not None else None
    if not isinstance(raw, dict):
        raise PerimeterError(path, line, f"rule #{index + 1} must be a mapping")
    name = str(raw.get("name") or f"rule #{index + 1}")
    action = str(raw.get("action", "")).lower()
    if action not in (ALLOW, DENY):
        raise PerimeterError(path, _line(node, "action") or line,
                             f"rule {name!r}: action must be allow or deny")
    sources_raw = raw.get("sources")
    if isinstance(sources_raw, str):
        sources_raw = [sources_raw]
    if not isinstance(sources_raw, list) or not sources_raw:
        raise PerimeterError(path, _line(node, "sources") or line,
                             f"rule {name!r}: sources must list at least one CIDR")
    sources = IPSpace()
    for text in sources_raw:
        try:
            sources = sources.union(IPSpace.from_cidr(str(text)))
        except AddressError as exc:
            raise PerimeterError(path, _line(node, "sources") or line,
                                 f"rule {name!r}: source {text!r}: {exc}") from None
    ports = _ports(raw.get("ports"), name, path, _line(node, "ports") or line)
    return PerimeterRule(name, action, sources, ports, tuple(str(s) for s in sources_raw), path, line)


def _ports(raw: Any, name: str, path: str, line: int | None) -> ConnectionSet:
    if raw is None:
        return ConnectionSet.all()
    if not isinstance(raw, list) or not raw:
        raise PerimeterError(path, line, f"rule {name!r}: ports must be a non-empty list")
    out = ConnectionSet.none()
    for entry in raw:
        if not isinstance(entry, dict):
            raise PerimeterError(path, line, f"rule {name!r}: each port needs protocol/port keys")
        protocol = normalise_protocol(entry.get("protocol"))
        if protocol not in PROTOCOLS:
            raise PerimeterError(path, line, f"rule {name!r}: protocol {entry.get('protocol')!r} "
                                             "is not TCP, UDP or SCTP")
        port, end = entry.get("port"), entry.get("endPort")
        if port is None:
            out = out.union(ConnectionSet.of(protocol, PortSet.all()))
            continue
        if not _is_port(port) or (end is not None and (not _is_port(end) or end < port)):
            raise PerimeterError(path, line, f"rule {name!r}: ports must be numbers in 1-65535 "
                                             "with endPort >= port")
        out = out.union(ConnectionSet.of(protocol, PortSet.of((port, end or port))))
    return out


def _is_port(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535


def _child(node: Any, key: str) -> Any:
    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in node.value:
        if getattr(k, "value", None) == key:
            return v
    return None


def _line(node: Any, key: str) -> int | None:
    child = _child(node, key)
    return child.start_mark.line + 1 if child is not None else None
