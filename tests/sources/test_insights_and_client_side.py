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
