"""Which variable each client reads: case precedence, empty values, CGI, fallbacks."""

from __future__ import annotations

import os
import urllib.request

import pytest

from hcpscan.analysis.proxy.env import choose, evaluate_env, urllib_proxies

BOTH = {"HTTP_PROXY": "http://upper:3128", "http_proxy": "http://lower:3128",
        "HTTPS_PROXY": "http://UPPER:3129", "https_proxy": "http://lower:3129"}


@pytest.mark.parametrize("runtime,var", [
    ("go", "HTTPS_PROXY"), ("curl", "https_proxy"), ("python", "https_proxy"),
    ("requests", "https_proxy"), ("node-undici", "https_proxy"), ("proxy-from-env", "https_proxy"),
    ("ruby", "http_proxy"), ("wget", "https_proxy")])
def test_which_case_wins(runtime: str, var: str) -> None:
    assert choose(runtime, BOTH, "https").proxy_var == var


def test_curl_never_reads_upper_case_http_proxy() -> None:
    result = evaluate_env("curl", {"HTTP_PROXY": "http://p:3128"}, "http://example.com")
    assert result.bypass is True and result.proxy is None
    assert evaluate_env("curl", {"HTTPS_PROXY": "http://p:3128"}, "https://example.com").proxy \
        == "http://p:3128"


def test_go_skips_an_empty_upper_case_value() -> None:
    env = {"HTTPS_PROXY": "", "https_proxy": "http://lower:3129"}
    assert choose("go", env, "https").proxy == "http://lower:3129"


def test_an_empty_lower_case_value_hides_the_upper_case_one_for_undici_and_ruby() -> None:
    env = {"https_proxy": "", "HTTPS_PROXY": "http://upper:3129"}
    assert choose("node-undici", env, "https").proxy is None
    assert choose("ruby", {"http_proxy": "", "HTTP_PROXY": "http://upper:3128"}, "https").proxy \
        is None
    assert choose("curl", env, "https").proxy == "http://upper:3129"


def test_undici_https_falls_back_to_the_http_proxy() -> None:
    assert choose("node-undici", {"HTTP_PROXY": "http://p:3128"}, "https").proxy == "http://p:3128"
    assert choose("go", {"HTTP_PROXY": "http://p:3128"}, "https").proxy is None


@pytest.mark.parametrize("url,no_proxy", [("http://example.com", ""),
                                           ("http://example.com", "example.com"),
                                           ("http://127.0.0.1:8080", "")])
def test_go_fails_an_http_request_with_http_proxy_under_cgi(url: str, no_proxy: str) -> None:
    env = {"http_proxy": "http://p:3128", "REQUEST_METHOD": "GET", "NO_PROXY": no_proxy}
    result = evaluate_env("go", env, url)
    assert (result.outcome, result.variable, result.bypass) == ("error", "http_proxy", False)
    assert "refusing to use HTTP_PROXY value in CGI environment" in result.reason


def test_go_cgi_leaves_https_and_an_empty_request_method_alone() -> None:
    env = {"HTTP_PROXY": "http://p:3128", "HTTPS_PROXY": "http://s:3129", "REQUEST_METHOD": "GET"}
    assert evaluate_env("go", env, "https://example.com").outcome == "proxy"
    env = {"HTTP_PROXY": "http://p:3128", "REQUEST_METHOD": ""}
    assert evaluate_env("go", env, "http://example.com").variable == "HTTP_PROXY"


@pytest.mark.parametrize("value,why", [("127.0.0.1:3128", "Invalid URL"),
                                       ("proxy.corp:3128", "Invalid URL protocol")])
def test_undici_fails_every_request_for_a_proxy_value_that_is_not_a_url(value: str,
                                                                        why: str) -> None:
    env = {"https_proxy": value, "http_proxy": "http://p:3128", "no_proxy": "example.com"}
    for url in ("http://example.com", "http://other.test", "https://other.test"):
        result = evaluate_env("node-undici", env, url)
        assert (result.outcome, result.variable) == ("error", "https_proxy")
        assert why in result.reason


def test_ruby_raises_only_for_requests_that_would_use_a_scheme_less_proxy() -> None:
    env = {"http_proxy": "127.0.0.1:3128", "no_proxy": "example.com"}
    assert evaluate_env("ruby", env, "https://other.test").outcome == "error"
    assert evaluate_env("ruby", env, "https://example.com").outcome == "direct"
    assert evaluate_env("ruby", env, "http://127.0.0.2/").outcome == "direct"


def test_a_scheme_less_proxy_is_plain_http_for_go_curl_and_python() -> None:
    env = {"http_proxy": "127.0.0.1:3128"}
    for runtime in ("go", "curl", "python", "requests"):
        result = evaluate_env(runtime, env, "http://other.test")
        assert (result.outcome, result.variable) == ("proxy", "http_proxy")


def test_go_reads_a_bare_host_port_as_http() -> None:
    assert choose("go", {"HTTPS_PROXY": "proxy:3128"}, "https").proxy == "http://proxy:3128"


def test_wget_reads_lower_case_only() -> None:
    assert choose("wget", {"HTTPS_PROXY": "http://p:3129"}, "https").proxy is None
    assert choose("wget", {"NO_PROXY": "x", "https_proxy": "http://p"}, "https").no_proxy is None


def test_requests_falls_back_to_all_proxy_but_urllib_does_not() -> None:
    env = {"ALL_PROXY": "socks5://p:1080"}
    assert choose("requests", env, "https").proxy == "socks5://p:1080"
    assert choose("python", env, "https").proxy is None


def test_java_reads_system_properties_not_the_environment() -> None:
    env = {"HTTPS_PROXY": "http://p:3128",
           "JAVA_TOOL_OPTIONS": "-Dhttps.proxyHost=jp -Dhttps.proxyPort=8080 "
                                "-Dhttp.nonProxyHosts=*.svc|localhost"}
    choice = choose("java", env, "https")
    assert (choice.proxy, choice.no_proxy) == ("http://jp:8080", "*.svc|localhost")
    assert evaluate_env("java", env, "https://api.default.svc").bypass is True
    assert choose("java", {"HTTPS_PROXY": "http://p:3128"}, "https").proxy is None


def test_no_proxy_variable_precedence() -> None:
    env = {"NO_PROXY": "example.com", "no_proxy": ".internal"}
    assert evaluate_env("go", env | {"HTTPS_PROXY": "http://p"}, "https://example.com").bypass
    assert not evaluate_env("curl", env | {"HTTPS_PROXY": "http://p"}, "https://example.com").bypass


def test_evaluate_reports_the_variables_used() -> None:
    env = {"HTTPS_PROXY": "http://p:3128", "NO_PROXY": ".svc"}
    result = evaluate_env("go", env, "https://api.example.com")
    assert (result.bypass, result.proxy, result.proxy_var) == (False, "http://p:3128", "HTTPS_PROXY")
    result = evaluate_env("go", env, "https://kubernetes.default.svc")
    assert (result.bypass, result.matched, result.no_proxy_var) == (True, ".svc", "NO_PROXY")


@pytest.mark.parametrize("env", [
    {"HTTP_PROXY": "http://up", "http_proxy": ""}, {"HTTP_PROXY": "http://up"},
    {"http_proxy": "http://low", "HTTP_PROXY": "http://up"},
    {"HTTP_PROXY": "http://up", "REQUEST_METHOD": "GET"},
    {"http_proxy": "http://low", "REQUEST_METHOD": "GET"}, {"Http_Proxy": "http://mixed"}])
def test_python_agrees_with_the_real_getproxies_environment(
        env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    real = urllib.request.getproxies_environment()
    assert {k: v for k, (v, _) in urllib_proxies(env).items()} == real


def test_ruby_net_http_looks_up_https_urls_as_http() -> None:
    env = {"https_proxy": "http://s:3129", "http_proxy": "http://p:3128"}
    assert choose("ruby", env, "https").proxy_var == "http_proxy"
    assert choose("ruby", {"https_proxy": "http://s:3129"}, "https").proxy is None


def test_proxy_from_env_2_reads_no_npm_config_variables() -> None:
    env = {"npm_config_https_proxy": "http://npm:1", "https_proxy": "http://env:2"}
    assert choose("proxy-from-env@1", env, "https").proxy_var == "npm_config_https_proxy"
    assert choose("proxy-from-env@2", env, "https").proxy_var == "https_proxy"
