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


def _run(args: list[str], cwd: Path, extra: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "HCPSCAN_NO_EXTENSIONS", "HCPSCAN_COMPILED"))}
    env.update(NO_COLOR="1", COLUMNS="200", **(extra or {}))
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, **kw)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a clean copy of the tracked tree, with the compiled rebuild
    (this machine has a C compiler: .ci/run installs it)."""
    built = _built_wheel(tmp_path_factory.mktemp("wheel"), {})
    assert not built.name.endswith("-none-any.whl"), built.name
    return built


@pytest.fixture(scope="module")
def pure_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pure-Python wheel a release publishes beside the compiled ones (setup.py):
    what pip installs where no compiled wheel matches (musl, other architectures)."""
    built = _built_wheel(tmp_path_factory.mktemp("pure"), {"HCPSCAN_NO_EXTENSIONS": "1"})
    assert built.name.endswith("-py3-none-any.whl"), built.name
    return built


def _built_wheel(base: Path, extra: dict[str, str]) -> Path:
    source = base / "src"
    # Build from what git tracks, as a clean clone would: nothing untracked can mask a gap.
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    dist = base / "dist"
    built = _run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)], cwd=base, extra=extra)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheels = list(dist.glob("hcpscan-*.whl"))
    assert len(wheels) == 1 and list(dist.glob("hcpscan-*.tar.gz"))
    return wheels[0]


def _venv(base: Path, requirement: str) -> Path:
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    pip = _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", requirement],
               cwd=base)
    assert pip.returncode == 0, pip.stderr[-3000:]
    return env_dir


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel and its cel extra, as the README installs it."""
    base = tmp_path_factory.mktemp("full")
    env_dir = _venv(base, f"{wheel}[cel]")
    python = env_dir / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=base)
    decoy = Path(purelib.stdout.strip()) / "rules"
    decoy.mkdir()
    (decoy / "__init__.py").write_text('"""An unrelated distribution that happens to be called rules."""\n')
    return env_dir


@pytest.fixture(scope="module")
def bare(pure_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pure-Python wheel without extras, as on Alpine/musl or old glibc where neither
    cel nor a compiled hcpscan has a wheel."""
    return _venv(tmp_path_factory.mktemp("bare"), str(pure_wheel))


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
    ids = {rule["id"] for rule in json.loads(result.stdout)["rules"]}
    shipped = {path.stem for path in (ROOT / "rules").glob("*.yaml")}
    assert ids == shipped and len(ids) >= 25


def _compiled(env_dir: Path, cwd: Path) -> str:
    probe = _run([str(env_dir / "bin" / "python"), "-c",
                  "from hcpscan.sources import fastyaml; print(fastyaml.COMPILED)"], cwd=cwd)
    assert probe.returncode == 0, probe.stderr
    return probe.stdout.strip()


def test_the_compiled_wheel_runs_compiled_and_the_pure_one_does_not(installed: Path, bare: Path,
                                                                    elsewhere: Path) -> None:
    assert (_compiled(installed, elsewhere), _compiled(bare, elsewhere)) == ("True", "False")


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


def test_a_bare_install_scans_without_cel_or_the_kubernetes_client(bare: Path, installed: Path,
                                                                   elsewhere: Path) -> None:
    """The fallback path: no cel-expr-python (as on musl), no kubernetes client; the scan
    runs, cel rules say how to add their runtime, and the live command says how to add it."""
    python = str(bare / "bin" / "python")
    missing = _run([python, "-c", "import importlib.util as u; print(u.find_spec('cel_expr_python'), "
                                  "u.find_spec('kubernetes'))"], cwd=elsewhere)
    assert missing.stdout.split() == ["None", "None"], missing.stdout + missing.stderr
    scan = _run([str(bare / "bin" / "hcpscan"), "scan", "example", "--format", "json"], cwd=elsewhere)
    assert scan.returncode == 1, scan.stderr
    report = json.loads(scan.stdout)
    assert report["findings"]
    # the pure-Python rebuild finds what the compiled one does (cel rules aside: not here)
    full = _run([str(installed / "bin" / "hcpscan"), "scan", "example", "--format", "json"], cwd=elsewhere)
    assert full.returncode == 1, full.stderr
    assert [f["fingerprint"] for f in report["findings"]] == \
        [f["fingerprint"] for f in json.loads(full.stdout)["findings"] if f["rule_id"] in
         {r["rule_id"] for r in report["rules"] if r["status"] != "not-evaluable"}]
    cel_rules = {p.stem for p in (ROOT / "rules").glob("*.yaml") if "template: cel" in p.read_text()}
    results = {r["rule_id"]: r for r in report["rules"]}
    judged = [r for r in cel_rules if results[r]["status"] != "not-applicable"]
    assert judged and all(results[r]["status"] == "not-evaluable" for r in judged)
    assert any("pip install 'hcpscan[cel]'" in results[r]["reason"] for r in judged)
    live = _run([str(bare / "bin" / "hcpscan"), "cluster", "--kubeconfig", "/dev/null"], cwd=elsewhere)
    assert live.returncode == 2 and "pip install 'hcpscan[live]'" in live.stderr


# pip's --platform resolution (wheel tags only: markers still see this machine, which is
# what a marker-free default install relies on): what a runner of that kind would install.
# pip does not widen an explicit platform to the older tags that runner also accepts.
PLATFORMS = {
    "musl x86_64 (Alpine)": (("musllinux_1_2_x86_64", "musllinux_1_1_x86_64"), False),
    "musl aarch64 (Alpine)": (("musllinux_1_2_aarch64", "musllinux_1_1_aarch64"), False),
    "glibc 2.17 x86_64 (old runner)": (("manylinux2014_x86_64",), False),
    "glibc 2.28 aarch64": (("manylinux_2_28_aarch64", "manylinux_2_26_aarch64", "manylinux2014_aarch64"), True),
    "glibc 2.28 x86_64": (("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux2014_x86_64"), True),
}


@pytest.mark.parametrize("where", sorted(PLATFORMS))
def test_resolves_on_runner_platforms(pure_wheel: Path, tmp_path: Path, where: str) -> None:
    """`pip install hcpscan` resolves to wheels on each platform (the pure-Python one where
    no compiled wheel was built), without the CEL runtime or the kubernetes client;
    `hcpscan[cel]` brings the runtime where a wheel of it exists and fails to resolve,
    naming it, where none does (musl, old glibc): ask for it only there."""
    wheel = pure_wheel
    tags, has_cel = PLATFORMS[where]
    platforms = [arg for tag in tags for arg in ("--platform", tag)]

    def download(requirement: str, target: Path) -> subprocess.CompletedProcess[str]:
        return _run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                     "--only-binary", ":all:", *platforms, "--python-version", "3.11",
                     "--dest", str(target), requirement], cwd=tmp_path)

    plain = download(str(wheel), tmp_path / "plain")
    assert plain.returncode == 0, f"{where}: {plain.stderr[-2000:]}"
    names = {p.name.split("-")[0].lower() for p in (tmp_path / "plain").iterdir()}
    assert "hcpscan" in names and not names & {"kubernetes", "cel_expr_python"}, sorted(names)
    with_cel = download(f"{wheel}[cel]", tmp_path / "cel")
    if has_cel:
        assert with_cel.returncode == 0, f"{where}: {with_cel.stderr[-2000:]}"
        assert any(p.name.startswith("cel_expr_python-") for p in (tmp_path / "cel").iterdir())
    else:
        assert with_cel.returncode != 0 and "cel-expr-python" in with_cel.stderr


def test_long_description_speaks_to_a_pip_user(wheel: Path) -> None:
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(metadata).decode()
    description = text.split("\n\n", 1)[1]
    assert description.startswith("# hcpscan\n")
    assert "pip install -e" not in description and "pip install 'hcpscan[cel]'" in description
