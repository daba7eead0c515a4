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


CM = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s", "namespace": "shop"}}'


@pytest.mark.parametrize("name", ["items.json", "items.yaml"])
def test_json_values_one_per_line_are_all_read(tmp_path: Path, name: str):
    # `kubectl get cm -o json | jq -c '.items[]' > items.json`: only the first was read
    tree = with_good(tmp_path / "dump")
    (tree / name).write_text("\n".join(CM % n for n in ("first", "second", "third")) + "\n")
    runs = run_every_command(str(tree))
    objects = {(o["name"], o["source"]["line"]) for o in runs["inventory"].json()["objects"]
               if o["kind"] == "ConfigMap"}
    assert objects == {("first", 1), ("second", 2), ("third", 3)}
    assert diagnostics(runs) == []


def test_json_lines_on_standard_input_are_all_read():
    from tests.hostile.harness import hcpscan

    text = "\n".join(CM % n for n in ("first", "second")) + "\n"
    done = hcpscan("inventory", "-", "--format", "json", stdin=text.encode())
    assert done.returncode == 0, done.stderr
    import json
    assert {o["name"] for o in json.loads(done.stdout)["objects"]} == {"first", "second"}


def test_a_broken_json_line_is_said_and_the_lines_before_it_kept(tmp_path: Path):
    tree = with_good(tmp_path / "dump")
    (tree / "items.json").write_text(CM % "first" + "\n" + '{"kind": "ConfigMap",,}\n' + CM % "third" + "\n")
    runs = run_every_command(str(tree))
    assert [(d["line"], d["message"]) for d in diagnostics(runs)] == [
        (2, "invalid JSON: Expecting property name enclosed in double quotes")]
    names = {o["name"] for o in runs["inventory"].json()["objects"]}
    assert "first" in names and runs["scan"].code == 2


@pytest.mark.parametrize("fast", ["1", "0"], ids=["yaml-rs", "pyyaml"])
@pytest.mark.parametrize(("text", "line"), [
    # a document after the end marker `...` with no `---`: YAML 1.1 readers stop there
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first, namespace: shop}\n...\n"
     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lost, namespace: shop}\n", 5),
    # a second JSON value in a YAML document between `---` lines
    ("---\n" + CM % "first" + "\n" + CM % "lost" + "\n---\n" + CM % "after" + "\n", 3),
])
def test_a_document_no_separator_parts_from_the_one_before_is_said(tmp_path: Path, monkeypatch,
                                                                   fast: str, text: str, line: int):
    monkeypatch.setenv("HCPSCAN_FAST_YAML", fast)
    tree = with_good(tmp_path / "dump")
    (tree / "docs.yaml").write_text(text)
    runs = run_every_command(str(tree))
    said = [(d["line"], d["message"]) for d in diagnostics(runs)]
    assert said == [(line, "invalid YAML: a document follows the one before it with no `---` "
                           "line between them (after `...`, or a second JSON value): it was not read")]
    assert runs["scan"].code == 2
    names = {o["name"] for o in runs["inventory"].json()["objects"]}
    assert "first" in names and "lost" not in names
    assert "after" in names or "after" not in text


def test_a_list_inside_a_list_is_said_not_counted_as_an_object(tmp_path: Path):
    tree = with_good(tmp_path / "dump")
    (tree / "nested.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: v1\n  kind: List\n  items:\n"
        "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: inner, namespace: shop}}\n"
        "- apiVersion: v1\n  kind: ConfigMapList\n  items: {a: b}\n"
        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: outer, namespace: shop}}\n")
    runs = run_every_command(str(tree))
    said = [(d["line"], d["message"]) for d in diagnostics(runs)]
    assert said == [(4, "items[0] is itself a List: a List inside a List is not read"),
                    (8, "items[1] is itself a ConfigMapList: a List inside a List is not read")]
    kinds = {(o["kind"], o["name"]) for o in runs["inventory"].json()["objects"]}
    assert ("ConfigMap", "outer") in kinds and not any(k.endswith("List") for k, _ in kinds)


def _cli(*args: str, stdin: bytes | None = None):
    from tests.hostile.harness import hcpscan

    done = hcpscan(*args, stdin=stdin)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def test_two_reports_to_one_file_are_refused_and_nothing_is_written(tmp_path: Path):
    tree = with_good(tmp_path / "dump")
    out = tmp_path / "o.json"
    code, _, err = _cli("scan", str(tree), "--format", f"json={out}", "--format",
                        f"sarif={tmp_path}/./o.json")
    assert code == 2 and "the json and sarif reports both go to" in err and "Traceback" not in err
    assert not out.exists()


def test_a_report_over_the_scanned_file_is_refused_and_the_file_kept(tmp_path: Path):
    scanned = with_good(tmp_path / "dump") / "good.yaml"
    before = scanned.read_text()
    code, _, err = _cli("scan", str(scanned), "-o", str(scanned))
    assert code == 2 and f"would be written over {scanned}, which this run scans" in err
    assert scanned.read_text() == before


@pytest.mark.parametrize(("size", "words"), [("8000000000G", "is larger than 1024G"),
                                              ("\u00b2G", "is not a size")])
def test_a_max_file_size_beyond_any_input_is_a_usage_error(size: str, words: str):
    from tests.hostile.harness import GOOD

    code, _, err = _cli("scan", "-", "--max-file-size", size, stdin=GOOD.encode())
    assert code == 2 and words in err and "internal error" not in err


def test_standard_input_under_a_large_max_file_size_is_read():
    # read(limit + 1) allocated the limit first: 800G ended with a MemoryError
    from tests.hostile.harness import GOOD

    code, out, err = _cli("inventory", "-", "--max-file-size", "800G", "--format", "json",
                          stdin=GOOD.encode())
    assert code == 0, err
    assert "good-web" in out


@pytest.mark.parametrize(("redirect", "code", "words"), [
    (">&-", 2, "hcpscan: error: standard output is closed"),
    ("2>&-", 2, ""),  # nothing can be said: the exit code says it
    ("<&- -", 2, "hcpscan: error: standard input is closed, but `-` asks to read it"),
])
def test_a_closed_standard_stream_is_exit_2_not_findings_or_an_internal_error(tmp_path: Path,
                                                                            redirect, code, words):
    import shlex
    import subprocess
    import sys

    from tests.hostile.harness import ROOT

    tree = with_good(tmp_path / "dump")
    err = tmp_path / "err.txt"
    command = (f"{shlex.quote(sys.executable)} -m hcpscan scan {shlex.quote(str(tree))} "
               f"{redirect}")
    if not redirect.startswith("2"):
        command += f" 2>{shlex.quote(str(err))}"
    done = subprocess.run(["sh", "-c", command], cwd=ROOT, capture_output=True, timeout=120,
                          check=False)
    said = err.read_text() if err.exists() else ""
    assert done.returncode == code, said
    assert "Traceback" not in said and "internal error" not in said
    assert words in said


ANCHORED = """\
apiVersion: v1
kind: List
items:
- apiVersion: hypershift.openshift.io/v1beta1
  kind: HostedCluster
  metadata: {name: example, namespace: clusters}
  spec:
    configuration:
      proxy: &prx
        httpProxy: http://proxy.corp.example.com:3128
        httpsProxy: http://proxy.corp.example.com:3128
        noProxy: &np .corp.example.com,10.0.0.0/16
    networking:
      clusterNetwork: [{cidr: 10.132.0.0/14}]
      serviceNetwork: [{cidr: 172.31.0.0/16}]
    platform: {type: KubeVirt}
- apiVersion: hypershift.openshift.io/v1beta1
  kind: HostedCluster
  metadata: {name: example2, namespace: clusters}
  spec:
    configuration:
      proxy:
        <<: *prx
        noProxy: *np
    networking:
      clusterNetwork: [{cidr: 10.132.0.0/14}]
      serviceNetwork: [{cidr: 172.31.0.0/16}]
    platform: {type: KubeVirt}
"""


@pytest.mark.parametrize("how", ["--out", "--diff", "in place"])
def test_fix_never_writes_a_file_that_no_longer_parses_over_an_anchor(tmp_path: Path, how: str):
    # the noProxy fix replaced `&np .corp...` and dropped the anchor `*np` repeats below
    import yaml

    folder = tmp_path / "in"
    folder.mkdir()
    source = folder / "hc.yaml"
    source.write_text(ANCHORED)
    args = {"--out": ["--out", str(tmp_path / "out")], "--diff": ["--diff", str(tmp_path / "d.patch")],
            "in place": []}[how]
    code, _, err = _cli("fix", str(source), *args)
    assert code == 1 and "Traceback" not in err
    assert "fixed 0 finding(s)" in err and err.count("by hand: PRX005") == 2
    assert "shared through a YAML anchor" in err
    assert source.read_text() == ANCHORED
    assert not list((tmp_path / "out").rglob("*.yaml"))  # no copy written
    patch = tmp_path / "d.patch"
    assert not patch.exists() or patch.read_text().strip() == ""
    assert len(list(yaml.safe_load_all(source.read_text()))) == 1


def _tar(members: dict[str, str]) -> bytes:
    import io
    import tarfile

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, text in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    return out.getvalue()


@pytest.mark.parametrize(("cut", "words"), [
    (0, "it ends without the end-of-archive blocks"),  # at the boundary before c.yaml
    (100, "it ends inside a member's header"),  # inside c.yaml's header
])
def test_a_plain_tar_cut_at_a_member_boundary_or_inside_a_header_is_truncated(tmp_path: Path,
                                                                             cut: int, words: str):
    members = {f"{n}.yaml": CM % n + "\n" for n in ("a", "b", "c")}
    whole = _tar(members)
    boundary = 2 * (512 + 512)  # two members: a header block and a data block each
    tree = with_good(tmp_path / "dump")
    (tree / "cut.tar").write_bytes(whole[:boundary + cut])
    (tree / "whole.tar").write_bytes(whole)
    runs = run_every_command(str(tree))
    said = [(Path(d["path"]).name, d["message"]) for d in diagnostics(runs)
            if "is defined again" not in d["message"]]  # the two archives' a and b
    assert said == [("cut.tar", f"archive is truncated or corrupt after member 'b.yaml': {words}")]
    names = [o["name"] for o in runs["inventory"].json()["objects"] if o["kind"] == "ConfigMap"]
    assert sorted(names) == ["a", "a", "b", "b", "c"]  # the whole archive's three, the cut one's two


@pytest.mark.parametrize("command", [("scan", "--output-format", "full"), ("inventory",)])
def test_the_table_shows_at_most_200_input_problems_and_counts_the_rest(tmp_path: Path, command):
    # 200,000 of them took minutes to lay out; JSON still lists every one
    tree = with_good(tmp_path / "dump")
    # objects without kind (YAML with neither kind nor apiVersion nor metadata/spec is no
    # manifest, passed over: docs/gitops-repositories.md)
    (tree / "values.yaml").write_text("".join(f"---\nspec:\n  replicas: {n}\n" for n in range(250)))
    code, out, err = _cli(*command, str(tree))
    assert code == 2, err
    assert out.count("document has no 'kind'") == 200
    assert "…and 50 more input problems not shown here; all of them: --format json" in out
    code, out, _ = _cli(*command[:1], str(tree), "--format", "json")
    import json
    assert len(json.loads(out)["diagnostics"]) == 250


@pytest.mark.parametrize(("name", "text", "said"), [
    ("set.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: shop\n"
                 "  labels: !!set {x, y}\n", (6, "metadata.labels is a set (!!set), not a mapping")),
    ("kind.yaml", "apiVersion: v1\nkind: !!int 5\nmetadata: {name: a}\n",
     (1, "kind is 5 (a number), not a string: the document was not read")),
    ("array.json", '[{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}]\n',
     (1, "not a Kubernetes object (a list)")),
    ("on.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: on\n  namespace: shop\n",
     (1, "ConfigMap: metadata.name is true (a boolean), not a string: the API server rejects "
         "this object, so it was not read")),
    ("no.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: no\n",
     (1, "ConfigMap: metadata.namespace is false (a boolean), not a string: the API server "
         "rejects this object, so it was not read")),
])
def test_values_of_the_wrong_type_are_said_as_what_they_are(tmp_path: Path, name, text, said):
    tree = with_good(tmp_path / "dump")
    (tree / name).write_text(text)
    runs = run_every_command(str(tree))
    found = [(d["line"], d["message"]) for d in diagnostics(runs)]
    assert len(found) == 1 and found[0][0] == said[0] and said[1] in found[0][1], found
    assert {o["name"] for o in runs["inventory"].json()["objects"]} == {"good-web"}
