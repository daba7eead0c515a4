"""PRX007 is about noProxy lists users write: a container's NO_PROXY that is its cluster's
computed Proxy status.noProxy, as the network operator, the hosted-cluster-config-operator
(konnectivity-agent) or HyperShift (control-plane Deployments, kube-apiserver added) copy it,
is no user's list (cases c11, c12, c19)."""

from __future__ import annotations

import shutil
from pathlib import Path

from hcpscan.findings.model import Status
from tests.conftest import FIXTURES
from tests.rules.harness import scan

DUMP = FIXTURES / "rules" / "PRX007" / "pass" / "hypershift-dump"
PROXIES = Path("hostedcluster-hc1/cluster-scoped-resources/config.openshift.io/proxies.yaml")


def _prx007(path: Path):
    report = scan([path], ["PRX007"])
    return report.results[0].status, sorted(f.object.name for f in report.findings)


def test_operator_copies_of_the_computed_no_proxy_are_not_judged() -> None:
    report = scan([DUMP], ["PRX007"])
    assert report.findings == []
    (result,) = report.results
    assert result.status is Status.NOT_APPLICABLE
    assert "status.noProxy" in result.reason and "no user wrote it" in result.reason


def test_a_list_that_is_not_the_status_is_judged(tmp_path: Path) -> None:
    """The images (a mirror registry) say nothing: without the copy the lists are judged."""
    shutil.copytree(DUMP, tmp_path / "dump")
    proxies = tmp_path / "dump" / PROXIES
    proxies.write_text(proxies.read_text().replace("10.0.0.0/16,", ""))
    report = scan([tmp_path / "dump"], ["PRX007"])
    assert report.results[0].status is Status.FAIL
    (finding,) = report.findings  # one value, two readers: said once, of the value
    assert "konnectivity-agent" in finding.message and "ovnkube-node" in finding.message


MANAGEMENT = """apiVersion: config.openshift.io/v1
kind: Proxy
metadata:
  name: cluster
spec:
  httpProxy: http://100.55.73.101:3128
  noProxy: 10.0.0.0/16
status:
  httpProxy: http://100.55.73.101:3128
  noProxy: .cluster.local,.svc,10.0.0.0/16,10.128.0.0/14,127.0.0.1,172.30.0.0/16,localhost
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cloud-network-config-controller
  namespace: clusters-hc1
spec:
  selector:
    matchLabels:
      app: cloud-network-config-controller
  template:
    metadata:
      labels:
        app: cloud-network-config-controller
    spec:
      containers:
      - env:
        - name: HTTP_PROXY
          value: http://100.55.73.101:3128
        - name: NO_PROXY
          value: NOPROXY
        image: mirror.corp.example.com:5000/openshift-release-dev/ocp-v4.0-art-dev@sha256:1a2b
        name: controller
"""


def test_hypershifts_sorted_copy_with_kube_apiserver_is_an_operator_copy(tmp_path: Path) -> None:
    copy = ".cluster.local,.svc,10.0.0.0/16,10.128.0.0/14,127.0.0.1,172.30.0.0/16,kube-apiserver,localhost"
    (tmp_path / "copy.yaml").write_text(MANAGEMENT.replace("NOPROXY", copy))
    assert _prx007(tmp_path / "copy.yaml")[1] == []
    (tmp_path / "user.yaml").write_text(MANAGEMENT.replace("NOPROXY", copy + ",192.168.0.0/16"))
    assert _prx007(tmp_path / "user.yaml")[1] == ["cloud-network-config-controller"]
