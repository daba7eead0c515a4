"""The generated cases themselves: every address they name stays inside the
namespace, and each group's URLs can be told apart by the recording proxy."""

from __future__ import annotations

import ipaddress

from .cases import (
    HOSTS,
    LOCAL_RANGES,
    VARIABLES,
    env_groups,
    fact_groups,
    java_groups,
    proxy_address,
    url_key,
    variable_of,
)


def _inside(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return ip.is_loopback or any(ip in ipaddress.ip_network(r) for r in LOCAL_RANGES)


def test_every_target_address_is_loopback_or_routed_to_lo() -> None:
    for host in HOSTS:
        try:
            ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            assert host.rstrip(".").lower().endswith(".test") or host == "localhost", host
            continue
        assert _inside(host.strip("[]")), host


def test_every_proxy_is_a_loopback_address_naming_its_variable_and_group() -> None:
    for gid in (1, 255, 256, 4000):
        for var in VARIABLES:
            address = proxy_address(var, gid)
            assert ipaddress.ip_address(address).is_loopback
            assert variable_of(address) == (var, gid)


def test_groups_are_seeded_and_their_urls_distinct() -> None:
    assert env_groups(7, 20) == env_groups(7, 20) and env_groups(7, 20) != env_groups(8, 20)
    for group in env_groups(7, 50) + java_groups(7, 50) + fact_groups():
        keys = [url_key(u) for u in group.urls]
        assert len(set(keys)) == len(keys), group
