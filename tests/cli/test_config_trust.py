"""Which `.hcpscan.yaml` a run trusts: the working directory up to the repository root, or
`--config`; never one that came with the input, never one above the repository."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from tests.conftest import require

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


def test_the_repositorys_config_applies_to_a_scan_of_the_repository(run_cli, tmp_path, monkeypatch):
    """`hcpscan scan .` from a checkout's root, as CI does: the project's config applies,
    as ruff, checkov and kube-linter apply theirs, and is not reported as input."""
    _dump(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".hcpscan.yaml").write_text(SWITCH_OFF)
    monkeypatch.chdir(tmp_path)
    code, report = _scan(run_cli, ".")
    assert code == 0 and "PRX008" not in _failing(report)
    assert report["scan"]["config"]["path"].endswith(".hcpscan.yaml")
    assert not any(d["path"].endswith(".hcpscan.yaml") for d in report["diagnostics"])


def test_pre_commit_passes_file_names_from_the_root(run_cli, tmp_path, monkeypatch):
    """pre-commit runs the hook at the repository root with the changed files, the
    config among them when it changed."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".hcpscan.yaml").write_text(SWITCH_OFF)
    _dump(tmp_path / "clusters")
    monkeypatch.chdir(tmp_path)
    code, report = _scan(run_cli, "clusters/configmaps.yaml", ".hcpscan.yaml")
    assert code == 0 and report["scan"]["config"]["path"].endswith(".hcpscan.yaml")


def test_from_a_subfolder_the_nearest_config_up_to_the_root_applies(run_cli, tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".hcpscan.yaml").write_text(SWITCH_OFF)
    sub = _dump(tmp_path / "clusters" / "prod")
    monkeypatch.chdir(sub)
    code, report = _scan(run_cli, ".")
    assert code == 0 and report["scan"]["config"]["path"] == str((tmp_path / ".hcpscan.yaml").resolve())


def test_a_dump_in_the_repository_does_not_configure_its_own_scan(run_cli, tmp_path, monkeypatch):
    """A received dump (or a vendored repository) kept in the checkout: its config is
    deeper than the working directory, so it is input, reported and not applied."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".hcpscan.yaml").write_text("fail_on: high\n")
    dump = _dump(tmp_path / "received" / "customer-dump")
    (dump / ".hcpscan.yaml").write_text(SWITCH_OFF)
    (dump / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    code, report = _scan(run_cli, ".")
    assert code == 1 and "PRX008" in _failing(report)
    assert report["scan"]["config"]["path"] == str((tmp_path / ".hcpscan.yaml").resolve())
    (notice,) = [d for d in report["diagnostics"] if d["path"].endswith(".hcpscan.yaml")]
    assert "customer-dump" in notice["path"] and "not applied" in notice["message"]


def test_outside_a_checkout_an_entered_dump_does_not_configure_its_scan(run_cli, tmp_path, monkeypatch):
    dump = _dump(tmp_path / "customer-dump")
    (dump / ".hcpscan.yaml").write_text(SWITCH_OFF)
    monkeypatch.chdir(dump)
    code, report = _scan(run_cli, ".")
    assert code == 1 and report["scan"]["config"] is None
    assert any("not applied" in d["message"] for d in report["diagnostics"])
    code, report = _scan(run_cli, ".", "--config", ".hcpscan.yaml")
    assert code == 0 and "PRX008" not in _failing(report)


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


def _git(folder: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-C", str(folder), "-c", "user.email=t@example.com", "-c", "user.name=t",
                    *args], check=True, capture_output=True)


def test_a_dump_entered_inside_a_checkout_does_not_configure_its_own_scan(run_cli, tmp_path, monkeypatch):
    """A received dump unpacked in a checkout (or under a home folder kept in git) and
    entered: its config is untracked, so it is input - reported, not applied - and the
    checkout's own config applies. A config git tracks (a monorepo's subproject) applies."""
    import shutil

    require(shutil.which("git"), "git")
    _git(tmp_path, "init", "-q")
    (tmp_path / ".hcpscan.yaml").write_text("fail_on: high\n")
    dump = _dump(tmp_path / "cases" / "customer-dump")
    (dump / ".hcpscan.yaml").write_text(SWITCH_OFF)
    monkeypatch.chdir(dump)
    code, report = _scan(run_cli, ".")
    assert code == 1 and "PRX008" in _failing(report)
    assert report["scan"]["config"]["path"] == str((tmp_path / ".hcpscan.yaml").resolve())
    assert any(d["path"].endswith(".hcpscan.yaml") and "not applied" in d["message"]
               for d in report["diagnostics"])
    _git(tmp_path, "add", "cases/customer-dump/.hcpscan.yaml")
    code, report = _scan(run_cli, ".")
    assert code == 0 and "PRX008" not in _failing(report)
    assert report["scan"]["config"]["path"].endswith("customer-dump/.hcpscan.yaml")
