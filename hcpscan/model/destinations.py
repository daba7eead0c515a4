"""Where a workload's traffic goes, by name: the destinations a ``reach`` check may name.

* ``outside``: any address outside the cluster. Needing "the outside" (a registry, a
  cloud API, the proxy) is met when egress reaches some outside address: which one is
  not in the manifests.
* ``management-kas``: the management cluster's API server, as the endpoints of its
  ``default/kubernetes`` Service (NetworkPolicy applies after the Service's DNAT, so the
  endpoints count, not the ClusterIP); needed at every endpoint, since the Service
  balances over all of them (DOMAIN.md §3, the ``management-kas`` policy).
* ``hosted-kas``: from inside a hosted cluster (its guest pods), that cluster's own API
  server. It runs outside the guest, in the HCP namespace of the management cluster;
  guest pods reach it through the ``kubernetes`` Service (172.30.0.1:443), whose
  endpoint is the node-local proxy on every compute node at the advertise address
  (172.20.0.1:6443 by default; seeds 000 and 001: "a local proxy in every compute node
  that listens on IP address 172.20.0.1 and forwards traffic to the API server"). Egress
  policies apply after the Service's DNAT, so that address and port count.
* ``proxy``: the hosted cluster's proxy, the host and port of its
  ``spec.configuration.proxy`` httpsProxy (else httpProxy) URL; the compute nodes'
  clients take it (seed 001 §14.2: compute nodes that need a proxy). A host name is
  some outside address: which one is not in the manifests.
* ``dns``: the cluster's DNS on any peer: the ``dns-default`` Service port 53, the port
  5353 OpenShift's DNS pods listen on, or an upstream resolver on 53 (DOMAIN.md §2).

Also where a listener binds: an address on loopback is reached from inside its pod only.
"""

from __future__ import annotations

import ipaddress
import re

from hcpscan.inventory import Inventory
from hcpscan.model.ipspace import IPSpace

OUTSIDE, MANAGEMENT_KAS, DNS, HOSTED_KAS = "outside", "management-kas", "dns", "hosted-kas"
PROXY = "proxy"
NAMED_DESTINATIONS = (OUTSIDE, MANAGEMENT_KAS, DNS)  # a `reach` check's; hosted-kas is a flow's
DNS_PORTS = (53, 5353)
DISPLAY = {OUTSIDE: "outside addresses", MANAGEMENT_KAS: "the management API server", DNS: "DNS",
           HOSTED_KAS: "the hosted cluster's API server", PROXY: "the hosted cluster's proxy"}

# host:port with a loopback host; the port may be empty in no listener we know of.
_LOOPBACK_BIND = re.compile(r"^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\]):\d+$")


def management_kas_endpoints(inventory: Inventory, cluster: str) -> IPSpace | None:
    """The management API server's addresses: the default/kubernetes Endpoints (or
    EndpointSlices) of the cluster; None when the input holds neither."""
    addresses: list[str] = []
    endpoints = inventory.get("Endpoints", "default", "kubernetes", cluster)
    for subset in (endpoints.get("subsets") or []) if endpoints is not None else []:
        for address in (subset.get("addresses") or []) if isinstance(subset, dict) else []:
            if isinstance(address, dict) and isinstance(address.get("ip"), str):
                addresses.append(address["ip"])
    for eps in inventory.query("EndpointSlice", namespace="default", cluster=cluster):
        if eps.labels.get("kubernetes.io/service-name") != "kubernetes":
            continue
        for endpoint in eps.get("endpoints") or []:
            if isinstance(endpoint, dict):
                addresses += [a for a in endpoint.get("addresses") or [] if isinstance(a, str)]
    valid = [a for a in dict.fromkeys(addresses) if _is_address(a)]
    return IPSpace.from_cidrs(valid) if valid else None


def proxy_endpoint(proxy: dict[str, object]) -> tuple[str, int, str] | None:
    """(host, port, field) of a HostedCluster's ``spec.configuration.proxy``: the
    httpsProxy URL, else httpProxy (their clients connect to it in plain TCP first); the
    port defaults to the scheme's (80, 443). None when neither is a usable URL."""
    from urllib.parse import urlsplit

    for key in ("httpsProxy", "httpProxy"):
        value = proxy.get(key)
        if not isinstance(value, str) or not value.strip():
            continue
        text = value.strip()
        try:  # a malformed URL (an unclosed IPv6 bracket, a port out of range) names none
            parts = urlsplit(text if "://" in text else f"http://{text}")
            port = parts.port
        except ValueError:
            continue
        if not parts.hostname:
            continue
        default = 443 if parts.scheme == "https" else 80
        return parts.hostname, port or default, f"spec.configuration.proxy.{key}"
    return None


def address_space(host: str) -> IPSpace | None:
    """The address ``host`` names when it is an IP literal; None for a host name."""
    return IPSpace.from_cidrs([host]) if _is_address(host) else None


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def binds_loopback(address: str) -> bool:
    """``127.0.0.1:8080``, ``localhost:8080``, ``[::1]:8080``: reached from inside the pod only
    (``:8080`` and ``0.0.0.0:8080`` listen on every address of the pod)."""
    return bool(_LOOPBACK_BIND.match(address))
