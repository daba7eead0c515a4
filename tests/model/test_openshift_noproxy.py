"""OpenShift's noProxy validation (cluster-network-operator and openshift-install), entry by
entry as their Go code reads a value: one leading and one trailing '.' trimmed, then a
DNS-1123 subdomain, or net.ParseIP, or net.ParseCIDR; the whole value '*' alone."""

from __future__ import annotations

import pytest

from hcpscan.model.openshift_noproxy import INSTALLER, NETWORK_OPERATOR, refused_no_proxy

ACCEPTED = [
    "*", "", ".corp.example.com", "corp.example.com", "api.ocp.example.com.", ".example.com.",
    "localhost", "10.0.0.1", "10.0.0.0/16", "10.0.0.1/16", "10.0.0.0/016", "fd00::1",
    "fd00:10::/64", "::ffff:10.0.0.1", "a-b.c-d", "1.2.3", "010.0.0.1", "x" * 253,
]
REFUSED = [
    "*.apps.example.com", "*", "Example.com", "registry.corp.example.com:5000", "10.0.0.1:443",
    "[fd00::1]:443", "http://registry.corp.example.com", "10.0.0.0/33", "10.0.0.0/255.255.0.0",
    "fe80::1%eth0", "_ldap.example.com", "-a.example.com", "a..b", "..a",
    "x" * 254, "a;b", "*.",
]


@pytest.mark.parametrize("entry", ACCEPTED)
def test_an_entry_both_validators_accept(entry: str) -> None:
    for validator in (NETWORK_OPERATOR, INSTALLER):
        assert refused_no_proxy(f".svc,{entry}" if entry not in ("*", "") else entry,
                                validator) == []


@pytest.mark.parametrize("entry", REFUSED)
def test_an_entry_both_validators_refuse(entry: str) -> None:
    # '*' is accepted only as the whole value: inside a list it is an entry like any other
    for validator in (NETWORK_OPERATOR, INSTALLER):
        refusals = refused_no_proxy(f".svc,{entry}", validator)
        assert [(r.entry, r.index) for r in refusals] == [(entry, 1)]


def test_a_wildcard_suffix_is_refused_with_the_entry_to_write() -> None:
    refusal, = refused_no_proxy(".corp.example.com,*.apps.internal.example.com,10.0.0.0/16",
                                NETWORK_OPERATOR)
    assert "'.apps.internal.example.com'" in refusal.why
    assert "whole value '*'" in refusal.why


def test_spaces_between_entries_only_the_installer_refuses() -> None:
    value = ".corp.example.com, .apps.ocp.example.com, 10.0.0.0/16"
    assert refused_no_proxy(value, NETWORK_OPERATOR) == []  # it trims each entry
    refusal, = refused_no_proxy(value, INSTALLER)
    assert refusal.whole and "spaces" in refusal.why


def test_an_empty_entry_is_refused() -> None:
    for value in (".svc,", ".svc,,localhost", ","):
        assert any(r.entry == "" for r in refused_no_proxy(value, NETWORK_OPERATOR)), value


def test_the_whole_wildcard_is_not_trimmed() -> None:
    assert refused_no_proxy(" *", NETWORK_OPERATOR)  # the Go code compares the value with "*"
    assert refused_no_proxy("*", NETWORK_OPERATOR) == []


def test_a_no_proxy_without_a_proxy_url_is_refused_even_the_whole_wildcard() -> None:
    """ValidateProxyConfig and validateProxy first require httpProxy or httpsProxy as soon as
    any proxy field is set."""
    for value in ("*", ".corp.example.com"):
        for validator in (NETWORK_OPERATOR, INSTALLER):
            refusal, = refused_no_proxy(value, validator, url_set=False)
            assert refusal.whole and "without httpProxy or httpsProxy" in refusal.why
    assert refused_no_proxy("", NETWORK_OPERATOR, url_set=False) == []


def test_a_value_of_spaces_is_set_and_refused() -> None:
    """The validators test len(noProxy) > 0 untrimmed: ' ' is one entry of spaces, empty
    once trimmed, and refused (not an unset value)."""
    [refusal] = refused_no_proxy(" ", NETWORK_OPERATOR)
    assert refusal.entry == " " and "only spaces" in refusal.why


PROXY_SPEC = """\
apiVersion: config.openshift.io/v1
kind: Proxy
metadata:
  name: cluster
  resourceVersion: "1234"
  uid: 3b1c3f4e-0d7c-4e0e-9a77-2f5b3f8b9d21
spec:
  trustedCA:
    name: ""
%s"""


@pytest.mark.parametrize("fields, line, said", [
    ("  httpProxy: http://proxy.example.com:3128\n  noProxy: ' '\n", 11,
     "spec.noProxy entry ' ' is only spaces"),
    ("  httpProxy: ' '\n", 10, "spec.httpProxy = ' ' is only spaces, which "
     "cluster-network-operator takes as set"),
])
def test_prx013_judges_a_proxy_field_of_spaces_as_the_network_operator_does(
        tmp_path, fields: str, line: int, said: str) -> None:
    """CNO's ValidateProxyConfig tests each field with len(x) > 0, untrimmed: ' ' is set,
    an empty noProxy entry or a URL ParseRequestURI refuses, and the whole Proxy is
    rejected."""
    from tests.rules.harness import scan

    (tmp_path / "proxy.yaml").write_text(PROXY_SPEC % fields)
    report = scan([tmp_path], ["PRX013"])
    [finding] = report.findings
    assert finding.location.line == line
    assert any(said in e for e in finding.evidence), finding.evidence
    assert "InvalidProxyConfig" in finding.message


def test_prx013_judges_a_hosted_clusters_no_proxy_as_the_guest_network_operator_does() -> None:
    """HyperShift copies spec.configuration.proxy into the hosted cluster's Proxy spec,
    which the hosted cluster's network operator validates as any Proxy (ValidateProxyConfig
    runs under HyperShift too): a wildcard entry and an upper-case domain are refused."""
    from tests.conftest import FIXTURES
    from tests.rules.harness import scan

    fixture = FIXTURES / "rules" / "PRX013" / "fail" / "hosted-cluster-noproxy-openshift-refuses.yaml"
    [finding] = scan([fixture], ["PRX013"]).findings
    assert "'*.corp.example.com', 'Registry.example.org'" in finding.message
    assert "hosted cluster's cluster-network-operator" in finding.message
    assert any("has upper-case letters" in e for e in finding.evidence)
