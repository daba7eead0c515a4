"""OCM005 judges the AddOnDeploymentConfig the hub applies to each add-on: the
ManagedClusterAddOn's own spec.configs over a selecting placement's configs of its
ClusterManagementAddOn over that one's default (model.ocm.applied_addon_configs)."""

from __future__ import annotations

from pathlib import Path

from hcpscan.findings.model import Status
from hcpscan.inventory.store import Inventory
from hcpscan.model.ocm import applied_addon_configs
from hcpscan.sources.loader import load_paths
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


def _applied(tmp_path: Path, text: str) -> tuple[list[str], list[str]]:
    (tmp_path / "hub.yaml").write_text(text)
    inventory = Inventory(load_paths([str(tmp_path / "hub.yaml")]).objects)
    [addon] = inventory.of_kind("ManagedClusterAddOn")
    notes: list[str] = []
    refs = applied_addon_configs(inventory, addon, notes)
    return [f"{r.namespace}/{r.name}" for r in refs], notes


def test_a_later_placement_without_configs_or_decisions_is_said_unknown(tmp_path: Path):
    """A later placement that sets no configs and whose PlacementDecisions are not in the
    input may select the cluster and leave the defaults in force: the answer stays the
    earlier placement's configs, with a note that it is not certain."""
    unknown_later = "    - name: later\n      namespace: hub-config\n"
    first, rest = CMA.replace("CHOSEN", "cluster1").split("  supportedConfigs:\n")
    refs, notes = _applied(tmp_path, first + unknown_later + "  supportedConfigs:\n" + rest + MCA)
    assert refs == ["hub-config/placed"]
    [note] = notes
    assert "hub-config/later" in note and "the defaults apply" in note and "cluster1" in note
    # known (decisions in the input, not selecting cluster1): nothing to say
    known = _two_placements("")
    at = known.rindex("clusterName: cluster1")
    refs, notes = _applied(tmp_path, known[:at] + "clusterName: cluster7"
                           + known[at + len("clusterName: cluster1"):] + MCA)
    assert refs == ["hub-config/placed"] and notes == []


def test_placements_count_only_for_the_placements_install_strategy(tmp_path: Path):
    """OCM's configuration graph reads the placements only when
    spec.installStrategy.type is neither empty nor Manual: otherwise the defaults apply."""
    selecting = CMA.replace("CHOSEN", "cluster1")
    assert _applied(tmp_path, selecting + MCA)[0] == ["hub-config/placed"]
    for kind in ("    type: Manual\n", ""):
        refs, _ = _applied(tmp_path, selecting.replace("    type: Placements\n", kind) + MCA)
        assert refs == ["hub-config/fallback"], kind
