"""Which ``noProxy`` lists OpenShift's own validators refuse: one definition for the
cluster-network-operator (a ``config.openshift.io`` Proxy spec) and the installer
(an install-config's ``proxy.noProxy``).

The cluster-network-operator (``pkg/controller/proxyconfig/validation.go``,
``ValidateProxyConfig``, read at commit 2a6a57fe) and ``openshift-install``
(``pkg/types/validation/installconfig.go``, ``validateProxy``, with
``pkg/validate/validate.go``, ``NoProxyDomainName``) check a noProxy value the same way:

* the whole value exactly ``*`` (not trimmed) is accepted as it is;
* otherwise the value is cut at every ``,`` and each piece, spaces trimmed, must be
  a domain, an IP address or a CIDR:

  - a domain: one leading ``.`` and one trailing ``.`` removed, the rest is a DNS-1123
    subdomain (Kubernetes' ``IsDNS1123Subdomain``: at most 253 characters, dot-separated
    labels of lower-case letters, digits and ``-`` that start and end with a letter or
    digit). So ``*.example.com``, ``Example.com``, ``host:8080``, ``_svc.example.com``
    and an empty piece (``a.com,,b.com`` or a trailing ``,``) are refused;
  - an IP: Go's ``net.ParseIP`` (dotted quad without leading zeros, or IPv6 without a
    zone);
  - a CIDR: Go's ``net.ParseCIDR`` (such an address, ``/`` and a decimal prefix length
    no longer than the address).

Both first require ``httpProxy`` or ``httpsProxy`` whenever any proxy field is set (a
noProxy alone, even ``*``, is refused). The installer also refuses a value holding a space
anywhere (``noProxy must not have spaces``), even between entries that the per-entry check
trims; the operator trims them.

What a refusal does differs: the installer stops before installing; the operator marks
itself Degraded (``InvalidProxyConfig``) and leaves the Proxy's ``status`` as it was, so
no component gets any of the new spec (URLs included).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hcpscan.model.ipspace import parse_address

WHOLE_WILDCARD = "*"
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1123_SUBDOMAIN_MAX = 253
_PREFIX_DIGITS = re.compile(r"[0-9]+")
# What Go's strings.TrimSpace trims (unicode.IsSpace): Python's str.strip() trims more.
_GO_SPACES = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
              "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")

NETWORK_OPERATOR = "cluster-network-operator"
INSTALLER = "openshift-install"


@dataclass(frozen=True, slots=True)
class Refusal:
    """One reason an OpenShift validator refuses a noProxy value."""

    entry: str  # the piece as trimmed ('' for an empty piece); the whole value for spaces
    index: int  # its position in the comma-separated list (-1: the whole value)
    why: str

    @property
    def whole(self) -> bool:
        """Whether the value as a whole is refused (its spaces), not one entry."""
        return self.index < 0


def refused_no_proxy(value: str, validator: str, url_set: bool = True) -> list[Refusal]:
    """Why ``validator`` (``NETWORK_OPERATOR`` or ``INSTALLER``) refuses the noProxy
    ``value`` ([] = accepted; an empty value is unset and accepted); ``url_set``: whether
    the same block sets httpProxy or httpsProxy, one of which both require as soon as any
    proxy field is set (``*`` included)."""
    if value == "":
        return []
    out = [] if url_set else [Refusal(value, -1, f"is set without httpProxy or httpsProxy, and "
                                                 f"{validator} requires one of them whenever a "
                                                 "proxy field is set")]
    if value == WHOLE_WILDCARD:
        return out
    if validator == INSTALLER and " " in value:
        out.append(Refusal(value, -1, "holds spaces, which openshift-install refuses "
                                      "('noProxy must not have spaces')"))
    for index, piece in enumerate(value.split(",")):
        entry = piece.strip(_GO_SPACES)
        why = _entry_refused(entry)
        if why and piece and not entry:  # spaces only: trimmed to an empty entry
            out.append(Refusal(piece, index, "is only spaces, an empty entry once trimmed"))
        elif why:
            out.append(Refusal(entry, index, why))
    return out


def _entry_refused(entry: str) -> str:
    if _is_domain(entry) or parse_address(entry) is not None or go_parse_cidr(entry):
        return ""
    if not entry:
        return "is empty (two commas in a row, or one at an end)"
    if entry.startswith("*.") and _is_domain(entry[1:]):
        return (f"is a wildcard: only the whole value '*' may be one; write {entry[1:]!r}, "
                "which matches the domain's subdomains")
    if entry != entry.lower() and _is_domain(entry.lower()):
        return "has upper-case letters, which a DNS-1123 domain has not"
    if ":" in entry and "/" not in entry and _is_domain(entry.rpartition(":")[0]):
        return "carries a port: entries are domains, IP addresses or CIDRs"
    return "is no DNS-1123 domain, IP address or CIDR"


def _is_domain(entry: str) -> bool:
    name = entry.removeprefix(".").removesuffix(".")
    return len(name) <= _DNS1123_SUBDOMAIN_MAX and _DNS1123_SUBDOMAIN.fullmatch(name) is not None


def go_parse_cidr(text: str) -> bool:
    """Whether Go's ``net.ParseCIDR`` accepts ``text``: an address as Go's ``net.ParseIP`` reads
    it, ``/``, and decimal digits (leading zeros allowed) up to the address's bit length;
    host bits may be set."""
    address, slash, prefix = text.partition("/")
    ip = parse_address(address) if slash else None
    if ip is None or not _PREFIX_DIGITS.fullmatch(prefix) or len(prefix) > 8:
        return False
    return int(prefix) <= ip.max_prefixlen
