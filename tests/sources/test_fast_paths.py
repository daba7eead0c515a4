"""The fast paths of loading give exactly what the plain ones give.

Plain YAML data is built straight from parser events and large inputs are parsed
in worker processes; both must be invisible in the result: same objects, same
positions, same diagnostics, same order.
"""

from __future__ import annotations

import tarfile

import pytest

from hcpscan.core.yamldocs import (
    YamlSyntaxError,
    _composed_documents,
    _plain_documents,
    parse_documents,
)
from hcpscan.sources import loader
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES, REALWORLD

# What YAML 1.1 makes of plain scalars, lists of items with their lines, and the
# features that send a stream to the composing loader.
STREAMS = {
    "scalars": "a: yes\nb: No\nc: 1:20\nd: 2001-12-14t21:59:43.10-05:00\ne: 0x1F\nf: .inf\n"
               "g: ~\nh: 1_000\ni: 0o17\nj: 017\nk: -.5e3\nl: ''\nm:\nn: \"yes\"\n",
    "list": "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: a}\n"
            "-   kind: Pod\n    metadata:\n      name: b\n",
    "quoted items key": "kind: List\n\"items\":\n  - {a: 1}\n  -   - x\n      - y\n  - z\n",
    "items not a list": "kind: List\nitems: 3\nitems:\n- a\n",
    "empty documents": "---\n---\na: 1\n---\n",
    "duplicate keys": "a: 1\na: 2\n",
    "colliding keys": "1: a\ntrue: c\n",
    "root sequence": "[1, 2]\n",
    "root scalar": "hello\n",
    "anchors": "a: &x {b: 1}\nc: *x\n",
    "merge keys": "base: &b {x: 1}\nd:\n  <<: *b\n  y: 2\n",
    "tags": "a: !!str 123\nb: !!binary aGVsbG8=\n",
    "custom tag": "a: !Ref x\n",
    "mapping key": "? [a]\n: b\n",
    "value key": "x: =\n",
    "error after a document": "a: 1\n---\nb: [1\n---\nc: 3\n",
}


def _outcome(documents):
    try:
        return [(d.body, d.doc_index, d.line, d.column, d.item_positions) for d in documents], None
    except YamlSyntaxError as exc:
        return None, (exc.message, exc.line, exc.column)


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_plain_data_reads_as_the_composing_loader_reads_it(name):
    text = STREAMS[name]
    assert _outcome(parse_documents(text)) == _outcome(_composed_documents(text))


@pytest.mark.parametrize("name", ["anchors", "merge keys", "tags", "custom tag", "mapping key",
                                  "value key", "error after a document"])
def test_streams_beyond_plain_data_go_to_the_composing_loader(name):
    assert _plain_documents(STREAMS[name]) is None


def test_list_items_keep_their_own_lines():
    (doc,) = parse_documents(STREAMS["list"])
    assert doc.item_positions == [(4, 3), (6, 5)]


def test_real_rendered_manifests_read_the_same_either_way():
    files = sorted((REALWORLD / "cpo-rendered").rglob("*.yaml"))
    assert files
    for path in files:
        text = path.read_bytes()
        assert _plain_documents(text) is not None, path
        assert _outcome(parse_documents(text)) == _outcome(_composed_documents(text)), path


def _summary(result):
    objects = [(o.cluster, o.kind, o.namespace, o.name, o.source, o.body) for o in result.objects]
    return (objects, [str(d) for d in result.diagnostics], result.skipped.counts,
            result.skipped.examples, result.files_read, result.bytes_read)


def test_parsing_in_worker_processes_changes_nothing(tmp_path, monkeypatch):
    root = tmp_path / "must-gather.local.1" / "image" / "namespaces"
    for ns in ("alpha", "beta"):
        folder = root / ns / "core"
        folder.mkdir(parents=True)
        (root / ns / f"{ns}.yaml").write_text(f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n")
        pods = "".join(f"- apiVersion: v1\n  kind: Pod\n  metadata: {{name: p{i}, namespace: {ns}}}\n"
                       for i in range(5))
        (folder / "pods.yaml").write_text(f"apiVersion: v1\nkind: List\nitems:\n{pods}")
        one = root / ns / "pods" / "p1"
        one.mkdir(parents=True)
        (one / "p1.yaml").write_text(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p1, namespace: {ns}}}\n")
        (folder / "configmaps.yaml").write_text("kind: List\nitems:\n- [not, an, object\n")
        (folder / "events.yaml").write_text("kind: List\nitems: []\n")
    (root / "alpha" / "core" / "broken-link.yaml").symlink_to(tmp_path / "missing.yaml")
    monkeypatch.setenv("HCPSCAN_JOBS", "1")
    alone = load_paths([str(tmp_path)])
    monkeypatch.setenv("HCPSCAN_JOBS", "2")
    monkeypatch.setattr(loader, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(loader, "_BATCH_FILES", 2)
    pooled = load_paths([str(tmp_path)])
    assert _summary(pooled) == _summary(alone)
    assert alone.skipped.counts[loader.POD_FOLDER_SKIPPED] == 2
    assert any("invalid YAML" in d.message for d in alone.diagnostics)


def _pod_dump(tmp_path):
    ns = tmp_path / "must-gather.local.1" / "image" / "namespaces" / "alpha"
    (ns / "core").mkdir(parents=True)
    pods = "".join(f"- apiVersion: v1\n  kind: Pod\n  metadata: {{name: p{i}, namespace: alpha}}\n"
                   for i in range(3))
    (ns / "core" / "pods.yaml").write_text(f"apiVersion: v1\nkind: List\nitems:\n{pods}")
    for name in ("p1", "p9"):  # p1 is in the list, p9 is not (a list cut short)
        (ns / "pods" / name / "c" / "c" / "logs").mkdir(parents=True)
        (ns / "pods" / name / "c" / "c" / "logs" / "current.log").write_text("started\n")
        (ns / "pods" / name / f"{name}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: alpha}}\n")
    return tmp_path / "must-gather.local.1"


def test_pod_folders_are_opened_only_for_pods_the_list_lacks(tmp_path):
    result = load_paths([str(_pod_dump(tmp_path))])
    assert [o.name for o in result.objects] == ["p0", "p1", "p2", "p9"]
    assert result.objects[1].source.path.endswith("core/pods.yaml")
    assert result.skipped.counts == {loader.POD_FOLDER_SKIPPED: 1, "logs": 1}
    assert result.files_read == 2  # the list and p9's own file; p1's was never parsed


def test_in_an_archive_single_pod_files_are_read_only_for_pods_the_list_lacks(tmp_path):
    folder = _pod_dump(tmp_path / "tree")
    archive = tmp_path / "must-gather.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    result = load_paths([str(archive)])
    assert [o.name for o in result.objects] == ["p0", "p1", "p2", "p9"]
    assert result.skipped.counts["already read from another file of the same dump"] == 1
    assert result.skipped.counts["logs"] == 2


def test_the_benchmark_floor_parses_exactly_the_files_a_scan_parses():
    from hcpscan.rules.config import ScanConfig
    from hcpscan.scan import RuleSelection, load_rules, resource_needs

    needs = resource_needs(load_rules(ScanConfig(), RuleSelection()))
    example = str(FIXTURES / "example")
    planned = loader.planned_files(example, needs)
    assert planned and len(planned) == load_paths([example], needs).files_read


def test_a_parse_batch_sends_equal_pod_specs_once(tmp_path):
    import pickle

    tasks = _pod_tasks(tmp_path, ["a", "b", "c"], sidecar=("c",))
    alone = [loader._parse_task(task) for task in tasks]
    sent = pickle.loads(pickle.dumps(loader._parse_batch(tasks)))
    bodies = [outcome[0].objects[0].body for outcome in sent]
    assert bodies == [outcome[0].objects[0].body for outcome in alone]
    assert bodies[0]["spec"] is bodies[1]["spec"]  # equal specs: one object, sent once
    assert bodies[2]["spec"] is not bodies[0]["spec"]  # a spec with another container is its own
    assert bodies[0]["spec"] == {"containers": [{"name": "proxy", "image": "registry.example/proxy:1",
                                                 "env": [{"name": "HTTPS_PROXY", "value": "http://proxy.corp:3128"}]}]}


def _pod_tasks(tmp_path, names, sidecar=()):
    """One Pod file per name (the pods named in ``sidecar`` have a second container), as
    the parse tasks of a load that prunes."""
    from hcpscan.inventory.kept import PRUNABLE

    tasks = []
    for i, name in enumerate(names):
        other = "  - name: sidecar\n    image: registry.example/sidecar:2\n" if name in sidecar else ""
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: alpha}}
spec:
  nodeName: node-{i}
  containers:
  - name: proxy
    image: registry.example/proxy:1
    env:
    - {{name: HTTPS_PROXY, value: 'http://proxy.corp:3128'}}
{other}""")
        tasks.append((path.name, (path.name,), str(path), None, "", None, 1 << 20, 1 << 20, PRUNABLE))
    return tasks


def _merged(parser, batches):
    from hcpscan.sources.layout import place

    for tasks, outcomes in batches:
        for task, outcome in zip(tasks, outcomes, strict=True):
            parser._merge(task, place(task[1]), *outcome)
    return [(o.name, o.body) for o in parser.result.objects]


def test_a_worker_sends_a_pod_spec_once_per_load_and_the_main_process_puts_it_back(
        tmp_path, monkeypatch):
    import pickle

    monkeypatch.setattr(loader, "_sent", (b"", set()))  # this process plays the worker
    first = _pod_tasks(tmp_path, ["a", "b"])
    second = _pod_tasks(tmp_path, ["c", "d", "e"], sidecar={"e"})
    plain = [(o.name, o.body) for task in first + second for o in loader._parse_task(task)[0].objects]
    sent = [pickle.loads(pickle.dumps(loader._parse_batch(tasks, b"load-1")))
            for tasks in (first, second)]
    # c and d hold the spec a and b were sent with: left out, named by its key; e's is new
    assert [len(outcome[4]) for outcome in sent[1]] == [1, 1, 0]
    assert [outcome[0].objects[0].body["spec"] for outcome in sent[1][:2]] == [None, None]
    assert list(sent[1][0][0].objects[0].body) == ["apiVersion", "kind", "metadata", "spec"]
    parser = loader._Parser(loader.LoadResult(), None)
    merged = _merged(parser, zip((first, second), sent, strict=True))
    assert merged == plain
    bodies = [body for _, body in merged]
    assert bodies[0]["spec"] is bodies[2]["spec"] is bodies[3]["spec"]
    assert bodies[4]["spec"] is not bodies[0]["spec"]
    # another load (another pool) starts afresh: every spec is sent again
    again = loader._parse_batch(second, b"load-2")
    assert [outcome[4] for outcome in again] == [[], [], []]
    # without a load's name (a caller that is no pool's worker) nothing is left out
    assert [outcome[4] for outcome in loader._parse_batch(second)] == [[], [], []]


def test_a_spec_the_main_process_does_not_hold_is_parsed_again_not_lost(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "_sent", (b"", set()))
    first = _pod_tasks(tmp_path, ["a"])
    second = _pod_tasks(tmp_path, ["c", "d"])
    plain = [(o.name, o.body) for task in second for o in loader._parse_task(task)[0].objects]
    loader._parse_batch(first, b"load-1")
    held = loader._parse_batch(second, b"load-1")
    assert held[0][4]
    # merged by a process that never saw the first batch: each file is parsed here again
    assert _merged(loader._Parser(loader.LoadResult(), None), [(second, held)]) == plain


@pytest.mark.parametrize("jobs", ["2", "3"])
def test_pod_specs_repeated_across_a_workers_batches_load_as_in_one_process(tmp_path, monkeypatch, jobs):
    """Replicas of one spec in many files, batched apart: the same objects, one spec object
    per distinct spec, and batches that named specs instead of sending them (each worker
    names only what it sent itself)."""
    from hcpscan.inventory.kept import PRUNABLE

    root = tmp_path / "pods"
    root.mkdir()
    _pod_tasks(root, [f"p{i:02}" for i in range(16)], sidecar={"p05", "p11"})
    needs = loader.ResourceNeeds(pruned=PRUNABLE)
    monkeypatch.setenv("HCPSCAN_JOBS", "1")
    alone = load_paths([str(root)], needs)
    held: list[int] = []
    merge = loader._Parser._merge

    def counted(self, task, placement, parsed, error, size, keys, named):
        held.append(len(named))
        return merge(self, task, placement, parsed, error, size, keys, named)

    monkeypatch.setenv("HCPSCAN_JOBS", jobs)
    monkeypatch.setattr(loader, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(loader, "_BATCH_FILES", 1)
    monkeypatch.setattr(loader._Parser, "_merge", counted)
    monkeypatch.setattr(loader._Parser, "_take_back", lambda self: False)  # the workers parse theirs
    pooled = load_paths([str(root)], needs)
    assert _summary(pooled) == _summary(alone)
    assert sum(held) >= 3  # the worker's batches after its first named the spec
    specs = {id(o.body["spec"]) for o in pooled.objects}
    assert len(specs) == 2


def _misfit_dump(root):
    """Pods one per file: most fit; ``bad-*`` hold one pod spec whose env is a mapping (the
    API server rejects it) in files far apart; ``odd`` a label that is a list."""
    root.mkdir()
    for i in range(12):
        name = f"bad-{i}" if i in (1, 6, 10) else f"good-{i}"
        env = "{name: HTTPS_PROXY}" if name.startswith("bad") else "[{name: HTTPS_PROXY, value: x}]"
        labels = "{app: [a, b]}" if i == 8 else "{app: web}"
        (root / f"{i:02}.yaml").write_text(f"""apiVersion: v1
kind: Pod
metadata: {{name: {"odd" if i == 8 else name}, namespace: alpha, labels: {labels}}}
spec:
  nodeName: node-{i}
  containers:
  - name: proxy
    image: registry.example/proxy:1
    env: {env}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: cm-{i}, namespace: alpha}}
data: {{proxy: 'http://proxy.corp:3128'}}
""")
    return root


@pytest.mark.parametrize("prune", [False, True], ids=("whole", "pruned"))
def test_shapes_checked_in_the_parse_worker_leave_out_the_same_objects(tmp_path, monkeypatch, prune):
    from hcpscan.inventory.kept import PRUNABLE
    from hcpscan.inventory.store import Inventory

    root = _misfit_dump(tmp_path / "pods")
    needs = loader.ResourceNeeds(pruned=PRUNABLE if prune else frozenset())

    def inventory():
        result = load_paths([str(root)], needs)
        return result, Inventory(result.objects, result.diagnostics)

    monkeypatch.setenv("HCPSCAN_JOBS", "1")
    alone, alone_inventory = inventory()
    assert not any(o.shape_fits for o in alone.objects)  # one process: the inventory checks
    monkeypatch.setenv("HCPSCAN_JOBS", "2")
    monkeypatch.setattr(loader, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(loader, "_BATCH_FILES", 1)
    pooled, pooled_inventory = inventory()
    checked = {o.name for o in pooled.objects if o.shape_fits}
    assert checked and checked <= {o.name for o in pooled_inventory.objects}
    assert not checked & {"odd", "bad-1", "bad-6", "bad-10"}
    assert [str(d) for d in pooled_inventory.diagnostics] == [str(d) for d in alone_inventory.diagnostics]
    assert [o.name for o in pooled_inventory.objects] == [o.name for o in alone_inventory.objects]
    misfits = [d.message for d in alone_inventory.diagnostics if "left out" in d.message]
    assert len(misfits) == 4 and any("Pod alpha/odd" in m for m in misfits)


def test_a_held_pod_spec_that_does_not_fit_is_not_taken_as_checked(tmp_path, monkeypatch):
    """A spec a worker sent before is left out of a later object: that object is judged
    on the spec it holds, before it is left out."""
    from hcpscan.inventory.kept import PRUNABLE

    monkeypatch.setattr(loader, "_sent", (b"", set()))
    root = _misfit_dump(tmp_path / "pods")
    tasks = [(p.name, (p.name,), str(p), None, "", None, 1 << 20, 1 << 20, PRUNABLE)
             for p in sorted(root.iterdir())]
    loader._parse_batch(tasks[:2], b"load-1")  # bad-1's spec sent here
    later = loader._parse_batch(tasks[6:7], b"load-1")  # bad-6: the same spec, held
    (parsed, _, _, _, held) = later[0]
    assert held and parsed.objects[0].body["spec"] is None
    assert [o.shape_fits for o in parsed.objects] == [False, True]


_batches_parsed = [0]


def _killed_on_its_third_batch(tasks, load=b""):
    """A parse worker that sends two batches (their pod specs with them) and is then
    killed (the out-of-memory killer)."""
    import os
    import signal

    _batches_parsed[0] += 1
    if _batches_parsed[0] == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return loader._parse_batch(tasks, load)


def test_a_worker_killed_after_sending_specs_loses_no_pod_spec(tmp_path, monkeypatch):
    from hcpscan.inventory.kept import PRUNABLE

    root = tmp_path / "pods"
    root.mkdir()
    _pod_tasks(root, [f"p{i:02}" for i in range(16)], sidecar={"p04"})
    needs = loader.ResourceNeeds(pruned=PRUNABLE)
    monkeypatch.setenv("HCPSCAN_JOBS", "1")
    alone = load_paths([str(root)], needs)
    monkeypatch.setenv("HCPSCAN_JOBS", "2")
    monkeypatch.setattr(loader, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(loader, "_BATCH_FILES", 1)
    monkeypatch.setattr(loader, "_parse_batch", _killed_on_its_third_batch)
    pooled = load_paths([str(root)], needs)
    assert [(o.name, o.body) for o in pooled.objects] == [(o.name, o.body) for o in alone.objects]
    assert len({id(o.body["spec"]) for o in pooled.objects}) == 2
    warnings = [d for d in pooled.diagnostics if d.severity == "warning"]
    assert len(warnings) == 1 and "parse worker" in warnings[0].message


def test_a_pool_found_broken_when_sending_loses_nothing(tmp_path, monkeypatch):
    """A worker killed while it held no batch: the pool refuses the next one (it learns of
    the death before this process does). That batch and the rest are parsed here, with
    the one warning; no internal error."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    submit = ProcessPoolExecutor.submit
    calls = [0]

    def refusing(self, *args, **kwargs):
        calls[0] += 1
        if calls[0] > 2:
            raise BrokenProcessPool("A child process terminated abruptly")
        return submit(self, *args, **kwargs)

    alone, pooled = _alone_and_pooled(
        tmp_path, monkeypatch, 12, 1, loader._parse_batch,
        lambda: monkeypatch.setattr(ProcessPoolExecutor, "submit", refusing))
    assert [o.name for o in pooled.objects] == [o.name for o in alone.objects]
    assert [str(d) for d in pooled.diagnostics if d.severity == "error"] == \
        [str(d) for d in alone.diagnostics]
    warnings = [d for d in pooled.diagnostics if d.severity == "warning"]
    assert len(warnings) == 1 and "parse worker" in warnings[0].message
    assert calls[0] == 3  # no batch offered again once refused


def test_the_main_process_parses_its_share_and_the_order_holds(tmp_path, monkeypatch):
    # with N jobs, N - 1 workers parse and this process takes one batch in N itself
    import os

    root = tmp_path / "must-gather.local.1" / "image" / "namespaces" / "alpha" / "core"
    root.mkdir(parents=True)
    for i in range(12):
        (root / f"cm{i:02}.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i:02}, namespace: alpha}}\n"
            f"data: {{proxy: 'http://proxy-{i}.corp:3128', mode: 0755}}\n")
    monkeypatch.setenv("HCPSCAN_JOBS", "1")
    alone = load_paths([str(tmp_path)])
    here: list[int] = []
    parse = loader._parse_task

    def counted(task):
        here.append(os.getpid())
        return parse(task)

    monkeypatch.setenv("HCPSCAN_JOBS", "2")
    monkeypatch.setattr(loader, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(loader, "_BATCH_FILES", 2)
    monkeypatch.setattr(loader, "_parse_task", counted)  # the workers keep their own
    pooled = load_paths([str(tmp_path)])
    assert _summary(pooled) == _summary(alone)
    assert [o.name for o in pooled.objects] == [f"cm{i:02}" for i in range(12)]
    assert pooled.objects[3].body["data"]["mode"] == 493  # YAML 1.1's octal, either way
    assert 0 < len(here) < 12 and set(here) == {os.getpid()}


def _configmap_dump(base, count, data=lambda i: ""):
    """A must-gather under ``base`` holding ``count`` ConfigMaps, one file each (``cm{i}``,
    ``data(i)`` appended to each); its namespace's core folder."""
    root = base / "must-gather.local.1" / "image" / "namespaces" / "alpha" / "core"
    root.mkdir(parents=True)
    for i in range(count):
        (root / f"cm{i}.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}, namespace: alpha}}\n{data(i)}")
    return root


def test_the_forkserver_is_stopped_when_the_workers_are_done_and_starts_again(tmp_path, monkeypatch):
    # it would stay resident through the rules and the report
    from multiprocessing import forkserver

    _configmap_dump(tmp_path, 6)
    monkeypatch.setenv("HCPSCAN_JOBS", "2")
    monkeypatch.setattr(loader, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(loader, "_BATCH_FILES", 1)
    for _ in range(2):
        result = load_paths([str(tmp_path)])
        assert [o.name for o in result.objects] == [f"cm{i}" for i in range(6)]
        assert forkserver._forkserver._forkserver_pid is None


def test_the_forkserver_preloads_the_parser_only_for_several_workers(tmp_path, monkeypatch):
    # one worker imports the parser itself: the server holding it too would count twice
    # in the summed resident sets; several share the server's copy
    import multiprocessing.context
    from multiprocessing import forkserver

    monkeypatch.setattr(forkserver._forkserver, "_preload_modules",
                        list(forkserver._forkserver._preload_modules))  # put back after
    preloaded: list[tuple[int, list[str]]] = []
    real = multiprocessing.context.ForkServerContext.set_forkserver_preload

    def record(self, names):
        preloaded.append((jobs, list(names)))
        return real(self, names)

    monkeypatch.setattr(multiprocessing.context.ForkServerContext, "set_forkserver_preload", record)
    _configmap_dump(tmp_path, 6)
    monkeypatch.setattr(loader, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(loader, "_BATCH_FILES", 1)
    for jobs in (2, 3):
        monkeypatch.setenv("HCPSCAN_JOBS", str(jobs))
        result = load_paths([str(tmp_path)])
        assert [o.name for o in result.objects] == [f"cm{i}" for i in range(6)]
    assert preloaded == [(2, []), (3, ["hcpscan.sources.documents"])]


def _killed_batch(tasks, load=b""):
    """A parse worker killed while it holds a batch (as the out-of-memory killer does)."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def _alone_and_pooled(tmp_path, monkeypatch, count, batch_files, worker, before=None):
    """A dump of ``count`` ConfigMaps and a broken file, loaded in one process, then with
    one parse worker running ``worker`` for each batch of ``batch_files`` files
    (``before``: called just before that load, in this process)."""
    root = _configmap_dump(tmp_path, count)
    (root / "broken.yaml").write_text("kind: [unclosed\n")
    monkeypatch.setenv("HCPSCAN_JOBS", "1")
    alone = load_paths([str(tmp_path)])
    monkeypatch.setenv("HCPSCAN_JOBS", "2")
    monkeypatch.setattr(loader, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(loader, "_BATCH_FILES", batch_files)
    monkeypatch.setattr(loader, "_parse_batch", worker)  # what a worker runs
    if before is not None:
        before()
    return alone, load_paths([str(tmp_path)])


def test_a_killed_parse_worker_loses_no_file(tmp_path, monkeypatch):
    # its batch, and every later one, is parsed in the main process; a warning says so
    alone, pooled = _alone_and_pooled(tmp_path, monkeypatch, 8, 2, _killed_batch)
    assert [o.name for o in pooled.objects] == [o.name for o in alone.objects]
    assert len(pooled.objects) == 8
    warnings = [d for d in pooled.diagnostics if d.severity == "warning"]
    assert len(warnings) == 1 and "parse worker" in warnings[0].message
    assert "HCPSCAN_JOBS=1" in warnings[0].hint
    assert [str(d) for d in pooled.diagnostics if d.severity == "error"] == \
        [str(d) for d in alone.diagnostics]


def _slow_batch(tasks, load=b""):
    """A parse worker that takes its time (another process shares its core)."""
    import time

    time.sleep(0.4)
    return loader._parse_batch(tasks, load)


def test_batches_no_worker_has_started_are_parsed_here_while_waiting(tmp_path, monkeypatch):
    # waiting for a worker's batch, this process takes back the last one no worker started
    # and parses it: the same objects and diagnostics, in the same order
    here: list[str] = []
    parse = loader._parse_task

    def recorded(task):
        here.append(task[0])
        return parse(task)

    alone, pooled = _alone_and_pooled(  # _parse_task recorded in this process only
        tmp_path, monkeypatch, 12, 1, _slow_batch,
        lambda: monkeypatch.setattr(loader, "_parse_task", recorded))
    assert [o.name for o in pooled.objects] == [o.name for o in alone.objects]
    assert [str(d) for d in pooled.diagnostics] == [str(d) for d in alone.diagnostics]
    # its own share is one batch in two (6 of the 13 one-file batches); waiting for the slow
    # worker it took back more, and the worker parsed the others
    assert 6 < len(here) < 13


def _slow_then_killed_batch(tasks, load=b""):
    """A slow parse worker that the out-of-memory killer ends while this process has
    batches queued for it and takes some back."""
    import os
    import signal
    import time

    time.sleep(0.3)
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_worker_killed_while_batches_are_taken_back_loses_nothing_and_hangs_nothing(
        tmp_path, monkeypatch, capfd):
    # no batch sent to the pool is ever cancelled: on Python 3.11 a cancelled future in a
    # pool that breaks stops the pool's thread, which then never sets the later results
    alone, pooled = _alone_and_pooled(tmp_path, monkeypatch, 16, 1, _slow_then_killed_batch)
    assert [o.name for o in pooled.objects] == [o.name for o in alone.objects]
    errors = [str(d) for d in pooled.diagnostics if d.severity == "error"]
    assert errors == [str(d) for d in alone.diagnostics]
    assert len([d for d in pooled.diagnostics if d.severity == "warning"]) == 1
    assert "Exception in thread" not in capfd.readouterr().err


def test_no_worker_processes_parses_everything_here(tmp_path, monkeypatch):
    # a sandbox where processes cannot be started: the same load, in this process
    import concurrent.futures

    _configmap_dump(tmp_path, 4)

    def refused(*args, **kwargs):
        raise OSError(38, "Function not implemented")

    monkeypatch.setenv("HCPSCAN_JOBS", "2")
    monkeypatch.setattr(loader, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", refused)  # imported from it
    result = load_paths([str(tmp_path)])
    assert [o.name for o in result.objects] == [f"cm{i}" for i in range(4)]
    assert not result.diagnostics


def test_an_archive_starts_the_parse_workers_only_past_its_own_larger_threshold(tmp_path, monkeypatch):
    # an archive's members are decompressed here one after another and shipped to a worker:
    # its bytes count less towards starting the pool than a folder's files, which a worker
    # reads itself; whichever way, the result is the same
    _configmap_dump(tmp_path / "dump", 8,
                    lambda i: f"data: {{proxy: 'http://proxy-{i}.corp:3128', pad: '{'x' * 900}'}}\n")
    archive = tmp_path / "dump.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "dump" / "must-gather.local.1", arcname="must-gather.local.1")
    monkeypatch.setenv("HCPSCAN_JOBS", "1")
    folder_alone, archive_alone = load_paths([str(tmp_path / "dump")]), load_paths([str(archive)])
    started: list[str] = []
    start = loader._Parser._start_pool

    def recorded(parser):
        started.append(parser.pending[0][0][0])
        start(parser)

    monkeypatch.setenv("HCPSCAN_JOBS", "2")
    monkeypatch.setattr(loader._Parser, "_start_pool", recorded)
    monkeypatch.setattr(loader, "_BATCH_FILES", 2)
    monkeypatch.setattr(loader, "PARALLEL_THRESHOLD", 4000)  # the 8 files: ~8 kB
    monkeypatch.setattr(loader, "ARCHIVE_PARALLEL_THRESHOLD", 10**6)
    assert _summary(load_paths([str(archive)])) == _summary(archive_alone)
    assert started == []  # parsed here, as with one job
    assert _summary(load_paths([str(tmp_path / "dump")])) == _summary(folder_alone)
    assert len(started) == 1 and not started[0].startswith(str(archive))
    monkeypatch.setattr(loader, "ARCHIVE_PARALLEL_THRESHOLD", 6000)
    assert _summary(load_paths([str(archive)])) == _summary(archive_alone)
    assert len(started) == 2 and started[1].startswith(str(archive))


def test_pod_folders_are_not_opened_when_no_selected_rule_reads_pods(tmp_path):
    dump = _pod_dump(tmp_path)
    (dump / "image" / "namespaces" / "alpha" / "core" / "services.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n"
        "  metadata: {name: s, namespace: alpha}\n")
    result = load_paths([str(dump)], loader.ResourceNeeds(frozenset({"services"})))
    assert [o.name for o in result.objects] == ["s"]
    # neither pod folder is listed: no log is counted, and p9's own file is not read either
    assert result.skipped.counts == {loader.LEFT_OUT: 1, loader.POD_FOLDER_LEFT_OUT: 2}
    assert result.files_read == 1
    # a folder named like a pod folder where no pod list was seen is still opened
    other = tmp_path / "gitops" / "namespaces" / "beta" / "pods" / "web"
    other.mkdir(parents=True)
    (other / "service.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: beta}\n")
    result = load_paths([str(tmp_path / "gitops")], loader.ResourceNeeds(frozenset({"services"})))
    assert loader.POD_FOLDER_LEFT_OUT not in result.skipped.counts
    assert sum(result.skipped.counts.values()) == 1  # its file was seen (placed by its path)
