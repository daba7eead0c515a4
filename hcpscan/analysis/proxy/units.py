"""A proxy consumer made of the environment a systemd unit, drop-in or node file sets
(containerd, kubelet, CRI-O ...): what ``effective`` and ``openshift`` both build."""

from __future__ import annotations

from collections.abc import Iterable

from hcpscan.analysis.proxy.containers import PROXY_VARIABLE
from hcpscan.analysis.proxy.settings import ConsumerProxy, Setting, Source
from hcpscan.analysis.proxy.workloads import effective_settings
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.store import Inventory
from hcpscan.model.dropins import applied_parts, unit_of_dropin
from hcpscan.model.readers import unit_program
from hcpscan.sources.systemd import parse_unit


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


def units_of(paths: Iterable[str]) -> dict[str, list[str]]:
    """The units that two or more of ``paths`` (one node's files) make up, each with its
    files in the order systemd applies them (model/dropins.py)."""
    paths = list(paths)
    units = {unit_of_dropin(p) for p in paths} - {""}
    found = {unit: [part.path for part in applied_parts(paths, unit)] for unit in sorted(units)}
    return {unit: parts for unit, parts in found.items() if len(parts) > 1}


def composed_environment(parts: Iterable[tuple[str, str, Source]]
                         ) -> tuple[dict[str, tuple[str, Source]], list[tuple[Source, str]]]:
    """One unit's environment from its files in systemd's order ((path, text, origin) each):
    a later assignment wins, an empty ``Environment=`` drops what came before; and the lines
    about proxy variables systemd ignores, with where they are."""
    environment: dict[str, tuple[str, Source]] = {}
    ignored: list[tuple[Source, str]] = []
    for path, text, origin in parts:
        unit = parse_unit(text)
        if unit.resets:
            environment.clear()
        for name, (value, line) in unit.environment.items():
            environment[name] = (value, Source.within(origin, f"(line {line} of {path})"))
        ignored += [(Source.within(origin, f"(line {line} of {path})"), why)
                    for line, why in unit.problems if "PROXY" in why.upper()]
    return environment, ignored
