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


# a second placement after "proxied": the add-on manager walks placements from the last
# (addonconfiguration graph, addAddonNode), and that placement's node starts from the
# defaults, overridden by its own configs only
LATER = """\
    - name: LATER_NAME
      namespace: hub-config
LATER_CONFIGS---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata:
  name: LATER_NAME-decision-1
  namespace: hub-config
  labels: {cluster.open-cluster-management.io/placement: LATER_NAME}
status:
  decisions:
  - {clusterName: cluster1, reason: ""}
"""


def _two_placements(later_configs: str) -> str:
    later = LATER.replace("LATER_NAME", "later").replace("LATER_CONFIGS", later_configs)
    first, rest = CMA.replace("CHOSEN", "cluster1").split("  supportedConfigs:\n")
    placement_end = first.index("---") if "---" in first else len(first)
    return (first[:placement_end] + later.split("---")[0] + "  supportedConfigs:\n" + rest
            + "---" + later.split("---", 1)[1])


def test_the_last_selecting_placement_wins(tmp_path: Path):
    configs = ("      configs:\n      - {group: addon.open-cluster-management.io, resource: "
               "addondeploymentconfigs, name: late, namespace: hub-config}\n")
    failing = _failing(tmp_path, _two_placements(configs) + _adc("hub-config", "late")
                       + _adc("hub-config", "fallback") + MCA)
    # "proxied" (first) names the missing hub-config/placed: the add-on never gets it
    assert "ManagedClusterAddOn" not in failing
    assert "hub-config/placed" in failing["ClusterManagementAddOn"]


def test_a_last_selecting_placement_without_configs_leaves_the_default(tmp_path: Path):
    failing = _failing(tmp_path, _two_placements("") + _adc("hub-config", "placed") + MCA)
    assert "hub-config/fallback" in failing["ManagedClusterAddOn"]
    assert "the default of ClusterManagementAddOn work-manager" in failing["ManagedClusterAddOn"]
