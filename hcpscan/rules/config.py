"""`.hcpscan.yaml`: rule selection, severity overrides, exemptions and inputs the scan cannot infer.

Example::

    select: [HCP, PRX]            # rule ids, id prefixes or categories
    ignore: [PRX007]
    severity: {PRX005: high}
    fail_on: medium
    exemptions:
      - rule: HCP001
        namespace: "clusters-lab-*"
        name: "*"
        reason: lab clusters sit behind the lab firewall (ticket NET-1234)
        expires: 2027-03-31
    inputs:
      worker_cidrs: [10.0.0.0/16]
      secondary_networks: {"vm-ns/storage-net": [192.168.100.0/24]}
      proxy_ca_files: [certs/corp-proxy-ca.pem]
      proxy_intercepts_tls: true    # the http:// proxy re-signs TLS (default: when a trustedCA names its CA)
      runtime_versions: {curl: "7.88", node-undici: "7"}   # releases consumers run (quoted)
      managed_cluster_kas_ip: 172.30.0.1
      proxy_addresses: {proxy.corp.example.com: [10.20.0.5]}  # what the proxy name resolves to
      firewall: perimeter.yaml      # see `hcpscan connectivity --help` for the format
"""

from __future__ import annotations

import datetime as dt
import hashlib
import ipaddress
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hcpscan.analysis.proxy.noproxy import RuntimeRef, UnknownRuntime
from hcpscan.analysis.proxy.versions import configured_versions
from hcpscan.core.yamldocs import InputLimitError, YamlSyntaxError, locate, parse_documents
from hcpscan.rules.schema import SEVERITIES
from hcpscan.sources.bounded import read_bounded
from hcpscan.sources.walk import CONFIG_NAMES

_DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"}
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "select": {"type": "array", "items": {"type": "string"}},
        "ignore": {"type": "array", "items": {"type": "string"}},
        "severity": {"type": "object", "additionalProperties": {"enum": SEVERITIES}},
        "fail_on": {"enum": SEVERITIES},
        "rules": {"type": "array", "items": {"type": "string"}},
        "exemptions": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["rule", "reason"],
            "properties": {
                "rule": {"type": "string"}, "reason": {"type": "string", "minLength": 3},
                "namespace": {"type": "string"}, "name": {"type": "string"},
                "kind": {"type": "string"}, "cluster": {"type": "string"}, "expires": _DATE,
            }}},
        "inputs": {
            "type": "object", "additionalProperties": False,
            "properties": {
                "worker_cidrs": {"type": "array", "items": {"type": "string"}},
                "secondary_networks": {"type": "object",
                                       "additionalProperties": {"type": "array",
                                                                "items": {"type": "string"}}},
                "proxy_ca_files": {"type": "array", "items": {"type": "string"}},
                # whether the http:// proxy intercepts TLS (re-signs servers' certificates)
                "proxy_intercepts_tls": {"type": "boolean"},
                "managed_cluster_kas_ip": {"type": "string"},
                # what a proxy host name resolves to: {proxy.corp.example.com: [10.0.0.5]}
                "proxy_addresses": {"type": "object",
                                    "additionalProperties": {"type": "array",
                                                             "items": {"type": "string"}}},
                "firewall": {"type": "string"},
                # the client release consumers run, e.g. {curl: "7.88", node-undici: "7"}
                "runtime_versions": {"type": "object",
                                     "additionalProperties": {"type": "string"}},
            }},
    },
}


class ConfigError(Exception):
    def __init__(self, path: str, line: int | None, message: str) -> None:
        super().__init__(f"{path}:{line or 1}: {message}")
        self.path, self.line, self.message = path, line, message


@dataclass(frozen=True, slots=True)
class Exemption:
    rule: str
    reason: str
    namespace: str = "*"
    name: str = "*"
    kind: str = "*"
    cluster: str = "*"
    expires: dt.date | None = None


@dataclass(slots=True)
class ScanConfig:
    path: str | None = None
    sha256: str | None = None  # of the file's bytes, so a report says exactly which config ran
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    severity: dict[str, str] = field(default_factory=dict)
    fail_on: str | None = None
    rule_dirs: list[Path] = field(default_factory=list)
    exemptions: list[Exemption] = field(default_factory=list)
    worker_cidrs: list[str] = field(default_factory=list)
    secondary_networks: dict[str, list[str]] = field(default_factory=dict)
    proxy_ca_files: list[Path] = field(default_factory=list)
    # An http:// proxy intercepts TLS: True/False as the user says; None = when the Proxy or
    # HostedCluster that configures it names a trustedCA (hcpscan.rules.templates.trust).
    proxy_intercepts_tls: bool | None = None
    managed_cluster_kas_ip: str | None = None
    proxy_addresses: dict[str, list[str]] = field(default_factory=dict)  # proxy host -> CIDRs
    firewall: Path | None = None  # perimeter file (security groups / firewall before the nodes)
    runtime_versions: dict[str, RuntimeRef] = field(default_factory=dict)  # pinned client releases


    def used(self) -> dict[str, str] | None:
        """What every report says about the config: its path and hash, or None."""
        if self.path is None:
            return None
        return {"path": self.path, "sha256": self.sha256 or ""}


def repository_root(cwd: Path) -> Path | None:
    """The root of the git checkout holding ``cwd`` (the nearest folder with ``.git``)."""
    here = cwd.resolve()
    return next((folder for folder in (here, *here.parents) if (folder / ".git").exists()), None)


def trusted_folders(cwd: Path) -> list[Path]:
    """Where a config may come from: the working directory and its parents up to the
    repository root (the first folder holding ``.git``); only the working directory
    when it is in no repository. Never above: a shared /tmp or home folder is not
    the user's project."""
    here = cwd.resolve()
    root = repository_root(here)
    if root is None:
        return [here]
    chain = [here, *here.parents]
    return chain[: chain.index(root) + 1]


def find_config(cwd: Path, scanned: list[Path] | tuple[Path, ...] = ()) -> Path | None:
    """The project's config, as ruff finds its own: the nearest one in
    ``trusted_folders(cwd)``.

    In a git checkout that config applies to every scan run from the checkout,
    also of ``.`` or of the folder holding the config (CI and pre-commit run from
    the repository root), when it is the project's, reviewed with its code: at the
    checkout's root or tracked by git. Configs
    deeper in a scanned tree (a received dump, a vendored repository) are never in
    that chain: the walker reports them, unapplied. Outside any checkout only the
    working directory's config counts, and not when the working directory is itself
    scanned: a dump someone sent, unpacked and entered, does not configure its own scan.
    """
    roots = [p.resolve() for p in scanned]
    checkout = repository_root(cwd)
    for folder in trusted_folders(cwd):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if not candidate.is_file():
                continue
            if not any(_within(candidate, root) for root in roots) or (
                    checkout is not None and _the_projects(candidate, checkout)):
                return candidate
    return None


def _the_projects(config: Path, checkout: Path) -> bool:
    """Is a config the scan also reads the checkout's own: at its root, or tracked by git
    (a monorepo's subproject)? A dump unpacked somewhere in a checkout and entered - or
    anywhere under a home folder kept in git - is untracked: its config stays input."""
    if config.parent == checkout:
        return True
    try:
        tracked = subprocess.run(
            ["git", "-C", str(checkout), "ls-files", "--error-unmatch", "--",
             str(config.relative_to(checkout))],
            capture_output=True, timeout=20, check=False)
    except (OSError, ValueError, subprocess.SubprocessError):
        return False  # no git to ask: only the root's config counts
    return tracked.returncode == 0


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def load_config(path: Path) -> ScanConfig:
    try:  # under the budgets of an input file
        text = read_bounded(path)
        docs = list(parse_documents(text))
    except InputLimitError as exc:
        raise ConfigError(str(path), exc.line, f"not read: {exc.message}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), None, f"cannot read config: {exc}") from None
    except YamlSyntaxError as exc:
        raise ConfigError(str(path), exc.line, f"invalid YAML: {exc.message}") from None
    data = docs[0].body if docs else {}
    if data is None:
        data = {}
    import jsonschema  # only when there is a config file to validate

    validator = jsonschema.Draft202012Validator(CONFIG_SCHEMA)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        steps = tuple(errors[0].absolute_path)
        where = locate(text, 0, None, steps)
        field_path = ".".join(map(str, steps)) or "(top level)"
        raise ConfigError(str(path), where[0] if where else 1, f"{field_path}: {errors[0].message}")
    base = path.parent
    inputs = data.get("inputs", {})
    _check_values(text, path, data)
    return ScanConfig(
        path=str(path), sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        select=data.get("select", []), ignore=data.get("ignore", []),
        severity=data.get("severity", {}), fail_on=data.get("fail_on"),
        rule_dirs=[base / d for d in data.get("rules", [])],
        exemptions=[Exemption(rule=e["rule"], reason=e["reason"], namespace=e.get("namespace", "*"),
                              name=e.get("name", "*"), kind=e.get("kind", "*"),
                              cluster=e.get("cluster", "*"),
                              expires=dt.date.fromisoformat(e["expires"]) if e.get("expires") else None)
                    for e in data.get("exemptions", [])],
        worker_cidrs=inputs.get("worker_cidrs", []),
        secondary_networks=inputs.get("secondary_networks", {}),
        proxy_ca_files=[base / p for p in inputs.get("proxy_ca_files", [])],
        proxy_intercepts_tls=inputs.get("proxy_intercepts_tls"),
        managed_cluster_kas_ip=inputs.get("managed_cluster_kas_ip"),
        proxy_addresses={k.lower(): v for k, v in inputs.get("proxy_addresses", {}).items()},
        firewall=base / inputs["firewall"] if inputs.get("firewall") else None,
        runtime_versions=configured_versions(inputs.get("runtime_versions", {})),
    )


def _check_values(text: str, path: Path, data: dict[str, Any]) -> None:
    """What the schema cannot say: dates that exist, CIDRs and IPs that parse, files
    that are there. Each error names the line, like schema errors."""
    def fail(steps: tuple[Any, ...], message: str) -> None:
        where = locate(text, 0, None, steps)
        raise ConfigError(str(path), where[0] if where else 1,
                          f"{'.'.join(map(str, steps))}: {message}")

    for i, exemption in enumerate(data.get("exemptions", [])):
        if exemption.get("expires"):
            try:
                dt.date.fromisoformat(exemption["expires"])
            except ValueError as exc:
                fail(("exemptions", i, "expires"), f"not a date: {exc}")
    inputs = data.get("inputs", {})
    for i, cidr in enumerate(inputs.get("worker_cidrs", [])):
        _network(cidr, lambda m, i=i: fail(("inputs", "worker_cidrs", i), m))
    for key, cidrs in inputs.get("secondary_networks", {}).items():
        for i, cidr in enumerate(cidrs):
            _network(cidr, lambda m, key=key, i=i: fail(("inputs", "secondary_networks", key, i), m))
    for host, cidrs in inputs.get("proxy_addresses", {}).items():
        for i, cidr in enumerate(cidrs):
            _network(cidr, lambda m, host=host, i=i: fail(("inputs", "proxy_addresses", host, i), m))
    if inputs.get("managed_cluster_kas_ip"):
        try:
            ipaddress.ip_address(inputs["managed_cluster_kas_ip"])
        except ValueError:
            fail(("inputs", "managed_cluster_kas_ip"),
                 f"{inputs['managed_cluster_kas_ip']!r} is not an IP address")
    for i, name in enumerate(inputs.get("proxy_ca_files", [])):
        if not (path.parent / name).is_file():
            fail(("inputs", "proxy_ca_files", i), f"file not found: {path.parent / name}")
    if inputs.get("firewall") and not (path.parent / inputs["firewall"]).is_file():
        fail(("inputs", "firewall"), f"file not found: {path.parent / inputs['firewall']}")
    for name, version in inputs.get("runtime_versions", {}).items():
        try:
            configured_versions({name: version})
        except UnknownRuntime as exc:
            fail(("inputs", "runtime_versions", name), str(exc))


def _network(cidr: str, fail: Any) -> None:
    try:
        ipaddress.ip_network(cidr, strict=True)
    except ValueError as exc:
        fail(f"not a CIDR: {exc}")
