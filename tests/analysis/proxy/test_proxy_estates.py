"""Proxy consumers where real estates keep their settings (issue 13): chart values, Cluster
API control planes, OCM klusterlet and add-on configs, OpenShift install-configs and
MachineConfigs. Each value is found with the line that writes it."""

from __future__ import annotations

import pytest

from hcpscan.analysis.proxy.effective import effective_proxies
from hcpscan.analysis.proxy.settings import (
    CHART_VALUES,
    INSTALL_CONFIG,
    KLUSTERLET_ADDON_CONFIG,
    KLUSTERLET_CONFIG,
    KUBEADM_FILE,
    MACHINE_CONFIG_FILE,
    ConsumerProxy,
)
from hcpscan.model.readers import go_reader
from tests.analysis.proxy.conftest import FIXTURES, SHARED, load
from tests.analysis.proxy.test_proxy_effective import consumer


@pytest.fixture(scope="module")
def fleet() -> list[ConsumerProxy]:
    return effective_proxies(load(FIXTURES / "capi-fleet-values.yaml"))


@pytest.fixture(scope="module")
def ocm() -> list[ConsumerProxy]:
    return effective_proxies(load(FIXTURES / "ocm-klusterlet-and-addons.yaml"))


@pytest.fixture(scope="module")
def openshift() -> list[ConsumerProxy]:
    return effective_proxies(load(FIXTURES / "openshift"))


def test_kubeadm_control_plane_files_are_decoded(fleet: list[ConsumerProxy]) -> None:
    c = consumer(fleet, "KubeadmControlPlane org-fleet/fleet file "
                        "/etc/systemd/system/containerd.service.d/http-proxy.conf")
    assert c.kind == KUBEADM_FILE and c.program == "containerd"
    assert c.https_proxy is not None and c.https_proxy.value == "http://10.0.0.9:3128"
    assert c.https_proxy.source.field == "spec.kubeadmConfigSpec.files[0].content (unit line 2)"
    assert c.https_proxy.source.line == 12
    assert not [x for x in fleet if "audit-policy" in x.name]  # not a drop-in


def test_helm_release_inline_values_of_the_cluster_chart(fleet: list[ConsumerProxy]) -> None:
    c = consumer(fleet, "HelmRelease org-fleet/fleet spec.values")
    assert c.kind == CHART_VALUES
    assert c.no_proxy is not None and c.no_proxy.value == "corp.example.com"
    assert c.no_proxy.source.field == "spec.values.global.connectivity.proxy.noProxy"
    assert c.no_proxy.source.line == 39
    # the chart adds the cluster's own destinations: coverage asks only the user's part
    assert "cluster chart" in c.completed_by and go_reader(c.program)


def test_values_from_and_app_configs_are_one_consumer_per_document(
        fleet: list[ConsumerProxy]) -> None:
    flux = consumer(fleet, "ConfigMap org-fleet/fleet-chart-values key values.yaml")
    assert flux.notes == ["read by HelmRelease org-fleet/fleet (spec.valuesFrom[0])"]
    assert flux.http_proxy is not None and flux.http_proxy.name == "http"
    assert flux.http_proxy.source.field == 'data["values.yaml"] (cluster.proxy.http at line 3 of it)'
    assert not flux.completed_by
    user = consumer(fleet, "ConfigMap org-fleet/fleet-exporter-user-values key values")
    assert user.notes == ["read by App org-fleet/fleet-exporter (spec.userConfig.configMap)"]
    assert user.no_proxy is not None and user.no_proxy.value == "<no value>"
    secret = consumer(fleet, "Secret org-fleet/fleet-exporter-proxy key values")
    assert secret.https_proxy is not None and secret.https_proxy.value == "http://user:pw@10.0.0.9:3128"


def test_values_the_chart_does_not_use_are_left_out(fleet: list[ConsumerProxy]) -> None:
    names = [c.name for c in fleet]
    assert not [n for n in names if "fleet-one-value" in n]  # a targetPath value
    assert not [n for n in names if "fleet-off-user-values" in n]  # enabled: false
    assert not [n for n in names if "fleet-kyverno-user-values" in n]  # enabled only


def test_klusterlet_config_proxy_url_and_trusted_bundles(ocm: list[ConsumerProxy]) -> None:
    c = consumer(ocm, "KlusterletConfig edge-sites")
    assert c.kind == KLUSTERLET_CONFIG and go_reader(c.program)
    assert c.http_proxy is c.https_proxy  # one proxy for every request to the hub
    assert c.https_proxy is not None and c.https_proxy.source.line == 10
    assert c.no_proxy is None
    assert c.ca_bundle is not None and len(c.ca_bundle) == 1 and not c.ca_bundle.problems
    trust = consumer(ocm, "KlusterletConfig system-trust")
    assert trust.trusted_ca is not None and not trust.trusted_ca.known
    assert "UseSystemTruststore" in trust.trusted_ca.unknown


def test_klusterlet_config_deprecated_fields_prefer_https(ocm: list[ConsumerProxy]) -> None:
    c = consumer(ocm, "KlusterletConfig legacy")
    assert c.https_proxy is not None and c.https_proxy.name == "httpsProxy"
    assert c.http_proxy is c.https_proxy
    assert c.ca_bundle is not None and len(c.ca_bundle) == 1


def test_klusterlet_addon_config(ocm: list[ConsumerProxy]) -> None:
    c = consumer(ocm, "KlusterletAddonConfig cluster2/cluster2")
    assert c.kind == KLUSTERLET_ADDON_CONFIG and go_reader(c.program)
    assert c.no_proxy is not None and c.no_proxy.value == "172.30.0.1,.svc"
    assert c.no_proxy.source.field == "spec.proxyConfig.noProxy"


@pytest.mark.parametrize("cluster,config,how", [
    ("cluster2", "placed-proxy", "placement open-cluster-management-global-set/edge"),
    ("cluster3", "default-proxy", "the default of"),  # not selected by the placement
    ("cluster4", "default-proxy", "the default of"),  # its own reference is misspelled
])
def test_add_ons_get_their_config_from_the_cluster_management_add_on(
        ocm: list[ConsumerProxy], cluster: str, config: str, how: str) -> None:
    c = consumer(ocm, f"ManagedClusterAddOn {cluster}/search-collector")
    assert c.via is not None and c.via.name == f"AddOnDeploymentConfig open-cluster-management-hub/{config}"
    assert how in c.notes[-1]
    assert c.http_proxy is not None and c.http_proxy.via[0].ref == "ClusterManagementAddOn search-collector"


def test_placement_without_decisions_falls_back_and_says_so(tmp_path) -> None:
    text = (FIXTURES / "ocm-klusterlet-and-addons.yaml").read_text()
    kept = [d for d in text.split("\n---\n") if "kind: PlacementDecision" not in d]
    (tmp_path / "ocm.yaml").write_text("\n---\n".join(kept))
    c = consumer(effective_proxies(load(tmp_path)), "ManagedClusterAddOn cluster2/search-collector")
    assert c.via is not None and c.via.name.endswith("/default-proxy")
    assert any("no PlacementDecision" in n and "cluster2" in n for n in c.notes)


def test_install_config_file_and_in_cluster_config(openshift: list[ConsumerProxy]) -> None:
    file = consumer(openshift, "install-config install-config.yaml")
    assert file.kind == INSTALL_CONFIG and file.completed_by and go_reader(file.program)
    assert file.https_proxy is not None and file.https_proxy.source.line == 13
    assert file.trusted_ca is None  # no additionalTrustBundle
    kept = consumer(openshift, "install-config in ConfigMap kube-system/cluster-config-v1")
    assert kept.http_proxy is not None
    assert kept.http_proxy.source.ref == "ConfigMap kube-system/cluster-config-v1"
    assert kept.http_proxy.source.field == "data.install-config (proxy.httpProxy)"


def test_machine_config_env_file_and_unit_drop_in(openshift: list[ConsumerProxy]) -> None:
    env = consumer(openshift, "MachineConfig 99-worker-proxy-env file /etc/mco/proxy.env")
    assert env.kind == MACHINE_CONFIG_FILE and env.runtime == "go" and go_reader(env.program)
    assert env.no_proxy is not None and env.no_proxy.value.startswith(".cluster.local,")
    assert env.no_proxy.source.field == ("spec.config.storage.files[0].contents.source "
                                         "(line 3 of /etc/mco/proxy.env)")
    dropin = consumer(openshift, "MachineConfig 99-worker-proxy-env file "
                                 "/etc/systemd/system/kubelet.service.d/20-proxy.conf")
    assert dropin.program == "kubelet"
    assert not [c for c in openshift if "motd" in c.name]


def test_machine_config_lines_are_found_only_when_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line of a file a MachineConfig writes is named at once, and its place in the
    user's file (which re-reads the document) is found only when a report shows it."""
    inventory = load(FIXTURES / "openshift")
    located: list[tuple[str, tuple]] = []
    real = type(inventory).locate

    def counting(self, obj, path=()):  # type: ignore[no-untyped-def]
        located.append((obj.ref, path))
        return real(self, obj, path)

    monkeypatch.setattr(type(inventory), "locate", counting)
    env = consumer(effective_proxies(inventory),
                   "MachineConfig 99-worker-proxy-env file /etc/mco/proxy.env")
    assert env.no_proxy is not None
    source = env.no_proxy.source
    assert source.field.endswith("(line 3 of /etc/mco/proxy.env)") and located == []
    field = ("spec", "config", "storage", "files", 0, "contents", "source")
    where = real(inventory, env.object, field)
    assert (source.path, source.line) == (where.path, where.line)
    assert where.path.endswith("node-configs.yaml") and where.line > 1
    assert located == [("MachineConfig 99-worker-proxy-env", field)]
    assert source.place is None and source.steps == ()  # named, as before: no field of its own


def test_real_must_gather_mco_file_without_proxy_is_no_consumer() -> None:
    """must-gather-aws ships the MCO's proxy.env with comments only, and an install-config
    without a proxy block: neither is a consumer."""
    consumers = effective_proxies(load(SHARED / "realworld" / "must-gather-aws"))
    assert {c.kind for c in consumers} == {"container", "Proxy"}


def test_real_cluster_chart_user_values_are_a_completed_consumer() -> None:
    consumers = effective_proxies(load(SHARED / "realworld" / "gs-cluster-cloud-director"))
    user = consumer(consumers, "ConfigMap org-multi-project/testing-cluster-user-values key values")
    assert user.no_proxy is not None and user.no_proxy.value == "my.domain.com,10.205.105.0/24"
    assert user.completed_by
    assert "read by App org-multi-project/testing (spec.userConfig.configMap)" in user.notes
    kcp = [c for c in consumers if c.object.kind == "KubeadmControlPlane"]
    # the drop-ins' programs, and kubeadm for the chart's preKubeadmCommands exports
    assert {c.program for c in kcp} == {"containerd", "kubelet", "teleport", "kubeadm"}


def test_a_config_without_proxy_config_is_no_missing_object(ocm: list[ConsumerProxy]) -> None:
    c = consumer(ocm, "ManagedClusterAddOn cluster5/work-manager")
    assert c.http_proxy is None and c.https_proxy is None and c.via is None
    assert c.notes == ["AddOnDeploymentConfig cluster5/no-proxy-config sets no proxyConfig: "
                       "the add-on's agents get no proxy from it"]
