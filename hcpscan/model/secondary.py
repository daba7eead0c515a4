"""The secondary networks a KubeVirt NodePool attaches its VMs to, and their CIDRs.

``spec.platform.kubevirt.additionalNetworks[].name`` names a
NetworkAttachmentDefinition (``<ns>/<name>``; a bare name is looked up in the HCP
namespace, where the VMs run). Its CIDR is in the NAD's CNI config (``spec.config``
JSON: ``ipam.subnet``, whereabouts ``ipam.range``/``ipRanges``, host-local ``ipam.ranges``,
OVN-Kubernetes ``subnets``), or, for an OVN-Kubernetes ClusterUserDefinedNetwork
(which creates a NAD of its own name in the namespaces it selects), in
``spec.network.<topology>.subnets``. When no manifest states it (an empty ``ipam``,
DHCP, IPAM disabled) only the user knows it: ``inputs.secondary_networks`` in the
config (DOMAIN.md §3; nothing adds it to noProxy, seed 000).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from hcpscan.core.yamldocs import load_json
from hcpscan.inventory.fieldpath import Step, format_path, mapping_at
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.store import Inventory
from hcpscan.model.hostedcluster import hosted_cluster_named

KUBEVIRT: tuple[Step, ...] = ("spec", "platform", "kubevirt")
OVN_GROUP = "k8s.ovn.org"
CONFIG_ORIGIN = "config inputs.secondary_networks"


@dataclass(frozen=True, slots=True)
class SecondaryNetwork:
    name: str  # as the NodePool writes it
    field: str  # the NodePool field naming it
    cidrs: tuple[str, ...]
    origin: str  # where the CIDRs were read
    missing: str = ""  # no CIDR known: which object says nothing, and what to set


def attaches_default_network(nodepool: K8sObject) -> bool:
    """``attachDefaultNetwork`` defaults to true."""
    return nodepool.get(KUBEVIRT + ("attachDefaultNetwork",)) is not False


def secondary_networks(inventory: Inventory, nodepool: K8sObject,
                       configured: dict[str, list[str]]) -> list[SecondaryNetwork]:
    networks = nodepool.get(KUBEVIRT + ("additionalNetworks",))
    out = []
    for i, item in enumerate(networks if isinstance(networks, list) else []):
        name = item.get("name") if isinstance(item, dict) else None
        if isinstance(name, str) and name:
            field = format_path(KUBEVIRT + ("additionalNetworks", i, "name"))
            out.append(_network(inventory, nodepool, name, field, configured))
    return out


def _input_hint(name: str) -> str:
    return (f"input the user must supply: its CIDRs in the config (--config FILE, default "
            f".hcpscan.yaml) as inputs: {{secondary_networks: {{\"{name}\": [<CIDR>, ...]}}}}")


def _network(inventory: Inventory, nodepool: K8sObject, name: str, field: str,
             configured: dict[str, list[str]]) -> SecondaryNetwork:
    if name in configured:
        return SecondaryNetwork(name, field, tuple(configured[name]), CONFIG_ORIGIN)
    namespace, slash, nad_name = name.partition("/")
    if not slash:  # a bare name is looked up where the VMs run: the HCP namespace
        hc_name = str(nodepool.get("spec.clusterName") or "")
        hc = hosted_cluster_named(inventory, nodepool.cluster, nodepool.namespace, hc_name)
        namespace, nad_name = (hc.control_plane_namespace if hc else nodepool.namespace), name
    nad = inventory.get("NetworkAttachmentDefinition", namespace, nad_name, nodepool.cluster)
    cudn = next((o for o in inventory.query("ClusterUserDefinedNetwork", name=nad_name,
                                             cluster=nodepool.cluster) if o.group == OVN_GROUP), None)
    if nad is not None:
        cidrs, why, settable = _nad(nad)
        if cidrs:
            return SecondaryNetwork(name, field, tuple(cidrs), f"{nad.ref} spec.config")
        if cudn is None:
            return SecondaryNetwork(name, field, (), nad.ref, f"{nad.ref}: {why}; {_input_hint(name)}"
                                    + (", or give the NAD an ipam range (ipam.range, ipam.subnet "
                                       "or ipam.ranges)" if settable else ""))
    if cudn is not None:
        cidrs, why = cudn_cidrs(cudn)
        if cidrs:
            return SecondaryNetwork(name, field, tuple(cidrs), f"{cudn.ref} spec.network")
        return SecondaryNetwork(name, field, (), cudn.ref, f"{cudn.ref}: {why}; {_input_hint(name)}")
    return SecondaryNetwork(name, field, (), "", f"NetworkAttachmentDefinition {namespace}/{nad_name} "
                            f"is not in the input; include it, or {_input_hint(name)}")


def whereabouts_networks(ipam: dict[str, Any]) -> list[str]:
    """The networks of a whereabouts ``ipam``: its ``range`` and each ``ipRanges[].range``
    (whereabouts' pkg/config: the top-level range is the first of ``ipRanges``). A range is
    a CIDR whose host bits may be set (``192.168.2.225/28``: network 192.168.2.224/28) or
    ``<first IP>-<CIDR>`` (``192.168.2.225-192.168.2.230/28``, the CIDR's address being the
    last IP); ``range_start``, ``range_end`` and ``exclude`` narrow which addresses pods get
    in the network, not the network the interface is on, which is what clients reach."""
    ranges = [ipam.get("range")] + [r.get("range") for r in ipam.get("ipRanges") or []
                                     if isinstance(r, dict)]
    return [text.split("-", 1)[1] if "-" in text else text
            for text in (r.strip() for r in ranges if isinstance(r, str)) if text]


def _valid(found: list[str]) -> list[str]:
    valid = []
    for cidr in found:
        try:
            valid.append(str(ipaddress.ip_network(cidr.strip(), strict=False)))
        except ValueError:
            continue
    return list(dict.fromkeys(valid))


def nad_cidrs(nad: K8sObject) -> tuple[list[str], str]:
    """CIDRs of a NetworkAttachmentDefinition's CNI config (``spec.config`` JSON):
    ``ipam.subnet``, ``ipam.range`` (whereabouts), ``ipam.ranges[][].subnet``
    (host-local) and OVN-Kubernetes ``subnets``; and why none were found."""
    cidrs, why, _settable = _nad(nad)
    return cidrs, why


def _nad(nad: K8sObject) -> tuple[list[str], str, bool]:
    """nad_cidrs, and whether an ipam range in the NAD is the fix (its ipam is empty, not
    DHCP or static addresses)."""
    text = nad.get("spec.config")
    if not isinstance(text, str) or not text.strip():
        return [], "it has no spec.config", False
    try:
        config = load_json(text)
    except ValueError:
        return [], "its spec.config is not JSON", False
    found: list[str] = []
    types: list[str] = []
    for conf in [config, *(config.get("plugins") or [])] if isinstance(config, dict) else []:
        if not isinstance(conf, dict):
            continue
        ipam = mapping_at(conf, "ipam")
        types += [str(ipam["type"])] if ipam.get("type") else []
        if isinstance(ipam.get("subnet"), str):
            found.append(ipam["subnet"])
        found += whereabouts_networks(ipam)
        for rangeset in ipam.get("ranges") or []:
            for rng in rangeset if isinstance(rangeset, list) else [rangeset]:
                if isinstance(rng, dict) and isinstance(rng.get("subnet"), str):
                    found.append(rng["subnet"])
        if isinstance(conf.get("subnets"), str):
            found += [s.strip() for s in conf["subnets"].split(",") if s.strip()]
    if types and not found:
        return [], (f"its ipam type {', '.join(types)} assigns addresses no manifest states "
                    "(its CNI config names no ipam subnet)"), False
    return _valid(found), "its CNI config has an empty ipam: it names no ipam subnet", True


def cudn_cidrs(cudn: K8sObject) -> tuple[list[str], str]:
    """Subnets of a ClusterUserDefinedNetwork (``spec.network.<topology>.subnets``: CIDR
    strings, or ``{cidr}`` for layer3), and why none were found."""
    network = cudn.get("spec.network")
    topology = network.get("topology") if isinstance(network, dict) else None
    layer_key = topology[:1].lower() + topology[1:] if isinstance(topology, str) and topology else ""
    layer: Any = network.get(layer_key) if isinstance(network, dict) and layer_key else None
    if not isinstance(layer, dict):
        return [], "its spec.network names no topology with subnets"
    ipam = mapping_at(layer, "ipam")
    if str(ipam.get("mode", "")).lower() == "disabled":
        return [], (f"IPAM is disabled (spec.network.{layer_key}.ipam.mode: Disabled), so no "
                    "manifest states its CIDR")
    subnets = layer.get("subnets") or []
    found = [s if isinstance(s, str) else s.get("cidr", "") for s in subnets
             if isinstance(s, str) or isinstance(s, dict)]
    cidrs = _valid([c for c in found if isinstance(c, str)])
    return cidrs, f"spec.network.{layer_key} has no subnets"
