"""Inputs from a hostile-input review (round 4): each once ended the scan with an
internal error or lost documents without a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.harness import diagnostics, run_every_command, with_good

SURROGATE = "lone UTF-16 surrogate escape"


@pytest.mark.parametrize("fast", ["1", "0"], ids=["yaml-rs", "pyyaml"])
def test_a_lone_surrogate_escape_refuses_its_document_and_keeps_the_others(tmp_path: Path,
                                                                          monkeypatch, fast: str):
    # "\ud800" is valid JSON syntax but no character: nothing could encode it again, and
    # the finding key's sha256 ended every command with exit 4
    monkeypatch.setenv("HCPSCAN_FAST_YAML", fast)
    tree = with_good(tmp_path / "dump")
    (tree / "cm.json").write_text('{"apiVersion": "v1", "kind": "ConfigMap", '
                                  '"metadata": {"name": "a\\ud800", "namespace": "shop"}}\n')
    (tree / "fine.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n"
                                    "metadata: {name: fine, namespace: shop}\n")
    (tree / "list.json").write_text(  # as `kubectl get cm -o json` writes it
        '{\n    "apiVersion": "v1",\n    "items": [\n'
        '        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept", "namespace": "shop"}},\n'
        '        {\n            "apiVersion": "v1", "kind": "ConfigMap",\n'
        '            "data": {"proxy": "http://proxy\\uDC00:3128"},\n'
        '            "metadata": {"name": "refused", "namespace": "shop"}\n        }\n'
        '    ],\n    "kind": "List"\n}\n')
    runs = run_every_command(str(tree))
    found = {(Path(d["path"]).name, d["line"], d["message"]) for d in diagnostics(runs)
             if SURROGATE in d["message"]}
    assert found == {
        ("cm.json", 1, f"not read: metadata.name holds a {SURROGATE} (\\ud800-\\udfff without "
                       "its pair), which is no character"),
        ("list.json", 1, f"not read: items[1].data.proxy holds a {SURROGATE} (\\ud800-\\udfff "
                       "without its pair), which is no character")}
    names = {o["name"] for o in runs["inventory"].json()["objects"]}
    assert {"fine", "kept", "good-web"} <= names and "refused" not in names
    assert runs["scan"].code == 2


def test_a_pair_of_surrogate_escapes_is_one_character_and_read(tmp_path: Path):
    tree = with_good(tmp_path / "dump")
    (tree / "cm.json").write_text('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": '
                                  '{"name": "smile", "namespace": "shop"}, "data": {"x": "\\ud83d\\ude00"}}\n')
    runs = run_every_command(str(tree))
    assert not any(SURROGATE in d["message"] for d in diagnostics(runs))
    assert "smile" in {o["name"] for o in runs["inventory"].json()["objects"]}
