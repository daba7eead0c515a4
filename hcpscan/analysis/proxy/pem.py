"""CA bundles: the certificates in a PEM bundle, so rules can ask whether a
bundle trusts the proxy's CA (by subject or fingerprint) and report expired or
unreadable certificates.

Bundles arrive as PEM text (``ca-bundle.crt``), as base64 of PEM (kubeconfig
``certificate-authority-data``, OCM ``caBundle``) or as bytes; ``parse_bundle``
takes all three. A Go ``[]byte`` field (those two) is read as its clients read it,
by ``parse_bytes_field``: base64 only, so raw PEM there is a problem, not a bundle.
A block that does not parse is reported, never raised.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hcpscan.core.gobytes import go_bytes

if TYPE_CHECKING:
    from cryptography import x509

_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Certificate:
    subject: str  # RFC 4514, e.g. "CN=proxy-ca,O=Example"
    issuer: str
    sha256: str  # lower-case hex of the DER, no colons
    serial: int
    not_before: datetime
    not_after: datetime
    is_ca: bool | None  # basicConstraints CA flag; None when the extension is absent
    index: int  # position in the bundle (0-based, counting certificate blocks)
    # The certificate's own PEM block as written (what a fix appends to another bundle).
    pem: str = field(default="", compare=False, repr=False)

    @property
    def common_name(self) -> str:
        m = re.search(r"(?:^|,)CN=((?:\\.|[^,])*)", self.subject)
        return m.group(1) if m else ""

    @property
    def self_signed(self) -> bool:
        return self.subject == self.issuer

    def expired(self, at: datetime | None = None) -> bool:
        return self.not_after < (at or datetime.now(UTC))

    def not_yet_valid(self, at: datetime | None = None) -> bool:
        return self.not_before > (at or datetime.now(UTC))

    def to_json(self) -> dict[str, Any]:
        return {"subject": self.subject, "issuer": self.issuer, "sha256": self.sha256,
                "serial": format(self.serial, "x"), "notBefore": self.not_before.isoformat(),
                "notAfter": self.not_after.isoformat(), "isCA": self.is_ca, "index": self.index}


@dataclass(frozen=True, slots=True)
class BundleProblem:
    index: int | None  # certificate block index, None for the bundle as a whole
    message: str


@dataclass(frozen=True, slots=True)
class CABundle:
    certificates: tuple[Certificate, ...]
    problems: tuple[BundleProblem, ...] = ()

    def __len__(self) -> int:
        return len(self.certificates)

    def find(self, subject: str | None = None, fingerprint: str | None = None,
             common_name: str | None = None) -> list[Certificate]:
        """Certificates matching every given criterion (fingerprint with or without colons)."""
        want_fp = _normalise_fp(fingerprint) if fingerprint else None
        out = []
        for cert in self.certificates:
            if subject is not None and cert.subject != subject:
                continue
            if common_name is not None and cert.common_name != common_name:
                continue
            if want_fp is not None and cert.sha256 != want_fp:
                continue
            out.append(cert)
        return out

    def contains(self, subject: str | None = None, fingerprint: str | None = None,
                 common_name: str | None = None) -> bool:
        return bool(self.find(subject, fingerprint, common_name))

    def contains_bundle(self, other: CABundle) -> bool:
        """Every certificate of ``other`` is in this bundle (e.g. the proxy CA appended)."""
        have = {c.sha256 for c in self.certificates}
        return all(c.sha256 in have for c in other.certificates)

    def expired(self, at: datetime | None = None) -> list[Certificate]:
        return [c for c in self.certificates if c.expired(at)]

    def to_json(self) -> dict[str, Any]:
        return {"certificates": [c.to_json() for c in self.certificates],
                "problems": [{"index": p.index, "message": p.message} for p in self.problems]}


def _normalise_fp(text: str) -> str:
    return text.replace(":", "").replace(" ", "").lower().removeprefix("sha256/")


def _as_pem_bytes(data: str | bytes) -> tuple[bytes, str]:
    """PEM bytes, and a note when the input had to be base64-decoded first."""
    raw = data.encode() if isinstance(data, str) else data
    if b"-----BEGIN" in raw:
        return raw, ""
    try:
        decoded = base64.b64decode(b"".join(raw.split()), validate=True)
    except (binascii.Error, ValueError):
        return raw, ""
    return decoded, "base64"


NOT_BASE64 = "is not base64"  # how a []byte field no client decodes is said
def parse_bytes_field(text: str | None) -> CABundle:
    """A CA bundle kept in a Go ``[]byte`` field (kubeconfig ``certificate-authority-data``,
    an AddOnDeploymentConfig's ``caBundle``): base64 of PEM, or why no client reads it."""
    if text is None or not text.strip():
        return parse_bundle(text)
    decoded = go_bytes(text)
    if isinstance(decoded, str):
        pem = " (PEM written as is: it must be base64-encoded)" if "-----BEGIN" in text else ""
        return CABundle((), (BundleProblem(None, f"{NOT_BASE64}, as Go reads this []byte field: "
                                                 f"{decoded}{pem}"),))
    return parse_bundle(decoded)


def parse_bundle(data: str | bytes | None) -> CABundle:
    if data is None or (not data.strip() if isinstance(data, (str, bytes)) else True):
        return CABundle((), (BundleProblem(None, "empty CA bundle"),))
    pem, _how = _as_pem_bytes(data)
    certs: list[Certificate] = []
    problems: list[BundleProblem] = []
    blocks = list(_BLOCK.finditer(pem))
    if not blocks:
        return CABundle((), (BundleProblem(None, "no PEM certificate found"),))
    from cryptography import x509  # imported only when a bundle is read: start-up stays light

    index = 0
    for block in blocks:
        label = block.group(1).decode()
        if label not in ("CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE"):
            problems.append(BundleProblem(None, f"a {label} block in a CA bundle"))
            continue
        try:
            cert = x509.load_pem_x509_certificate(block.group(0))
            certs.append(_describe(cert, index, block.group(0).decode("ascii", "replace")))
        except ValueError as exc:
            problems.append(BundleProblem(index, f"certificate {index + 1} cannot be read: {exc}"))
        index += 1
    return CABundle(tuple(certs), tuple(problems))


def _describe(cert: x509.Certificate, index: int, pem: str = "") -> Certificate:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    try:
        is_ca: bool | None = cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        is_ca = None
    except ValueError:  # a malformed extension: the certificate itself is still readable
        is_ca = None
    return Certificate(
        subject=cert.subject.rfc4514_string(), issuer=cert.issuer.rfc4514_string(),
        sha256=cert.fingerprint(hashes.SHA256()).hex(), serial=cert.serial_number,
        not_before=_utc(cert, "not_valid_before"), not_after=_utc(cert, "not_valid_after"),
        is_ca=is_ca, index=index, pem=pem)


def _utc(cert: x509.Certificate, name: str) -> datetime:
    """cryptography 42+ has ``*_utc``; older releases return naive UTC datetimes."""
    value = getattr(cert, f"{name}_utc", None)
    if value is None:
        value = getattr(cert, name).replace(tzinfo=UTC)
    return value
