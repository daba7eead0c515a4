"""PRX005 asks a Cluster API cluster's control plane endpoint of the node settings kubeadm and
the kubelet read (kubernetes/kubeadm#2145), each against its own Cluster's endpoint."""

from __future__ import annotations

from pathlib import Path

from tests.rules.harness import scan

NETS = ("localhost,127.0.0.1,.svc,.cluster.local,192.168.0.0/16,10.96.0.0/12")


def _cluster(name: str, host: str | None, infra_host: str | None = None) -> str:
    endpoint = f"  controlPlaneEndpoint:\n    host: {host}\n    port: 6443\n" if host else ""
    infra = (f"---\napiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: VCDCluster\n"
             f"metadata:\n  name: {name}\n  namespace: fleet\nspec:\n  site: https://vcd.example\n"
             f"  org: o\n  ovdc: v\n  ovdcNetwork: n\n  userContext: {{}}\n"
             f"  controlPlaneEndpoint:\n    host: {infra_host}\n    port: 6443\n") if infra_host else ""
    return (f"apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: {name}\n"
            f"  namespace: fleet\nspec:\n  clusterNetwork:\n    pods:\n      cidrBlocks: [192.168.0.0/16]\n"
            f"    services:\n      cidrBlocks: [10.96.0.0/12]\n{endpoint}"
            f"  infrastructureRef:\n    apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\n"
            f"    kind: VCDCluster\n    name: {name}\n{infra}")


def _workers(cluster: str, path: str, no_proxy: str) -> str:
    if path == "/etc/environment":
        content = f"HTTPS_PROXY=http://10.93.31.29:8080\nNO_PROXY={no_proxy}\n"
    else:
        content = (f'[Service]\nEnvironment="HTTPS_PROXY=http://10.93.31.29:8080"\n'
                   f'Environment="NO_PROXY={no_proxy}"\n')
    body = "\n".join("          " + line for line in content.splitlines())
    return (f"apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: KubeadmConfigTemplate\n"
            f"metadata:\n  name: {cluster}-md-0\n  namespace: fleet\nspec:\n  template:\n"
            f"    spec:\n      files:\n      - path: {path}\n        content: |\n{body}\n")


def _missed(tmp_path: Path, *docs: str) -> list[str]:
    (tmp_path / "in.yaml").write_text("\n---\n".join(docs))
    return [f.message for f in scan([tmp_path], ["PRX005"]).findings]


def test_each_cluster_s_nodes_are_asked_for_their_own_endpoint(tmp_path):
    found = _missed(tmp_path, _cluster("alpha", "10.0.0.10"), _cluster("beta", "10.0.1.10"),
                    _workers("alpha", "/etc/environment", NETS + ",10.0.0.10"),
                    _workers("beta", "/etc/environment", NETS + ",10.0.0.10"))
    assert found == ["KubeadmConfigTemplate fleet/beta-md-0 file /etc/environment uses a proxy "
                     "but its noProxy misses control plane endpoint 10.0.1.10"]


def test_the_infrastructure_cluster_s_endpoint_counts_when_the_cluster_has_none(tmp_path):
    found = _missed(tmp_path, _cluster("alpha", None, infra_host="api.alpha.example.com"),
                    _workers("alpha", "/etc/systemd/system/kubelet.service.d/http-proxy.conf",
                             NETS))
    assert found == ["KubeadmConfigTemplate fleet/alpha-md-0 file "
                     "/etc/systemd/system/kubelet.service.d/http-proxy.conf uses a proxy but its "
                     "noProxy misses control plane endpoint api.alpha.example.com"]


def test_containerd_is_not_asked_for_the_endpoint(tmp_path):
    assert _missed(tmp_path, _cluster("alpha", "10.0.0.10"),
                   _workers("alpha", "/etc/systemd/system/containerd.service.d/http-proxy.conf",
                            NETS)) == []


def test_a_malformed_endpoint_host_is_judged_without_a_traceback(tmp_path):
    found = _missed(tmp_path, _cluster("alpha", '"[not-ip]"'),
                    _workers("alpha", "/etc/environment", NETS))
    assert found == ["KubeadmConfigTemplate fleet/alpha-md-0 file /etc/environment uses a proxy "
                     "but its noProxy misses control plane endpoint not-ip"]


def test_pre_kubeadm_command_exports_are_asked_for_the_endpoint(tmp_path):
    workers = _workers("alpha", "/etc/systemd/system/containerd.service.d/http-proxy.conf", NETS)
    workers += ("      preKubeadmCommands:\n      - export HTTPS_PROXY=http://10.93.31.29:8080\n"
                f"      - export NO_PROXY={NETS}\n")
    assert _missed(tmp_path, _cluster("alpha", "10.0.0.10"), workers) == [
        "KubeadmConfigTemplate fleet/alpha-md-0 preKubeadmCommands uses a proxy but its noProxy "
        "misses control plane endpoint 10.0.0.10"]
