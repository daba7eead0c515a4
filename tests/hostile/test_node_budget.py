"""Memory bounded by content, not only by size: 90 MB of ``[{},{},...]`` made 30
million mappings and took 2.5 GB (PyYAML) to 5.8 GB (yaml-rs). A file that would
make more nodes than ``--max-nodes`` is refused before any parser builds it, on
every command, and the files beside it are still read."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from hcpscan.core.diagnostics import SkipRecord
from hcpscan.core.yamldocs import (
    MAX_NODES,
    TooManyNodes,
    load_json,
    load_one,
    node_overrun,
)
from hcpscan.sources import documents
from hcpscan.sources.documents import MANIFEST_SUFFIXES, parse_entry
from hcpscan.sources.interface import Entry
from hcpscan.sources.walk import iter_entries
from tests.conftest import ROOT, SHARED
from tests.hostile.harness import GOOD, GOOD_NAME, diagnostics, run_every_command, with_good

REALWORLD = SHARED / "realworld"
BUDGET = 301  # a ConfigMap of k keys makes 15 + 2k nodes: one makes exactly this


def nodes(value: Any) -> int:
    """Nodes of loaded data as the budget counts them: each mapping, list, key and
    value, a shared value (an alias) once per place it stands."""
    if isinstance(value, dict):
        return 1 + sum(nodes(k) + nodes(v) for k, v in value.items())
    if isinstance(value, list):
        return 1 + sum(nodes(item) for item in value)
    return 1


def configmap_yaml(keys: int, name: str = "big") -> str:
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: shop}\ndata:\n" % name
            + "".join(f"  k{i}: v\n" for i in range(keys)))


def configmap_json(keys: int) -> str:
    data = ", ".join(f'"k{i}": "v"' for i in range(keys))
    return ('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big-json", '
            '"namespace": "shop"},\n "data": {' + data + "}}\n")


def with_nodes(make: Any, count: int) -> tuple[str, int]:
    """The text ``make(keys)`` that makes ``count`` nodes, or one more (each key
    makes two), and how many it makes."""
    base = nodes(yaml.safe_load(make(1)))
    text = make(1 + -(-(count - base) // 2))
    made = sum(nodes(d) for d in yaml.safe_load_all(text))
    assert made in (count, count + 1)
    return text, made


def line_passing(text: str, limit: int) -> int:
    """The line of the node that takes the count past ``limit`` (aliases aside)."""
    seen = 0
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.ScalarEvent | yaml.MappingStartEvent | yaml.SequenceStartEvent):
            seen += 1
            if seen > limit:
                return event.start_mark.line + 1
    raise AssertionError("within the limit")


LAUGHS = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol, namespace: shop}\nx0: &a0 [lol]\n"
          + "".join(f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 9)))

TEXTS = {
    "block": configmap_yaml(40),
    "flow": "a: [" + ", ".join("{}" for _ in range(50)) + "]\nb: {x: [1, [2, [3]]], y: ''}\n",
    "json": configmap_json(40),
    "documents": "\n---\n".join(configmap_yaml(5, f"c{i}") for i in range(6)) + "\n---\n",
    "scalars": "".join("--- x\n" for _ in range(20)),
    "nulls": "a:\n" + "-\n" * 60,
    "aliases": "a: &a [1, 2, {b: 3}]\nc: [*a, *a, *a]\nd: &d x\ne: *d\n",
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_the_count_is_exact_whichever_way_it_is_found(name: str) -> None:
    text = TEXTS[name]
    count = sum(nodes(d) for d in yaml.safe_load_all(text))
    for limit in (count, count + 1, 10 * count):  # cleared by the bound, the event count or counting
        assert node_overrun(text, limit) is None, limit
    for limit in (count - 1, count // 2, 1):
        over = node_overrun(text, limit)
        assert isinstance(over, TooManyNodes), limit
    # just over: counted node by node, to the line; far over (more than two events
    # per node allowed): refused from libyaml's count of events, as a whole
    if name == "aliases":  # an alias is one event: a text with aliases is counted node by node
        assert node_overrun(text, 1).line == 1  # type: ignore[union-attr]
        assert node_overrun(text, count - 1).line == 4  # type: ignore[union-attr]  # "e: *d", the last node
        return
    assert node_overrun(text, count - 1).line == line_passing(text, count - 1)  # type: ignore[union-attr]
    assert node_overrun(text, 1).line is None  # type: ignore[union-attr]


def test_after_a_syntax_error_the_documents_read_are_counted() -> None:
    """Past a bad document the others are still read, so still counted."""
    good = configmap_yaml(30)
    text = good + "---\nbad: [unclosed\n---\n" + good
    count = 2 * nodes(yaml.safe_load(good))
    # the bad document's four nodes (its mapping, "bad", the sequence, "unclosed") count
    # twice, as read_documents reads it twice: in the stream, then on its own
    assert node_overrun(text, count + 8) is None
    over = node_overrun(text, count + 7)
    assert over is not None and over.line == len(text.splitlines())  # the last line of the last document


def test_an_alias_counts_as_what_it_repeats() -> None:
    over = node_overrun(LAUGHS)
    # x{i} repeats x{i-1} ten times: about 2 * 10**i nodes; x7 (line 11) passes 5 million
    assert isinstance(over, TooManyNodes) and over.line == 11
    with pytest.raises(TooManyNodes):
        load_one(LAUGHS)
    cycle = "a: &a [*a, 1]\n"  # a list holding itself: one reference, not endless
    assert node_overrun(cycle, 5) is None and node_overrun(cycle, 4) is not None


@pytest.mark.parametrize("before", ["[x,\x85", "[x,\u2028", "[x,\u2029", "[x, ", "[x,\t", "[x,\n  ", "[",
                                    "[x,"])
def test_an_anchor_after_any_character_that_may_start_a_node_counts(before: str) -> None:
    """An anchor right after YAML 1.1's own line breaks (U+0085, U+2028, U+2029), which
    libyaml reads as such, was not taken for one: an 8-line file of 10**8 values passed
    the budget (found by review)."""
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol, namespace: shop}\n"
            f"x0: {before}&a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]]\n"
            + "".join(f"x{i}: {before}&a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]]\n" for i in range(1, 9)))
    assert isinstance(node_overrun(text), TooManyNodes)
    plain = text.replace(f"{before}&a", "[x&a")  # words with "&" inside: text, no anchor
    assert node_overrun(plain) is None


def test_json_read_by_the_json_parser_is_bounded_too() -> None:
    """JSON that YAML cannot read (a tab before a value) goes to json.loads: counted
    outside its strings."""
    text = configmap_json(40).replace(' "v"', '\t"v: [a, b, c]"')
    count = nodes(load_json(text))
    assert load_json(text, count) is not None
    with pytest.raises(TooManyNodes):
        load_json(text, count - 1)
    result = parse_entry(Entry("x.json", ("x.json",), lambda: b"", 0, "x.json"), "management",
                         text.encode(), count - 1)
    assert [d.message for d in result.diagnostics] == [f"not read: {TooManyNodes(count - 1, None).message}"]
    assert not result.objects


def test_no_parser_sees_a_file_over_the_budget(monkeypatch) -> None:
    def refuse(*_: Any) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(documents, "fast_documents", refuse)
    monkeypatch.setattr(documents, "read_documents", refuse)
    text = configmap_yaml(200)
    result = parse_entry(Entry("x.yaml", ("x.yaml",), lambda: b"", 0, "x.yaml"), "management",
                         text.encode(), BUDGET)
    assert [(d.line, d.hint) for d in result.diagnostics] == [(line_passing(text, BUDGET), TooManyNodes.hint)]


def event_nodes(data: bytes) -> int:
    """Nodes of every document PyYAML's parser reads (up to a syntax error)."""
    seen = 0
    try:
        for event in yaml.parse(data, Loader=yaml.CSafeLoader):
            seen += isinstance(event, yaml.ScalarEvent | yaml.MappingStartEvent | yaml.SequenceStartEvent)
    except yaml.YAMLError:
        pass
    return seen


def test_real_inputs_are_far_below_the_default() -> None:
    """Every YAML/JSON file of ../shared/realworld (archive members included) makes
    less than a hundredth of the default; the manual and SECURITY.md say what it is."""
    largest = 0
    for entry in iter_entries(str(REALWORLD), lambda _: None, SkipRecord()):
        if entry.parts[-1].endswith(MANIFEST_SUFFIXES) and (entry.size or entry.known_size()) > 100_000:
            largest = max(largest, event_nodes(entry.read()))
    assert 10_000 < largest < MAX_NODES // 100
    default = f"`--max-nodes` nodes (default {MAX_NODES:,}"
    for doc in ("docs/manual.md", "SECURITY.md"):
        assert default in " ".join((ROOT / doc).read_text().split()), doc


def _files() -> dict[str, str]:
    at_budget, made = with_nodes(lambda k: configmap_yaml(k, "at-budget"), BUDGET)
    assert made == BUDGET
    return {
        "at-budget.yaml": at_budget,
        "over.yaml": with_nodes(configmap_yaml, BUDGET + 1)[0],
        "over.json": with_nodes(configmap_json, BUDGET + 1)[0],
        "laughs.yaml": LAUGHS,
    }


def _expect_refused(runs: dict, files: dict[str, str], prefix: str = "") -> None:
    message = f"not read: {TooManyNodes(BUDGET, None).message}"
    found = {Path(d["path"]).name.removeprefix(prefix): (d["line"], d["message"], d["hint"])
             for d in diagnostics(runs) if "nodes" in d["message"]}
    assert found == {
        "over.yaml": (line_passing(files["over.yaml"], BUDGET), message, TooManyNodes.hint),
        "over.json": (line_passing(files["over.json"], BUDGET), message, TooManyNodes.hint),
        "laughs.yaml": (7, message, TooManyNodes.hint),  # 11 nodes to line 3, 248 to x2, x3 passes 301
    }
    assert "--max-nodes" in TooManyNodes.hint
    assert all(r.code == 2 for r in runs.values())  # an input problem, on every command
    inventory = {o["name"] for o in runs["inventory"].json()["objects"]}
    assert {GOOD_NAME, "at-budget"} <= inventory and not {"big", "big-json", "lol"} & inventory


@pytest.mark.parametrize("fast", ["1", "0"], ids=["yaml-rs", "pyyaml"])
def test_a_file_over_the_budget_is_refused_on_every_command(tmp_path: Path, monkeypatch, fast: str) -> None:
    monkeypatch.setenv("HCPSCAN_FAST_YAML", fast)
    tree = with_good(tmp_path / "dump")
    files = _files()
    for name, text in files.items():
        (tree / name).write_text(text)
    runs = run_every_command(str(tree), "--max-nodes", str(BUDGET))
    _expect_refused(runs, files)
    # raising the limit reads what is within it; the laughs expand to a billion
    raised = run_every_command(str(tree), "--max-nodes", "1K")
    assert [Path(d["path"]).name for d in diagnostics(raised) if "nodes" in d["message"]] == ["laughs.yaml"]
    assert {"big", "big-json"} <= {o["name"] for o in raised["inventory"].json()["objects"]}


def test_a_member_over_the_budget_is_refused_inside_an_archive(tmp_path: Path) -> None:
    files = {"good.yaml": GOOD, **_files()}
    archive = tmp_path / "dump.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    runs = run_every_command(str(archive), "--max-nodes", str(BUDGET))
    _expect_refused(runs, files, prefix="dump.tar.gz!")


def test_the_limit_is_a_positive_count(tmp_path: Path) -> None:
    from tests.hostile.harness import hcpscan

    done = hcpscan("inventory", str(with_good(tmp_path)), "--max-nodes", "0")
    assert done.returncode == 2 and b"not a number of nodes" in done.stderr
