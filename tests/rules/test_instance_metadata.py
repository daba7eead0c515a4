"""PRX005 asks the instance metadata address of a Cluster API cloud cluster's kubelet settings
only: the kubelet's image credential provider runs with its environment (CAPZ#1947)."""

from __future__ import annotations

from tests.conftest import FIXTURES
from tests.rules.harness import scan

CAPA = FIXTURES / "rules" / "PRX005" / "fail" / "capa-kubelet-instance-metadata.yaml"


def _messages(tmp_path, text):
    (tmp_path / "c.yaml").write_text(text)
    return [f.message for f in scan([tmp_path], ["PRX005"]).findings]


def test_the_kubelet_drop_in_of_an_aws_cluster_must_send_the_metadata_service_direct(tmp_path):
    [message] = _messages(tmp_path, CAPA.read_text())
    assert "kubelet.service.d/http-proxy.conf" in message
    assert message.endswith("misses instance metadata 169.254.169.254")  # containerd's is not asked


def test_an_azure_cluster_is_asked_too_and_another_infrastructure_is_not(tmp_path):
    azure = CAPA.read_text().replace("kind: AWSCluster", "kind: AzureCluster").replace(
        "infrastructure.cluster.x-k8s.io/v1beta2", "infrastructure.cluster.x-k8s.io/v1beta1")
    assert [m.rpartition(" misses ")[2] for m in _messages(tmp_path, azure)] == [
        "instance metadata 169.254.169.254"]
    docker = CAPA.read_text().replace("kind: AWSCluster", "kind: DockerCluster")
    assert _messages(tmp_path, docker) == []
