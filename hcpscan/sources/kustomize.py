"""Kustomize roots: built with ``kubectl kustomize`` when kubectl is there, named otherwise.

A folder holding ``kustomization.yaml``, ``kustomization.yml`` or
``Kustomization`` is a kustomize root: that file is kustomize's input, never a
Kubernetes object, and the manifests below the folder are what it builds from
(without the namespace, name prefixes, labels and patches it applies).

* With ``kubectl`` on PATH, each root that no other root in the input uses (as
  a resource, base or component) is built, bounded by ``BUILD_TIMEOUT``
  seconds. The built objects are read instead of the files below the root,
  which are counted as passed over: reading both would count every object
  twice, once without what kustomize sets. The objects were built, not written
  anywhere, so they are located at the kustomization file, line 1, and an info
  diagnostic says so.
* Without kubectl, when the build fails (a remote base without network, a
  broken patch) or times out, and for roots inside archives, the files below
  the root are read as they are and a warning names the root and the command
  that builds it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from hcpscan.core.yamldocs import InputLimitError
from hcpscan.sources.bounded import read_bounded
from hcpscan.sources.interface import Entry

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
BUILD_TIMEOUT = 120.0  # seconds for one `kubectl kustomize` (remote bases are fetched)
# Entries of a kustomization that name other folders it builds from.
_USES = ("resources", "bases", "components")


def is_kustomization(name: str) -> bool:
    return name in KUSTOMIZATION_FILES


def kustomization_in(folder: str) -> str | None:
    """The kustomization file of a folder, if it is a kustomize root."""
    for name in KUSTOMIZATION_FILES:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None


def build_command(folder: str, helm: bool = False) -> str:
    """``helm``: the kustomization inflates Helm charts, which kubectl does only when told."""
    flag = "--enable-helm " if helm else ""
    return (f"kubectl kustomize {flag}{shlex.quote(folder)} > built.yaml && "
            "hcpscan scan built.yaml")


@dataclass(slots=True)
class KustomizeRoot:
    parts: tuple[str, ...]  # the folder, relative to the scanned path
    folder: str  # the folder on disk
    file: str  # its kustomization file on disk
    inputs: list[Entry] = field(default_factory=list)  # files below it, held back

    def uses(self) -> set[str]:
        """Folders (real paths) this root builds from, as its kustomization names them."""
        return {path for path in self._named(_USES) if os.path.isdir(path)}

    def resource_files(self) -> set[str]:
        """Manifests (real paths) it lists as resources: what is read when it cannot be
        built (patches and generator inputs are not objects)."""
        return {path for path in self._named(("resources",)) if os.path.isfile(path)}

    def _named(self, keys: tuple[str, ...]) -> set[str]:
        try:  # under the input budgets (a deep file would end PyYAML in a RecursionError);
            # one over them is reported when it is read as input
            spec = yaml.safe_load(read_bounded(Path(self.file)))
        except (OSError, UnicodeDecodeError, yaml.YAMLError, InputLimitError):
            return set()
        found = set()
        for key in keys:
            entries = spec.get(key) if isinstance(spec, dict) else None
            for entry in entries if isinstance(entries, list) else ():
                if isinstance(entry, str) and "://" not in entry:
                    found.add(os.path.realpath(os.path.join(self.folder, entry)))
        return found


@dataclass(frozen=True, slots=True)
class Build:
    """What one ``kubectl kustomize`` gave: the manifests, or why there are none."""

    output: bytes | None
    failure: str = ""
    needs_helm: bool = False  # kubectl refused the kustomization's helmCharts without the flag


def build(root: KustomizeRoot, kubectl: str | None) -> Build:
    if kubectl is None:
        return Build(None, "kubectl was not found on PATH")
    try:
        done = subprocess.run([kubectl, "kustomize", root.folder], capture_output=True,
                              timeout=BUILD_TIMEOUT, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        return Build(None, f"`kubectl kustomize` did not finish within {BUILD_TIMEOUT:g} s")
    except OSError as exc:
        return Build(None, f"cannot run kubectl: {exc.strerror or exc}")
    if done.returncode != 0:
        why = _why(done.stderr, done.returncode)
        return Build(None, f"`kubectl kustomize` failed: {why}", _HELM_REFUSED in why)
    return Build(done.stdout)


# kubectl logs its error through klog: `E1124 10:52:37.51 20652 run.go:72] "command failed" err="..."`.
_KLOG = re.compile(r'^[EWIF]\d{4} [\d:.]+\s+\d+ \S+\] (?:"command failed" err=)?"?(?P<why>.*?)"?$')
# A value holding line breaks is written as a block instead (klog's text format, kubectl
# 1.27 on): `err=<`, then each line of the value after a tab, then a line ` >`.
_KLOG_BLOCK = re.compile(r'\berr=<\n(?P<body>(?:\t[^\n]*\n)+) >$', re.MULTILINE)
_HELM_REFUSED = "must specify --enable-helm"
_WHY_CHARS = 400
_WHY_HEAD = 120  # of a longer reason, shown before the end, where Go writes the cause


def _why(stderr: bytes, code: int) -> str:
    text = stderr.decode("utf-8", "replace").replace("\r\n", "\n")
    blocks = list(_KLOG_BLOCK.finditer(text))
    if blocks:
        why = " ".join(line.strip() for line in blocks[-1].group("body").splitlines()
                       if line.strip())
    else:
        lines = [line for line in text.strip().splitlines()
                 if not line.startswith("# Warning") and line.strip() not in ("", ">")]
        if not lines:
            return f"exit code {code}"
        found = _KLOG.match(lines[-1])
        why = found.group("why") if found else lines[-1]
    if len(why) <= _WHY_CHARS:
        return why
    return why[:_WHY_HEAD] + " … " + why[-(_WHY_CHARS - _WHY_HEAD - 3):]


class KustomizeRoots:
    """The kustomize roots met while walking one path, and the files held back for them."""

    def __init__(self) -> None:
        self.kubectl = shutil.which("kubectl")
        self.roots: list[KustomizeRoot] = []

    def note_folder(self, parts: tuple[str, ...], folder: str) -> None:
        file = kustomization_in(folder)
        if file is not None:
            self.roots.append(KustomizeRoot(parts, folder, file))

    def owner(self, parts: tuple[str, ...]) -> KustomizeRoot | None:
        """The innermost root a file below it belongs to."""
        best = None
        for root in self.roots:
            if parts[: len(root.parts)] == root.parts and len(parts) > len(root.parts):
                if best is None or len(root.parts) > len(best.parts):
                    best = root
        return best

    def top_level(self) -> tuple[list[KustomizeRoot], dict[str, list[KustomizeRoot]]]:
        """Roots no other root uses, and for each used root (by real path) its users."""
        users: dict[str, list[KustomizeRoot]] = {}
        for root in self.roots:
            for used in root.uses():
                users.setdefault(used, []).append(root)
        top = [r for r in self.roots if os.path.realpath(r.folder) not in users]
        return top, users


def selector_labels(root_file: str, path: str) -> dict[str, str]:
    """The labels kustomize adds to the label selectors of ``path``'s objects when
    ``root_file``'s root is built: ``commonLabels`` and the ``labels`` entries with
    ``includeSelectors: true`` of every kustomization from ``path``'s folder up to the
    root's (an overlay's apply after its base's, so the root's win on a shared key).
    kustomize writes them into a NetworkPolicy's ``spec.podSelector``,
    ``spec.ingress[].from[].podSelector`` and ``spec.egress[].to[].podSelector``
    ``matchLabels`` where those exist (its built-in field specs, ``create: false``);
    ``matchExpressions`` it never touches."""
    top = os.path.realpath(os.path.dirname(root_file))
    folder = os.path.realpath(os.path.dirname(path))
    chain: list[str] = []
    while True:
        chain.append(folder)
        if folder == top or os.path.dirname(folder) == folder:
            break
        folder = os.path.dirname(folder)
    if chain[-1] != top:
        return {}
    labels: dict[str, str] = {}
    for folder in chain:  # innermost (the base) first: the outer kustomizations apply later
        file = kustomization_in(folder)
        if file is None:
            continue
        try:
            spec = yaml.safe_load(read_bounded(Path(file)))
        except (OSError, UnicodeDecodeError, yaml.YAMLError, InputLimitError):
            continue
        if not isinstance(spec, dict):
            continue
        common = spec.get("commonLabels")
        found = [common] if isinstance(common, dict) else []
        entries = spec.get("labels")
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict) and entry.get("includeSelectors") is True \
                    and isinstance(entry.get("pairs"), dict):
                found.append(entry["pairs"])
        for pairs in found:
            labels.update({str(k): "" if v is None else str(v) for k, v in pairs.items()})
    return labels


def outermost_kustomization(path: str) -> str | None:
    """The kustomization file of the outermost folder above ``path`` (its own included)
    that is a kustomize root, when ``path``'s own folder is one: the root a user builds
    when the scan could not (``selector_labels`` reads the chain down from it)."""
    folder = os.path.realpath(os.path.dirname(path))
    if kustomization_in(folder) is None:
        return None
    top = None
    while True:
        found = kustomization_in(folder)
        if found is not None:
            top = found
        parent = os.path.dirname(folder)
        if parent == folder:
            return top
        folder = parent
