"""CA bundles: certificates by subject and fingerprint, expired and broken blocks."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from hcpscan.analysis.proxy.pem import parse_bundle

from .conftest import FIXTURES

PROXY_CA_SHA256 = "648f9426f0e9f223917ac1ccf8bbedf28b9671ebef93706d2220bd117ae24e6a"


def _user_ca_bundle() -> str:
    text = (FIXTURES / "hosted-cluster-proxy.yaml").read_text()
    start = text.index("-----BEGIN CERTIFICATE-----")
    end = text.rindex("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----")
    return "\n".join(line.strip() for line in text[start:end].splitlines())


def test_reads_every_certificate() -> None:
    bundle = parse_bundle(_user_ca_bundle())
    assert [c.common_name for c in bundle.certificates] == ["corp-proxy-ca", "old-proxy-ca"]
    assert bundle.problems == ()


def test_finds_the_proxy_ca_by_fingerprint_and_subject() -> None:
    bundle = parse_bundle(_user_ca_bundle())
    colons = ":".join(PROXY_CA_SHA256[i:i + 2] for i in range(0, 64, 2)).upper()
    assert bundle.contains(fingerprint=colons)
    assert bundle.contains(subject="CN=corp-proxy-ca,O=Example Corp")
    assert not bundle.contains(common_name="hub-kube-apiserver-ca")


def test_reports_expired_certificates() -> None:
    bundle = parse_bundle(_user_ca_bundle())
    expired = bundle.expired(datetime(2025, 6, 1, tzinfo=UTC))
    assert [c.common_name for c in expired] == ["old-proxy-ca"]
    assert expired[0].is_ca is True and expired[0].self_signed


def test_base64_bundles_as_in_kubeconfigs() -> None:
    encoded = base64.b64encode(_user_ca_bundle().encode()).decode()
    assert len(parse_bundle(encoded)) == 2


def test_unparsable_block_is_a_problem_not_an_exception() -> None:
    broken = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"
    bundle = parse_bundle(_user_ca_bundle() + "\n" + broken)
    assert len(bundle) == 2
    assert [p.index for p in bundle.problems] == [2]


def test_not_pem_at_all() -> None:
    assert parse_bundle("placeholder").problems[0].message == "no PEM certificate found"
    assert parse_bundle("").problems[0].message == "empty CA bundle"


def test_one_bundle_contains_another() -> None:
    both = parse_bundle(_user_ca_bundle())
    first = parse_bundle(_user_ca_bundle().split("-----END CERTIFICATE-----")[0]
                         + "-----END CERTIFICATE-----")
    assert both.contains_bundle(first) and not first.contains_bundle(both)
