"""`hcpscan fix` reads a file as `scan` does: a byte order mark at the start of a later
document (files concatenated with `cat`) is no parse error, and is kept where it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BOM = "\ufeff"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\ndata: {k: v}\n"
HOSTED = ("apiVersion: hypershift.openshift.io/v1beta1\nkind: HostedCluster\n"
          "metadata: {name: example, namespace: clusters}\nspec:\n  configuration:\n    proxy:\n"
          "      httpProxy: http://proxy.corp.example.com:3128\n      noProxy: .example.com\n")


@pytest.mark.parametrize("text", [
    f"{CONFIGMAP}---\n{BOM}{HOSTED}",  # after a document start line
    f"{BOM}---\n{CONFIGMAP}{BOM}---\n{HOSTED}",  # the file's own, and one before a '---'
    f"{BOM}{CONFIGMAP}--- # next\n{BOM}{HOSTED}---\n{BOM}{CONFIGMAP.replace('name: a', 'name: b')}",
])
def test_a_document_bom_is_read_as_scan_reads_it_and_kept(run_cli, tmp_path: Path, text: str) -> None:
    path = tmp_path / "estate.yaml"
    path.write_bytes(text.encode())
    scanned = run_cli("scan", str(path), "--no-progress", "--no-config", "--format", "json")
    assert [f["rule_id"] for f in json.loads(scanned.out)["findings"]] == ["PRX005"]
    result = run_cli("fix", str(path), "--no-progress", "--no-config", "--diff", str(tmp_path / "p.diff"))
    assert result.code == 0, result.err
    assert "does not parse" not in result.err and "fixed 1 finding" in result.err, result.err
    result = run_cli("fix", str(path), "--no-progress", "--no-config")
    assert result.code == 0, result.err
    after = path.read_bytes().decode()
    # exactly the noProxy line changed; every mark where it was
    assert after == text.replace("noProxy: .example.com", "noProxy: .example.com,172.20.0.1")
    rescanned = run_cli("scan", str(path), "--no-progress", "--no-config", "--format", "json")
    assert json.loads(rescanned.out)["findings"] == []
