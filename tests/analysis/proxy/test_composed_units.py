"""A unit's proxy as systemd composes it from all its files: one consumer per unit, not one
per drop-in (a bootstrap config, a node's own drop-ins, a MachineConfig)."""

from __future__ import annotations

import base64

import yaml

from hcpscan.analysis.proxy.effective import effective_proxies
from tests.analysis.proxy.conftest import load

SPLIT = """apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: split-md-0
  namespace: fleet
spec:
  template:
    spec:
      files:
      - path: /etc/systemd/system/containerd.service.d/20-no-proxy.conf
        content: |
          [Service]
          Environment="NO_PROXY=.svc"
      - path: /etc/systemd/system/containerd.service.d/10-proxy.conf
        encoding: base64
        content: {proxy}
      - path: /etc/systemd/system/containerd.service.d/30-reset.conf
        content: |
          [Service]
          Environment=
          Environment="HTTPS_PROXY=http://other:3128" "NO_PROXY=.local"
"""


def _values(consumers):
    return {c.name: {k: v.value for k, v in c.variables.items()} for c in consumers}


def test_a_bootstrap_config_s_drop_ins_are_one_unit_in_file_name_order(tmp_path):
    proxy = base64.b64encode(b'[Service]\nEnvironment="HTTP_PROXY=http://p:3128"\n').decode()
    (tmp_path / "kct.yaml").write_text(SPLIT.format(proxy=proxy))
    found = _values(c for c in effective_proxies(load(tmp_path)) if c.object.name == "split-md-0")
    # 30-reset.conf's empty Environment= drops what 10- and 20- set before it
    assert found == {"KubeadmConfigTemplate fleet/split-md-0 files "
                     "/etc/systemd/system/containerd.service.d/10-proxy.conf, "
                     "/etc/systemd/system/containerd.service.d/20-no-proxy.conf, "
                     "/etc/systemd/system/containerd.service.d/30-reset.conf":
                     {"HTTPS_PROXY": "http://other:3128", "NO_PROXY": ".local"}}


def test_a_node_s_drop_ins_of_one_unit_are_one_consumer(tmp_path):
    etc = tmp_path / "node1" / "etc" / "systemd" / "system" / "kubelet.service.d"
    lib = tmp_path / "node1" / "usr" / "lib" / "systemd" / "system" / "kubelet.service.d"
    etc.mkdir(parents=True)
    lib.mkdir(parents=True)
    (lib / "10-proxy.conf").write_text('[Service]\nEnvironment="HTTPS_PROXY=http://p:3128"\n')
    (etc / "20-no-proxy.conf").write_text('[Service]\nEnvironment="NO_PROXY=.svc"\n')
    [unit] = [c for c in effective_proxies(load(tmp_path)) if c.kind == "systemd-dropin"]
    assert unit.name.startswith("systemd unit kubelet.service (")
    assert {k: v.value for k, v in unit.variables.items()} == {
        "HTTPS_PROXY": "http://p:3128", "NO_PROXY": ".svc"}


def test_a_machine_config_s_drop_ins_of_one_unit_are_one_consumer(tmp_path):
    dropins = [{"name": "10-proxy.conf",
                "contents": '[Service]\nEnvironment="HTTPS_PROXY=http://p:3128"\n'},
               {"name": "20-no-proxy.conf", "contents": '[Service]\nEnvironment="NO_PROXY=.svc"\n'}]
    (tmp_path / "mc.yaml").write_text(yaml.safe_dump({
        "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
        "metadata": {"name": "99-worker-crio-proxy"},
        "spec": {"config": {"ignition": {"version": "3.2.0"},
                            "systemd": {"units": [{"name": "crio.service", "dropins": dropins}]}}}}))
    consumers = [c for c in effective_proxies(load(tmp_path)) if c.kind == "machineconfig-file"]
    assert [(c.name, {k: v.value for k, v in c.variables.items()}) for c in consumers] == [
        ("MachineConfig 99-worker-crio-proxy files /etc/systemd/system/crio.service.d/10-proxy.conf, "
         "/etc/systemd/system/crio.service.d/20-no-proxy.conf",
         {"HTTPS_PROXY": "http://p:3128", "NO_PROXY": ".svc"})]


def test_a_machine_config_unit_reads_the_environment_file_it_writes(tmp_path):
    """EnvironmentFile= values win over Environment= (systemd.exec(5)), whatever the order."""
    env = base64.b64encode(b"HTTPS_PROXY=http://proxy.corp:3128\nNO_PROXY=.svc,.cluster.local\n")
    dropins = [{"name": "10-proxy.conf",
                "contents": '[Service]\nEnvironmentFile=/etc/crio-proxy.env\n'},
               {"name": "20-no-proxy.conf", "contents": '[Service]\nEnvironment="NO_PROXY=.svc"\n'}]
    (tmp_path / "mc.yaml").write_text(yaml.safe_dump({
        "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
        "metadata": {"name": "99-worker-crio-proxy"},
        "spec": {"config": {"ignition": {"version": "3.2.0"},
                            "storage": {"files": [{"path": "/etc/crio-proxy.env", "contents": {
                                "source": "data:text/plain;charset=utf-8;base64," + env.decode()}}]},
                            "systemd": {"units": [{"name": "crio.service", "dropins": dropins}]}}}}))
    [unit] = [c for c in effective_proxies(load(tmp_path)) if c.kind == "machineconfig-file"
              and "crio.service.d" in c.name]
    assert {k: v.value for k, v in unit.variables.items()} == {
        "HTTPS_PROXY": "http://proxy.corp:3128", "NO_PROXY": ".svc,.cluster.local"}
