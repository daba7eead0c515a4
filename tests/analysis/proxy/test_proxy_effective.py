"""Effective proxy settings per consumer, with sources: the rendered HyperShift
control plane, and fixtures for every other place proxy settings live."""

from __future__ import annotations

import pytest

from hcpscan.analysis.proxy.effective import effective_proxies
from hcpscan.analysis.proxy.settings import ConsumerProxy
from hcpscan.inventory import Inventory


def consumer(consumers: list[ConsumerProxy], name: str) -> ConsumerProxy:
    found = [c for c in consumers if c.name == name]
    assert len(found) == 1, [c.name for c in consumers]
    return found[0]


@pytest.fixture(scope="module")
def cpo(cpo_inventory: Inventory) -> list[ConsumerProxy]:
    return effective_proxies(cpo_inventory)


@pytest.fixture(scope="module")
def fixtures(fixture_inventory: Inventory) -> list[ConsumerProxy]:
    return effective_proxies(fixture_inventory)


@pytest.mark.parametrize("deployment,port,no_proxy,line", [
    ("oauth-openshift", 8092, "kube-apiserver,audit-webhook,"
     "oauth-openshift.hcp-namespace.svc.cluster.local", 96),
    ("openshift-apiserver", 8090, "kube-apiserver,etcd-client,audit-webhook", 96),
    ("ingress-operator", 8090, "kube-apiserver", 103),
])
def test_control_plane_workloads_use_the_konnectivity_sidecar(
        cpo: list[ConsumerProxy], deployment: str, port: int, no_proxy: str, line: int) -> None:
    c = consumer(cpo, f"Deployment hcp-namespace/{deployment} container {deployment}")
    assert c.https_proxy is not None and c.no_proxy is not None
    assert c.https_proxy.value == f"http://127.0.0.1:{port}"
    assert c.https_proxy.name == "HTTPS_PROXY"
    file = f"{deployment}/{deployment.replace('-', '_')}_deployment.yaml"
    assert c.https_proxy.source.path.endswith(file)
    assert c.https_proxy.source.line == line
    assert c.https_proxy.source.field.startswith("spec.template.spec.containers[0].env[")
    assert c.no_proxy.value == no_proxy
    assert c.via is not None and c.via.container == "konnectivity-proxy-https"
    assert c.via.https_proxy is None  # rendered without a hosted-cluster proxy: direct egress


def test_oauth_server_socks5_all_proxy_is_recorded(cpo: list[ConsumerProxy]) -> None:
    c = consumer(cpo, "Deployment hcp-namespace/oauth-openshift container oauth-openshift")
    assert c.variables["ALL_PROXY"].value == "socks5://127.0.0.1:8090"
    assert c.variables["ALL_PROXY"].source.line == 98


def test_sidecar_serving_ports(cpo: list[ConsumerProxy]) -> None:
    oauth = consumer(cpo, "Deployment hcp-namespace/oauth-openshift container "
                          "konnectivity-proxy-https")
    apiserver = consumer(cpo, "Deployment hcp-namespace/openshift-apiserver container "
                              "konnectivity-proxy-https")
    assert oauth.variables["--serving-port"].value == "8092"
    assert apiserver.variables["--serving-port"].value == "8090"  # the default


def test_konnectivity_flags_carry_the_hosted_cluster_proxy(fixtures: list[ConsumerProxy]) -> None:
    c = consumer(fixtures, "Deployment clusters-example/ingress-operator container ingress-operator")
    assert c.via is not None and c.via.https_proxy is not None
    assert c.via.https_proxy.value == "http://proxy.corp.example.com:3128"
    assert c.via.no_proxy is not None and c.via.no_proxy.source.line == 80


def test_value_from_and_env_from_are_resolved(fixtures: list[ConsumerProxy]) -> None:
    c = consumer(fixtures, "Deployment tools/image-puller container puller")
    assert c.variables["HTTP_PROXY"].value == "http://proxy.example.com:3128"
    assert c.variables["HTTP_PROXY"].source.ref == "ConfigMap tools/proxy-env"
    assert c.variables["https_proxy"].value == "http://puller:s3cret@proxy.example.com:3128"
    assert c.no_proxy is not None and c.no_proxy.value == ".svc,.cluster.local,10.0.0.0/8"
    assert c.no_proxy.via[0].field.endswith("env[1].valueFrom")


def test_redacted_and_missing_values_are_unknown_not_empty(fixtures: list[ConsumerProxy]) -> None:
    puller = consumer(fixtures, "Deployment tools/image-puller container puller")
    assert puller.https_proxy is not None and puller.https_proxy.value is None
    assert puller.https_proxy.unknown == "redacted in the dump"
    sidecar = consumer(fixtures, "Deployment tools/image-puller container sidecar")
    assert sidecar.https_proxy is not None and sidecar.https_proxy.value is None
    assert "not-in-this-dump is not in the inventory" in sidecar.https_proxy.unknown


def test_containers_without_proxy_variables_are_left_out(fixture_inventory: Inventory) -> None:
    names = [c.name for c in effective_proxies(fixture_inventory)]
    assert "Deployment tools/image-puller container quiet" not in names
    names = [c.name for c in effective_proxies(fixture_inventory, include_unset=True)]
    assert "Deployment tools/image-puller container quiet" in names


def test_runtime_changes_the_effective_variable(fixture_inventory: Inventory) -> None:
    curl = consumer(effective_proxies(fixture_inventory, runtime="curl"),
                    "Deployment tools/image-puller container puller")
    assert curl.https_proxy is not None and curl.https_proxy.name == "https_proxy"
    assert curl.http_proxy is None  # curl never reads HTTP_PROXY


def test_hosted_cluster_proxy_and_trusted_ca(fixtures: list[ConsumerProxy]) -> None:
    c = consumer(fixtures, "HostedCluster clusters/example")
    assert c.no_proxy is not None and c.no_proxy.value == ".corp.example.com,10.0.0.0/16"
    assert c.no_proxy.source.field == "spec.configuration.proxy.noProxy"
    assert c.ca_bundle is not None and c.ca_bundle.contains(common_name="corp-proxy-ca")
    assert c.trusted_ca is not None and c.trusted_ca.source.ref == "ConfigMap clusters/user-ca-bundle"


def test_ignition_stub_in_a_user_data_secret(fixtures: list[ConsumerProxy]) -> None:
    c = consumer(fixtures, "Secret clusters-example/user-data-example-workers-4f2a1c key value")
    assert c.no_proxy is not None
    assert c.no_proxy.value == ".corp.example.com,10.0.0.0/16,172.31.0.0/16"


def test_openshift_proxy_spec_and_status(fixtures: list[ConsumerProxy]) -> None:
    spec = consumer(fixtures, "Proxy cluster (spec)")
    status = consumer(fixtures, "Proxy cluster (status)")
    assert spec.no_proxy is not None and spec.no_proxy.value == ".corp.example.com"
    assert status.no_proxy is not None and "10.128.0.0/14" in (status.no_proxy.value or "")
    assert spec.trusted_ca is not None and spec.trusted_ca.value is None  # openshift-config absent


def test_systemd_drop_in_file(fixtures: list[ConsumerProxy]) -> None:
    c = consumer(fixtures, "systemd drop-in containerd-http-proxy.conf")
    assert c.https_proxy is not None and c.https_proxy.name == "HTTPS_PROXY"
    assert c.https_proxy.source.line == 4


def test_kubeadm_files_inline_and_from_secret(fixtures: list[ConsumerProxy]) -> None:
    from_secret = consumer(fixtures, "KubeadmConfigTemplate org-acme/mycluster-md-0 file "
                                     "/etc/systemd/system/containerd.service.d/http-proxy.conf")
    inline = consumer(fixtures, "KubeadmConfigTemplate org-acme/mycluster-md-0 file "
                                "/etc/systemd/system/kubelet.service.d/http-proxy.conf")
    assert from_secret.no_proxy is not None
    assert from_secret.no_proxy.source.ref == "Secret org-acme/mycluster-systemd-proxy"
    assert from_secret.no_proxy.via[0].field.endswith("contentFrom.secret")
    assert inline.no_proxy is not None and inline.no_proxy.value is not None
    assert inline.no_proxy.value.endswith(",.svc")


def test_giant_swarm_cluster_values(fixtures: list[ConsumerProxy]) -> None:
    c = consumer(fixtures, "Secret org-acme/mycluster-cluster-values key values")
    assert c.http_proxy is not None and c.http_proxy.value == "http://192.168.52.220:3128"
    assert c.no_proxy is not None and "100.64.0.0/13" in (c.no_proxy.value or "")


def test_addon_deployment_config_and_its_managed_cluster_addons(
        fixtures: list[ConsumerProxy]) -> None:
    adc = consumer(fixtures, "AddOnDeploymentConfig open-cluster-management-hub/proxy-config")
    addon = consumer(fixtures, "ManagedClusterAddOn cluster1/application-manager")
    missing = consumer(fixtures, "ManagedClusterAddOn cluster1/governance-policy-framework")
    assert adc.ca_bundle is not None and adc.ca_bundle.contains(common_name="corp-proxy-ca")
    assert addon.via is adc
    assert addon.no_proxy is not None and addon.no_proxy.value == "172.30.0.1,.svc,.cluster.local"
    assert addon.no_proxy.via[0].ref == "ManagedClusterAddOn cluster1/application-manager"
    assert missing.https_proxy is not None and missing.https_proxy.value is None


def test_kubeconfig_proxy_url_and_ca_bundle(fixtures: list[ConsumerProxy]) -> None:
    c = consumer(fixtures, "Kubeconfig open-cluster-management-agent/bootstrap-hub-kubeconfig/"
                           "kubeconfig cluster hub")
    assert c.https_proxy is not None and c.https_proxy.value == "https://proxy.corp.example.com:3129"
    assert c.https_proxy.source.ref == "Secret open-cluster-management-agent/bootstrap-hub-kubeconfig"
    assert c.https_proxy.source.field == "data.kubeconfig (clusters[0].cluster.proxy-url)"
    assert c.ca_bundle is not None
    assert [x.common_name for x in c.ca_bundle.certificates] == ["hub-kube-apiserver-ca",
                                                                  "corp-proxy-ca"]


def test_json_shape(fixtures: list[ConsumerProxy]) -> None:
    doc = consumer(fixtures, "HostedCluster clusters/example").to_json()
    assert doc["httpsProxy"]["source"]["field"] == "spec.configuration.proxy.httpsProxy"
    assert doc["httpsProxy"]["source"]["line"] == 12
