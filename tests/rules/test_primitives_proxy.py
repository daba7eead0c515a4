"""Proxy rule primitives (PRX001-PRX007): inputs from the user, not-evaluable reasons, edge cases."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from hcpscan.analysis.proxy.noproxy import runtime_ref
from hcpscan.analysis.proxy.portability import divergence as _divergence
from hcpscan.findings.model import ScanReport, Status
from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import K8sObject
from hcpscan.model.hostedcluster import hosted_cluster
from hcpscan.model.secondary import nad_cidrs
from hcpscan.rules.config import ScanConfig
from hcpscan.sources.loader import load_paths
from tests.rules.harness import scan


def run(tmp_path: Path, text: str, rule: str, config: ScanConfig | None = None) -> ScanReport:
    (tmp_path / "input.yaml").write_text(text)
    return scan([tmp_path / "input.yaml"], [rule], config)


def objects(tmp_path: Path, text: str) -> list[K8sObject]:
    (tmp_path / "objs.yaml").write_text(text)
    return list(Inventory(load_paths([str(tmp_path / "objs.yaml")]).objects))


MGMT_PROXY = """\
apiVersion: config.openshift.io/v1
kind: Proxy
metadata:
  name: cluster
spec:
  httpsProxy: http://proxy.corp.example.com:3128
  noProxy: {no_proxy}
"""

NETWORK = """\
apiVersion: config.openshift.io/v1
kind: Network
metadata:
  name: cluster
spec:
  clusterNetwork:
  - cidr: 10.128.0.0/14
  serviceNetwork:
  - 172.30.0.0/16
"""

NODEPOOL = """\
apiVersion: hypershift.openshift.io/v1beta1
kind: NodePool
metadata:
  name: example-workers
  namespace: clusters
spec:
  clusterName: example
  platform:
    type: KubeVirt
    kubevirt:
      attachDefaultNetwork: {attach}
      additionalNetworks:
      - name: vm-networks/storage-net
"""


def workload(env: str, namespace: str = "monitoring") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: {namespace}
spec:
  template:
    spec:
      containers:
      - name: app
        image: app:1
        env:
{env}"""


def env(**values: str) -> str:
    return "".join(f"        - name: {k}\n          value: {v!r}\n" for k, v in values.items())


# -- PRX001 ---------------------------------------------------------------------------------


def test_prx001_cidr_from_user_input_when_nad_is_absent(tmp_path: Path) -> None:
    text = MGMT_PROXY.format(no_proxy=".corp.example.com") + "---\n" + NODEPOOL.format(attach="false")
    report = run(tmp_path, text, "PRX001", ScanConfig(
        secondary_networks={"vm-networks/storage-net": ["192.168.100.0/24"]}))
    (finding,) = report.findings
    assert finding.field == "spec.platform.kubevirt.additionalNetworks[0].name"
    assert "192.168.100.0/24" in finding.message
    assert any("secondary_networks" in e for e in finding.evidence)


def test_prx001_unknown_cidr_asks_the_user(tmp_path: Path) -> None:
    text = MGMT_PROXY.format(no_proxy=".corp.example.com") + "---\n" + NODEPOOL.format(attach="false")
    result = run(tmp_path, text, "PRX001").results[0]
    assert result.status is Status.NOT_EVALUABLE
    assert "input the user must supply" in result.reason
    assert "vm-networks/storage-net" in result.reason


def test_prx001_partial_coverage_names_the_uncovered_part(tmp_path: Path) -> None:
    text = (MGMT_PROXY.format(no_proxy="192.168.100.0/25") + "---\n"
            + NODEPOOL.format(attach="false"))
    report = run(tmp_path, text, "PRX001", ScanConfig(
        secondary_networks={"vm-networks/storage-net": ["192.168.100.0/24"]}))
    (finding,) = report.findings
    assert any("192.168.100.128/25" in e for e in finding.evidence)


def test_prx001_default_network_attached_is_not_checked(tmp_path: Path) -> None:
    text = MGMT_PROXY.format(no_proxy=".corp.example.com") + "---\n" + NODEPOOL.format(attach="true")
    report = run(tmp_path, text, "PRX001", ScanConfig(
        secondary_networks={"vm-networks/storage-net": ["192.168.100.0/24"]}))
    assert report.results[0].status is Status.NOT_APPLICABLE  # nothing in scope: not a pass


def test_prx001_without_management_proxy_is_not_evaluable(tmp_path: Path) -> None:
    result = run(tmp_path, NODEPOOL.format(attach="false"), "PRX001").results[0]
    assert result.status is Status.NOT_EVALUABLE
    assert "Proxy 'cluster'" in result.reason


def test_nad_cidrs_reads_the_cni_config_shapes(tmp_path: Path) -> None:
    def nad(config: object) -> K8sObject:
        text = json.dumps(config) if not isinstance(config, str) else config
        (obj,) = objects(tmp_path, "apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\n"
                                   f"metadata: {{name: n, namespace: ns}}\nspec:\n  config: '{text}'\n")
        return obj

    assert nad_cidrs(nad({"ipam": {"ranges": [[{"subnet": "10.1.0.0/24"}], [{"subnet": "fd00::/64"}]]}}))[0] \
        == ["10.1.0.0/24", "fd00::/64"]
    assert nad_cidrs(nad({"plugins": [{"type": "macvlan", "ipam": {"subnet": "10.2.0.0/16"}}]}))[0] \
        == ["10.2.0.0/16"]
    assert nad_cidrs(nad({"subnets": "10.3.0.0/16, 10.4.0.0/16"}))[0] == ["10.3.0.0/16", "10.4.0.0/16"]
    assert nad_cidrs(nad({"ipam": {"type": "dhcp"}}))[1].startswith("its ipam type dhcp assigns addresses")
    assert nad_cidrs(nad({"type": "bridge", "ipam": {}}))[1].startswith("its CNI config has an empty ipam")
    assert nad_cidrs(nad("not json"))[1] == "its spec.config is not JSON"


# -- PRX005 ---------------------------------------------------------------------------------


def test_prx005_without_networks_checks_names_and_says_cidrs_are_unknown(tmp_path: Path) -> None:
    report = run(tmp_path, workload(env(HTTPS_PROXY="http://p:3128", NO_PROXY=".svc")), "PRX005")
    (finding,) = report.findings
    assert ".cluster.local" in finding.message and ".svc" not in finding.message.split("misses")[1]
    assert "service and pod networks are not in the input" in report.results[0].reason


def test_prx005_loopback_is_direct_in_go_without_entries(tmp_path: Path) -> None:
    text = NETWORK + "---\n" + workload(env(
        HTTPS_PROXY="http://p:3128", NO_PROXY=".svc,.cluster.local,10.128.0.0/14,172.30.0.0/16"))
    assert run(tmp_path, text, "PRX005").results[0].status is Status.PASS


def test_prx005_wider_cidr_covers_and_kas_ip_follows_service_network(tmp_path: Path) -> None:
    text = NETWORK + "---\n" + workload(env(
        HTTPS_PROXY="http://p:3128", NO_PROXY="svc,cluster.local,10.0.0.0/8"))
    (finding,) = run(tmp_path, text, "PRX005").findings
    assert "service network 172.30.0.0/16" in finding.message
    assert "KAS service IP 172.30.0.1" in finding.message
    assert "pod network" not in finding.message


def test_prx005_no_proxy_unset_points_at_the_proxy_variable(tmp_path: Path) -> None:
    text = NETWORK + "---\n" + workload(env(HTTPS_PROXY="http://p:3128"))
    (finding,) = run(tmp_path, text, "PRX005").findings
    assert finding.field == "spec.template.spec.containers[0].env[0].value"
    assert "no noProxy is set at all" in finding.evidence


def test_prx005_redacted_no_proxy_is_not_evaluable(tmp_path: Path) -> None:
    text = NETWORK + "---\n" + workload(env(HTTPS_PROXY="http://p:3128") + """\
        - name: NO_PROXY
          valueFrom:
            secretKeyRef: {name: proxy, key: noProxy}
""") + """---
apiVersion: v1
kind: Secret
metadata: {name: proxy, namespace: monitoring}
data:
  noProxy: 42 bytes long
"""
    result = run(tmp_path, text, "PRX005").results[0]
    assert result.status is Status.NOT_EVALUABLE
    assert "redacted" in result.reason


def test_prx005_skips_proxy_spec_and_konnectivity_routed_containers(tmp_path: Path) -> None:
    text = NETWORK + "---\n" + MGMT_PROXY.format(no_proxy=".corp.example.com") + "---\n" + """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: ingress-operator, namespace: clusters-example}
spec:
  template:
    spec:
      containers:
      - name: ingress-operator
        env:
        - {name: HTTPS_PROXY, value: "http://127.0.0.1:8090"}
        - {name: NO_PROXY, value: kube-apiserver}
      - name: konnectivity-proxy-https
        command: [/usr/bin/control-plane-operator, konnectivity-https-proxy]
        args: [run]
"""
    report = run(tmp_path, text, "PRX005")
    assert report.findings == []
    # nothing left to judge: the spec is completed by the cluster, the container is routed
    assert report.results[0].status is Status.NOT_APPLICABLE


def guest_dump(tmp_path: Path, no_proxy: str, networking: str) -> Path:
    """A hypershift dump: a guest workload with a proxy, and its HostedCluster's networking."""
    dump = tmp_path / "dump"
    guest = dump / "hostedcluster-example" / "namespaces" / "team" / "apps" / "deployments"
    guest.mkdir(parents=True)
    (guest / "app.yaml").write_text(workload(env(HTTPS_PROXY="http://p:3128", NO_PROXY=no_proxy),
                                             namespace="team"))
    hcs = dump / "namespaces" / "clusters" / "hypershift.openshift.io" / "hostedclusters"
    hcs.mkdir(parents=True)
    (hcs / "example.yaml").write_text(
        "apiVersion: hypershift.openshift.io/v1beta1\nkind: HostedCluster\n"
        "metadata: {name: example, namespace: clusters}\nspec:\n  networking:\n" + networking)
    return dump


def test_prx005_guest_cluster_uses_hosted_cluster_networks(tmp_path: Path) -> None:
    dump = guest_dump(tmp_path, ".svc,.cluster.local,10.132.0.0/14",
                      "    clusterNetwork: [{cidr: 10.132.0.0/14}]\n"
                      "    serviceNetwork: [{cidr: 172.31.0.0/16}]\n")
    report = scan([dump], ["PRX005"])
    (finding,) = report.findings
    assert finding.object.cluster == "hostedcluster-example"
    assert "service network 172.31.0.0/16" in finding.message


# -- PRX002 ---------------------------------------------------------------------------------

HC = """\
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata: {{name: {name}, namespace: clusters}}
spec:
  configuration:
    proxy: {{httpsProxy: "http://proxy.corp.example.com:3128", noProxy: ".corp.example.com"}}
"""


def test_hcp_namespace_turns_dots_into_dashes(tmp_path: Path) -> None:
    (hc,) = objects(tmp_path, HC.format(name="prod.eu"))
    assert hosted_cluster(hc).control_plane_namespace == "clusters-prod-eu"


def test_prx002_without_control_plane_workloads_is_not_evaluable(tmp_path: Path) -> None:
    result = run(tmp_path, HC.format(name="example"), "PRX002").results[0]
    assert result.status is Status.NOT_EVALUABLE
    assert "clusters-example" in result.reason


def test_prx002_sidecar_in_dotted_hcp_namespace_is_found(tmp_path: Path) -> None:
    text = HC.format(name="prod.eu") + """---
apiVersion: apps/v1
kind: Deployment
metadata: {name: openshift-apiserver, namespace: clusters-prod-eu}
spec:
  template:
    spec:
      containers:
      - name: konnectivity-proxy-https
        command: [/usr/bin/control-plane-operator, konnectivity-https-proxy]
        args: [run, "--https-proxy=http://proxy.corp.example.com:3128"]
"""
    (finding,) = run(tmp_path, text, "PRX002").findings
    assert finding.object.namespace == "clusters-prod-eu"
    assert finding.message.endswith("konnectivity-proxy-https: no --no-proxy")
    assert finding.field == "spec.template.spec.containers[0].args"


# -- PRX003 ---------------------------------------------------------------------------------

OPERATOR = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: operator, namespace: hypershift}}
spec:
  template:
    spec:
      containers:
      - name: operator
        image: hypershift
{env}"""


def test_prx003_without_management_proxy_is_not_evaluable(tmp_path: Path) -> None:
    result = run(tmp_path, OPERATOR.format(env=""), "PRX003").results[0]
    assert result.status is Status.NOT_EVALUABLE


def test_prx003_missing_env_is_reported_at_the_container(tmp_path: Path) -> None:
    text = MGMT_PROXY.format(no_proxy=".corp.example.com") + "---\n" + OPERATOR.format(env="")
    # both variables missing from one container: one finding at the container, naming both
    (finding,) = run(tmp_path, text, "PRX003").findings
    assert finding.field == "spec.template.spec.containers[0]"
    said = " ".join([finding.message, *finding.evidence])
    assert "HTTPS_PROXY" in said and "NO_PROXY" in said


def test_prx003_env_set_while_proxy_removed_is_stale(tmp_path: Path) -> None:
    text = ("apiVersion: config.openshift.io/v1\nkind: Proxy\nmetadata: {name: cluster}\nspec: {}\n"
            "status: {}\n---\n" + OPERATOR.format(env="        env:\n" + env(
                HTTPS_PROXY="http://old-proxy:3128")))
    (finding,) = run(tmp_path, text, "PRX003").findings
    assert "(unset)" in finding.message


def test_prx003_no_proxy_order_does_not_matter(tmp_path: Path) -> None:
    text = MGMT_PROXY.format(no_proxy="a.example.com,b.example.com") + "---\n" + OPERATOR.format(
        env="        env:\n" + env(HTTPS_PROXY="http://proxy.corp.example.com:3128/",
                                   NO_PROXY="b.example.com, a.example.com"))
    assert run(tmp_path, text, "PRX003").results[0].status is Status.PASS


# -- PRX004 ---------------------------------------------------------------------------------


def _user_data(value: str) -> str:
    return f"""---
apiVersion: v1
kind: Secret
metadata: {{name: user-data-example-workers-1a2b3c, namespace: clusters-example}}
data:
  value: {value}
"""


def test_prx004_redacted_stub_is_not_evaluable(tmp_path: Path) -> None:
    text = HC.format(name="example") + _user_data("2048 bytes long")
    result = run(tmp_path, text, "PRX004").results[0]
    assert result.status is Status.NOT_EVALUABLE
    assert "redacted" in result.reason


def test_prx004_stub_without_its_hosted_cluster_is_not_evaluable(tmp_path: Path) -> None:
    stub = base64.b64encode(b'{"ignition": {"version": "3.2.0"}}').decode()
    result = run(tmp_path, _user_data(stub), "PRX004").results[0]
    assert result.status is Status.NOT_EVALUABLE
    assert "clusters-example" in result.reason


def test_prx004_hosted_cluster_without_proxy_is_not_applicable(tmp_path: Path) -> None:
    stub = base64.b64encode(json.dumps({"ignition": {"config": {"merge": [
        {"source": "https://ignition.example.com/ignition"}]}}}).encode()).decode()
    text = ("apiVersion: hypershift.openshift.io/v1beta1\nkind: HostedCluster\n"
            "metadata: {name: example, namespace: clusters}\nspec: {}\n" + _user_data(stub))
    assert run(tmp_path, text, "PRX004").results[0].status is Status.NOT_APPLICABLE


def test_computed_no_proxy_follows_hypershift(tmp_path: Path) -> None:
    (hc,) = objects(tmp_path, """\
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata: {name: example, namespace: clusters}
spec:
  configuration: {proxy: {httpsProxy: "http://p:3128", noProxy: "corp.example.com"}}
  networking:
    machineNetwork: [{cidr: 10.0.0.0/16}]
    serviceNetwork: [{cidr: 172.31.0.0/16}]
  platform: {type: AWS, aws: {region: eu-west-1}}
""")
    entries = hosted_cluster(hc).computed_no_proxy.split(",")
    for want in (".svc", ".local", "10.0.0.0/16", "172.31.0.0/16",
                 "169.254.169.254", ".eu-west-1.compute.internal", "corp.example.com"):
        assert want in entries
    # HyperShift's defaultProxyStatus adds .local (which covers *.hypershift.local for Go), not
    # .hypershift.local itself, and prints its set sorted
    assert ".hypershift.local" not in entries and entries == sorted(entries)


# HyperShift (support/globalconfig/proxy.go at 3ee96155) adds the metadata address on AWS and
# Azure only: not on GCP or OpenStack, where OpenShift's own network operator does add it
@pytest.mark.parametrize(("platform", "metadata"), [("AWS", True), ("Azure", True), ("GCP", False),
                                                    ("OpenStack", False), ("Agent", False),
                                                    ("KubeVirt", False)])
def test_computed_no_proxy_names_the_metadata_address_where_the_cloud_has_one(
        tmp_path: Path, platform: str, metadata: bool) -> None:
    (hc,) = objects(tmp_path, f"""\
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata: {{name: example, namespace: clusters}}
spec:
  configuration: {{proxy: {{httpsProxy: "http://p:3128"}}}}
  networking: {{machineNetwork: [{{cidr: 0.0.0.0/0}}]}}
  platform: {{type: {platform}}}
""")
    entries = hosted_cluster(hc).computed_no_proxy.split(",")
    assert ("169.254.169.254" in entries) is metadata
    # HyperShift inserts the machine networks as written (the network operator skips 0.0.0.0/0)
    assert "0.0.0.0/0" in entries


# -- PRX006 ---------------------------------------------------------------------------------


def test_prx006_differing_proxy_urls_name_who_reads_which(tmp_path: Path) -> None:
    text = workload(env(HTTP_PROXY="http://a:3128", http_proxy="http://b:3128"))
    (finding,) = run(tmp_path, text, "PRX006").findings
    assert finding.field == "spec.template.spec.containers[0].env[1].value"
    (readers,) = [e for e in finding.evidence if e.startswith("each client takes")]
    assert "HTTP_PROXY: go" in readers and "http_proxy: curl" in readers


def test_prx006_single_case_in_container_is_left_alone(tmp_path: Path) -> None:
    text = workload(env(HTTPS_PROXY="http://a:3128", NO_PROXY=".svc"))
    assert run(tmp_path, text, "PRX006").results[0].status is Status.PASS


def test_prx006_drop_in_file_sets_one_case(tmp_path: Path) -> None:
    conf = tmp_path / "http-proxy.conf"
    conf.write_text('[Service]\nEnvironment="HTTPS_PROXY=http://p:3128"\n'
                    'Environment="https_proxy=http://p:3128"\nEnvironment="no_proxy=.svc"\n')
    report = scan([conf], ["PRX006"])
    (finding,) = report.findings
    assert finding.location.line == 4
    assert "only no_proxy is set" in finding.message


# -- PRX007 ---------------------------------------------------------------------------------


def test_prx007_plain_entries_do_not_diverge() -> None:
    assert _divergence("corp.example.com") is None
    assert _divergence("10.0.12.7") is None


def test_prx007_cidr_names_the_clients_that_ignore_it() -> None:
    found = _divergence("10.0.0.0/16")
    assert found is not None
    kind, lines = found
    assert kind == "a CIDR"
    assert "python" in lines[0] and "wget" in lines[0] and "curl" not in lines[0]


def test_prx007_names_the_releases_that_diverge() -> None:
    found = _divergence("fd00::/8")
    assert found is not None
    line = found[1][0]
    assert "curl before 8.18" in line and "python" in line, line
    star = _divergence("*.example.com")
    assert star is not None and any("node-undici" not in ln for ln in star[1])
    apex = [ln for ln in star[1] if "for example.com:" in ln]
    assert apex and "node-undici before 8.11" in apex[0], star  # PR 5777 landed in 8.11.0


def test_prx007_a_configured_release_is_the_only_one_asked_about() -> None:
    pinned = {"curl": runtime_ref("curl@8.18")}
    found = _divergence("fd00::/8", pinned)
    assert found is not None and "curl" not in found[1][0]
    found = _divergence("fd00::/8", {"curl": runtime_ref("curl@7.88")})
    assert found is not None and "curl@7.88" in found[1][0]


# A Python workload reading its proxy variables from the ConfigMap proxy-env.
PYTHON_DEPLOYMENT = """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: apps}
spec:
  template:
    spec:
      containers:
      - name: %s
        image: python:3.12
        envFrom:
        - configMapRef: {name: proxy-env}
"""


def proxy_env(no_proxy: str) -> str:
    return f"""\
apiVersion: v1
kind: ConfigMap
metadata: {{name: proxy-env, namespace: apps}}
data:
  HTTPS_PROXY: http://p:3128
  NO_PROXY: "{no_proxy}"
"""


def test_prx007_a_configmap_many_workloads_read_is_one_finding_at_the_value(tmp_path: Path) -> None:
    text = proxy_env("*.corp.example.com") + PYTHON_DEPLOYMENT % ("app", "app") + \
        PYTHON_DEPLOYMENT % ("worker", "worker")
    (finding,) = run(tmp_path, text, "PRX007").findings
    assert (finding.object.kind, finding.object.name, finding.field) == ("ConfigMap", "proxy-env",
                                                                        "data.NO_PROXY")
    assert finding.location.line == 6
    said = " ".join([finding.message, *finding.evidence])
    assert "Deployment apps/app" in said and "Deployment apps/worker" in said


def test_prx007_reads_the_configured_releases_in_a_scan(tmp_path: Path) -> None:
    text = proxy_env("fd00::/8") + PYTHON_DEPLOYMENT % ("app", "app")

    def evidence(config: ScanConfig | None) -> str:
        return "\n".join(line for f in run(tmp_path, text, "PRX007", config).findings
                         for line in f.evidence)

    assert "curl before 8.18" in evidence(None)
    pinned = ScanConfig(runtime_versions={"curl": runtime_ref("curl@7.88")})
    assert "curl@7.88" in evidence(pinned)


# -- PRX007: who reads the value ---------------------------------------------------------------


def test_prx007_judges_what_a_non_go_program_reads_once_per_value(tmp_path: Path) -> None:
    # a Python app reads both spellings; one value in two variables is one finding
    text = workload(env(HTTPS_PROXY="http://p:3128", NO_PROXY="10.0.0.0/8", no_proxy="10.0.0.0/8"))
    report = run(tmp_path, text.replace("image: app:1", "image: python:3.12"), "PRX007")
    (finding,) = report.findings
    assert "10.0.0.0/8" in finding.message


@pytest.mark.parametrize("image", ["quay.io/giantswarm/chart-operator:3.2.1",
                                   "quay.io/jetstack/cert-manager-controller:v1.16.2",
                                   "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0123"])
def test_prx007_leaves_values_only_go_programs_read(tmp_path: Path, image: str) -> None:
    text = workload(env(HTTPS_PROXY="http://p:3128", NO_PROXY="10.0.0.0/8"))
    report = run(tmp_path, text.replace("image: app:1", f"image: {image}"), "PRX007")
    assert report.findings == []
    assert report.results[0].status is Status.NOT_APPLICABLE


def test_prx007_leaves_containerd_and_kubelet_drop_ins_but_not_other_units(tmp_path: Path) -> None:
    def template(unit: str) -> str:
        return f"""\
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata: {{name: workers, namespace: org-a}}
spec:
  template:
    spec:
      files:
      - path: /etc/systemd/system/{unit}.service.d/http-proxy.conf
        content: |
          [Service]
          Environment="HTTPS_PROXY=http://p:3128"
          Environment="NO_PROXY=10.0.0.0/8,.svc"
"""
    for unit in ("containerd", "kubelet", "teleport"):
        assert run(tmp_path, template(unit), "PRX007").findings == [], unit
    (finding,) = run(tmp_path, template("node-exporter-fetcher"), "PRX007").findings
    assert "10.0.0.0/8" in finding.message


def test_prx005_a_shared_configmap_missing_svc_is_one_finding_naming_every_reader(tmp_path: Path) -> None:
    reader = """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: apps}
spec:
  template:
    spec:
      containers:
      - name: main
        image: app:1
        env:
        - name: HTTPS_PROXY
          valueFrom: {configMapKeyRef: {name: proxy-env, key: HTTPS_PROXY}}
        - name: NO_PROXY
          valueFrom: {configMapKeyRef: {name: proxy-env, key: NO_PROXY}}
"""
    text = NETWORK + """\
---
apiVersion: v1
kind: ConfigMap
metadata: {name: proxy-env, namespace: apps}
data:
  HTTPS_PROXY: http://p:3128
  NO_PROXY: localhost,127.0.0.1
""" + "".join(reader % name for name in ("api", "worker", "cron"))
    findings = [f for f in run(tmp_path, text, "PRX005").findings if f.object.kind == "ConfigMap"]
    (finding,) = findings
    assert finding.field == "data.NO_PROXY"
    said = " ".join([finding.message, *finding.evidence])
    assert all(f"Deployment apps/{name}" in said for name in ("api", "worker", "cron"))


@pytest.mark.parametrize(("image", "curl_named"), [("curlimages/curl:7.88.1", True),
                                                   ("curlimages/curl:8.18.0", False)])
def test_prx007_models_the_curl_release_an_image_tag_states(tmp_path: Path, image: str,
                                                             curl_named: bool) -> None:
    # curl before 8.18 never matches IPv6 CIDR entries; 8.18 does, as Go does
    text = workload(env(HTTPS_PROXY="http://p:3128", NO_PROXY="fd00::/8"))
    report = run(tmp_path, text.replace("image: app:1", f"image: {image}"), "PRX007")
    said = " ".join(line for f in report.findings for line in f.evidence if "Go goes" in line)
    assert said and ("curl" in said) is curl_named, said


def test_prx008_finds_credentials_in_every_form_a_client_accepts(tmp_path: Path) -> None:
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: a}
spec:
  template:
    spec:
      containers:
      - name: c
        image: registry.example.com/app:1.0@sha256:0123abcd
        args: ["--https-proxy", "u5:Pw5@proxy.corp:3128"]
        env:
        - {name: HTTPS_PROXY, value: "user:S3cretPw@proxy.corp:3128"}
        - {name: ALL_PROXY, value: "socks5://u:p@proxy.corp:1080"}
        - {name: IMAGE, value: "registry.example.com/app:1.0@sha256:0123abcd"}
"""
    fields = {f.field for f in run(tmp_path, text, "PRX008").findings}
    assert fields == {"spec.template.spec.containers[0].args[1]",
                      "spec.template.spec.containers[0].env[0].value",
                      "spec.template.spec.containers[0].env[1].value"}
