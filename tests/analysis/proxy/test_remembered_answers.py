"""What the proxy rules remember of a text a fleet repeats (one script, one noProxy list in
every control plane) is what they would find again: credentials() answers as
find_credentials does, divergence() as its uncached probe, each caller with lists of its own."""

from __future__ import annotations

import pytest

from hcpscan.analysis.proxy import coverage, portability, validity
from hcpscan.analysis.proxy.coverage import covers_cidr, covers_domain
from hcpscan.analysis.proxy.noproxy import runtime_ref
from hcpscan.analysis.proxy.settings import Setting, Source
from hcpscan.analysis.proxy.validity import credentials
from hcpscan.analysis.proxy.workloads import effective_settings
from hcpscan.core.userinfo import find_credentials

SCRIPT = ("#!/bin/sh\nexport HTTPS_PROXY=http://svc:S3cret@proxy.corp:3128\n"
          "curl -x socks5://u:p@10.0.0.1:1080 https://example.com\n") * 40
TEXTS = [SCRIPT, "http://svc:pass@proxy:3128", "svc:pa ss@proxy:3128", "mail ops@example.com",
         "no at sign", "", "http://a:b@p:1,http://c:d@q:2", SCRIPT * 80]  # the last > 16 Ki


def test_credentials_answer_as_find_credentials_the_first_time_and_every_time() -> None:
    assert len(SCRIPT * 80) > validity._REMEMBERED_LENGTH
    for _ in range(3):
        for text in TEXTS:
            assert credentials(text) == find_credentials(text), text[:40]
    assert credentials(SCRIPT), "the script's two URLs carry passwords"


def test_a_caller_changing_its_list_changes_no_later_answer() -> None:
    first = credentials(SCRIPT)
    expected = list(first)
    first.clear()
    assert credentials(SCRIPT) == expected


ENTRIES = ["10.0.0.0/8", "*.corp.example.com", ".svc", "a b", "localhost", "[fd00::]/64",
           "192.168.0.0/16", "x" * 2000 + "/8", "*.x", "host:8080"]
PINNED = [None, {}, {"curl": runtime_ref("curl@7.88")},
          {"curl": runtime_ref("curl@8.9"), "python": runtime_ref("python")}]


@pytest.mark.parametrize("pinned", PINNED)
def test_divergence_answers_as_the_probe_the_first_time_and_every_time(pinned) -> None:
    for _ in range(2):
        for raw in ENTRIES:
            assert portability.divergence(raw, pinned) == portability._divergence(raw, pinned), raw
    assert portability.divergence("10.0.0.0/8", pinned) is not None, "a CIDR diverges"


def test_divergence_tells_pinned_releases_apart_and_gives_each_caller_its_lines() -> None:
    # the pinned release is part of what is remembered: curl@7.88 and curl@8.9 read the
    # second word of 'a b' otherwise
    older, newer = (portability.divergence("a b", {"curl": runtime_ref(v)})
                    for v in ("curl@7.88", "curl@8.9"))
    assert older is not None and newer is not None
    assert "curl@7.88" in older[1][1] and "curl" not in newer[1][1]
    first = portability.divergence("10.0.0.0/8")
    assert first is not None
    kept = list(first[1])
    first[1].clear()
    again = portability.divergence("10.0.0.0/8")
    assert again is not None and again[1] == kept


def _settings(path: str, **env: str | None) -> dict[str, Setting]:
    return {k: Setting(k, v, Source("Deployment ns/app", f"env.{k}", path, 1),
                       unknown="" if v is not None else "redacted") for k, v in env.items()}


def test_effective_settings_remembered_per_env_are_each_callers_own_settings() -> None:
    for _ in range(2):
        a = _settings("a.yaml", HTTPS_PROXY="http://p:3128", https_proxy="http://q:3128",
                      NO_PROXY=".svc")
        b = _settings("b.yaml", HTTPS_PROXY="http://p:3128", https_proxy="http://q:3128",
                      NO_PROXY=".svc")
        for variables in (a, b):
            http, https, no = effective_settings(variables)
            assert http is None
            assert https is variables["HTTPS_PROXY"]  # Go reads the upper-case one first
            assert no is variables["NO_PROXY"]
    # an unknown value Go would read first makes the effective value unknown
    unknown = _settings("c.yaml", HTTPS_PROXY=None, https_proxy="http://p:3128")
    assert effective_settings(unknown)[1] is unknown["HTTPS_PROXY"]
    curl = effective_settings(_settings("d.yaml", HTTPS_PROXY="http://p:3128"), "curl")
    assert curl[1] is not None and curl[1].name == "HTTPS_PROXY"


NO_PROXIES = [None, "", "10.0.0.0/8,.svc", "10.128.0.0/16", "*", "172.30.0.0/16,.cluster.local",
              "*.svc,10.128.*", ",".join(f"10.{i}.0.0/16" for i in range(256)) + ",x" * 9000]
CIDRS = ["10.128.0.0/14", "172.30.0.0/16", "fd00::/112", "10.0.0.1/32"]
RUNTIMES = ["go", "curl", "python", "node-undici", "wget", "java"]


def test_coverage_remembered_is_the_coverage_worked_out() -> None:
    assert len(NO_PROXIES[-1]) > coverage._REMEMBERED_LENGTH
    for _ in range(2):
        for runtime in RUNTIMES:
            for no_proxy in NO_PROXIES:
                for cidr in CIDRS:
                    assert covers_cidr(runtime, no_proxy, cidr) == coverage._covers_cidr(
                        runtime, no_proxy, cidr, None, "https"), (runtime, no_proxy, cidr)
                for domain, apex in (("svc", False), ("cluster.local", True), ("*.svc", True)):
                    assert covers_domain(runtime, no_proxy, domain, include_apex=apex) == \
                        coverage._covers_domain(runtime, no_proxy, domain, apex, None, "https")
    assert not covers_cidr("go", "10.128.0.0/16", "10.128.0.0/14").covered
    assert covers_cidr("go", "10.0.0.0/8", "10.128.0.0/14").covered
