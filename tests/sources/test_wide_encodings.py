"""UTF-16 and UTF-32 manifests (PowerShell 5.1's `kubectl get ... > file.yaml` writes UTF-16LE
with a byte order mark and CRLF) are read like UTF-8 ones, with the same lines; YAML 1.2
section 5.2 detects them by the byte order mark or the zero bytes around the first character."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from hcpscan.core.textcodec import decode_text, sniff_encoding, wide_text
from hcpscan.findings.model import Status
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES
from tests.rules.harness import scan

TEXT = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: first
  namespace: shop
data:
  a: b
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: proxy-env
  namespace: shop
data:
  HTTPS_PROXY: http://user:secret@proxy.corp.example.com:3128
"""
CREDENTIALS_LINE = 15  # HTTPS_PROXY of the second document

ENCODINGS = {
    "utf-16-le-bom": b"\xff\xfe" + TEXT.encode("utf-16-le"),
    "utf-16-be-bom": b"\xfe\xff" + TEXT.encode("utf-16-be"),
    "utf-32-le-bom": b"\xff\xfe\x00\x00" + TEXT.encode("utf-32-le"),
    "utf-32-be-bom": b"\x00\x00\xfe\xff" + TEXT.encode("utf-32-be"),
    "utf-16-le": TEXT.encode("utf-16-le"),
    "utf-16-be": TEXT.encode("utf-16-be"),
    "utf-32-le": TEXT.encode("utf-32-le"),
    "powershell": b"\xff\xfe" + TEXT.replace("\n", "\r\n").encode("utf-16-le"),
    "utf-16-le-cr": TEXT.replace("\n", "\r").encode("utf-16-le"),  # composed whole to place
}


@pytest.mark.parametrize("name", ENCODINGS)
def test_a_wide_file_is_read_with_its_lines(tmp_path: Path, name: str):
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(ENCODINGS[name])
    result = load_paths([str(tmp_path)])
    assert result.diagnostics == []
    assert [(o.name, o.source.line) for o in result.objects] == [("first", 1), ("proxy-env", 9)]
    report = scan([tmp_path], ["PRX008"])
    assert report.results[0].status is Status.FAIL
    assert [(f.location.path, f.location.line) for f in report.findings] == \
        [(str(path), CREDENTIALS_LINE)]


def test_a_wide_member_of_a_tar_archive_is_read(tmp_path: Path, run_cli):
    archive = tmp_path / "dump.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for codec, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
            end = codec[-2:]
            data = bom + TEXT.replace("first", f"first-{end}").replace(
                "proxy-env", f"env-{end}").replace("\n", "\r\n").encode(codec)
            info = tarfile.TarInfo(f"exported/{codec}.yaml")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    result = load_paths([str(archive)])
    assert result.diagnostics == []
    assert sorted((o.name, o.source.line) for o in result.objects) == \
        [("env-be", 9), ("env-le", 9), ("first-be", 1), ("first-le", 1)]
    # as a user runs it: the CLI reads the members again to place each finding's field
    run = run_cli("scan", str(archive), "--select", "PRX008", "--format", "json", "--no-progress")
    assert run.code == 1, run.err
    found = json.loads(run.out)["findings"]
    assert sorted((f["location"]["path"].rsplit("/", 1)[-1], f["location"]["line"])
                  for f in found) == [("utf-16-be.yaml", CREDENTIALS_LINE),
                                      ("utf-16-le.yaml", CREDENTIALS_LINE)]


@pytest.mark.parametrize("data", [
    b"\xff\xfe" + b"a\x00\x00\xdc",  # a UTF-16LE mark, then a lone low surrogate
    b"\x89PNG\r\n\x1a\n\x00\x00\x00",
    b"k\x00i\x00\x00\x00n\x00",  # sniffed as UTF-16LE, but holds NUL
    b"a\x00",  # sniffed as UTF-16LE "a": no mark, no line break, no ':'
    b"\x00a",  # UTF-16BE alike
    b"k\x00:\x00\x1b\x00\n\x00",  # a control character YAML does not allow (ESC)
    b"\xff\xfek\x00\x07\x00",  # with a mark, still a control character (BEL)
])
def test_a_binary_file_stays_refused(tmp_path: Path, data: bytes):
    (tmp_path / "good.yaml").write_text(TEXT)
    (tmp_path / "image.yaml").write_bytes(data)
    result = load_paths([str(tmp_path)])
    assert [o.name for o in result.objects] == ["first", "proxy-env"]
    assert [d.message.split(" (")[0] for d in result.diagnostics] == ["binary file, not a manifest"]
    assert result.diagnostics[0].path.endswith("image.yaml")


@pytest.mark.parametrize(("data", "codec"), [
    (b"\xef\xbb\xbfa", "utf-8"), (b"\xff\xfe\x00\x00a\x00\x00\x00", "utf-32-le"),
    (b"\xff\xfea\x00", "utf-16-le"), (b"\x00\x00\x00a", "utf-32-be"), (b"a\x00\x00\x00", "utf-32-le"),
    (b"\x00a", "utf-16-be"), (b"a\x00", "utf-16-le"), (b"ab", "utf-8"), (b"", "utf-8"),
    (b"\x00\xe9", "utf-8"),  # the first character must be ASCII for the pattern to say
])
def test_the_encoding_is_sniffed_as_yaml_1_2_says(data: bytes, codec: str):
    assert sniff_encoding(data)[0] == codec


def test_decoding_drops_the_byte_order_mark():
    assert decode_text(b"\xfe\xff" + "kind: x".encode("utf-16-be")) == "kind: x"


def test_fix_names_the_change_by_hand_and_leaves_a_wide_file_as_it_is(tmp_path: Path, run_cli):
    text = (FIXTURES / "rules" / "HCP004" / "fail" / "payments-egress.yaml").read_text()
    path = tmp_path / "payments.yaml"
    data = b"\xff\xfe" + text.replace("\n", "\r\n").encode("utf-16-le")
    path.write_bytes(data)
    run = run_cli("fix", str(tmp_path), "--no-progress", "--no-config", "--select", "HCP004")
    assert path.read_bytes() == data  # never rewritten as UTF-8
    said = run.err + run.out
    assert "by hand" in said and "writes UTF-8 files only" in said
    # what the file is, not a decoding error that never happened
    assert "the file is UTF-16-LE" in said
    assert "codec" not in said and "decode" not in said and "position 0" not in said


def test_a_json_list_powershell_wrote_is_read_with_its_lines(tmp_path: Path):
    """`kubectl get configmaps -o json > cm.json` in PowerShell 5.1: UTF-16LE, BOM, CRLF."""
    body = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "proxy-env", "namespace": "shop"},
         "data": {"HTTPS_PROXY": "http://user:secret@proxy.corp.example.com:3128"}}]}
    text = json.dumps(body, indent=4).replace("\n", "\r\n")
    (tmp_path / "cm.json").write_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
    report = scan([tmp_path], ["PRX008"])
    assert [f.location.line for f in report.findings] == [13]  # "HTTPS_PROXY": ...


@pytest.mark.parametrize(("data", "text"), [
    ("kind: x\n".encode("utf-16-le"), "kind: x\n"),  # no mark: a line break and a ':'
    ("kind: x".encode("utf-16-be"), "kind: x"),  # no mark, no line break: the ':' says
    ("a\r\n".encode("utf-32-le"), "a\r\n"),  # a line break says
    (b"\xff\xfe" + "a".encode("utf-16-le"), "a"),  # a mark says, however short
    ("k: \u00e9\u2603\U0001f600\tv\n".encode("utf-16-le"), "k: \u00e9\u2603\U0001f600\tv\n"),
    (b"a\x00", None), ("a".encode("utf-32-le"), None),  # no mark, nothing YAML-like
    ("k: \x01\n".encode("utf-16-le"), None), ("k: \ufffe\n".encode("utf-16-le"), None),
    (b"kind: x\n", None),  # UTF-8: not a wide text
])
def test_a_wide_text_is_exactly_yaml_characters_and_says_itself(data: bytes, text: str | None):
    assert wide_text(data) == text


def test_two_bytes_of_binary_are_a_binary_file_not_a_string(tmp_path: Path):
    (tmp_path / "tiny.yaml").write_bytes(b"a\x00")
    result = load_paths([str(tmp_path)])
    assert result.objects == []
    (diagnostic,) = result.diagnostics
    assert diagnostic.message.startswith("binary file, not a manifest")
    assert "UTF-16-LE" in diagnostic.message and "no YAML text" in diagnostic.message
    assert "a str" not in diagnostic.message
