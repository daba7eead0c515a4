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


def test_the_fix_points_at_where_hypershift_takes_the_proxy_from() -> None:
    """proxy.SetEnvVars copies the control-plane-operator's own environment (os.Getenv) into
    the components it renders; the HyperShift operator renders capi-provider and the
    control-plane-operator from its own: a fix names those, never 'the provider's installer'."""
    fails = FIXTURES / "rules" / "PRX017" / "fail"
    why = {f.object.name: f.remedy.why for f in scan([fails], ["PRX017"]).findings}
    storage = why["cluster-storage-operator"]
    assert "control-plane-operator Deployment in clusters-hc1" in storage
    assert "oc -n clusters-hc1 get deployment control-plane-operator" in storage
    assert "HyperShift operator" in storage and "installer" not in storage
    capi = why["capi-provider"]
    assert capi.startswith("capi-provider is rendered by the HyperShift operator")
    assert "control-plane-operator Deployment" not in capi


def test_the_konnectivity_sidecars_that_reach_cloud_apis_need_the_proxy() -> None:
    """konnectivity-container.go: with ConnectDirectlyToCloudAPIs (ingress-operator,
    oauth-openshift) the konnectivity-proxy-https sidecar gets proxy.SetEnvVars; its socks5
    sibling does not, and the sidecar's env is read as its own beside its flags."""
    fails = FIXTURES / "rules" / "PRX017" / "fail" / "hcp-konnectivity-sidecars.yaml"
    found = sorted((f.object.name, f.message.split(" container ")[1].split()[0])
                   for f in scan([fails], ["PRX017"]).findings)
    assert found == [("ingress-operator", "konnectivity-proxy-https"),
                     ("oauth-openshift", "konnectivity-proxy-https")]
    passes = FIXTURES / "rules" / "PRX017" / "pass" / "hcp-konnectivity-sidecars.yaml"
    report = scan([passes], ["PRX017"])
    assert report.findings == [] and report.results[0].objects_checked == 2


def test_a_clusterctl_provider_is_fixed_on_its_own_deployment() -> None:
    """clusterctl has no proxy setting: a cloud provider's controller gets the variables on
    its own Deployment, never 'from the HyperShift operator'."""
    fails = FIXTURES / "rules" / "PRX017" / "fail" / "clusterctl-must-gather"
    (found,) = [f for f in scan([fails], ["PRX017"]).findings if f.status.value == "fail"]
    assert found.remedy is not None and "installed by clusterctl" in found.remedy.why
    assert "HyperShift" not in found.remedy.why
