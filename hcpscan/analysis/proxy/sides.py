"""The two sides of an ``agreement`` check, resolved from the proxy model by name.

A *consumer* side is what the subject hands a client (a role: a container's env, a
konnectivity sidecar's flags, a kubeconfig, an ignition stub, a bootstrap file ...); a
*reference* side is what it must agree with, reached by a named relation that holds the
domain's pairing (a control-plane workload's HostedCluster, a bootstrap config's
``<cluster>-cluster-values``, a managed cluster's Proxy and agents ...). Both become a
``Side``: canonical fields (``FIELDS``), each a ``Setting`` with provenance, so the
template compares them without knowing where they came from.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from hcpscan.analysis.kyverno import proxy_injecting_policies
from hcpscan.analysis.proxy import ConsumerProxy, Setting
from hcpscan.analysis.proxy.charts import APP_GROUP, app_proxy_values
from hcpscan.analysis.proxy.containers import PROXY_VARIABLE
from hcpscan.analysis.proxy.effective import (
    LOGIN_SHELL,
    FileText,
    bootstrap_file_text,
    dropin_environment,
    ignition_stub_text,
    written_files,
)
from hcpscan.analysis.proxy.index import ProxyConsumers
from hcpscan.analysis.proxy.relations import Related, Relations
from hcpscan.analysis.proxy.settings import (
    CONTAINER,
    INFRASTRUCTURE_CLUSTER,
    KONNECTIVITY_SIDECAR,
    KUBEADM_FILE,
    OLM_SUBSCRIPTION,
    SYSTEMD,
    Source,
    field_in,
    meant_proxy,
    source_of,
)
from hcpscan.analysis.proxy.units import unit_environment
from hcpscan.analysis.proxy.workloads import (
    controlled_pod,
    controlled_pods,
    effective_settings,
    in_control_plane,
    is_static_pod,
    owner_present,
)
from hcpscan.core.redact import mask_credentials
from hcpscan.inventory.fieldpath import Step, format_path
from hcpscan.inventory.objects import HCPSCAN_API, SYSTEMD_DROPIN, K8sObject
from hcpscan.inventory.secrets import secret_values
from hcpscan.inventory.store import Inventory
from hcpscan.model.capi import (
    BOOTSTRAP_FILES,
    VALUES_SUFFIX,
    capi_cluster_of,
    machine_owned,
)
from hcpscan.model.clusters import scan_model
from hcpscan.model.computed_noproxy import OPENSHIFT_SOURCE
from hcpscan.model.dropins import applied_parts, specificity, unit_of_dropin, unit_part
from hcpscan.model.hostedcluster import (
    HOSTED_KINDS,
    SIDECAR_PROXY_WORKLOADS,
    hosted_cluster,
)
from hcpscan.model.kubeconfig import current_cluster_entry, kubeconfig_in_secret
from hcpscan.model.workloads import names_match, workload_name
from hcpscan.sources.systemd import tries_proxy

FIELDS = ("httpProxy", "httpsProxy", "noProxy", "proxy-url", "server", "certificate-authority-data")
URL_FIELDS = ("httpProxy", "httpsProxy", "proxy-url", "server")
PROXY_FIELDS = ("httpProxy", "httpsProxy", "noProxy")
KUBECONFIG_FIELDS = ("server", "proxy-url", "certificate-authority-data")
ENV_NAMES = {"httpProxy": "HTTP_PROXY", "httpsProxy": "HTTPS_PROXY", "noProxy": "NO_PROXY"}
FLAG_NAMES = {"httpProxy": "--http-proxy", "httpsProxy": "--https-proxy", "noProxy": "--no-proxy"}

# The consumer roles a rule can pick (``consumers.role``), and what each reads.
ROLES = {
    "container": "each container of the subject workload: its env as a Go program reads it "
                 "(valueFrom and envFrom followed); pods made by a controller are judged at it",
    "konnectivity-path": "HyperShift's control-plane proxy path in the subject HostedCluster's HCP "
                         "namespace (or the subject workload): each konnectivity-https-proxy "
                         "sidecar's --http-proxy/--https-proxy/--no-proxy, and each container "
                         "whose proxy is the pod itself with no sidecar serving it (absent)",
    "kubeconfig": "the kubeconfig in the subject Secret's `key`: the current context's cluster "
                  "(server, proxy-url, certificate-authority-data)",
    "ignition": "the ignition stub in the subject Secret's `key` (ignition.proxy; destination "
                "ignition-endpoints: config.merge[].source)",
    "bootstrap-file": "the file at `path` that a Cluster API bootstrap config writes "
                      "(files[]: inline content or contentFrom.secret), read as a systemd "
                      "drop-in; absent when not written or its Secret/key does not exist",
    "systemd-dropin": "a systemd drop-in file of the input (Environment=)",
    "kubeadm-file": "a systemd drop-in a KubeadmConfig(Template) writes in spec.files[]",
    "app-config": "a Giant Swarm App whose chart (spec.name) a workload's `names` lists: the "
                  "proxy block (cluster.proxy, proxy, global.connectivity.proxy) of the "
                  "ConfigMaps and Secrets its spec.config, spec.userConfig and extraConfigs name",
    "olm-subscription": "an OLM Subscription's spec.config.env, which OLM gives every container "
                        "of the operator it installs (with the cluster Proxy's values unless it "
                        "sets HTTP_PROXY, HTTPS_PROXY or NO_PROXY)",
}
# The relations a rule can pick (``reference.relation``): the domain's pairings.
RELATIONS = {
    "hosted-cluster": "the HostedCluster whose HCP namespace holds the consumer (a HostedCluster "
                      "subject is its own): spec.configuration.proxy; its clients' noProxy is the "
                      "one HyperShift computes",
    "management-proxy": "the management cluster's config.openshift.io Proxy 'cluster': status "
                        "when it says anything, else spec",
    "cluster-values": "the Cluster API workload cluster's <cluster>-cluster-values Secret "
                      "(cluster from the cluster-name label, else the values Secret's name "
                      "prefix); without that Secret, what the input states: the chart values "
                      "(chart-values) of the cluster's releases - named after it or labelled "
                      "with it, or whose global.metadata.name it is - and the proxy drop-ins "
                      "of its other KubeadmControlPlanes",
    "managed-cluster": "the managed cluster's proxy: its Proxy 'cluster' spec, then the env of "
                       "its OCM agent workloads; the first that sends the destination through a "
                       "proxy counts",
    "installation": "whether the installation uses a proxy: any <cluster>-cluster-values, a "
                    "Proxy, or a Kyverno policy injecting proxy env",
    "secret-kubeconfig": "the kubeconfig in Secret `secret` (key `key`) of the consumer's namespace "
                         "(or of `namespace`)",
    "variable-case": "the consumer's own upper-case variables (HTTP_PROXY ...), the ones Go "
                     "programs read; the consumer side then reads the lower-case ones",
}
_LABELS = {"hosted-cluster": "the hosted cluster", "management-proxy": "the management cluster Proxy",
           "cluster-values": "the cluster values", "managed-cluster": "the managed cluster",
           "installation": "the installation", "secret-kubeconfig": "the reference kubeconfig",
           "variable-case": "the upper-case variables"}


@dataclass(slots=True)
class Absent:
    """The subject holds nothing this side is about (the check does not apply to it)."""

    reason: str


@dataclass(slots=True)
class Unknown:
    """The input cannot tell the side (redacted, absent, or to be given by the user)."""

    reason: str


class SideContext(Protocol):
    """What resolving sides reads: the inventory, the proxy-consumer index and the
    relations between objects, each built once per scan (the rule context holds them)."""

    @property
    def inventory(self) -> Inventory: ...

    @property
    def proxy(self) -> ProxyConsumers: ...

    @property
    def relations(self) -> Relations: ...


def management_proxy(inventory: Inventory) -> tuple[K8sObject, str, dict[str, Any]] | None:
    """The management cluster ``Proxy cluster`` and its effective block: status when it
    says anything, else spec."""
    management = scan_model(inventory).management
    effective = management.effective_proxy
    if management.proxy is None or effective is None:
        return None
    return management.proxy, *effective


@dataclass(slots=True)
class Side:
    """One side of an agreement: canonical fields with provenance, and where findings go."""

    name: str
    settings: dict[str, Setting] = field(default_factory=dict)
    spelling: dict[str, str] = field(default_factory=dict)  # field -> as this side writes it
    obj: K8sObject | None = None  # the object findings about this side are reported on
    # field of ``obj`` for findings about what the side lacks (steps are formatted when a
    # finding needs them: most consumers of a scan never have one)
    anchor: str | tuple[Step, ...] = ""
    label: str = ""  # what the side is, in a problem sentence ("writes /etc/...conf")
    destinations: dict[str, list[str]] = field(default_factory=dict)  # named URLs it reaches
    no_proxy: str | None = None  # the noProxy its clients use, when not its noProxy setting
    facts: dict[str, str] = field(default_factory=dict)  # message values (container, hc, ...)
    evidence: list[str] = field(default_factory=list)
    absent: str = ""  # the consumer does not exist as it should: what is wrong
    unknown: str = ""  # cannot be read: why
    uses_proxy_said: bool | None = None  # a statement without values (a Kyverno policy)
    same_consumer: bool = False  # the reference is the consumer itself (variable-case)
    variables: dict[str, Setting] = field(default_factory=dict)  # every proxy variable as written
    # Why this side's noProxy is only part of what its clients get ('' = it is all of it): an
    # entry the other side has in addition is then no difference - only a network (CIDR) when
    # ``open_only_networks``, any entry otherwise.
    open_no_proxy: str = ""
    open_only_networks: bool = True

    @property
    def place(self) -> str:
        return self.anchor if isinstance(self.anchor, str) else format_path(self.anchor)

    def spell(self, name: str) -> str:
        setting = self.settings.get(name)
        return setting.name if setting is not None else self.spelling.get(name, name)

    def field_name(self, name: str) -> str:
        """``Proxy cluster status.httpsProxy``: the field as evidence and messages name it."""
        return self.spell(name) if self.same_consumer or not self.name else f"{self.name}.{self.spell(name)}"

    def value(self, name: str) -> str:
        setting = self.settings.get(name)
        return (setting.value or "").strip() if setting is not None else ""

    def uses_proxy(self) -> bool | None:
        if self.uses_proxy_said is not None:
            return self.uses_proxy_said
        found = [self.settings.get(k) for k in ("httpProxy", "httpsProxy")]
        if any(s is not None and (s.value or "").strip() for s in found):
            return True
        return None if any(s is not None and not s.known for s in found) else False


# -- consumer sides ----------------------------------------------------------------------------

SideOutcome = Side | Absent | Unknown


def consumer_sides(ctx: SideContext, subject: K8sObject, selector: dict[str, Any],
                   case: str, bare: bool = True) -> Iterator[SideOutcome]:
    """The consumers of ``subject`` a rule's ``consumers`` selector picks; ``case`` is
    ``effective`` (what Go reads) or ``lower`` (the lower-case variables as written).
    ``bare=False`` leaves out the sides of containers that set no proxy variable at all
    (a rule that judges only what is set asks so: most containers of a fleet set none)."""
    role = selector["role"]
    if role == "container":
        yield from _containers(ctx, subject, selector, case, bare)
    elif role == "konnectivity-path":
        yield from _konnectivity_path(ctx, subject)
    elif role == "kubeconfig":
        yield kubeconfig_side(ctx, subject, selector.get("key", "kubeconfig"))
    elif role == "ignition":
        yield _ignition(ctx, subject, selector.get("key", "value"))
    elif role == "bootstrap-file":
        yield _bootstrap_file(ctx, subject, selector["path"])
    elif role == "app-config":
        yield from _app_config(ctx, subject, selector)
    else:
        kind = _FILE_ROLES[role]
        for c in ctx.proxy.of(subject):
            if c.kind == kind:
                yield _from_consumer(c, case, obj=subject)


def settled_sides(ctx: SideContext, subjects: list[K8sObject], selector: dict[str, Any],
                  bare: bool = True) -> list[tuple[Absent, ...] | None]:
    """Per subject, in order, what ``consumer_sides`` gives it when that follows from
    indexes alone (a Pod judged at its owner, a workload no selector names, no consumer of
    the role: the reasons it is skipped, or no side at all); None where its sides must be
    read. Asked of a rule's subjects at once (hundreds of thousands in a fleet)."""
    role = selector["role"]
    if role in _FILE_ROLES:
        having = ctx.proxy.objects_with(_FILE_ROLES[role])
        return [None if id(s) in having else () for s in subjects]
    if role != "container":
        return [None] * len(subjects)
    at_owner = judged_at_owner(ctx.inventory)
    named = selector.get("workloads")
    picks = _Picks(named, ctx.inventory) if named else None  # ``_workload``, patterns read once
    lean = not bare and "container" not in selector  # no side for a container that sets none
    setting: frozenset[int] | None = None  # the proxy model, read only if a subject needs it
    owned, not_target = (Absent(_AT_OWNER),), (Absent(_NOT_TARGET),)  # shared: only read
    out: list[tuple[Absent, ...] | None] = []
    for s in subjects:
        if s.kind == "App":
            out.append(())  # a chart's App: its values are judged (app-config), no pod spec
        elif id(s) in at_owner:
            out.append(owned)
        elif picks is not None and not picks.any(s):
            out.append(not_target)
        elif lean:
            if setting is None:
                setting = ctx.proxy.objects_with(CONTAINER)
            out.append(None if id(s) in setting else ())
        else:
            out.append(None)
    return out


def _env_settings(c: ConsumerProxy, case: str) -> dict[str, Setting]:
    if case == "effective":
        found = {"httpProxy": c.http_proxy, "httpsProxy": c.https_proxy, "noProxy": c.no_proxy}
    else:
        names = {k: v.lower() if case == "lower" else v for k, v in ENV_NAMES.items()}
        found = {k: c.variables.get(v) for k, v in names.items()}
    return {k: v for k, v in found.items() if v is not None}


def _from_consumer(c: ConsumerProxy, case: str, obj: K8sObject | None = None,
                   anchor: str | tuple[Step, ...] = "") -> Side:
    names = {k: v.lower() if case == "lower" else v for k, v in ENV_NAMES.items()}
    return Side(c.name, _env_settings(c, case), names, obj or c.object, anchor,
                facts={"consumer": c.name, **({"container": c.container} if c.container else {})},
                variables=c.variables)


_AT_OWNER = "a Pod made by a controller: the controller is judged"
_NOT_TARGET = "none of the rule's target workloads"
# the roles whose sides are the subject's own consumers of one kind
_FILE_ROLES = {"systemd-dropin": SYSTEMD, "kubeadm-file": KUBEADM_FILE,
               "olm-subscription": OLM_SUBSCRIPTION}


def _containers(ctx: SideContext, subject: K8sObject, selector: dict[str, Any],
                case: str, bare: bool = True) -> Iterator[SideOutcome]:
    if subject.kind == "App":
        return  # a chart's App has no pod spec: its values are judged (app-config)
    if _judged_at_owner(subject, ctx.inventory):
        yield Absent(_AT_OWNER)
        return
    workload = _workload(subject, selector.get("workloads"), ctx.inventory)
    if workload is None:
        yield Absent(_NOT_TARGET)
        return
    by_name = {c.container: c for c in ctx.proxy.of(subject) if c.kind == CONTAINER}
    if not by_name and not bare and "container" not in selector:
        return  # no container of it sets a proxy variable, and none is looked for by name
    lists = ("initContainers", "containers") if selector.get("init_containers") else ("containers",)
    globs = ((selector.get("workloads") or {}).get(workload) or {}).get("containers") \
        or [selector.get("container", "*")]
    refs = [r for r in ctx.proxy.containers_of(subject) if r.path[-2] in lists
            and any(fnmatch.fnmatchcase(r.name, g) for g in globs)]
    if not refs and "container" in selector:
        yield Absent(f"no container {selector['container']} in the pod")
        return
    for ref in refs:
        c = by_name.get(ref.name)
        if c is None and not bare:
            continue
        anchor = ref.path + (("env",) if "env" in ref.spec else ())
        side = (_from_consumer(c, case, subject, anchor) if c is not None else
                Side(f"{subject.ref} container {ref.name}", {}, dict(ENV_NAMES), subject, anchor,
                     facts={"consumer": f"{subject.ref} container {ref.name}"}))
        side.facts.update({"container": ref.name, "holder": f"container {ref.name}",
                           "carrier": "its pod spec", **({"workload": workload} if workload else {})})
        yield side


def _app_config(ctx: SideContext, subject: K8sObject, selector: dict[str, Any]
                ) -> Iterator[SideOutcome]:
    """A Giant Swarm App of a chart the selector's workloads name (``spec.name`` among a
    workload's ``names``): the proxy its chart gets from the configs app-operator merges."""
    if subject.kind != "App" or subject.group != APP_GROUP:
        return
    chart = str(subject.get("spec.name") or "")
    workload = next((w for w, how in (selector.get("workloads") or {}).items()
                     if isinstance(how, dict) and chart in (how.get("names") or [])), None)
    if workload is None:
        yield Absent(_NOT_TARGET)
        return
    found = app_proxy_values(ctx.inventory, subject)
    block = next((s.name.rpartition(".")[0] for s in found.settings.values()), "cluster.proxy")
    spelling = {"httpProxy": f"{block}.http", "httpsProxy": f"{block}.https",
                "noProxy": f"{block}.noProxy"}
    read = ", ".join(r.partition(": ")[2] for r in found.read) or "none"
    side = Side(f"{subject.ref} spec.config", dict(found.settings), spelling, subject,
                ("spec", "config") if subject.get("spec.config") is not None else ("spec",),
                facts={"consumer": f"{subject.ref} ({chart})", "workload": workload,
                       "holder": "spec.config", "carrier": f"the values it reads ({read})"})
    side.evidence += [f"{subject.ref} {r}" for r in found.read] + found.unread
    if found.unread and not all(k in found.settings for k in ("httpsProxy", "noProxy")):
        side.unknown = "; ".join(found.unread)
    elif "httpsProxy" not in found.settings and subject.get("spec.config.secret") is None:
        side.evidence.append(f"{subject.ref} spec.config names no Secret: the proxy URLs "
                             f"cluster-apps-operator renders are in Secret <cluster>"
                             f"{VALUES_SUFFIX}, which the chart then never reads")
    yield side


def judged_at_owner(inventory: Inventory) -> frozenset[int]:
    """The ids of the inventory's objects ``_judged_at_owner`` holds, found once per scan:
    the controller-made pods the proxy rules find anyway (``controlled_pods``), and of the
    other Pods those some owner makes (a ReplicaSet no controller makes is no such object):
    one pass over a fleet's Pods and ReplicaSets, not two."""
    def found(inv: Inventory) -> frozenset[int]:
        made = controlled_pods(inv)
        return made | frozenset(id(o) for o in inv.of_kind("Pod")
                                if id(o) not in made and _judged_at_owner(o, inv))

    return inventory.derived("proxy.judged-at-owner", found)


def _judged_at_owner(obj: K8sObject, inventory: Inventory) -> bool:
    """A Pod (or ReplicaSet) some owner in the input makes: its env is the owner's, judged
    there. A static pod's mirror is owned by its Node, which decides nothing about its env;
    an owner the input lacks judges nothing."""
    if controlled_pod(obj, inventory):
        return True
    if obj.kind != "Pod":
        return False
    owners = obj.metadata.get("ownerReferences")
    return not is_static_pod(obj) and isinstance(owners, list) and any(
        isinstance(o, dict) and o.get("kind") != "Node" and owner_present(inventory, obj, o)
        for o in owners)



def _workload(obj: K8sObject, named: dict[str, dict[str, Any]] | None,
              inventory: Inventory) -> str | None:
    """The name of the first of ``named`` selectors ``obj`` matches ('' with no selectors)."""
    if not named:
        return ""
    return next((name for name, sel in named.items() if _selects(sel, obj)
                 and (not sel.get("hcp") or in_control_plane(inventory, obj))), None)


_GLOB = frozenset("*?[")  # what makes an fnmatch pattern more than the text itself


class _Patterns:
    """``any(fnmatch.fnmatchcase(text, p) for p in patterns)``: a pattern without ``*``, ``?``
    or ``[`` matches only its own text, so those are one set lookup."""

    __slots__ = ("exact", "globs")

    def __init__(self, patterns: list[Any]) -> None:
        self.exact = {p for p in patterns if isinstance(p, str) and _GLOB.isdisjoint(p)}
        self.globs = [p for p in patterns if not (isinstance(p, str) and _GLOB.isdisjoint(p))]

    def match(self, text: str) -> bool:
        return text in self.exact or any(fnmatch.fnmatchcase(text, p) for p in self.globs)


class _Picks:
    """Whether ``_workload(obj, named)`` finds a selector: the same conditions, each
    selector's patterns read once (asked of every workload of a rule's kinds:
    tens of thousands at 500 hosted clusters, five selectors each)."""

    def __init__(self, named: dict[str, dict[str, Any]], inventory: Inventory) -> None:
        self.inventory = inventory
        self.selectors = [
            (bool(sel.get("static")), bool(sel.get("hcp")),
             _Patterns(sel["names"]) if sel.get("names") else None,
             _Patterns(sel["namespaces"]) if sel.get("namespaces") else None,
             [(k, str(v), _GLOB.isdisjoint(str(v))) for k, v in (sel.get("labels") or {}).items()])
            for sel in named.values()]

    def any(self, obj: K8sObject) -> bool:
        # the object's own name and namespace first, its annotations and labels (in its
        # body) only then: the conditions are pure, and the schema makes every pattern text
        for static, hcp, names, namespaces, labels in self.selectors:
            if names is not None and not (names.match(obj.name)
                                          or names.match(workload_name(obj))):
                continue
            if namespaces is not None and not namespaces.match(obj.namespace):
                continue
            if static and not is_static_pod(obj):
                continue
            if hcp and not in_control_plane(self.inventory, obj):
                continue
            if labels:
                have = obj.labels
                if not all(k in have and (str(have[k]) == v if exact
                                          else fnmatch.fnmatchcase(str(have[k]), v))
                           for k, v, exact in labels):
                    continue
            return True
        return False


def _selects(sel: dict[str, Any], obj: K8sObject) -> bool:
    if sel.get("static") and not is_static_pod(obj):
        return False
    if sel.get("names") and not names_match(obj, sel["names"]):
        return False
    if sel.get("namespaces") and not any(fnmatch.fnmatchcase(obj.namespace, n)
                                         for n in sel["namespaces"]):
        return False
    wanted = sel.get("labels")
    if not wanted:
        return True
    labels = obj.labels  # read once (a property): asked of every workload of a rule's kinds
    return all(k in labels and fnmatch.fnmatchcase(str(labels[k]), str(v))
               for k, v in wanted.items())


def _container_path(ctx: SideContext, c: ConsumerProxy) -> tuple[Step, ...]:
    for ref in ctx.proxy.containers_of(c.object):
        if ref.name == c.container:
            return ref.path + (("args",) if "args" in ref.spec else ())
    return ()


def _konnectivity_path(ctx: SideContext, subject: K8sObject) -> Iterator[SideOutcome]:
    if subject.kind in HOSTED_KINDS:
        namespace = hosted_cluster(subject).control_plane_namespace
        # a Pod or ReplicaSet whose Deployment is in the input too (a `hypershift dump`,
        # `oc adm inspect`) has its env from it: judged there, once, not three times
        at_owner = judged_at_owner(ctx.inventory)
        pool = [c for c in ctx.proxy.in_namespace(subject.cluster, namespace)
                if id(c.object) not in at_owner]
    else:
        namespace, pool = subject.namespace, ctx.proxy.of(subject)
    # only konnectivity-https-proxy takes --http-proxy/--https-proxy/--no-proxy; the
    # socks5 sidecar has no such flags (hypershift konnectivity-socks5-proxy/main.go)
    sidecars = [c for c in pool if c.kind == KONNECTIVITY_SIDECAR and c.serves == "http"]
    orphans = [(c, c.unserved) for c in pool
               if c.kind == CONTAINER and c.via is None and c.unserved is not None]
    bare = _without_proxy(ctx, subject, namespace, pool) if subject.kind in HOSTED_KINDS else []
    yield from bare
    if not sidecars and not orphans and not bare:
        yield Unknown(f"no control-plane workload with a konnectivity proxy sidecar in "
                           f"HCP namespace {namespace} in the input")
        return
    for c in sidecars:
        settings = {k: s for k, s in (("httpProxy", c.http_proxy), ("httpsProxy", c.https_proxy),
                                      ("noProxy", c.no_proxy)) if s is not None}
        yield Side(c.name, settings, dict(FLAG_NAMES), c.object,
                   format_path(_container_path(ctx, c)), facts={"consumer": c.name,
                                                                "container": c.container or ""})
    for c, unserved in orphans:
        yield Side(c.name, {}, dict(ENV_NAMES), c.object, field_in(c.object, unserved),
                   facts={"consumer": c.name, "container": c.container or ""},
                   evidence=[f"{unserved.name} {unserved.value!r} at {unserved.source}", *c.notes],
                   absent=f"{unserved.name}={unserved.value} but no konnectivity sidecar serves it")


def _without_proxy(ctx: SideContext, hc: K8sObject, namespace: str, pool: list[ConsumerProxy]
                   ) -> list[Side]:
    """The control-plane workloads that must reach the outside through the data plane
    (seed 000) and carry no proxy at all: no container sets HTTP(S)_PROXY."""
    out = []
    # a container with proxy env, or a konnectivity sidecar (its path is judged above)
    proxied = {id(c.object) for c in pool if c.kind == KONNECTIVITY_SIDECAR or (
        c.kind == CONTAINER and any(s is not None and (s.value or "").strip()
                                    for s in (c.http_proxy, c.https_proxy)))}
    for name in SIDECAR_PROXY_WORKLOADS:
        for obj in ctx.inventory.query("Deployment", namespace=namespace, name=name,
                                       cluster=hc.cluster):
            if id(obj) in proxied or any(c.object is obj and c.unserved is not None for c in pool):
                continue
            ref = next(iter(ctx.proxy.containers_of(obj)), None)
            anchor = format_path(ref.path) if ref is not None else ""
            out.append(Side(f"{obj.ref}", {}, dict(ENV_NAMES), obj, anchor,
                            facts={"consumer": obj.ref, "container": ref.name if ref else ""},
                            evidence=[f"{obj.ref} is one of the control-plane workloads that reach "
                                      "the outside through the data plane (OpenShift's hosted "
                                      "control planes networking docs): "
                                      + ", ".join(SIDECAR_PROXY_WORKLOADS)],
                            absent="sets no HTTP_PROXY/HTTPS_PROXY, so it never reaches the "
                                   "hosted cluster's proxy"))
    return out


def _secret_field(secret: K8sObject, key: str) -> str:
    return ("data." if key in (secret.body.get("data") or {}) else "stringData.") + key


def kubeconfig_side(ctx: SideContext, secret: K8sObject, key: str) -> SideOutcome:
    parsed = kubeconfig_in_secret(secret, key)
    if isinstance(parsed, str):
        return Unknown(parsed)
    entry = current_cluster_entry(parsed)
    cluster = entry[2] if entry is not None and isinstance(entry[2], dict) else {}
    where = _secret_field(secret, key)
    source = source_of(ctx.inventory, secret, where)
    settings = {f: Setting(f, str(cluster[f]), source) for f in KUBECONFIG_FIELDS if cluster.get(f)}
    server = str(cluster.get("server") or "")
    clusters = parsed.get("clusters")
    # with several cluster entries, say which one the klusterlet uses
    name = (f"{secret.ref} cluster {entry[1]} (clusters[{entry[0]}], the current context's)"
            if entry is not None and isinstance(clusters, list) and len(clusters) > 1
            else secret.ref)
    return Side(name, settings, {f: f for f in KUBECONFIG_FIELDS}, secret, where,
                destinations={"server": [server] if server else []},
                facts={"consumer": f"{secret.ref} key {key}"})


def _ignition(ctx: SideContext, secret: K8sObject, key: str) -> SideOutcome:
    value = secret_values(secret).get(key)
    if value is None:
        return Absent(f"no {key} key: not a user-data stub")
    where = _secret_field(secret, key)
    side = Side(f"{secret.ref} key {key}", {}, {k: k for k in PROXY_FIELDS}, secret, where,
                label="ignition.proxy", facts={"consumer": f"{secret.ref} key {key}"})
    if value.redacted:
        side.unknown = (f"{key} is redacted in the dump: scan a dump taken with secrets, or the "
                        "live cluster")
        return side
    stub = ignition_stub_text(value.text or "")
    if stub is None:
        return Absent(f"{key} is not an ignition stub")
    source = source_of(ctx.inventory, secret, where)
    side.settings = {name: Setting(name, text, source) for name, text in (stub.proxy or {}).items()}
    side.destinations["ignition-endpoints"] = list(stub.merge_sources)
    return side


def _bootstrap_file(ctx: SideContext, subject: K8sObject, path: str) -> SideOutcome:
    if subject.kind == SYSTEMD_DROPIN:
        return _node_dropins(ctx, subject, path)
    if machine_owned(subject):
        return Absent("owned by a Machine: its template is checked")
    files_path = BOOTSTRAP_FILES.get(subject.kind)
    if files_path is None:
        return Absent(f"a {subject.kind} writes no bootstrap files")
    files = subject.get(files_path)
    items = files if isinstance(files, list) else []
    side = Side(f"{subject.ref} file {path}", {}, dict(ENV_NAMES), subject, format_path(files_path),
                label=f"writes {path}", facts={"consumer": f"{subject.ref} file {path}"})
    written = {str(f.get("path", "")).strip(): i for i, f in enumerate(items) if isinstance(f, dict)}
    unit = unit_of_dropin(path)
    # a drop-in is one of its unit's files: systemd reads them all, in its order (item 1 of
    # the azimuth capi-helm-charts case: the drop-in named proxy.conf, not http-proxy.conf)
    parts = [p.path for p in applied_parts(written, unit, "")] if unit else (
        [path] if path in written else [])
    if not parts and _from_infrastructure(ctx, subject, unit, side):
        return side
    if not parts:
        side.absent = f"writes no {path}"
        side.evidence.append(f"{format_path(files_path)} writes "
                             + (", ".join(written) if written else "no files"))
        unread = [w for w in written if unit and f"/{unit}.d/" in w and not w.endswith(".conf")]
        if unread:
            side.evidence.append(f"systemd reads only *.conf files of a drop-in directory, not "
                                 f"{', '.join(unread)}")
        return side
    texts: list[tuple[str, str, Source]] = []
    fields: dict[str, tuple[Step, ...]] = {}
    for part in parts:
        index = written[part]
        item, base = items[index], files_path + (index,)
        content = bootstrap_file_text(ctx.inventory, subject, base, item)
        if content.secret_name is not None:
            _file_from_secret(subject, side, base + ("contentFrom", "secret"), content)
        else:
            side.anchor = format_path(base + ("content",))
            if content.text is None and item.get("content") is not None:
                side.unknown = (f"{format_path(base + ('content',))} cannot be decoded (encoding "
                                f"{item.get('encoding')!r})")
            elif content.text is None:
                side.absent, side.anchor = f"declares {part} without content or contentFrom", \
                    format_path(base)
        if side.absent or side.unknown:
            return side
        if content.text is None or content.source is None:
            continue
        texts.append((part, content.text, content.source))
        fields[part] = base + ("content",)
    composed = unit_environment(texts, written_files(ctx.inventory, subject, files_path, items))
    ignored: list[Ignored] = [
        (origin, f"{file} ({'unit ' if file in fields else ''}line {line}): {why}", None,
         fields.get(file) or (files_path + (written[file], "content") if file in written
                              else files_path))
        for file, line, why, origin in composed.ignored if tries_proxy(why)]
    if len(parts) > 1 or parts[0] != path:
        side.evidence.append(f"systemd reads {unit} from " + ", ".join(parts) + " (in this order)")
        side.label = f"writes {unit}'s files {', '.join(parts)}"
    side.evidence += [f"{unit or path} reads EnvironmentFile={file}, written by {source}: its "
                      "values win over Environment=" for file, source in composed.files]
    variables = {k: Setting(k, None if k in composed.unknown else v, src,
                            unknown=composed.unknown.get(k, ""))
                 for k, (v, src) in composed.environment.items() if PROXY_VARIABLE.match(k)}
    found = dict(zip(PROXY_FIELDS, effective_settings(variables), strict=True))
    side.settings = {k: v for k, v in found.items() if v is not None}
    _say_ignored(side, ignored)
    if composed.unread and not side.absent and not any(
            side.settings.get(k) is not None for k in ("httpProxy", "httpsProxy")):
        side.unknown = (f"{unit or path} {composed.unread_text()}: its proxy variables may be "
                        "there (not evaluable for that unit)")
        side.evidence += [f"{where}: EnvironmentFile={file}" for file, _why, where in composed.unread]
    return side


def _from_infrastructure(ctx: SideContext, subject: K8sObject, unit: str, side: Side) -> bool:
    """containerd's drop-in written by the infrastructure provider rather than the bootstrap
    config: CAPVCD writes /etc/systemd/system/containerd.service.d/http-proxy.conf on every
    node from its VCDCluster's proxy (controllers/cluster_scripts/cloud_init.tmpl)."""
    owner = capi_cluster_of(ctx.inventory, subject) if unit == "containerd.service" else None
    if owner is None:
        return False
    for c in ctx.proxy.all:
        if c.kind == INFRASTRUCTURE_CLUSTER and c.object.kind == "VCDCluster" \
                and c.object.cluster == subject.cluster \
                and c.object.namespace == subject.namespace \
                and (capi_cluster_of(ctx.inventory, c.object) or ("",))[0] == owner[0] \
                and (c.http_proxy is not None or c.https_proxy is not None):
            side.settings = {k: v for k, v in (("httpProxy", c.http_proxy),
                                               ("httpsProxy", c.https_proxy),
                                               ("noProxy", c.no_proxy)) if v is not None}
            side.evidence.append(f"{c.name}: the infrastructure provider writes containerd's "
                                 "drop-in on every node of the cluster from it")
            return True
    return False


# A line systemd ignores: where, what, the object to report it on (None: the subject) and
# the field there.
Ignored = tuple[Source, str, K8sObject | None, tuple[Step, ...]]


def _say_ignored(side: Side, ignored: list[Ignored]) -> None:
    """A unit whose proxy lines systemd ignores and that gets no proxy from the others: the
    proxy is not set, and the lines are why."""
    if not ignored or any(side.settings.get(k) is not None for k in ("httpProxy", "httpsProxy")):
        return
    _source, said, obj, anchor = ignored[0]
    side.absent = (f"sets no HTTP_PROXY/HTTPS_PROXY: systemd ignores {said}"
                   + (f" (and {len(ignored) - 1} more line(s))" if len(ignored) > 1 else ""))
    side.anchor, side.obj = anchor, obj or side.obj
    side.evidence += [f"{source}: {why}" for source, why, _obj, _at in ignored]


def _ignored_lines(obj: K8sObject) -> list[tuple[int, str]]:
    """The lines of a drop-in file systemd ignores, as its reader recorded them (a
    SystemdDropIn written by hand as YAML may hold anything there: nothing is read of it)."""
    found = obj.body.get("ignoredLines") if obj.api_version == HCPSCAN_API else None
    return [(item[0], item[1]) for item in found if isinstance(item, list) and len(item) == 2
            and isinstance(item[0], int) and isinstance(item[1], str)] \
        if isinstance(found, list) else []


def _node_dropin_index(inventory: Inventory) -> dict[tuple[str, str], dict[str, K8sObject]]:
    """A node's drop-in files by (cluster, node) and path: built once per scan."""
    index: dict[tuple[str, str], dict[str, K8sObject]] = {}
    for obj in inventory.of_kind(SYSTEMD_DROPIN):
        path = str(obj.body.get("path") or obj.name)
        part = unit_part(path)
        if part is not None:
            index.setdefault((obj.cluster, part.node), {})[path] = obj
    return index


def _node_dropins(ctx: SideContext, subject: K8sObject, path: str) -> SideOutcome:
    """A drop-in file of a node's file system (``etc/systemd/system/<unit>.d/x.conf``): the
    unit it is part of, composed of that node's drop-ins in the input, in systemd's order."""
    unit = unit_of_dropin(path)
    own = str(subject.body.get("path") or subject.name)
    mine = unit_part(own)
    if not unit or mine is None or specificity(mine.directory, unit) is None:
        return Absent(f"{own} is no drop-in of {unit or path}")
    peers = ctx.inventory.derived("node-dropins", _node_dropin_index).get(
        (subject.cluster, mine.node), {})
    parts = applied_parts(peers, unit, mine.node)
    if own not in [p.path for p in parts]:
        return Absent(f"{own} is overridden by a drop-in of the same name")
    if parts[-1].path != own:
        # judged once per unit, at its last drop-in (what systemd reads last)
        return Absent(f"{unit} is judged at its last drop-in {parts[-1].path}")
    side = Side(f"{unit} drop-ins ({own})", {}, dict(ENV_NAMES), subject, "environment",
                label=f"sets the environment of {unit}",
                facts={"consumer": f"{unit} ({', '.join(p.path for p in parts)})"})
    environment: dict[str, tuple[str, Source]] = {}
    unknown: dict[str, str] = {}  # variable -> why systemd's value is known on the node only
    ignored: list[Ignored] = []
    for part in parts:
        obj = peers[part.path]
        if obj.body.get("environmentReset"):
            environment.clear()
            unknown.clear()
        environment.update({k: (v, source_of(ctx.inventory, obj, ("environment", k)))
                            for k, v in dropin_environment(obj).items()})
        said = obj.body.get("environmentUnknown")
        said = said if isinstance(said, dict) else {}
        for name in dropin_environment(obj):
            unknown.pop(name, None)
        unknown.update({str(n): str(v) for n, v in said.items()})
        for k, (line, why) in enumerate(_ignored_lines(obj)):
            if tries_proxy(why):
                where = Source(obj.ref, f"line {line}", obj.source.path, int(line))
                ignored.append((where, f"{part.path} line {line}: {why}", obj, ("ignoredLines", k)))
    variables = {k: Setting(k, None if k in unknown else v, src, unknown=unknown.get(k, ""))
                 for k, (v, src) in environment.items() if PROXY_VARIABLE.match(k)}
    if not variables and not ignored:
        return Absent(f"{unit}'s drop-ins set no proxy variable")
    found = dict(zip(PROXY_FIELDS, effective_settings(variables), strict=True))
    side.settings = {k: v for k, v in found.items() if v is not None}
    if len(parts) > 1:
        side.evidence.append(f"systemd reads {unit} from " + ", ".join(p.path for p in parts)
                             + " (in this order)")
    _say_ignored(side, ignored)
    return side


def _file_from_secret(subject: K8sObject, side: Side, where: tuple[Step, ...],
                      content: FileText) -> None:
    """Why a drop-in from ``contentFrom.secret`` has no text: a Secret or key that does not
    exist leaves the file absent (Cluster API waits for it and creates no machine)."""
    name, key, secret, value = content.secret_name, content.secret_key, content.secret, content.value
    side.anchor = format_path(where)
    if secret is None:
        side.anchor = format_path(where + ("name",))
        side.absent = (f"takes the drop-in from Secret {subject.namespace}/{name or '(no name)'}, "
                       "which does not exist")
        side.evidence.append(f"{format_path(where)} names Secret {subject.namespace}/{name}: not in "
                             "the input, so Cluster API waits for it and creates no machine")
    elif value is None:
        side.anchor = format_path(where + ("key",))
        side.absent = f"takes the drop-in from key {key!r} of {secret.ref}, which has no such key"
        side.evidence.append(f"{secret.ref} has keys " + (", ".join(sorted(secret_values(secret)))
                                                          or "none"))
    elif value.text is None:
        side.unknown = f"{secret.ref} key {key!r} is " + ("redacted in this dump" if value.redacted
                                                            else "not text")


# -- references ----------------------------------------------------------------------------------

RefOutcome = list[Side] | Absent | Unknown


def reference_sides(ctx: SideContext, subject: K8sObject, consumer: Side,
                    reference: dict[str, Any]) -> RefOutcome:
    """What ``consumer`` must agree with, by the relation ``reference`` names: the
    candidates in order of authority (one, except for managed-cluster)."""
    relation = reference["relation"]
    obj = consumer.obj or subject
    if relation == "hosted-cluster":
        return _hosted_cluster(ctx, subject, obj)
    if relation == "management-proxy":
        return _management_proxy(ctx)
    if relation == "cluster-values" and obj.kind == SYSTEMD_DROPIN:
        # a node's own drop-in: its lines say whether the node uses a proxy
        # (asked with no consumer read yet - agreement's "uses no proxy" gate - it may)
        meant = bool(consumer.absent) or consumer.uses_proxy() is True or (
            consumer.name == obj.ref and not consumer.settings)
        return [Side(consumer.name, uses_proxy_said=meant, obj=obj,
                     facts={"cluster": "unknown: a node's own file"},
                     evidence=[f"{consumer.name} " + ("sets" if consumer.settings else "meant to set")
                               + " a proxy"] if meant else [])]
    if relation == "cluster-values":
        return _cluster_values(ctx, obj)
    if relation == "managed-cluster":
        return _managed_cluster(ctx, obj.cluster)
    if relation == "installation":
        return _installation(ctx)
    if relation == "secret-kubeconfig":
        namespace = reference.get("namespace", obj.namespace)
        if obj.kind == "Secret" and obj.namespace == namespace and obj.name.startswith(
                "bootstrap-"):
            # the klusterlet's own bootstrap kubeconfig (bootstrap-hub-kubeconfig) is where the
            # reference takes its settings from, not an add-on kubeconfig that inherits them
            return Absent(f"{obj.ref} is the bootstrap kubeconfig the reference "
                                 "kubeconfig is made from")
        other = ctx.inventory.get("Secret", namespace, reference["secret"], obj.cluster)
        if other is None:
            return Unknown(f"Secret {namespace}/{reference['secret']} is not in the input")
        side = kubeconfig_side(ctx, other, reference.get("key", "kubeconfig"))
        return [side] if isinstance(side, Side) else side
    upper = {k: consumer.variables[v] for k, v in ENV_NAMES.items() if v in consumer.variables}
    return [Side("", upper, dict(ENV_NAMES), obj, same_consumer=True)]


def label(relation: str) -> str:
    return _LABELS[relation]


def _proxy_side(c: ConsumerProxy, name: str) -> Side:
    settings = {k: s for k, s in (("httpProxy", c.http_proxy), ("httpsProxy", c.https_proxy),
                                  ("noProxy", c.no_proxy)) if s is not None}
    return Side(name, settings, {k: k for k in PROXY_FIELDS}, c.object)


def _sides(related: Related) -> RefOutcome:
    """A relation's answer as reference sides (Unknown when the input cannot tell)."""
    if related.unknown:
        return Unknown(related.unknown)
    sides = [_proxy_side(c, related.name or c.name) for c in related.consumers]
    if not sides:
        sides = [Side(related.name or related.empty, obj=related.holder)]
    for side in sides:
        side.evidence += related.evidence
    return sides


def _hosted_cluster(ctx: SideContext, subject: K8sObject, obj: K8sObject) -> RefOutcome:
    related = ctx.relations.hosted_cluster(subject, obj)
    sides = _sides(related)
    if isinstance(sides, list) and related.hosted is not None:
        for side in sides:
            side.no_proxy = related.hosted.computed_no_proxy
            side.facts = {"hc": related.hosted.obj.ref}
    return sides


def _management_proxy(ctx: SideContext) -> RefOutcome:
    found = management_proxy(ctx.inventory)
    sides = _sides(ctx.relations.management_proxy(found))
    management = scan_model(ctx.inventory).management
    if isinstance(sides, list) and found is not None and found[1] == "spec" \
            and not management.computed_no_proxy and (management.proxy_spec.get("httpProxy")
                                                     or management.proxy_spec.get("httpsProxy")):
        # a proxy is set but its status is neither in the input nor computable from it: the
        # operators read the status, which holds every spec entry and the cluster's own
        for side in sides:
            side.open_no_proxy = (f"no Proxy status in the input, and it cannot be computed "
                                  f"({management.computed_unknown}): the network operator adds "
                                  f"the cluster's own destinations to spec.noProxy")
            side.open_only_networks = False
    if isinstance(sides, list) and found is not None and found[1] == "spec" \
            and management.computed_no_proxy:
        # the input holds the spec only: what the operators read is the status the network
        # operator computes from it (hcpscan.model.computed_noproxy)
        obj = found[0]
        written = obj.get(("spec", "noProxy"))
        source = source_of(ctx.inventory, obj, ("spec", "noProxy") if written is not None
                           else ("spec",))
        for side in sides:
            side.name = f"{obj.ref} computed status"
            side.no_proxy = management.computed_no_proxy
            side.settings["noProxy"] = Setting("noProxy", management.computed_no_proxy, source)
            side.evidence.append(f"no Proxy status in the input: its noProxy is computed as "
                                 f"{OPENSHIFT_SOURCE.split(':')[0]} computes it, from "
                                 f"{management.computed_from} and spec.noProxy")
            side.open_no_proxy = management.computed_open
    return sides


def _cluster_values(ctx: SideContext, obj: K8sObject) -> RefOutcome:
    related = ctx.relations.cluster_values(obj)
    if related.unknown:
        return Unknown(related.unknown)
    if related.stated:
        sides = [_proxy_side(c, c.name) for c in related.consumers]
        for c, side in zip(related.consumers, sides, strict=True):
            if side.uses_proxy() is False and meant_proxy(c):
                # the lines that meant to set the proxy say the cluster uses one
                side.uses_proxy_said = True
                side.evidence += [f"{source}: {why}" for source, why in c.syntax
                                  if tries_proxy(why)]
        for c, side in zip(related.consumers, sides, strict=True):
            _say_cluster(side, related.cluster, related.how,
                         f" has no {related.cluster}{VALUES_SUFFIX} Secret in the input; by "
                         f"{side.name}, it")
            if c.program == LOGIN_SHELL:
                side.evidence += [f"{side.name}: {note}" for note in c.notes]
        return sides
    found = _sides(related)
    if not isinstance(found, list):
        return found
    for side in found:
        _say_cluster(side, related.cluster, related.how)
    return found


def _say_cluster(side: Side, cluster: str, how: str, where: str = "") -> None:
    """The cluster's name and proxy as facts and evidence of a cluster-values side."""
    side.facts = {"cluster": cluster}
    shown = ", ".join(f"{s.name}={mask_credentials(s.value or '')}"
                      for k, s in side.settings.items() if k != "noProxy")
    side.evidence.append(f"cluster {cluster} ({how}){where} uses proxy {shown}" if shown
                         else f"cluster {cluster} ({how}){where}")


def _managed_cluster(ctx: SideContext, cluster: str) -> RefOutcome:
    """Resolved once per cluster of the scan: every subject of a cluster has the same answer;
    each finding gets sides of its own (evidence is appended to them)."""
    return _sides(ctx.relations.managed_cluster(cluster))


def _installation(ctx: SideContext) -> RefOutcome:
    related = ctx.relations.installation(lambda: proxy_injecting_policies(ctx.inventory))
    if related.unknown:
        return Unknown(related.unknown)
    return [Side(related.name, uses_proxy_said=related.uses_proxy, evidence=list(related.evidence))]
