"""Which bundle files a runtime reads depends on the image's distribution (issue 24):
hcpscan.model.truststores says it once, for RHEL/UBI, Debian/Ubuntu and Alpine, and Go's
"first existing file" of crypto/x509's list is modelled where a mount makes a file exist."""

from __future__ import annotations

import pytest

from hcpscan.model.truststores import (
    DISTRIBUTIONS,
    GO_CERT_FILES,
    go_first_file,
    image_distribution,
)

TLS = "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"
DEBIAN = "/etc/ssl/certs/ca-certificates.crt"


@pytest.mark.parametrize(("image", "distribution"), [
    ("registry.access.redhat.com/ubi9/python-312:1-25", "rhel"),
    ("registry.access.redhat.com/ubi8/ubi-minimal", "rhel"),
    ("quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0000", "rhel"),
    ("registry.example.com/tools/ose-cli-rhel9:v4.16", "rhel"),
    ("eclipse-temurin:21-jre-ubi9-minimal", "rhel"),
    ("python:3.12-slim", "debian"),
    ("docker.io/library/golang:1.22-bookworm", "debian"),
    ("ubuntu:24.04", "debian"),
    ("gcr.io/distroless/static-debian12:nonroot", "debian"),
    ("python:3.12", "debian"),  # Docker's official image without a variant: Debian
    ("python:3.12-alpine", "alpine"),
    ("alpine:3.20", "alpine"),
    ("golang:1.22-alpine3.20", "alpine"),
    ("registry.example.com/shop/app:1.0", ""),
    ("registry.example.com/python:3.12", ""),  # not Docker's official image
    ("", ""),
])
def test_the_image_says_its_distribution(image: str, distribution: str) -> None:
    found, why = image_distribution(image)
    assert found == distribution
    assert why  # the evidence says how it was told, or that it was not


def test_go_reads_the_first_file_of_its_list_that_exists() -> None:
    assert GO_CERT_FILES[0] == DEBIAN  # crypto/x509 root_linux.go's order
    debian, rhel, alpine = (DISTRIBUTIONS[d] for d in ("debian", "rhel", "alpine"))
    assert go_first_file(debian, set()) == (DEBIAN, DEBIAN)
    # a bundle mounted at RHEL's path on Debian: ca-certificates.crt exists earlier in the list
    assert go_first_file(debian, {TLS}) == (DEBIAN, DEBIAN)
    # on RHEL Go stops at ca-bundle.crt, a link to the extracted bundle
    assert go_first_file(rhel, set()) == ("/etc/pki/tls/certs/ca-bundle.crt", TLS)
    # a mount that creates an earlier file of the list wins
    assert go_first_file(rhel, {DEBIAN}) == (DEBIAN, DEBIAN)
    assert go_first_file(alpine, {"/etc/ssl/cert.pem"}) == (DEBIAN, DEBIAN)


def test_openssl_default_file_per_distribution() -> None:
    # Debian's OPENSSLDIR is /usr/lib/ssl: cert.pem there, which Debian 12's openssl package
    # links to ca-certificates.crt (never the RHEL extracted bundle)
    assert DISTRIBUTIONS["debian"].defaults["openssl"][0] == ("/usr/lib/ssl/cert.pem", DEBIAN)
    assert DISTRIBUTIONS["debian"].present["/usr/lib/ssl/cert.pem"] == DEBIAN
    assert TLS not in DISTRIBUTIONS["debian"].defaults["openssl"][0]
    assert TLS in DISTRIBUTIONS["rhel"].defaults["openssl"][0]
    assert "/etc/ssl/cert.pem" in DISTRIBUTIONS["alpine"].defaults["openssl"][0]
    assert DEBIAN not in DISTRIBUTIONS["rhel"].defaults["openssl"][0]
