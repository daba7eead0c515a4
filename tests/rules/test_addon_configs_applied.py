"""OCM005 judges the AddOnDeploymentConfig the hub applies to each add-on: the
ManagedClusterAddOn's own spec.configs over a selecting placement's configs of its
ClusterManagementAddOn over that one's default (model.ocm.applied_addon_configs)."""

from __future__ import annotations

from pathlib import Path

from hcpscan.findings.model import Status
from tests.rules.harness import scan

CMA = """\
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata: {name: work-manager}
spec:
  installStrategy:
    type: Placements
    placements:
    - name: proxied
      namespace: hub-config
      configs:
      - {group: addon.open-cluster-management.io, resource: addondeploymentconfigs,
         name: placed, namespace: hub-config}
  supportedConfigs:
  - group: addon.open-cluster-management.io
    resource: addondeploymentconfigs
    defaultConfig: {name: fallback, namespace: hub-config}
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata:
  name: proxied-decision-1
  namespace: hub-config
  labels: {cluster.open-cluster-management.io/placement: proxied}
status:
  decisions:
  - {clusterName: CHOSEN, reason: ""}
"""

ADC = """\
---
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: NAME, namespace: NAMESPACE}
spec: {proxyConfig: {httpProxy: "http://proxy.corp.example.com:3128"}}
"""

MCA = """\
---
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: work-manager, namespace: cluster1}
spec:
  installNamespace: open-cluster-management-agent-addon
"""


def _adc(namespace: str, name: str) -> str:
    return ADC.replace("NAMESPACE", namespace).replace("NAME", name)


def _failing(tmp_path: Path, text: str) -> dict[str, str]:
    (tmp_path / "hub.yaml").write_text(text)
    report = scan([tmp_path], ["OCM005"])
    return {f.object.kind: f.message for f in report.findings if f.status is Status.FAIL}


def test_its_own_config_wins_over_a_missing_default(tmp_path: Path):
    own = MCA + "  configs:\n  - {group: addon.open-cluster-management.io, resource: " \
                "addondeploymentconfigs, name: mine, namespace: cluster1}\n"
    failing = _failing(tmp_path, CMA.replace("CHOSEN", "cluster1") + _adc("cluster1", "mine")
                       + _adc("hub-config", "placed") + own)
    # the add-on gets its own config; the ClusterManagementAddOn's default is still dangling
    assert "ManagedClusterAddOn" not in failing
    assert "hub-config/fallback" in failing["ClusterManagementAddOn"]


def test_a_selecting_placement_wins_over_the_default(tmp_path: Path):
    failing = _failing(tmp_path, CMA.replace("CHOSEN", "cluster1") + _adc("hub-config", "placed")
                       + MCA)
    assert "ManagedClusterAddOn" not in failing


def test_without_a_selecting_placement_the_default_applies(tmp_path: Path):
    failing = _failing(tmp_path, CMA.replace("CHOSEN", "cluster9") + _adc("hub-config", "placed")
                       + MCA)
    assert "hub-config/fallback" in failing["ManagedClusterAddOn"]
    assert "the default of ClusterManagementAddOn work-manager" in failing["ManagedClusterAddOn"]


def test_a_missing_placement_config_is_the_add_ons(tmp_path: Path):
    failing = _failing(tmp_path, CMA.replace("CHOSEN", "cluster1") + _adc("hub-config", "fallback")
                       + MCA)
    assert "hub-config/placed" in failing["ManagedClusterAddOn"]
    assert "placement hub-config/proxied" in failing["ManagedClusterAddOn"]


def test_a_namespace_kustomize_wrote_on_the_cluster_scoped_addon_is_none(tmp_path: Path):
    """kustomize's namespace transformer puts a namespace on kinds it does not know, the
    ClusterManagementAddOn too; the API server drops it, and so does the add-on's lookup."""
    cma = CMA.replace("metadata: {name: work-manager}",
                      "metadata: {name: work-manager, namespace: open-cluster-management}")
    failing = _failing(tmp_path, cma.replace("CHOSEN", "cluster9") + _adc("hub-config", "placed")
                       + MCA)
    assert "hub-config/fallback" in failing["ManagedClusterAddOn"]
