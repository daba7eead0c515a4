"""Hostile input on the surfaces the fourth session added: a flow catalog of one's own
(`--flows FILE`), the path graph written out (`--paths-out`), `connectivity --path/--flow`
with junk arguments, Insights archives with junk JSON, and a kubeconfig `proxy-url` of
an odd scheme. Each ends in a message naming the file (and line) or the argument, and
a documented exit code; never a traceback, never a lost neighbour."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.hostile.harness import hcpscan

ESTATE = FIXTURES / "rules" / "HCP007" / "fail" / "konnectivity-lb.yaml"
FLOW = """\
flows:
- id: mine
  title: my flow
  from: workers
  to: [{{app: kube-apiserver, port: {port}}}]
  protocols: [TCP]
  check: ingress
  seed: [mine]
"""


def connectivity(*args: str) -> tuple[int, str, str]:
    done = hcpscan("connectivity", str(ESTATE), "--no-progress", *args)
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert "Traceback" not in err and "internal error" not in err, err
    return done.returncode, out, err


def _alias_bomb() -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    return "\n".join(lines) + "\nflows: []\n"


@pytest.mark.parametrize(("text", "said"), [
    ("flows: " + "[" * 50_000 + "]" * 50_000 + "\n", ":1: not read: nested deeper than 200 levels"),
    (_alias_bomb(), ":7: not read: more than 5,000,000 nodes"),
    ("flows: [\n", ":2: not YAML"),
    (FLOW.format(port="99999999999999999999"), ":2: port 99999999999999999999 is neither 1-65535"),
    (FLOW.format(port="'1-4294967295'"), "is neither 1-65535 nor kas"),
    (FLOW.format(port=".nan"), "port nan is neither"),
    (FLOW.format(port="[1, 2]"), "is neither 1-65535"),
])
def test_a_hostile_flow_catalog_is_a_usage_error_with_file_and_line(tmp_path: Path, text: str,
                                                                     said: str) -> None:
    """A catalog 100,000 levels deep ended in an internal RecursionError (exit 4)."""
    catalog = tmp_path / "flows.yaml"
    catalog.write_text(text)
    code, _out, err = connectivity("--flow", "mine", "--flows", str(catalog))
    assert code == 2, err
    assert f"{catalog}{said}" in err if said.startswith(":") else said in err, err


def test_a_catalog_of_many_flows_is_read(tmp_path: Path) -> None:
    catalog = tmp_path / "flows.yaml"
    catalog.write_text("flows:\n" + "".join(
        FLOW.format(port=6443).split("flows:\n")[1].replace("id: mine", f"id: f{i}") for i in range(2000)))
    code, out, err = connectivity("--flow", "f1999", "--flows", str(catalog), "--format", "json")
    assert code in (0, 1), err
    assert json.loads(out)["results"], out


@pytest.mark.parametrize("where", ["missing", "directory", "full"])
def test_paths_out_that_cannot_be_written_is_a_usage_error(tmp_path: Path, where: str) -> None:
    """Each ended in an internal error (FileNotFoundError, IsADirectoryError, ENOSPC)."""
    target = {"missing": tmp_path / "no" / "such" / "paths.json",
              "directory": tmp_path / "graph.json", "full": tmp_path / "full.json"}[where]
    if where == "directory":
        target.mkdir()
    if where == "full":
        assert os.path.exists("/dev/full"), "this test needs /dev/full (Linux)"
        target.symlink_to("/dev/full")
    code, _out, err = connectivity("--flow", "workers-to-kas", "--paths-out", str(target))
    assert code == 2, err
    assert f"--paths-out {target}" in err, err
    assert {"missing": "no folder", "directory": "is a directory",
            "full": "No space left on device"}[where] in err, err


@pytest.mark.parametrize(("args", "said"), [
    (("--path", "--to", "clusters-edge/kube-apiserver", "--port", "99999999999", "--from", "10.0.0.0/8"),
     "--port 99999999999 is outside 1-65535"),
    (("--path", "--to", "clusters-edge/kube-apiserver", "--port", "-1", "--from", "10.0.0.0/8"),
     "--port -1 is outside 1-65535"),
    (("--path", "--to", "a/b/c/d[Nope]", "--port", "6443", "--from", "10.0.0.0/8"), "no workload a/b/c/d[Nope]"),
    (("--path", "--to", "clusters-edge/kube-apiserver", "--port", "6443", "--from", "not a cidr/99"),
     "no workload not a cidr/99"),
    (("--flow", "nope"), "no flow nope"),
    (("--flow", ""), "--flow needs a flow id"),
    (("--flow", "workers-to-kas", "--worker-cidr", "999.1.1.1/99"), "'999.1.1.1/99' is not a CIDR"),
    (("--flow", "workers-to-kas", "--paths-out", "graph.png"), "name a .json, .graphml or .dot file"),
    (("--flow", "workers-to-kas", "--paths-out", ""), "--paths-out needs a file name"),
    (("--paths-out", "paths.json"), "--paths-out writes the hops of --path or --flow"),
])
def test_junk_connectivity_arguments_are_usage_errors(args: tuple[str, ...], said: str) -> None:
    code, _out, err = connectivity(*args)
    assert code == 2 and said in err, err


POD = {"metadata": {"name": "router-default-1"},
       "spec": {"containers": [{"name": "router", "image": "router",
                                "env": [{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}]}]}}


def test_an_insights_archive_with_junk_json_keeps_its_good_members(tmp_path: Path) -> None:
    """Deep nesting and a 100,000-digit number are said with the member and line; NaN,
    Infinity and 1e99999 are read as the values JSON parsers give; the Pod beside them
    is still read by every command."""
    root = tmp_path / "insights"
    (root / "config" / "pod" / "openshift-ingress").mkdir(parents=True)
    (root / "config" / "pod" / "openshift-ingress" / "router-default-1.json").write_text(json.dumps(POD))
    (root / "config" / "proxy.json").write_text(
        '{"metadata":{"name":"cluster"},"spec":' + "[" * 50_000 + "]" * 50_000 + "}")
    (root / "config" / "network.json").write_text(
        '{"metadata":{"name":"cluster"},"spec":{"clusterNetwork":[{"cidr":"10.128.0.0/14",'
        '"hostPrefix":1' + "9" * 100_000 + '}]}}')
    (root / "config" / "infrastructure.json").write_text(
        '{"metadata":{"name":"cluster"},"spec":{"platformSpec":{"type":NaN}},'
        '"status":{"platform":1e99999,"x":[Infinity,-Infinity]}}')
    archive = tmp_path / "insights.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname=".")
    for command in ("scan", "inventory", "proxy", "connectivity"):
        done = hcpscan(command, str(archive), "--no-progress", "--format", "json")
        out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
        assert done.returncode == 2, (command, err)  # input not read fails the run
        assert "Traceback" not in err and "internal error" not in err, err
        assert "router-default-1" in out, (command, out[:2000])
    diagnostics = json.loads(hcpscan("inventory", str(archive), "--no-progress", "--format", "json")
                             .stdout)["diagnostics"]
    said = {(d["path"].rsplit("!", 1)[1], d["line"], d["message"]) for d in diagnostics}
    assert ("./config/proxy.json", 1, "not read: nested deeper than 200 levels") in said
    assert ("./config/network.json", 1, "not read: a number longer than 4300 digits") in said
    assert not any("infrastructure" in d["path"] for d in diagnostics)


@pytest.mark.parametrize(("proxy", "said"), [
    ("socks5h://127.0.0.1:1", "through the proxy socks5h://127.0.0.1:1: the connection was refused"),
    ("socks5h://svc:Zq9Kx7@127.0.0.1:1", "through the proxy socks5h://****@127.0.0.1:1"),
    ("gopher://proxy:1", "unsupported scheme gopher"),
    ("http://[::1", "is not a valid host or port"),
    ("http://svc:Zq9Kx7@ｐｒｏｘｙ：３１２８", "is not a valid IDNA label"),
])
def test_a_kubeconfig_proxy_url_of_any_scheme_ends_in_words(tmp_path: Path, proxy: str, said: str) -> None:
    """Loopback only: the server and a SOCKS proxy on port 1, where nothing listens."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", "proxy-url": proxy,
                                               "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "t0k3n"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    done = hcpscan("cluster", "--kubeconfig", str(kubeconfig), "--request-timeout", "3")
    err = done.stderr.decode("utf-8")
    assert done.returncode == 2, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert said in err, err
    assert "Zq9Kx7" not in err and "t0k3n" not in err, err
    if "through the proxy" not in said:  # a proxy-url no client can use: the file that holds it is named
        assert f"the proxy-url of context c's cluster in {kubeconfig}" in err, err
