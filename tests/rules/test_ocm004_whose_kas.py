"""OCM004: the managed cluster's kube-apiserver IP is known only where the input is that
managed cluster; a hub's own ``default/kubernetes`` Service is never another cluster's."""

from __future__ import annotations

import textwrap
from pathlib import Path

from hcpscan.findings.model import Status
from hcpscan.rules.config import ScanConfig
from tests.rules.harness import scan

ADC = """\
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata:
  name: addon-proxy-settings
  namespace: {namespace}
spec:
  proxyConfig:
    httpProxy: http://proxy.corp.example.com:3128
    httpsProxy: http://proxy.corp.example.com:3128
    noProxy: .cluster.local,.svc,{kas}
"""
ADDON = """\
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata:
  name: my-addon
  namespace: {namespace}
spec:
  installNamespace: open-cluster-management-agent-addon
  configs:
  - group: addon.open-cluster-management.io
    resource: addondeploymentconfigs
    name: addon-proxy-settings
    namespace: {config_namespace}
"""
HUB_SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: kubernetes
  namespace: default
  labels: {component: apiserver, provider: kubernetes}
spec:
  clusterIP: 172.30.0.1
  clusterIPs: [172.30.0.1]
  ipFamilies: [IPv4]
  ports:
  - {name: https, port: 443, protocol: TCP, targetPort: 6443}
  type: ClusterIP
"""
MANAGED = """\
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: {name}
  labels: {labels}
spec:
  hubAcceptsClient: true
"""
CLUSTER1 = MANAGED.format(name="cluster1", labels="{cloud: Other, vendor: OpenShift}")
LOCAL = MANAGED.format(name="local-cluster", labels='{local-cluster: "true", vendor: OpenShift}')


def run(tmp_path: Path, *docs: str, config: ScanConfig | None = None):
    (tmp_path / "input.yaml").write_text("---\n".join(textwrap.dedent(d) for d in docs))
    report = scan([tmp_path], ["OCM004"], config)
    return report, report.results[0]


def test_a_hub_dump_never_lends_its_own_kas_ip_to_a_managed_cluster(tmp_path):
    # an ACM hub: cluster1's add-on config lists cluster1's real KAS IP; the Service in the
    # input is the hub's
    report, result = run(tmp_path, CLUSTER1, LOCAL, HUB_SERVICE,
                         ADC.format(namespace="cluster1", kas="10.96.0.1"),
                         ADDON.format(namespace="cluster1", config_namespace="cluster1"))
    assert report.findings == []
    assert result.status is Status.NOT_EVALUABLE
    assert "serves managed cluster cluster1" in result.reason
    assert "input the user must supply: managed_cluster_kas_ip" in result.reason
    assert "cluster1 is OpenShift" in result.reason
    assert "172.30.0.1 (ClusterIP" not in result.reason


def test_a_hub_without_local_cluster_is_not_the_managed_cluster(tmp_path):
    hub = """\
        apiVersion: operator.open-cluster-management.io/v1
        kind: ClusterManager
        metadata: {name: cluster-manager}
        spec: {registrationImagePullSpec: quay.io/open-cluster-management/registration:v0.13.0}
        """
    report, result = run(tmp_path, CLUSTER1, hub, HUB_SERVICE,
                         ADC.format(namespace="cluster1", kas="10.96.0.2"))
    assert report.findings == [] and result.status is Status.NOT_EVALUABLE
    assert "its namespace cluster1 (no ManagedClusterAddOn" in result.reason


def test_the_hub_that_manages_itself_is_judged_by_its_own_service(tmp_path):
    # the ADC kept in a shared namespace, used by local-cluster's add-on
    report, result = run(tmp_path, LOCAL, HUB_SERVICE,
                         ADC.format(namespace="open-cluster-management-hub", kas="10.96.0.1"),
                         ADDON.format(namespace="local-cluster",
                                      config_namespace="open-cluster-management-hub"))
    assert result.status is Status.FAIL, result.reason
    (finding,) = report.findings
    assert "kube-apiserver 172.30.0.1" in finding.message
    assert any("ClusterIP of Service default/kubernetes, managed cluster local-cluster's "
               "(ManagedCluster local-cluster is labelled local-cluster=true" in e
               for e in finding.evidence), finding.evidence
    assert finding.data["missing_no_proxy"] == ["172.30.0.1"]


def test_a_renamed_local_cluster_is_recognised_by_its_label(tmp_path):
    renamed = MANAGED.format(name="hub-east", labels='{local-cluster: "true"}')
    _, result = run(tmp_path, renamed, HUB_SERVICE,
                    ADC.format(namespace="hub-east", kas="172.30.0.1"))
    assert result.status is Status.PASS, result.reason
    unlabelled = MANAGED.format(name="local-cluster", labels="{vendor: OpenShift}")
    _, result = run(tmp_path, unlabelled, HUB_SERVICE,
                    ADC.format(namespace="local-cluster", kas="10.0.0.1"))
    assert result.status is Status.NOT_EVALUABLE, result.reason


def test_one_config_for_the_hub_and_another_cluster_judges_the_hub_and_asks_for_the_other(tmp_path):
    report, result = run(tmp_path, LOCAL, CLUSTER1, HUB_SERVICE,
                         ADC.format(namespace="open-cluster-management-hub", kas="10.96.0.1"),
                         ADDON.format(namespace="local-cluster",
                                      config_namespace="open-cluster-management-hub"),
                         ADDON.format(namespace="cluster1",
                                      config_namespace="open-cluster-management-hub"))
    assert result.status is Status.FAIL
    assert [f.data["missing_no_proxy"] for f in report.findings] == [["172.30.0.1"]]
    assert "also not evaluable" in result.reason and "cluster1" in result.reason


KLUSTERLET = """\
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {{name: klusterlet}}
spec:
  clusterName: cluster1
  namespace: open-cluster-management-agent
  deployOption: {{mode: {mode}}}
"""


def test_the_managed_clusters_own_dump_gives_its_kas_ip(tmp_path):
    report, result = run(tmp_path, KLUSTERLET.format(mode="Default"), HUB_SERVICE,
                         ADC.format(namespace="cluster1", kas="10.96.0.1"))
    assert result.status is Status.FAIL, result.reason
    assert any("Klusterlet klusterlet spec.clusterName" in e for e in report.findings[0].evidence)


def test_a_hosted_mode_klusterlet_runs_on_another_cluster(tmp_path):
    # Hosted: the klusterlet's agents run on a hosting cluster, whose Service this is
    report, result = run(tmp_path, KLUSTERLET.format(mode="Hosted"), HUB_SERVICE,
                         ADC.format(namespace="cluster1", kas="10.96.0.1"))
    assert report.findings == [] and result.status is Status.NOT_EVALUABLE


def test_a_hosted_klusterlet_beside_a_default_one_hides_nothing(tmp_path):
    """OCM's AgentNamespace is per Klusterlet: a cluster that is managed cluster cluster1
    (Default mode) and hosts the agents of hosted2 (Hosted mode, namespace named after its
    Klusterlet) is still cluster1, by its Klusterlet and by its agent namespace's
    hub-kubeconfig-secret; the hosted agents' hub-kubeconfig-secret names hosted2 and is
    not this cluster's name."""
    hosted = """\
        apiVersion: operator.open-cluster-management.io/v1
        kind: Klusterlet
        metadata: {name: klusterlet-hosted2}
        spec:
          clusterName: hosted2
          deployOption: {mode: Hosted}
        """
    secret = """\
        apiVersion: v1
        kind: Secret
        metadata: {{name: hub-kubeconfig-secret, namespace: {namespace}}}
        type: Opaque
        data: {{cluster-name: {name}}}
        """
    report, result = run(tmp_path, KLUSTERLET.format(mode="Default"), hosted, HUB_SERVICE,
                         ADC.format(namespace="cluster1", kas="10.96.0.1"))
    assert result.status is Status.FAIL, result.reason
    assert any("Klusterlet klusterlet spec.clusterName" in e for e in report.findings[0].evidence)
    # the Default Klusterlet's agent namespace alone (no Klusterlet object in the dump)
    _, result = run(tmp_path, hosted, HUB_SERVICE,
                    secret.format(namespace="open-cluster-management-agent", name="Y2x1c3RlcjE="),
                    ADC.format(namespace="cluster1", kas="10.96.0.1"))
    assert result.status is Status.FAIL, result.reason
    # the hosted agents' secret, in a namespace named after their Klusterlet, names hosted2
    _, result = run(tmp_path, hosted.replace("klusterlet-hosted2", "open-cluster-management-h2"),
                    HUB_SERVICE,
                    secret.format(namespace="open-cluster-management-h2", name="aG9zdGVkMg=="),
                    ADC.format(namespace="hosted2", kas="10.96.0.1"))
    assert result.status is Status.NOT_EVALUABLE, result.reason


def test_the_registration_agents_cluster_name_names_the_input(tmp_path):
    secret = """\
        apiVersion: v1
        kind: Secret
        metadata: {name: hub-kubeconfig-secret, namespace: open-cluster-management-agent}
        type: Opaque
        data:
          cluster-name: Y2x1c3RlcjE=
          agent-name: ZDhiNmQ1ZjQ=
        """
    _, result = run(tmp_path, secret, HUB_SERVICE, ADC.format(namespace="cluster1", kas="10.96.0.1"))
    assert result.status is Status.FAIL, result.reason
    _, result = run(tmp_path, secret, HUB_SERVICE, ADC.format(namespace="cluster2", kas="10.96.0.1"))
    assert result.status is Status.NOT_EVALUABLE, result.reason


def test_the_users_kas_ip_still_answers_for_every_cluster(tmp_path):
    report, result = run(tmp_path, CLUSTER1, LOCAL, HUB_SERVICE,
                         ADC.format(namespace="cluster1", kas="10.96.0.1"),
                         config=ScanConfig(managed_cluster_kas_ip="10.96.0.1"))
    assert result.status is Status.PASS, result.reason


def test_a_hub_must_gather_names_what_to_add(tmp_path):
    root = tmp_path / "must-gather.local.42" / "quay-io-acm-must-gather"
    files = {
        "namespaces/cluster1/addon.open-cluster-management.io/addondeploymentconfigs.yaml":
            "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: AddOnDeploymentConfigList\n"
            "items:\n" + textwrap.indent(ADC.format(namespace="cluster1", kas="10.96.0.1"), "  ")
            .replace("  apiVersion", "- apiVersion", 1),
        "namespaces/default/core/services.yaml":
            "apiVersion: v1\nkind: ServiceList\nitems:\n"
            + textwrap.indent(HUB_SERVICE, "  ").replace("  apiVersion", "- apiVersion", 1),
        "cluster-scoped-resources/cluster.open-cluster-management.io/managedclusters.yaml":
            "apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedClusterList\nitems:\n"
            + textwrap.indent(CLUSTER1, "  ").replace("  apiVersion", "- apiVersion", 1)
            + textwrap.indent(LOCAL, "  ").replace("  apiVersion", "- apiVersion", 1),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    report = scan([tmp_path], ["OCM004"])
    assert report.findings == []
    assert report.results[0].status is Status.NOT_EVALUABLE
    assert "managed_cluster_kas_ip" in report.results[0].reason
