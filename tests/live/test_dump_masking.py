"""`hcpscan cluster --save-dump` writes no proxy password it would flag; `--keep-secrets`
keeps them, and the offline rescan of a masked dump still flags them."""

from __future__ import annotations

import json

from tests.live.conftest import write_kubeconfig
from tests.live.test_cluster_scan import hcpscan

OBJECTS = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "monitoring"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "proxy-env", "namespace": "monitoring"},
     "data": {"HTTPS_PROXY": "http://svc-proxy:Spring2026@proxy.corp.example.com:3128"}},
    {"apiVersion": "apps/v1", "kind": "Deployment",
     "metadata": {"name": "exporter", "namespace": "monitoring"},
     "spec": {"template": {"spec": {"containers": [{"name": "exporter", "env": [
         {"name": "HTTPS_PROXY", "value": "svc-proxy:Hunter2@proxy.corp.example.com:3128"},
         # a user name with '@', an empty one (issue 22): the last '@' ends the userinfo
         {"name": "HTTP_PROXY", "value": "http://jdoe@corp.example.com:Autumn77@proxy:3128"},
         {"name": "ALL_PROXY", "value": "http://:Autumn77@proxy:3128"}]}]}}}},
]


def _dump_text(folder) -> str:
    return "\n".join(p.read_text() for p in sorted(folder.rglob("*.yaml")))


def test_save_dump_masks_proxy_passwords_and_the_rescan_still_flags_them(standin, pki, tmp_path):
    server = standin(OBJECTS)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    dump = tmp_path / "dump"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--save-dump", str(dump),
                           "--format", f"json={tmp_path / 'live.json'}")
    assert code == 1, err
    text = _dump_text(dump)
    assert "Spring2026" not in text and "Hunter2" not in text and "Autumn77" not in text
    assert "svc-proxy:****@proxy.corp.example.com:3128" in text and "proxy passwords masked" in err
    offline = tmp_path / "offline.json"
    hcpscan("scan", str(dump), "--no-config", "--no-progress", "--format", f"json={offline}")
    flagged = {(f["rule_id"], f["object"]["name"]) for f in json.loads(offline.read_text())["findings"]}
    assert ("PRX008", "proxy-env") in flagged


def test_keep_secrets_keeps_proxy_passwords_in_the_dump(standin, pki, tmp_path):
    server = standin(OBJECTS)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    dump = tmp_path / "dump"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--save-dump", str(dump),
                           "--keep-secrets", "--format", f"json={tmp_path / 'live.json'}")
    assert code == 1, err
    text = _dump_text(dump)
    assert "Spring2026" in text and "Hunter2" in text


def test_names_from_a_hostile_cluster_cannot_write_outside_the_dump(standin, pki, tmp_path):
    hostile = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "x", "namespace": "../../../escaped"}, "data": {"a": "b"}}
    server = standin([hostile])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    dump = tmp_path / "deep" / "er" / "dump"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--save-dump", str(dump),
                           "--format", f"json={tmp_path / 'live.json'}")
    assert code == 2 and "outside" in err and "Traceback" not in err
    assert not list(tmp_path.rglob("escaped"))
