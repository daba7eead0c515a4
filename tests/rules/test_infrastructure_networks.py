"""noProxy coverage of the networks the nodes live on, where the input states them
(issue 13): an OpenShift install-config's machineNetwork, a HostedCluster's
machineNetwork, a Cluster API AWSCluster's VPC; a VCDCluster names its network
without a CIDR, so nothing is claimed for it."""

from __future__ import annotations

from pathlib import Path

from hcpscan.findings.model import Status
from hcpscan.inventory import Inventory
from hcpscan.model.clusters import install_config_computed_no_proxy, networks_for, scan_model
from hcpscan.sources.loader import load_paths
from tests.rules.harness import scan
from tests.rules.test_primitives_proxy import env, guest_dump, workload

NETWORK = """\
apiVersion: config.openshift.io/v1
kind: Network
metadata: {name: cluster}
spec:
  clusterNetwork: [{cidr: 10.128.0.0/14, hostPrefix: 23}]
  serviceNetwork: [172.30.0.0/16]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-config-v1, namespace: kube-system}
data:
  install-config: |
    apiVersion: v1
    baseDomain: example.com
    metadata: {name: mgmt}
    networking:
      machineNetwork:
      - cidr: 10.0.0.0/16
      networkType: OVNKubernetes
"""
COVERED = ".svc,.cluster.local,10.128.0.0/14,172.30.0.0/16,127.0.0.1,localhost"


def _scan(tmp_path: Path, text: str):
    (tmp_path / "in.yaml").write_text(text)
    return scan([tmp_path / "in.yaml"], ["PRX005"])


def test_install_config_machine_network_must_go_direct(tmp_path: Path) -> None:
    text = NETWORK + "---\n" + workload(env(HTTPS_PROXY="http://proxy:3128", NO_PROXY=COVERED))
    (finding,) = _scan(tmp_path, text).findings
    assert "machine network 10.0.0.0/16" in finding.message
    assert any("ConfigMap kube-system/cluster-config-v1 data.install-config" in e
               for e in finding.evidence)


def test_install_config_machine_network_covered_passes(tmp_path: Path) -> None:
    text = NETWORK + "---\n" + workload(env(HTTPS_PROXY="http://proxy:3128",
                                            NO_PROXY=COVERED + ",10.0.0.0/8"))
    report = _scan(tmp_path, text)
    assert report.findings == [] and report.results[0].status is Status.PASS


def test_hosted_cluster_machine_network_for_guest_workloads(tmp_path: Path) -> None:
    dump = guest_dump(tmp_path, ".svc,.cluster.local,10.132.0.0/14,172.31.0.0/16",
                      "    clusterNetwork: [{cidr: 10.132.0.0/14}]\n"
                      "    serviceNetwork: [{cidr: 172.31.0.0/16}]\n"
                      "    machineNetwork: [{cidr: 192.168.10.0/24}]\n")
    (finding,) = scan([dump], ["PRX005"]).findings
    assert finding.message.endswith("misses machine network 192.168.10.0/24")
    assert any("HostedCluster clusters/example spec.networking.machineNetwork" in e
               for e in finding.evidence)


def test_aws_cluster_vpc_is_read_from_a_pruned_dump(tmp_path: Path) -> None:
    """A rule run alone reads the infrastructure kind its destinations come from."""
    source = Path(__file__).parents[2] / "fixtures" / "rules" / "PRX005" / "fail"
    dump = tmp_path / "namespaces" / "org-acme"
    documents = (source / "capa-machine-network.yaml").read_text().split("\n---\n")
    for doc in documents:
        kind = next(line.split(": ")[1] for line in doc.splitlines() if line.startswith("kind:"))
        folder = {"Cluster": "cluster.x-k8s.io/clusters",
                  "AWSCluster": "infrastructure.cluster.x-k8s.io/awsclusters",
                  "KubeadmConfigTemplate": "bootstrap.cluster.x-k8s.io/kubeadmconfigtemplates"}[kind]
        (dump / folder).mkdir(parents=True)
        (dump / folder / "one.yaml").write_text(doc + "\n")
    (finding,) = scan([tmp_path], ["PRX005"]).findings
    assert "machine network 10.50.0.0/16" in finding.message


def test_a_vcd_network_named_without_cidr_is_not_claimed(tmp_path: Path) -> None:
    (tmp_path / "vcd.yaml").write_text("""\
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: test, namespace: org-a}
spec:
  clusterNetwork:
    pods: {cidrBlocks: [10.244.0.0/16]}
    services: {cidrBlocks: [172.31.0.0/16]}
  infrastructureRef: {kind: VCDCluster, name: test}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: VCDCluster
metadata: {name: test, namespace: org-a}
spec: {ovdcNetwork: test, loadBalancerConfigSpec: {vipSubnet: 10.205.9.254/24}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: test-cluster-values, namespace: org-a}
data: {values: "x: 1"}
""")
    inventory = Inventory(load_paths([str(tmp_path / "vcd.yaml")]).objects)
    (capi,) = scan_model(inventory).capi_clusters
    assert capi.infrastructure is not None and capi.infrastructure.kind == "VCDCluster"
    assert capi.networks is not None and capi.networks.machine == ()
    values = inventory.get("ConfigMap", "org-a", "test-cluster-values", "management")
    assert networks_for(inventory, values) == capi.networks


# An Agent-based install as published with its install-config (platform baremetal, VIPs).
AGENT_INSTALL_CONFIG = """\
apiVersion: v1
baseDomain: proxy.test
compute:
- architecture: amd64
  name: worker
  replicas: 3
controlPlane:
  architecture: amd64
  name: master
  replicas: 3
metadata:
  name: lab
networking:
  clusterNetwork:
  - cidr: 10.128.0.0/14
    hostPrefix: 23
  machineNetwork:
  - cidr: 192.168.201.0/24
  networkType: OVNKubernetes
  serviceNetwork:
  - 172.30.0.0/16
platform:
  baremetal:
    apiVIPs: [192.168.201.10]
    ingressVIPs: [192.168.201.11]
proxy:
  httpProxy: http://192.168.201.2:3128/
  httpsProxy: http://192.168.201.2:3128/
  noProxy: .apps.lab.proxy.test
pullSecret: '{"auths":{}}'
"""


def test_an_install_config_with_a_proxy_is_judged_on_the_noproxy_openshift_computes(
        tmp_path: Path) -> None:
    """The installer writes the Proxy spec; the network operator completes its status with
    the cluster's networks, api-int and loopback: judged on that, one object checked (it
    was 'not applicable: no consumer in scope uses a proxy')."""
    (tmp_path / "install-config.yaml").write_text(AGENT_INSTALL_CONFIG)
    (result,) = scan([tmp_path], ["PRX005"]).results
    assert (result.status, result.objects_checked) == (Status.PASS, 1), result.reason
    inventory = Inventory(load_paths([str(tmp_path)]).objects)
    (installed,) = inventory.of_kind("InstallConfig")
    value, source, why = install_config_computed_no_proxy(installed)
    assert value.split(",") == [
        ".apps.lab.proxy.test", ".cluster.local", ".svc", "10.128.0.0/14", "127.0.0.1",
        "172.30.0.0/16", "192.168.201.0/24", "api-int.lab.proxy.test", "localhost"]
    assert "platform BareMetal" in source and not why


def test_an_install_config_without_networking_says_why_it_is_not_judged(tmp_path: Path) -> None:
    text = AGENT_INSTALL_CONFIG.replace(AGENT_INSTALL_CONFIG[AGENT_INSTALL_CONFIG.index(
        "networking:"):AGENT_INSTALL_CONFIG.index("platform:")], "")
    (tmp_path / "install-config.yaml").write_text(text)
    (result,) = scan([tmp_path], ["PRX005"]).results
    assert result.status is Status.NOT_APPLICABLE
    assert result.reason.startswith("install-config install-config.yaml uses a proxy, and the "
                                    "noProxy its readers get is completed by OpenShift's "
                                    "network operator")
    assert "states no networking.serviceNetwork and clusterNetwork" in result.reason
