"""Helpers for the reachability tests: load YAML text as an inventory, list connections."""

from __future__ import annotations

from pathlib import Path

import pytest

from hcpscan.analysis.reachability.connlist import connection_list
from hcpscan.analysis.reachability.evaluation import EvaluationOptions
from hcpscan.inventory import Inventory
from hcpscan.sources.loader import load_paths

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO / ".." / "shared"
CONFORMANCE = SHARED / "conformance" / "netpol" / "cases"
CPO_RENDERED = SHARED / "realworld" / "hypershift" / "cpo-rendered"
FIXTURES = REPO / "fixtures" / "reachability"

# An ignition server behind a NodePort Service and the NetworkPolicy HyperShift adds for it.
IGNITION_NODEPORT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: ignition-server, namespace: clusters-edge}
spec:
  template:
    metadata: {labels: {app: ignition-server}}
    spec: {containers: [{name: s, ports: [{containerPort: 9090}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: ignition-server, namespace: clusters-edge}
spec:
  type: NodePort
  selector: {app: ignition-server}
  ports:
  - {port: 443, targetPort: 9090, nodePort: 30090}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: nodeport-ignition, namespace: clusters-edge}
spec:
  podSelector: {matchLabels: {app: ignition-server}}
  ingress:
  - ports: [{port: 9090}]
  policyTypes: [Ingress]
"""


def load(*paths: Path) -> Inventory:
    result = load_paths([str(p) for p in paths])
    return Inventory(result.objects, result.diagnostics, result.skipped)


@pytest.fixture
def manifests(tmp_path: Path):
    """Write YAML text to a file and load it: ``manifests(text) -> Inventory``."""

    def build(text: str, name: str = "manifests.yaml") -> Inventory:
        path = tmp_path / name
        path.write_text(text)
        return load(path)

    return build


@pytest.fixture
def connections(manifests):
    """``connections(text, **options) -> set of connection-list lines``."""

    def run(text: str, **options: bool) -> set[str]:
        result = connection_list(manifests(text), EvaluationOptions(**options))
        return set(result.lines())

    return run
