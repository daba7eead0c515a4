"""An Insights Operator archive is read (its config objects carry no kind), and client-side
configuration files (oc-mirror's ImageSetConfiguration) are no cluster objects."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

PROXY = {"metadata": {"name": "cluster"},
         "spec": {"httpProxy": "http://proxy.corp.example.com:3128",
                  "httpsProxy": "http://proxy.corp.example.com:3128", "noProxy": ".corp.example.com"},
         "status": {"httpProxy": "http://proxy.corp.example.com:3128",
                    "httpsProxy": "http://proxy.corp.example.com:3128",
                    "noProxy": ".cluster.local,.corp.example.com,.svc,10.128.0.0/14,127.0.0.1,"
                               "172.30.0.0/16,localhost"}}
NETWORK = {"metadata": {"name": "cluster"},
           "spec": {"clusterNetwork": [{"cidr": "10.128.0.0/14", "hostPrefix": 23}],
                    "serviceNetwork": ["172.30.0.0/16"]}}
POD = {"metadata": {"name": "router-default-1"},
       "spec": {"containers": [{"name": "router", "image": "router",
                                "env": [{"name": "HTTPS_PROXY", "value": "http://proxy:3128"},
                                        {"name": "NO_PROXY", "value": ".corp.example.com"}]}]}}


def _archive(tmp_path: Path) -> Path:
    root = tmp_path / "insights"
    files = {"config/proxy.json": PROXY, "config/network.json": NETWORK,
             "config/pod/openshift-ingress/router-default-1.json": POD,
             "insights-operator/gathers.json": {"status_reports": []}}
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(json.dumps(body))
    archive = tmp_path / "insights.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname=".")
    return archive


def test_the_cluster_proxy_of_an_insights_archive_reaches_the_model(tmp_path, run_cli):
    report = json.loads(run_cli("scan", str(_archive(tmp_path)), "--format", "json").out)
    findings = {(f["rule_id"], f["object"]["kind"], f["object"]["name"]) for f in report["findings"]}
    # the Pod gathered under config/pod/<ns>/ is judged against the Network's CIDRs
    assert ("PRX005", "Pod", "router-default-1") in findings
    (pod,) = [f for f in report["findings"] if f["object"]["kind"] == "Pod"]
    assert pod["object"]["namespace"] == "openshift-ingress"
    assert pod["location"]["path"].endswith("config/pod/openshift-ingress/router-default-1.json")


def test_the_insights_proxy_is_a_consumer_at_its_file(tmp_path, run_cli):
    out = json.loads(run_cli("proxy", str(_archive(tmp_path)), "--format", "json").out)
    text = json.dumps(out)
    assert "Proxy cluster" in text and "config/proxy.json" in text


def test_an_image_set_configuration_is_no_cluster_object(tmp_path, run_cli):
    (tmp_path / "imageset.yaml").write_text(
        "apiVersion: mirror.openshift.io/v1alpha2\nkind: ImageSetConfiguration\n"
        "storageConfig: {local: {path: ./mirror}}\n"
        "mirror: {platform: {channels: [{name: stable-4.16}]}}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: d}\ndata: {a: b}\n")
    report = json.loads(run_cli("scan", str(tmp_path), "--format", "json").out)
    assert [d["message"] for d in report["diagnostics"]] == []
    assert any("client-side configuration (ImageSetConfiguration, read by oc-mirror)"
               in p["reason"] for p in report["passed_over"])


def test_a_kubeadm_config_file_with_kubelet_and_kube_proxy_documents_is_no_cluster_object(
        tmp_path, run_cli):
    # `kubeadm config print init-defaults --component-configs KubeletConfiguration,...` writes
    # them in one file: none of its documents is a cluster object that lacks a name
    (tmp_path / "kubeadm.yaml").write_text(
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n"
        "networking: {podSubnet: 10.244.0.0/16}\n---\n"
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        "cgroupDriver: systemd\n---\n"
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
        "mode: ipvs\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: d}\ndata: {a: b}\n")
    report = json.loads(run_cli("scan", str(tmp_path), "--format", "json").out)
    assert [d["message"] for d in report["diagnostics"]] == []
    assert len([p for p in report["passed_over"] if "client-side" in p["reason"]]) == 3


# -- the other resources the Insights Operator gathers (issue 24 item 4) ----------------------

ANONYMIZED = "-----BEGIN CERTIFICATE-----\nANONYMIZED\n-----END CERTIFICATE-----\n"
INSTALL_CONFIG = """\
apiVersion: v1
baseDomain: example.com
metadata:
  name: mgmt
networking:
  machineNetwork:
  - cidr: 10.0.0.0/16
  clusterNetwork:
  - cidr: 10.128.0.0/14
    hostPrefix: 23
  serviceNetwork:
  - 172.30.0.0/16
platform:
  aws:
    region: eu-west-1
pullSecret: ''
"""


def _full_archive(tmp_path: Path) -> Path:
    root = tmp_path / "insights-full"
    proxy = {"metadata": {"name": "cluster"},
             "spec": {"httpsProxy": "https://proxy.corp.example.com:3129",
                      "noProxy": ".corp.example.com", "trustedCA": {"name": "user-ca-bundle"}},
             "status": {"httpsProxy": "https://proxy.corp.example.com:3129",
                        "noProxy": ".cluster.local,.corp.example.com,.svc,10.0.0.0/16,"
                                   "10.128.0.0/14,127.0.0.1,172.30.0.0/16,localhost"}}
    files = {
        "config/proxy.json": json.dumps(proxy),
        "config/network.json": json.dumps(NETWORK),
        "config/ingress.json": json.dumps({"metadata": {"name": "cluster"},
                                           "spec": {"domain": "apps.mgmt.example.com"}}),
        "config/featuregate.json": json.dumps({"metadata": {"name": "cluster"}, "spec": {}}),
        "config/configmaps/openshift-config/user-ca-bundle/ca-bundle.crt": ANONYMIZED,
        "config/configmaps/kube-system/cluster-config-v1/install-config": INSTALL_CONFIG,
        "config/clusteroperator/operator.openshift.io/ingresscontroller/openshift-ingress-operator/"
        "default.json": json.dumps({"apiVersion": "operator.openshift.io/v1",
                                    "kind": "IngressController", "name": "default",
                                    "spec": {"replicas": 2}}),
        "config/node/worker-0.json": json.dumps({"metadata": {"name": "worker-0"},
                                                 "spec": {"podCIDR": "10.128.2.0/23"},
                                                 "status": {"addresses": [
                                                     {"type": "InternalIP",
                                                      "address": "10.0.1.10"}]}}),
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    archive = tmp_path / "insights-full.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname=".")
    return archive


def test_insights_configmaps_nodes_and_operator_resources_are_objects_at_their_files(tmp_path):
    from hcpscan.inventory import Inventory
    from hcpscan.inventory.objects import anonymized_keys
    from hcpscan.model.clusters import scan_model
    from hcpscan.sources.loader import load_paths
    loaded = load_paths([str(_full_archive(tmp_path))])
    inventory = Inventory(loaded.objects, loaded.diagnostics, loaded.skipped)
    bundle = inventory.get("ConfigMap", "openshift-config", "user-ca-bundle")
    assert bundle is not None and anonymized_keys(bundle) == {"ca-bundle.crt"}
    assert bundle.source.path.endswith("config/configmaps/openshift-config/user-ca-bundle/"
                                       "ca-bundle.crt")
    # the install-config key of kube-system/cluster-config-v1 is the cluster's install-config
    nets = scan_model(inventory).management.networks
    assert nets is not None and nets.machine == ("10.0.0.0/16",)
    router = inventory.get("IngressController", "openshift-ingress-operator", "default")
    assert router is not None and router.body["spec"] == {"replicas": 2}
    assert inventory.get("Node", "", "worker-0") is not None
    assert not [d for d in loaded.diagnostics if "metadata.name" in d.message]


def test_an_anonymized_proxy_ca_is_not_evaluable_never_unparseable(tmp_path, run_cli):
    report = json.loads(run_cli("scan", str(_full_archive(tmp_path)), "--select", "PRX012",
                                "--format", "json").out)
    (result,) = report["rules"]
    assert result["status"] == "not-evaluable", result
    assert "anonymized" in result["reason"] and report["findings"] == []


def test_unread_insights_config_objects_are_passed_over_saying_which(tmp_path, run_cli):
    report = json.loads(run_cli("scan", str(_full_archive(tmp_path)), "--format", "json").out)
    reasons = " ".join(p["reason"] for p in report["passed_over"])
    assert "Insights archive: config.openshift.io Ingress 'cluster', which no rule reads" in reasons
    assert "FeatureGate" in reasons
    assert not [d for d in report["diagnostics"] if "has no" in d["message"]]


def test_an_anonymized_additional_trust_bundle_in_the_install_config_is_not_evaluable(
        tmp_path, run_cli):
    # the Insights Operator keeps kube-system/cluster-config-v1's install-config with the PEM
    # of additionalTrustBundle anonymized: no "unusable CA" finding, not evaluable instead
    root = tmp_path / "insights"
    key = root / "config/configmaps/kube-system/cluster-config-v1/install-config"
    key.parent.mkdir(parents=True)
    key.write_text(INSTALL_CONFIG + "proxy:\n  httpsProxy: https://proxy.corp.example.com:3129\n"
                   "additionalTrustBundle: |\n  -----BEGIN CERTIFICATE-----\n  ANONYMIZED\n"
                   "  -----END CERTIFICATE-----\n")
    report = json.loads(run_cli("scan", str(root), "--select", "PRX012", "--format",
                                "json").out)
    assert report["findings"] == []
    (result,) = report["rules"]
    assert result["status"] == "not-evaluable" and "anonymized" in result["reason"], result


def test_insights_configmap_keys_with_a_manifest_suffix_are_data_not_documents(tmp_path, run_cli):
    # openshift-monitoring/cluster-monitoring-config keeps its key config.yaml: ConfigMap data,
    # not a document without kind; a real manifest in such a folder is still read as one
    root = tmp_path / "insights"
    monitoring = root / "config/configmaps/openshift-monitoring/cluster-monitoring-config/config.yaml"
    monitoring.parent.mkdir(parents=True)
    monitoring.write_text("prometheusK8s:\n  retention: 7d\n")
    manifest = root / "config/configmaps/apps/real/cm.yaml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: real, namespace: apps}\n"
                        "data: {a: b}\n")
    report = json.loads(run_cli("inventory", str(root), "--format", "json").out)
    text = json.dumps(report)
    assert "cluster-monitoring-config" in text and "real" in text
    scanned = json.loads(run_cli("scan", str(root), "--format", "json").out)
    assert [d["message"] for d in scanned["diagnostics"]] == []
