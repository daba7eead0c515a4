"""Effective proxy settings of every consumer in an inventory, with provenance.

``effective_proxies(inventory)`` is what rules and ``hcpscan proxy`` call. It
collects, besides containers (``workloads.py``):

* ``config.openshift.io`` Proxy ``cluster``: spec (with its trustedCA ConfigMap in
  openshift-config, key ``ca-bundle.crt``) and status, as two consumers;
* HostedCluster ``spec.configuration.proxy`` (+ trustedCA ConfigMap in the
  HostedCluster's namespace);
* ignition stubs (``ignition.proxy``), as files or inside user-data Secrets;
* systemd drop-ins, as files or as KubeadmConfig(Template) / KubeadmControlPlane(Template)
  ``files[]``
  (inline, base64, or ``contentFrom.secret``);
* Giant Swarm ``<cluster>-cluster-values`` Secrets/ConfigMaps (key ``values``);
* AddOnDeploymentConfig ``spec.proxyConfig`` and each ManagedClusterAddOn that gets one,
  by its own reference or its ClusterManagementAddOn's (``addons.py``, ``via``);
* Helm chart values (``charts.py``), KlusterletConfig and KlusterletAddonConfig
  (``klusterlet.py``), install-configs and MachineConfig files (``openshift.py``);
* kubeconfigs: ``clusters[].cluster.proxy-url`` and the CA bundle.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hcpscan.analysis.proxy.addons import addon_consumers
from hcpscan.analysis.proxy.charts import chart_values_proxies
from hcpscan.analysis.proxy.klusterlet import klusterlet_proxies
from hcpscan.analysis.proxy.olm import subscription_proxies
from hcpscan.analysis.proxy.openshift import install_config_proxies, machine_config_proxies
from hcpscan.analysis.proxy.pem import parse_bundle, parse_bytes_field
from hcpscan.analysis.proxy.settings import (
    ADDON_CONFIG,
    CLUSTER_PROXY,
    CLUSTER_VALUES,
    HOSTED_CLUSTER,
    IGNITION,
    INFRASTRUCTURE_CLUSTER,
    KUBEADM_FILE,
    KUBECONFIG,
    PROXY_FIELDS,
    SYSTEMD,
    ConsumerProxy,
    Setting,
    Source,
    read_block,
    setting_text,
    source_of,
)
from hcpscan.analysis.proxy.trust import trusted_ca_namespace
from hcpscan.analysis.proxy.units import (
    FileReader,
    NodeFile,
    composed_environment,
    matching,
    unit_consumer,
    units_of,
)
from hcpscan.analysis.proxy.workloads import container_proxies, effective_settings
from hcpscan.core.yamldocs import YamlSyntaxError, load_json, load_one
from hcpscan.inventory.fieldpath import Step, format_path
from hcpscan.inventory.objects import IGNITION_CONFIG, SYSTEMD_DROPIN, K8sObject
from hcpscan.inventory.objects import KUBECONFIG as KUBECONFIG_KIND
from hcpscan.inventory.placeholders import placeholders_in, render_command
from hcpscan.inventory.secrets import SecretValue, secret_values
from hcpscan.inventory.store import Inventory
from hcpscan.model.capi import BOOTSTRAP_FILES, INFRASTRUCTURE_PROXY, infrastructure_proxy
from hcpscan.model.dropins import unit_part
from hcpscan.model.hostedcluster import hosted_clusters
from hcpscan.model.readers import unit_program
from hcpscan.sources.systemd import (
    is_login_script,
    parse_environment_file,
    parse_shell_exports,
    parse_unit,
)

# Files read as NAME=value lines rather than systemd units: /etc/environment (pam_env, read by
# login shells and kubeadm's commands), Debian's /etc/default/* and Red Hat's /etc/sysconfig/*.
_ENVIRONMENT_FILES = ("/etc/environment", "/etc/default/", "/etc/sysconfig/")
INFRASTRUCTURE_KINDS = tuple(dict.fromkeys(kind for kind, _version in INFRASTRUCTURE_PROXY))


# The reader of /etc/profile(.d) and bash.bashrc exports: people's login shells, no service.
LOGIN_SHELL = "login shell"


def is_environment_file(path: str) -> bool:
    path = path.strip()
    return path == _ENVIRONMENT_FILES[0] or path.startswith(_ENVIRONMENT_FILES[1:])


# The node programs that dial a Cluster API cluster's control plane endpoint: kubeadm
# (init/join, run after the exports of preKubeadmCommands and /etc/environment; its preflight
# warns when the endpoint would go through a proxy, kubernetes/kubeadm#2145) and the kubelet.
CONTROL_PLANE_CLIENTS = frozenset({"kubeadm", "kubelet"})


def dials_control_plane(consumer: ConsumerProxy) -> bool:
    """Whether a node-side consumer's settings reach a client of the control plane endpoint
    (not containerd's drop-in: containerd only pulls images). CAPVCD exports a VCDCluster's
    proxy in the node script that runs kubeadm init/join (controllers/cluster_scripts/
    cloud_init.tmpl), besides writing containerd's drop-in from it."""
    if consumer.kind == INFRASTRUCTURE_CLUSTER:
        return True
    if consumer.kind not in (KUBEADM_FILE, SYSTEMD):
        return False
    if consumer.program in CONTROL_PLANE_CLIENTS:
        return True
    head, sep, path = consumer.name.rpartition(" file ")
    return bool(sep) and is_environment_file(path)


def effective_proxies(inventory: Inventory, runtime: str = "go",
                      include_unset: bool = False) -> list[ConsumerProxy]:
    """Every consumer's effective proxy settings; containers follow ``runtime``'s
    env precedence (Go unless told otherwise)."""
    out = container_proxies(inventory, runtime, include_unset)
    out += openshift_proxies(inventory)
    out += hosted_cluster_proxies(inventory)
    out += ignition_proxies(inventory)
    out += systemd_proxies(inventory, runtime)
    out += cluster_values_proxies(inventory)
    out += chart_values_proxies(inventory)
    out += addon_proxies(inventory)
    out += klusterlet_proxies(inventory)
    out += install_config_proxies(inventory)
    out += machine_config_proxies(inventory, runtime)
    out += kubeconfig_proxies(inventory)
    out += infrastructure_proxies(inventory)
    out += subscription_proxies(inventory, runtime)
    if inventory.has_unrendered or any("${" in c.object.name for c in out):
        for consumer in out:
            _unrendered_values(consumer)
    return out


def _unrendered_values(consumer: ConsumerProxy) -> None:
    """A proxy value that holds a clusterctl (envsubst) ``${VAR}`` placeholder of a template
    not rendered yet is unknown: the value is whatever the variable is set to when
    ``clusterctl generate cluster`` renders it (hcpscan.inventory.placeholders)."""
    replaced: dict[int, Setting] = {}
    for name, setting in list(consumer.variables.items()):
        found = placeholders_in(setting.value) if setting.value else []
        if found:
            path = consumer.object.source.path if consumer.object.source is not None else ""
            unknown = Setting(setting.name, None, setting.source, setting.via, unknown=(
                f"{setting.value!r} holds the unrendered template variable"
                f"{'s' if len(found) > 1 else ''} {', '.join(found)}: its value is set when "
                "the template is rendered"
                + (f" ({render_command(path)})" if path else " (clusterctl generate cluster)")))
            consumer.variables[name] = replaced[id(setting)] = unknown
    if replaced:
        for attribute in ("http_proxy", "https_proxy", "no_proxy"):
            current = getattr(consumer, attribute)
            if current is not None and id(current) in replaced:
                setattr(consumer, attribute, replaced[id(current)])


def infrastructure_proxies(inventory: Inventory) -> list[ConsumerProxy]:
    """The proxy a Cluster API infrastructure cluster writes into its nodes for containerd
    (CAPVCD's VCDCluster ``spec.proxyConfigSpec``, ``spec.proxyConfig`` in v1beta1)."""
    out = []
    for obj in inventory.of_kind(*INFRASTRUCTURE_KINDS):
        base = infrastructure_proxy(obj)
        if base is None or not isinstance(obj.get(base), dict):
            continue
        # CAPVCD writes it into containerd's drop-in and exports it for kubeadm (both Go)
        consumer = ConsumerProxy(INFRASTRUCTURE_CLUSTER, f"{obj.ref} {format_path(base)}", obj,
                                 program="containerd")
        read_block(inventory, obj, base, consumer)
        if consumer.http_proxy or consumer.https_proxy or consumer.no_proxy:
            out.append(consumer)
    return out


def _trusted_ca(inventory: Inventory, consumer: ConsumerProxy, obj: K8sObject,
                field: tuple[Step, ...], namespace: str) -> None:
    name = obj.get(field)
    if not name:
        return
    ref = source_of(inventory, obj, field)
    cm = inventory.get("ConfigMap", namespace, str(name), obj.cluster)
    if cm is None:
        consumer.trusted_ca = Setting("trustedCA", None, ref,
                                      unknown=f"ConfigMap {namespace}/{name} is not in the inventory")
        return
    data = (cm.body.get("data") or {}).get("ca-bundle.crt")
    if data is None:
        consumer.trusted_ca = Setting("trustedCA", None, ref,
                                      unknown=f"ConfigMap {namespace}/{name} has no ca-bundle.crt")
        return
    consumer.trusted_ca = Setting("trustedCA", str(data),
                                  source_of(inventory, cm, ("data", "ca-bundle.crt")), (ref,))
    consumer.ca_bundle = parse_bundle(str(data))


def openshift_proxies(inventory: Inventory) -> list[ConsumerProxy]:
    out = []
    for obj in inventory.of_kind("Proxy"):
        if obj.group != "config.openshift.io":
            continue
        spec = ConsumerProxy(CLUSTER_PROXY, f"{obj.ref} (spec)", obj, part="spec")
        read_block(inventory, obj, ("spec",), spec)
        name = obj.get(("spec", "trustedCA", "name"))
        _trusted_ca(inventory, spec, obj, ("spec", "trustedCA", "name"),
                    trusted_ca_namespace(CLUSTER_PROXY, str(name or ""), obj) or "")
        out.append(spec)
        if isinstance(obj.get("status"), dict):
            status = ConsumerProxy(CLUSTER_PROXY, f"{obj.ref} (status)", obj, part="status")
            read_block(inventory, obj, ("status",), status)
            status.notes.append("status: what the cluster computed (noProxy includes the "
                                "cluster's own networks)")
            out.append(status)
    return out


def hosted_cluster_proxies(inventory: Inventory) -> list[ConsumerProxy]:
    out = []
    for obj in (hc.obj for hc in hosted_clusters(inventory)):  # stand-in HostedControlPlanes too
        base: tuple[Step, ...] = ("spec", "configuration", "proxy")
        if not isinstance(obj.get(base), dict):
            continue
        consumer = ConsumerProxy(HOSTED_CLUSTER, obj.ref, obj)
        read_block(inventory, obj, base, consumer)
        _trusted_ca(inventory, consumer, obj, base + ("trustedCA", "name"), obj.namespace)
        out.append(consumer)
    return out


@dataclass(frozen=True, slots=True)
class IgnitionStub:
    """What a HyperShift ignition stub says: ``ignition.proxy`` and the configs it merges."""

    proxy: dict[str, str] | None  # httpProxy/httpsProxy/noProxy as written; None: no proxy block
    merge_sources: tuple[str, ...]  # ignition.config.merge[].source


def ignition_stub(body: Any) -> IgnitionStub | None:
    """``body`` read as an ignition stub; None when it has no ``ignition`` object."""
    ignition = body.get("ignition") if isinstance(body, dict) else None
    if not isinstance(ignition, dict):
        return None
    block = ignition.get("proxy")
    proxy = ({key: setting_text(block[key]) for key, _attr in PROXY_FIELDS
              if block.get(key) is not None} if isinstance(block, dict) else None)
    config = ignition.get("config")
    merge = config.get("merge") if isinstance(config, dict) else None
    return IgnitionStub(proxy, tuple(m["source"] for m in merge if isinstance(m, dict)
                                     and isinstance(m.get("source"), str))
                        if isinstance(merge, list) else ())


def ignition_stub_text(text: str) -> IgnitionStub | None:
    """A Secret's user-data value (JSON) read as an ignition stub; None when it is not one."""
    try:
        return ignition_stub(load_json(text))
    except ValueError:
        return None


def _ignition_consumer(inventory: Inventory, obj: K8sObject, stub: IgnitionStub | None, name: str,
                       where: Source | None) -> ConsumerProxy | None:
    if stub is None or stub.proxy is None:
        return None
    consumer = ConsumerProxy(IGNITION, name, obj)
    for key, attr in PROXY_FIELDS:
        if key not in stub.proxy:
            continue
        source = where or source_of(inventory, obj, ("ignition", "proxy", key))
        setting = Setting(key, stub.proxy[key], source)
        consumer.variables[key] = setting
        setattr(consumer, attr, setting)
    return consumer


def ignition_proxies(inventory: Inventory) -> list[ConsumerProxy]:
    out = []
    for obj in inventory.of_kind(IGNITION_CONFIG):
        consumer = _ignition_consumer(inventory, obj, ignition_stub(obj.body), f"ignition {obj.name}",
                                      None)
        if consumer is not None:
            out.append(consumer)
    for secret in inventory.of_kind("Secret"):
        for key, value in secret_values(secret).items():
            text = value.text
            if text is None or '"ignition"' not in text:
                continue
            field = "data" if key in (secret.body.get("data") or {}) else "stringData"
            consumer = _ignition_consumer(inventory, secret, ignition_stub_text(text),
                                          f"{secret.ref} key {key}",
                                          source_of(inventory, secret, (field, key)))
            if consumer is not None:
                consumer.notes.append(f"ignition stub in {field}.{key}")
                out.append(consumer)
    return out


def systemd_proxies(inventory: Inventory, runtime: str = "go") -> list[ConsumerProxy]:
    """Drop-ins for containerd, kubelet, crio ... (Go programs: Go precedence by default)."""
    out = []
    out += _node_dropins(inventory, runtime)
    for obj in inventory.of_kind(*BOOTSTRAP_FILES):
        base = BOOTSTRAP_FILES[obj.kind]
        files = obj.get(base)
        items = files if isinstance(files, list) else []
        composed, done = _kubeadm_units(inventory, obj, base, items, runtime)
        out += composed
        for i, item in enumerate(items):
            if isinstance(item, dict) and i not in done:
                consumer = _kubeadm_file(inventory, obj, base + (i,), item, runtime)
                if consumer is not None:
                    out.append(consumer)
        commands = _kubeadm_commands(inventory, obj, base[:-1] + ("preKubeadmCommands",), runtime)
        if commands is not None:
            out.append(commands)
    return out


def dropin_environment(obj: K8sObject) -> dict[str, str]:
    """A SystemdDropIn's variables as its reader recorded them (one written by hand as YAML
    may hold anything: only names with scalar values are read)."""
    env = obj.body.get("environment")
    return {k: str(v) for k, v in env.items() if isinstance(k, str)
            and isinstance(v, (str, int, float, bool))} if isinstance(env, dict) else {}


def _node_dropins(inventory: Inventory, runtime: str) -> list[ConsumerProxy]:
    """Drop-in files of a node's file system: one consumer per drop-in, or per unit when a
    node has several drop-ins of it (systemd reads them together, model/dropins.py), judged
    at the one systemd reads last."""
    out = []
    by_node: dict[tuple[str, str], dict[str, K8sObject]] = {}
    for obj in inventory.of_kind(SYSTEMD_DROPIN):
        path = str(obj.body.get("path", obj.name))
        part = unit_part(path)
        by_node.setdefault((obj.cluster, part.node if part else path), {})[path] = obj
    for files in by_node.values():
        units = units_of(files)
        grouped = {path for parts in units.values() for path in parts}
        for path, obj in files.items():
            if path in grouped:
                continue
            found = {k: (v, source_of(inventory, obj, ("environment", k)))
                     for k, v in dropin_environment(obj).items()}
            consumer = unit_consumer(inventory, obj, f"systemd drop-in {path}", SYSTEMD, found,
                                     runtime, path)
            if consumer is not None:
                out.append(consumer)
        for unit, parts in units.items():
            found = {}
            for path in parts:
                obj = files[path]
                if obj.body.get("environmentReset"):
                    found.clear()
                found.update({k: (v, source_of(inventory, obj, ("environment", k)))
                              for k, v in dropin_environment(obj).items()})
            consumer = unit_consumer(inventory, files[parts[-1]],
                                     f"systemd unit {unit} ({', '.join(parts)})", SYSTEMD, found,
                                     runtime, parts[-1])
            if consumer is not None:
                out.append(consumer)
    return out


def _kubeadm_units(inventory: Inventory, obj: K8sObject, base: tuple[Step, ...],
                   items: list[Any], runtime: str) -> tuple[list[ConsumerProxy], set[int]]:
    """The units a bootstrap config writes two or more files of (drop-ins of one unit, its
    unit file), each one consumer of the environment systemd composes from them; and the
    files[] indexes they took. A unit one of whose files cannot be read is left to the
    files one by one (each says why)."""
    written = {str(item.get("path", "")).strip(): i for i, item in enumerate(items)
               if isinstance(item, dict)}
    out: list[ConsumerProxy] = []
    done: set[int] = set()
    read = written_files(inventory, obj, base, items)
    for parts in units_of(written).values():
        texts: list[tuple[str, str, Source]] = []
        for path in parts:
            found = bootstrap_file_text(inventory, obj, base + (written[path],), items[written[path]])
            if found.text is not None and found.source is not None:
                texts.append((path, found.text, found.source))
        if len(texts) < len(parts):
            continue
        env, ignored = composed_environment(texts, read)
        name = f"{obj.ref} files {', '.join(parts)}"
        consumer = unit_consumer(inventory, obj, name, KUBEADM_FILE, env, runtime, parts[-1])
        if ignored:
            consumer = consumer or ConsumerProxy(KUBEADM_FILE, name, obj, runtime=runtime,
                                                 program=unit_program(parts[-1]))
            consumer.syntax = ignored
        if consumer is not None:
            out.append(consumer)
        done |= {written[path] for path in parts}
    return out, done


_EXPORT = re.compile(r"^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)


def _kubeadm_commands(inventory: Inventory, obj: K8sObject, path: tuple[Step, ...],
                      runtime: str) -> ConsumerProxy | None:
    """``export HTTP_PROXY=...`` lines of ``preKubeadmCommands``: cloud-init runs the commands
    as one script, so the variables reach the ``kubeadm init/join`` that follows."""
    commands = obj.get(path)
    env: dict[str, tuple[str, Source]] = {}
    for i, command in enumerate(commands if isinstance(commands, list) else []):
        m = _EXPORT.match(command) if isinstance(command, str) else None
        if m is None:
            continue
        try:
            words = shlex.split(m.group(2), posix=True) if m.group(2).strip() else [""]
        except ValueError:
            continue
        env[m.group(1)] = (" ".join(words), source_of(inventory, obj, path + (i,)))
    consumer = unit_consumer(inventory, obj, f"{obj.ref} preKubeadmCommands", KUBEADM_FILE, env,
                             runtime)
    if consumer is not None:
        consumer.program = "kubeadm"
    return consumer


def decode_file_content(item: dict[str, Any]) -> str | None:
    content = item.get("content")
    if not isinstance(content, str):
        return None
    encoding = str(item.get("encoding") or "")
    try:
        if encoding in ("base64", "b64"):
            return base64.b64decode(content).decode("utf-8")
        if encoding in ("gzip+base64", "gz+b64", "gzip+b64"):
            return gzip.decompress(base64.b64decode(content)).decode("utf-8")
        if encoding in ("gzip", "gz"):
            return None
    except (binascii.Error, ValueError, OSError, UnicodeDecodeError):
        return None
    return content


@dataclass(frozen=True, slots=True)
class FileText:
    """The text a Cluster API bootstrap config writes to one file of ``files[]``, and where
    it is: inline ``content`` (plain, base64 or gzip+base64) or ``contentFrom.secret``."""

    text: str | None  # None: no content, undecodable, or its Secret/key is missing or unreadable
    source: Source | None  # the text's field: the inline content or the Secret's key
    via: tuple[Source, ...] = ()  # the contentFrom.secret reference, when the text is a Secret's
    secret_name: str | None = None  # contentFrom.secret name (None: the content is inline)
    secret_key: str = ""
    secret: K8sObject | None = None  # the Secret it names, when in the inventory
    value: SecretValue | None = None  # that Secret's key, when it has it


def written_files(inventory: Inventory, obj: K8sObject, base: tuple[Step, ...],
                  items: list[Any]) -> FileReader:
    """The files ``obj``'s ``files[]`` (at ``base``) writes, by their path on the node: what a
    unit's ``EnvironmentFile=`` reads when the same bootstrap config writes it."""
    written = {str(item.get("path", "")).strip(): i for i, item in enumerate(items)
               if isinstance(item, dict)}

    def read(pattern: str) -> list[tuple[str, NodeFile]]:
        return [(path, _written_file(path, written[path])) for path in matching(written, pattern)]

    def _written_file(path: str, index: int) -> NodeFile:
        found = bootstrap_file_text(inventory, obj, base + (index,), items[index])
        if found.text is not None:
            return NodeFile(found.text, found.source)
        if found.value is not None and found.value.redacted:
            why = f"whose Secret {obj.namespace}/{found.secret_name} is redacted in the dump"
        elif found.secret_name is not None:
            why = (f"whose Secret {obj.namespace}/{found.secret_name} key {found.secret_key!r} "
                   "is not in the input")
        else:
            why = f"whose content {format_path(base + (index,))} cannot be decoded"
        return NodeFile(None, None, why)
    return read


def bootstrap_file_text(inventory: Inventory, obj: K8sObject, path: tuple[Step, ...],
                        item: dict[str, Any]) -> FileText:
    """The file ``item`` at ``path`` of ``obj``'s ``files[]``: its text and provenance."""
    ref = (item.get("contentFrom") or {}).get("secret") if isinstance(
        item.get("contentFrom"), dict) else None
    if not isinstance(ref, dict):
        return FileText(decode_file_content(item), source_of(inventory, obj, path + ("content",)))
    via = (source_of(inventory, obj, path + ("contentFrom", "secret")),)
    name, key = str(ref.get("name") or ""), str(ref.get("key") or "")
    secret = inventory.get("Secret", obj.namespace, name, obj.cluster) if name else None
    value = secret_values(secret).get(key) if secret is not None else None
    if secret is None or value is None or value.text is None:
        return FileText(None, None, via, name, key, secret, value)
    field = "data" if key in (secret.body.get("data") or {}) else "stringData"
    return FileText(value.text, source_of(inventory, secret, (field, key)), via, name, key, secret,
                    value)


def _kubeadm_file(inventory: Inventory, obj: K8sObject, path: tuple[Step, ...],
                  item: dict[str, Any], runtime: str) -> ConsumerProxy | None:
    file_path = str(item.get("path", ""))
    name = f"{obj.ref} file {file_path}"
    content = bootstrap_file_text(inventory, obj, path, item)
    text, origin, via = content.text, content.source, content.via
    if content.secret_name is not None and (text is None or origin is None):
        if ".service.d/" not in file_path and "proxy" not in file_path:
            return None
        value = content.value
        why = ("redacted in the dump" if value is not None and value.redacted else
               f"Secret {obj.namespace}/{content.secret_name} key {content.secret_key!r} is not "
               "in the inventory")
        unread = ConsumerProxy(KUBEADM_FILE, name, obj, program=unit_program(file_path))
        for var in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"):
            unread.variables[var] = Setting(var, None, via[0], unknown=why)
        unread.http_proxy, unread.https_proxy, unread.no_proxy = (
            unread.variables["HTTP_PROXY"], unread.variables["HTTPS_PROXY"],
            unread.variables["NO_PROXY"])
        return unread
    if text is None or origin is None:
        return None
    reads_files = False
    if is_environment_file(file_path):
        variables, problems = parse_environment_file(text)
        label = "line"
    elif is_login_script(file_path):
        variables, problems = parse_shell_exports(text)
        label = "line"
    else:
        unit = parse_unit(text)
        variables, problems, label = unit.environment, unit.problems, "unit line"
        reads_files = bool(unit.environment_files)
    env = {}
    for var, (val, line) in variables.items():
        # the line inside the embedded file, on top of where the file's text is
        env[var] = (val, Source.within(origin, f"({label} {line})"))
    if reads_files:
        # EnvironmentFile= values win over Environment= (systemd.exec(5)): the files the
        # same config writes are read as systemd reads them
        files = obj.get(path[:-1])
        env = composed_environment([(file_path, text, origin)], written_files(
            inventory, obj, path[:-1], files if isinstance(files, list) else []))[0]
    consumer = unit_consumer(inventory, obj, name, KUBEADM_FILE, env, runtime, file_path)
    if consumer is not None and is_login_script(file_path):
        consumer.program = LOGIN_SHELL
        consumer.notes.append("exported to login shells only: systemd services (containerd, "
                              "the kubelet) never read it")
    proxy_problems = [(line, why) for line, why in problems if "PROXY" in why.upper()]
    if proxy_problems:
        consumer = consumer or ConsumerProxy(KUBEADM_FILE, name, obj, runtime=runtime,
                                             program=unit_program(file_path))
        consumer.syntax = [(Source.within(origin, f"({label} {line})"), why)
                           for line, why in proxy_problems]
    if consumer is not None and via:
        for key, setting in consumer.variables.items():
            consumer.variables[key] = Setting(setting.name, setting.value, setting.source, via)
        consumer.http_proxy, consumer.https_proxy, consumer.no_proxy = effective_settings(
            consumer.variables, runtime)
    return consumer


def _values_documents(inventory: Inventory) -> Iterator[tuple[K8sObject, str, str]]:
    for obj in inventory.of_kind("Secret", "ConfigMap"):
        if not obj.name.endswith("-cluster-values"):
            continue
        if obj.kind == "ConfigMap":
            text = (obj.body.get("data") or {}).get("values")
            if isinstance(text, str):
                yield obj, "data", text
            continue
        value = secret_values(obj).get("values")
        if value is not None and value.text is not None:
            field = "data" if "values" in (obj.body.get("data") or {}) else "stringData"
            yield obj, field, value.text


def cluster_values_proxies(inventory: Inventory) -> list[ConsumerProxy]:
    """Giant Swarm cluster-apps-operator values: ``cluster.proxy`` or ``proxy`` with
    ``noProxy`` and ``http``/``https`` (or ``httpProxy``/``httpsProxy``)."""
    out = []
    for obj, field, text in _values_documents(inventory):
        try:
            values = load_one(text)
        except YamlSyntaxError:
            continue
        if not isinstance(values, dict):
            continue
        cluster = values.get("cluster")
        proxy = cluster.get("proxy") if isinstance(cluster, dict) else None
        proxy = proxy if isinstance(proxy, dict) else values.get("proxy")
        if not isinstance(proxy, dict):
            continue
        where = source_of(inventory, obj, (field, "values"))
        consumer = ConsumerProxy(CLUSTER_VALUES, f"{obj.ref} key values", obj)
        for keys, attr in ((("http", "httpProxy"), "http_proxy"),
                           (("https", "httpsProxy"), "https_proxy"), (("noProxy",), "no_proxy")):
            for key in keys:
                if proxy.get(key) is not None:
                    setting = Setting(key, str(proxy[key]), where)
                    consumer.variables[key] = setting
                    setattr(consumer, attr, setting)
                    break
        out.append(consumer)
    _merge_siblings(out)
    return out


def _merge_siblings(found: list[ConsumerProxy]) -> None:
    """The Secret and the ConfigMap ``<cluster>-cluster-values`` of one cluster are read
    together (an App names both; seed 003 keeps http/https in the Secret and noProxy in the
    ConfigMap): each answers with the other's settings where it has none."""
    by_name: dict[tuple[str, str, str], list[ConsumerProxy]] = {}
    for c in found:
        by_name.setdefault((c.object.cluster, c.object.namespace, c.object.name), []).append(c)
    for pair in by_name.values():
        if len(pair) < 2:
            continue
        for c in pair:
            for other in pair:
                if other is c:
                    continue
                for attr in ("http_proxy", "https_proxy", "no_proxy"):
                    theirs = getattr(other, attr)
                    if getattr(c, attr) is None and theirs is not None:
                        setattr(c, attr, theirs)
                        c.variables.setdefault(theirs.name, theirs)
                        c.notes.append(f"{theirs.name} from {other.object.ref} (read together "
                                       "with it)")


def addon_proxies(inventory: Inventory) -> list[ConsumerProxy]:
    out = []
    configs: dict[tuple[str, str, str], ConsumerProxy] = {}
    for obj in inventory.of_kind("AddOnDeploymentConfig"):
        base: tuple[Step, ...] = ("spec", "proxyConfig")
        if not isinstance(obj.get(base), dict):
            continue
        consumer = ConsumerProxy(ADDON_CONFIG, obj.ref, obj)
        read_block(inventory, obj, base, consumer)
        ca = obj.get(base + ("caBundle",))
        if ca:
            consumer.trusted_ca = Setting("caBundle", str(ca),
                                          source_of(inventory, obj, base + ("caBundle",)))
            consumer.ca_bundle = parse_bytes_field(str(ca))
        configs[(obj.cluster, obj.namespace, obj.name)] = consumer
        out.append(consumer)
    return out + addon_consumers(inventory, configs)


def kubeconfig_proxies(inventory: Inventory) -> list[ConsumerProxy]:
    out = []
    for obj in inventory.of_kind(KUBECONFIG_KIND):
        for i, entry in enumerate(obj.body.get("clusters") or []):
            cluster = entry.get("cluster") if isinstance(entry, dict) else None
            if not isinstance(cluster, dict):
                continue
            name = f"{obj.ref} cluster {entry.get('name', i)}"
            consumer = ConsumerProxy(KUBECONFIG, name, obj)
            base: tuple[Step, ...] = ("clusters", i, "cluster")
            server = cluster.get("server")
            if server:
                consumer.variables["server"] = Setting("server", str(server),
                                                       source_of(inventory, obj, base + ("server",)))
            proxy_url = cluster.get("proxy-url")
            if proxy_url:
                setting = Setting("proxy-url", str(proxy_url),
                                  source_of(inventory, obj, base + ("proxy-url",)))
                consumer.variables["proxy-url"] = setting
                consumer.http_proxy = consumer.https_proxy = setting
            ca = cluster.get("certificate-authority-data")
            if ca:
                consumer.trusted_ca = Setting("certificate-authority-data", str(ca), source_of(
                    inventory, obj, base + ("certificate-authority-data",)))
                consumer.ca_bundle = parse_bytes_field(str(ca))
            if proxy_url or ca:
                out.append(consumer)
    return out
