"""PRX008's fix: a container's plain-text proxy URL moves to a new Secret read with
`valueFrom.secretKeyRef`. `hcpscan fix` writes the password into that Secret; no report
prints it; the other places a credential is written say why they get no automatic change."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from hcpscan.findings.fix import Remedy, ReplaceKey
from hcpscan.fixes.plan import _live
from hcpscan.fixes.textedit import edit_text
from tests.rules.harness import scan

PASSWORD = "Tr0ub4dor&3"
URL = f"http://svc-backup:{PASSWORD}@proxy.corp.example.com:3128"
WORKLOADS = f"""\
# backups of the finance team
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly-backup
  namespace: finance
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: backup
            image: registry.corp.example.com/finance/backup:3.2
            env:
            - name: HTTPS_PROXY
              value: {URL}   # the backup bucket is outside
            - name: https_proxy
              value: {URL}
            - name: NO_PROXY
              value: .svc,.cluster.local,10.128.0.0/14,172.30.0.0/16
---
apiVersion: v1
kind: Proxy
metadata:
  name: cluster
"""


def _failing(folder: Path, rule: str = "PRX008"):
    return [f for f in scan([folder], [rule]).findings if f.status.name == "FAIL"]


def test_fix_moves_both_spellings_to_one_secret_and_clears_the_finding(tmp_path, run_cli):
    tree = tmp_path / "gitops"
    tree.mkdir()
    (tree / "backup.yaml").write_text(WORKLOADS)
    found = _failing(tree)
    assert len(found) == 1  # HTTPS_PROXY and https_proxy with one value: one finding

    result = run_cli("fix", str(tree), "--no-progress", "--no-config", "--select", "PRX008")
    assert result.code == 0, result.out + result.err
    assert PASSWORD not in result.out + result.err

    text = (tree / "backup.yaml").read_text()
    assert text.startswith(WORKLOADS.split("---")[0].split("            - name: HTTPS_PROXY")[0])
    assert "  # the backup bucket is outside" in text  # the comment after the old value stays
    docs = list(yaml.safe_load_all(text))
    env = docs[0]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"]
    ref = {"secretKeyRef": {"name": "nightly-backup-backup-https-proxy", "key": "HTTPS_PROXY"}}
    assert env[:2] == [{"name": "HTTPS_PROXY", "valueFrom": ref},
                       {"name": "https_proxy", "valueFrom": ref}]
    assert env[2]["value"].startswith(".svc")  # NO_PROXY untouched
    assert docs[1] == {"apiVersion": "v1", "kind": "Proxy", "metadata": {"name": "cluster"}}
    assert docs[2] == {"apiVersion": "v1", "kind": "Secret",
                       "metadata": {"name": "nightly-backup-backup-https-proxy",
                                    "namespace": "finance"},
                       "type": "Opaque", "stringData": {"HTTPS_PROXY": URL}}
    # The password is where hcpscan fix wrote it, and nowhere a finding can see it.
    assert _failing(tree) == []


def test_reports_mask_the_password_the_fix_writes(tmp_path, run_cli):
    tree = tmp_path / "gitops"
    tree.mkdir()
    (tree / "backup.yaml").write_text(WORKLOADS)
    for fmt in ("json", "sarif", "markdown", "html"):
        result = run_cli("scan", str(tree), "--format", fmt, "--no-progress", "--no-config",
                         "--select", "PRX008")
        assert result.code == 1, result.err
        assert PASSWORD not in result.out, fmt
    report = json.loads(run_cli("scan", str(tree), "--format", "json", "--no-progress",
                                "--no-config", "--select", "PRX008").out)
    fix = report["findings"][0]["fix"]
    assert fix["automatic"] is True
    assert "+  HTTPS_PROXY: http://svc-backup:****@proxy.corp.example.com:3128" in \
        fix["changes"][0]["diff"]


def test_diff_applies_and_the_patched_tree_has_no_new_finding(tmp_path, run_cli):
    tree = tmp_path / "gitops"
    tree.mkdir()
    (tree / "backup.yaml").write_text(WORKLOADS)
    before = {(f.rule_id, f.message) for f in scan([tree], []).findings if f.status.name == "FAIL"}
    patch = tmp_path / "fix.patch"
    result = run_cli("fix", str(tree), "--no-progress", "--no-config", "--diff", str(patch))
    assert result.code in (0, 1), result.err
    assert PASSWORD in patch.read_text()  # the patch is what `git apply` writes: the real text
    assert (tree / "backup.yaml").read_text() == WORKLOADS  # --diff changes no file
    run_cli("fix", str(tree), "--no-progress", "--no-config", "--select", "PRX008")
    after = {(f.rule_id, f.message) for f in scan([tree], []).findings if f.status.name == "FAIL"}
    assert not {r for r, _ in after} & {"PRX008"}
    assert after <= before


def test_places_without_a_secret_reference_say_why():
    folder = Path(__file__).resolve().parents[2] / "fixtures" / "rules" / "PRX008" / "fail"
    whys = {f.object.kind: f.remedy.why for f in _failing(folder) if not isinstance(f.remedy, Remedy)}
    assert "takes the URL itself" in whys["Proxy"]
    assert "readers" in whys["ConfigMap"]
    assert "contentFrom.secret" in whys["KubeadmControlPlane"]
    assert "valuesFrom" in whys["HelmRelease"]
    assert "takes the URL itself" in whys["KlusterletConfig"]
    assert all(PASSWORD not in w and "S3cret" not in w for w in whys.values())


def test_replace_key_keeps_the_comment_and_every_other_line():
    text = "env:\n- name: A   # first\n  value: x://u:p@h:1  # note\n- name: B\n  value: y\n"
    after = edit_text(text, 0, None, (ReplaceKey(("env", 0, "value"), "valueFrom",
                                                 {"secretKeyRef": {"name": "s", "key": "A"}}),))
    assert after == ("env:\n- name: A   # first\n"
                     "  valueFrom: {secretKeyRef: {name: s, key: A}}  # note\n"
                     "- name: B\n  value: y\n")


def test_live_object_gets_a_json_patch_and_the_secret_manifest(tmp_path):
    tree = tmp_path / "live"
    tree.mkdir()
    (tree / "backup.yaml").write_text(WORKLOADS)
    finding = _failing(tree)[0]
    remedy = finding.remedy
    assert isinstance(remedy, Remedy)
    fix = _live(remedy, {})  # what `hcpscan cluster --write-fixes` plans for a live object
    patch = json.loads(fix.commands[0].split(" -p ", 1)[1].strip("'"))
    env = "/spec/jobTemplate/spec/template/spec/containers/0/env"
    assert patch[:2] == [{"op": "remove", "path": f"{env}/0/value"},
                         {"op": "add", "path": f"{env}/0/valueFrom",
                          "value": {"secretKeyRef": {"name": "nightly-backup-backup-https-proxy",
                                                     "key": "HTTPS_PROXY"}}}]
    assert fix.commands[-1] == "kubectl apply -f secret-finance-nightly-backup-backup-https-proxy.yaml"
    assert URL in fix.manifests[0][1]  # the file --write-fixes writes holds the real URL


def test_a_secret_of_the_chosen_name_is_never_written_twice(tmp_path):
    tree = tmp_path / "gitops"
    tree.mkdir()
    (tree / "backup.yaml").write_text(WORKLOADS + "---\napiVersion: v1\nkind: Secret\nmetadata:\n"
                                      "  name: nightly-backup-backup-https-proxy\n"
                                      "  namespace: finance\nstringData: {other: x}\n")
    found, = _failing(tree)
    assert not isinstance(found.remedy, Remedy)
    assert "exists already" in found.remedy.why
