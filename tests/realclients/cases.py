"""Seeded NO_PROXY cases for the real-client conformance run.

A case group is one process environment (proxy variables, NO_PROXY, sometimes
REQUEST_METHOD) and a few URLs; every URL of a group has its own authority, so
the recording proxy can tell which URL a request was for. Every proxy value
points at its own loopback address, ``127.<variable>.<group>``, so the address
a request arrives on names both the group and the variable that chose it.

Hosts are names under ``.test`` (never resolvable: inside the namespace names
come from /etc/hosts only), documentation addresses (``LOCAL_RANGES``) that the
namespace routes to its own ``lo``, and loopback addresses.
"""

from __future__ import annotations

import ipaddress
import random
from dataclasses import dataclass, field

PROXY_PORT = 3128
# Routed to lo inside the namespace: a direct request to them never leaves it.
LOCAL_RANGES = ("192.0.2.0/24", "198.51.100.0/24", "2001:db8::/32")
TARGET_PORTS = (80, 443, 8080, 8443)
# The variables a case may set; the index + 1 is the second octet of its proxy address.
VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
             "npm_config_http_proxy", "npm_config_https_proxy", "npm_config_proxy",
             "CGI_HTTP_PROXY", "http.proxyHost", "https.proxyHost")

HOSTS = ("example.test", "www.example.test", "api.corp.example.test", "corp.example.test",
         "other.test", "notexample.test", "WWW.Example.Test", "www.example.test.",
         "example.test.", "localhost", "svc.cluster.test",
         "192.0.2.10", "192.0.2.200", "198.51.100.7", "127.0.0.1", "127.0.0.2",
         "[2001:db8::1]", "[2001:db8::a:1]", "[2001:DB8:0:0::5]", "[::1]", "[2001:db8:1::9]")
ENTRIES = ("example.test", ".example.test", "*.example.test", "corp.example.test",
           ".corp.example.test", "*example.test", "test", ".test", "*", "other.test",
           "EXAMPLE.TEST", "example.test.", ".example.test.", "www.example.test",
           "example.test:8080", "www.example.test:443", "other.test:80", "localhost",
           "cluster.test", ".svc.cluster.test",
           "192.0.2.10", "192.0.2.0/24", "192.0.2.0/28", "198.51.100.0/25", "198.51.100.7:8443",
           "127.0.0.1", "127.0.0.0/8",
           "2001:db8::1", "[2001:db8::1]", "2001:db8::/32", "[2001:db8::1]:443", "::1",
           "2001:db8::a:1", "2001:db8:0:0::5", "2001:db8:1::/48", "[2001:db8::a:1]:8080",
           "[2001:db8::5]", "[2001:db8:0:0::5]", "fd00::/8")
JAVA_ENTRIES = ("example.test", "*.example.test", "*example.test", "www.example.test",
                "*.test", "localhost", "192.0.2.10", "192.0.2.*", "198.51.*", "127.*",
                "[2001:db8::1]", "2001:db8::1", "*corp*", "EXAMPLE.TEST", "other.test")


@dataclass(frozen=True, slots=True)
class Group:
    gid: int
    env: dict[str, str] = field(default_factory=dict)
    urls: tuple[str, ...] = ()


def proxy_address(var: str, gid: int) -> str:
    return f"127.{VARIABLES.index(var) + 1}.{gid >> 8}.{gid & 255}"


def variable_of(address: str) -> tuple[str, int]:
    """(variable, group) from the local address a proxy request arrived on."""
    _, v, hi, lo = (int(p) for p in address.split("."))
    return VARIABLES[v - 1], (hi << 8) | lo


def authority_key(host: str, port: int) -> tuple[str, int]:
    """How a request's host compares across clients: lower case, no brackets, no
    trailing dot, IPv6 canonical."""
    host = host.strip("[]").lower().rstrip(".")
    try:
        host = ipaddress.ip_address(host).compressed
    except ValueError:
        pass
    return host, port


def url_key(url: str) -> tuple[str, int]:
    scheme, _, rest = url.partition("://")
    netloc = rest.split("/", 1)[0]
    if netloc.startswith("["):
        host, _, port = netloc[1:].partition("]")
        port = port.lstrip(":")
    else:
        host, _, port = netloc.partition(":")
    return authority_key(host, int(port) if port else (443 if scheme == "https" else 80))


def _urls(rng: random.Random, count: int) -> tuple[str, ...]:
    out: list[str] = []
    seen: set[tuple[str, int]] = set()
    while len(out) < count:
        scheme = rng.choice(("http", "https"))
        host = rng.choice(HOSTS)
        port = rng.choice((None, None, *TARGET_PORTS))
        url = f"{scheme}://{host}" + (f":{port}" if port else "") + "/"
        if url_key(url) not in seen:
            seen.add(url_key(url))
            out.append(url)
    return tuple(out)


def _no_proxy(rng: random.Random, pool: tuple[str, ...], joiners: tuple[str, ...]) -> str:
    entries = rng.sample(pool, rng.randint(1, 5))
    if rng.random() < 0.15:
        entries.insert(rng.randrange(len(entries) + 1), "")  # an empty entry
    text = entries[0]
    for entry in entries[1:]:
        text += rng.choice(joiners) + entry
    if rng.random() < 0.1:
        text = rng.choice((" ", ",", " ,")) + text + rng.choice(("", ",", " "))
    return text


def _proxy_value(rng: random.Random, var: str, gid: int) -> str:
    roll = rng.random()
    if roll < 0.08:
        return ""
    address = f"{proxy_address(var, gid)}:{PROXY_PORT}"
    return address if roll < 0.16 else f"http://{address}"


def env_groups(seed: int, count: int, per_group: int = 5) -> list[Group]:
    """Groups for clients that read environment variables."""
    rng = random.Random(seed)
    groups = []
    for gid in range(1, count + 1):
        env: dict[str, str] = {}
        for var in VARIABLES[:6]:
            if rng.random() < 0.45:
                env[var] = _proxy_value(rng, var, gid)
        if rng.random() < 0.1:
            npm = rng.choice(VARIABLES[6:9])
            env[npm] = f"http://{proxy_address(npm, gid)}:{PROXY_PORT}"
        for var in ("no_proxy", "NO_PROXY"):
            roll = rng.random()
            if roll < 0.55:
                env[var] = _no_proxy(rng, ENTRIES, (",", ",", ", ", " , ", ",,", " "))
            elif roll < 0.62:
                env[var] = ""
        if rng.random() < 0.06:
            env["REQUEST_METHOD"] = "GET"
            if rng.random() < 0.5:
                env["CGI_HTTP_PROXY"] = f"http://{proxy_address('CGI_HTTP_PROXY', gid)}:{PROXY_PORT}"
        groups.append(Group(gid, env, _urls(rng, per_group)))
    return groups


def java_groups(seed: int, count: int, per_group: int = 5) -> list[Group]:
    """Groups for Java: system properties instead of environment variables."""
    rng = random.Random(seed)
    groups = []
    for gid in range(1, count + 1):
        props: dict[str, str] = {}
        for prefix in ("http", "https"):
            if rng.random() < 0.75:
                props[f"{prefix}.proxyHost"] = proxy_address(f"{prefix}.proxyHost", gid)
                props[f"{prefix}.proxyPort"] = str(PROXY_PORT)
        roll = rng.random()
        if roll < 0.7:
            props["http.nonProxyHosts"] = _no_proxy(rng, JAVA_ENTRIES, ("|",))
        elif roll < 0.8:
            props["http.nonProxyHosts"] = ""
        groups.append(Group(gid, props, _urls(rng, per_group)))
    return groups


def _fact(gid: int, env: dict[str, str], *urls: str) -> Group:
    """A hand-written group; ``{http}``-style placeholders become that variable's proxy."""
    def fill(value: str) -> str:
        for var in VARIABLES:
            value = value.replace("{%s}" % var, f"{proxy_address(var, gid)}:{PROXY_PORT}")
        return value
    return Group(gid, {k: fill(v) for k, v in env.items()}, urls)


# The behaviours issue 16 names, so that every run exercises them whatever the seed.
_BOTH = {"http_proxy": "http://{http_proxy}", "https_proxy": "http://{https_proxy}"}
FACT_START = 4000


def fact_groups() -> list[Group]:
    facts = [
        (_BOTH | {"no_proxy": "2001:db8::/32"}, "http://[2001:db8::1]/", "https://[2001:db8::a:1]/"),
        (_BOTH | {"no_proxy": "other.test,*"}, "http://www.example.test/", "https://[::1]:8443/"),
        (_BOTH | {"no_proxy": "2001:db8::1,example.test."}, "http://[2001:db8::1]:8080/",
         "http://example.test/", "http://www.example.test./"),
        (_BOTH | {"no_proxy": "*.example.test"}, "http://example.test/", "https://www.example.test/"),
        ({"https_proxy": "http://{https_proxy}", "http_proxy": "http://{http_proxy}"},
         "https://other.test/", "https://192.0.2.10:8443/"),
        ({"http_proxy": "{http_proxy}", "no_proxy": "example.test"}, "http://other.test/",
         "http://example.test/", "https://api.example.test/"),
        ({"HTTP_PROXY": "http://{HTTP_PROXY}", "HTTPS_PROXY": "http://{HTTPS_PROXY}",
          "REQUEST_METHOD": "GET"}, "http://other.test/", "https://other.test/",
         "http://127.0.0.1:8080/"),
        (_BOTH | {"no_proxy": "[2001:db8:0:0::5]"}, "http://[2001:DB8:0:0::5]/"),
        ({"ALL_PROXY": "http://{ALL_PROXY}", "no_proxy": "192.0.2.0/24"}, "http://other.test/",
         "https://192.0.2.200/"),
    ]
    return [_fact(FACT_START + i, env, *urls) for i, (env, *urls) in enumerate(facts)]


def write_groups(groups: list[Group], path: str) -> None:
    """The drivers' input: ``G gid`` / ``E key value`` / ``U index url`` lines, tab-separated."""
    with open(path, "w", encoding="utf-8") as out:
        for g in groups:
            out.write(f"G\t{g.gid}\n")
            for key, value in g.env.items():
                out.write(f"E\t{key}\t{value}\n")
            for i, url in enumerate(g.urls):
                out.write(f"U\t{i}\t{url}\n")
