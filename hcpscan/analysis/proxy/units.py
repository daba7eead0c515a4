"""A proxy consumer made of the environment a systemd unit, drop-in or node file sets
(containerd, kubelet, CRI-O ...): what ``effective`` and ``openshift`` both build."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from hcpscan.analysis.proxy.containers import PROXY_VARIABLE
from hcpscan.analysis.proxy.settings import ConsumerProxy, Setting, Source
from hcpscan.analysis.proxy.workloads import effective_settings
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.store import Inventory
from hcpscan.model.dropins import applied_parts, unit_of_dropin
from hcpscan.model.readers import unit_program
from hcpscan.sources.systemd import dropin_unit, parse_environment_file, parse_unit


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


@dataclass(frozen=True, slots=True)
class NodeFile:
    """A file an environment file path resolves to on the node: its text and where that
    text is (None: the input writes it, but its text cannot be read, ``why``)."""

    text: str | None
    source: Source | None
    why: str = ""


# A node's other files an EnvironmentFile= path or wildcard names: (path, file) of each the
# input writes, in the order systemd reads them (none: the input writes no such file).
FileReader = Callable[[str], "list[tuple[str, NodeFile]]"]


def matching(paths: Iterable[str], pattern: str) -> list[str]:
    """The ``paths`` an ``EnvironmentFile=`` value names: itself, or the files its wildcards
    match (systemd.exec(5) takes "an absolute filename or wildcard expression"; a wildcard
    matches within one path component, as glob(3) does), sorted."""
    if not any(c in pattern for c in "*?["):
        return [pattern] if pattern in paths else []
    parts = pattern.split("/")
    return sorted(p for p in paths if len(p.split("/")) == len(parts) and all(
        fnmatch.fnmatchcase(a, b) for a, b in zip(p.split("/"), parts, strict=True)))


@dataclass(slots=True)
class UnitEnvironment:
    """One unit's environment as systemd passes it to the service (systemd.exec(5)):
    ``Environment=`` assignments in file order, then the ``EnvironmentFile=`` files in the
    order named, whose values win whatever the order of the lines."""

    environment: dict[str, tuple[str, Source]] = field(default_factory=dict)
    # proxy lines systemd ignores: (file, line, why, where the file's text is)
    ignored: list[tuple[str, int, str, Source]] = field(default_factory=list)
    # environment files read: (path, where its text is)
    files: list[tuple[str, Source]] = field(default_factory=list)
    # environment files named but not read: (path, why, where the EnvironmentFile= line is)
    unread: list[tuple[str, str, Source]] = field(default_factory=list)
    # variable -> why its value is known on the node only (a host-dependent specifier)
    unknown: dict[str, str] = field(default_factory=dict)

    def unread_text(self) -> str:
        """Why the environment may be more than what was read (for a finding's reason)."""
        return "; ".join(f"reads EnvironmentFile={path}, {why}" for path, why, _ in self.unread)


def unit_environment(parts: Iterable[tuple[str, str, Source]],
                     read: FileReader | None = None) -> UnitEnvironment:
    """One unit's environment from its files in systemd's order ((path, text, origin) each):
    a later assignment wins, an empty ``Environment=`` drops what came before, an empty
    ``EnvironmentFile=`` the files named before; then the environment files, read with
    ``read`` (the other files the same node config writes)."""
    found = UnitEnvironment()
    named: list[tuple[str, bool, Source]] = []
    for path, text, origin in parts:
        unit = parse_unit(text, dropin_unit(path))
        if unit.resets:
            found.environment.clear()
            found.unknown.clear()
        if unit.files_reset:
            named.clear()
        for name, (value, line) in unit.environment.items():
            found.environment[name] = (value, Source.within(origin, f"(line {line} of {path})"))
            found.unknown.pop(name, None)
        found.unknown.update(unit.unknown)
        named += [(file, optional, Source.within(origin, f"(line {line} of {path})"))
                  for file, line, optional in unit.environment_files]
        found.ignored += [(path, line, why, origin) for line, why in unit.problems
                          if "PROXY" in why.upper()]
    for file, optional, where in named:
        matches = read(file) if read is not None else []
        if not matches:
            found.unread.append((file, "which the input does not write" + (
                " (its '-' makes a missing file no error)" if optional else
                " (without a '-' the service does not start when it is missing)"), where))
        for path, node_file in matches:
            if node_file.text is None or node_file.source is None:
                found.unread.append((path, node_file.why or "whose text cannot be read", where))
                continue
            variables, problems = parse_environment_file(node_file.text)
            for name, (value, line) in variables.items():
                found.environment[name] = (value, Source.within(node_file.source,
                                                                f"(line {line} of {path})"))
                found.unknown.pop(name, None)
            found.files.append((path, node_file.source))
            found.ignored += [(path, line, why, node_file.source) for line, why in problems
                              if "PROXY" in why.upper()]
    return found


def composed_environment(parts: Iterable[tuple[str, str, Source]], read: FileReader | None = None
                         ) -> tuple[dict[str, tuple[str, Source]], list[tuple[Source, str]]]:
    """``unit_environment``'s variables, and the lines about proxy variables systemd
    ignores, each with where it is."""
    found = unit_environment(parts, read)
    return found.environment, [(Source.within(origin, f"(line {line} of {path})"), why)
                               for path, line, why, origin in found.ignored]
