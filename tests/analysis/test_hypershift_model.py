"""The HostedCluster domain model on HyperShift's own rendered bundles."""

from __future__ import annotations

import pytest

from hcpscan.inventory import Inventory
from hcpscan.model.hostedcluster import hcp_namespace, hosted_clusters
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES, REALWORLD


def _hcs(path):
    return hosted_clusters(Inventory(load_paths([str(path)]).objects))


def test_hcp_namespace_replaces_dots():
    assert hcp_namespace("clusters", "prod.eu") == "clusters-prod-eu"


@pytest.mark.parametrize("bundle,platform,port,lb_port", [
    # Azure's 7443 is its load balancer's port only (KASSVCLBAzurePort): the pods listen
    # on 6443, which is what policies in the HCP namespace must admit
    ("azure__minimal_flags_are_provided.yaml", "Azure", 6443, 7443),
    ("aws__minimal_flags_are_provided.yaml", "AWS", 6443, 6443),
    ("agent__minimal_flags_are_provided.yaml", "Agent", 6443, 6443),
])
def test_platform_and_kas_port_of_rendered_bundles(bundle, platform, port, lb_port):
    (hc,) = _hcs(REALWORLD / "create-render" / bundle)
    assert hc.platform == platform and hc.kas_port == port
    assert hc.kas_service_port == lb_port and hc.kas_local_port == 6443
    assert hc.control_plane_namespace == "clusters-example"
    assert hc.cluster_networks and hc.service_networks


def test_publishing_strategies_of_the_example():
    hcs = {hc.name: hc for hc in _hcs(FIXTURES / "example")}
    agent = hcs["agent-prod"]
    assert agent.published_as("Ignition") == "NodePort"
    assert agent.publishing["Ignition"].field == "spec.services[3].servicePublishingStrategy"
    assert agent.machine_networks == ("10.10.0.0/24",)
    assert hcs["aws-dev"].published_as("Ignition") == "Route"
    assert agent.proxy["httpsProxy"].startswith("https://")


def test_wrongly_typed_fields_leave_the_object_out_with_their_line(tmp_path):
    """The API server rejects a HostedCluster whose fields have the wrong type: it is
    left out of the inventory, with an error at the field, before any model sees it."""
    (tmp_path / "hc.yaml").write_text(
        "apiVersion: hypershift.openshift.io/v1beta1\nkind: HostedCluster\n"
        "metadata: {name: h1, namespace: clusters}\n"
        "spec:\n  networking: '10.0.0.0/16'\n  services: {service: Ignition}\n"
        "  platform: Agent\n---\n"
        "apiVersion: hypershift.openshift.io/v1beta1\nkind: HostedCluster\n"
        "metadata: {name: h2, namespace: clusters}\n"
        "spec:\n  networking:\n    machineNetwork: [{cidr: 10.10.0.5/24}, {cidr: nonsense}]\n"
        "  services:\n  - {service: Ignition, servicePublishingStrategy: {type: None}}\n---\n"
        "apiVersion: hypershift.openshift.io/v1beta1\nkind: HostedCluster\n"
        "metadata: {name: h3, namespace: clusters}\n"
        "spec:\n  services:\n  - {service: Ignition, servicePublishingStrategy: NodePort}\n")
    inventory = Inventory(load_paths([str(tmp_path)]).objects)
    (h2,) = hosted_clusters(inventory)
    assert h2.machine_networks == ("10.10.0.0/24",)
    assert h2.published_as("Ignition") == "None"
    assert [(d.line, d.message) for d in inventory.diagnostics] == [
        (5, "HostedCluster clusters/h1 is left out: spec.networking is a string or number, "
            "not a mapping"),
        (23, "HostedCluster clusters/h3 is left out: spec.services[0].servicePublishingStrategy "
             "is a string or number, not a mapping")]


_HC = """\
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata:
  name: example
  namespace: clusters
  annotations: ANNOTATIONS
spec:
  platform: {type: PLATFORM}
  services:
  - service: APIServer
    servicePublishingStrategy: STRATEGY
"""
_ON_AZURE = "{hypershift.openshift.io/management-platform: Azure}"
_LB, _ROUTE = "{type: LoadBalancer}", "{type: Route, route: {hostname: api.example.com}}"


@pytest.mark.parametrize("platform,annotations,strategy,lb_port", [
    ("Azure", "{}", _LB, 7443),
    # published otherwise, no load balancer on 7443 (hypershift infra.go: LoadBalancer only)
    ("Azure", "{}", _ROUTE, 6443),
    # KubeVirt on an Azure management cluster: the operator's annotation says so
    ("KubeVirt", _ON_AZURE, _LB, 7443),
    ("KubeVirt", _ON_AZURE, _ROUTE, 6443),
    ("KubeVirt", "{hypershift.openshift.io/management-platform: AWS}", _LB, 6443),
    ("KubeVirt", "{}", _LB, 6443),
    ("IBMCloud", "{}", _LB, 2040),
])
def test_the_api_servers_load_balancer_port_is_azures_only_where_hypershift_uses_it(
        tmp_path, platform, annotations, strategy, lb_port):
    path = tmp_path / "hc.yaml"
    path.write_text(_HC.replace("ANNOTATIONS", annotations).replace("PLATFORM", platform)
                    .replace("STRATEGY", strategy))
    (hc,) = _hcs(path)
    assert hc.kas_service_port == lb_port
    assert hc.kas_port == (2040 if platform == "IBMCloud" else 6443)  # the pods' port: unchanged
