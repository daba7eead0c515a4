"""PRX009's fix: the containerd proxy drop-in a Cluster API bootstrap config never wrote,
added to its `files` with the cluster values' proxy (seed 003's shape); an inline drop-in
without the proxy variables gets only the lines it lacks."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import yaml

from hcpscan.findings.fix import AppendItems, NoFix, Remedy
from hcpscan.fixes.textedit import edit_text
from hcpscan.sources.systemd import parse_unit
from tests.conftest import FIXTURES
from tests.rules.harness import scan

CASES = FIXTURES / "rules" / "PRX009" / "fail"
DROPIN = "/etc/systemd/system/containerd.service.d/http-proxy.conf"
GS = "workload-cluster-without-containerd-proxy.yaml"
GITOPS = "gitops-tree-without-cluster-values.yaml"


def _by_name(path: Path) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in yaml.safe_load_all(path.read_text())
            if isinstance(d, dict)}


def _dropin(files: list[dict]) -> dict[str, str]:
    entry, = [f for f in files if f["path"] == DROPIN]
    text = entry["content"]
    if entry.get("encoding") == "base64":
        text = base64.b64decode(text).decode()
    return {k: v for k, (v, _line) in parse_unit(text).environment.items()}


def _failing(folder: Path):
    return [f for f in scan([folder], ["PRX009"]).findings if f.status.name == "FAIL"]


def test_fix_writes_the_dropin_with_the_cluster_values_proxy(tmp_path, run_cli):
    tree = tmp_path / "fleet"
    shutil.copytree(CASES, tree)
    values = yaml.safe_load(base64.b64decode(_by_name(tree / GS)["mycluster-cluster-values"]
                                             ["data"]["values"]))["cluster"]["proxy"]
    result = run_cli("fix", str(tree), "--no-progress", "--no-config", "--select", "PRX009")
    assert result.code == 1, result.out + result.err  # the missing Secret stays to do by hand
    assert "mycluster-systemd-proxy" in result.err

    objects = _by_name(tree / GS)
    env = _dropin(objects["mycluster-md-0"]["spec"]["template"]["spec"]["files"])
    assert env["HTTP_PROXY"] == env["http_proxy"] == values["http"]
    assert env["HTTPS_PROXY"] == env["https_proxy"] == values["https"]
    assert env["NO_PROXY"] == env["no_proxy"]
    assert env["NO_PROXY"].split(",")[:len(values["noProxy"].split(","))] == \
        values["noProxy"].split(",")  # the values' noProxy first, as written
    # the drop-in that lacked the proxy keeps its NO_PROXY, and its twin gets that value
    gpu = _dropin(objects["mycluster-md-gpu"]["spec"]["template"]["spec"]["files"])
    assert gpu["NO_PROXY"] == gpu["no_proxy"] == "cluster.local,svc,127.0.0.1,localhost"
    assert gpu["HTTPS_PROXY"] == values["https"]

    failing = _failing(tree)
    # drop-ins whose proxy lines systemd ignores (typographic quotes, a '%' that starts no
    # specifier) are fixed by hand
    by_hand = [f for f in failing if "systemd ignores" in f.message]
    assert len(by_hand) == 3 and all(isinstance(f.remedy, NoFix) for f in by_hand)
    assert sum("is no systemd specifier" in f.message for f in by_hand) == 1
    # a drop-in reading an environment file without the proxy: the file is to be changed
    [env_file] = [f for f in failing if "envcluster" in f.message]
    assert isinstance(env_file.remedy, NoFix) and "EnvironmentFile" in env_file.remedy.why
    remaining = [f for f in failing if f not in by_hand and f is not env_file]
    assert [f.message for f in remaining] == [
        "KubeadmControlPlane org-acme/mycluster (cluster mycluster) takes the drop-in from "
        "Secret org-acme/mycluster-systemd-proxy, which does not exist"]
    assert isinstance(remaining[0].remedy, NoFix)
    assert "Secret" in remaining[0].remedy.why


def test_empty_files_list_becomes_a_readable_block_list(tmp_path, run_cli):
    tree = tmp_path / "gitops"
    tree.mkdir()
    shutil.copy(CASES / GITOPS, tree / GITOPS)
    run_cli("fix", str(tree), "--no-progress", "--no-config", "--select", "PRX009")
    text = (tree / GITOPS).read_text()
    assert "files: []" not in text
    assert "    files:   # expect: PRX009\n    - path: " + DROPIN + "\n" in text
    assert '        Environment="HTTPS_PROXY=http://10.205.105.253:3128"\n' in text
    env = _dropin(_by_name(tree / GITOPS)["wc2-md0"]["spec"]["template"]["spec"]["files"])
    # the cluster's own destinations the values missed are added after them
    assert env["NO_PROXY"] == "my.domain.com,10.205.105.0/24,.svc,.cluster.local"
    assert _failing(tree) == []


def test_a_password_in_the_proxy_is_not_written_inline(tmp_path):
    tree = tmp_path / "fleet"
    tree.mkdir()
    text = (CASES / GS).read_text()
    values = base64.b64decode(_by_name(CASES / GS)["mycluster-cluster-values"]["data"]["values"]
                              ).decode().replace("http://192.168.52.220", "http://svc:pw@192.168.52.220")
    old = _by_name(CASES / GS)["mycluster-cluster-values"]["data"]["values"]
    (tree / GS).write_text(text.replace(old, base64.b64encode(values.encode()).decode()))
    whys = [f.remedy for f in _failing(tree) if "writes no" in f.message]
    assert whys and all(isinstance(w, NoFix) and "contentFrom.secret" in w.why for w in whys)
    assert not any(isinstance(f.remedy, Remedy) and "pw@" in str(f.remedy.edits)
                   for f in _failing(tree))


def test_an_empty_flow_list_without_a_comment_gets_block_items():
    text = "spec:\n  files: []\n  other: 1\n"
    after = edit_text(text, 0, None, (AppendItems(("spec", "files"), ({"path": "/a", "content": "x\ny\n"},)),))
    assert after == "spec:\n  files:\n  - path: /a\n    content: |\n      x\n      y\n  other: 1\n"


def test_lines_added_after_another_section_get_their_own_service_header(tmp_path):
    tree = tmp_path / "fleet"
    tree.mkdir()
    text = (CASES / GS).read_text().replace(
        '''        content: |  # expect: PRX009
          [Service]
          Environment="NO_PROXY=cluster.local,svc,127.0.0.1,localhost"''',
        '''        content: |  # expect: PRX009
          [Service]
          Environment="NO_PROXY=cluster.local,svc,127.0.0.1,localhost"
          [Unit]
          Description=proxy settings''')
    assert "[Unit]" in text
    (tree / GS).write_text(text)
    remedy, = [f.remedy for f in _failing(tree) if "md-gpu" in f.message]
    assert isinstance(remedy, Remedy)
    content = remedy.edits[0].value
    assert 'Description=proxy settings\n[Service]\nEnvironment="HTTP_PROXY=' in content
    assert parse_unit(content).environment["HTTPS_PROXY"][0] == "http://192.168.52.220:3128"


def test_the_dropin_s_noproxy_is_completed_with_the_cluster_s_own_destinations(tmp_path, run_cli):
    """containerd and kubelet are Go clients: the drop-in gets the values' noProxy plus the
    cluster's own destinations it misses (here the .svc names; Go never proxies loopback), after
    the values' entries as written."""
    tree = tmp_path / "fleet"
    shutil.copytree(CASES, tree)
    path = tree / GS
    short = "cluster.local,100.64.0.0/13,100.96.0.0/11,172.16.0.0/16"
    values = {"cluster": {"proxy": {"noProxy": short, "http": "http://192.168.52.220:3128",
                                    "https": "http://192.168.52.220:3128"}}}
    docs = list(yaml.safe_load_all(path.read_text()))
    for doc in docs:
        if isinstance(doc, dict) and doc["metadata"]["name"] == "mycluster-cluster-values":
            doc["data"]["values"] = base64.b64encode(yaml.safe_dump(values).encode()).decode()
    path.write_text(yaml.safe_dump_all(docs))
    result = run_cli("fix", str(tree), "--no-progress", "--no-config", "--select", "PRX009")
    assert result.code == 1, result.out + result.err
    env = _dropin(_by_name(path)["mycluster-md-0"]["spec"]["template"]["spec"]["files"])
    entries = env["NO_PROXY"].split(",")
    assert env["NO_PROXY"] == env["no_proxy"] and entries[:4] == short.split(",")
    assert entries[4:] == [".svc"]
