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
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hcpscan.analysis.proxy.containers import ContainerRef, container_env, words
from hcpscan.analysis.proxy.effective import bootstrap_file_text
from hcpscan.analysis.proxy.index import ProxyConsumers
from hcpscan.analysis.proxy.openshift import decode_data_url
from hcpscan.analysis.proxy.pem import Certificate, parse_bundle
from hcpscan.analysis.proxy.settings import (
    ADDON_CONFIG,
    CLUSTER_PROXY,
    HOSTED_CLUSTER,
    KLUSTERLET_CONFIG,
    KUBECONFIG,
    ConsumerProxy,
    Setting,
)
from hcpscan.analysis.proxy.trust import (
    ABSENT,
    CA_BUNDLE_KEY,
    FOUND,
    KnownProxyCA,
    known_proxy_cas,
    proxy_urls,
    resolve_ca,
)
from hcpscan.core.userinfo import without_userinfo
from hcpscan.inventory.fieldpath import Step, format_path
from hcpscan.inventory.objects import K8sObject, anonymized_keys
from hcpscan.inventory.secrets import secret_values
from hcpscan.inventory.store import Inventory
from hcpscan.model.capi import BOOTSTRAP_FILES
from hcpscan.model.hostedcluster import hosted_cluster_for_namespace
from hcpscan.model.readers import IMAGE_CLIENTS, go_reader, image_program
from hcpscan.model.truststores import (
    ANY_RUNTIME,
    CLIENT_TRUST_STORES,
    DISTRIBUTION_NAMES,
    DISTRIBUTIONS,
    GO_CERT_FILES,
    HASHED_NAME,
    JAVA_CACERTS_SUFFIX,
    JAVA_OPTION_VARIABLES,
    JAVA_SYSTEM_KEYSTORES,
    JAVA_TRUSTSTORE,
    NODE_IMAGES,
    NODE_SYSTEM_STORE_FLAGS,
    STORES,
    TEMURIN_SYSTEM_CAS,
    Distribution,
    go_first_file,
    image_distribution,
)


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
    # why a consumer that does not load these certificates may still be fine ('' = it is not):
    # then it is not evaluable rather than reported
    doubt: str = ""


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


def container_loaded(inventory: Inventory, ref: ContainerRef, runtime: str = "go") -> LoadedCA:
    """The bundles the ``runtime`` program in container ``ref`` reads besides its image's own
    store: the ConfigMap and Secret files mounted where that runtime looks, or where its
    variables (``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``, ``NODE_EXTRA_CA_CERTS`` ...) point
    (hcpscan.model.truststores)."""
    store = STORES[runtime]
    env = {k: v.value for k, v in container_env(inventory, ref).items() if v.value}
    named = next(((v, env[v]) for v in store.file_vars if env.get(v)), None)
    pod = ref.obj.get(ref.pod_path)
    volumes = {str(v.get("name")): v for v in (pod.get("volumes") or [] if isinstance(pod, dict)
                                               else []) if isinstance(v, dict)}
    mounted: list[tuple[str, str | None, str]] = []
    for mount in ref.spec.get("volumeMounts") or []:
        volume = volumes.get(str(mount.get("name"))) if isinstance(mount, dict) else None
        if volume is not None and isinstance(mount, dict):
            mounted += (_mounted_files(inventory, ref.obj, volume, mount) if "emptyDir" not in volume
                        else _copied_files(inventory, ref, pod, volume, mount))
    distro = DISTRIBUTIONS.get(image_distribution(str(ref.spec.get("image") or ""))[0])
    files: tuple[str, ...] = (named[1],) if named else _default_files(
        runtime, distro, {path for path, _text, _origin in mounted})
    dir_var = next(((v, env[v]) for v in store.dir_vars if env.get(v)), None)
    dirs: tuple[str, ...] = ((() if store.dirs_only_without_file and named else
                              tuple(d for d in dir_var[1].split(":") if d)) if dir_var
                             else (() if store.dirs_only_without_file and named
                                   else _default_dirs(runtime, distro)))
    extras = tuple(env[v] for v in store.extra_vars if env.get(v))
    keystore = ""
    if runtime == "java":
        options = " ".join([env.get(v, "") for v in JAVA_OPTION_VARIABLES] + words(ref))
        found = JAVA_TRUSTSTORE.search(options)
        keystore = found.group(1).strip("\"'") if found else ""
        if env.get(TEMURIN_SYSTEM_CAS[0]):
            dirs = (TEMURIN_SYSTEM_CAS[1],)
    loaded = LoadedCA(f"{ref.obj.ref} container {ref.name}: "
                      + _reads(store.runtime, named, files, dirs, extras, keystore),
                      ref.path + ("volumeMounts",))
    if distro is not None:
        dirs = tuple(dict.fromkeys(dirs + tuple(d for d, target in distro.dir_links.items()
                                                if target in dirs)))
    for path, text, origin in mounted:
        if runtime == "java" and not keystore and (path.endswith(JAVA_CACERTS_SUFFIX)
                                                   or path in JAVA_SYSTEM_KEYSTORES):
            loaded.unknown = (f"{origin} mounted at {path} replaces the JDK's cacerts "
                              "keystore (not PEM): hcpscan does not read it")
            continue
        if keystore and path == keystore:
            loaded.unknown = (f"{origin} mounted at {path} is the Java truststore "
                              "(a keystore, not PEM): hcpscan does not read it")
            continue
        if not (path in files or path in extras or _in_dirs(path, dirs, store.hashed_dirs)
                or (text is None and _covers(path, files + extras, dirs))):
            continue
        if text is None:
            loaded.unknown = f"{origin} mounted at {path} {_why_unknown(origin)}"
            continue
        loaded.certificates += parse_bundle(text).certificates
        loaded.sources.append(f"{origin} mounted at {path}")
    return loaded


def _default_files(runtime: str, distro: Distribution | None, mounted: set[str]
                   ) -> tuple[str, ...]:
    """The bundle files ``runtime`` reads when no variable names one: on a known
    distribution its own (for Go the first of its list that exists, a mount creating one,
    and the file that links to); else the union over distributions."""
    if distro is None:
        return STORES[runtime].default_files
    if runtime == "go":
        first = go_first_file(distro, mounted)
        return tuple(dict.fromkeys(first)) if first else ()
    if runtime in distro.defaults:
        return distro.defaults[runtime][0]
    return STORES[runtime].default_files


def _default_dirs(runtime: str, distro: Distribution | None) -> tuple[str, ...]:
    if distro is not None and runtime in distro.defaults:
        return distro.defaults[runtime][1]
    return STORES[runtime].default_dirs


def _copied_files(inventory: Inventory, ref: ContainerRef, pod: Any, volume: dict[str, Any],
                  mount: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    """The files of an emptyDir as an init container of the pod fills it: the ConfigMap and
    Secret files that init container mounts beside the same emptyDir, copied under their own
    names (the HyperShift operator's ``init-environment`` copies the injected
    ``tls-ca-bundle.pem`` into the emptyDir its manager mounts at
    ``/etc/pki/ca-trust/extracted/pem``). With no such init container the directory is
    filled at run time: unknown."""
    mount_path = str(mount.get("mountPath") or "")
    name = str(volume.get("name"))
    volumes = {str(v.get("name")): v for v in (pod.get("volumes") or [] if isinstance(pod, dict)
                                               else []) if isinstance(v, dict)}
    out: list[tuple[str, str | None, str]] = []
    for init in (pod.get("initContainers") or [] if isinstance(pod, dict) else []):
        if not isinstance(init, dict) or ref.spec is init:
            continue
        mounts = [m for m in init.get("volumeMounts") or [] if isinstance(m, dict)]
        if not any(str(m.get("name")) == name for m in mounts):
            continue
        for other in mounts:
            source = volumes.get(str(other.get("name")))
            if source is None or "emptyDir" in source:
                continue
            for path, text, origin in _mounted_files(inventory, ref.obj, source, other):
                # a source not in the input: its files, wherever they land, are unknown
                copied = (posixpath.join(mount_path, posixpath.basename(path)) if text is not None
                          else mount_path)
                out.append((copied, text, f"{origin} (copied by init container "
                                          f"{init.get('name')} into emptyDir {name})"))
    if not out and mount_path:
        return [(mount_path, None, f"emptyDir {name} (filled at run time)")]
    return out


def _in_dirs(path: str, dirs: tuple[str, ...], hashed: bool) -> bool:
    """A file the runtime reads from one of its CA directories: every file (Go), or only the
    hashed names OpenSSL looks up (``<subject hash>.0``)."""
    folder, name = posixpath.split(path)
    if folder not in dirs:
        return False
    if folder == TEMURIN_SYSTEM_CAS[1]:
        return name.endswith(".crt")
    return not hashed or bool(HASHED_NAME.match(name))


def _reads(runtime: str, named: tuple[str, str] | None, files: tuple[str, ...],
           dirs: tuple[str, ...], extras: tuple[str, ...], keystore: str) -> str:
    """How the runtime loads its bundle, in words, as the container's variables set it."""
    store = STORES[runtime]
    if runtime == "go":
        read = f"SSL_CERT_FILE={files[0]}" if named else (
            "the system bundle (" + (" -> ".join(files) if files and files != GO_CERT_FILES
                                     else f"the first of Go's list that exists: {GO_CERT_FILES[0]} "
                                          "...") + ")")
        return f"Go reads {read} and the files of {', '.join(dirs)}"
    if runtime == "java":
        return (f"Java reads the truststore {keystore}" if keystore else
                "Java reads the JDK's cacerts keystore") + (
            f" and the *.crt files of {dirs[0]}" if dirs else "")
    parts = [f"{named[0]}={named[1]}" if named else
             (f"the default bundle ({files[0]} ...)" if files else store.defaults_in_image)]
    if dirs:
        parts.append(("the hashed names (<hash>.0) in " if store.hashed_dirs else "the files of ")
                     + ", ".join(dirs))
    parts += [f"{v}={x}" for v, x in zip(store.extra_vars, extras, strict=False)]
    return f"{runtime} reads " + " and ".join(parts)


def trust_runtimes(inventory: Inventory, ref: ContainerRef) -> tuple[tuple[str, ...], str]:
    """The runtimes that may dial the proxy from container ``ref``, and how the input tells:
    its image (a language image, a Go component), else any runtime hcpscan models."""
    image = str(ref.spec.get("image") or "")
    program = image_program(image)
    client = IMAGE_CLIENTS.get(program)
    runtimes = (CLIENT_TRUST_STORES.get(client) if client else
                ("node",) if program in NODE_IMAGES else None)
    why = f"its image {image.split('@', 1)[0]}"
    if runtimes is None:
        go = go_reader(program, image)
        runtimes, why = (("go",), go) if go else (
            ANY_RUNTIME, "its image does not say which runtime dials the proxy; trusted if any "
                         "of " + ", ".join(ANY_RUNTIME) + " would load the CA")
    if "node" in runtimes:
        env = container_env(inventory, ref)
        options = " ".join([str(env["NODE_OPTIONS"].value or "")] if "NODE_OPTIONS" in env else [])
        if any(flag in options or flag in words(ref) for flag in NODE_SYSTEM_STORE_FLAGS):
            runtimes = (*runtimes, "openssl")
    if any(r in ("go", "openssl", "curl") for r in runtimes):
        distro, _how = image_distribution(image)
        why += ("; " + DISTRIBUTION_NAMES[distro] + "-based" if distro else
                "; its distribution is not known: the bundle files of RHEL/UBI, Debian/Ubuntu "
                "and Alpine are all counted")
    return runtimes, why


def _covers(mount_path: str, files: tuple[str, ...], dirs: tuple[str, ...]) -> bool:
    """Whether a mount whose keys are unknown (its object is not in the input) may put a file
    where Go reads one: it is mounted at one of those directories or above one of the files."""
    top = mount_path.rstrip("/") + "/"
    return mount_path in dirs or any(f.startswith(top) for f in files) or any(
        d.startswith(top) for d in dirs)


def _why_unknown(origin: str) -> str:
    if "filled at run time" in origin:
        return "is written by the running pod; what it holds is not in the input"
    if " key " in origin and "(missing)" not in origin:
        return "holds certificates the input does not show (anonymized or redacted)"
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
            if injected(source) and CA_BUNDLE_KEY not in values:
                values[CA_BUNDLE_KEY] = injected_bundle(inventory, source.cluster)
            for hidden in anonymized_keys(source) & values.keys():
                values[hidden] = None  # an Insights archive keeps no certificate
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


# OpenShift's cluster-network-operator fills key ca-bundle.crt of every ConfigMap labelled so
# with the cluster's trusted bundle: the system roots merged with the Proxy's trustedCA, kept in
# openshift-config-managed/trusted-ca-bundle.
INJECT_LABEL = "config.openshift.io/inject-trusted-cabundle"


def injected(cm: K8sObject) -> bool:
    labels = cm.body.get("metadata", {}).get("labels") if isinstance(cm.body.get("metadata"), dict) \
        else None
    return isinstance(labels, dict) and str(labels.get(INJECT_LABEL, "")).lower() == "true"


def injected_bundle(inventory: Inventory, cluster: str) -> str | None:
    """What the CNO writes into an injected ConfigMap (None when the input cannot tell): the
    merged openshift-config-managed/trusted-ca-bundle, else the Proxy's trustedCA it merges."""
    merged = inventory.get("ConfigMap", "openshift-config-managed", "trusted-ca-bundle", cluster)
    data = merged.body.get("data") if merged is not None else None
    if merged is not None and isinstance(data, dict) and isinstance(data.get(CA_BUNDLE_KEY), str):
        return None if CA_BUNDLE_KEY in anonymized_keys(merged) else str(data[CA_BUNDLE_KEY])
    proxy = inventory.get("Proxy", "", "cluster", cluster)
    spec = proxy.body.get("spec") if proxy is not None else None
    name = ((spec.get("trustedCA") or {}).get("name") if isinstance(spec, dict)
            and isinstance(spec.get("trustedCA"), dict) else None)
    if proxy is None or not name:
        # no trustedCA: the CNO injects the system roots only, which hold no private CA
        return "" if proxy is not None else None
    user = inventory.get("ConfigMap", "openshift-config", str(name), cluster)
    data = user.body.get("data") if user is not None else None
    if user is not None and isinstance(data, dict) and isinstance(data.get(CA_BUNDLE_KEY), str):
        return None if CA_BUNDLE_KEY in anonymized_keys(user) else str(data[CA_BUNDLE_KEY])
    return None


# -- the CA of the proxy a container dials ---------------------------------------------------


def endpoint(url: str) -> tuple[str, int] | None:
    """(host, port) of a proxy URL, the port defaulted by its scheme; None when unreadable."""
    text = without_userinfo(url.strip())
    if "://" not in text:
        text = "http://" + text
    try:
        parts = urlsplit(text)
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme.lower(), 0)
    except ValueError:
        return None
    return ((parts.hostname or "").lower().rstrip("."), port) if parts.hostname else None


def configured_proxy_ca(inventory: Inventory, consumers: list[ConsumerProxy], obj: K8sObject,
                        url: Setting) -> tuple[list[KnownProxyCA], str]:
    """The CA the configuration of the proxy at ``url`` names: the ``trustedCA`` of the
    HostedCluster whose HCP namespace ``obj`` is in, or of the cluster ``Proxy``, when that
    object configures the same proxy (host and port). And why it cannot be read ('' if it
    can or none is named)."""
    target = endpoint(url.value or "")
    hc = hosted_cluster_for_namespace(inventory, obj.namespace, obj.cluster)
    owners = [c for c in consumers if c.object.cluster == obj.cluster and (
        c.kind == CLUSTER_PROXY or (c.kind == HOSTED_CLUSTER and hc is not None
                                    and c.object is hc.obj))]
    found: list[KnownProxyCA] = []
    unknown = ""
    for owner in owners:
        if target is None or not any(endpoint(s.value or "") == target for s in (
                owner.http_proxy, owner.https_proxy) if s is not None and s.value):
            continue
        ca = resolve_ca(inventory, owner, https_only=False)
        if ca is None:
            continue
        if ca.state == FOUND and ca.bundle is not None:
            where = f"{owner.object.ref} {format_path(ca.field)} ({ca.holder.ref})"
            found += [KnownProxyCA(c, where) for c in ca.bundle.certificates]
        elif ca.state != ABSENT:
            unknown = (f"the proxy's CA ({format_path(ca.field)} of {owner.object.ref}) cannot "
                       f"be read: {ca.detail or ca.state}")
    return found, unknown


# The objects that state an https proxy's CA for its own clients, against which another
# consumer's bundle for the same proxy is cross-checked: the cluster Proxy's and a
# HostedCluster's trustedCA, a KlusterletConfig's trustedCABundles, and the klusterlet's hub
# kubeconfig, whose certificate-authority-data holds the proxy's CA beside the hub's own.
CROSS_CHECK_SOURCES = (CLUSTER_PROXY, HOSTED_CLUSTER, KLUSTERLET_CONFIG, KUBECONFIG)


HUB_CA_BESIDE = ", beside the hub's server CA"


def proxy_ca_elsewhere(inventory: Inventory, consumers: list[ConsumerProxy],
                       consumer: ConsumerProxy, from_files: list[KnownProxyCA],
                       kubeconfigs: bool = True) -> list[KnownProxyCA]:
    """The CA of the proxy ``consumer`` dials as every *other* source states it: the files of
    ``inputs.proxy_ca_files`` (``from_files``), and the objects of CROSS_CHECK_SOURCES that
    configure the same proxy (host and port), in any cluster of the input. Never the
    consumer's own bundle, so a bundle holding another CA than the proxy's is seen."""
    targets = _endpoints(consumer)
    found = list(from_files)
    if not targets:
        return found
    for other in consumers:
        if other.kind not in CROSS_CHECK_SOURCES or other.object is consumer.object or (
                other.kind == KUBECONFIG and not kubeconfigs):
            continue
        if not targets & _endpoints(other):
            continue
        ca = resolve_ca(inventory, other, https_only=False)
        if ca is None or ca.state != FOUND or ca.bundle is None:
            continue
        where = f"{other.object.ref} {format_path(ca.field)}"
        if ca.holder is not other.object:
            where += f" ({ca.holder.ref})"
        if other.kind == KUBECONFIG:
            where += HUB_CA_BESIDE
        found += [KnownProxyCA(c, where) for c in ca.bundle.certificates]
    return found


def checked_proxy_cas(inventory: Inventory, consumers: list[ConsumerProxy], ca_files: list[Path]
                      ) -> tuple[list[KnownProxyCA], list[str]]:
    """``known_proxy_cas`` without the AddOnDeploymentConfig bundles that other sources of
    the same proxy contradict (OCM006 reports those): a caBundle holding another CA than the
    proxy's is no proof of the proxy's CA for anyone else. Only the sources that state the
    proxy's CA alone contradict it: a kubeconfig whose bundle lacks the add-on's CA is itself
    what OCM002 judges against that CA (each side of the disagreement is reported)."""
    known, unreadable = known_proxy_cas(inventory, consumers, ca_files)
    files = [k for k in known if k.source.startswith("proxy_ca_files")]
    wrong: list[str] = []
    for c in consumers:
        if c.kind != ADDON_CONFIG:
            continue
        ca = resolve_ca(inventory, c)
        if ca is None or ca.state != FOUND or ca.bundle is None or not ca.bundle.certificates:
            continue
        elsewhere = proxy_ca_elsewhere(inventory, consumers, c, files, kubeconfigs=False)
        have = {cert.sha256 for cert in ca.bundle.certificates}
        if elsewhere and not any(k.certificate.sha256 in have for k in elsewhere):
            wrong.append(f"{c.object.ref} ")
    return [k for k in known if not k.source.startswith(tuple(wrong))], unreadable


def _endpoints(consumer: ConsumerProxy) -> set[tuple[str, int]]:
    """(host, port) of every proxy URL the consumer names (a kubeconfig's proxy-url too)."""
    settings = [consumer.http_proxy, consumer.https_proxy, *proxy_urls(consumer, https_only=False)]
    return {t for s in settings if s is not None and s.value and (t := endpoint(s.value))}


def trusts(loaded: LoadedCA, proxy_ca: ProxyCA) -> bool:
    have = {c.sha256 for c in loaded.certificates}
    return any(k.certificate.sha256 in have for k in proxy_ca.certificates)


def missing_ca(proxy_ca: ProxyCA) -> list[dict[str, str]]:
    """The proxy's CA as structured data for a fix: fingerprint, subject, where it is known."""
    return [{"sha256": k.certificate.sha256, "subject": k.certificate.subject,
             "source": k.source} for k in proxy_ca.certificates]
