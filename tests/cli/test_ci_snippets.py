"""The CI recipes (docs/ci.md): CI and pre-commit snippets work as written, from a checkout with a config."""

from __future__ import annotations

import json
import re
import shlex

import yaml

from tests.cli.test_config_trust import PROXY_CONFIGMAP, SWITCH_OFF
from tests.conftest import ROOT

CI_DOC = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")


def _yaml_blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", CI_DOC, flags=re.S)


def _checkout(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "clusters").mkdir()
    (tmp_path / "clusters" / "proxy.yaml").write_text(PROXY_CONFIGMAP)
    return tmp_path


def _hcpscan_lines(block: str) -> list[list[str]]:
    lines = []
    for line in block.splitlines():
        command = line.strip().removeprefix("- ").removeprefix("run: ").strip()
        if command.startswith("hcpscan "):
            lines.append(shlex.split(command)[1:])
    return lines


def test_the_pre_commit_snippet_names_this_repositorys_hook_and_an_existing_rev():
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    (block,) = [b for b in _yaml_blocks() if "rev:" in b]
    repo = yaml.safe_load(block)["repos"][0]
    assert [h["id"] for h in repo["hooks"]] == ["hcpscan"] and "hcpscan" in hooks
    # no release tag exists yet: a branch or a commit, never an invented tag
    assert repo["rev"] == "main" or re.fullmatch(r"[0-9a-f]{40}", repo["rev"])


def test_the_pre_commit_hook_applies_the_repositorys_config(run_cli, tmp_path, monkeypatch):
    hook = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())[0]
    assert hook["pass_filenames"] is False
    checkout = _checkout(tmp_path)
    monkeypatch.chdir(checkout)
    entry = shlex.split(hook["entry"])
    assert entry[0] == "hcpscan"
    assert run_cli(*entry[1:], *hook["args"]).code == 1  # the proxy password is a finding
    (checkout / ".hcpscan.yaml").write_text(SWITCH_OFF)
    result = run_cli(*entry[1:], *hook["args"])
    assert result.code == 0, result.out + result.err
    assert "not applied" not in result.out + result.err


def test_the_ci_commands_run_as_written(run_cli, tmp_path, monkeypatch):
    checkout = _checkout(tmp_path)
    monkeypatch.chdir(checkout)
    commands = [c for b in _yaml_blocks() if "pip install" in b for c in _hcpscan_lines(b)]
    assert len(commands) >= 2
    outputs = []
    for args in commands:
        result = run_cli(*args)
        assert result.code == 1, (args, result.err)  # findings: the job fails, as it should
        assert "error" not in result.err.lower(), result.err
        outputs.append(result.out)
    assert any(line.startswith("::error ") and "file=clusters/proxy.yaml" in line
               for out in outputs for line in out.splitlines())
    for written in ("hcpscan.sarif", "gl-code-quality.json"):
        assert json.loads((checkout / written).read_text())
    assert (checkout / "hcpscan.xml").read_text().startswith("<?xml")
