"""A Secret key that looks like a kubeconfig but cannot be read is said, not dropped."""

from __future__ import annotations

import base64
import json
from pathlib import Path

GOOD = "apiVersion: v1\nkind: Config\nclusters: [{name: a, cluster: {server: https://a:6443}}]\n"
MALFORMED = "apiVersion: v1\nkind: Config\nclusters: [{name: a, cluster: {server: https://x}\n"
DEEP = "clusters: " + "[" * 3000 + "]" * 3000


def _secret(name: str, field: str, key: str, value: str) -> str:
    if field == "data":
        value = base64.b64encode(value.encode()).decode()
    else:
        value = "|\n    " + value.replace("\n", "\n    ")
    return (f"apiVersion: v1\nkind: Secret\nmetadata: {{name: {name}, namespace: hub}}\n"
            f"{field}:\n  {key}: {value}\n---\n")


def test_unreadable_kubeconfigs_are_warned_about_at_their_key(run_cli, tmp_path: Path) -> None:
    path = tmp_path / "secrets.yaml"
    path.write_text(_secret("good", "data", "kubeconfig", GOOD)
                    + _secret("broken", "data", "kubeconfig", MALFORMED)
                    + _secret("deep", "stringData", "value", DEEP)
                    + _secret("plain", "stringData", "value", "not a config"))
    result = run_cli("inventory", "--no-progress", "--format", "json", str(tmp_path))
    doc = json.loads(result.out)
    found = {(d["line"], d["message"].split(" looks like")[0]): d for d in doc["diagnostics"]}
    assert set(found) == {(11, "Secret hub/broken data.kubeconfig"),
                          (17, "Secret hub/deep stringData.value")}, doc["diagnostics"]
    assert all(d["severity"] == "warning" and "cannot be read" in d["message"]
               and "kubectl config view" in d["hint"] for d in found.values())
    assert "nested deeper than" in found[(17, "Secret hub/deep stringData.value")]["message"]


def test_an_ignition_stub_naming_clusters_in_a_url_is_no_kubeconfig(tmp_path, run_cli):
    # HyperShift's user-data stub: its ignition URL holds "clusters-<name>", no clusters key
    stub = ('{"ignition": {"version": "3.2.0", "config": {"merge": [{"source": '
            '"https://ignition-server-clusters-example.apps.mgmt.example.com/ignition"}]}}}')
    (tmp_path / "stub.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: user-data-example-1, namespace: "
        f"clusters-example}}\nstringData:\n  value: '{stub}'\n")
    result = run_cli("scan", str(tmp_path), "--format", "json")
    assert [d["message"] for d in json.loads(result.out)["diagnostics"]] == []
