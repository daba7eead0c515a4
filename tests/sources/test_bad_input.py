"""Each kind of bad input becomes a diagnostic with path and line; the other files still load."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from hcpscan.sources.loader import load_paths

GOOD = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: good
  namespace: app
data:
  a: b
"""


def _load_with(tmp_path: Path, name: str, content: bytes | str):
    (tmp_path / "good.yaml").write_text(GOOD)
    bad = tmp_path / name
    bad.write_bytes(content.encode() if isinstance(content, str) else content)
    result = load_paths([str(tmp_path)])
    assert [o.name for o in result.objects] == ["good"], "the good file must still load"
    return result.diagnostics


def test_invalid_yaml_reports_the_line(tmp_path):
    diags = _load_with(tmp_path, "broken.yaml",
                       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   bad: [\n")
    assert len(diags) == 1
    assert diags[0].path.endswith("broken.yaml")
    assert diags[0].line == 5
    assert diags[0].message.startswith("invalid YAML")


def test_documents_before_a_syntax_error_are_kept(tmp_path):
    (tmp_path / "multi.yaml").write_text(GOOD.replace("good", "first") + "---\nkind: [\n")
    result = load_paths([str(tmp_path / "multi.yaml")])
    assert [o.name for o in result.objects] == ["first"]
    assert result.diagnostics[0].line == 9  # the unclosed bracket's line


def test_binary_file(tmp_path):
    diags = _load_with(tmp_path, "image.yaml", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    assert [d.message for d in diags] == ["binary file, not a manifest"]


def test_not_utf8(tmp_path):
    diags = _load_with(tmp_path, "latin1.yaml", "kind: ConfigMap\nname: caf\xe9\n".encode("latin-1"))
    assert diags[0].line == 2 and "UTF-8" in diags[0].message


def test_unreadable_file(tmp_path, monkeypatch):
    import os

    real_open = os.open

    def deny(path, *args, **kwargs):
        if str(path).endswith("secret.yaml"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    diags = _load_with(tmp_path, "secret.yaml", GOOD)
    assert len(diags) == 1 and "Permission denied" in diags[0].message


def test_document_meant_as_an_object_without_kind(tmp_path):
    """Written as an object (metadata, spec, apiVersion) but no kind: an error, never
    passed over."""
    text = ("metadata:\n  name: web\nspec:\n  replicas: 3\n---\n"
            "apiVersion: apps/v1\nreplicas: 3\n---\n"
            "Kind: ConfigMap\nApiVersion: v1\n")
    diags = _load_with(tmp_path, "deployment.yaml", text)
    assert [(d.line, d.message, d.severity) for d in diags] == [
        (1, "document has no 'kind'", "error"),
        (6, "document has no 'kind'", "error"),
        (9, "document has no 'kind' (it has 'Kind': field names are case-sensitive)", "error")]


@pytest.mark.parametrize("name, text", [
    ("codecov.yml", "coverage:\n  status:\n    project:\n      default:\n        target: 80%\n"),
    ("_config.yml", "theme: jekyll-theme-minimal\ntitle: Cluster configuration\n"),
    ("artifacthub-pkg.yml", "version: 1.6.0\nname: add-networkpolicy-dns\n"
                            "displayName: Add Network Policy for DNS\n"
                            "annotations:\n  kyverno/category: Multi-Tenancy\n"),
    ("values.yaml", "replicas: 3\nimage:\n  tag: v1\n")])
def test_other_tools_yaml_is_passed_over_and_counted(tmp_path, name, text):
    """A repository keeps tool configuration beside its manifests: neither apiVersion nor
    kind nor anything of an object. Passed over as JSON data is, and said so."""
    assert _load_with(tmp_path, name, text) == []
    result = load_paths([str(tmp_path)])
    assert result.skipped.counts == {"not a manifest (YAML without kind or apiVersion)": 1}


def test_list_item_without_kind(tmp_path):
    text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  metadata: {name: x}\n"
    diags = _load_with(tmp_path, "list.yaml", text)
    assert [(d.line, d.message) for d in diags] == [(4, "object has no 'kind'")]


def test_unrendered_helm_template(tmp_path):
    text = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
            "  name: {{ include \"app.fullname\" . }}\n")
    diags = _load_with(tmp_path, "deployment.yaml", text)
    assert len(diags) == 1
    assert diags[0].line == 4 and "Helm template" in diags[0].message
    assert "helm template" in diags[0].hint


def test_prometheus_templates_are_not_mistaken_for_helm(tmp_path):
    rule = ("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata: {name: r}\n"
            "spec:\n  groups:\n  - rules:\n    - annotations:\n"
            "        summary: '{{ $labels.instance }} is down'\n")
    (tmp_path / "rule.yaml").write_text(rule)
    result = load_paths([str(tmp_path)])
    assert result.diagnostics == [] and result.objects[0].kind == "PrometheusRule"


def test_truncated_archive_keeps_members_before_the_damage(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for i in range(40):
            data = GOOD.replace("good", f"cm-{i}").encode() + b"#" * 4000 + b"\n"
            info = tarfile.TarInfo(f"dump/namespaces/app/core/configmaps/cm-{i}.yaml")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    blob = buf.getvalue()
    archive = tmp_path / "dump.tar.gz"
    archive.write_bytes(blob[: len(blob) // 2])
    (tmp_path / "other.yaml").write_text(GOOD)

    result = load_paths([str(archive), str(tmp_path / "other.yaml")])

    names = {o.name for o in result.objects}
    assert "good" in names and "cm-0" in names and "cm-39" not in names
    assert len(result.diagnostics) == 1
    assert result.diagnostics[0].path == str(archive)
    assert "truncated" in result.diagnostics[0].message


def test_corrupt_zip(tmp_path):
    diags = _load_with(tmp_path, "dump.zip", b"PK\x03\x04 not really a zip")
    assert "zip" in diags[0].message


def test_json_with_tabs_falls_back_to_the_json_parser(tmp_path):
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tabbed"}}
    (tmp_path / "cm.json").write_text(json.dumps(doc, indent="\t"))
    result = load_paths([str(tmp_path / "cm.json")])
    assert result.diagnostics == [] and result.objects[0].name == "tabbed"


def test_other_files_are_counted_not_silently_dropped(tmp_path):
    (tmp_path / "README.md").write_text("# notes\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config.yaml").write_text(GOOD)
    diags = _load_with(tmp_path, "notes.txt", "hello")
    assert diags == []
    result = load_paths([str(tmp_path)])
    assert result.skipped.counts == {"hidden folder": 1, "not a manifest (.md)": 1,
                                     "not a manifest (.txt)": 1}


def test_archive_members_with_dotdot_are_read_and_links_are_reported(tmp_path):
    archive = tmp_path / "odd.tar"
    with tarfile.open(archive, "w") as tar:
        for name in ("../evil/cm.yaml", "./a/../b.yaml"):
            data = GOOD.replace("good", name.split("/")[-1].split(".")[0]).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("link.yaml")
        link.type, link.linkname = tarfile.SYMTYPE, "b.yaml"
        tar.addfile(link)
        fifo = tarfile.TarInfo("pipe")
        fifo.type = tarfile.FIFOTYPE
        tar.addfile(fifo)
    result = load_paths([str(archive)])
    assert sorted(o.name for o in result.objects) == ["b", "cm"]
    assert result.skipped.counts == {"symbolic link in an archive (not followed)": 1,
                                     "special file in an archive (device, FIFO)": 1}


def test_wrongly_typed_documents_are_reported(tmp_path):
    (tmp_path / "odd.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: x\n---\n"
        "apiVersion: v1\nkind: List\nitems: x\n---\n"
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap}\n")
    result = load_paths([str(tmp_path / "odd.yaml")])
    messages = [(d.line, d.message) for d in result.diagnostics]
    assert (1, "ConfigMap: metadata is a str, not a mapping") in messages
    assert (5, "List: items is a str, not a list") in messages
    assert (12, "ConfigMap has no metadata.name") in messages


def test_links_to_folders_are_reported_not_followed(tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir()
    (real / "svc.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
    scanned = tmp_path / "scanned"
    scanned.mkdir()
    (scanned / "ns.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")
    (scanned / "linked").symlink_to(real, target_is_directory=True)
    result = load_paths([str(scanned)])
    assert [o.kind for o in result.objects] == ["Namespace"]
    assert result.skipped.counts == {"symbolic link to a folder (not followed)": 1}


def test_archive_member_names_that_are_not_utf8_are_shown_with_a_replacement(tmp_path):
    archive = tmp_path / "dump.tar"
    body = b"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"
    with tarfile.open(archive, "w", format=tarfile.GNU_FORMAT, encoding="latin-1") as tar:
        info = tarfile.TarInfo("caf\xe9.yaml")  # written as the single byte 0xe9
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    (obj,) = load_paths([str(archive)]).objects
    assert obj.source.path == f"{archive}!caf\ufffd.yaml"
    json.dumps(obj.source.to_json(), ensure_ascii=False).encode("utf-8")  # reports can write it
