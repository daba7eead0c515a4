"""Proxy settings an OpenShift cluster is installed or configured with, besides its
``Proxy`` object (``effective.py``):

* the installer's ``install-config`` ``proxy`` block (``httpProxy``, ``httpsProxy``,
  ``noProxy``) and ``additionalTrustBundle`` (the PEM the cluster trusts, which must
  hold an ``https://`` proxy's CA): kind ``InstallConfig``, from a file or from the
  ConfigMap or Secret the inventory found it in (``store.py``). It becomes the
  ``Proxy cluster`` spec, whose noProxy OpenShift completes with the cluster's own
  networks (DOMAIN.md §4);
* MachineConfig files (``spec.config.storage.files``, Ignition ``data:`` URLs) that are
  systemd drop-ins (``*.service.d/*.conf``) or environment files (``*.env``, such as
  the MCO's ``/etc/mco/proxy.env``), and ``spec.config.systemd.units[]`` contents and
  drop-ins with ``Environment=`` proxy variables: read by CRI-O, the kubelet and the
  other node services (Go programs).
"""

from __future__ import annotations

import base64
import binascii
import gzip
import zlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote_to_bytes

from hcpscan.analysis.proxy.pem import parse_bundle
from hcpscan.analysis.proxy.settings import (
    INSTALL_CONFIG,
    MACHINE_CONFIG_FILE,
    ConsumerProxy,
    Setting,
    Source,
    read_block,
    source_of,
)
from hcpscan.analysis.proxy.units import (
    FileReader,
    NodeFile,
    composed_environment,
    matching,
    unit_consumer,
    units_of,
)
from hcpscan.inventory.fieldpath import Step
from hcpscan.inventory.objects import INSTALL_CONFIG_KIND, K8sObject, anonymized
from hcpscan.inventory.store import Inventory
from hcpscan.sources.systemd import parse_environment_file, parse_unit

MCO_GROUP = "machineconfiguration.openshift.io"
# The MCO's proxy file: the EnvironmentFile of CRI-O, the kubelet and the MCO's own pulls.
MCO_PROXY_ENV = "/etc/mco/proxy.env"
OPENSHIFT_COMPLETES = ("OpenShift's network operator, which adds the cluster's networks, "
                       "localhost, .svc, .cluster.local and the API's internal name to the "
                       "Proxy status")


def install_config_proxies(inventory: Inventory) -> list[ConsumerProxy]:
    """Every install-config: files, and those the inventory found in ConfigMaps and Secrets."""
    out = []
    for obj in inventory.of_kind(INSTALL_CONFIG_KIND):
        proxy = obj.body.get("proxy")
        if not isinstance(proxy, dict):
            continue
        name = f"install-config in {obj.origin.ref}" if obj.origin is not None \
            else f"install-config {obj.name}"
        consumer = ConsumerProxy(INSTALL_CONFIG, name, obj, program="openshift-install",
                                 runtime="go", completed_by=OPENSHIFT_COMPLETES)
        read_block(inventory, obj, ("proxy",), consumer)
        bundle = obj.body.get("additionalTrustBundle")
        if isinstance(bundle, str) and anonymized(bundle):
            # an Insights archive keeps the install-config with its certificates anonymized
            consumer.trusted_ca = Setting("additionalTrustBundle", None,
                                          source_of(inventory, obj, ("additionalTrustBundle",)),
                                          unknown="its certificates are anonymized in this "
                                                  "Insights archive")
        elif isinstance(bundle, str) and bundle.strip():
            consumer.trusted_ca = Setting("additionalTrustBundle", bundle,
                                          source_of(inventory, obj, ("additionalTrustBundle",)))
            consumer.ca_bundle = parse_bundle(bundle)
        out.append(consumer)
    return out


# -- MachineConfig --------------------------------------------------------------------------

def machine_config_proxies(inventory: Inventory, runtime: str = "go") -> list[ConsumerProxy]:
    out = []
    for obj in inventory.of_kind("MachineConfig"):
        if obj.group != MCO_GROUP:
            continue
        files = list(_node_files(obj))
        units = units_of(path for _steps, path, _text in files)
        grouped = {path for parts in units.values() for path in parts}
        by_path = {path: (steps, text) for steps, path, text in files}
        for parts in units.values():
            # one unit's files together, as systemd composes them (model/dropins.py)
            env, _ignored = composed_environment(
                ((path, by_path[path][1], source_of(inventory, obj, by_path[path][0]))
                 for path in parts), _written(inventory, obj, by_path))
            consumer = unit_consumer(inventory, obj, f"{obj.ref} files {', '.join(parts)}",
                                     MACHINE_CONFIG_FILE, env, runtime, parts[-1])
            if consumer is not None:
                out.append(consumer)
        for steps, path, text in files:
            if path in grouped:
                continue
            origin = source_of(inventory, obj, steps)
            env = {var: (val, Source.within(origin, f"(line {line} of {path})"))
                   for var, (val, line) in _environment(path, text).items()}
            consumer = unit_consumer(inventory, obj, f"{obj.ref} file {path}", MACHINE_CONFIG_FILE,
                                     env, runtime, path)
            if consumer is not None:
                if path == MCO_PROXY_ENV:
                    consumer.program = "crio"
                    consumer.notes.append("read by CRI-O, the kubelet and the MCO (Go programs)")
                out.append(consumer)
    return out


def _written(inventory: Inventory, obj: K8sObject,
             by_path: dict[str, tuple[tuple[Step, ...], str]]) -> FileReader:
    """The files a MachineConfig writes, by path: what its units' EnvironmentFile= read."""
    def read(pattern: str) -> list[tuple[str, NodeFile]]:
        return [(path, NodeFile(by_path[path][1], source_of(inventory, obj, by_path[path][0])))
                for path in matching(by_path, pattern)]
    return read


def _node_files(obj: K8sObject) -> Iterator[tuple[tuple[Step, ...], str, str]]:
    """(field, path on the node, text) of every file and unit a MachineConfig writes."""
    base: tuple[Step, ...] = ("spec", "config")
    files = obj.get(base + ("storage", "files"))
    for i, item in enumerate(files if isinstance(files, list) else []):
        if not isinstance(item, dict) or not isinstance(item.get("contents"), dict):
            continue
        text = decode_data_url(item["contents"].get("source"), item["contents"].get("compression"))
        if text is not None:
            yield base + ("storage", "files", i, "contents", "source"), str(item.get("path")), text
    units = obj.get(base + ("systemd", "units"))
    for i, unit in enumerate(units if isinstance(units, list) else []):
        if not isinstance(unit, dict):
            continue
        name = str(unit.get("name", ""))
        if isinstance(unit.get("contents"), str):
            yield (base + ("systemd", "units", i, "contents"), f"/etc/systemd/system/{name}",
                   unit["contents"])
        dropins = unit.get("dropins")
        for j, dropin in enumerate(dropins if isinstance(dropins, list) else []):
            if isinstance(dropin, dict) and isinstance(dropin.get("contents"), str):
                yield (base + ("systemd", "units", i, "dropins", j, "contents"),
                       f"/etc/systemd/system/{name}.d/{dropin.get('name', '')}", dropin["contents"])


def decode_data_url(source: Any, compression: Any = None) -> str | None:
    """The text of an Ignition ``data:`` URL (RFC 2397: percent-encoded, or ``;base64``),
    gunzipped when ``compression: gzip``; None for anything else (remote sources)."""
    if not isinstance(source, str) or not source.startswith("data:") or "," not in source:
        return None
    meta, _, payload = source[5:].partition(",")
    try:
        data = (base64.b64decode(payload) if meta.endswith(";base64")
                else unquote_to_bytes(payload))
        if compression == "gzip":
            data = gzip.decompress(data)
        return data.decode("utf-8")
    except (binascii.Error, ValueError, OSError, EOFError, zlib.error, UnicodeDecodeError):
        return None  # a truncated gzip stream raises EOFError, a corrupt one zlib.error


def _environment(path: str, text: str) -> dict[str, tuple[str, int]]:
    """Variables a unit file or drop-in (``Environment=``) or an environment file
    (``NAME=value`` lines, as systemd's EnvironmentFile= reads them) sets."""
    if path.endswith((".conf", ".service")):
        return parse_unit(text).environment
    if not path.endswith(".env"):
        return {}
    return parse_environment_file(text)[0]
