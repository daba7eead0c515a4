"""Endpoints (pods, or one synthetic pod per workload) and their equivalence classes.

Pods come from Pod objects. A workload controller (Deployment, StatefulSet,
DaemonSet, ReplicaSet, ReplicationController, Job, CronJob, DeploymentConfig)
that has no Pod in the input - the usual case for a GitOps tree - gets one
synthetic endpoint built from its pod template (labels, container ports,
hostNetwork). Every endpoint knows its top owner, shown as
``namespace/name[Kind]``.

Endpoints with the same cluster, namespace, labels, container ports and
hostNetwork flag cannot be told apart by any NetworkPolicy, so they are grouped
into one ``EndpointClass`` before any pairwise work.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hcpscan.inventory import Inventory
from hcpscan.inventory.fieldpath import mapping_at
from hcpscan.inventory.objects import K8sObject, namespace_of
from hcpscan.model.ports import ConnectionSet, normalise_protocol

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController",
                  "Job", "CronJob", "DeploymentConfig", "VirtualMachine", "VirtualMachineInstance")
VM_KINDS = ("VirtualMachine", "VirtualMachineInstance")  # KubeVirt: one virt-launcher pod each
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True, slots=True, order=True)
class Workload:
    """The top owner of an endpoint: what the connection list names."""

    namespace: str
    name: str
    kind: str

    @classmethod
    def of(cls, obj: K8sObject) -> Workload:
        """The workload ``obj`` is, in the namespace it lands in (see namespace_of)."""
        return cls(namespace_of(obj), obj.name, obj.kind)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}[{self.kind}]"

    def graph_name(self, cluster: str) -> str:
        """How the reachability graph names this workload in ``cluster``."""
        return f"{cluster}:{self.ref}"

    def __str__(self) -> str:
        return self.ref


@dataclass(frozen=True, slots=True)
class ContainerPort:
    number: int
    protocol: str = "TCP"
    name: str = ""


@dataclass(slots=True, eq=False)
class Endpoint:
    cluster: str
    namespace: str
    name: str
    workload: Workload
    labels: dict[str, str]
    ports: tuple[ContainerPort, ...]
    host_network: bool
    ips: tuple[str, ...]
    obj: K8sObject
    synthetic: bool = False


@dataclass(slots=True, eq=False)
class EndpointClass:
    """Endpoints no NetworkPolicy can tell apart."""

    index: int
    cluster: str
    namespace: str
    labels: dict[str, str]
    namespace_labels: dict[str, str]
    ports: tuple[ContainerPort, ...]
    host_network: bool
    ips: tuple[str, ...] = ()
    endpoints: list[Endpoint] = field(default_factory=list)
    # (number of endpoints, their workloads): asked for constantly, computed once per size
    _workloads: tuple[int, list[Workload]] = field(default=(-1, []), repr=False, compare=False)

    @property
    def workloads(self) -> list[Workload]:
        count, found = self._workloads
        if count != len(self.endpoints):
            found = sorted({e.workload for e in self.endpoints})
            self._workloads = (len(self.endpoints), found)
        return list(found)

    @property
    def id(self) -> str:
        return f"class-{self.index}"

    def __str__(self) -> str:
        names = ", ".join(w.ref for w in self.workloads[:3])
        more = f" (+{len(self.workloads) - 3})" if len(self.workloads) > 3 else ""
        return names + more

    def resolve_named_port(self, name: str, protocol: str) -> int | None:
        """A named port resolves only on a container port with that name and
        the rule's protocol."""
        for port in self.ports:
            if port.name == name and port.protocol == protocol:
                return port.number
        return None

    def with_named_ports(self, numeric: ConnectionSet,
                         named: Iterable[tuple[str, str | None]]) -> ConnectionSet:
        """``numeric`` plus the container ports each (name, protocol) resolves to: a
        NetworkPolicy named port only with the rule's protocol, an AdminNetworkPolicy
        ``namedPort`` (protocol ``None``) with the container port's own."""
        out = numeric
        for name, protocol in named:
            for port in self.ports:
                if port.name == name and protocol in (None, port.protocol):
                    out = out.union(ConnectionSet.port(port.protocol, port.number))
        return out


def container_ports(pod_spec: dict[str, Any]) -> tuple[ContainerPort, ...]:
    found: set[ContainerPort] = set()
    containers = list(pod_spec.get("containers") or [])
    # native sidecars (init containers that keep running) also listen
    containers += [c for c in pod_spec.get("initContainers") or []
                   if isinstance(c, dict) and c.get("restartPolicy") == "Always"]
    for container in containers:
        if not isinstance(container, dict):
            continue
        for port in container.get("ports") or []:
            if not isinstance(port, dict):
                continue
            number = port.get("containerPort")
            if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= 65535:
                continue
            found.add(ContainerPort(number, normalise_protocol(port.get("protocol")),
                                    str(port.get("name") or "")))
    return tuple(sorted(found, key=lambda p: (p.number, p.protocol, p.name)))


def _controller_ref(obj: K8sObject) -> dict[str, Any] | None:
    for ref in obj.metadata.get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True and ref.get("name"):
            return ref
    return None


class _Owners:
    """Follows controller owner references up through workload objects."""

    def __init__(self, inventory: Inventory, cluster: str) -> None:
        self.inventory = inventory
        self.cluster = cluster
        # the top of each controller a pod names (a ReplicaSet's Deployment), walked once for
        # all the pods it owns
        self._tops: dict[tuple[str, str, str], Workload] = {}

    def top_of(self, obj: K8sObject) -> Workload:
        namespace = namespace_of(obj)
        if obj.kind == "Pod":
            ref = _controller_ref(obj)
            if ref is None or ref.get("kind") == "Node":
                return Workload(namespace, obj.name, "Pod")
            # a pod's controller names it whatever the kind; no kind means a bare pod
            kind = str(ref.get("kind") or "")
            key = (kind, namespace, str(ref["name"]))
            top = self._tops.get(key)
            if top is None:
                current = Workload(namespace, key[2], kind or "Pod")
                node = self._find(kind, namespace, current.name) if kind in WORKLOAD_KINDS else None
                top = self._tops[key] = self._up(current, node, namespace)
            return top
        key = (obj.kind, namespace, obj.name)
        if obj.kind not in WORKLOAD_KINDS or self._find(*key) is not obj:
            # not the object a pod's reference to it finds: walked on its own
            return self._up(Workload(namespace, obj.name, obj.kind), obj, namespace)
        top = self._tops.get(key)
        if top is None:  # the walk a pod naming this controller takes (or took) from it
            top = self._tops[key] = self._up(Workload(namespace, obj.name, obj.kind), obj, namespace)
        return top

    def _up(self, current: Workload, node: K8sObject | None, namespace: str) -> Workload:
        """The top owner above ``node`` (``current`` stands for it), following controllers
        that are in the input."""
        seen = {current}
        while node is not None:
            ref = _controller_ref(node)
            if ref is None or ref.get("kind") not in WORKLOAD_KINDS:
                break
            parent = self._find(str(ref["kind"]), namespace, str(ref["name"]))
            if parent is None:
                break  # the owner is not in the input: this workload stands for it
            current = Workload(namespace, parent.name, parent.kind)
            if current in seen:
                break
            seen.add(current)
            node = parent
        return current

    def _find(self, kind: str, namespace: str, name: str) -> K8sObject | None:
        return self.inventory.get_namespaced(kind, namespace, name, self.cluster)


def pod_template(obj: K8sObject) -> dict[str, Any] | None:
    if obj.kind == "VirtualMachineInstance":
        template: Any = {"metadata": obj.metadata, "spec": obj.body.get("spec") or {}}
    else:
        path = "spec.jobTemplate.spec.template" if obj.kind == "CronJob" else "spec.template"
        template = obj.get(path)
    if not isinstance(template, dict):
        return None
    if obj.kind in VM_KINDS:
        # the virt-launcher pod carries the VM's template labels and these of KubeVirt's
        meta = mapping_at(template, "metadata")
        labels = dict(meta.get("labels") or {})
        labels.setdefault("kubevirt.io", "virt-launcher")
        labels.setdefault("vm.kubevirt.io/name", obj.name)
        template = {**template, "metadata": {**meta, "labels": labels}}
    return template


class _PortsOf:
    """``container_ports`` once per pod spec: the pods of one template share their spec
    (a parse batch sends equal specs once), so a fleet's 65,000 pods have a few thousand.
    The spec is held with its answer, so its id is not reused while the memo lives."""

    def __init__(self) -> None:
        self._held: dict[int, tuple[dict[str, Any], tuple[ContainerPort, ...]]] = {}

    def __call__(self, spec: dict[str, Any]) -> tuple[ContainerPort, ...]:
        held = self._held.get(id(spec))
        if held is None or held[0] is not spec:
            held = self._held[id(spec)] = (spec, container_ports(spec))
        return held[1]


def collect_endpoints(inventory: Inventory, cluster: str) -> list[Endpoint]:
    owners = _Owners(inventory, cluster)
    ports_of = _PortsOf()
    endpoints: list[Endpoint] = []
    owned: set[Workload] = set()
    for pod in inventory.of_kind("Pod"):
        if pod.cluster != cluster:
            continue
        spec = mapping_at(pod.body, "spec")
        workload = owners.top_of(pod)
        owned.add(workload)
        endpoints.append(Endpoint(
            cluster, namespace_of(pod), pod.name, workload, _str_labels(pod.labels),
            ports_of(spec), bool(spec.get("hostNetwork")), _pod_ips(pod), pod))
    for obj in inventory.of_kind(*WORKLOAD_KINDS):
        if obj.cluster != cluster:
            continue
        own = Workload.of(obj)
        if own in owned:
            continue  # pods it tops are in the input (asked first: most workloads have pods)
        if owners.top_of(obj) != own:
            continue  # owned by another workload: that one is the endpoint
        template = pod_template(obj)
        if template is None:
            continue
        meta = mapping_at(template, "metadata")
        spec = mapping_at(template, "spec")
        labels = mapping_at(meta, "labels")
        endpoints.append(Endpoint(
            cluster, namespace_of(obj), obj.name, own, _str_labels(labels),
            ports_of(spec), bool(spec.get("hostNetwork")), (), obj, synthetic=True))
    return endpoints


def _str_labels(labels: dict[str, Any]) -> dict[str, str]:
    return {str(k): "" if v is None else str(v) for k, v in labels.items()}


def _pod_ips(pod: K8sObject) -> tuple[str, ...]:
    status = mapping_at(pod.body, "status")
    ips = [p.get("ip") for p in status.get("podIPs") or [] if isinstance(p, dict)]
    if not ips and status.get("podIP"):
        ips = [status["podIP"]]
    return tuple(sorted({str(ip) for ip in ips if ip}))


def namespace_labels(inventory: Inventory, cluster: str, namespace: str) -> dict[str, str]:
    labels = _str_labels(inventory.namespace_labels(namespace, cluster))
    labels.setdefault(NAMESPACE_NAME_LABEL, namespace)
    return labels


def group_classes(endpoints: Iterable[Endpoint], inventory: Inventory, *,
                  by_ip: bool = False) -> list[EndpointClass]:
    """Group endpoints into classes; with ``by_ip`` (ipBlock selects pods) pod
    IPs are part of the identity, since policies can then tell pods apart by IP."""
    groups: dict[tuple[Any, ...], EndpointClass] = {}
    ns_labels: dict[tuple[str, str], dict[str, str]] = {}
    for ep in endpoints:
        key = (ep.cluster, ep.namespace, tuple(sorted(ep.labels.items())), ep.ports,
               ep.host_network, ep.ips if by_ip else ())
        klass = groups.get(key)
        if klass is None:
            nsl = ns_labels.get((ep.cluster, ep.namespace))
            if nsl is None:
                nsl = ns_labels[(ep.cluster, ep.namespace)] = namespace_labels(
                    inventory, ep.cluster, ep.namespace)
            klass = groups[key] = EndpointClass(len(groups), ep.cluster, ep.namespace, ep.labels,
                                                nsl, ep.ports, ep.host_network,
                                                ep.ips if by_ip else ())
        klass.endpoints.append(ep)
    return list(groups.values())


def namespaces_in(inventory: Inventory, cluster: str, classes: Iterable[EndpointClass]) -> list[str]:
    names = {c.namespace for c in classes}
    names |= {o.name for o in inventory.of_kind("Namespace") if o.cluster == cluster}
    return sorted(names)


def endpoints_by_workload(classes: Iterable[EndpointClass]) -> dict[Workload, list[EndpointClass]]:
    out: dict[Workload, list[EndpointClass]] = defaultdict(list)
    for klass in classes:
        for workload in klass.workloads:
            if klass not in out[workload]:
                out[workload].append(klass)
    return out


def split_workloads(classes: Iterable[EndpointClass]
                    ) -> Iterator[tuple[Workload, list[EndpointClass], K8sObject]]:
    """Workloads whose pods fall into several classes, with the object of one such pod
    (of the first class) to point at."""
    for workload, members in sorted(endpoints_by_workload(classes).items()):
        if len(members) > 1:
            yield workload, members, next(e.obj for e in members[0].endpoints
                                          if e.workload == workload)
