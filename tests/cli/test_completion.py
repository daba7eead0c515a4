"""`hcpscan completion`: scripts generated from the parser complete commands, flags and rule ids."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import requirement

_bash = requirement(lambda: shutil.which("bash"), "bash")


@pytest.fixture(scope="module")
def bash_script() -> str:
    from hcpscan.cli.completion_cmd import script

    return script("bash")


def complete(script: str, *words: str) -> list[str]:
    """What bash offers after ``words`` (the last one being typed)."""
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    program = (f"{script}\nCOMP_WORDS=({quoted}); COMP_CWORD=$((${{#COMP_WORDS[@]}}-1)); "
               'COMPREPLY=(); _hcpscan; printf "%s\\n" "${COMPREPLY[@]}"')
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line]


def test_subcommands(bash_script):
    assert complete(bash_script, "hcpscan", "sc") == ["scan"]
    assert set(complete(bash_script, "hcpscan", "")) >= {"scan", "cluster", "connectivity", "rules",
                                                         "noproxy", "completion"}
    assert complete(bash_script, "hcpscan", "rules", "") == ["list", "show"]


def test_flags_of_the_subcommand(bash_script):
    flags = complete(bash_script, "hcpscan", "scan", "./dump", "--")
    assert {"--format", "--select", "--quiet", "--verbose", "--junit-extended"} <= set(flags)
    assert "--svg" not in flags  # connectivity's, not scan's
    assert "--svg" in complete(bash_script, "hcpscan", "connectivity", "--s")


def test_values_of_flags(bash_script):
    assert {"github", "gitlab", "sarif", "junit"} <= set(complete(bash_script, "hcpscan", "scan", "--format", ""))
    assert complete(bash_script, "hcpscan", "scan", "--fail-on", "h") == ["high"]
    assert "HCP001" in complete(bash_script, "hcpscan", "scan", "--select", "HC")
    assert "proxy" in complete(bash_script, "hcpscan", "scan", "--ignore", "pr")


def test_rule_ids_after_rules_show(bash_script):
    offered = complete(bash_script, "hcpscan", "rules", "show", "prx00")
    assert offered and all(o.startswith("PRX00") for o in offered) and "PRX008" in offered


def test_a_value_flag_does_not_count_as_a_subcommand(bash_script):
    # "rules" after --select is a value (a category name could look like a command)
    assert "--format" in complete(bash_script, "hcpscan", "scan", "--select", "rules", "--fo")


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_other_shells(run_cli, shell):
    result = run_cli("completion", shell)
    assert result.code == 0
    if shell == "zsh":
        assert result.out.startswith("#compdef hcpscan") and "bashcompinit" in result.out
    else:
        assert "complete -c hcpscan -n __fish_use_subcommand -a scan" in result.out
        assert "-l format -xa" in result.out and "PRX008" in result.out


def test_the_last_item_of_a_comma_list(bash_script):
    """--select/--ignore take comma lists, as ruff's do: the item being typed completes."""
    offered = complete(bash_script, "hcpscan", "scan", "--select", "HCP001,PRX00")
    assert offered and all(o.startswith("HCP001,PRX00") for o in offered)
    assert "HCP001,PRX008" in offered
    assert complete(bash_script, "hcpscan", "scan", "--ignore", "PRX008,HCP00")[0].startswith("PRX008,HCP00")
