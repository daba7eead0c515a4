"""PRX017 judges the control-plane workloads HyperShift gives the management cluster's proxy,
as the model lists them (OCPBUGS-105282: cluster-storage-operator; OCPBUGS-1736: the
cloud-network-config-controller the network operator renders), and only in a hosted control
plane's namespace: the management cluster's own operators of the same names are not its."""

from __future__ import annotations

from pathlib import Path

from hcpscan.model.capi import CLOUD_API_PROVIDERS, PROVIDER_LABEL
from hcpscan.model.hostedcluster import MANAGEMENT_PROXY_WORKLOADS
from hcpscan.rules.loader import load_rule_file
from tests.conftest import FIXTURES
from tests.rules.harness import scan

RULE = Path(__file__).parents[2] / "rules" / "PRX017.yaml"
FAIL = FIXTURES / "rules" / "PRX017" / "fail" / "hcp-storage-and-cloud-network.yaml"


def test_the_rule_judges_exactly_the_models_workloads() -> None:
    rule = load_rule_file(RULE, builtin=True)
    workloads = rule.params["consumers"]["workloads"]
    named = {name: sel for name, sel in workloads.items() if "names" in sel}
    assert {name: sel["containers"] for name, sel in named.items()} == {
        name: [container] for name, container in MANAGEMENT_PROXY_WORKLOADS.items()}
    # clusterctl's providers, by their provider label (model.capi.CLOUD_API_PROVIDERS)
    labelled = [sel for sel in workloads.values() if "names" not in sel]
    assert {sel["labels"][PROVIDER_LABEL]: sel["containers"] for sel in labelled} == {
        label: [container] for label, container in CLOUD_API_PROVIDERS.items()}
    assert all(set(sel["labels"]) == {PROVIDER_LABEL} for sel in labelled)
    assert sorted(rule.applies_to.names) == sorted([*MANAGEMENT_PROXY_WORKLOADS,
                                                    "*-controller-manager"])


def test_clusterctl_cloud_provider_without_proxy_fires_and_core_providers_are_not_judged(
        tmp_path: Path) -> None:
    """cluster-api#4585: CAPA on a proxied management cluster; the core controller and the
    kubeadm bootstrap provider beside it call no cloud API (they carry no proxy either)."""
    folder = FIXTURES / "rules" / "PRX017" / "fail" / "clusterctl-must-gather"
    found = [(f.object.name, f.message.split("(")[1].split(")")[0])
             for f in scan([folder], ["PRX017"]).findings]
    assert found == [("capa-controller-manager", "cluster-api-provider-aws")]


def test_storage_operator_and_cloud_network_controller_without_proxy_fire() -> None:
    found = [(f.object.name, f.message.split(" container ")[1].split()[0]) for f in
             scan([FAIL], ["PRX017"]).findings]
    assert sorted(found) == [("cloud-network-config-controller", "controller"),
                             ("cluster-storage-operator", "cluster-storage-operator")]


def test_the_management_clusters_own_operator_is_not_a_control_plane_workload(
        tmp_path: Path) -> None:
    text = FAIL.read_text().replace("namespace: clusters-hc1", "namespace: openshift-storage")
    text = text.replace("hypershift.openshift.io/hosted-control-plane: clusters-hc1",
                        "name: operator")
    (tmp_path / "in.yaml").write_text(text)
    assert [f.object.name for f in scan([tmp_path / "in.yaml"], ["PRX017"]).findings] == []
