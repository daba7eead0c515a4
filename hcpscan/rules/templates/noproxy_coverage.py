"""Primitives over effective proxy settings: noProxy coverage, and proxies that must agree.

Everything here reads the proxy model (``hcpscan.analysis.proxy``) built once per
scan; NO_PROXY questions are answered by its Go evaluator (what Kubernetes and
OpenShift components use), never by string compares.

* ``noproxy_coverage`` (PRX005, PRX001 and users' coverage rules): service/pod networks,
  ``.svc``, ``.cluster.local``, loopback, the KAS service IP and a NodePool's secondary
  networks (judged on the management cluster Proxy) bypass the proxy;
* the helpers ``agreement`` (PRX002, PRX003 ...) reads consumers and the management
  Proxy with.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from hcpscan.analysis.proxy import (
    RUNTIME_NAMES,
    ConsumerProxy,
    NoProxyList,
    Setting,
    bypasses,
    covers_cidr,
    covers_domain,
)
from hcpscan.analysis.proxy.effective import dials_control_plane
from hcpscan.analysis.proxy.portability import divergence
from hcpscan.analysis.proxy.settings import (
    CLUSTER_PROXY,
    CONTAINER,
    HOSTED_CLUSTER,
    INSTALL_CONFIG,
    KONNECTIVITY_SIDECAR,
    KUBEADM_FILE,
    MANAGED_CLUSTER_ADDON,
    NEW_CONSUMER_OBJECTS,
    OLM_SUBSCRIPTION,
    READS_BY_CONSUMER,
    ROLES,
    SYSTEMD,
    field_in,
    setting_text,
)
from hcpscan.analysis.proxy.sides import management_proxy
from hcpscan.analysis.proxy.workloads import controlled_pod
from hcpscan.core.userinfo import split_outside_credentials
from hcpscan.findings.fix import AppendEntries, NoFix, Remedy
from hcpscan.inventory.fieldpath import format_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.model.clusters import (
    INFRASTRUCTURE_KINDS,
    ClusterNetworks,
    install_config_computed_no_proxy,
    kube_apiserver_networks,
    networks_for,
    scan_model,
)
from hcpscan.model.hostedcluster import (
    HYPERSHIFT_LOCAL_DOMAIN,
    HostedCluster,
    hosted_cluster,
    hosted_cluster_of_guest,
)
from hcpscan.model.ocm import (
    OWN_NAME_READS,
    KasIP,
    managed_cluster_kas_ip,
    own_managed_names,
)
from hcpscan.model.secondary import SecondaryNetwork, attaches_default_network, secondary_networks
from hcpscan.rules.context import PROXY_ANALYSES, Context
from hcpscan.rules.templates import register
from hcpscan.rules.templates.base import (
    NotApplicable,
    NotEvaluable,
    Outcome,
    Settled,
    Template,
    Violation,
)

GO = "go"  # every consumer judged here is a Go program (Kubernetes, OpenShift, containerd)
# The roles (settings.ROLES, the one name -> kind table) a ``consumers`` parameter here takes:
# all but these, which other templates judge (konnectivity, ignition, kubeconfig clients).
_OTHER_ROLES = ("konnectivity-sidecar", "ignition", "managed-cluster-addon", "kubeconfig")
CONSUMER_KINDS = {name: kind for name, kind in ROLES.items() if name not in _OTHER_ROLES}

# -- shared helpers (also used by the other proxy templates) ---------------------------


def per_rule(ctx: Context, params: dict[str, Any], name: str,
             build: Callable[[dict[str, Any]], _T]) -> _T:
    """What a rule's params give (the consumer kinds it judges, its variables), read once
    per rule and kept for the scan: a rule asks of every object of its kinds, hundreds of
    thousands in a fleet. ``build`` gives a value no check changes (frozensets, tuples)."""
    read: dict[tuple[str, int], tuple[dict[str, Any], Any]] = ctx.inventory.derived(
        "proxy-templates.per-rule", lambda _inventory: {})
    found = read.get((name, id(params)))
    if found is None or found[0] is not params:
        found = read[(name, id(params))] = (params, build(params))
    value: _T = found[1]
    return value


_T = TypeVar("_T")


def consumer_reads(names: Iterable[str]) -> tuple[str, ...]:
    """The kinds the model reads to build the consumers of these kinds (as rules name them)."""
    return tuple(dict.fromkeys(kind for name in names
                               for kind in READS_BY_CONSUMER.get(CONSUMER_KINDS[name], ())))




def root_of(subject: K8sObject, setting: Setting) -> tuple[K8sObject | None, str]:
    """Where a finding about ``setting`` belongs: at the value itself when another object of
    the input holds it (a ConfigMap or Secret many workloads read: one value, one finding,
    whoever reads it), else at the subject's own field for it."""
    place = setting.source.place
    if place is not None and place[0] is not subject and place[0].kind in ("ConfigMap", "Secret"):
        return place[0], format_path(place[1])
    return None, field_in(subject, setting)


def same_value_root(ctx: Context, params: dict[str, Any], key: tuple[str, ...],
                    subject: K8sObject, at: K8sObject | None, field: str
                    ) -> tuple[K8sObject | None, str]:
    """One finding per root cause across objects: the first place a rule reports a value
    written into a workload's own env (the same text with the same problem, e.g. one noProxy
    string a chart renders into ten workloads) keeps it; later places report there too, and
    the engine folds them into that finding, whose evidence then names every reader. A value
    held in a ConfigMap or Secret is already one finding there; values declared in cluster
    objects (a Proxy, a HostedCluster) are each their own fix."""
    claimed: dict[tuple[Any, ...], tuple[K8sObject, str]] = ctx.analysis(
        "same-value-roots", lambda _inv: {})
    first = claimed.setdefault((id(params), *key), (at or subject, field))
    if first[0] is (at or subject) and first[1] == field:
        return at, field
    return first


def value_readers(ctx: Context, setting: Setting) -> list[str]:
    """Every consumer that reads the value written at ``setting``'s place (one ConfigMap key
    several workloads or both cluster-values objects read), by name, in model order."""
    place = (setting.source.ref, setting.source.field, setting.value)
    return list(dict.fromkeys(
        c.name for c in ctx.proxy.all for s in (c.no_proxy, c.http_proxy, c.https_proxy)
        if s is not None and (s is setting or (s.source.ref, s.source.field, s.value) == place)))


def value_lead(setting: Setting, problem: str) -> str:
    """A problem said of the value itself: ``noProxy 'a,b' (ConfigMap ns/x data.values)
    misses ...``."""
    return f"{setting.name} {setting.value!r} ({setting.source.ref} {setting.source.field}) {problem}"


def where(setting: Setting) -> str:
    """``'value' (path:line ref field)`` for evidence."""
    return f"{setting.value!r} at {setting.source}"


def proxy_in_use(consumer: ConsumerProxy) -> bool | None:
    """True/False when known; None when a proxy value is unknown (redacted, missing object)."""
    values = [s for s in (consumer.http_proxy, consumer.https_proxy) if s is not None]
    if any(s.value for s in values):
        return True
    if any(not s.known for s in values):
        return None
    return False


def unknown_reason(consumer: ConsumerProxy) -> str:
    for s in (consumer.https_proxy, consumer.http_proxy, consumer.no_proxy):
        if s is not None and not s.known:
            return f"{consumer.name}: {s.name} unknown ({s.unknown})"
    return f"{consumer.name}: proxy settings unknown"


def split_entries(value: str | None) -> list[str]:
    return [e.strip() for e in split_outside_credentials(value or "", ",") if e.strip()]


def same_url(a: str | None, b: str | None) -> bool:
    return _url_key(a) == _url_key(b)


def _url_key(value: str | None) -> str:
    """A URL as every client dials it: a trailing slash dropped, the scheme and host
    lower-cased (RFC 3986: both case-insensitive; Go, curl and Python lower-case them), the
    user information kept as written (a password is case-sensitive)."""
    text = (value or "").strip().rstrip("/")
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    authority, slash, path = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    return f"{scheme.lower()}://{userinfo}{at}{host.lower()}{slash}{path}"






# -- cluster networks -----------------------------------------------------------------------


# -- noproxy_coverage (PRX005 and users' coverage rules) -------------------------------------

# Named sets of a cluster's own destinations; anything else in `destinations` is literal.
DESTINATIONS = ("service-network", "pod-network", "machine-network", "kas-service-ip", "svc",
                "cluster-domain", "localhost", "loopback", "managed-kas-ip", "secondary-networks",
                "kas-advertise-address", "hypershift-local", "control-plane-endpoint",
                "instance-metadata")
# Named sets only a HostedCluster (its nodes, through HyperShift's computed noProxy) reaches.
_HOSTED_SETS = ("kas-advertise-address", "hypershift-local")
# A Cluster API cluster's control plane endpoint: asked only of the node settings kubeadm or
# the kubelet read (analysis.proxy.effective.dials_control_plane).
CONTROL_PLANE_ENDPOINT = "control-plane-endpoint"
# A Cluster API cloud cluster's instance metadata address: asked only of the kubelet's
# settings (its image credential provider gets the kubelet's environment and calls it).
INSTANCE_METADATA = "instance-metadata"
# Named sets read from the subject that nothing adds to a noProxy: the user writes them, so a
# computed noProxy (a Proxy's status, a HostedCluster's) does not answer for them.
SECONDARY = "secondary-networks"
_NETWORK_SETS = ("service-network", "pod-network", "kas-service-ip")
# The named sets that are lists of CIDRs: (label, CIDRs, where they were read).
_CIDR_SETS = {
    "service-network": lambda n: ("service network", n.service, n.source),
    "pod-network": lambda n: ("pod network", n.pod, n.source),
    "machine-network": lambda n: ("machine network", n.machine, n.machine_source),
}


def _literal(dest: str, no_proxy: str, runtime: str) -> tuple[str, str] | None:
    """(missed, evidence) when a literal destination would go through the proxy: a CIDR
    (every address), a ``.domain`` or ``*.domain`` (every name under it) or one host."""
    cov = NoProxyList(no_proxy).covers(runtime, dest)
    if cov.covered:
        return None
    if "/" in dest:
        return dest, (f"{dest} is not covered for {runtime}: {', '.join(cov.uncovered)} would go "
                      f"through the proxy, e.g. {cov.example}")
    if dest.startswith((".", "*.")):
        return dest, f"{cov.example} (under {dest.lstrip('*')}) goes through the proxy for {runtime}"
    return dest, f"{cov.example} goes through the proxy for {runtime}"


def _missed(no_proxy: str, nets: ClusterNetworks | None, wanted: Iterable[str], runtime: str = GO,
            managed_kas: tuple[tuple[str, str], ...] = (), hosted: HostedCluster | None = None
            ) -> tuple[list[str], list[str], list[str]]:
    """(destinations the proxy gets, evidence lines, the noProxy entries that would send them
    direct) under ``runtime``'s NO_PROXY reading."""
    missed: list[str] = []
    evidence: list[str] = []
    entries: list[str] = []
    for dest in wanted:
        if dest in _HOSTED_SETS:
            if hosted is not None:
                found = _hosted_missed(dest, no_proxy, hosted, runtime)
                if found:
                    missed.append(found[0])
                    evidence.append(found[1])
                    entries.append(found[2])
            continue
        if dest in _CIDR_SETS and nets is not None:
            label, cidrs, source = _CIDR_SETS[dest](nets)
            for cidr in cidrs:  # the machine network only where the input states it
                cov = covers_cidr(runtime, no_proxy, cidr)
                if not cov.covered:
                    missed.append(f"{label} {cidr}")
                    entries.append(cidr)
                    evidence.append(f"{label} {cidr} (from {source}) is not covered: "
                                    f"{', '.join(cov.uncovered)} would go through the proxy, e.g. "
                                    f"{cov.example}")
        elif dest == "kas-service-ip" and nets is not None and nets.kas_ip:
            if not bypasses(runtime, no_proxy, f"https://{nets.kas_ip}").bypass:
                missed.append(f"KAS service IP {nets.kas_ip}")
                entries.append(nets.kas_ip)
                evidence.append(f"https://{nets.kas_ip} (the kubernetes Service) goes through "
                                "the proxy")
        elif dest in ("svc", "cluster-domain"):
            domain = "svc" if dest == "svc" else (nets.service_domain if nets else "cluster.local")
            cov = covers_domain(runtime, no_proxy, domain, include_apex=False)
            if not cov.covered:
                missed.append(f".{domain}")
                entries.append(f".{domain}")
                evidence.append(f"{cov.example} (a .{domain} name) goes through the proxy")
        elif dest in ("localhost", "loopback"):
            host = "localhost" if dest == "localhost" else "127.0.0.1"
            if not bypasses(runtime, no_proxy, f"http://{host}").bypass:
                missed.append(host)
                entries.append(host)
                evidence.append(f"http://{host} goes through the proxy")
        elif dest == "managed-kas-ip":
            for ip, origin in managed_kas:
                host = f"[{ip}]" if ":" in ip else ip
                decision = bypasses(runtime, no_proxy, f"https://{host}:443")
                if not decision.bypass:
                    missed.append(f"the managed cluster's kube-apiserver {ip}")
                    entries.append(ip)
                    evidence.append(f"kube-apiserver IP {ip} ({origin}) goes through the proxy: "
                                    f"{decision.reason}")
        elif dest == CONTROL_PLANE_ENDPOINT and nets is not None and nets.endpoint:
            decision = bypasses(runtime, no_proxy, nets.endpoint)
            if not decision.bypass:
                host = nets.endpoint.partition("//")[2].rpartition(":")[0].strip("[]")
                missed.append(f"{nets.endpoint_label} {host}")
                entries.append(host)
                evidence.append(f"{nets.endpoint} ({nets.endpoint_label}, from "
                                f"{nets.endpoint_source}) goes through the proxy: "
                                f"{decision.reason}; {nets.endpoint_dialers}")
        elif dest == INSTANCE_METADATA and nets is not None and nets.metadata:
            decision = bypasses(runtime, no_proxy, f"http://{nets.metadata}/latest/meta-data/")
            if not decision.bypass:
                missed.append(f"instance metadata {nets.metadata}")
                entries.append(nets.metadata)
                evidence.append(f"http://{nets.metadata} (the instance metadata service, "
                                f"{nets.metadata_source}) goes through the proxy: "
                                f"{decision.reason}; the kubelet's image credential provider "
                                "(ecr-/acr-credential-provider) gets the kubelet's environment "
                                "and calls it")
        elif dest not in DESTINATIONS:
            literal = _literal(dest, no_proxy, runtime)
            if literal:
                missed.append(literal[0])
                evidence.append(literal[1])
                entries.append(dest)
    return missed, evidence, entries


def _hosted_missed(dest: str, no_proxy: str, hosted: HostedCluster, runtime: str
                   ) -> tuple[str, str, str] | None:
    """A HostedCluster's own destinations its nodes reach: the API server's node-local address
    (kubelet, CRI-O and the ignition fetch go through the haproxy on it) and the names of the
    private zone ``<name>.hypershift.local``."""
    if dest == "kas-advertise-address":
        ip, origin = hosted.advertise_address
        host = f"[{ip}]" if ":" in ip else ip
        decision = bypasses(runtime, no_proxy, f"https://{host}:{hosted.kas_local_port}")
        if decision.bypass:
            return None
        return (f"the API server's node-local address {ip}",
                f"https://{host}:{hosted.kas_local_port} ({origin}; the kube-apiserver-proxy every node "
                "reaches its API server through) goes through the proxy", ip)
    name = f"api.{hosted.name}.{HYPERSHIFT_LOCAL_DOMAIN}"
    if bypasses(runtime, no_proxy, f"https://{name}:443").bypass:
        return None
    return (f".{HYPERSHIFT_LOCAL_DOMAIN}",
            f"https://{name} (HyperShift's private zone) goes through the proxy",
            f".{HYPERSHIFT_LOCAL_DOMAIN}")


# The kubernetes Service's ClusterIP on an OpenShift cluster with the default serviceNetwork.
OPENSHIFT_KAS_IP = "172.30.0.1"
USER_KAS_IP = "inputs.managed_cluster_kas_ip"
# What tells which managed clusters an add-on config serves and whether the input is one.
_MANAGED_KAS_READS = ("ManagedClusterAddOn", "ClusterManagementAddOn", "PlacementDecision",
                      *OWN_NAME_READS)


def served_clusters(ctx: Context, consumer: ConsumerProxy) -> tuple[list[str], str]:
    """The managed clusters whose add-on agents get ``consumer``'s proxy, and how that is
    known: the namespaces (on the hub, each a managed cluster's name) of the
    ManagedClusterAddOns that get this AddOnDeploymentConfig; without any, the config's own
    namespace, as OCM's guide keeps it."""
    names = sorted({a.object.namespace for a in ctx.proxy.all
                    if a.kind == MANAGED_CLUSTER_ADDON and a.via is consumer})
    if names:
        return names, "the namespaces of the ManagedClusterAddOns that get it"
    return [consumer.object.namespace], (f"its namespace {consumer.object.namespace} (no "
                                         "ManagedClusterAddOn in the input gets it)")


def managed_kas_ips(ctx: Context, consumer: ConsumerProxy
                    ) -> tuple[tuple[tuple[str, str], ...], NotEvaluable | None]:
    """The kube-apiserver ClusterIPs of the managed clusters ``consumer`` serves, which OCM
    add-on agents reach and the hub cannot tell them (DOMAIN.md §5), each with where it was
    read: the user's input, else each cluster's own ``default/kubernetes`` Service when the
    input is that cluster (``model.ocm.managed_cluster_kas_ip``); and why the others are not
    known (None when all are)."""
    if ctx.config.managed_cluster_kas_ip:
        ip = ctx.config.managed_cluster_kas_ip.strip()
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            return (), NotEvaluable(f"{USER_KAS_IP} {ip!r} is not an IP address")
        return ((ip, USER_KAS_IP),), None
    names, how = served_clusters(ctx, consumer)
    known: dict[str, str] = {}
    unknown: list[tuple[str, str]] = []
    for name in names:
        found = managed_cluster_kas_ip(ctx.inventory, name)
        if isinstance(found, KasIP):
            known.setdefault(found.ip, found.origin)
        else:
            unknown.append((name, found))
    if not unknown:
        return tuple(known.items()), None
    missing = [name for name, _ in unknown]
    openshift = sorted(mc.name for mc in ctx.inventory.of_kind("ManagedCluster")
                       if mc.name in missing
                       and str(mc.labels.get("vendor", "")).lower() == "openshift")
    hint = (f"; {', '.join(openshift)} {'is' if len(openshift) == 1 else 'are'} OpenShift, whose "
            f"default is {OPENSHIFT_KAS_IP} (the first address of the default service network "
            f"172.30.0.0/16): set managed_cluster_kas_ip: {OPENSHIFT_KAS_IP} unless the cluster "
            "was installed with another serviceNetwork" if openshift else "")
    return tuple(known.items()), NotEvaluable(
        f"{consumer.name} serves managed cluster{'s' if len(missing) > 1 else ''} "
        f"{', '.join(missing)} ({how}), whose kube-apiserver IP the input does not give: "
        + "; ".join(why for _, why in unknown)
        + f"; input the user must supply: managed_cluster_kas_ip (the ClusterIP of "
        f"default/kubernetes on {', '.join(missing)}: kubectl -n default get svc kubernetes)"
        + (", or include that Service in the input"
           if {o.name for o in own_managed_names(ctx.inventory)} >= set(missing) else "") + hint)


def _computed_status(ctx: Context, consumer: ConsumerProxy) -> str | None:
    """The management Proxy's status noProxy as the network operator computes it from the
    spec, when the input holds the spec only (hcpscan.model.computed_noproxy); for an
    install-config, the status of the Proxy the installer writes from it."""
    if consumer.kind == INSTALL_CONFIG:
        return install_config_computed_no_proxy(consumer.object)[0] or None
    if consumer.kind != CLUSTER_PROXY or consumer.part != "spec":
        return None
    management = scan_model(ctx.inventory).management
    if management.proxy is not consumer.object or not management.computed_no_proxy or any(
            management.proxy_status.get(k) for k in ("httpProxy", "httpsProxy", "noProxy")):
        return None
    return management.computed_no_proxy


def _judged(consumer: ConsumerProxy, wanted: list[str], computed: bool = False) -> list[str]:
    """The destinations a consumer answers for. The platform completes some noProxy values
    with the cluster's own destinations (DOMAIN.md §3): a Proxy's status is computed from its
    spec, and HyperShift computes a HostedCluster's; those answer only for what the user must
    write (literal destinations), and a Proxy's status only for the computed, named ones. A
    spec-only management Proxy whose status hcpscan computes (``computed``) answers for all."""
    named = [d for d in wanted if d in DESTINATIONS and d != SECONDARY]
    literal = [d for d in wanted if d not in named]
    if computed:  # judged on the value its readers get (a spec-only Proxy, an install-config)
        return wanted
    if consumer.kind == CLUSTER_PROXY:
        return literal if consumer.part == "spec" else named
    if consumer.kind == HOSTED_CLUSTER:
        return wanted  # judged on the noProxy HyperShift computes (model/hostedcluster.py)
    if consumer.completed_by:
        return literal
    return wanted


_NO_CONSUMER = "no consumer in scope uses a proxy"


def _selected(params: dict[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    """The consumer kinds and the variables (upper case) a coverage rule judges."""
    return (frozenset(CONSUMER_KINDS[k] for k in params.get("consumers", CONSUMER_KINDS)),
            frozenset(v.upper() for v in params.get("variables", ())))


def _coverage_consumers(ctx: Context, subject: K8sObject, kinds: frozenset[str],
                        variables: frozenset[str], pool: list[ConsumerProxy]
                        ) -> Iterator[ConsumerProxy]:
    for c in pool:
        if c.kind not in kinds:
            continue
        if c.kind == CONTAINER and (c.via is not None or controlled_pod(subject, ctx.inventory)):
            continue  # the konnectivity path reaches the data plane on purpose
        if variables and not variables & {name.upper() for name in c.variables}:
            continue
        yield c


_DESTINATION = {"type": "string", "minLength": 1,
                "description": "a named set (" + ", ".join(DESTINATIONS) + "), a CIDR, a domain "
                               "(.corp.example.com: every name under it) or one host name or IP"}


@register
class NoProxyCoverage(Template):
    name = "noproxy_coverage"
    analyses = PROXY_ANALYSES
    description = ("every consumer that uses a proxy sends the given destinations direct, under "
                   "the NO_PROXY semantics of each given HTTP client runtime")
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["destinations"],
        "properties": {
            "consumers": {"type": "array", "items": {"enum": sorted(CONSUMER_KINDS)},
                          "description": "which proxy consumers to judge (default: all of them)"},
            "variables": {"type": "array", "items": {"type": "string"},
                          "description": "judge only consumers that set one of these variables "
                                         "(e.g. HTTPS_PROXY; any case)"},
            "destinations": {"type": "array", "minItems": 1, "items": _DESTINATION},
            "runtimes": {"type": "array", "minItems": 1, "items": {"enum": list(RUNTIME_NAMES)},
                         "description": "clients whose NO_PROXY reading counts (default: go, "
                                        "which every Kubernetes/OpenShift component and "
                                        "containerd use)"},
            "require": {"enum": ["all", "any"],
                        "description": "every destination must go direct (default), or one"},
            "consumers_of": {"enum": ["subject", "management-cluster"],
                             "description": "whose consumers are judged: the subject's (default), "
                                            "or the management cluster's Proxy (for destinations "
                                            "the management cluster's components reach)"},
            "only_without_default_network": {
                "type": "boolean",
                "description": "secondary-networks: only NodePools whose VMs have no default pod "
                               "network (attachDefaultNetwork: false)"},
        },
    }
    reads = ("Network", "Cluster", "Service", "HostedCluster", "HostedControlPlane", "ConfigMap", "Secret",
             "ManagedCluster", *INFRASTRUCTURE_KINDS)

    subject_kinds = ("Proxy", "HostedCluster", "HostedControlPlane", "AddOnDeploymentConfig",
                     "Deployment", "StatefulSet",
                     "DaemonSet", "Job", "CronJob", "Pod", "DeploymentConfig", "SystemdDropIn",
                     "KubeadmConfig", "KubeadmConfigTemplate", *NEW_CONSUMER_OBJECTS)
    message_fields = {"consumer": "the consumer (object, and container where there is one)",
                      "missed": "the destinations that would go through the proxy, per runtime",
                      "runtimes": "the runtimes judged",
                      "network": "secondary-networks: the network as the NodePool names it",
                      "cidr": "secondary-networks: its CIDR that is not covered"}

    def reads_whole(self, params: dict[str, Any], subjects: tuple[str, ...]) -> tuple[str, ...]:
        return ()  # of pods and workloads: containers, templates, owners (inventory/kept.py)

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        extra = (("Proxy",) if params.get("consumers_of") == "management-cluster" else ()) + (
            ("NetworkAttachmentDefinition", "ClusterUserDefinedNetwork")
            if SECONDARY in params.get("destinations", ()) else ()) + (
            _MANAGED_KAS_READS if "managed-kas-ip" in params.get("destinations", ()) else ())
        return (*self.reads, *extra, *consumer_reads(params.get("consumers", CONSUMER_KINDS)))

    def settle(self, ctx: Context, subjects: list[K8sObject], params: dict[str, Any]
               ) -> Settled | None:
        # check's answer for a subject that is no consumer (most of a fleet's objects)
        if SECONDARY in params["destinations"] or params.get("consumers_of", "subject") != "subject":
            return None
        if not subjects:
            return Settled([])  # (the proxy model is not built for none)
        settled = Settled(ctx.proxy.consuming(subjects))
        if len(settled.rest) < len(subjects):
            settled.inapplicable[_NO_CONSUMER] = len(subjects) - len(settled.rest)
        return settled

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        runtimes = params.get("runtimes", [GO])
        nets: ClusterNetworks | None = None
        looked_up = False
        judged_any = False
        secondary: list[SecondaryNetwork] = []
        if SECONDARY in params["destinations"]:
            found = _secondary_in_scope(ctx, subject, params)
            if isinstance(found, NotApplicable):
                yield found
                return
            secondary = found
        pool = _consumer_pool(ctx, subject, params.get("consumers_of", "subject"))
        if pool is None:
            yield NotEvaluable("the management cluster Proxy 'cluster' (config.openshift.io/v1) "
                               "is not in the input")
            return
        if not pool:  # most objects of a scan are no consumer: nothing below applies
            yield NotApplicable(_NO_CONSUMER)
            return
        kinds, variables = per_rule(ctx, params, "noproxy_coverage", _selected)
        completed: list[str] = []  # consumers the platform completes, none judged here
        for c in _coverage_consumers(ctx, subject, kinds, variables, pool):
            computed = _computed_status(ctx, c)
            wanted = _judged(c, params["destinations"], computed is not None)
            # a kube-apiserver's own address is asked of it only (from its flags, below)
            ask_endpoint = CONTROL_PLANE_ENDPOINT in wanted and c.kind == CONTAINER
            if CONTROL_PLANE_ENDPOINT in wanted and not dials_control_plane(c):
                wanted = [d for d in wanted if d != CONTROL_PLANE_ENDPOINT]
            if INSTANCE_METADATA in wanted and not (c.program == "kubelet" and c.kind in (
                    KUBEADM_FILE, SYSTEMD)):
                wanted = [d for d in wanted if d != INSTANCE_METADATA]
            uses = proxy_in_use(c)
            if not wanted or uses is False:
                if uses and c.completed_by:
                    completed.append(_completed_reason(c))
                continue
            if uses is None or (c.no_proxy is not None and not c.no_proxy.known):
                yield NotEvaluable(unknown_reason(c))
                continue
            judged_any = True
            if SECONDARY in wanted:
                wanted = [d for d in wanted if d != SECONDARY]
                yield from _secondary_missed(subject, c, secondary, runtimes)
                if not wanted:
                    continue
            if not looked_up and any(d in DESTINATIONS for d in wanted):
                nets, looked_up = networks_for(ctx.inventory, subject), True
            # a kube-apiserver container states its service network and address in its own
            # flags: judged on them when the input gives no networks (kubeadm#666)
            own = (kube_apiserver_networks(c.object, c.container)
                   if nets is None and c.kind == CONTAINER and c.container else None)
            if own is not None and ask_endpoint and own.endpoint:
                wanted = [*wanted, CONTROL_PLANE_ENDPOINT]
            hosted = hosted_cluster(c.object) if c.kind == HOSTED_CLUSTER else None
            # a hosted cluster's own Proxy (its guest view in a hypershift dump): its status
            # is what the nodes' services and guest pods read
            guest = (hosted_cluster_of_guest(ctx.inventory, c.object.cluster)
                     if c.kind == CLUSTER_PROXY and c.part == "status" else None)
            no_proxy = (hosted.computed_no_proxy if hosted is not None else computed
                        if computed is not None else
                        (c.no_proxy.value if c.no_proxy is not None else "") or "")
            managed_kas: tuple[tuple[str, str], ...] = ()
            if "managed-kas-ip" in wanted:
                managed_kas, unknown_kas = managed_kas_ips(ctx, c)
                if unknown_kas is not None:
                    yield unknown_kas  # judged still on the clusters whose IP is known
                if not managed_kas:
                    wanted = [d for d in wanted if d != "managed-kas-ip"]
                    if not wanted:
                        continue
            cnets = own or nets
            if cnets is None and any(d in _NETWORK_SETS for d in wanted):
                yield NotEvaluable(f"{c.name}: the cluster's service and pod networks are not in "
                                   "the input (HostedCluster networking, CAPI Cluster "
                                   "clusterNetwork, cluster-values or config.openshift.io "
                                   "Network)")
            missed: list[str] = []
            evidence: list[str] = []
            entries: list[str] = []
            for runtime in runtimes:
                lost, why, add = _missed(no_proxy, cnets, wanted, runtime, managed_kas,
                                         hosted or guest)
                suffix = f" ({runtime})" if len(runtimes) > 1 else ""
                missed += [m + suffix for m in lost]
                evidence += why
                entries += [e for e in add if e not in entries]
            if not missed or (params.get("require") == "any"
                              and len(set(missed)) < len(wanted) * len(runtimes)):
                continue
            anchor = c.no_proxy or c.https_proxy or c.http_proxy
            shown = (f"noProxy {where(c.no_proxy)}" if c.no_proxy is not None
                     else "no noProxy is set at all")
            if computed is not None and c.kind == INSTALL_CONFIG:
                shown = (f"OpenShift's network operator computes the Proxy status noProxy "
                         f"{no_proxy!r} from " + (f"noProxy {where(c.no_proxy)}"
                                                  if c.no_proxy is not None else "no noProxy")
                         + f" and {install_config_computed_no_proxy(c.object)[1]}")
            elif computed is not None:
                shown = (f"OpenShift's network operator computes the status noProxy "
                         f"{no_proxy!r} from " + (f"noProxy {where(c.no_proxy)}"
                                                  if c.no_proxy is not None else "no spec.noProxy")
                         + " and the cluster's Network and Infrastructure")
            if hosted is not None:
                shown = (f"HyperShift computes noProxy {no_proxy!r} from "
                         + (f"noProxy {where(c.no_proxy)}" if c.no_proxy is not None
                            else "no spec.configuration.proxy.noProxy")
                         + ", the cluster's networks and its platform")
            at, field = root_of(subject, anchor) if anchor else (None, "")
            # a fix changes the user's value; for a HostedCluster what its readers get is the
            # noProxy HyperShift computes from it (the cluster's networks are added there)
            check = _still_missed(cnets, wanted, runtimes, managed_kas, hosted or guest, hosted)
            reader, own_field = None, field
            if anchor is not None and anchor.value and c.kind == CONTAINER and at is None:
                at, field = same_value_root(ctx, params, (anchor.value, ",".join(missed)),
                                            subject, at, field)
                reader = subject if at is not None else None
            remedy = noproxy_remedy(c, entries, check)
            if hosted is not None and isinstance(remedy, Remedy):
                remedy = _with_rendered(ctx, hosted, remedy, entries)
            shared = c.no_proxy if c.no_proxy is not None and c.no_proxy.value else None
            yield Violation(field=field, subject=at, reader=reader, reader_field=own_field,
                            lead=value_lead(shared, f"misses {', '.join(missed)}")
                            if shared is not None and hosted is None and computed is None else "",
                            readers=value_readers(ctx, shared)
                            if shared is not None and hosted is None and computed is None else [],
                            remedy=remedy,
                            values={"consumer": c.name, "missed": ", ".join(missed),
                                    "runtimes": ", ".join(runtimes)},
                            evidence=[shown, *(c.notes if c.kind == OLM_SUBSCRIPTION else ()),
                                      *evidence],
                            data={"missing_no_proxy": entries, "consumer": {
                                "object": c.object.ref, "field": field_in(c.object, anchor)
                                if anchor else "", "variable": anchor.name if anchor else ""}})
        if not judged_any:
            yield NotApplicable("; ".join(completed) if completed else _NO_CONSUMER)


def _completed_reason(c: ConsumerProxy) -> str:
    """Why a consumer that uses a proxy is not judged: its readers get a noProxy the platform
    completes with the cluster's own destinations, which hcpscan cannot compute here."""
    why = (install_config_computed_no_proxy(c.object)[2] if c.kind == INSTALL_CONFIG else "")
    return (f"{c.name} uses a proxy, and the noProxy its readers get is completed by "
            f"{c.completed_by}: only the destinations a user must write are judged here, and "
            "this rule asks for none" + (f" ({why})" if why else ""))


def _still_missed(nets: ClusterNetworks | None, wanted: list[str], runtimes: list[str],
                  managed_kas: tuple[tuple[str, str], ...], hosted: HostedCluster | None,
                  computed_by: HostedCluster | None = None) -> Callable[[str], list[str]]:
    """What a noProxy value would still send through the proxy, judged as the check did
    (bound now: the check's loop goes on to other consumers). ``computed_by``: the value is
    a HostedCluster's, and its readers get the noProxy HyperShift computes from it."""
    def still(value: str) -> list[str]:
        judged = computed_by.computed_no_proxy_with(value) if computed_by is not None else value
        return [m for r in runtimes for m in _missed(judged, nets, wanted, r, managed_kas, hosted)[0]]
    return still


def _all_uncovered(runtime: str, cidrs: list[str]) -> Callable[[str], list[str]]:
    checks = [_uncovered(runtime, cidr) for cidr in cidrs]

    def uncovered(value: str) -> list[str]:
        return [missed for check in checks for missed in check(value)]
    return uncovered


def _uncovered(runtime: str, cidr: str) -> Callable[[str], list[str]]:
    """The part of ``cidr`` a noProxy value leaves to the proxy, for ``runtime``."""
    def uncovered(value: str) -> list[str]:
        return list(covers_cidr(runtime, value, cidr).uncovered)
    return uncovered


def _with_rendered(ctx: Context, hc: HostedCluster, remedy: Remedy, entries: list[str]) -> Remedy:
    """A HostedCluster's noProxy fix, saying which rendered copies trail it: the
    konnectivity sidecars whose ``--no-proxy`` the control-plane operator renders from the
    spec, in the input as rendered from the old one. They are the operator's output (its
    next reconcile renders them again, and an edit of them is overwritten), so they are
    named, not edited: until then a scan of this input reports them (PRX002)."""
    trailing = []
    for c in ctx.proxy.in_namespace(hc.obj.cluster, hc.control_plane_namespace):
        if c.kind != KONNECTIVITY_SIDECAR or c.no_proxy is None or c.no_proxy.value is None:
            continue
        have = {e.strip() for e in c.no_proxy.value.split(",")}
        if any(e not in have for e in entries):
            trailing.append(c.object.ref if c.object.kind != "Pod" else c.name)
    if not trailing:
        return remedy
    names = ", ".join(dict.fromkeys(trailing))
    return dataclasses.replace(remedy, summary=(
        f"{remedy.summary}; the control-plane operator renders the konnectivity sidecars' "
        f"--no-proxy of {names} from it on its next reconcile (they are its output and are not "
        "edited; until then a scan of this input reports them, PRX002)"))


def noproxy_remedy(c: ConsumerProxy, entries: list[str],
                   still_missed: Callable[[str], list[str]]) -> Remedy | NoFix | None:
    """Append ``entries`` to the value the consumer's noProxy is written in, when the longer
    value covers everything (``still_missed`` judges it as the check did): an entry some
    reader of the value ignores is no fix. None when the consumer sets no noProxy at all
    in a block where one can be added beside its proxy."""
    entries = list(dict.fromkeys(entries))
    setting = c.no_proxy
    if setting is None:
        anchor = c.https_proxy or c.http_proxy
        place = anchor.source.place if anchor is not None else None
        if place is None or place[1][-1:] not in (("httpProxy",), ("httpsProxy",)):
            return None
        obj, steps = place
        return _noproxy_edit(obj, steps[:-1] + ("noProxy",), entries, "", still_missed)
    place = setting.source.place
    if place is None:  # a document inside another object: the fix names it
        return NoFix(f"the noProxy is written in {setting.source.field} of {setting.source.ref}, "
                     f"in text hcpscan does not rewrite; add {','.join(entries)} to it there")
    obj, steps = place
    written = obj.get(steps)
    if written is None or setting_text(written) != setting.value:
        # the field holds more than the value (Helm values or a unit file as text)
        return NoFix(f"the noProxy is written inside {format_path(steps)} of {obj.ref}, in "
                     f"text hcpscan does not rewrite; add {','.join(entries)} to it there")
    if steps[:1] == ("status",):
        return NoFix(f"{format_path(steps)} of {obj.ref} is what the cluster computed from spec "
                     "and its networks; a changed manifest does not change it: add "
                     f"{','.join(entries)} to spec.noProxy and let the operator recompute it")
    found = _noproxy_edit(obj, steps, entries, setting.value or "", still_missed)
    if not isinstance(found, Remedy):
        return found
    # NO_PROXY and no_proxy holding one value in one object change together: a fix of one
    # spelling alone would make them disagree (PRX006)
    twins = tuple(AppendEntries(place[1], tuple(entries)) for other in c.variables.values()
                  if other is not setting and other.name.lower() == "no_proxy"
                  and other.value == setting.value and (place := other.source.place) is not None
                  and place[0] is obj and place[1] != steps)
    return Remedy(obj, found.summary + (" (and its other spelling)" if twins else ""),
                  found.edits + twins) if twins else found


def _noproxy_edit(obj: K8sObject, steps: tuple, entries: list[str], value: str,
                  still_missed: Callable[[str], list[str]]) -> Remedy | NoFix:
    have = {e.strip() for e in value.split(",")}
    added = [e for e in entries if e not in have]
    new = ",".join([v for v in (value.rstrip(","),) if v] + added)
    relied = {d[0] for e in have if (d := divergence(e))}
    first = sorted({d[0] for e in added if (d := divergence(e))} - relied)
    if first:
        # the value would rely on a syntax some of its readers ignore for the first time
        return NoFix(f"adding {','.join(added)} would give the noProxy in {format_path(steps)} "
                     f"of {obj.ref} its first {' and '.join(first)} entry, which some HTTP "
                     "clients ignore (PRX007); add it if every reader of the value is a Go "
                     "program or another client that reads it")
    left = still_missed(new)
    if left:
        return NoFix(f"adding {','.join(entries)} would still leave {', '.join(left)} to the "
                     "proxy for a reader of this value (it ignores such entries); list the "
                     "addresses it understands")
    return Remedy(obj, f"add {','.join(entries)} to the noProxy in {format_path(steps)} of "
                       f"{obj.ref}", (AppendEntries(tuple(steps), tuple(entries)),))


# -- secondary networks (PRX001) ------------------------------------------------------------


def _consumer_pool(ctx: Context, subject: K8sObject, scope: str) -> list[ConsumerProxy] | None:
    """The consumers a coverage rule judges: the subject's, or the management cluster
    Proxy's (None when it is not in the input)."""
    if scope == "subject":
        return ctx.proxy.of(subject)
    mgmt = management_proxy(ctx.inventory)
    return ctx.proxy.of(mgmt[0]) if mgmt is not None else None


def _secondary_in_scope(ctx: Context, subject: K8sObject, params: dict[str, Any]
                        ) -> list[SecondaryNetwork] | NotApplicable:
    if subject.kind != "NodePool":
        return NotApplicable("secondary-networks: only a KubeVirt NodePool attaches them")
    if params.get("only_without_default_network") and attaches_default_network(subject):
        return NotApplicable("the NodePool's VMs keep the default pod network "
                             "(attachDefaultNetwork is not false)")
    found = secondary_networks(ctx.inventory, subject, ctx.config.secondary_networks)
    return found or NotApplicable("the NodePool attaches no secondary network")


def _secondary_missed(subject: K8sObject, c: ConsumerProxy, networks: list[SecondaryNetwork],
                      runtimes: list[str]) -> Iterator[Outcome]:
    """Per network, a finding at the NodePool field naming it for each CIDR the consumer's
    noProxy does not cover; a network whose CIDR no input states is not evaluable."""
    no_proxy = (c.no_proxy.value if c.no_proxy is not None else "") or ""
    shown = f"noProxy {where(c.no_proxy)}" if c.no_proxy is not None else "no noProxy is set at all"
    default = subject.get("spec.platform.kubevirt.attachDefaultNetwork")
    for net in networks:
        if net.missing:
            yield NotEvaluable(f"{net.name}: {net.missing}")
            continue
        for runtime in runtimes:
            # one finding per network, naming every CIDR of it (a dual-stack NAD has two), so
            # its fix adds them all to the one noProxy value
            lost = [(cidr, cov) for cidr in net.cidrs
                    if not (cov := covers_cidr(runtime, no_proxy, cidr)).covered]
            if not lost:
                continue
            cidrs = [cidr for cidr, _ in lost]
            yield Violation(
                field=net.field,
                remedy=noproxy_remedy(c, cidrs, _all_uncovered(runtime, cidrs)),
                values={"consumer": c.name, "missed": ", ".join(cidrs), "runtimes": runtime,
                        "network": net.name, "cidr": ", ".join(cidrs)},
                evidence=[f"{net.name}: {', '.join(cidrs)} from {net.origin}", shown,
                          *(f"not covered under {runtime}'s NO_PROXY rules: "
                            f"{', '.join(cov.uncovered)} (e.g. {cov.example}) would go "
                            "through the proxy" for _, cov in lost),
                          "attachDefaultNetwork: " + ("true (default)" if default is None
                                                      else str(default).lower())])

