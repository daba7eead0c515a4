"""deploy/Containerfile: its steps, run in a virtualenv where no container builder is available.

The recipe keeps its steps in deploy/image/steps.sh, so this test runs exactly what
the image build runs: the build context is the tracked tree filtered by
.containerignore (as a builder filters it), ``steps.sh build`` makes the wheels with
the pinned constraints, ``steps.sh install`` makes the virtualenv from those wheels
alone (no index), and the result must scan. The Containerfile itself is checked for
what the issue asks of it: a pinned base, OCI labels, a non-root user.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT, requirement

_git = requirement(lambda: shutil.which("git"), "git (to list the tracked tree)")
CONTAINERFILE = ROOT / "deploy" / "Containerfile"
CONSTRAINTS = ROOT / "deploy" / "image" / "constraints.txt"
STEPS = ROOT / "deploy" / "image" / "steps.sh"


def ignore_patterns() -> list[tuple[bool, str]]:
    lines = [line.strip() for line in (ROOT / ".containerignore").read_text().splitlines()]
    return [(line.startswith("!"), line.lstrip("!").rstrip("/")) for line in lines
            if line and not line.startswith("#")]


def _match(pattern: str, path: str) -> bool:
    """A .containerignore pattern against a path or any of its parent folders: ``*``
    stays within one segment, ``**`` spans any."""
    regex = re.escape(pattern).replace(r"\*\*/", "(?:.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
    parts = path.split("/")
    return any(re.fullmatch(regex, "/".join(parts[:i])) for i in range(1, len(parts) + 1))


def in_context(path: str, patterns: list[tuple[bool, str]]) -> bool:
    included = True
    for negated, pattern in patterns:  # the last matching pattern decides
        if _match(pattern, path):
            included = negated
    return included


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(NO_COLOR="1", COLUMNS="200", PYTHON=sys.executable)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The image's virtualenv, built by the recipe's own steps from its build context."""
    base = tmp_path_factory.mktemp("image")
    context = base / "context"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    patterns = ignore_patterns()
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file() and in_context(name, patterns):
            (context / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, context / name)
    assert not (context / "tests").exists() and not (context / "fixtures").exists()
    built = _run(["sh", str(context / "deploy/image/steps.sh"), "build", str(context), str(base / "wheels")],
                 cwd=base)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    installed = _run(["sh", str(context / "deploy/image/steps.sh"), "install", str(base / "wheels"),
                      str(base / "opt")], cwd=base)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    return base / "opt"


def test_the_image_scans(image: Path, tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "example", tmp_path / "example")
    done = _run([str(image / "bin" / "hcpscan"), "scan", "example", "--no-config", "--format", "json",
                 "-o", "r.json"], cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # the example has findings
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["findings"] and len(report["rules"]) >= 25


def test_every_installed_dependency_is_the_pinned_one(image: Path) -> None:
    listed = _run([str(image / "bin" / "python"), "-c",
                   "import importlib.metadata as m, json; print(json.dumps("
                   "{d.metadata['Name']: d.version for d in m.distributions()}))"], cwd=image)
    installed = {re.sub(r"[-_.]+", "-", k).lower(): v for k, v in json.loads(listed.stdout).items()}
    pins = dict(line.split("==") for line in CONSTRAINTS.read_text().splitlines()
                if line and not line.startswith("#"))
    assert installed.pop("hcpscan")
    assert "pip" not in installed  # not needed at run time
    assert {k: v for k, v in installed.items() if k not in ("setuptools", "wheel")} == {
        k: pins[k] for k in installed if k in pins and k not in ("setuptools", "wheel")}
    assert set(installed) - {"setuptools", "wheel"} <= set(pins), "run python3 deploy/image/lock.py"


def test_the_lock_covers_every_runtime_requirement() -> None:
    """Names, not versions: this test's own environment may resolve newer releases."""
    sys.path.insert(0, str(ROOT / "deploy" / "image"))
    try:
        import lock
    finally:
        sys.path.pop(0)
    pins = {line.split("==")[0] for line in CONSTRAINTS.read_text().splitlines()
            if line and not line.startswith("#")}
    missing = set(lock.closure()) - pins
    assert not missing, f"not pinned in {CONSTRAINTS.name}: {sorted(missing)}; run python3 deploy/image/lock.py"


def test_the_recipe_is_pinned_labelled_and_unprivileged() -> None:
    text = CONTAINERFILE.read_text()
    (base,) = re.findall(r"^ARG BASE_IMAGE=(\S+)$", text, re.M)
    # a full patch version or a digest, never a moving tag such as python:3-slim
    assert re.search(r":\d+\.\d+\.\d+-[a-z]+-[a-z]+$", base) or "@sha256:" in base, base
    stages = re.findall(r"^FROM (\S+)", text, re.M)
    assert stages == ["${BASE_IMAGE}", "${BASE_IMAGE}"]
    labels = set(re.findall(r"(org\.opencontainers\.image\.[a-z.]+)=", text))
    assert labels >= {f"org.opencontainers.image.{k}" for k in
                      ("title", "description", "version", "revision", "created", "source", "licenses",
                       "base.name")}
    (user,) = re.findall(r"^USER (\S+)$", text, re.M)
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) != 0 and gid.isdigit() and int(gid) != 0
    assert re.search(r'^ENTRYPOINT \["hcpscan"\]$', text, re.M)
    # what the runtime stage copies from the context is in it
    patterns = ignore_patterns()
    for source in re.findall(r"^COPY (?!--from)(\S+) ", text, re.M):
        if source != ".":
            assert in_context(source, patterns), f"{source} is excluded by .containerignore"
    assert (ROOT / ".dockerignore").read_text() == (ROOT / ".containerignore").read_text()


@pytest.mark.parametrize("path, expected", [
    ("hcpscan/cli/main.py", True), ("rules/HCP001.yaml", True), ("deploy/image/steps.sh", True),
    ("deploy/Containerfile", False), ("tests/conftest.py", False), ("hcpscan/__pycache__/x.pyc", False),
    (".venv/bin/python", False), ("fixtures/example/a.yaml", False),
    # the compiled rebuild: its source goes in, a copy built for the developer's Python does not
    ("hcpscan/sources/_rebuild.c", True), ("hcpscan/sources/_rebuild.cpython-311-x86_64-linux-gnu.so", False)])
def test_the_context_is_what_the_wheel_needs(path: str, expected: bool) -> None:
    assert in_context(path, ignore_patterns()) is expected
