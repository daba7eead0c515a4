"""Documents built to break parsers: nesting tens of thousands of levels deep (which
killed the process with SIGSEGV in both YAML parsers) and numbers longer than
Python's int-string limit (an internal error on every command)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hcpscan.core.yamldocs import (
    MAX_DEPTH,
    InputLimitError,
    YamlSyntaxError,
    load_json,
    load_one,
    parse_documents,
)
from hcpscan.sources import fastyaml
from tests.hostile.harness import GOOD, diagnostics, run_every_command, with_good

LEVELS = 30_000
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep, namespace: shop}\n"
DEEP = {
    "flow.yaml": CONFIGMAP + "data: " + "[" * LEVELS + "]" * LEVELS + "\n",
    "dashes.yaml": CONFIGMAP + "data:\n" + "- " * LEVELS + "x\n",
    "anchored.yaml": CONFIGMAP.replace("metadata:", "metadata: &m") + "x: " + "{a: " * LEVELS + "1" + "}" * LEVELS + "\n",
    "deep.json": '{"kind": "ConfigMap", "data": ' + '{"a": ' * LEVELS + "1" + "}" * LEVELS + "}\n",
}
LONG = {
    "decimal.json": '{"apiVersion": "v1", "kind": "ConfigMap", "data": {"n": ' + "9" * 5000 + "}}\n",
    "hex.yaml": CONFIGMAP + "data: {n: 0x" + "f" * 5000 + "}\n",
    "decimal.yaml": CONFIGMAP + "data:\n  n: " + "1" * 4400 + "\n",
}


def _every_command_over(tmp_path: Path, files: dict[str, str]) -> tuple[dict, dict]:
    """(runs, {file name: (line, message)}) of every command over the files and a good one."""
    tree = with_good(tmp_path / "dump")
    for name, text in files.items():
        (tree / name).write_text(text)
    runs = run_every_command(str(tree))
    return runs, {Path(d["path"]).name: (d["line"], d["message"]) for d in diagnostics(runs)}


@pytest.mark.parametrize("fast", ["1", "0"], ids=["yaml-rs", "pyyaml"])
def test_deep_documents_are_a_diagnostic_on_every_command(tmp_path: Path, monkeypatch, fast: str) -> None:
    monkeypatch.setenv("HCPSCAN_FAST_YAML", fast)
    runs, found = _every_command_over(tmp_path, DEEP)
    deeper = f"not read: nested deeper than {MAX_DEPTH} levels"
    assert found == {"flow.yaml": (4, deeper), "dashes.yaml": (5, deeper),
                     "anchored.yaml": (4, deeper), "deep.json": (1, deeper)}
    assert all(r.code == 2 for r in runs.values() if r.command != "proxy")


@pytest.mark.parametrize("fast", ["1", "0"], ids=["yaml-rs", "pyyaml"])
def test_numbers_beyond_the_int_limit_are_a_diagnostic_on_every_command(tmp_path: Path, monkeypatch,
                                                                         fast: str) -> None:
    monkeypatch.setenv("HCPSCAN_FAST_YAML", fast)
    _, found = _every_command_over(tmp_path, LONG)
    longer = "not read: a number longer than 4300 digits"
    assert found == {"decimal.json": (1, longer), "hex.yaml": (4, longer), "decimal.yaml": (5, longer)}


def test_the_documents_before_a_deep_one_are_kept() -> None:
    text = GOOD + "---\n" + DEEP["flow.yaml"] + "---\n" + GOOD
    docs = []
    with pytest.raises(InputLimitError) as raised:
        for doc in parse_documents(text):
            docs.append(doc)
    assert len(docs) == 1 and raised.value.line == GOOD.count("\n") + 5


def test_depth_at_the_limit_reads_the_same_on_both_paths() -> None:
    def nested(levels: int) -> str:
        return CONFIGMAP + "data:\n" + "".join("  " * i + "a:\n" for i in range(1, levels)) + "  " * levels + "a: 1\n"

    at_limit = nested(MAX_DEPTH - 1)  # the document itself is one level
    assert fastyaml.fast_documents(at_limit) is None or \
        [d.body for d in fastyaml.fast_documents(at_limit)] == [d.body for d in parse_documents(at_limit)]
    assert len(list(parse_documents(at_limit))) == 1
    with pytest.raises(InputLimitError):
        list(parse_documents(nested(MAX_DEPTH + 1)))
    assert fastyaml.fast_documents(nested(MAX_DEPTH + 1)) is None


def test_text_inside_objects_is_read_with_the_same_bounds() -> None:
    """Helm values and embedded configurations go through the same reader."""
    with pytest.raises(InputLimitError):
        load_one("a: " + "[" * LEVELS + "]" * LEVELS)
    with pytest.raises(YamlSyntaxError):
        load_one("a: 1\n---\nb: 2\n")
    assert load_one("") is None and load_one("a: [1]") == {"a": [1]}
    with pytest.raises(ValueError):
        load_json("[" * LEVELS + "]" * LEVELS)
    with pytest.raises(ValueError):
        load_json("9" * 5000)


def test_deep_helm_values_inside_a_secret(tmp_path: Path) -> None:
    """An embedded document is not a file: the rule that reads it says it cannot."""
    tree = with_good(tmp_path / "dump")
    deep = "cluster: " + "[" * LEVELS + "]" * LEVELS
    (tree / "values.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1-cluster-values, namespace: org-a}\n"
        f"data:\n  values: '{deep}'\n")
    run_every_command(str(tree))


@pytest.mark.parametrize("fast", ["1", "0"], ids=["yaml-rs", "pyyaml"])
def test_a_byte_order_mark_at_the_start_of_any_document_is_no_content(tmp_path: Path, monkeypatch,
                                                                       fast: str) -> None:
    """YAML allows a BOM before each document of a stream (files joined with `cat`); the
    second document was lost ("document has no 'kind'": its first key read as
    '\\ufeffapiVersion')."""
    from hcpscan.sources.loader import load_paths

    monkeypatch.setenv("HCPSCAN_FAST_YAML", fast)
    one = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: a}\n"
    path = tmp_path / "joined.yaml"
    path.write_bytes(("\ufeff" + one % "first" + "---\n\ufeff" + one % "second" + "\ufeff---\n"
                      + one % "third").encode())
    result = load_paths([str(path)])
    assert [(o.name, o.source.line) for o in result.objects] == [("first", 1), ("second", 5),
                                                                ("third", 9)]
    assert not result.diagnostics


@pytest.mark.parametrize("fast", ["1", "0"], ids=["yaml-rs", "pyyaml"])
def test_a_byte_order_mark_after_a_crlf_document_start_is_no_content(tmp_path: Path, monkeypatch,
                                                                      fast: str) -> None:
    """The same stream from a Windows checkout (CRLF line ends): the document after
    '---\\r\\n\\ufeff' was still lost ("document has no 'kind'")."""
    from hcpscan.sources.loader import load_paths

    monkeypatch.setenv("HCPSCAN_FAST_YAML", fast)
    one = "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: %s, namespace: a}\r\n"
    path = tmp_path / "joined.yaml"
    path.write_bytes(("\ufeff" + one % "first" + "--- \r\n\ufeff" + one % "second" + "---\r\n\ufeff"
                      + one % "third").encode())
    result = load_paths([str(path)])
    assert [(o.name, o.source.line) for o in result.objects] == [("first", 1), ("second", 5),
                                                                ("third", 9)]
    assert not result.diagnostics


@pytest.mark.parametrize("character", ["\x0c", "\x1b"])
def test_a_character_yaml_refuses_is_a_syntax_error_not_a_crash(character: str) -> None:
    # libyaml stops at it, and the depth walk's second look (PyYAML's pure-Python reader,
    # which checks every character as it is built) refused it outside its error handling:
    # an internal error ended the scan
    text = "# a" + character + "b\n" + CONFIGMAP
    with pytest.raises(YamlSyntaxError, match="unacceptable character"):
        list(parse_documents(text))


@pytest.mark.parametrize("fast", ["1", "0"], ids=["yaml-rs", "pyyaml"])
def test_a_document_of_no_manifest_with_keys_of_any_type_is_passed_over(tmp_path: Path,
                                                                        monkeypatch,
                                                                        fast: str) -> None:
    """Keys YAML reads as numbers, booleans, null or a float decide nothing: such a
    document is no manifest and is passed over; one that also has a misspelt 'Kind' is an
    error naming it, whichever key comes first."""
    from hcpscan.sources.loader import load_paths

    monkeypatch.setenv("HCPSCAN_FAST_YAML", fast)
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "odd.yml").write_text("1: a\ntrue: b\n~: c\n1.5: d\n"
                                      "---\n2: a\nKIND: Deployment\n")
    result = load_paths([str(tmp_path)])
    assert len(result.objects) == 1
    assert result.skipped.counts == {"not a manifest (YAML without kind or apiVersion)": 1}
    assert [(d.line, d.message) for d in result.diagnostics] == [
        (6, "document has no 'kind' (it has 'KIND': field names are case-sensitive)")]
