"""Which `.hcpscan.yaml` a run trusts: the working directory up to the repository root, or
`--config`; never one that came with the input, never one above the repository."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

PROXY_CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: proxy-env, namespace: monitoring}
data:
  HTTPS_PROXY: http://svc-proxy:Spring2026@proxy.corp.example.com:3128
"""
SWITCH_OFF = "ignore: [PRX]\n"  # every proxy rule off


def _dump(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "configmaps.yaml").write_text(PROXY_CONFIGMAP)
    return folder


def _scan(run_cli, *args: str) -> tuple[int, dict]:
    result = run_cli("scan", *args, "--no-progress", "--format", "json")
    return result.code, json.loads(result.out)


def _failing(report: dict) -> set[str]:
    return {f["rule_id"] for f in report["findings"] if f["status"] == "fail"}


def test_config_inside_the_scanned_dump_is_a_diagnostic_not_applied(run_cli, tmp_path, monkeypatch):
    dump = _dump(tmp_path / "customer-dump")
    (dump / ".hcpscan.yaml").write_text(SWITCH_OFF)
    monkeypatch.chdir(tmp_path)
    code, report = _scan(run_cli, str(dump))
    assert code == 1 and "PRX008" in _failing(report)
    assert report["scan"]["config"] is None
    (notice,) = [d for d in report["diagnostics"] if d["path"].endswith(".hcpscan.yaml")]
    assert notice["severity"] == "warning" and "not applied" in notice["message"]


def test_config_inside_a_scanned_archive_is_a_diagnostic(run_cli, tmp_path, monkeypatch):
    archive = tmp_path / "bundle.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in (("dump/configmaps.yaml", PROXY_CONFIGMAP), ("dump/.hcpscan.yml", SWITCH_OFF)):
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    monkeypatch.chdir(tmp_path)
    code, report = _scan(run_cli, str(archive))
    assert code == 1 and "PRX008" in _failing(report)
    assert any(d["path"] == f"{archive}!dump/.hcpscan.yml" for d in report["diagnostics"])


def test_config_in_the_working_directory_is_scanned_as_its_own_input_only_with_config(
        run_cli, tmp_path, monkeypatch):
    """`hcpscan scan .` of a checkout: the checkout's config is input too (a pull request
    can change it), so it applies only when the user names it."""
    _dump(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".hcpscan.yaml").write_text(SWITCH_OFF)
    monkeypatch.chdir(tmp_path)
    code, report = _scan(run_cli, ".")
    assert code == 1 and report["scan"]["config"] is None
    code, report = _scan(run_cli, ".", "--config", ".hcpscan.yaml")
    assert code == 0 and "PRX008" not in _failing(report)
    assert report["scan"]["config"]["path"] == ".hcpscan.yaml"
    assert not any(d["path"].endswith(".hcpscan.yaml") for d in report["diagnostics"])


def test_config_above_the_repository_root_is_not_applied(run_cli, tmp_path, monkeypatch):
    (tmp_path / ".hcpscan.yaml").write_text(SWITCH_OFF)  # e.g. a shared /tmp or $HOME
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    dump = _dump(repo / "dumps" / "one")
    monkeypatch.chdir(repo)
    code, report = _scan(run_cli, str(dump))
    assert code == 1 and report["scan"]["config"] is None


def test_config_outside_a_repository_is_only_taken_from_the_working_directory(
        run_cli, tmp_path, monkeypatch):
    (tmp_path / ".hcpscan.yaml").write_text(SWITCH_OFF)
    work = tmp_path / "work"
    work.mkdir()
    dump = _dump(tmp_path / "dump")
    monkeypatch.chdir(work)
    assert _scan(run_cli, str(dump))[1]["scan"]["config"] is None
    monkeypatch.chdir(tmp_path)
    assert _scan(run_cli, str(dump))[1]["scan"]["config"]["path"].endswith(".hcpscan.yaml")


def test_one_trusted_config_applies_to_every_path_and_is_named_in_every_report(
        run_cli, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    config = repo / ".hcpscan.yaml"
    config.write_text("ignore: [PRX008]\n")
    sub = repo / "clusters"
    sub.mkdir()
    first, second = _dump(tmp_path / "a"), _dump(tmp_path / "b")
    monkeypatch.chdir(sub)  # found upwards from the working directory, up to .git
    code, report = _scan(run_cli, str(first), str(second))
    assert "PRX008" not in _failing(report)
    digest = hashlib.sha256(config.read_bytes()).hexdigest()
    assert report["scan"]["config"] == {"path": str(config.resolve()), "sha256": digest}
    named = f"{config.resolve()} (sha256 {digest})"
    files = {fmt: tmp_path / f"r.{fmt}" for fmt in ("sarif", "junit", "markdown", "concise", "html")}
    table = run_cli("scan", str(first), "--no-progress", "--format", "table",
                    *(f"--format={fmt}={path}" for fmt, path in files.items()))
    assert f"Config: {named}" in table.out
    assert f"**Config:** {named}" in files["markdown"].read_text()
    assert f'value="{named}"' in files["junit"].read_text()
    assert f"Config: {named}" in files["concise"].read_text()
    assert f'<p id="config">Config: {named}</p>' in files["html"].read_text()
    sarif = json.loads(files["sarif"].read_text())
    assert sarif["runs"][0]["properties"]["config"]["sha256"] == digest


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_no_config_says_none(run_cli, tmp_path, monkeypatch, fmt):
    dump = _dump(tmp_path / "dump")
    (tmp_path / ".hcpscan.yaml").write_text(SWITCH_OFF)
    monkeypatch.chdir(tmp_path)
    result = run_cli("scan", str(dump), "--no-config", "--no-progress", "--format", fmt)
    assert result.code == 1
    assert ("Config: none" if fmt == "table" else "**Config:** none") in result.out
