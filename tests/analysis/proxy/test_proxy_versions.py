"""Versioned runtimes: each release range's own reading of NO_PROXY, and the
errors for versions hcpscan does not model."""

from __future__ import annotations

import pytest

from hcpscan.analysis.proxy.env import evaluate_env
from hcpscan.analysis.proxy.noproxy import (
    RUNTIME_NAMES,
    UnknownRuntime,
    bypasses,
    era_refs,
    runtime_ref,
)
from hcpscan.analysis.proxy.versions import configured_versions, consumer_runtime, infer_from_image


def direct(runtime: str, no_proxy: str, url: str) -> bool:
    return bypasses(runtime, no_proxy, url).bypass


def test_a_bare_name_is_the_newest_modelled_release() -> None:
    assert runtime_ref("node-undici").era_label == ">= 8.11, < 9.0"
    assert runtime_ref("curl").era_label == ">= 8.18, < 9.0"
    assert runtime_ref("curl").version_given is None
    assert runtime_ref("curl@7.88").era_label == ">= 7.86, < 8.9"


@pytest.mark.parametrize("text", ["curl@6.1", "node-undici@9", "curl@x.y", "nosuch@1",
                                  "proxy-from-env@0.9"])
def test_unknown_versions_are_refused_with_what_is_known(text: str) -> None:
    with pytest.raises(UnknownRuntime) as err:
        runtime_ref(text)
    assert "known" in str(err.value)


def test_every_runtime_documents_its_ranges() -> None:
    for name in RUNTIME_NAMES:
        eras = era_refs(name)
        assert eras and all(r.era_label for r in eras)


@pytest.mark.parametrize("version,expected", [("7.88", False), ("8.17.1", False), ("8.18", True)])
def test_curl_ipv6_cidr_matches_from_8_18(version: str, expected: bool) -> None:
    assert direct(f"curl@{version}", "fd00::/8", "http://[fd00::1]/") is expected
    assert direct(f"curl@{version}", "fd00::1", "http://[fd00::1]/") is True


@pytest.mark.parametrize("version,expected", [("7.88", True), ("8.9", False), ("8.18", False)])
def test_curl_blank_separated_entries_before_8_9(version: str, expected: bool) -> None:
    assert direct(f"curl@{version}", "localhost .example.com", "http://www.example.com") is expected


@pytest.mark.parametrize("no_proxy,url,seven,eight", [
    ("internal,*", "https://anything.example", False, True),
    ("*:443", "https://anything.example", False, True),
    ("*:80", "https://anything.example", False, False),
    ("2001:db8::1", "http://[2001:db8::1]/", False, True),
    ("[2001:db8::1]", "http://[2001:db8::1]/", True, True),
    ("example.test.", "http://example.test/", False, True),
    ("example.test", "http://example.test./", False, True),
    ("*.example.test", "http://example.test/", True, False),
    ("*.example.test", "http://www.example.test/", True, True),
    (".example.test", "http://example.test/", True, True),
])
def test_undici_7_and_8(no_proxy: str, url: str, seven: bool, eight: bool) -> None:
    assert (direct("node-undici@7", no_proxy, url), direct("node-undici@8.13.1", no_proxy, url)) \
        == (seven, eight)


# Read on the published releases (env-http-proxy-agent.js): 8.9.0 matches like 7.x; 8.10.0
# (PR 5623) matches bare IPv6 entries; 8.10.1 ignores trailing dots; 8.11.0 (PR 5777) reads a
# '*' entry anywhere and *.x as subdomains only. Columns: 8.9.0, 8.10.0, 8.10.1, 8.13.1.
@pytest.mark.parametrize("no_proxy,url,releases", [
    ("*.example", "http://example/", (True, True, True, False)),
    ("*.example", "http://www.example/", (True, True, True, True)),
    ("2001:db8::1", "http://[2001:db8::1]/", (False, True, True, True)),
    ("[2001:db8::1]", "http://[2001:db8::1]/", (True, True, True, True)),
    ("example.test.", "http://example.test/", (False, False, True, True)),
    ("example.test", "http://example.test./", (False, False, True, True)),
    ("internal,*", "https://anything.example", (False, False, False, True)),
    ("*", "https://anything.example", (True, True, True, True)),
])
def test_undici_8_is_four_behaviours(no_proxy: str, url: str,
                                     releases: tuple[bool, ...]) -> None:
    found = tuple(direct(f"node-undici@{v}", no_proxy, url)
                  for v in ("8.9.0", "8.10.0", "8.10.1", "8.13.1"))
    assert found == releases


def test_undici_8_without_a_release_is_the_newest_and_8_is_8_0() -> None:
    assert direct("node-undici", "*.example", "http://example/") is False
    assert direct("node-undici@8", "*.example", "http://example/") is True


def test_undici_8_0_0_prepends_the_scheme_8_0_2_throws() -> None:
    env = {"HTTPS_PROXY": "127.0.0.1:3128"}
    early = evaluate_env("node-undici@8.0.1", env, "https://api.example/")
    later = evaluate_env("node-undici@8.0.2", env, "https://api.example/")
    assert (early.outcome, early.proxy) == ("proxy", "https://127.0.0.1:3128")
    assert later.outcome == "error"


def test_proxy_from_env_1_does_not_normalise_ipv6() -> None:
    url = "http://[2001:DB8:0::1]/"
    assert direct("proxy-from-env@1", "[2001:db8::1]", url) is False
    assert direct("proxy-from-env@1", "[2001:db8:0::1]", url) is True
    assert direct("proxy-from-env@2", "[2001:db8::1]", url) is True


@pytest.mark.parametrize("image,expected", [
    ("curlimages/curl:8.5.0", "curl@8.5"),
    ("docker.io/curlimages/curl:7.88.1", "curl@7.88.1"),
    ("ruby:3.3-slim", "ruby@3.3"),
    ("golang:1.22.4-bookworm", "go@1.22.4"),
    ("curlimages/curl:latest", None),
    ("curlimages/curl@sha256:abc", None),
    ("registry:5000/curlimages/curl", None),
    ("curlimages/curl:6.0", None),
    ("quay.io/openshift/origin-cli:4.15", None),
])
def test_versions_from_image_tags(image: str, expected: str | None) -> None:
    ref = infer_from_image(image)
    assert (str(ref) if ref else None) == expected


def test_configured_versions_win_over_the_image_and_are_validated() -> None:
    configured = configured_versions({"curl": "7.88", "node-undici": 7})
    assert str(consumer_runtime("curl", "curlimages/curl:8.18.0", configured)) == "curl@7.88"
    assert str(consumer_runtime("curl", "curlimages/curl:8.5.0")) == "curl@8.5"
    assert str(consumer_runtime("go", "curlimages/curl:8.5.0")) == "go"
    with pytest.raises(UnknownRuntime):
        configured_versions({"curl": "5"})


def test_a_container_consumer_knows_the_client_release_its_image_states(tmp_path) -> None:
    from hcpscan.analysis.proxy import effective_proxies

    from .conftest import load

    (tmp_path / "pod.yaml").write_text("""\
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: apps}
spec:
  containers:
  - name: curl
    image: docker.io/curlimages/curl:7.88.1
    env: [{name: https_proxy, value: "http://p:3128"}, {name: no_proxy, value: "fd00::/8"}]
  - name: app
    image: quay.io/example/app:1.0
    env: [{name: HTTPS_PROXY, value: "http://p:3128"}]
""")
    consumers = {c.container: c for c in effective_proxies(load(tmp_path / "pod.yaml"))}
    release = consumers["curl"].client_release
    assert release is not None and str(release) == "curl@7.88.1"
    assert bypasses(release, "fd00::/8", "http://[fd00::1]/").bypass is False
    assert consumers["app"].client_release is None
