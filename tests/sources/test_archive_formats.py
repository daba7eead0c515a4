"""Must-gathers are shipped as .tar.gz, .tar.xz (.txz) or .tar.bz2: each is read the same way."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from hcpscan.sources.loader import load_paths

PREFIX = "must-gather.local.77/quay-io-openshift-must-gather-sha256-1f2e/"
FILES = {
    "timestamp": "2026-11-24 09:00:00 start\n",
    "namespaces/clusters/clusters.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: clusters\n",
    "namespaces/clusters/core/configmaps.yaml": (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: proxy-env\n    namespace: clusters\n"
        "  data:\n    HTTPS_PROXY: http://proxy.corp.example.com:3128\n"),
    "cluster-scoped-resources/config.openshift.io/proxies.yaml": (
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: config.openshift.io/v1\n  kind: Proxy\n"
        "  metadata:\n    name: cluster\n  spec:\n    httpsProxy: http://proxy.corp.example.com:3128\n"),
}


def _pack(path: Path, mode: str) -> Path:
    with tarfile.open(path, mode) as tar:
        for name, text in FILES.items():
            data = text.encode()
            info = tarfile.TarInfo(PREFIX + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _read(path: Path) -> list[tuple[str, str, str, int]]:
    result = load_paths([str(path)])
    assert result.diagnostics == []
    return [(o.kind, o.namespace, o.name, o.source.line) for o in result.objects]


@pytest.mark.parametrize("name,mode", [("must-gather.tar.xz", "w:xz"), ("must-gather.txz", "w:xz"),
                                       ("must-gather.tar.bz2", "w:bz2")])
def test_compressed_tars_read_like_tar_gz(tmp_path, name, mode):
    expected = _read(_pack(tmp_path / "must-gather.tar.gz", "w:gz"))
    assert len(expected) == 3
    assert _read(_pack(tmp_path / name, mode)) == expected


def test_a_tar_xz_in_a_folder_is_opened(tmp_path):
    _pack(tmp_path / "case-0042-must-gather.tar.xz", "w:xz")
    kinds = sorted(o.kind for o in load_paths([str(tmp_path)]).objects)
    assert kinds == ["ConfigMap", "Namespace", "Proxy"]


def test_scan_of_a_tar_xz_points_into_the_member(tmp_path, run_cli):
    archive = _pack(tmp_path / "must-gather.tar.xz", "w:xz")
    result = run_cli("scan", str(archive), "--format", "json", "--fail-on", "critical")
    assert result.code in (0, 1), result.err
    assert "archive" not in result.err
    import json

    report = json.loads(result.out)
    assert report["inventory"]["total"] == 3
    assert not [d for d in report["diagnostics"] if "archive" in d["message"]]


def test_a_truncated_tar_xz_keeps_what_was_read(tmp_path):
    archive = _pack(tmp_path / "must-gather.tar.xz", "w:xz")
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    result = load_paths([str(archive)])
    assert any("truncated or corrupt" in d.message for d in result.diagnostics)
