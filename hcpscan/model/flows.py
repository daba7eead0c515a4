"""The flows a hosted control plane needs open, as data (``flows.yaml`` beside this module).

One entry per row of the published networking tables (OpenShift's and HyperShift's): who sends (the workers,
control-plane workloads, ...), to what (a workload's port, or a named destination),
on which protocols, when (platform, publishing strategy, endpoint access), and how
hcpscan checks it (or why it cannot from manifests). Users add flows in a YAML file of
the same shape (``flows:`` list), given to the rules with ``flows_file`` or to
``hcpscan flows list --flows FILE``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from hcpscan.core.yamldocs import InputLimitError, YamlSyntaxError, parse_documents
from hcpscan.model.hostedcluster import (
    DEFAULT_KAS_PORT,
    KAS_PORT_BY_PLATFORM,
    KAS_SERVICE_PORT_BY_PLATFORM,
    HostedCluster,
)
from hcpscan.model.publishing import private_access
from hcpscan.sources.bounded import read_bounded

CATALOG = Path(__file__).with_name("flows.yaml")
CHECKS = ("ingress", "egress", "worker-egress", "guest-egress", "operator-ingress", "none")
SOURCES = ("workers", "clients", "kubelet", "pod", "guest-pods")  # besides {hcp: all | [apps]}
NAMED = ("dns", "outside", "management-kas", "hosted-kas", "proxy")
MANAGEMENT_SOURCE = "mgmt:"  # a source workload of the management cluster, by namespace/name


class FlowError(ValueError):
    """A flow catalog that cannot be used: where, what, and what to do."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a flow goes: a workload of the HCP namespace by app label and pod port, or a
    named destination (dns, outside, management-kas); ``service`` is the spec.services
    entry that publishes the workload."""

    app: str = ""
    named: str = ""
    port: int | str | None = None  # an int, "kas" (the cluster's API server port), None: dns
    service: str = ""

    def port_for(self, hc: HostedCluster) -> int | None:
        """The port ``kas`` stands for where this endpoint is: the API server pods' port on
        the kube-apiserver workload, the node-local haproxy's at the hosted cluster's API
        server (hosted-kas), the published load balancer's from outside."""
        if self.port != "kas":
            return int(self.port) if self.port else None
        if self.named == "hosted-kas":
            return hc.kas_local_port
        if self.named:
            return hc.kas_service_port
        return hc.kas_port

    def text(self, hc: HostedCluster | None = None) -> str:
        port: int | str | None = self.port_for(hc) if hc is not None else self.port
        if port == "kas":  # the catalog's view: every platform's API server port
            ports = KAS_PORT_BY_PLATFORM if self.app else KAS_SERVICE_PORT_BY_PLATFORM
            port = f"{DEFAULT_KAS_PORT} (" + ", ".join(
                f"{p} on {name}" for name, p in ports.items()) + ")"
        if self.named == "proxy" and hc is not None:
            from hcpscan.model.destinations import proxy_endpoint

            found = proxy_endpoint(hc.proxy)
            if found is not None:
                return f"the proxy {found[0]}:{found[1]} ({found[2]})"
        what = self.app or self.named
        return f"{what}:{port}" if port else what


# The public documents the built-in catalog's citations name by number ("001 §14.1.1 Table
# 14.1: ..."): what a user is told instead of the number, and where to read it.
CITED_DOCUMENTS = {
    "001": ("OpenShift 'Networking for hosted control planes'",
            "https://docs.redhat.com/en/documentation/openshift_container_platform/4.18/html/"
            "hosted_control_planes/networking-for-hosted-control-planes"),
    "002": ("HyperShift 'HCP networking requirements'",
            "https://github.com/openshift/hypershift/blob/main/docs/content/how-to/common/"
            "hcp-networking-requirements.md"),
    "003": ("HyperShift's NetworkPolicies of the HCP namespace (network_policies.go)",
            "https://github.com/openshift/hypershift/blob/main/hypershift-operator/controllers/"
            "hostedcluster/network_policies.go"),
    "004": ("HyperShift's API server proxy on the nodes (haproxy.go)",
            "https://github.com/openshift/hypershift/blob/main/hypershift-operator/controllers/"
            "nodepool/haproxy.go"),
}


def cited(line: str) -> str:
    """A catalog citation with its document named: ``001 §14.1.1 Table 14.1: ...`` becomes
    ``OpenShift 'Networking for hosted control planes' §14.1.1 Table 14.1: ...``; a user's
    own citation is returned as written."""
    number, _, rest = line.partition(" ")
    return f"{CITED_DOCUMENTS[number][0]} {rest}" if number in CITED_DOCUMENTS and rest else line


def cited_documents(lines: tuple[str, ...]) -> list[str]:
    """``name: URL`` of each numbered document ``lines`` cite, in number order."""
    numbers = sorted({line.partition(" ")[0] for line in lines} & CITED_DOCUMENTS.keys())
    return [f"{CITED_DOCUMENTS[n][0]}: {CITED_DOCUMENTS[n][1]}" for n in numbers]


@dataclass(frozen=True, slots=True)
class Flow:
    id: str
    title: str
    # workers, clients, kubelet, pod, guest-pods; ("*",) all HCP workloads; ("app", ...) HCP
    # workloads by app label; ("mgmt:ns/name", ...) management workloads by namespace/name
    source: str | tuple[str, ...]
    targets: tuple[Endpoint, ...]
    protocols: tuple[str, ...]
    check: str
    seed: tuple[str, ...]
    checked_by: str = ""
    reason: str = ""
    dns_protocols: tuple[str, ...] = ("TCP", "UDP")
    platforms: tuple[str, ...] = ()  # empty: every platform
    published: dict[str, tuple[str, ...]] = field(default_factory=dict)
    endpoint_access: tuple[str, ...] = ()
    line: int = 0

    @property
    def source_text(self) -> str:
        if isinstance(self.source, str):
            return self.source
        return "control-plane workloads" if self.source == ("*",) else ", ".join(
            s.removeprefix(MANAGEMENT_SOURCE) for s in self.source)

    def applies(self, hc: HostedCluster) -> str:
        """'' when the flow applies to ``hc``, else why not."""
        if self.platforms and hc.platform not in self.platforms:
            return f"platform {hc.platform} is not one of {', '.join(self.platforms)}"
        for service, types in self.published.items():
            strategy = hc.publishing.get(service)
            if strategy is None:
                return f"spec.services publishes no {service}"
            if strategy.type not in types:
                return f"{service} is published as {strategy.type}, not {' or '.join(types)}"
        if self.endpoint_access:
            access = private_access(hc)
            value = access[1] if access else ""
            if value not in self.endpoint_access:
                return f"endpoint access is {value or 'Public'}, not {' or '.join(self.endpoint_access)}"
        return ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "from": self.source_text,
                "to": [t.text() for t in self.targets], "protocols": list(self.protocols),
                "check": self.check, "checked_by": self.checked_by, "reason": self.reason,
                "platforms": list(self.platforms) or ["any"],
                "published": {k: list(v) for k, v in self.published.items()},
                "endpoint_access": list(self.endpoint_access), "seed": list(self.seed)}


def load_flows(path: Path | str | None = None) -> tuple[Flow, ...]:
    """The flows of the built-in catalog, or of ``path`` (a user's file of that shape)."""
    if path is None:
        return _builtin()
    return _parse(Path(path))


@lru_cache(maxsize=1)
def _builtin() -> tuple[Flow, ...]:
    return _parse(CATALOG)


def flow_by_id(flow_id: str, flows: tuple[Flow, ...] | None = None) -> Flow | None:
    return next((f for f in flows or load_flows() if f.id == flow_id), None)


def parse_flow(item: Any, where: str = "flow") -> Flow:
    """One flow written as a catalog entry (e.g. in a rule's ``define`` param); raises
    FlowError saying what is wrong."""
    return _flow(item, where, 0)


def ingress_flow_to(app: str, port: int) -> Flow | None:
    """The built-in ingress flow whose target is ``app`` on pod port ``port`` (the
    restricting rules ask it the other way round), if any."""
    for flow in _builtin():
        if flow.check == "ingress" and any(t.app == app and t.port == port for t in flow.targets):
            return flow
    return None


def _parse(path: Path) -> tuple[Flow, ...]:
    try:  # under the budgets of an input file (size, nodes with aliases, depth)
        text = read_bounded(path)
    except InputLimitError as exc:
        raise FlowError(f"{path}:{exc.line or 1}: not read: {exc.message}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FlowError(f"{path}: cannot read the flow catalog "
                        f"({getattr(exc, 'strerror', None) or exc})") from None
    try:
        docs = list(parse_documents(text))
    except YamlSyntaxError as exc:
        raise FlowError(f"{path}:{exc.line or 1}: not YAML ({exc.message}); fix the file") from None
    data = docs[0].body if len(docs) == 1 else None
    # within the budgets now: composed again only for the line of each flow
    doc = yaml.compose(text, Loader=yaml.SafeLoader) if data is not None else None
    if not isinstance(data, dict) or not isinstance(data.get("flows"), list):
        raise FlowError(f"{path}:1: a flow catalog is a mapping with a `flows:` list")
    lines = _item_lines(doc)
    flows, seen = [], set()
    for i, item in enumerate(data["flows"]):
        line = lines[i] if i < len(lines) else 0
        flow = _flow(item, f"{path}:{line}", line)
        if flow.id in seen:
            raise FlowError(f"{path}:{line}: flow id {flow.id!r} appears twice")
        seen.add(flow.id)
        flows.append(flow)
    return tuple(flows)


def _item_lines(doc: Any) -> list[int]:
    if not isinstance(doc, yaml.MappingNode):
        return []
    for key, value in doc.value:
        if key.value == "flows" and isinstance(value, yaml.SequenceNode):
            return [node.start_mark.line + 1 for node in value.value]
    return []


def _flow(item: Any, where: str, line: int) -> Flow:
    if not isinstance(item, dict):
        raise FlowError(f"{where}: a flow is a mapping (id, title, from, to, protocols, check, seed)")
    missing = [k for k in ("id", "title", "from", "to", "check", "seed") if k not in item]
    if missing:
        raise FlowError(f"{where}: flow {item.get('id', '?')!r} lacks {', '.join(missing)}")
    check = item["check"]
    if check not in CHECKS:
        raise FlowError(f"{where}: check {check!r} is not one of {', '.join(CHECKS)}")
    if check == "none" and not item.get("reason"):
        raise FlowError(f"{where}: flow {item['id']!r} is not checkable: say why in `reason`")
    when = item.get("when") or {}
    if not isinstance(when, dict):
        raise FlowError(f"{where}: `when` is a mapping (platforms, published, endpoint_access)")
    protocols = tuple(str(p).upper() for p in item.get("protocols") or ["TCP"])
    if any(p not in ("TCP", "UDP", "SCTP") for p in protocols):
        raise FlowError(f"{where}: protocols are TCP, UDP or SCTP")
    return Flow(
        id=str(item["id"]), title=str(item["title"]), source=_source(item["from"], where),
        targets=tuple(_endpoint(t, where) for t in _list(item["to"], where, "to")),
        protocols=protocols, check=check, seed=tuple(str(s) for s in _list(item["seed"], where, "seed")),
        checked_by=str(item.get("checked_by") or ""), reason=str(item.get("reason") or ""),
        dns_protocols=tuple(str(p).upper() for p in item.get("dns_protocols") or ["TCP", "UDP"]),
        platforms=tuple(str(p) for p in when.get("platforms") or ()),
        published={str(k): tuple(str(t) for t in v) for k, v in (when.get("published") or {}).items()},
        endpoint_access=tuple(str(v) for v in when.get("endpoint_access") or ()),
        line=line)


def _list(value: Any, where: str, name: str) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise FlowError(f"{where}: `{name}` is a non-empty list")
    return value


def _source(value: Any, where: str) -> str | tuple[str, ...]:
    if isinstance(value, str) and value in SOURCES:
        return value
    if isinstance(value, dict) and value.get("hcp") == "all" and "management" not in value:
        return ("*",)
    if isinstance(value, dict) and ({"hcp", "management"} & set(value)):
        apps = [str(a) for a in _list(value["hcp"], where, "from.hcp")] if "hcp" in value else []
        names = ([str(n) for n in _list(value["management"], where, "from.management")]
                 if "management" in value else [])
        bad = [n for n in names if n.count("/") != 1 or not all(n.split("/"))]
        if bad:
            raise FlowError(f"{where}: `from.management` names workloads as namespace/name, "
                            f"not {bad[0]!r} (e.g. hypershift/operator)")
        return tuple(MANAGEMENT_SOURCE + n for n in names) + tuple(apps)
    raise FlowError(f"{where}: `from` is one of {', '.join(SOURCES)}, {{hcp: all | [apps]}} or "
                    "{management: [namespace/name]}")


def _endpoint(value: Any, where: str) -> Endpoint:
    if not isinstance(value, dict) or not ({"app", "named"} & set(value)):
        raise FlowError(f"{where}: a `to` item names an app (with a port) or a named "
                        f"destination ({', '.join(NAMED)})")
    named = str(value.get("named") or "")
    if named and named not in NAMED:
        raise FlowError(f"{where}: named destination {named!r} is not one of {', '.join(NAMED)}")
    port = value.get("port")
    if named == "proxy" and port is not None:
        raise FlowError(f"{where}: the proxy's port is its URL's (spec.configuration.proxy): "
                        "leave out `port`")
    if value.get("app") and port is None:
        raise FlowError(f"{where}: `to` app {value['app']!r} needs a port")
    if port is not None and port != "kas" and not (isinstance(port, int) and 0 < port < 65536):
        raise FlowError(f"{where}: port {port!r} is neither 1-65535 nor kas")
    return Endpoint(app=str(value.get("app") or ""), named=named, port=port,
                    service=str(value.get("service") or ""))
