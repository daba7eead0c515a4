"""Each client's reading of NO_PROXY, one behaviour per test; Python clients are
also checked against the real urllib and requests installed here."""

from __future__ import annotations

import itertools
import urllib.request

import pytest
import requests.utils as utils  # installed with the kubernetes client

from hcpscan.analysis.proxy.noproxy import RUNTIME_NAMES, UnknownRuntime, bypasses
from hcpscan.analysis.proxy.target import TargetError, parse_target


def direct(runtime: str, no_proxy: str | None, url: str) -> bool:
    return bypasses(runtime, no_proxy, url).bypass


@pytest.mark.parametrize("runtime,expected", [
    ("go", False), ("curl", True), ("python", True), ("requests", True), ("node-undici", True),
    ("proxy-from-env", False), ("ruby", False), ("wget", False)])
def test_leading_dot_and_the_apex(runtime: str, expected: bool) -> None:
    assert direct(runtime, ".example.com", "https://example.com") is expected


@pytest.mark.parametrize("runtime,expected", [
    ("go", True), ("curl", True), ("python", False), ("requests", True), ("node-undici", False),
    ("proxy-from-env", False), ("ruby", True), ("wget", False)])
def test_cidr_entries(runtime: str, expected: bool) -> None:
    assert direct(runtime, "10.128.0.0/14", "https://10.130.4.5") is expected


@pytest.mark.parametrize("runtime,expected", [
    ("go", True), ("curl", False), ("python", False), ("requests", False), ("node-undici", True),
    ("proxy-from-env", True), ("ruby", False), ("wget", False)])
def test_star_dot_wildcard(runtime: str, expected: bool) -> None:
    assert direct(runtime, "*.example.com", "https://www.example.com") is expected


@pytest.mark.parametrize("runtime", ["curl", "python", "requests", "node-undici@7"])
def test_a_star_only_disables_the_proxy_when_it_is_the_whole_value(runtime: str) -> None:
    assert direct(runtime, "*", "https://anything.example") is True
    assert direct(runtime, "internal,*", "https://anything.example") is False


def test_go_star_anywhere_disables_the_proxy() -> None:
    assert direct("go", "internal, *", "https://anything.example") is True


def test_proxy_from_env_star_entry_is_an_empty_suffix_that_matches_everything() -> None:
    assert direct("proxy-from-env", "internal,*", "https://anything.example") is True


def test_go_never_proxies_loopback_whatever_the_list() -> None:
    assert bypasses("go", "", "http://127.0.0.53:8080").matched == "<loopback>"
    assert direct("go", "", "http://localhost") is True
    assert direct("go", "", "http://[::ffff:127.0.0.1]/") is True


def test_go_domain_entries_do_not_match_ip_hosts() -> None:
    assert direct("go", "0.0.1", "http://10.0.0.1") is False
    assert direct("python", "0.0.1", "http://10.0.0.1") is True  # urllib compares text


def test_go_ipv4_entry_matches_ipv4_mapped_host() -> None:
    assert direct("go", "10.1.2.3", "http://[::ffff:10.1.2.3]/") is True


def test_go_port_entries_compare_the_default_port() -> None:
    assert direct("go", "example.com:443", "https://example.com/") is True
    assert direct("go", "example.com:443", "http://example.com/") is False


def test_curl_space_separated_list_stops_after_the_first_entry() -> None:
    assert direct("curl", "localhost example.com", "http://example.com") is False
    assert direct("curl", "localhost, example.com", "http://example.com") is True


def test_curl_cidr_zero_means_the_exact_address() -> None:
    assert direct("curl", "0.0.0.0/0", "http://10.0.0.1") is False
    assert direct("go", "0.0.0.0/0", "http://10.0.0.1") is True


def test_curl_ignores_ports_in_entries() -> None:
    assert direct("curl", "example.com:443", "https://example.com") is False


def test_undici_leading_dot_matches_the_apex_but_proxy_from_env_does_not() -> None:
    assert direct("node-undici", ".example.com", "http://example.com") is True
    assert direct("proxy-from-env", ".example.com", "http://example.com") is False


def test_proxy_from_env_star_prefix_is_a_plain_suffix() -> None:
    assert direct("proxy-from-env", "*example.com", "http://notexample.com") is True
    assert direct("node-undici", "*example.com", "http://notexample.com") is False


def test_node_port_zero_means_the_default_port() -> None:
    assert direct("node-undici", "example.com:80", "http://example.com:0/") is True


def test_ruby_leading_dot_is_subdomains_only_and_no_wildcard() -> None:
    assert direct("ruby", ".example.com", "http://example.com") is False
    assert direct("ruby", ".example.com", "http://a.example.com") is True
    assert direct("ruby", "*", "http://a.example.com") is False


def test_ruby_loopback_and_localhost_are_direct() -> None:
    assert direct("ruby", "", "http://localhost:8080") is True
    assert direct("ruby", "", "http://127.0.0.1") is True


def test_ruby_ipv6_entries_fall_apart_at_colons() -> None:
    assert direct("ruby", "2001:db8::1", "http://[2001:db8::1]/") is False


def test_ruby_entry_port_must_match() -> None:
    assert direct("ruby", "example.com:8080", "http://example.com:8080") is True
    assert direct("ruby", "example.com:8080", "http://example.com") is False


def test_java_reads_pipe_separated_globs_not_commas() -> None:
    assert direct("java", "*.example.com|10.*", "http://10.1.2.3") is True
    assert direct("java", "*.example.com,10.*", "http://10.1.2.3") is False
    assert direct("java", "*.example.com", "http://example.com") is False


def test_java_default_list_and_an_empty_property() -> None:
    assert bypasses("java", None, "http://localhost").matched == "<default> localhost"
    assert direct("java", "", "http://localhost") is False
    assert direct("java", "internal.example.com", "http://127.0.0.1") is True  # default appended


def test_wget_only_compares_text_on_a_dot_boundary() -> None:
    assert direct("wget", "example.com", "http://www.example.com") is True
    assert direct("wget", "example.com", "http://notexample.com") is False
    assert direct("wget", "10.0.0.0/8", "http://10.1.2.3") is False


def test_matched_entry_is_reported_as_written() -> None:
    assert bypasses("go", " .Example.COM ", "https://a.example.com").matched == ".Example.COM"


def test_unknown_runtime_is_an_error() -> None:
    with pytest.raises(UnknownRuntime):
        bypasses("perl", "", "http://x")


@pytest.mark.parametrize("text,host,port,scheme", [
    ("https://user:pw@Example.com:8443/p?q#f", "Example.com", 8443, "https"),
    ("example.com:80", "example.com", 80, ""),
    ("[2001:db8::1]:443", "2001:db8::1", 443, ""),
    ("2001:db8::1", "2001:db8::1", None, ""),
    ("http://[fe80::1%25eth0]/", "fe80::1%eth0", None, "http"),
])
def test_target_parsing(text: str, host: str, port: int | None, scheme: str) -> None:
    target = parse_target(text)
    assert (target.host, target.port, target.scheme) == (host, port, scheme)


@pytest.mark.parametrize("text", ["", "http://[::1", "http://example.com:http/", "http://:80/"])
def test_target_parsing_rejects(text: str) -> None:
    with pytest.raises(TargetError):
        parse_target(text)


LISTS = ["example.com", ".example.com", "*.example.com", "ample.com", "example.com:8080",
         "10.0.0.0/8", "10.1.2.3", "[::1]", "::1", "*", " example.com , foo", "EXAMPLE.com", ".",
         "2001:db8::1", "10.0.0.0/33", "localhost", "foo,*", "1.2.3", "example.com.",
         "www.example.com:80", "10.1/16", "..example.com"]
URLS = ["http://example.com", "https://www.example.com", "http://example.com:8080/x",
        "http://nexample.com", "http://10.1.2.3", "http://10.1.2.3:80", "http://[::1]:80/",
        "http://[2001:db8::1]/", "http://localhost", "http://www.EXAMPLE.com",
        "http://example.com./", "http://11.1.2.3", "http://www.example.com:80/", "http://10.1/"]


def test_python_agrees_with_the_real_urllib() -> None:
    for no_proxy, url in itertools.product(LISTS, URLS):
        real = bool(urllib.request.proxy_bypass_environment(urllib.request.Request(url).host,
                                                            {"no": no_proxy}))
        assert direct("python", no_proxy, url) is real, (no_proxy, url)


def test_requests_agrees_with_the_real_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for no_proxy, url in itertools.product(LISTS, URLS):
        assert direct("requests", no_proxy, url) is bool(utils.should_bypass_proxies(
            url, no_proxy=no_proxy)), (no_proxy, url)


def test_every_runtime_answers() -> None:
    assert len(RUNTIME_NAMES) == 9
    for name in RUNTIME_NAMES:
        assert bypasses(name, "example.com|example.com", "https://10.9.9.9").bypass is False


def test_runtime_neutral_entry_classification() -> None:
    from hcpscan.analysis.proxy import parse_no_proxy

    entries = parse_no_proxy(" .svc, *.apps.example.com ,example.com:8443,10.128.0.0/14,"
                             "[fd00::1]:443,172.30.0.1,*,bad*entry,10.0.0.0/99,")
    assert [(e.kind, e.host, e.port) for e in entries] == [
        ("subdomains", "svc", None), ("subdomains", "apps.example.com", None),
        ("domain", "example.com", 8443), ("cidr", "10.128.0.0", None), ("ip", "fd00::1", 443),
        ("ip", "172.30.0.1", None), ("wildcard", "", None), ("invalid", "", None),
        ("invalid", "", None)]
    assert str(entries[3].network) == "10.128.0.0/14"
