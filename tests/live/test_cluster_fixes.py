"""`hcpscan cluster --write-fixes`: kubectl commands and manifests, never a write to the
cluster; the commands, applied by the real kubectl to the objects the server serves, clear
the findings on a re-scan."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import yaml

from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES
from tests.live.conftest import write_kubeconfig
from tests.live.test_cluster_scan import hcpscan

# one cluster's objects: PRX001's failing files each hold a management cluster's Proxy
# "cluster" (one per cluster, as the API serves it): the kubevirt one, and the UDN
# file (no Proxy of its own); whereabouts-ip-ranges.yaml is another cluster's
PRX001_FAIL = FIXTURES / "rules" / "PRX001" / "fail"
CASES = [FIXTURES / "rules" / "HCP004" / "fail", FIXTURES / "rules" / "OCM004" / "fail",
         PRX001_FAIL / "kubevirt-secondary-network.yaml", PRX001_FAIL / "udn-secondary-network.yaml"]
RULES = "HCP004,OCM004,PRX001"


def _bodies() -> list[dict]:
    result = load_paths([str(p) for p in CASES])
    assert result.objects and not result.diagnostics
    return [obj.body for obj in result.objects]


# An object as the API server keys it: group, kind, namespace and name (two objects of one
# kind and name in two namespaces are two objects, as the payments and billing policies are)
Key = tuple[str, str, str, str]


def _key(body: dict) -> Key:
    group = body["apiVersion"].rpartition("/")[0]
    return (group, body["kind"].lower(), body["metadata"].get("namespace") or "",
            body["metadata"]["name"])


def _target(command: list[str]) -> Key:
    """The object a `kubectl [--context c] patch <kind>[.<group>] <name> [-n <ns>] ...`
    command patches."""
    kind, _, group = command[4].partition(".")
    rest = command[6:]
    namespace = rest[rest.index("-n") + 1] if "-n" in rest else ""
    return group, kind, namespace, command[5]


def _commands(script: Path) -> list[list[str]]:
    return [shlex.split(line) for line in script.read_text().splitlines()
            if line.startswith("kubectl ")]


def test_write_fixes_gives_commands_that_clear_the_findings(standin, pki, tmp_path, kubectl):
    bodies = _bodies()
    server = standin(bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, context="hub")
    fixes, report = tmp_path / "fixes", tmp_path / "live.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--select",
                           RULES, "--write-fixes", str(fixes), "--format", f"json={report}")
    assert code == 1, err
    assert {r.method for r in server.state.requests} == {"GET"}, "hcpscan wrote to the cluster"
    live = json.loads(report.read_text())
    assert {f["rule_id"] for f in live["findings"]} == {"HCP004", "OCM004", "PRX001"}
    for finding in live["findings"]:
        assert finding["fix"]["automatic"] and finding["fix"]["commands"], finding["message"]

    commands = _commands(fixes / "fixes.sh")
    assert all(c[:3] == ["kubectl", "--context", "hub"] for c in commands)
    patched = tmp_path / "patched"
    patched.mkdir()
    served: dict[Key, dict] = {}
    for body in bodies:
        assert _key(body) not in served, f"served twice: {_key(body)}"
        served[_key(body)] = body
    touched = set()
    for i, command in enumerate(commands):
        verb = command[3]
        if verb == "apply":
            (patched / f"applied-{i}.yaml").write_text((fixes / command[-1]).read_text())
            continue
        assert verb == "patch", command
        key = _target(command)
        assert key in served, (key, command)  # the object the server serves, no other
        source = tmp_path / f"{'-'.join(filter(None, key))}.yaml"
        source.write_text(yaml.safe_dump(served[key]))
        # the real kubectl makes the JSON patch, locally
        done = kubectl(config, "patch", "--local", "-f", str(source), *command[6:], "-o", "yaml")
        assert done.returncode == 0, done.stderr
        (patched / source.name).write_text(done.stdout)
        touched.add(key)
    for key, body in served.items():
        if key not in touched:
            (patched / f"{'-'.join(filter(None, key))}.yaml").write_text(yaml.safe_dump(body))
    out = tmp_path / "after.json"
    code, _, err = hcpscan("scan", str(patched), "--no-config", "--no-progress", "--select", RULES,
                           "--format", f"json={out}")
    after = json.loads(out.read_text())
    assert after["findings"] == [], err
    assert all(r["status"] == "pass" for r in after["rules"]), after["rules"]


def test_write_fixes_for_required_flows_apply_the_new_policies(standin, pki, tmp_path):
    """HCP011 on a live cluster: the fix is a manifest (a new NetworkPolicy, a new
    AdminNetworkPolicy before the Deny) and `kubectl apply -f` of it; the objects served
    plus those manifests scan clean."""
    # the two shapes of the fix, one HostedCluster each: a NetworkPolicy default deny that
    # a new NetworkPolicy opens, an AdminNetworkPolicy Deny that a new one before it passes
    folder = FIXTURES / "rules" / "HCP011" / "fail"
    result = load_paths([str(folder / name) for name in ("default-deny-ingress.yaml",
                                                         "anp-isolates-hcp.yaml")])
    bodies = [obj.body for obj in result.objects]
    server = standin(bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, context="mgmt")
    fixes, report = tmp_path / "fixes", tmp_path / "live.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--select",
                           "HCP011", "--write-fixes", str(fixes), "--format", f"json={report}")
    assert code == 1, err
    assert {r.method for r in server.state.requests} == {"GET"}, "hcpscan wrote to the cluster"
    live = json.loads(report.read_text())
    assert len(live["findings"]) == 2
    commands = _commands(fixes / "fixes.sh")
    assert [c[3:5] for c in commands] == [["apply", "-f"]] * 2
    kinds = sorted(yaml.safe_load((fixes / c[-1]).read_text())["kind"] for c in commands)
    assert kinds == ["AdminNetworkPolicy", "NetworkPolicy"]
    applied = tmp_path / "applied"
    applied.mkdir()
    (applied / "served.yaml").write_text(yaml.safe_dump_all(bodies))
    for c in commands:
        (applied / c[-1]).write_text((fixes / c[-1]).read_text())
    out = tmp_path / "after.json"
    code, _, err = hcpscan("scan", str(applied), "--no-config", "--no-progress", "--select",
                           "HCP011", "--format", f"json={out}")
    assert json.loads(out.read_text())["findings"] == [], err
