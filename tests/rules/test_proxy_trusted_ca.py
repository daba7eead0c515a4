"""PRX012 and the trustedCA of a cluster Proxy: the cluster-network-operator validates it
(openshift-config/<name>, a PEM ca-bundle.crt) whatever the proxy's scheme, and rejects the
whole Proxy when it cannot; a bundle created in another namespace is the usual cause."""

from __future__ import annotations

from pathlib import Path

from hcpscan.findings.model import Status
from tests.rules.harness import expected_markers, scan
from tests.rules.test_primitives_proxy import run as _scan

CASE = Path(__file__).parents[2] / "fixtures/rules/PRX012/must-gather/trustedca-wrong-namespace"

PROXY = """\
apiVersion: config.openshift.io/v1
kind: Proxy
metadata: {name: cluster}
spec:
  httpProxy: %s
  trustedCA: {name: %s}
"""
CONFIGMAP = """\
---
apiVersion: v1
kind: ConfigMap
metadata: {name: %s, namespace: %s}
data:
  ca-bundle.crt: %s
"""


def test_an_http_proxy_whose_trusted_ca_is_in_another_namespace_fails() -> None:
    """installer#2173 / MCO#1045 as a must-gather collects it: openshift-config holds the
    installer's ConfigMaps but not user-ca-bundle, openshift-config-managed holds it."""
    folder = CASE / "fail"
    report = scan([folder], ["PRX012"])
    assert {(f.location.path, f.location.line) for f in report.findings} == \
        expected_markers(folder, "PRX012")
    [finding] = report.findings
    assert "openshift-config/user-ca-bundle is missing" in finding.message
    assert "rejects the whole Proxy" in finding.message
    assert "ConfigMap openshift-config-managed/user-ca-bundle has that name" in finding.message
    passing = scan([CASE / "pass"], ["PRX012"])
    assert (passing.findings, passing.results[0].status) == ([], Status.PASS)


def test_without_the_namespace_in_the_input_it_is_not_evaluable_and_says_what_to_add(
        tmp_path: Path) -> None:
    text = PROXY % ("http://proxy.corp:3128", "user-ca-bundle") + \
        CONFIGMAP % ("user-ca-bundle", "openshift-config-managed", '""')
    result = _scan(tmp_path, text, "PRX012").results[0]
    assert result.status is Status.NOT_EVALUABLE
    assert "oc get configmaps -n openshift-config -o yaml" in result.reason
    assert "openshift-config-managed/user-ca-bundle has that name" in result.reason


def test_a_trusted_ca_without_any_proxy_is_validated_too(tmp_path: Path) -> None:
    """A Proxy naming only a trustedCA (extra CAs, no proxy: the installer writes it for an
    additionalTrustBundle): the operator reads it all the same."""
    text = """\
apiVersion: config.openshift.io/v1
kind: Proxy
metadata: {name: cluster}
spec:
  trustedCA: {name: user-ca-bundle}
""" + CONFIGMAP % ("user-ca-bundle", "openshift-config", '"no certificate here"')
    report = _scan(tmp_path, text, "PRX012")
    [finding] = report.findings
    assert finding.object.kind == "ConfigMap" and "trusts no usable CA" in finding.message


def test_the_operators_own_bundle_name_is_read_from_openshift_config_managed(
        tmp_path: Path) -> None:
    """validateConfigMapRef: trustedCA 'trusted-ca-bundle' is looked up in
    openshift-config-managed, every other name in openshift-config."""
    text = PROXY % ("http://proxy.corp:3128", "trusted-ca-bundle") + \
        CONFIGMAP % ("trusted-ca-bundle", "openshift-config-managed", '""') + \
        CONFIGMAP % ("other", "openshift-config", '""')
    report = _scan(tmp_path, text, "PRX012")
    assert [f.message for f in report.findings] and all(
        "openshift-config-managed/trusted-ca-bundle" in f.message or f.object.name == "trusted-ca-bundle"
        for f in report.findings)
    assert not any("is missing" in f.message for f in report.findings)


def test_an_http_proxy_without_a_trusted_ca_is_not_judged(tmp_path: Path) -> None:
    text = """\
apiVersion: config.openshift.io/v1
kind: Proxy
metadata: {name: cluster}
spec:
  httpProxy: http://proxy.corp:3128
"""
    assert _scan(tmp_path, text, "PRX012").results[0].status is Status.NOT_APPLICABLE


def test_for_an_http_proxy_only_what_the_operator_refuses_is_reported(tmp_path: Path) -> None:
    """CertsFromPEM passes over blocks that are no certificate: a bundle with a readable
    certificate and a key block is accepted for an http:// proxy (an https:// proxy's bundle
    is judged as before)."""
    good = (CASE / "pass/namespaces/openshift-config/core/configmaps.yaml").read_text()
    start = good.index("-----BEGIN CERTIFICATE-----")
    end = good.index("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----")
    lines = [line.strip() for line in good[start:end].splitlines()]
    lines += ["-----BEGIN PRIVATE KEY-----", "MIIB", "-----END PRIVATE KEY-----"]
    bundle = "\"" + "\\n".join(lines) + "\\n\""  # one double-quoted YAML scalar
    text = PROXY % ("http://proxy.corp:3128", "user-ca-bundle") + \
        CONFIGMAP % ("user-ca-bundle", "openshift-config", bundle)
    report = _scan(tmp_path, text, "PRX012")
    assert (report.findings, report.results[0].status) == ([], Status.PASS)
