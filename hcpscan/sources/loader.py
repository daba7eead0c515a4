"""Offline loading: user paths -> objects, diagnostics and a record of what was passed over.

Files are read and parsed in the order they are found. Large inputs (a
must-gather of hundreds of namespaces) are parsed by a pool of worker
processes, a batch of files at a time; results are taken back in order, so
objects, diagnostics and de-duplication are the same as when parsing in this
process. ``HCPSCAN_JOBS`` sets the number of workers (1: no pool).
"""

from __future__ import annotations

import os
import re
import sys
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hcpscan import collector
from hcpscan.core.diagnostics import Diagnostic, SkipRecord
from hcpscan.core.jobs import jobs
from hcpscan.core.yamldocs import NOT_NODE_START_BYTES
from hcpscan.inventory.kept import exact, leave_spec, put_spec, share_spec, spec_key
from hcpscan.inventory.objects import BUILT_DOCUMENT, HCPSCAN_API, K8sObject, SourceLocation
from hcpscan.inventory.shapes import first_misfit, remembering
from hcpscan.sources import fastyaml
from hcpscan.sources.documents import MANIFEST_SUFFIXES, ParseResult, parse_entry
from hcpscan.sources.gathered import DumpRoots
from hcpscan.sources.insights import InsightsConfigMaps, configmap_key
from hcpscan.sources.interface import Entry, InputLimits
from hcpscan.sources.kustomize import (
    KustomizeRoot,
    KustomizeRoots,
    build,
    build_command,
    is_kustomization,
)
from hcpscan.sources.layout import NOISE_PLURALS, Placement, cluster_of, place
from hcpscan.sources.walk import (
    DEFAULT_LIMITS,
    FileTooLarge,
    constant,
    iter_entries,
    iter_folder,
    read_bounded,
    shown,
    too_large,
)

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

_SNIFF_LIMIT = 8 * 1024 * 1024
# Parse in worker processes only when there is this much to parse (starting a
# pool costs about a tenth of a second), in batches of about this size.
PARALLEL_THRESHOLD = 16 * 1024 * 1024
# An archive's members are decompressed one after another here, and each is shipped to a
# worker: the pool pays for them only past about 40 MiB (a real must-gather's 28 MiB of
# needed members: 1.07-1.13 s CPU and 1.13-1.22 s wall in one process, 1.27-1.30 s and
# 1.44-1.51 s with a worker; the generated N = 100 cluster as a .tar.gz, 96 MiB: the worker
# saved ~1.3 s wall on an idle machine). Their bytes count this much less towards the threshold.
ARCHIVE_PARALLEL_THRESHOLD = 48 * 1024 * 1024
_BATCH_BYTES = 2 * 1024 * 1024
_BATCH_FILES = 400
# Batches sent to each worker at a time (one parsed, two queued), and in flight per
# process: with one more per process than are sent, one is left unsent that this process
# may take back. With two sent, the worker waited on this process's merging: at N = 500
# (2 jobs, idle machine) it spent 7.1 s CPU beside this process's 8.4 s, the load taking
# this process's time; with three the two are even (7.0-7.5 s each) and the load's wall
# time 0.91-1.00x (median 0.95x) in 4 alternated pairs, memory the same (N = 500 peak
# 525 MiB; N = 100 193 MiB).
_SENT = 3
_IN_FLIGHT = 4
_SNIFF_MARKERS = (b"apiVersion", b"clusters:", b'"ignition"', b"kind:")


@dataclass(slots=True)
class ResourceNeeds:
    """Which resources the enabled rules read; ``None`` plurals means all of them."""

    plurals: frozenset[str] | None = None
    # every resource of an API group whose name contains one of these words
    # (policy CRDs hcpscan does not know, which it must still see to report them)
    group_words: frozenset[str] = frozenset()
    # kinds whose bodies are pruned to the fields read (inventory/kept.py), in the parse
    # workers, before any result leaves them
    pruned: frozenset[str] = frozenset()

    def wants(self, plural: str, group: str | None = None) -> bool:
        return (self.plurals is None or plural in self.plurals
                or (group is not None and any(w in group for w in self.group_words)))


@dataclass(slots=True)
class LoadResult:
    objects: list[K8sObject] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    skipped: SkipRecord = field(default_factory=SkipRecord)
    files_read: int = 0
    bytes_read: int = 0
    dumps: DumpRoots = field(default_factory=DumpRoots)  # what each must-gather collected
    # an Insights archive's ConfigMaps, one file per key, put together after the walk
    insights_configmaps: InsightsConfigMaps = field(default_factory=InsightsConfigMaps)


class PathNotFound(Exception):
    pass


Progress = Callable[[int, str], None]


def load_paths(paths: Iterable[str], needs: ResourceNeeds | None = None,
               progress: Progress | None = None,
               limits: InputLimits = DEFAULT_LIMITS) -> LoadResult:
    """Load every path; raise ``PathNotFound`` for a path that does not exist."""
    paths = list(paths)
    for path in paths:
        if path != "-" and not os.path.exists(path):
            raise PathNotFound(shown(path))
    result = LoadResult()
    needs = needs or ResourceNeeds()
    loader = _Parser(result, progress, limits, needs.pruned)
    pods = _PodFolders(result.skipped)
    try:
        with collector.paused():
            _load(paths, needs, result, loader, pods)
    finally:
        fastyaml.forget()  # the memos never outlive a load, even one that raised
    return result


def _load(paths: list[str], needs: ResourceNeeds, result: LoadResult, loader: _Parser,
          pods: _PodFolders) -> None:
    limits = loader.limits
    kustomize: list[tuple[KustomizeRoots, bool]] = []
    try:
        for path in paths:
            if path == "-":
                _take_stdin(loader)
                continue
            explicit_file = not os.path.isdir(path)
            pods.root = path
            roots = _kustomize_roots(path, explicit_file)
            kustomize.append((roots, explicit_file))

            def prune(parts: tuple[str, ...], folder: str, roots: KustomizeRoots = roots) -> bool:
                if pods.defer_folder(parts, folder):
                    return True
                roots.note_folder(parts, folder)
                return False

            for entry in iter_entries(path, loader.diagnose, result.skipped, prune, limits):
                _take(entry, explicit_file, needs, result, loader, pods, roots)
        loader.finish()
        for roots, explicit_file in kustomize:
            _read_kustomize(roots, explicit_file, needs, result, loader, pods)
        result.objects.extend(result.insights_configmaps.objects())
        # What the pod lists did not hold (a list cut short, or edited): read on its own.
        for parts, folder, root in pods.deferred:
            if pods.identity(parts) in loader.seen:
                result.skipped.add(POD_FOLDER_SKIPPED, shown(folder))
                continue
            for entry in iter_folder(folder, parts, loader.diagnose, result.skipped, None, limits, root):
                _take(entry, False, needs, result, loader, pods)
        loader.finish()
    finally:
        loader.close()


def _take_stdin(loader: _Parser) -> None:
    limit = loader.limits.max_file_size
    # in pieces: read(limit + 1) allocates its whole size first (a MemoryError for a
    # large --max-file-size whatever standard input holds)
    pieces, size = [], 0
    while size <= limit:
        piece = sys.stdin.buffer.read(min(limit + 1 - size, 1 << 24))
        if not piece:
            break
        pieces.append(piece)
        size += len(piece)
    data = b"".join(pieces)
    if len(data) > limit:
        loader.diagnose(too_large("<stdin>", limit))
        return
    entry = Entry("<stdin>", ("<stdin>.yaml",), constant(data), len(data), "<stdin>")
    loader.add(entry, place(entry.parts), data)


# Files of a dump holding a resource no selected rule reads: not parsed (that is most
# of a must-gather), so counted per resource, in files (`hcpscan inventory` reads them).
LEFT_OUT = "left out (files): no selected rule reads the resource"
POD_FOLDER_SKIPPED = "pod folder not opened: the pod was read from the namespace's pod list (logs are not read)"
POD_FOLDER_LEFT_OUT = "pod folder not opened: no selected rule reads pods (logs are not read)"


class _PodFolders:
    """A must-gather holds every pod twice: in the namespace's ``core/pods.yaml`` and
    in ``pods/<pod>/<pod>.yaml`` beside the pod's logs (tens of thousands of files).
    Once the list is read (folders are walked in name order, core/ before pods/),
    the pod folders are set aside and, after everything else, opened only for a
    pod the list did not have. In archives, which are streamed, both copies are
    parsed and the duplicate dropped after."""

    def __init__(self, skipped: SkipRecord | None = None) -> None:
        self.lists: set[tuple] = set()
        # namespaces whose pod list was left out (no selected rule reads pods): their pod
        # folders hold that namespace's pods again and their logs, none of it read, so
        # they are not opened at all (a must-gather's tens of thousands of log folders)
        self.left_out: set[tuple] = set()
        self.skipped = skipped
        self.root = ""  # the scanned folder the current folders are in
        self.deferred: list[tuple[tuple[str, ...], str, str]] = []

    def note(self, entry: Entry, placement: Placement, read: bool = True) -> None:
        if placement.plural == "pods" and placement.inspect_root is not None:
            if entry.parts[len(placement.inspect_root) + 2 :] == ("core", "pods.yaml"):
                (self.lists if read else self.left_out).add(
                    (placement.inspect_root, placement.namespace))

    def defer_folder(self, parts: tuple[str, ...], path: str) -> bool:
        """``namespaces/<ns>/pods/<pod>`` of a namespace whose pod list was read (set
        aside) or left out (passed over, saying so)."""
        if len(parts) < 4 or parts[-2] != "pods" or parts[-4] != "namespaces":
            return False
        namespace = (parts[:-4], parts[-3])
        if namespace in self.lists:
            self.deferred.append((parts, path, self.root))
            return True
        if namespace in self.left_out and self.skipped is not None:
            self.skipped.add(POD_FOLDER_LEFT_OUT, shown(path))
            return True
        return False

    @staticmethod
    def identity(parts: tuple[str, ...]) -> tuple:
        return (parts[:-4], cluster_of((*parts, "")), "", "Pod", parts[-3], parts[-1])


def _take(entry: Entry, explicit_file: bool, needs: ResourceNeeds, result: LoadResult,
          loader: _Parser, pods: _PodFolders, kustomize: KustomizeRoots | None = None) -> None:
    """Skip an entry (saying why), set it aside, or hand it to the parser."""
    if _held_for_kustomize(entry, kustomize, loader):
        return
    if configmap_key(entry.parts) is not None and not _manifest_text(entry):
        _take_insights_configmap(entry, needs, result, loader)
        return
    placement = place(entry.parts)
    result.dumps.note(entry, placement)
    explicit = explicit_file and entry.member is None
    reason = _skip_reason(entry, placement, needs, explicit)
    if reason is None and _needs_sniff(entry) and not explicit:
        reason = _sniff(entry, result)
    if reason:
        # Which resources were left out is what a reader of a pruned scan must know.
        result.skipped.add(reason, entry.display, placement.plural if reason == LEFT_OUT else None)
        if reason == LEFT_OUT:
            pods.note(entry, placement, read=False)
        return
    limit = loader.limits.max_file_size
    if entry.member is None and not entry.in_memory and entry.known_size() > limit:
        loader.diagnose(too_large(entry.display, limit))
        return
    pods.note(entry, placement)
    if entry.member is not None or entry.in_memory or _needs_sniff(entry):
        try:
            data = entry.read()
        except OSError as exc:
            loader.diagnose(_unreadable(entry, exc, limit))
            return
        loader.add(entry, placement, data)
    else:
        loader.add(entry, placement, None)  # read where it is parsed


_YAML_OBJECT = re.compile(rb"^kind:", re.MULTILINE)
_YAML_API = re.compile(rb"^apiVersion:", re.MULTILINE)


def _manifest_text(entry: Entry) -> bool:
    """A key file with a manifest suffix that is itself a Kubernetes object (a repository
    laid out like an Insights archive): read as the manifest it is. Other key files (a CA
    bundle, an install-config, a monitoring ``config.yaml``) are ConfigMap data."""
    name = entry.parts[-1]
    if not name.endswith(MANIFEST_SUFFIXES):
        return False
    try:
        head = entry.read()[:4096]
    except OSError:
        return False
    if name.endswith(".json"):
        return b'"kind"' in head and b'"apiVersion"' in head
    return bool(_YAML_OBJECT.search(head) and _YAML_API.search(head))


def _take_insights_configmap(entry: Entry, needs: ResourceNeeds, result: LoadResult,
                             loader: _Parser) -> None:
    """A key of a ConfigMap an Insights archive keeps as a file of its own."""
    if not needs.wants("configmaps"):
        result.skipped.add(LEFT_OUT, entry.display, "configmaps")
        return
    limit = loader.limits.max_file_size
    if entry.member is None and not entry.in_memory and entry.known_size() > limit:
        loader.diagnose(too_large(entry.display, limit))
        return
    try:
        data = entry.read()
    except OSError as exc:
        loader.diagnose(_unreadable(entry, exc, limit))
        return
    if len(data) > limit:
        loader.diagnose(too_large(entry.display, limit))
        return
    result.insights_configmaps.take(entry, data)


def _kustomize_roots(path: str, explicit_file: bool) -> KustomizeRoots:
    roots = KustomizeRoots()
    if not explicit_file:
        roots.note_folder((), path)
    elif is_kustomization(os.path.basename(path)):
        roots.roots.append(KustomizeRoot((), os.path.dirname(path) or ".", path))
    return roots


def _held_for_kustomize(entry: Entry, kustomize: KustomizeRoots | None, loader: _Parser) -> bool:
    """Files below a kustomize root wait until it is built (or not); a kustomization
    inside an archive cannot be built, and is named as what it is."""
    if entry.member is not None:
        if not is_kustomization(entry.parts[-1]):
            return False
        loader.diagnose(Diagnostic(
            entry.display, None, "kustomize root inside an archive: not built; the manifests beside "
            "it were read as they are (without what kustomize sets)", severity="warning",
            hint="unpack the archive and build it: " + build_command("DIR")))
        return True
    root = kustomize.owner(entry.parts) if kustomize is not None and kustomize.roots else None
    if root is None:
        return False
    root.inputs.append(entry)
    return True


def _read_kustomize(roots: KustomizeRoots, explicit_file: bool, needs: ResourceNeeds,
                    result: LoadResult, loader: _Parser, pods: _PodFolders) -> None:
    """Build each top-level root; read what was built instead of the files below the
    roots it covers, or read those files as they are when it could not be built."""
    built = {}
    top, users = roots.top_level()
    for root in top:
        outcome = build(root, roots.kubectl)
        built[os.path.realpath(root.folder)] = outcome.output is not None
        if outcome.output is not None:
            _add_built(root, outcome.output, result, loader.limits.max_nodes)
        else:
            result.diagnostics.append(Diagnostic(
                root.file, None, f"kustomize root not built: {outcome.failure}; the resources it "
                "lists were read as they are (without the namespace, names and patches kustomize "
                "sets)", severity="warning", hint="build it and scan the output: "
                + build_command(root.folder, outcome.needs_helm)))
    for root in roots.roots:
        if _covered(os.path.realpath(root.folder), built, users, set()):
            for entry in root.inputs:
                result.skipped.add(KUSTOMIZE_INPUT, entry.display)
            continue
        resources = root.resource_files()
        for entry in root.inputs:
            if os.path.realpath(entry.file) in resources:
                _take(entry, explicit_file, needs, result, loader, pods)
            else:  # the kustomization, patches, generator inputs: not objects
                result.skipped.add(KUSTOMIZE_NOT_BUILT, entry.display)
        if explicit_file:  # only the kustomization was given: read what it lists
            for path in sorted(resources):
                for entry in iter_entries(path, loader.diagnose, result.skipped):
                    _take(entry, True, needs, result, loader, pods)


KUSTOMIZE_INPUT = "kustomize input: read as built by `kubectl kustomize`"
KUSTOMIZE_NOT_BUILT = ("kustomize input that is not a resource (kustomization, patch, generator "
                       "file) of a root that was not built")


def _covered(folder: str, built: dict[str, bool], users: dict[str, list[KustomizeRoot]],
             seen: set[str]) -> bool:
    """Whether a root's objects came out of a build: its own, or that of every root using it."""
    if folder in built:
        return built[folder]
    if folder in seen or folder not in users:
        return False
    seen.add(folder)
    return all(_covered(os.path.realpath(u.folder), built, users, seen) for u in users[folder])


def _add_built(root: KustomizeRoot, output: bytes, result: LoadResult, max_nodes: int) -> None:
    """The built objects, located at the kustomization file: they were written nowhere."""
    parts = (*root.parts, os.path.basename(root.file))
    entry = Entry(root.file, parts, lambda: output, len(output), root.file)
    parsed = parse_entry(entry, place(parts).cluster, output, max_nodes)
    built_at = SourceLocation(root.file, 1, 1, root.file, None, BUILT_DOCUMENT)
    for obj in parsed.objects:
        obj.source = built_at
    result.objects.extend(parsed.objects)
    result.diagnostics.extend(
        Diagnostic(root.file, None, f"in what `kubectl kustomize` built: {d.message}", d.severity, d.hint)
        for d in parsed.diagnostics)
    for reason, _ in parsed.skipped:
        result.skipped.add(reason, root.file)
    result.diagnostics.append(Diagnostic(
        root.file, None, f"kustomize root built with `kubectl kustomize {root.folder}`: "
        f"{len(parsed.objects)} objects, located at this file (line 1) since kustomize made them",
        severity="info"))


class _Plan:
    """Stands in for the parser to list what a load would parse."""

    limits = DEFAULT_LIMITS

    def __init__(self) -> None:
        self.files: list[str] = []

    def add(self, entry: Entry, placement: Placement, data: bytes | None) -> None:
        self.files.append(entry.display)

    def diagnose(self, diagnostic: Diagnostic) -> None:
        pass


def planned_files(path: str, needs: ResourceNeeds) -> list[str]:
    """The files below a folder that loading it parses, when the dump's pod lists
    hold every pod (what the benchmark's libyaml floor parses)."""
    skipped = SkipRecord()
    plan, pods = _Plan(), _PodFolders(skipped)
    for entry in iter_entries(path, plan.diagnose, skipped, pods.defer_folder):
        _take(entry, False, needs, LoadResult(), plan, pods)  # type: ignore[arg-type]
    return plan.files


def _unreadable(entry: Entry, exc: OSError, limit: int = DEFAULT_LIMITS.max_file_size) -> Diagnostic:
    if isinstance(exc, FileTooLarge):
        return too_large(entry.display, limit)
    return Diagnostic(entry.display, None, f"cannot read file: {exc.strerror or exc}",
                      hint="check that the file is readable")


# One file for a worker: what to show, path parts, file and member, cluster, its
# bytes (None: read the file in the worker), the most it may read of it, the
# most nodes it may make and the kinds whose bodies are pruned.
_Task = tuple[str, tuple[str, ...], str, "str | None", str, "bytes | None", int, int,
              frozenset[str]]


# What parsing a file gives: its objects (None: not read), a diagnostic, its size,
# (index of the object, spec_key) of the pruned objects' pod specs, and those of the pod
# specs a parse worker left out of the objects (sent in one of its earlier batches: the
# main process puts its equal one back).
_Outcome = tuple["ParseResult | None", "Diagnostic | None", int, list[tuple[int, bytes]],
                 list[tuple[int, bytes]]]


def _stop_forkserver() -> None:
    """Stop the forkserver the workers came from once they are done: it stays alive with
    the process otherwise (26 MiB resident through the rules and the report, at N = 100
    the difference between 221 and 198 MiB for the whole scan). Another pool starts it
    again. (``_stop`` is how CPython's own tests stop it; absent, nothing is done.)"""
    from multiprocessing import forkserver

    stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)
    if stop is not None:
        stop()


# An anchor's "&" and the first character of its name: a YAML alias names an anchor, and
# an anchor stands where a node starts, never just after a printable ASCII character but
# a flow indicator (a URL's "?a=1&b=2" holds none). After any other byte it may: a space,
# a line break (YAML's include U+0085, U+2028 and U+2029, whose UTF-8 ends in a byte past
# ASCII), a byte order mark.
_ANCHOR_MARK = re.compile(rb"&[0-9A-Za-z_-]")


def _may_alias(data: bytes) -> bool:
    """Whether a file's text may hold a YAML alias, so that a pod spec may hold itself
    (``spec_key`` then looks): not without a "*", nor without an anchor where a node
    starts; a text in UTF-16 or UTF-32, whose bytes are not read here, may."""
    if b"*" not in data:
        return False
    if b"\x00" in data:
        return True
    for found in _ANCHOR_MARK.finditer(data):
        at = found.start()
        if at == 0 or data[at - 1] not in NOT_NODE_START_BYTES:
            return True
    return False


def _parse_task(task: _Task) -> _Outcome:
    display, parts, file, member, cluster, data, limit, max_nodes, pruned = task
    if data is None:
        try:
            data = read_bounded(file, limit)
        except OSError as exc:
            entry = Entry(display, parts, lambda: b"", 0, file, member)
            return None, _unreadable(entry, exc, limit), 0, [], []
    entry = Entry(display, parts, lambda d=data: d, len(data), file, member)  # type: ignore[misc]
    parsed = parse_entry(entry, cluster, data, max_nodes, pruned)  # here, in the worker:
    keys: list[tuple[int, bytes]] = []  # what is pruned is never built, nor sent
    if pruned:
        aliased = None  # whether the text may hold an alias: read once, for a pruned object
        for index, obj in enumerate(parsed.objects):
            if obj.kind in pruned and obj.api_version != HCPSCAN_API:
                if aliased is None:
                    aliased = _may_alias(data)
                key = spec_key(obj.kind, obj.body, aliased, max_nodes, fastyaml.spec_bytes)
                if key is not None:
                    keys.append((index, key))
    return parsed, None, len(data), keys, []


# In a parse worker: the load it parses for, and the keys of the pod specs it has sent to
# it (what the main process holds once it has merged the batches before).
_sent: tuple[bytes, set[bytes]] = (b"", set())


def _parse_batch(tasks: list[_Task], load: bytes = b"") -> list[_Outcome]:
    """Parse a batch in a worker. ``load`` names the load (one pool): a pod spec this
    worker sent in an earlier batch of it is left out of the objects and named by its key,
    since the main process merges batches in order and holds an equal one by then."""
    global _sent
    fastyaml.forget(strings_only=True)
    with collector.paused():
        outcomes = [_parse_task(task) for task in tasks]
        # Equal pod specs of the batch (replicas, their ReplicaSet...) made one object here:
        # pickling writes a shared object once, so the batch is sent and rebuilt in the
        # main process at about half the size (which shares them across batches as before).
        if load and _sent[0] != load:
            _sent = (load, set())
        sent = _sent[1] if load else set()
        specs: dict[bytes, Any] = {}
        for parsed, _, _, keys, held in outcomes:
            if parsed is None or not keys:
                continue
            shared = []
            for index, key in keys:
                if key in sent:
                    held.append((index, key))
                else:
                    obj = parsed.objects[index]
                    share_spec(obj.kind, obj.body, key, specs)
                    shared.append((index, key))
            keys[:] = shared
        _check_shapes(outcomes)
        for parsed, _, _, _, held in outcomes:
            for index, _ in held:
                obj = parsed.objects[index]  # type: ignore[union-attr]
                leave_spec(obj.kind, obj.body)
        sent.update(key for key in specs if exact(key))
        return outcomes


def _check_shapes(outcomes: list[_Outcome]) -> None:
    """The inventory's shape check, done in the parse worker for the objects that fit
    (``K8sObject.shape_fits``): the main process, which merges every batch, checks only
    the objects it parsed itself. An object that does not fit is left to the inventory,
    which says where."""
    with remembering():  # pod specs the batch shares are checked once
        for parsed, _, _, _, _ in outcomes:
            if parsed is None:
                continue
            for obj in parsed.objects:
                if obj.api_version != HCPSCAN_API and first_misfit(obj.kind, obj.body) is None:
                    obj.shape_fits = True


@dataclass(slots=True)
class _Batch:
    """Files parsed together: by this process (``mine``) or sent to a worker (``future``);
    ``outcomes`` once parsed here."""

    items: list[tuple[_Task, Placement | None, Diagnostic | None]]
    tasks: list[_Task]
    mine: bool
    future: Any = None
    outcomes: list[_Outcome] | None = None


class _Parser:
    """Parses entries in order: here while the input is small, in a process pool
    once it is large; results are merged strictly in the order entries came."""

    def __init__(self, result: LoadResult, progress: Progress | None,
                 limits: InputLimits = DEFAULT_LIMITS, pruned: frozenset[str] = frozenset()) -> None:
        self.result = result
        self.pruned = pruned
        self.specs: dict[bytes, Any] = {}
        self.progress = progress
        self.limits = limits
        self.seen: set[tuple] = set()
        self.jobs = jobs()
        self.pending: list[tuple[_Task, Placement | None, Diagnostic | None]] = []
        self.pending_bytes = 0
        self.batch: list[tuple[_Task, Placement | None, Diagnostic | None]] = []
        self.batch_bytes = 0
        self.pool: ProcessPoolExecutor | None = None
        self.in_flight: deque = deque()
        self.submitted = 0
        self.broken = False  # a worker was lost: every later batch is parsed here
        self.load = os.urandom(8)  # names this load to the workers (``_parse_batch``)

    def add(self, entry: Entry, placement: Placement, data: bytes | None) -> None:
        task: _Task = (entry.display, entry.parts, entry.file, entry.member, placement.cluster, data,
                       self.limits.max_file_size, self.limits.max_nodes, self.pruned)
        size = len(data) if data is not None else entry.known_size()
        if self.pool is None:
            self.pending.append((task, placement, None))
            self.pending_bytes += size if entry.member is None else (
                size * PARALLEL_THRESHOLD // max(ARCHIVE_PARALLEL_THRESHOLD, 1))
            if self.jobs > 1 and self.pending_bytes >= PARALLEL_THRESHOLD:
                self._start_pool()
            return
        self._queue((task, placement, None), size)

    def diagnose(self, diagnostic: Diagnostic) -> None:
        """A problem found while walking the input, kept in order with the files' own."""
        if self.pool is None and not self.pending:
            self.result.diagnostics.append(diagnostic)
            return
        empty: _Task = ("", (), "", None, "", None, 0, 0, frozenset())
        item: tuple[_Task, Placement | None, Diagnostic | None] = (empty, None, diagnostic)
        if self.pool is None:
            self.pending.append(item)
        else:
            self._queue(item, 0)

    def _start_pool(self) -> None:
        # forkserver: workers come from a clean single-threaded process, so a lock held by
        # another thread (the progress bar's) cannot be inherited and hang a worker, as it
        # can with plain fork; the parser module is imported once in the server.
        # imported here: an input below the thresholds (a one-file scan, a must-gather
        # archive) never starts the pool, and importing both took ~6 ms of its start-up
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods else None)
        if "forkserver" in methods:
            # several workers share the parser's modules imported once in the server; one
            # worker imports them itself and the server nothing (not even the main
            # script): the summed resident sets count them once, not twice (N = 100:
            # 181-184 MiB against 188-190, the load's time the same)
            context.set_forkserver_preload(["hcpscan.sources.documents"] if self.jobs > 2 else [])
        # One worker fewer than jobs: this process parses a share of the batches itself
        # (``_submit``) instead of waiting, and a worker fewer is a process fewer resident.
        try:
            self.pool = ProcessPoolExecutor(self.jobs - 1, mp_context=context)
        except (OSError, ValueError, NotImplementedError, ImportError):
            # no processes here (a sandbox without /dev/shm or fork): the same parse in
            # this process, as HCPSCAN_JOBS=1 does
            self.jobs = 1
            return
        pending, self.pending = self.pending, []
        for item in pending:
            task = item[0]
            self._queue(item, len(task[5]) if task[5] is not None else 0)

    def _queue(self, item: tuple, size: int) -> None:
        self.batch.append(item)
        self.batch_bytes += size or 4096
        if self.batch_bytes >= _BATCH_BYTES or len(self.batch) >= _BATCH_FILES:
            self._submit()

    def _submit(self) -> None:
        if not self.batch:
            return
        if self.pool is None:
            raise RuntimeError("a parse batch submitted before the worker pool started")
        items, self.batch, self.batch_bytes = self.batch, [], 0
        tasks = [task for task, placement, error in items if error is None]
        self.submitted += 1
        # This process's share (one batch in ``jobs``), parsed when its turn to be merged
        # comes, while the workers parse the batches after it (N = 100, 2 jobs, idle
        # machine: with a third, the worker's 3.9 s CPU was the longer path beside this
        # process's 1.9 s; with a half, 2.5 s beside 3.1 s, merging included).
        mine = self.broken or self.submitted % self.jobs == 0
        self.in_flight.append(_Batch(items, tasks, mine))
        self._send()
        while len(self.in_flight) > _IN_FLIGHT * self.jobs:
            self._collect()

    def _send(self) -> None:
        """Send the workers the batches in order, no more at a time than keep each one busy
        with a few queued behind (``_SENT``): the rest wait here, where ``_take_back`` can
        still take them (a sent batch is never cancelled: on Python 3.11 a cancelled future in a pool that
        breaks stops the pool's manager thread, and every later result is never set)."""
        if self.pool is None or self.broken:
            return
        from concurrent.futures import BrokenExecutor  # imported with the pool

        sent = sum(1 for b in self.in_flight if b.future is not None and b.outcomes is None)
        for batch in self.in_flight:
            if sent >= _SENT * (self.jobs - 1):
                return
            if not batch.mine and batch.future is None and batch.outcomes is None:
                try:
                    batch.future = self.pool.submit(_parse_batch, batch.tasks, self.load)
                except BrokenExecutor:
                    # a worker was killed since the last batch was merged (the pool knew
                    # first): this batch and the rest are parsed here, said at the first
                    # batch the workers may have held
                    held = next((b for b in self.in_flight
                                 if b.future is not None and b.outcomes is None), batch)
                    self._worker_lost(held.tasks)
                    return
                sent += 1

    def _collect(self) -> None:
        batch = self.in_flight.popleft()
        outcomes, future = batch.outcomes, batch.future
        if outcomes is None and future is not None:
            from concurrent.futures import BrokenExecutor  # imported with the pool

            # Waiting for a worker, this process parses the last batch not sent yet (a
            # worker slowed by other work on its core is not waited for while any is left).
            while not future.done() and self._take_back():
                pass
            try:
                outcomes = future.result()
            except BrokenExecutor:  # BrokenProcessPool: a worker was killed
                self._worker_lost(batch.tasks)
        if outcomes is None:  # this process's share, or a batch never sent
            outcomes = [_parse_task(task) for task in batch.tasks]
        parsed = iter(outcomes)
        for task, placement, error in batch.items:
            outcome = (None, error, 0, [], []) if error is not None else next(parsed)
            self._merge(task, placement, *outcome)
        self._send()

    def _take_back(self) -> bool:
        """Parse here the last workers' batch not sent yet (its outcome kept until its turn
        to be merged); False if every one was sent."""
        for batch in reversed(self.in_flight):
            if not batch.mine and batch.future is None and batch.outcomes is None:
                batch.outcomes = [_parse_task(task) for task in batch.tasks]
                return True
        return False

    def _worker_lost(self, tasks: list[_Task]) -> None:
        """A parse worker ended before answering (killed: the out-of-memory killer, a
        signal): its batch and every later one are parsed in this process, so nothing
        is lost; said once, as a warning, with what to do."""
        if self.broken:
            return
        self.broken = True
        where = tasks[0][0] if tasks else "input"
        self.result.diagnostics.append(Diagnostic(
            where, None, "a parse worker process ended before it answered (killed by a signal, "
            "often the out-of-memory killer); the files it held and the rest of the input were "
            "parsed in the main process", severity="warning",
            hint="set HCPSCAN_JOBS=1 to parse in one process, or give the scan more memory"))

    def finish(self) -> None:
        if self.pool is None:
            pending, self.pending = self.pending, []
            for task, placement, error in pending:
                outcome = (None, error, 0, [], []) if error is not None else _parse_task(task)
                self._merge(task, placement, *outcome)
            return
        self._submit()
        while self.in_flight:
            self._collect()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            _stop_forkserver()

    def _merge(self, task: _Task, placement: Placement | None, parsed: ParseResult | None,
               error: Diagnostic | None, size: int, keys: list[tuple[int, bytes]],
               held: list[tuple[int, bytes]]) -> None:
        if error is not None or parsed is None or placement is None:
            self.result.diagnostics.append(error)  # type: ignore[arg-type]
            return
        for index, key in held:  # specs a worker sent before: this process holds them
            obj = parsed.objects[index]
            spec = self.specs.get(key)
            if spec is None or not put_spec(obj.kind, obj.body, spec):
                # never so while batches are merged in order; parsed again, nothing is lost
                parsed, error, size, keys, held = _parse_task(task)
                self._merge(task, placement, parsed, error, size, keys, held)
                return
        for index, key in keys:  # equal pod specs (replicas, their ReplicaSet...) kept once
            obj = parsed.objects[index]
            share_spec(obj.kind, obj.body, key, self.specs)
        _merge_parsed(task[0], placement, parsed, size, self.result, self.seen)
        if self.progress:
            self.progress(self.result.files_read, task[0])


def _merge_parsed(display: str, placement: Placement, parsed: ParseResult, size: int,
                  result: LoadResult, seen: set[tuple]) -> None:
    result.files_read += 1
    result.bytes_read += size
    result.diagnostics.extend(parsed.diagnostics)
    for reason, where in parsed.skipped:
        result.skipped.add(reason, where)
    if placement.inspect_root is None:
        result.objects.extend(parsed.objects)
        return
    # In a dump an object can stand both in a List and in its own file: keep it once.
    for obj in parsed.objects:
        key = (placement.inspect_root, *obj.identity)
        if key in seen:
            result.skipped.add("already read from another file of the same dump", display)
            continue
        seen.add(key)
        result.objects.append(obj)


def _skip_reason(entry: Entry, placement: Placement, needs: ResourceNeeds,
                 explicit: bool) -> str | None:
    if explicit:
        return None
    name = entry.parts[-1]
    if placement.is_log or name.endswith(".log"):
        return "logs"
    if placement.plural in NOISE_PLURALS:
        return "events"
    if placement.plural and not needs.wants(placement.plural, placement.group):
        return LEFT_OUT
    return None


def _needs_sniff(entry: Entry) -> bool:
    name = entry.parts[-1]
    if name.endswith(MANIFEST_SUFFIXES) or name.endswith((".conf", ".ign")):
        return False
    return True


def _sniff(entry: Entry, result: LoadResult) -> str | None:
    """Files without a manifest suffix: read them only if they look like one (kubeconfigs)."""
    name = entry.parts[-1]
    _, ext = os.path.splitext(name)
    if ext or entry.known_size() > _SNIFF_LIMIT:
        return f"not a manifest ({ext or 'large file without suffix'})"
    try:
        head = entry.read()[:4096]
    except OSError:
        return None  # reading it properly will produce the diagnostic
    if b"\x00" in head or not any(marker in head for marker in _SNIFF_MARKERS):
        return "not a manifest (no suffix)"
    return None
