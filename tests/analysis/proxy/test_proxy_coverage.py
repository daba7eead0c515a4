"""Does every address of a network (or name of a domain) bypass the proxy?"""

from __future__ import annotations

import pytest

from hcpscan.analysis.proxy.coverage import covers_cidr, covers_domain


def test_a_narrower_entry_does_not_cover_the_pod_network() -> None:
    result = covers_cidr("go", "10.128.0.0/16", "10.128.0.0/14")
    assert result.covered is False
    assert result.uncovered == ("10.129.0.0/16", "10.130.0.0/15")
    assert result.example == "10.129.0.0"


def test_a_wider_entry_covers_it() -> None:
    result = covers_cidr("go", ".svc,10.0.0.0/8", "10.128.0.0/14")
    assert (result.covered, result.by) == (True, ("10.0.0.0/8",))


def test_pieces_add_up() -> None:
    assert covers_cidr("curl", "10.128.0.0/15,10.130.0.0/15", "10.128.0.0/14").covered is True


@pytest.mark.parametrize("runtime", ["python", "node-undici", "proxy-from-env", "wget"])
def test_clients_without_cidr_support_are_never_covered_by_a_cidr(runtime: str) -> None:
    result = covers_cidr(runtime, "10.0.0.0/8", "10.128.0.0/14")
    assert result.covered is False and result.example == "10.128.0.0"


@pytest.mark.parametrize("runtime", ["go", "curl", "requests", "ruby", "java"])
def test_a_host_name_list_never_covers_a_cidr(runtime: str) -> None:
    assert covers_cidr(runtime, ".svc,.cluster.local,example.com", "172.30.0.0/16").covered is False


def test_go_loopback_is_always_covered() -> None:
    assert covers_cidr("go", "", "127.0.0.0/8").covered is True


def test_java_prefix_glob_is_a_network() -> None:
    assert covers_cidr("java", "10.*", "10.128.0.0/14").covered is True
    assert covers_cidr("java", "10.12*", "10.128.0.0/14").example == "10.130.0.0"  # 10.12x only
    assert covers_cidr("java", "10.12*|10.13*", "10.128.0.0/14").covered is True
    assert covers_cidr("java", "10.128.*", "10.128.0.0/14").covered is False


def test_a_port_entry_covers_only_that_port() -> None:
    assert covers_cidr("go", "10.0.0.1:443", "10.0.0.1/32", port=443).covered is True
    assert covers_cidr("go", "10.0.0.1:443", "10.0.0.1/32", port=80).covered is False


def test_text_rules_are_checked_address_by_address() -> None:
    assert covers_cidr("python", "10.0.0.1", "10.0.0.1/32").covered is True
    assert covers_cidr("python", "10.0.0.1", "10.0.0.0/31").covered is False


def test_ipv6() -> None:
    assert covers_cidr("go", "fd00::/8", "fd01:2::/64").covered is True
    assert covers_cidr("curl", "fd00::/8", "fd01:2::/64").covered is True
    assert covers_cidr("go", "10.0.0.0/8", "fd01:2::/64").covered is False


def test_domain_coverage_depends_on_the_leading_dot() -> None:
    assert covers_domain("go", ".cluster.local", "svc.cluster.local").covered is True
    apex = covers_domain("go", ".cluster.local", "cluster.local")
    assert apex.covered is False and apex.example == "cluster.local"
    assert covers_domain("go", ".cluster.local", "cluster.local", include_apex=False).covered
    assert covers_domain("curl", ".cluster.local", "cluster.local").covered is True


def test_domain_coverage_ignores_entries_for_single_hosts() -> None:
    assert covers_domain("go", "api.example.com", "example.com").covered is False
