"""The API server accepts ipBlock CIDRs with host bits set and enforces the network: so do we."""

from __future__ import annotations

from hcpscan.analysis.reachability.connlist import connection_list
from hcpscan.analysis.reachability.evaluation import EvaluationOptions
from hcpscan.inventory import Inventory
from hcpscan.sources.loader import load_paths

MANIFESTS = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ns1, labels: {app: web}}
spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: cli, namespace: ns2, labels: {app: cli}}
spec: {containers: [{name: cli, image: curl}]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: only-corp, namespace: ns1}
spec:
  podSelector: {}
  ingress:
  - from:
    - ipBlock: {cidr: 10.0.0.1/8}
"""


def test_host_bits_are_masked_with_a_warning_and_the_policy_still_isolates(tmp_path):
    (tmp_path / "all.yaml").write_text(MANIFESTS)
    inventory = Inventory(load_paths([str(tmp_path)]).objects)
    result = connection_list(inventory, EvaluationOptions())
    lines = result.lines()
    assert not any(line.startswith("ns2/cli[Pod] => ns1/web[Pod]") for line in lines)
    assert "10.0.0.0-10.255.255.255[External] => ns1/web[Pod] : All Connections" in lines
    (warning,) = [d for d in result.diagnostics if "host bits" in d.message]
    assert warning.severity == "warning" and warning.line == 18
    assert "enforced as 10.0.0.0/8" in warning.message
