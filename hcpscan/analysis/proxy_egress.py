"""Can a workload open a connection to the proxy its clients are told to use?

The two engines answer together: the proxy model says which endpoint (host and
port) a container's HTTP(S)_PROXY names; the reachability graph says which
outside addresses NetworkPolicy egress (and an EgressFirewall) lets the
workload's pods open that port to. A proxy named by IP is judged exactly; a
proxy named by host name is judged exactly when no address or every address is
allowed on its port, or when the user says what the name resolves to
(``inputs.proxy_addresses``); otherwise the answer says what is missing. A proxy
named by host name is resolved first: ``proxy_dns`` says whether the workload's pods
may ask the cluster's DNS pods (on the port they listen on after the DNS Service's
DNAT, as HCP004/HCP008 read it) at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.proxy.containers import pod_spec
from hcpscan.analysis.proxy.hosts import to_ascii
from hcpscan.analysis.proxy.settings import ConsumerProxy
from hcpscan.analysis.proxy.target import TargetError, parse_target
from hcpscan.analysis.reachability.graph import ReachabilityGraph
from hcpscan.analysis.reachability.queries import dns_pods
from hcpscan.inventory import Inventory, K8sObject
from hcpscan.model.ipspace import AddressError, IPSpace, parse_network

# The port a client uses for a proxy URL without one (Go's net/http, curl and the rest agree).
DEFAULT_PROXY_PORTS = {"http": 80, "https": 443, "socks5": 1080, "socks5h": 1080}
ALLOWED, BLOCKED, UNKNOWN = "allowed", "blocked", "unknown"


@dataclass(frozen=True, slots=True)
class ProxyEndpoint:
    host: str  # lower case, without brackets
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def in_cluster(self) -> bool:
        """A Service name (``squid.proxy.svc``, ``squid.proxy.svc.cluster.local``) or a
        single label: egress to it is pod-to-pod, not to the outside."""
        try:
            parse_network(self.host)
            return False
        except AddressError:
            return "." not in self.host or self.host.endswith((".svc", ".svc.cluster.local"))


    @property
    def by_name(self) -> bool:
        """Named by a host name the client must resolve (not an address)."""
        try:
            parse_network(self.host)
            return False
        except AddressError:
            return True


@dataclass(frozen=True, slots=True)
class ProxyEgress:
    endpoint: ProxyEndpoint
    verdict: str  # ALLOWED, BLOCKED or UNKNOWN
    reason: str
    evidence: tuple[str, ...] = ()
    missing: IPSpace | None = None  # BLOCKED with known addresses: the part not allowed


def proxy_endpoint(url: str) -> ProxyEndpoint | None:
    """The host and port a client dials for a proxy URL (``http://`` when it has no
    scheme, as Go, curl and Python read it); None when the URL names no host or port."""
    text = url.strip()
    try:  # the one URL reader of the proxy model: userinfo ends at the last '@', no NFKC error
        target = parse_target(text if "://" in text else f"http://{text}")
    except TargetError:  # a port that is not a number, no host: the validity rule reports it
        return None
    host, port = to_ascii(target.host), target.port or DEFAULT_PROXY_PORTS.get(target.scheme)
    return ProxyEndpoint(host.lower(), port) if host and port is not None else None


def proxy_endpoints(consumer: ConsumerProxy) -> list[ProxyEndpoint]:
    """The distinct proxy endpoints of a consumer's effective HTTP_PROXY/HTTPS_PROXY."""
    found = (proxy_endpoint(s.value) for s in (consumer.https_proxy, consumer.http_proxy)
             if s is not None and s.value)
    return list(dict.fromkeys(e for e in found if e is not None))


def _addresses(endpoint: ProxyEndpoint, configured: dict[str, list[str]]) -> IPSpace | None:
    try:
        return IPSpace.from_networks([parse_network(endpoint.host)])
    except AddressError:
        pass
    cidrs = configured.get(endpoint.host)
    return IPSpace.from_networks(parse_network(c, strict=False) for c in cidrs) if cidrs else None


def proxy_egress(graph: ReachabilityGraph, workload: str, endpoint: ProxyEndpoint,
                 configured: dict[str, list[str]]) -> ProxyEgress:
    """Whether ``workload`` (a graph name, ``cluster:ns/name[Kind]``) may open TCP to
    ``endpoint`` under egress policy; ``configured`` maps proxy host names to addresses."""
    if endpoint.in_cluster:
        return ProxyEgress(endpoint, UNKNOWN, f"{endpoint} is an in-cluster name; egress to "
                                              "pods is not judged here (see `hcpscan "
                                              "connectivity --from`)")
    egress = graph.egress_outside(workload, endpoint.port, "TCP")
    evidence = tuple(str(e) for e in egress.evidence)
    if not egress.isolated:
        return ProxyEgress(endpoint, ALLOWED, "no NetworkPolicy isolates its egress", evidence)
    wanted = _addresses(endpoint, configured)
    if wanted is not None:
        missing = wanted - egress.allowed
        if not missing:
            return ProxyEgress(endpoint, ALLOWED, f"egress to {wanted} on TCP {endpoint.port} is "
                                                  "allowed", evidence)
        return ProxyEgress(endpoint, BLOCKED, f"egress to {missing} on TCP {endpoint.port} is not "
                                              "allowed", evidence, missing)
    if egress.blocked:
        # the addresses are not known: missing stays None
        return ProxyEgress(endpoint, BLOCKED, f"egress on TCP {endpoint.port} is allowed to no "
                                              "outside address", evidence)
    if egress.allowed.contains(IPSpace.all_v4()) and egress.allowed.contains(IPSpace.all_v6()):
        return ProxyEgress(endpoint, ALLOWED, f"egress on TCP {endpoint.port} is allowed to every "
                                              "address", evidence)
    return ProxyEgress(endpoint, UNKNOWN,
                       f"egress on TCP {endpoint.port} is allowed only to {egress.allowed}; "
                       f"whether {endpoint.host} resolves there is not in the input: set "
                       f"inputs.proxy_addresses: {{{endpoint.host}: [<address>]}}", evidence)


# The pod dnsPolicy values that send a pod's lookups to the cluster's DNS Service.
CLUSTER_DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet")


def proxy_dns(graph: ReachabilityGraph, inventory: Inventory, workload: str, obj: K8sObject,
              endpoint: ProxyEndpoint) -> ProxyEgress | None:
    """BLOCKED when the workload's pods must resolve the proxy's host name through the
    cluster's DNS and their egress opens UDP to none of the DNS pods' ports (the stub
    resolvers of Go, glibc and musl ask over UDP first; TCP only for a truncated answer);
    None when that is not so or not asked: an address, an in-cluster name, a name the pod
    spec's hostAliases give, a dnsPolicy that asks another resolver, or pods whose egress
    no policy isolates."""
    if not endpoint.by_name or endpoint.in_cluster:
        return None
    spec: Any = pod_spec(obj)
    spec = spec if isinstance(spec, dict) else {}
    if spec.get("dnsPolicy", "ClusterFirst") not in CLUSTER_DNS_POLICIES or (
            spec.get("hostNetwork") is True and spec.get("dnsPolicy") != "ClusterFirstWithHostNet"):
        return None
    aliases = spec.get("hostAliases")
    if isinstance(aliases, list) and any(
            isinstance(a, dict) and isinstance(a.get("hostnames"), list)
            and endpoint.host in {str(h).lower().rstrip(".") for h in a["hostnames"]}
            for a in aliases):
        return None
    ports, note, pods = dns_pods(inventory, obj.cluster)
    isolated, opened = graph.egress_to_pods(workload, pods)
    if not isolated or any(opened.allows("UDP", p) for p in ports):
        return None
    where = " or ".join(p.namespace + (f" ({', '.join(f'{k}={v}' for k, v in p.labels.items())})"
                                       if p.labels else "") for p in pods)
    blocker = graph.egress_to_pods_evidence(workload, pods, "UDP", ports[0],
                                            f"the DNS pods in {where}")
    shown = " or ".join(map(str, ports))
    return ProxyEgress(
        endpoint, BLOCKED,
        f"its pods cannot resolve the proxy's host name {endpoint.host}: egress opens no UDP "
        f"{shown} to the DNS pods in {where} (to them it opens {opened or 'nothing'})",
        ((str(blocker),) if blocker is not None else ()) + (note,))
