"""Effective proxy settings of one consumer, each value with where it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hcpscan.analysis.proxy.noproxy import RuntimeRef
from hcpscan.analysis.proxy.pem import CABundle
from hcpscan.analysis.proxy.versions import infer_from_image
from hcpscan.inventory.fieldpath import Step, format_path, parse_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.store import Inventory
from hcpscan.sources.systemd import tries_proxy

# Consumer kinds, as shown in reports.
CONTAINER = "container"
KONNECTIVITY_SIDECAR = "konnectivity-sidecar"
CLUSTER_PROXY = "Proxy"  # config.openshift.io/v1 Proxy
HOSTED_CLUSTER = "HostedCluster"
IGNITION = "ignition"
SYSTEMD = "systemd-dropin"
KUBEADM_FILE = "kubeadm-file"
CLUSTER_VALUES = "cluster-values"
ADDON_CONFIG = "AddOnDeploymentConfig"
MANAGED_CLUSTER_ADDON = "ManagedClusterAddOn"
KUBECONFIG = "kubeconfig"
CHART_VALUES = "chart-values"  # Helm values: HelmRelease spec.values, App configs, *-user-values
KLUSTERLET_CONFIG = "KlusterletConfig"  # OCM: the klusterlet's hub connection
KLUSTERLET_ADDON_CONFIG = "KlusterletAddonConfig"  # ACM: the add-on agents of one cluster
INSTALL_CONFIG = "install-config"  # OpenShift installer input: becomes the Proxy spec
MACHINE_CONFIG_FILE = "machineconfig-file"  # OpenShift MachineConfig drop-ins and env files
# A Cluster API infrastructure cluster's proxy (CAPVCD VCDCluster), written into its nodes
INFRASTRUCTURE_CLUSTER = "infrastructure-cluster"
OLM_SUBSCRIPTION = "olm-subscription"  # an OLM Subscription spec.config.env: its operator gets it

# How rules name the consumer kinds above in their `consumers` parameter.
NEW_CONSUMER_KINDS = {CHART_VALUES: CHART_VALUES, "klusterlet-config": KLUSTERLET_CONFIG,
                      "klusterlet-addon-config": KLUSTERLET_ADDON_CONFIG,
                      INSTALL_CONFIG: INSTALL_CONFIG, MACHINE_CONFIG_FILE: MACHINE_CONFIG_FILE,
                      INFRASTRUCTURE_CLUSTER: INFRASTRUCTURE_CLUSTER,
                      OLM_SUBSCRIPTION: OLM_SUBSCRIPTION}

# The kinds those consumers sit on (what a rule judging them applies to).
NEW_CONSUMER_OBJECTS = ("HelmRelease", "ConfigMap", "Secret", "KubeadmControlPlane",
                        "KubeadmControlPlaneTemplate", "KlusterletConfig", "KlusterletAddonConfig",
                        "InstallConfig", "MachineConfig", "VCDCluster", "VCDClusterTemplate",
                        "Subscription")

# The kinds the model reads to build each consumer kind (so a rule that judges them,
# run alone, keeps them when a dump is pruned).
READS_BY_CONSUMER: dict[str, tuple[str, ...]] = {
    CHART_VALUES: ("HelmRelease", "App", "ConfigMap", "Secret"),
    KLUSTERLET_CONFIG: ("KlusterletConfig", "ConfigMap"),
    KLUSTERLET_ADDON_CONFIG: ("KlusterletAddonConfig",),
    INSTALL_CONFIG: ("InstallConfig", "ConfigMap", "Secret"),
    MACHINE_CONFIG_FILE: ("MachineConfig",),
    INFRASTRUCTURE_CLUSTER: ("VCDCluster", "VCDClusterTemplate", "Cluster"),
    OLM_SUBSCRIPTION: ("Subscription", "ConfigMap", "Secret", "Proxy"),
    KUBEADM_FILE: ("KubeadmConfig", "KubeadmConfigTemplate", "KubeadmControlPlane",
                   "KubeadmControlPlaneTemplate", "Secret"),
}
# Consumer roles as rule parameters name them (``consumers: [kubeconfig]``) -> kind above.
ROLES = {"container": CONTAINER, "konnectivity-sidecar": KONNECTIVITY_SIDECAR,
         "Proxy": CLUSTER_PROXY, "HostedCluster": HOSTED_CLUSTER, "ignition": IGNITION,
         "systemd-dropin": SYSTEMD, "kubeadm-file": KUBEADM_FILE, "cluster-values": CLUSTER_VALUES,
         "addon-config": ADDON_CONFIG, "managed-cluster-addon": MANAGED_CLUSTER_ADDON,
         "kubeconfig": KUBECONFIG, **NEW_CONSUMER_KINDS}


class Source:
    """A field of an inventory object and its own line in the user's file.

    ``source_of`` names the object and field, and finds the line, only when
    asked for (a report printing them): finding a field's line re-reads its
    document, and the model records thousands of sources of which reports
    show a few."""

    __slots__ = ("_ref", "_field", "_path", "_line", "_of", "_at", "_unlocated")

    def __init__(self, ref: str, field: str, path: str | None = None, line: int | None = None) -> None:
        self._ref: str | None = ref  # "Deployment hcp-namespace/oauth-openshift"
        self._field: str | None = field  # "spec.template.spec.containers[0].env[3].value"
        self._path, self._line = path, line
        self._of: tuple[Inventory, K8sObject, tuple[Step, ...]] | None = None
        self._at: Source | None = None
        self._unlocated = False

    @classmethod
    def of_field(cls, inventory: Inventory, obj: K8sObject, steps: tuple[Step, ...]) -> Source:
        """The field ``steps`` of ``obj``: named and located when first asked for."""
        source = cls.__new__(cls)
        source._ref = source._field = source._path = source._line = None
        source._of = (inventory, obj, steps)
        source._at = None
        source._unlocated = True
        return source

    @classmethod
    def within(cls, origin: Source, note: str) -> Source:
        """A place inside the field ``origin`` (a line of a file it holds as text): named
        ``origin``'s field followed by ``note``, at ``origin``'s line, found when first
        asked for. Like a Source made with a name, it has no ``place`` of its own."""
        source = cls(origin.ref, f"{origin.field} {note}")
        source._at, source._unlocated = origin, True
        return source

    @property
    def ref(self) -> str:
        if self._ref is None:
            self._ref, self._field = self._named()
        return self._ref

    @property
    def place(self) -> tuple[K8sObject, tuple[Step, ...]] | None:
        """The inventory object and field path the value is written at, when it is a field of
        an object of its own (not a document embedded in another, such as a kubeconfig)."""
        if self._of is None:
            return None
        _inventory, obj, steps = self._of
        if obj.origin is not None and obj.source.embedded_in:
            return None
        return obj, steps

    @property
    def steps(self) -> tuple[Step, ...]:
        """The field path within the object the value is written in (() when unknown)."""
        return self._of[2] if self._of is not None else ()

    @property
    def holder(self) -> K8sObject | None:
        """The inventory object the value is written in: the outer object of an embedded
        document (the Secret a kubeconfig is stored in)."""
        if self._of is None:
            return None
        obj = self._of[1]
        return obj.origin if obj.origin is not None and obj.source.embedded_in else obj

    @property
    def field(self) -> str:
        if self._field is None:
            self._ref, self._field = self._named()
        return self._field

    def _named(self) -> tuple[str, str]:
        if self._of is None:  # __init__ names it, of_field gives the object: never both None
            raise RuntimeError("a proxy-setting Source with neither a name nor an object")
        _inventory, obj, steps = self._of
        if obj.origin is not None and obj.source.embedded_in:
            # a document inside another (a kubeconfig in a Secret): name the outer object
            return obj.origin.ref, f"{obj.source.embedded_in} ({format_path(steps)})"
        return obj.ref, format_path(steps)

    def _located(self) -> None:
        if not self._unlocated:
            return
        if self._of is not None:  # of_field
            inventory, obj, steps = self._of
            loc = inventory.locate(obj, steps)
            self._path, self._line = loc.path, loc.line
        elif self._at is not None:  # within
            self._path, self._line = self._at.path, self._at.line
        self._unlocated = False

    @property
    def path(self) -> str:
        self._located()
        return self._path or ""

    @property
    def line(self) -> int:
        self._located()
        return self._line or 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Source) and (self.ref, self.field, self.path, self.line) == (
            other.ref, other.field, other.path, other.line)

    def __hash__(self) -> int:
        return hash((self.ref, self.field))

    def __repr__(self) -> str:
        return f"Source({self.ref!r}, {self.field!r})"

    def __str__(self) -> str:
        return f"{self.path}:{self.line} ({self.ref} {self.field})"

    def to_json(self) -> dict[str, Any]:
        return {"object": self.ref, "field": self.field, "path": self.path, "line": self.line}


def meant_proxy(consumer: ConsumerProxy) -> bool:
    """Whether lines of the consumer's file meant to set HTTP(S)_PROXY but its reader
    ignores them (a typographic quote, an unclosed quote): the file's author uses a proxy."""
    return any(tries_proxy(why) for _source, why in consumer.syntax)


def source_of(inventory: Inventory, obj: K8sObject, steps: tuple[Step, ...] | str) -> Source:
    return Source.of_field(inventory, obj, steps if isinstance(steps, tuple) else parse_path(steps))


# The fields of an OpenShift-style proxy block (Proxy, HostedCluster, install-config,
# AddOnDeploymentConfig, KlusterletAddonConfig) and the consumer attribute of each.
PROXY_FIELDS = (("httpProxy", "http_proxy"), ("httpsProxy", "https_proxy"), ("noProxy", "no_proxy"))


def setting_text(value: Any) -> str:
    """A field's value as clients read it (a YAML list of noProxy entries: comma-joined)."""
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def read_block(inventory: Inventory, obj: K8sObject, base: tuple[Step, ...], consumer: ConsumerProxy,
               fields: tuple[tuple[str, str], ...] = PROXY_FIELDS) -> None:
    """Record the proxy fields of the block at ``base`` of ``obj`` on ``consumer``."""
    block = obj.get(base)
    if not isinstance(block, dict):
        return
    for key, attr in fields:
        if key in block and block[key] is not None:
            consumer.record(Setting(key, setting_text(block[key]),
                                    source_of(inventory, obj, base + (key,))), attr)


def source_in_text(origin: Source, text: str, steps: tuple[Step, ...]) -> Source:
    """A field of a YAML document held as text in the field ``origin`` (Helm values in a
    ConfigMap, an install-config in a Secret): named with its path and its line in that
    text, located at ``origin`` (findings point at the field holding the document)."""
    from hcpscan.core.yamldocs import locate

    at = locate(text, 0, None, steps)
    line = f" at line {at[0]} of it" if at is not None and at[2] == len(steps) else ""
    return Source.within(origin, f"({format_path(steps)}{line})")


@dataclass(frozen=True, slots=True)
class Setting:
    """One value (``None`` = unknown) and the chain that produced it.

    ``source`` is where the value is written; ``via`` lists the references
    followed to get there (an ``env[].valueFrom`` pointing at a ConfigMap key).
    """

    name: str  # variable, field or flag name as written
    value: str | None
    source: Source
    via: tuple[Source, ...] = ()
    unknown: str = ""  # why the value is not known (redacted, not in the inventory ...)

    @property
    def known(self) -> bool:
        return self.value is not None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "value": self.value,
                               "source": self.source.to_json()}
        if self.via:
            out["via"] = [s.to_json() for s in self.via]
        if self.unknown:
            out["unknown"] = self.unknown
        return out


@dataclass(slots=True)
class ConsumerProxy:
    """The proxy settings one consumer ends up with.

    ``http_proxy``/``https_proxy``/``no_proxy`` are the effective values (for
    containers: after the env precedence of ``runtime``); ``variables`` keeps
    every proxy-related input as written. ``via`` is the consumer the settings
    are delegated to (a konnectivity sidecar, an AddOnDeploymentConfig).
    """

    kind: str
    name: str
    object: K8sObject
    container: str | None = None
    http_proxy: Setting | None = None
    https_proxy: Setting | None = None
    no_proxy: Setting | None = None
    variables: dict[str, Setting] = field(default_factory=dict)
    trusted_ca: Setting | None = None
    ca_bundle: CABundle | None = None
    via: ConsumerProxy | None = None
    runtime: str | None = None
    notes: list[str] = field(default_factory=list)
    # Which block of the object holds the settings when it has two: a Proxy's "spec"
    # (what the user wrote) or "status" (what the cluster computed from it).
    part: str = ""
    # The program that reads the settings, when the input says: a systemd unit's name, a
    # container's image (see hcpscan.model.readers).
    program: str = ""
    image: str = ""
    # Who completes this noProxy with the cluster's own destinations before any client reads
    # it ('' when nobody does): such a value answers only for what the user must write.
    completed_by: str = ""
    # Chart values: the Cluster API workload clusters they configure (the release's and the
    # values' own names for it, see hcpscan.model.capi.release_clusters).
    workload_clusters: frozenset[str] = frozenset()
    # HyperShift's control-plane proxy path (DOMAIN.md §3): a konnectivity sidecar serves
    # "http" (konnectivity-https-proxy, which takes the proxy flags) or "socks5"; a container
    # whose proxy is the pod itself (127.0.0.1:<port>) with no sidecar serving that port keeps
    # the setting that says so in ``unserved``.
    serves: str = ""
    unserved: Setting | None = None
    # Lines of a drop-in or environment file its reader ignores (systemd drops an assignment
    # whose name is invalid, e.g. one wrapped in typographic quotes): (where, what is wrong).
    syntax: list[tuple[Source, str]] = field(default_factory=list)
    # The field that would hold this consumer's proxy CA when none is written, as the user
    # should be told to write it ('' when the API keeps it in one known place, see
    # hcpscan.analysis.proxy.trust.MODEL_RESOLVED).
    ca_field: str = ""
    # Proxy settings written but ignored by the program that reads them (a KlusterletConfig's
    # deprecated hubKubeAPIServerProxyConfig beside hubKubeAPIServerConfig): never effective.
    dropped: tuple[Setting, ...] = ()

    @property
    def client_release(self) -> RuntimeRef | None:
        """The HTTP client and release the image tag states (``curlimages/curl:8.5.0``)."""
        return infer_from_image(self.image) if self.image else None

    @property
    def cluster(self) -> str:
        return self.object.cluster

    @property
    def namespace(self) -> str:
        return self.object.namespace

    def record(self, setting: Setting, *attrs: str) -> None:
        """Keep ``setting`` as written, and as the effective value of ``attrs``."""
        self.variables[setting.name] = setting
        for attr in attrs:
            setattr(self, attr, setting)

    def effective(self, which: str) -> Setting | None:
        return {"httpProxy": self.http_proxy, "httpsProxy": self.https_proxy,
                "noProxy": self.no_proxy}[which]

    def to_json(self) -> dict[str, Any]:
        def one(s: Setting | None) -> dict[str, Any] | None:
            return s.to_json() if s is not None else None

        out: dict[str, Any] = {
            "kind": self.kind, "consumer": self.name, "cluster": self.cluster,
            "object": {"kind": self.object.kind, "namespace": self.object.namespace,
                       "name": self.object.name},
            "container": self.container, "runtime": self.runtime,
            "httpProxy": one(self.http_proxy), "httpsProxy": one(self.https_proxy),
            "noProxy": one(self.no_proxy),
            "variables": {k: v.to_json() for k, v in self.variables.items()},
        }
        if self.trusted_ca is not None:
            out["trustedCA"] = self.trusted_ca.to_json()
        if self.ca_bundle is not None:
            out["caBundle"] = self.ca_bundle.to_json()
        if self.via is not None:
            out["via"] = self.via.to_json()
        if self.notes:
            out["notes"] = list(self.notes)
        if self.completed_by:
            out["completedBy"] = self.completed_by
        return out

def field_in(subject: K8sObject, setting: Setting) -> str:
    """The field of ``subject`` a finding about ``setting`` points at: where the value
    is written when that is in the subject, else the subject's own reference to it
    (``env[].valueFrom``, ``files[].contentFrom``), else the document start."""
    for src in (setting.source, *setting.via):
        if src.ref == subject.ref:
            return src.field.partition(" (")[0]
    return ""
