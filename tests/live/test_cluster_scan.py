"""`hcpscan cluster` end to end: the bundled must-gather served live gives the offline findings."""

from __future__ import annotations

import contextlib
import io
import json
import re
from typing import Any

import pytest
import yaml

from hcpscan.cli.main import main
from hcpscan.rules.config import ScanConfig
from hcpscan.scan import RuleSelection, kinds_needed, load_rules, resource_needs
from tests.live.conftest import EXAMPLE, write_kubeconfig

# "path:line" of a file offline, of a virtual cluster/<context>/... path live
_WHERE = re.compile(r"[^\s()]+\.(?:yaml|yml|json):\d+")
_WHERE_IN_PARENTHESES = re.compile(r" \([^\s()]+\.(?:yaml|yml|json):\d+\)")


def hcpscan(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _evidence(line: str) -> str:
    """Evidence without locations (objects are listed in a fixed order, whatever order
    the API server or the files gave them in)."""
    return _WHERE.sub("<location>", _WHERE_IN_PARENTHESES.sub("", line))


def comparable(report: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """Findings and rule results without their locations (evidence names a path:line too).
    The findings in an order of their own: reports order them by file and line, which a live
    scan's objects (one virtual path each) and a dump's files give differently."""
    findings = sorted(([f["rule_id"], f["severity"], f["status"], f["object"], f["field"],
                        f["message"], [_evidence(e) for e in f["evidence"]], f.get("suppression")]
                       for f in report["findings"]), key=lambda f: json.dumps(f, sort_keys=True))
    results = [(r["rule_id"], *_absence(r["status"], r["reason"]), r["findings"], r["objects_checked"])
               for r in report["rules"]]
    return findings, results


def _absence(status: str, reason: str) -> tuple[str, str]:
    """A kind the example's must-gather did not gather (not evaluable: it may exist) is
    one the live server has none of (not applicable): both had nothing to check."""
    if reason.startswith(("kind absent:", "not collected:")):
        return "absent", "absent"
    return status, reason


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    out = tmp_path_factory.mktemp("offline") / "offline.json"
    code, _, err = hcpscan("scan", str(EXAMPLE), "--no-config", "--no-progress", "--format", f"json={out}")
    assert code in (0, 1), err
    return code, json.loads(out.read_text())


def test_live_scan_of_the_example_gives_the_offline_findings(standin, pki, tmp_path, example_bodies,
                                                             offline):
    server = standin(example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, context="mgmt-hub")
    out = tmp_path / "live.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--page-size", "9",
                           "--format", f"json={out}")
    live = json.loads(out.read_text())
    offline_code, offline_report = offline
    assert (code, err) == (offline_code, "")
    assert live["findings"], "the example has findings; an empty list would prove nothing"
    assert comparable(live) == comparable(offline_report)
    assert live["inventory"] == offline_report["inventory"]
    for finding in live["findings"]:
        obj = finding["object"]
        kind, name = obj["kind"], obj["name"]
        if kind == "Kubeconfig":  # read out of a Secret: the Secret is where it lives
            kind, name = "Secret", name.split("/")[0]
        expected = f"cluster/mgmt-hub/{obj['namespace'] or '_cluster'}/{kind}/{name}.yaml"
        assert finding["location"] == {"path": expected, "line": 1, "column": 1, "virtual": True}
    assert live["scan"]["mode"] == "live" and live["scan"]["context"] == "mgmt-hub"


def test_live_scan_is_read_only_and_lists_only_what_rules_need(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--format",
                           f"json={tmp_path / 'r.json'}")
    assert code in (0, 1), err
    assert {r.method for r in server.state.requests} == {"GET"}
    rules = load_rules(ScanConfig(), RuleSelection())
    kinds = kinds_needed(rules)
    plurals = resource_needs(rules).plurals or frozenset()
    listed = {r.path for r in server.state.requests if r.query.get("limit")}
    allowed = {res.plural for res in server.state.resources if res.kind in kinds or res.plural in plurals}
    assert listed and {path.rsplit("/", 1)[1] for path in listed} <= allowed


def test_namespaces_limit_what_is_read(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    out = tmp_path / "r.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "-n", "clusters",
                           "--namespace", "hypershift,no-such-ns", "--format", f"json={out}")
    report = json.loads(out.read_text())
    assert code in (0, 1), err
    kinds = report["inventory"]["kinds"]
    assert kinds["Namespace"] == 2 and kinds["HostedCluster"] == 2 and kinds["Proxy"] == 1
    assert "Secret" not in kinds  # no Secrets in these two namespaces
    paths = {r.path for r in server.state.requests}
    assert "/api/v1/namespaces/clusters" in paths and "/api/v1/namespaces" not in paths
    assert "/apis/apps/v1/namespaces/hypershift/deployments" in paths
    assert "/apis/apps/v1/deployments" not in paths
    assert any("namespace no-such-ns does not exist" in d["message"] for d in report["diagnostics"])
    assert report["scan"]["namespaces"] == ["clusters", "hypershift", "no-such-ns"]


def test_save_dump_reruns_offline_with_the_same_findings(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    dump, live_json, offline_json = tmp_path / "dump", tmp_path / "live.json", tmp_path / "offline.json"
    namespaces = "open-cluster-management-agent,cluster1,org-acme,clusters"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "-n", namespaces,
                           "--save-dump", str(dump), "--keep-secrets", "--format", f"json={live_json}")
    assert code in (0, 1) and f"to {dump}" in err
    assert (dump / "cluster-scoped-resources" / "config.openshift.io" / "proxies.yaml").is_file()
    assert (dump / "namespaces" / "cluster1" / "cluster1.yaml").is_file()
    secrets = yaml.safe_load((dump / "namespaces" / "org-acme" / "core" / "secrets.yaml").read_text())
    assert secrets["kind"] == "List" and secrets["items"][0]["kind"] == "Secret"
    offline_code, _, offline_err = hcpscan("scan", str(dump), "--no-config", "--no-progress",
                                           "--format", f"json={offline_json}")
    assert offline_code == code, offline_err
    live, offline = json.loads(live_json.read_text()), json.loads(offline_json.read_text())
    assert live["findings"]
    assert comparable(live) == comparable(offline)


def test_save_dump_redacts_secrets_as_must_gather_does(standin, pki, tmp_path):
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
              "metadata": {"name": "hub", "namespace": "open-cluster-management-agent", "annotations": {
                  "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"tls.key":"c2VjcmV0"}}'}},
              "data": {"tls.crt": "Y2VydA==", "tls.key": "c2VjcmV0IGtleQ==", "ca.crt": "Y2E=",
                       "kubeconfig": "YXBpVmVyc2lvbjogdjE="}}
    server = standin([secret])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    dump = tmp_path / "dump"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--save-dump", str(dump),
                           "--format", f"json={tmp_path / 'r.json'}")
    assert code in (0, 1), err
    written = yaml.safe_load((dump / "namespaces" / "open-cluster-management-agent" / "core" /
                              "secrets.yaml").read_text())["items"][0]
    assert written["data"] == {"tls.crt": "Y2VydA==", "tls.key": "10 bytes long", "ca.crt": "Y2E=",
                               "kubeconfig": "14 bytes long"}
    assert written["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] == "elided"
    assert "Secret values redacted" in err


def test_save_dump_refuses_a_folder_with_content(tmp_path, pki):
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "old.yaml").write_text("kind: List\n")
    config = write_kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:1", pki.ca_pem)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--save-dump", str(dump))
    assert code == 2 and "already exists and is not an empty folder" in err and "Traceback" not in err


def test_save_dump_of_hostile_objects_reads_back_with_the_same_diagnostics(standin, pki, tmp_path):
    """A cluster serving wrongly typed objects and absurd values: the live scan and the
    offline scan of its saved dump both report them and go on, never crash (exit 4)."""
    good = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "proxy-env", "namespace": "shop"},
            "data": {"HTTPS_PROXY": "http://user:pw@proxy.corp:3128"}}
    typed = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
             "metadata": {"name": "web", "namespace": "shop"},
             "spec": {"podSelector": {}, "ingress": [{"ports": [{"port": [80, 443]}]}]}}
    deep: dict = {}
    cursor = deep
    for _ in range(400):
        cursor["a"] = {}
        cursor = cursor["a"]
    nested = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "deep", "namespace": "shop",
                                                                     "annotations": {"x": "y"}},
              "data": {"ok": "1"}, "extra": deep}
    server = standin([good, typed, nested])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    dump = tmp_path / "dump"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--save-dump", str(dump),
                           "--keep-secrets", "--format", f"json={tmp_path / 'live.json'}")
    assert code in (1, 2), err
    live = json.loads((tmp_path / "live.json").read_text())
    offline_code, _, offline_err = hcpscan("scan", str(dump), "--no-config", "--no-progress",
                                           "--format", f"json={tmp_path / 'offline.json'}")
    assert offline_code in (1, 2), offline_err
    offline = json.loads((tmp_path / "offline.json").read_text())
    for report in (live, offline):
        assert any(f["rule_id"] == "PRX008" and f["object"]["name"] == "proxy-env" for f in report["findings"])
        messages = " ".join(d["message"] for d in report["diagnostics"])
        assert "NetworkPolicy shop/web is left out" in messages and "is a list" in messages, messages


def test_a_rule_alone_lists_what_it_reads_as_loading_files_does(standin, pki, tmp_path, example_bodies):
    """PRX012 reads kubeconfigs and install-configs, which hcpscan makes out of Secrets:
    alone, live lists the Secrets as loading files reads them (one kind -> resource table,
    inventory/resources.py), so it judges the same objects offline and live."""
    server = standin(example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    live_out, offline_out = tmp_path / "live.json", tmp_path / "offline.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--select", "PRX012",
                           "--format", f"json={live_out}")
    assert code in (0, 1), err
    offline_code, _, err = hcpscan("scan", str(EXAMPLE), "--no-config", "--no-progress", "--select",
                                   "PRX012", "--format", f"json={offline_out}")
    live, offline = json.loads(live_out.read_text()), json.loads(offline_out.read_text())
    listed = {r.path.rsplit("/", 1)[1] for r in server.state.requests if r.query.get("limit")}
    assert "secrets" in listed and "deployments" not in listed
    assert live["inventory"]["kinds"].get("Kubeconfig"), "the example's kubeconfig Secrets"
    assert live["inventory"]["kinds"]["Kubeconfig"] == offline["inventory"]["kinds"]["Kubeconfig"]
    assert comparable(live)[1] == comparable(offline)[1]
