"""Rule, config and perimeter files are input too: the same size and node budgets (an
alias counts as what it repeats) as input files, checked before any parser builds them
(issue 22 item 4). Before, a rule file with an alias bomb under --rules hung at 100 % CPU."""

from __future__ import annotations

import os
import threading

import pytest

from tests.conftest import FIXTURES

EXAMPLE = str(FIXTURES / "example")


def _bomb(indent: str = "") -> str:
    """Ten levels of ten aliases each: 10^10 nodes from 12 lines."""
    lines = [f"{indent}a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{indent}a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 11)]
    return "\n".join(lines) + "\n"


RULE = """\
id: BOMB001
title: a rule with a bomb in its params
severity: low
message: "{object}"
applies_to: {kinds: [ConfigMap]}
check:
  template: cel
  params:
    expression: "true"
    junk:
"""


def _in_time(run_cli, *args: str):  # type: ignore[no-untyped-def]
    """The command's result; fails (rather than hangs the suite) past 60 s."""
    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.append(run_cli(*args)), daemon=True)
    thread.start()
    thread.join(60)
    assert outcome, f"hcpscan {' '.join(args)} did not end within 60 s"
    return outcome[0]


def test_a_rule_file_alias_bomb_is_refused_with_its_file_and_line(run_cli, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "BOMB001.yaml").write_text(RULE + _bomb("      "))
    result = _in_time(run_cli, "scan", EXAMPLE, "--no-progress", "--no-config", "--rules", str(rules))
    assert result.code == 2
    assert "BOMB001.yaml:" in result.err and "more than 5,000,000 nodes" in result.err


def test_a_config_file_alias_bomb_is_refused(run_cli, tmp_path):
    config = tmp_path / ".hcpscan.yaml"
    config.write_text("select: [HCP]\nexemptions_junk:\n" + _bomb("  "))
    result = _in_time(run_cli, "scan", EXAMPLE, "--no-progress", "--config", str(config))
    assert result.code == 2 and "more than 5,000,000 nodes" in result.err and str(config) in result.err


def test_a_perimeter_file_alias_bomb_is_refused(run_cli, tmp_path):
    perimeter = tmp_path / "perimeter.yaml"
    perimeter.write_text("default: deny\n" + _bomb())
    result = _in_time(run_cli, "scan", EXAMPLE, "--no-progress", "--no-config",
                      "--firewall", str(perimeter))
    assert result.code == 2 and "more than 5,000,000 nodes" in result.err


def test_a_rule_file_larger_than_an_input_file_may_be_is_not_read(tmp_path, monkeypatch):
    from hcpscan.rules.loader import RuleFileError, load_rule_file
    from hcpscan.sources import bounded

    path = tmp_path / "BIG001.yaml"
    path.write_text(RULE.replace("    junk:\n", "") + "# " + "x" * 5000 + "\n")
    monkeypatch.setattr(bounded, "MAX_FILE_BYTES", 4096)
    with pytest.raises(RuleFileError) as info:
        load_rule_file(path)
    assert "larger than" in info.value.message


def test_a_fifo_among_rule_files_is_never_opened(run_cli, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    os.mkfifo(rules / "FIFO001.yaml")
    result = _in_time(run_cli, "scan", EXAMPLE, "--no-progress", "--no-config", "--rules", str(rules))
    assert result.code == 2 and "not a regular file" in result.err


def _deep(prefix: str) -> str:
    return prefix + "[" * 30_000 + "]" * 30_000 + "\n"


def test_a_deeply_nested_perimeter_file_is_refused_not_an_internal_error(run_cli, tmp_path):
    # PyYAML's composer recurses: without the depth budget this ended in RecursionError (exit 4)
    perimeter = tmp_path / "perimeter.yaml"
    perimeter.write_text(_deep("default: deny\nrules: "))
    result = _in_time(run_cli, "scan", EXAMPLE, "--no-progress", "--no-config",
                      "--firewall", str(perimeter))
    assert result.code == 2 and "nested deeper than 200 levels" in result.err
    assert "perimeter.yaml:2" in result.err and "internal error" not in result.err


def test_a_deeply_nested_kubeconfig_is_refused_not_an_internal_error(run_cli, tmp_path):
    config = tmp_path / "kubeconfig"
    config.write_text(_deep("apiVersion: v1\nkind: Config\nclusters: "))
    result = _in_time(run_cli, "cluster", "--kubeconfig", str(config), "--no-config")
    assert result.code == 2 and "internal error" not in result.err
    assert f"{config}:3: nested deeper than 200 levels" in result.err


def test_a_deeply_nested_kustomization_is_no_internal_error(run_cli, tmp_path):
    (tmp_path / "kustomization.yaml").write_text(
        _deep("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: "))
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    result = _in_time(run_cli, "scan", str(tmp_path), "--no-progress", "--no-config")
    assert result.code in (0, 1, 2) and "internal error" not in result.err, result.err


@pytest.mark.parametrize(("content", "words"), [
    (b"[" * 100_000 + b"]" * 100_000, "nested too deep"),  # was RecursionError, exit 4
    (b"\xff\xfe{}", "not UTF-8 text"),  # was UnicodeDecodeError, exit 4
])
def test_a_hostile_baseline_is_a_usage_error(run_cli, tmp_path, content, words):
    baseline = tmp_path / "baseline.json"
    baseline.write_bytes(content)
    result = _in_time(run_cli, "scan", EXAMPLE, "--no-progress", "--no-config",
                      "--baseline", str(baseline))
    assert result.code == 2 and words in result.err and "internal error" not in result.err
