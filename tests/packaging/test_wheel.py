"""The built distribution is a working hcpscan: build, install into a fresh virtualenv, run.

This is what a user does with ``pip install hcpscan`` or ``pipx install .``; an
editable install hides anything the wheel forgets (the rule catalog once was).
The virtualenv also holds a decoy top-level ``rules`` package, as the popular
PyPI project of that name would: hcpscan must still read its own catalog.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from hcpscan import __version__
from tests.conftest import FIXTURES, ROOT, requirement

_git = requirement(lambda: shutil.which("git"), "git (to copy the tracked tree)")


def _run(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(NO_COLOR="1", COLUMNS="200")
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, **kw)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel built from a clean copy of the tracked tree."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "src"
    # Build from what git tracks, as a clean clone would: nothing untracked can mask a gap.
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    dist = base / "dist"
    built = _run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)], cwd=base)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheels = list(dist.glob("hcpscan-*.whl"))
    assert len(wheels) == 1 and list(dist.glob("hcpscan-*.tar.gz"))
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    pip = _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheels[0])],
               cwd=base)
    assert pip.returncode == 0, pip.stderr[-3000:]
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=base)
    decoy = Path(purelib.stdout.strip()) / "rules"
    decoy.mkdir()
    (decoy / "__init__.py").write_text('"""An unrelated distribution that happens to be called rules."""\n')
    return env_dir


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """An unrelated working directory holding a copy of the bundled example."""
    shutil.copytree(FIXTURES / "example", tmp_path / "example")
    return tmp_path


def test_version_comes_from_the_package(installed: Path, elsewhere: Path) -> None:
    result = _run([str(installed / "bin" / "hcpscan"), "--version"], cwd=elsewhere)
    assert result.returncode == 0
    assert result.stdout.strip() == f"hcpscan {__version__}"


def test_installed_catalog_lists_every_rule(installed: Path, elsewhere: Path) -> None:
    result = _run([str(installed / "bin" / "hcpscan"), "rules", "list", "--format", "json"], cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    ids = {rule["id"] for rule in json.loads(result.stdout)}
    shipped = {path.stem for path in (ROOT / "rules").glob("*.yaml")}
    assert ids == shipped and len(ids) >= 25


def test_installed_scan_matches_the_source_tree(installed: Path, elsewhere: Path) -> None:
    args = ["scan", "example", "--format", "json"]
    wheel = _run([str(installed / "bin" / "hcpscan"), *args], cwd=elsewhere)
    tree = _run([sys.executable, "-m", "hcpscan", *args], cwd=elsewhere,
                )
    assert wheel.returncode == tree.returncode == 1, wheel.stderr + tree.stderr
    found = json.loads(wheel.stdout)
    assert found["findings"], "the example has findings; an installed scan must report them"
    assert [f["fingerprint"] for f in found["findings"]] == \
        [f["fingerprint"] for f in json.loads(tree.stdout)["findings"]]
