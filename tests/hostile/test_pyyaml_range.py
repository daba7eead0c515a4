"""The hostile-input suite's parsing part holds on the oldest and the newest PyYAML
that ``pyproject.toml`` allows.

PyYAML 6.0.4 bundles a libyaml that refuses deep flow collections itself, with
its own message, before hcpscan's depth guard saw them; the guard must not
depend on what a parser's error says. Each version is installed with
``pip install --target`` into a folder of its own that shadows the installed
PyYAML for one run of the parsing tests in a subprocess.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PARSING_TESTS = ["tests/hostile/test_parsing.py", "tests/hostile/test_embedded_kubeconfig.py"]


def _allowed_oldest() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    found = re.search(r'"pyyaml>=([0-9.]+)"', text)
    assert found, "pyproject.toml no longer states a lower bound for pyyaml"
    return found.group(1)


@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_hostile_parsing_holds_on_the_allowed_pyyaml_range(which: str, tmp_path: Path) -> None:
    spec = f"pyyaml=={_allowed_oldest()}" if which == "oldest" else "pyyaml"
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--no-deps", "--only-binary", ":all:", "--target", str(target), spec],
        capture_output=True, text=True, timeout=300)
    if install.returncode != 0:
        pytest.fail(f"cannot install {spec} from the package index: {install.stderr[-1500:]}")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(target), str(ROOT)]))
    version = subprocess.run([sys.executable, "-c", "import yaml; print(yaml.__file__, yaml.__version__)"],
                             capture_output=True, text=True, env=env, timeout=60)
    assert str(target) in version.stdout, version.stdout + version.stderr
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                          *PARSING_TESTS],
                         cwd=ROOT, capture_output=True, text=True, env=env, timeout=900)
    assert run.returncode == 0, f"with PyYAML {version.stdout.split()[-1]}:\n{run.stdout[-4000:]}"
