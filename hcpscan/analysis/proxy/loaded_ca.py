"""The CA bundle a proxy consumer really loads, and the CA its https proxy needs.

Existence of a trusted-CA ConfigMap is not trust: what counts is the bundle the
program that dials the proxy reads when it verifies the proxy's certificate.

* HyperShift's ignition stub (``user-data-*`` Secret): Ignition adds
  ``ignition.security.tls.certificateAuthorities[].source`` (data URLs) to the
  node's system roots, which hold no private CA (HyperShift issue 1615, PR 6053);
* a Cluster API node (containerd, the kubelet: Go): the distribution's trust store plus the
  CA files its bootstrap config writes where ``update-ca-trust`` / ``update-ca-certificates``
  pick them up (``/etc/pki/ca-trust/source/anchors/``, ``/usr/local/share/ca-certificates/``)
  or straight into the bundle files Go reads;
* a container (the ``konnectivity-https-proxy`` sidecar is the control-plane
  operator, a Go program): Go reads ``SSL_CERT_FILE`` (else the distribution bundle
  files such as ``/etc/pki/tls/certs/ca-bundle.crt``) and ``SSL_CERT_DIR`` (else
  ``/etc/ssl/certs``, ``/etc/pki/tls/certs``...). A ConfigMap or Secret mounted at one
  of those paths is loaded; one mounted elsewhere is not, and the image's own store
  holds no private CA (HyperShift issue 5722, PR 5525: the sidecar had no bundle).

The proxy's CA is what the HostedCluster names in ``configuration.proxy.trustedCA``
(the bundle HyperShift hands its components), plus the user's ``proxy_ca_files``.
"""

from __future__ import annotations

import dataclasses
import posixpath
from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.proxy.containers import ContainerRef
from hcpscan.analysis.proxy.effective import bootstrap_file_text
from hcpscan.analysis.proxy.index import ProxyConsumers
from hcpscan.analysis.proxy.openshift import decode_data_url
from hcpscan.analysis.proxy.pem import Certificate, parse_bundle
from hcpscan.analysis.proxy.settings import HOSTED_CLUSTER, ConsumerProxy
from hcpscan.analysis.proxy.trust import FOUND, KnownProxyCA, resolve_ca
from hcpscan.inventory.fieldpath import Step, format_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.secrets import secret_values
from hcpscan.inventory.store import Inventory
from hcpscan.model.capi import BOOTSTRAP_FILES
from hcpscan.model.hostedcluster import hosted_cluster_for_namespace

# Go's crypto/x509 on Linux (root_linux.go): the first of these files that exists, and every
# file of these directories, unless SSL_CERT_FILE / SSL_CERT_DIR say otherwise.
GO_CERT_FILES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                 "/etc/ssl/ca-bundle.pem", "/etc/pki/tls/cacert.pem",
                 "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/cert.pem")
GO_CERT_DIRS = ("/etc/ssl/certs", "/etc/pki/tls/certs")


@dataclass(slots=True)
class LoadedCA:
    """What a consumer verifies its proxy with, beyond the system roots of its image/OS."""

    loads_at: str  # how the consumer loads its bundle, for evidence and fixes
    field: tuple[Step, ...]  # where in the consumer's object a CA would be added
    certificates: list[Certificate] = dataclasses.field(default_factory=list)
    sources: list[str] = dataclasses.field(default_factory=list)  # each bundle read, where it comes from
    unknown: str = ""  # why what it loads cannot be read offline


@dataclass(slots=True)
class ProxyCA:
    """The CA an https proxy presents certificates from, and where the scan learnt it."""

    certificates: list[KnownProxyCA]
    unknown: str = ""


def proxy_ca_for(inventory: Inventory, obj: K8sObject, known: list[KnownProxyCA],
                 hosted: ConsumerProxy | None) -> ProxyCA:
    """The CA the proxy of a hosted cluster's component presents: the HostedCluster's
    ``trustedCA`` bundle, and the user's ``proxy_ca_files``."""
    found = [k for k in known if k.source.startswith("proxy_ca_files")]
    if hosted is not None:
        ca = resolve_ca(inventory, hosted, https_only=False)
        if ca is not None and ca.state == FOUND and ca.bundle is not None:
            where = f"{hosted.object.ref} spec.configuration.proxy.trustedCA ({ca.holder.ref})"
            found += [KnownProxyCA(c, where) for c in ca.bundle.certificates]
        elif ca is not None and not found:
            return ProxyCA([], f"the proxy's CA ({format_path(ca.field)} of {hosted.object.ref}) "
                               f"cannot be read: {ca.detail or ca.state}")
    if not found:
        # outside an HCP namespace (a Cluster API node) only the user's files can name it
        where = ("the HostedCluster's configuration.proxy.trustedCA or in "
                 if hosted is not None else "")
        return ProxyCA([], f"the proxy's CA is not known: name it in {where}"
                           "inputs.proxy_ca_files (PEM files of the proxy's CA, in the hcpscan "
                           "config)")
    return ProxyCA(found)


def hosted_proxy(inventory: Inventory, consumers: ProxyConsumers, obj: K8sObject
                 ) -> ConsumerProxy | None:
    """The HostedCluster proxy of the HCP namespace ``obj`` is in (None outside one)."""
    hc = hosted_cluster_for_namespace(inventory, obj.namespace, obj.cluster)
    if hc is None:
        return None
    return next((c for c in consumers.of(hc.obj) if c.kind == HOSTED_CLUSTER), None)


# -- ignition stubs -------------------------------------------------------------------------------


def ignition_loaded(body: Any, where: str) -> LoadedCA:
    """The CAs an ignition stub adds to the node's roots (data URLs read; others unknown)."""
    ignition = body.get("ignition") if isinstance(body, dict) else None
    security = ignition.get("security") if isinstance(ignition, dict) else None
    tls = security.get("tls") if isinstance(security, dict) else None
    cas = tls.get("certificateAuthorities") if isinstance(tls, dict) else None
    loaded = LoadedCA(f"{where} ignition.security.tls.certificateAuthorities (added to the "
                      "node's system roots)",
                      ("ignition", "security", "tls", "certificateAuthorities"))
    for i, ca in enumerate(cas if isinstance(cas, list) else []):
        source = ca.get("source") if isinstance(ca, dict) else None
        if not isinstance(source, str):
            continue
        data = decode_data_url(source, ca.get("compression"))
        if data is None:
            loaded.unknown = (f"certificateAuthorities[{i}].source {source[:60]!r} is fetched at "
                              "boot, not written in the stub")
            continue
        loaded.certificates += parse_bundle(data).certificates
        loaded.sources.append(f"certificateAuthorities[{i}] (data URL)")
    return loaded


# -- Cluster API nodes ----------------------------------------------------------------------------

# Where a node's trust store takes extra CAs from (RHEL/Fedora, Debian/Ubuntu).
NODE_ANCHOR_DIRS = ("/etc/pki/ca-trust/source/anchors", "/usr/local/share/ca-certificates")


def node_loaded(inventory: Inventory, obj: K8sObject) -> LoadedCA:
    """The CA files a Cluster API bootstrap config writes into the node's trust store."""
    base = BOOTSTRAP_FILES.get(obj.kind, ())
    loaded = LoadedCA(f"{obj.ref} files[] written to the node's trust store "
                      f"({', '.join(NODE_ANCHOR_DIRS)}, or the bundle files Go reads)", base)
    files = obj.get(base) if base else None
    for i, item in enumerate(files if isinstance(files, list) else []):
        if not isinstance(item, dict):
            continue
        path = str(item.get("path", "")).strip()
        if not (posixpath.dirname(path) in NODE_ANCHOR_DIRS or path in GO_CERT_FILES):
            continue
        content = bootstrap_file_text(inventory, obj, base + (i,), item)
        if content.text is None:
            loaded.unknown = f"files[{i}] {path}: its content cannot be read"
            continue
        loaded.certificates += parse_bundle(content.text).certificates
        loaded.sources.append(f"files[{i}] {path}")
    return loaded


# -- containers -----------------------------------------------------------------------------------


def container_loaded(inventory: Inventory, ref: ContainerRef) -> LoadedCA:
    """The bundles a Go program in container ``ref`` reads besides its image's own store: the
    ConfigMap and Secret files mounted where Go looks (or where SSL_CERT_FILE/DIR point)."""
    env: dict[str, str] = {str(e.get("name")): str(e.get("value")) for e in ref.spec.get("env") or []
                           if isinstance(e, dict) and isinstance(e.get("value"), str)}
    files: tuple[str, ...] = (env["SSL_CERT_FILE"],) if env.get("SSL_CERT_FILE") else GO_CERT_FILES
    dirs = tuple(d for d in (env.get("SSL_CERT_DIR") or "").split(":") if d) or GO_CERT_DIRS
    read = (f"SSL_CERT_FILE={files[0]}" if env.get("SSL_CERT_FILE") else
            "the system bundle (/etc/pki/tls/certs/ca-bundle.crt ...)")
    loaded = LoadedCA(f"{ref.obj.ref} container {ref.name}: Go reads {read} and the files of "
                      f"{', '.join(dirs)}", ref.path + ("volumeMounts",))
    pod = ref.obj.get(ref.pod_path)
    volumes = {str(v.get("name")): v for v in (pod.get("volumes") or [] if isinstance(pod, dict)
                                               else []) if isinstance(v, dict)}
    for mount in ref.spec.get("volumeMounts") or []:
        if not isinstance(mount, dict):
            continue
        volume = volumes.get(str(mount.get("name")))
        if volume is None:
            continue
        for path, text, origin in _mounted_files(inventory, ref.obj, volume, mount):
            if not (path in files or posixpath.dirname(path) in dirs
                    or (text is None and _covers(path, files, dirs))):
                continue
            if text is None:
                loaded.unknown = f"{origin} mounted at {path} {_why_unknown(origin)}"
                continue
            loaded.certificates += parse_bundle(text).certificates
            loaded.sources.append(f"{origin} mounted at {path}")
    return loaded


def _covers(mount_path: str, files: tuple[str, ...], dirs: tuple[str, ...]) -> bool:
    """Whether a mount whose keys are unknown (its object is not in the input) may put a file
    where Go reads one: it is mounted at one of those directories or above one of the files."""
    top = mount_path.rstrip("/") + "/"
    return mount_path in dirs or any(f.startswith(top) for f in files) or any(
        d.startswith(top) for d in dirs)


def _why_unknown(origin: str) -> str:
    return "is not in the input" if "(missing)" not in origin else "is not readable"


def _mounted_files(inventory: Inventory, obj: K8sObject, volume: dict[str, Any],
                   mount: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    """(path in the container, text or None when unknown, where it comes from) for each file a
    ConfigMap, Secret or projected volume puts under the mount."""
    projected = volume.get("projected")
    if isinstance(projected, dict):
        out = []
        for source in projected.get("sources") or []:
            if isinstance(source, dict) and ("configMap" in source or "secret" in source):
                out += _mounted_files(inventory, obj, source, mount)
        return out
    kind, spec = ("ConfigMap", volume.get("configMap")) if "configMap" in volume else (
        "Secret", volume.get("secret"))
    if not isinstance(spec, dict):
        return []
    name = str(spec.get("name") or spec.get("secretName") or "")
    source = inventory.get(kind, obj.namespace, name, obj.cluster)
    values: dict[str, str | None] = {}
    if source is not None:
        if kind == "ConfigMap":
            data = source.body.get("data")
            values = {str(k): v for k, v in (data or {}).items() if isinstance(v, str)} \
                if isinstance(data, dict) else {}
        else:
            values = {k: (None if v.redacted else v.text) for k, v in secret_values(source).items()}
    items = spec.get("items")
    keys = ({str(i.get("key")): str(i.get("path") or i.get("key")) for i in items
             if isinstance(i, dict)} if isinstance(items, list) else {k: k for k in values})
    mount_path = str(mount.get("mountPath") or "")
    sub_path = str(mount.get("subPath") or "")
    origin = f"{kind} {obj.namespace}/{name}"
    if source is None:
        # without the object its keys are unknown: the mount itself says where they land
        return [(mount_path, None, origin)] if sub_path or mount_path else []
    out = []
    for key, path in keys.items():
        if sub_path and path != sub_path:
            continue
        where = mount_path if sub_path else posixpath.join(mount_path, path)
        out.append((where, values.get(key), f"{origin} key {key}"))
    return out


def trusts(loaded: LoadedCA, proxy_ca: ProxyCA) -> bool:
    have = {c.sha256 for c in loaded.certificates}
    return any(k.certificate.sha256 in have for k in proxy_ca.certificates)


def missing_ca(proxy_ca: ProxyCA) -> list[dict[str, str]]:
    """The proxy's CA as structured data for a fix: fingerprint, subject, where it is known."""
    return [{"sha256": k.certificate.sha256, "subject": k.certificate.subject,
             "source": k.source} for k in proxy_ca.certificates]
