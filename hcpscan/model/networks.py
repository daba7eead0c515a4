"""CIDRs as manifests state them, normalised one way for every consumer of the model."""

from __future__ import annotations

import ipaddress
from typing import Any

from hcpscan.model.ipspace import AddressError, parse_network


def network(text: Any) -> str | None:
    """``10.0.0.5/16`` -> ``10.0.0.0/16`` (host bits masked, as the API server does);
    None for anything that is not a CIDR or address (validity rules report those)."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return str(parse_network(text, strict=False))
    except AddressError:
        return None


def cidrs(entries: Any, key: str | None = "cidr") -> tuple[str, ...]:
    """The networks of a list: of mappings holding ``key`` (HyperShift's and OpenShift's
    ``[{cidr: ...}]``) or, with ``key=None``, of plain strings (Cluster API's
    ``cidrBlocks``). Order kept, duplicates and non-CIDRs left out."""
    out: list[str] = []
    for entry in entries if isinstance(entries, list) else []:
        value = entry.get(key) if key is not None and isinstance(entry, dict) else entry
        found = network(value) if key is None or isinstance(entry, dict) else None
        if found is not None:
            out.append(found)
    return tuple(dict.fromkeys(out))


def first_host(cidr: str) -> str | None:
    """The first usable address of a network: the kubernetes Service's IP in a service CIDR."""
    try:
        net = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return None
    return str(net.network_address + 1) if net.num_addresses > 1 else str(net.network_address)
