"""A proxy consumer made of the environment a systemd unit, drop-in or node file sets
(containerd, kubelet, CRI-O ...): what ``effective`` and ``openshift`` both build."""

from __future__ import annotations

from hcpscan.analysis.proxy.containers import PROXY_VARIABLE
from hcpscan.analysis.proxy.settings import ConsumerProxy, Setting, Source
from hcpscan.analysis.proxy.workloads import effective_settings
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.store import Inventory
from hcpscan.model.readers import unit_program


def unit_consumer(inventory: Inventory, obj: K8sObject, name: str, kind: str,
                   environment: dict[str, tuple[str, Source]], runtime: str,
                   unit_path: str = "") -> ConsumerProxy | None:
    variables = {k: Setting(k, v, src) for k, (v, src) in environment.items()
                 if PROXY_VARIABLE.match(k)}
    if not variables:
        return None
    http, https, no = effective_settings(variables, runtime)
    return ConsumerProxy(kind, name, obj, http_proxy=http, https_proxy=https, no_proxy=no,
                         variables=variables, runtime=runtime, program=unit_program(unit_path))
