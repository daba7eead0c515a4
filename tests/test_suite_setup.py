"""How the suite itself runs (docs/testing.md): in parallel, slowest files first."""

from __future__ import annotations

import tomllib

from tests.conftest import ROOT, SLOW_FILES


def test_the_suite_runs_on_every_core_one_file_per_worker() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    addopts = config["tool"]["pytest"]["ini_options"]["addopts"].split()
    assert addopts[addopts.index("-n") + 1] == "auto"
    assert addopts[addopts.index("--dist") + 1] == "loadfile"  # module fixtures made once
    assert "--no-loadscope-reorder" in addopts  # else xdist reorders by test count
    assert any(r.startswith("pytest-xdist") for r in config["project"]["optional-dependencies"]["test"])


def test_the_slow_files_named_first_exist() -> None:
    """A renamed slow file would silently fall back to its place in the alphabet."""
    missing = [path for path in SLOW_FILES if not (ROOT / path).is_file()]
    assert not missing, f"tests/conftest.py SLOW_FILES names files that do not exist: {missing}"


def test_the_xdist_pin_knows_every_option_addopts_gives() -> None:
    """--no-loadscope-reorder came with pytest-xdist 3.8.0: an older one allowed by the pin
    stops pytest at start (unrecognized arguments), so no test at all would run."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (pin,) = [Requirement(r) for r in config["project"]["optional-dependencies"]["test"]
              if r.startswith("pytest-xdist")]
    assert "--no-loadscope-reorder" in config["tool"]["pytest"]["ini_options"]["addopts"]
    assert not pin.specifier.contains(Version("3.7.0")), f"{pin}: 3.7 has no --no-loadscope-reorder"
    assert pin.specifier.contains(Version("3.8.0"))
