"""What makes a proxy value unusable whatever the client: malformed URLs and NO_PROXY
entries, template leftovers, and credentials written in plain text.

A proxy URL is ``scheme://[user[:password]@]host[:port][/]``; the schemes a field
accepts depend on its API (``accepted_schemes``). NO_PROXY entries are classified
by the proxy model (``parse_no_proxy``); on top of its ``invalid`` entries, entries
that parse but can never match a host (an empty domain, a port outside 1-65535, a
dotted quad that is no IP address, characters no host name has) are reported.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from functools import lru_cache
from urllib.parse import quote, urlsplit

from hcpscan.analysis.proxy.hosts import strict_ip, to_ascii
from hcpscan.analysis.proxy.noproxy import NoProxyEntry, parse_no_proxy
from hcpscan.analysis.proxy.settings import (
    CLUSTER_PROXY,
    CONTAINER,
    HOSTED_CLUSTER,
    INSTALL_CONFIG,
    KLUSTERLET_CONFIG,
    KUBEADM_FILE,
    KUBECONFIG,
    SYSTEMD,
    ConsumerProxy,
)
from hcpscan.core.redact import mask_credentials
from hcpscan.core.userinfo import Credential, find_credentials, without_userinfo
from hcpscan.model.openshift_noproxy import INSTALLER, NETWORK_OPERATOR, Refusal, refused_no_proxy

_HOST_NAME = re.compile(r"^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?$")
_DOTTED_NUMBERS = re.compile(r"^[0-9]+(?:\.[0-9]+){1,3}$")
# What a Go/Helm renderer leaves when a value was missing or not rendered at all.
_LEFTOVERS = ("<no value>", "{{", "}}")


def accepted_schemes(role: str, name: str) -> tuple[str, ...]:
    """The proxy URL schemes a field accepts. ``config.openshift.io`` Proxy (and a
    HostedCluster's ``configuration.proxy``, the same API type): ``httpProxy`` http only,
    ``httpsProxy`` http or https (DOMAIN.md §4), and so an install-config's, which becomes
    it; a kubeconfig ``proxy-url`` and a KlusterletConfig ``proxyURL`` also socks5;
    everything else http or https."""
    if role in (CLUSTER_PROXY, HOSTED_CLUSTER, INSTALL_CONFIG) and name == "httpProxy":
        return ("http",)  # the installer's proxy becomes the Proxy spec
    if role == KUBECONFIG or (role == KLUSTERLET_CONFIG and name == "proxyURL"):
        return ("http", "https", "socks5")  # what their Go transport dials
    return ("http", "https")


def scheme_optional(role: str) -> bool:
    """Whether a proxy URL without scheme works there: environment variables, which Go, curl
    and Python read as ``http://`` (DOMAIN.md §7); API fields require the scheme."""
    return role in (CONTAINER, SYSTEMD, KUBEADM_FILE)


def leftover(value: str) -> str:
    """The template leftover a value holds ('' for none): ``<no value>`` is what Go's
    text/template prints for a missing key, ``{{ }}`` a template never rendered."""
    return next((mark for mark in _LEFTOVERS if mark in value), "")


def proxy_url_problems(value: str, schemes: Iterable[str], bare_ok: bool = False) -> list[str]:
    """Why ``value`` is not a usable proxy URL with one of ``schemes`` ([] = fine or unset);
    ``bare_ok``: ``host:port`` without scheme reads as ``http://host:port``."""
    allowed = [s.lower() for s in schemes]
    text = value.strip()
    if not text:
        return []  # empty means unset in every API that has these fields
    if leftover(text):
        return [f"holds the template leftover {leftover(text)!r}: the renderer had no value for it"]
    expected = " or ".join(f"{s}://" for s in allowed)
    if "://" not in text and bare_ok:
        text = "http://" + text
    broken, text = _userinfo_problem(text)
    if broken:  # the rest judged as if the userinfo were written right
        return [broken, *proxy_url_problems(text, allowed)]
    if any(c.isspace() for c in text):
        return ["contains whitespace"]
    if "://" not in text:
        return [f"has no scheme (expected {expected}host:port)"]
    try:  # without the userinfo: Python's messages quote the netloc, password and all
        parts = urlsplit(without_userinfo(text))
    except ValueError:
        return ["host holds characters that Unicode normalization (NFKC) turns into "
                "'/', '?', '#', '@' or ':', which clients read differently"]
    problems = []
    if parts.scheme.lower() not in allowed:
        problems.append(f"uses scheme {parts.scheme or '(empty)'}:// where only {expected} "
                        "is accepted")
    host = parts.hostname or ""
    if not host:
        problems.append("has no host")
    elif not _valid_host(host):
        problems.append(f"host {host!r} is neither a host name nor an IP address")
    try:
        port = parts.port
    except ValueError:
        problems.append("port is not a number in 1-65535")
    else:
        if port == 0:
            problems.append("port 0 is not a port a proxy can listen on")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        problems.append("carries a path, query or fragment: a proxy URL is "
                        "scheme://[user:password@]host:port")
    return problems


# What Go's net/url takes unescaped in a URL's userinfo (``validUserinfo``): anything else
# is refused ("invalid userinfo"), and '/', '?' or '#' end the authority before the '@'
# (the user name becomes the host, the password its port: "invalid port"). '@' is allowed:
# the last '@' ends the userinfo. Every OpenShift and Kubernetes component parses a proxy
# URL with it (net/http's ProxyFromEnvironment, the operators' validation).
_GO_USERINFO = frozenset(string.ascii_letters + string.digits + "-._:~!$&'()*+,;=%@")
_AUTHORITY_CUT = "/?#"
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _userinfo_problem(text: str) -> tuple[str, str]:
    """Why Go's url.Parse cannot read the user name and password of the one URL ``text``
    ('' when it can), and the URL without them (to judge the rest)."""
    if "@" not in text:
        return "", text
    found = [c for c in credentials(text) if c.start == 0 and c.scheme]
    if not found:
        return "", text
    cred = found[0]
    userinfo = f"{cred.user}:{cred.password}"
    odd = sorted({c for c in userinfo if c not in _GO_USERINFO}, key=userinfo.index)
    rest = f"{cred.scheme}://{cred.host}{text[cred.end:]}"
    if not odd and not _BAD_ESCAPE.search(userinfo):
        return "", text
    where = "password" if any(c in cred.password for c in odd) or _BAD_ESCAPE.search(cred.password) \
        else "user name"
    if not odd:
        return (f"{where} holds a '%' that starts no %XX escape: Go's url.Parse refuses the URL "
                "(invalid URL escape); write a literal '%' as %25"), rest
    shown = ", ".join(repr(c) if c.isprintable() and not c.isspace() else f"U+{ord(c):04X}"
                      for c in odd)
    codes = ", ".join(quote(c, safe="") for c in odd)
    cut = [c for c in odd if c in _AUTHORITY_CUT]
    effect = (f"Go's url.Parse ends the host at {cut[0]!r}, reads the rest of the user name "
              "and password as host and port, and refuses the URL (or sends it to the wrong host)"
              if cut else "Go's url.Parse refuses the URL (invalid userinfo)")
    return (f"{where} holds {shown} unescaped: {effect}; percent-encode "
            f"{'it' if len(odd) == 1 else 'them'} in the URL as {codes}"), rest


def _valid_host(host: str) -> bool:
    if strict_ip(host) is not None:
        return True
    if _DOTTED_NUMBERS.match(host):
        return False
    return bool(_HOST_NAME.match(to_ascii(host).lower()))


def no_proxy_entry_problem(entry: NoProxyEntry) -> str | None:
    """Why one NO_PROXY entry is malformed, or None."""
    if leftover(entry.raw):
        return f"is the template leftover {leftover(entry.raw)!r}: the renderer had no value for it"
    if entry.kind == "invalid":
        if "://" in entry.raw:
            return "is a URL: NO_PROXY takes host names, domains, IPs and CIDRs, no scheme"
        if "/" in entry.raw:
            return "is not a valid CIDR"
        return "is not a host, domain, IP or CIDR"
    if entry.port is not None and not 0 < entry.port < 65536:
        return f"port {entry.port} is outside 1-65535"
    if entry.kind in ("domain", "subdomains"):
        if not entry.host:
            return "names no domain (an empty suffix matches nothing)"
        if _DOTTED_NUMBERS.match(entry.host):
            return "looks like an IP address but is not one"
        if ".." in entry.host:
            return "has an empty label (two dots in a row)"
        if not _HOST_NAME.match(to_ascii(entry.host)):
            return "holds characters no host name has (entries are comma-separated)"
    return None


def no_proxy_problems(value: str) -> list[tuple[str, str]]:
    """(entry as written, why) for every malformed entry of a comma-separated list. A URL
    with a password in the list is read masked: its password may hold a comma, which
    would cut it into entries that no longer look like credentials."""
    out = []
    for entry in parse_no_proxy(mask_credentials(value)):
        why = no_proxy_entry_problem(entry)
        if why is not None:
            out.append((entry.raw, why))
    return out


# Who validates a noProxy value written in a consumer of these kinds, and what a refusal does.
_OPENSHIFT_VALIDATORS = {
    CLUSTER_PROXY: (NETWORK_OPERATOR, "the cluster-network-operator rejects the whole Proxy "
                    "(Degraded, InvalidProxyConfig) and leaves its status as it was: no "
                    "component gets this spec's proxy settings, its URLs included"),
    INSTALL_CONFIG: (INSTALLER, "openshift-install refuses the install-config and installs "
                     "nothing"),
    # HyperShift copies spec.configuration.proxy into the hosted cluster's Proxy spec
    # (globalconfig ReconcileProxyConfig), which the hosted cluster's network operator
    # validates as any Proxy; HyperShift's own computed status for nodes skips that check.
    HOSTED_CLUSTER: (NETWORK_OPERATOR, "HyperShift copies it into the hosted cluster's Proxy "
                     "spec, and the hosted cluster's cluster-network-operator rejects that "
                     "Proxy (network Degraded, InvalidProxyConfig) and leaves its status as it "
                     "was: the hosted cluster's operators do not get these proxy settings, "
                     "while HyperShift still gives them to the nodes as written"),
}


def openshift_validated(consumer: ConsumerProxy) -> bool:
    """Whether an OpenShift validator reads the consumer's proxy fields: it tests them with
    ``len(x) > 0``, untrimmed, so a value of spaces is set (and invalid), not unset."""
    return consumer.kind in _OPENSHIFT_VALIDATORS and consumer.part != "status"


def openshift_url_refusal(consumer: ConsumerProxy, value: str) -> str:
    """Why OpenShift's validator refuses a proxy URL that ``proxy_url_problems`` takes as
    unset: a value of spaces is set for it (``len(x) > 0``) and fails ``ParseRequestURI``
    ('' when it does not refuse it)."""
    if not value or value.strip() or not openshift_validated(consumer):
        return ""
    validator, effect = _OPENSHIFT_VALIDATORS[consumer.kind]
    return (f"is only spaces, which {validator} takes as set (it tests the length, untrimmed) "
            f"and refuses as no URL: {effect}")


def openshift_refusals(consumer: ConsumerProxy, value: str) -> tuple[list[Refusal], str]:
    """Each reason OpenShift's validator of the consumer's noProxy refuses ``value``, and
    what the refusal does; ([], '') where no such validator reads it (a Proxy's status is
    the operator's own output)."""
    if consumer.kind not in _OPENSHIFT_VALIDATORS or consumer.part == "status":
        return [], ""
    validator, effect = _OPENSHIFT_VALIDATORS[consumer.kind]
    url_set = any(s.value for name in ("httpProxy", "httpsProxy")  # len(x) > 0, untrimmed
                  if (s := consumer.variables.get(name)) is not None)
    refusals = refused_no_proxy(mask_credentials(value), validator, url_set)
    return refusals, effect if refusals else ""


def credentials(text: str) -> list[Credential]:
    """Every ``user:password@`` in ``text``: with a scheme, or without one as Go, curl and
    Python accept a proxy (``user:password@host:port`` reads as ``http://``)."""
    if "@" not in text:
        return []  # a credential needs '@' (find_credentials says the same, at once)
    if len(text) > _REMEMBERED_LENGTH:
        return find_credentials(text)
    return list(_credentials(text))


# A fleet writes one script or env value into every control plane (an 8 kB shell script
# with '@' in each HCP namespace): its credentials are read once. Texts up to 16 Ki
# characters, the last 1,024 of them, are remembered (16 Mi characters at most, however
# hostile the input).
_REMEMBERED_LENGTH = 16 * 1024


@lru_cache(maxsize=1024)
def _credentials(text: str) -> tuple[Credential, ...]:
    return tuple(find_credentials(text))
