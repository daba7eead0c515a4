"""Primitives behind the fleet proxy rules: PRX009-PRX013, OCM001, OCM002, OCM004."""

from __future__ import annotations

import base64
import textwrap
from pathlib import Path

import pytest

from hcpscan.analysis.kyverno import (
    Resource,
    block_matches,
    injected_variables,
    kind_matches,
    selector_matches,
)
from hcpscan.analysis.proxy import parse_bundle, parse_no_proxy
from hcpscan.analysis.proxy.trust import bundle_problems
from hcpscan.analysis.proxy.validity import (
    no_proxy_entry_problem,
    no_proxy_problems,
    proxy_url_problems,
)
from hcpscan.findings.model import Status
from hcpscan.rules.config import ScanConfig
from tests.rules.harness import scan

CORP_PROXY_CA = """\
-----BEGIN CERTIFICATE-----
MIIBdTCCARugAwIBAgIUJiPSfrxhESg3y5kfZiLFN7aazUAwCgYIKoZIzj0EAwIw
LzEVMBMGA1UECgwMRXhhbXBsZSBDb3JwMRYwFAYDVQQDDA1jb3JwLXByb3h5LWNh
MCAXDTI0MDEwMTAwMDAwMFoYDzIxMjQwMTAxMDAwMDAwWjAvMRUwEwYDVQQKDAxF
eGFtcGxlIENvcnAxFjAUBgNVBAMMDWNvcnAtcHJveHktY2EwWTATBgcqhkjOPQIB
BggqhkjOPQMBBwNCAARFkSES3KcFmn7cb5egBZyIAGdYEPbMoNVkHnF214QWI9Xu
qWN2xBQ/ZlXV+eRKELj2XoD8Si7detP6W7wkS3tGoxMwETAPBgNVHRMBAf8EBTAD
AQH/MAoGCCqGSM49BAMCA0gAMEUCID1D1PCAkGlEI9OlO9xO+8gcv5O3RMToy6qY
Qu2IUjDIAiEArKQya9aAFQ+o9j0y7cNJ9khfjMPWGlYvupmj6T55TOA=
-----END CERTIFICATE-----
"""
OLD_PROXY_CA = """\
-----BEGIN CERTIFICATE-----
MIIBcTCCARegAwIBAgIUG7kLMW92bnUlwL/AKFarbxP2Da4wCgYIKoZIzj0EAwIw
LjEVMBMGA1UECgwMRXhhbXBsZSBDb3JwMRUwEwYDVQQDDAxvbGQtcHJveHktY2Ew
HhcNMTUwMTAxMDAwMDAwWhcNMjAwMTAxMDAwMDAwWjAuMRUwEwYDVQQKDAxFeGFt
cGxlIENvcnAxFTATBgNVBAMMDG9sZC1wcm94eS1jYTBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABEbgkC3AliWk3k85xWYHi4z+/39pl6SJr7budPDwJ2K4KkW9mnWY
CUnPJZ4fTC/Bm7WQe9a07gWEc1mwLWUQ/gyjEzARMA8GA1UdEwEB/wQFMAMBAf8w
CgYIKoZIzj0EAwIDSAAwRQIhAKTlGEEBCwLis8d+PdrG86cbuJDMlizEFHK5QW8M
DBEjAiAiH0aLPqMCtJ5PSMyR+SHInDNywRRMdQKZQk5l6ilQUQ==
-----END CERTIFICATE-----
"""
HUB_CA = """\
-----BEGIN CERTIFICATE-----
MIIBgzCCASmgAwIBAgIUdzTNyNnayAjJmfR3oP8Qj1V9SkgwCgYIKoZIzj0EAwIw
NjEUMBIGA1UECgwLRXhhbXBsZSBIdWIxHjAcBgNVBAMMFWh1Yi1rdWJlLWFwaXNl
cnZlci1jYTAgFw0yNDAxMDEwMDAwMDBaGA8yMTI0MDEwMTAwMDAwMFowNjEUMBIG
A1UECgwLRXhhbXBsZSBIdWIxHjAcBgNVBAMMFWh1Yi1rdWJlLWFwaXNlcnZlci1j
YTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABPnLfI+fIdFcu7qQmLG926Qe4QRg
Jtgqs7+Oi1abCR2H7YjcjLM4QSXBzEDaG2huMSD/0JQHABcd+slmD/yw2DejEzAR
MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhAO/y+z0V8ZqloHFc
az+dahLf8vXCqjBwqkHUHiDG9vWhAiBLVmNQfyODtByBLN08QpcTKbrjz+jdYMaY
0K6oNCIEAw==
-----END CERTIFICATE-----
"""


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def scan_text(tmp_path: Path, text: str, rule: str, config: ScanConfig | None = None):
    path = tmp_path / "input.yaml"
    path.write_text(textwrap.dedent(text))
    report = scan([path], [rule], config)
    return report, report.results[0]


# -- PRX013: proxy URL and noProxy validity ------------------------------------

@pytest.mark.parametrize("url, schemes, expected", [
    ("http://proxy.corp.example.com:3128", ["http"], []),
    ("http://user:pass@proxy.corp.example.com:3128/", ["http"], []),
    ("http://[fd00::10]:3128", ["http"], []),
    ("", ["http"], []),
    ("https://proxy.corp.example.com:3129", ["http"], ["uses scheme https://"]),
    ("proxy.corp.example.com:3128", ["http"], ["has no scheme"]),
    ("http://proxy.corp.example.com:70000", ["http"], ["port is not a number"]),
    ("http://proxy.corp.example.com:3128/path", ["http"], ["carries a path"]),
    ("http://:3128", ["http"], ["has no host"]),
    ("http://300.1.1.1:3128", ["http"], ["neither a host name nor an IP"]),
    ("http://proxy corp:3128", ["http"], ["contains whitespace"]),
])
def test_proxy_url_problems(url, schemes, expected):
    problems = proxy_url_problems(url, schemes)
    assert len(problems) == len(expected)
    for problem, start in zip(problems, expected, strict=True):
        assert start in problem


@pytest.mark.parametrize("entry, expected", [
    (".svc", None), ("*.apps.example.com", None), ("10.0.0.0/16", None), ("*", None),
    ("172.30.0.1", None), ("registry.corp.example.com:5000", None), ("[fd00::1]:443", None),
    ("http://registry.example.com", "is a URL"),
    ("10.0.0.0/33", "not a valid CIDR"),
    ("*.", "names no domain"),
    ("1.2.3.4:99999", "outside 1-65535"),
    ("a.example.com;b.example.com", "characters no host name has"),
    ("300.1.1.1", "looks like an IP address"),
    ("corp..example.com", "empty label"),
])
def test_no_proxy_entry_problem(entry, expected):
    (parsed,) = parse_no_proxy(entry)
    problem = no_proxy_entry_problem(parsed)
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and expected in problem


def test_no_proxy_problems_keeps_entries_as_written_and_skips_empty_ones():
    assert no_proxy_problems(" .svc, ,HTTP://Reg.example.com,") == [
        ("HTTP://Reg.example.com", "is a URL: NO_PROXY takes host names, domains, IPs and CIDRs, "
                                   "no scheme")]


def test_prx013_masks_credentials_in_evidence(tmp_path):
    report, result = scan_text(tmp_path, """\
        apiVersion: config.openshift.io/v1
        kind: Proxy
        metadata: {name: cluster}
        spec:
          httpProxy: https://svc-proxy:S3cret@proxy.corp.example.com:3129
        """, "PRX013")
    assert result.status is Status.FAIL
    (finding,) = report.findings
    assert "S3cret" not in " ".join(finding.evidence)
    assert "svc-proxy:****@" in finding.evidence[0]


def test_prx013_passes_a_valid_addon_config(tmp_path):
    _, result = scan_text(tmp_path, """\
        apiVersion: addon.open-cluster-management.io/v1alpha1
        kind: AddOnDeploymentConfig
        metadata: {name: proxy-config, namespace: cluster1}
        spec:
          proxyConfig:
            httpProxy: http://proxy.corp.example.com:3128
            noProxy: 172.30.0.1,.svc
        """, "PRX013")
    assert result.status is Status.PASS


# -- PRX012: https proxies need a usable CA -------------------------------------

def test_bundle_problems_reports_expired_only_bundles_not_mixed_ones():
    assert bundle_problems(parse_bundle(CORP_PROXY_CA + OLD_PROXY_CA)) == []
    (problem,) = bundle_problems(parse_bundle(OLD_PROXY_CA))
    assert "every certificate has expired" in problem and "old-proxy-ca" in problem
    assert bundle_problems(parse_bundle("")) == ["empty CA bundle"]


# The cluster Proxy with an https:// proxy whose CA OpenShift reads from user-ca-bundle.
HTTPS_PROXY_WITH_TRUSTED_CA = """\
apiVersion: config.openshift.io/v1
kind: Proxy
metadata: {name: cluster}
spec:
  httpsProxy: https://proxy.corp.example.com:3129
  trustedCA: {name: user-ca-bundle}
"""


def test_prx012_missing_configmap_in_an_uncollected_namespace_is_not_evaluable(tmp_path):
    _, result = scan_text(tmp_path, HTTPS_PROXY_WITH_TRUSTED_CA, "PRX012")
    assert result.status is Status.NOT_EVALUABLE
    assert "openshift-config/user-ca-bundle" in result.reason
    assert "holds no ConfigMap of namespace openshift-config" in result.reason


def test_prx012_configmap_without_bundle_key_is_reported_on_the_configmap(tmp_path):
    report, result = scan_text(tmp_path, HTTPS_PROXY_WITH_TRUSTED_CA + textwrap.dedent("""\
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: user-ca-bundle, namespace: openshift-config}
        data:
          ca.crt: "not the key OpenShift reads"
        """), "PRX012")
    assert result.status is Status.FAIL
    (finding,) = report.findings
    assert finding.object.kind == "ConfigMap" and finding.field == "data"
    assert "has no ca-bundle.crt" in finding.message


@pytest.mark.parametrize("cluster_fields, status", [
    ("insecure-skip-tls-verify: true", Status.PASS),
    ("certificate-authority: /etc/pki/hub-and-proxy.pem", Status.NOT_EVALUABLE),
    ("certificate-authority-data: " + b64("-----BEGIN CERTIFICATE-----\nMIIB\n"
                                          "-----END CERTIFICATE-----\n"), Status.FAIL),
])
def test_prx012_kubeconfig_ca_forms(tmp_path, cluster_fields, status):
    _, result = scan_text(tmp_path, f"""\
        apiVersion: v1
        kind: Config
        clusters:
        - name: hub
          cluster:
            server: https://api.hub.example.com:6443
            proxy-url: https://proxy.corp.example.com:3129
            {cluster_fields}
        contexts:
        - name: hub
          context: {{cluster: hub, user: agent}}
        current-context: hub
        """, "PRX012")
    assert result.status is status, result.reason


# -- OCM002: the proxy CA appended to the hub CA ---------------------------------

def _bootstrap_secret(ca_pem: str, proxy_url: str = "https://proxy.corp.example.com:3129") -> str:
    kubeconfig = textwrap.dedent(f"""\
        apiVersion: v1
        kind: Config
        clusters:
        - name: hub
          cluster:
            server: https://api.hub.example.com:6443
            proxy-url: {proxy_url}
            certificate-authority-data: {b64(ca_pem)}
        contexts:
        - name: hub
          context: {{cluster: hub, user: bootstrap}}
        current-context: hub
        """)
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: Secret
        metadata: {{name: bootstrap-hub-kubeconfig, namespace: open-cluster-management-agent}}
        data:
          kubeconfig: {b64(kubeconfig)}
        """)


def test_ocm002_two_certificates_and_no_known_proxy_ca_is_not_evaluable(tmp_path):
    _, result = scan_text(tmp_path, _bootstrap_secret(HUB_CA + CORP_PROXY_CA), "OCM002")
    assert result.status is Status.NOT_EVALUABLE
    assert "input the user must supply: proxy_ca_files" in result.reason


@pytest.mark.parametrize("bundle, status", [
    (HUB_CA + CORP_PROXY_CA, Status.PASS),
    (HUB_CA + OLD_PROXY_CA, Status.FAIL),
])
def test_ocm002_proxy_ca_from_config_file(tmp_path, bundle, status):
    ca_file = tmp_path / "corp-proxy-ca.pem"
    ca_file.write_text(CORP_PROXY_CA)
    report, result = scan_text(tmp_path, _bootstrap_secret(bundle), "OCM002",
                               ScanConfig(proxy_ca_files=[ca_file]))
    assert result.status is status, result.reason
    if status is Status.FAIL:
        assert any("proxy_ca_files" in e for e in report.findings[0].evidence)


def test_ocm002_unreadable_proxy_ca_file_is_named_in_the_reason(tmp_path):
    config = ScanConfig(proxy_ca_files=[tmp_path / "missing.pem"])
    _, result = scan_text(tmp_path, _bootstrap_secret(HUB_CA + CORP_PROXY_CA), "OCM002", config)
    assert result.status is Status.NOT_EVALUABLE
    assert "cannot read" in result.reason and "missing.pem" in result.reason


def test_ocm002_single_certificate_fails_without_any_proxy_ca_known(tmp_path):
    _, result = scan_text(tmp_path, _bootstrap_secret(HUB_CA), "OCM002")
    assert result.status is Status.FAIL


def test_ocm002_http_proxy_url_needs_no_proxy_ca(tmp_path):
    _, result = scan_text(tmp_path, _bootstrap_secret(HUB_CA, "http://proxy.corp.example.com:3128"),
                          "OCM002")
    assert result.status is Status.NOT_APPLICABLE  # no https proxy: nothing to verify


def test_ocm002_redacted_kubeconfig_is_not_evaluable(tmp_path):
    _, result = scan_text(tmp_path, """\
        apiVersion: v1
        kind: Secret
        metadata: {name: bootstrap-hub-kubeconfig, namespace: open-cluster-management-agent}
        data:
          kubeconfig: 2876 bytes long
        """, "OCM002")
    assert result.status is Status.NOT_EVALUABLE
    assert "redacted" in result.reason


# -- OCM001: proxy-url in the bootstrap kubeconfig --------------------------------

BOOTSTRAP_WITHOUT_PROXY_URL = """\
    apiVersion: v1
    kind: Secret
    metadata: {name: bootstrap-hub-kubeconfig, namespace: open-cluster-management-agent}
    stringData:
      kubeconfig: |
        apiVersion: v1
        kind: Config
        clusters:
        - name: hub
          cluster: {server: "https://api.hub.example.com:6443"}
        contexts:
        - name: hub
          context: {cluster: hub, user: bootstrap}
        current-context: hub
    """


def test_ocm001_nothing_about_the_proxy_in_the_input_is_not_evaluable(tmp_path):
    _, result = scan_text(tmp_path, BOOTSTRAP_WITHOUT_PROXY_URL, "OCM001")
    assert result.status is Status.NOT_EVALUABLE
    assert "whether the managed cluster uses a proxy" in result.reason


def docs(*texts: str) -> str:
    """YAML documents, each dedented on its own, as one multi-document stream."""
    return "---\n".join(textwrap.dedent(t) for t in texts)


@pytest.mark.parametrize("env, status", [
    ("[{name: HTTPS_PROXY, value: 'http://proxy.corp.example.com:3128'}]", Status.FAIL),
    ("[{name: HTTPS_PROXY, value: 'http://proxy.corp.example.com:3128'}, "
     "{name: NO_PROXY, value: '.hub.example.com'}]", Status.PASS),
    ("[{name: HTTP_PROXY, value: 'http://proxy.corp.example.com:3128'}]", Status.PASS),
    ("[]", Status.PASS),
])
def test_ocm001_reads_the_agent_env_when_there_is_no_proxy_object(tmp_path, env, status):
    agent = f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: klusterlet-agent, namespace: open-cluster-management-agent}}
        spec:
          template:
            spec:
              containers:
              - name: klusterlet-agent
                image: quay.io/open-cluster-management/registration-operator:v0.13.0
                env: {env}
        """
    _, result = scan_text(tmp_path, docs(agent, BOOTSTRAP_WITHOUT_PROXY_URL), "OCM001")
    assert result.status is status, result.reason


def test_ocm001_proxy_object_without_proxy_passes(tmp_path):
    proxy = """\
        apiVersion: config.openshift.io/v1
        kind: Proxy
        metadata: {name: cluster}
        spec: {trustedCA: {name: ""}}
        """
    _, result = scan_text(tmp_path, docs(proxy, BOOTSTRAP_WITHOUT_PROXY_URL), "OCM001")
    assert result.status is Status.PASS, result.reason


# -- OCM004: kube-apiserver IP in the add-on noProxy -----------------------------

ADDON_CONFIG = """\
    apiVersion: addon.open-cluster-management.io/v1alpha1
    kind: AddOnDeploymentConfig
    metadata: {name: proxy-config, namespace: cluster1}
    spec:
      proxyConfig:
        httpsProxy: http://proxy.corp.example.com:3128
        noProxy: .svc,172.30.0.1
    """


def test_ocm004_without_the_kas_ip_is_not_evaluable(tmp_path):
    _, result = scan_text(tmp_path, ADDON_CONFIG, "OCM004")
    assert result.status is Status.NOT_EVALUABLE
    assert "input the user must supply: managed_cluster_kas_ip" in result.reason


@pytest.mark.parametrize("ip, status", [
    ("172.30.0.1", Status.PASS), ("10.96.0.1", Status.FAIL),
    ("not-an-ip", Status.NOT_EVALUABLE),
])
def test_ocm004_kas_ip_from_config(tmp_path, ip, status):
    _, result = scan_text(tmp_path, ADDON_CONFIG, "OCM004", ScanConfig(managed_cluster_kas_ip=ip))
    assert result.status is status, result.reason


def test_ocm004_several_kubernetes_services_are_ambiguous(tmp_path):
    service = """\
        apiVersion: v1
        kind: Service
        metadata: {{name: kubernetes, namespace: default}}
        spec: {{clusterIP: {ip}}}
        """
    # the hub manages itself under the name cluster1 (a renamed local-cluster): its own
    # Service is cluster1's
    local = """\
        apiVersion: cluster.open-cluster-management.io/v1
        kind: ManagedCluster
        metadata: {name: cluster1, labels: {local-cluster: "true"}}
        spec: {hubAcceptsClient: true}
        """
    (tmp_path / "hub").mkdir()
    (tmp_path / "hub" / "svc.yaml").write_text(textwrap.dedent(service.format(ip="10.96.0.1")))
    _, result = scan_text(tmp_path, docs(ADDON_CONFIG, local, service.format(ip="172.30.0.1")),
                          "OCM004")
    assert result.status is Status.PASS, result.reason  # input.yaml alone: one Service
    report = scan([tmp_path], ["OCM004"])
    assert report.results[0].status is Status.NOT_EVALUABLE
    assert "several default/kubernetes Services" in report.results[0].reason


def test_ocm004_ipv6_kas_ip_inside_a_cidr(tmp_path):
    text = ADDON_CONFIG.replace(".svc,172.30.0.1", ".svc,fd02::/112")
    _, result = scan_text(tmp_path, text, "OCM004", ScanConfig(managed_cluster_kas_ip="fd02::1"))
    assert result.status is Status.PASS, result.reason


# -- PRX009: containerd's proxy drop-in in CAPI bootstrap configs ------------------

def _template(name: str, files: str = "[]", labels: str = "{}") -> str:
    return f"""\
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
        kind: KubeadmConfigTemplate
        metadata: {{name: {name}, namespace: org-acme, labels: {labels}}}
        spec:
          template:
            spec:
              files: {files}
        """


def _values_secret(cluster: str, values: str) -> str:
    return f"""\
        apiVersion: v1
        kind: Secret
        metadata: {{name: {cluster}-cluster-values, namespace: org-acme}}
        data:
          values: {values}
        """


PROXY_VALUES = b64("cluster:\n  proxy:\n    https: http://192.168.52.220:3128\n")


def test_prx009_cluster_without_values_secret_is_not_evaluable(tmp_path):
    _, result = scan_text(tmp_path, _template(
        "mycluster-md-0", labels="{cluster.x-k8s.io/cluster-name: mycluster}"), "PRX009")
    assert result.status is Status.NOT_EVALUABLE
    assert "nothing in the input says whether cluster mycluster uses a proxy" in result.reason
    assert "Secret org-acme/mycluster-cluster-values" in result.reason  # what would decide


CLUSTER_CHART_PROXY = """\
    global:
      metadata: {name: %s}
      connectivity:
        proxy: {enabled: %s, httpProxy: "http://10.0.0.5:3128", httpsProxy: "http://10.0.0.5:3128",
                noProxy: example.com}
"""


def _helm_release(name: str, values: str, labels: str = "{}") -> str:
    return f"""\
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {{name: {name}, namespace: org-acme, labels: {labels}}}
        spec:
          values:\n""" + textwrap.indent(textwrap.dedent(values), " " * 12)


CONTROL_PLANE_WITH_DROP_IN = """\
    apiVersion: controlplane.cluster.x-k8s.io/v1beta1
    kind: KubeadmControlPlane
    metadata: {name: wc1, namespace: org-acme, labels: {cluster.x-k8s.io/cluster-name: wc1}}
    spec:
      kubeadmConfigSpec:
        files:
        - path: /etc/systemd/system/containerd.service.d/http-proxy.conf
          content: "[Service]\\nEnvironment=HTTPS_PROXY=http://10.0.0.5:3128\\n"
    """
WC1_POOL = _template("wc1-md0", labels="{cluster.x-k8s.io/cluster-name: wc1}")


def test_prx009_without_values_secret_the_cluster_release_states_the_proxy(tmp_path):
    text = docs(_helm_release("wc1", CLUSTER_CHART_PROXY % ("wc9", "true")), WC1_POOL)
    report, result = scan_text(tmp_path, text, "PRX009")
    assert result.status is Status.FAIL, result.reason
    (finding,) = report.findings
    assert finding.object.name == "wc1-md0"
    assert any("HelmRelease org-acme/wc1 spec.values, it uses proxy" in e for e in finding.evidence)


def test_prx009_without_values_secret_the_control_plane_drop_in_states_the_proxy(tmp_path):
    report, result = scan_text(tmp_path, docs(CONTROL_PLANE_WITH_DROP_IN, WC1_POOL), "PRX009")
    assert result.status is Status.FAIL, result.reason
    assert [f.object.name for f in report.findings] == ["wc1-md0"]


def test_prx009_release_values_match_the_cluster_by_label_or_metadata_name(tmp_path):
    for release in (_helm_release("apps", CLUSTER_CHART_PROXY % ("x", "true"),
                                  labels="{giantswarm.io/cluster: wc1}"),
                    _helm_release("apps", CLUSTER_CHART_PROXY % ("wc1", "true"))):
        _, result = scan_text(tmp_path, docs(release, WC1_POOL), "PRX009")
        assert result.status is Status.FAIL, result.reason


def test_prx009_another_clusters_or_disabled_proxy_values_do_not_decide(tmp_path):
    for release in (_helm_release("wc2", CLUSTER_CHART_PROXY % ("wc2", "true")),
                    _helm_release("wc1", CLUSTER_CHART_PROXY % ("wc1", "false"))):
        _, result = scan_text(tmp_path, docs(release, WC1_POOL), "PRX009")
        assert result.status is Status.NOT_EVALUABLE
        assert "include Secret org-acme/wc1-cluster-values" in result.reason


def test_prx009_redacted_values_are_not_evaluable(tmp_path):
    text = docs(_values_secret("mycluster", "412 bytes long"), _template("mycluster-md-0"))
    _, result = scan_text(tmp_path, text, "PRX009")
    assert result.status is Status.NOT_EVALUABLE
    assert "redacted" in result.reason


def test_prx009_name_prefix_picks_the_longest_cluster_name(tmp_path):
    text = docs(_values_secret("prod", b64("cluster: {}\n")),
                _values_secret("prod-eu", PROXY_VALUES), _template("prod-eu-md-0"))
    report, result = scan_text(tmp_path, text, "PRX009")
    assert result.status is Status.FAIL
    assert "(cluster prod-eu)" in report.findings[0].message


def test_prx009_secret_without_the_referenced_key(tmp_path):
    files = ("[{path: /etc/systemd/system/containerd.service.d/http-proxy.conf, "
             "contentFrom: {secret: {name: mycluster-systemd-proxy, key: containerdProxy}}}]")
    secret = """\
        apiVersion: v1
        kind: Secret
        metadata: {name: mycluster-systemd-proxy, namespace: org-acme}
        stringData: {kubeletProxy: "[Service]"}
        """
    text = docs(_values_secret("mycluster", PROXY_VALUES), secret, _template("mycluster-md-0", files))
    report, result = scan_text(tmp_path, text, "PRX009")
    assert result.status is Status.FAIL
    (finding,) = report.findings
    assert finding.field.endswith("contentFrom.secret.key")
    assert "kubeletProxy" in finding.evidence[-1]


# -- PRX010 / PRX011: Kyverno and the workloads it does not reach -----------------

CHART_OPERATOR_POD = Resource("Pod", "giantswarm", "chart-operator-7d9f8c6b5-x2x7k",
                              {"app.kubernetes.io/name": "chart-operator"}, {},
                              {"kubernetes.io/metadata.name": "giantswarm"})


@pytest.mark.parametrize("pattern, kind, expected", [
    ("Pod", "Pod", True), ("v1/Pod", "Pod", True), ("apps/v1/Deployment", "Deployment", True),
    ("*", "Pod", True), ("Pod/exec", "Pod", False), ("Deployment", "Pod", False),
    ("apps/*/Deploy*", "Deployment", True),
])
def test_kind_matches(pattern, kind, expected):
    assert kind_matches(pattern, kind) is expected


@pytest.mark.parametrize("selector, expected", [
    ({"matchLabels": {"app.kubernetes.io/name": "chart-*"}}, True),
    ({"matchLabels": {"app": "chart-operator"}}, False),
    ({"matchExpressions": [{"key": "app.kubernetes.io/name", "operator": "NotIn",
                            "values": ["chart-operator"]}]}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, False),
])
def test_selector_matches(selector, expected):
    assert selector_matches(selector, CHART_OPERATOR_POD.labels) is expected


@pytest.mark.parametrize("block, expected", [
    ({"any": [{"resources": {"kinds": ["Deployment"]}}, {"resources": {"kinds": ["Pod"]}}]}, True),
    ({"all": [{"resources": {"kinds": ["Pod"]}},
              {"resources": {"namespaces": ["kube-system"]}}]}, False),
    ({"resources": {"kinds": ["Pod"], "names": ["chart-operator*"]}}, True),
    ({"resources": {"kinds": ["Pod"], "operations": ["DELETE"]}}, False),
    ({"any": [{"resources": {"kinds": ["Pod"]}, "subjects": [{"kind": "ServiceAccount",
                                                               "name": "x"}]}]}, None),
    ({"any": [{"resources": {"kinds": ["Pod"], "namespaceSelector": {
        "matchLabels": {"kubernetes.io/metadata.name": "giantswarm"}}}}]}, True),
    ({}, False),
])
def test_block_matches(block, expected):
    assert block_matches(block, CHART_OPERATOR_POD) is expected


PROXY_RULE = """\
    apiVersion: kyverno.io/v1
    kind: {kind}
    metadata: {{name: inject-proxy, namespace: {namespace}}}
    spec:
      rules:
      - name: add-proxy
        match:
          any:
          - resources: {{kinds: [Pod]}}
            {extra}
        {preconditions}
        mutate:
          patchStrategicMerge:
            spec:
              containers:
              - (name): "*"
                env: [{{name: HTTPS_PROXY, value: "http://192.168.52.220:3128"}}]
    """


def _policy(kind="ClusterPolicy", namespace="kyverno", extra="", preconditions=""):
    return PROXY_RULE.format(kind=kind, namespace=namespace, extra=extra,
                             preconditions=preconditions)


CHART_OPERATOR = """\
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: chart-operator, namespace: giantswarm, labels: {app: chart-operator}}
    spec:
      template:
        metadata: {labels: {app: chart-operator}}
        spec: {containers: [{name: chart-operator, image: chart-operator:3.2.1}]}
    """


def _with_chart_operator(text: str) -> str:
    return text.rstrip(" ") + CHART_OPERATOR


@pytest.mark.parametrize("text, status", [
    (_with_chart_operator(_policy()), Status.FAIL),
    (_with_chart_operator(_policy(kind="Policy", namespace="giantswarm")), Status.FAIL),
    (_policy(kind="Policy", namespace="team-a"), Status.PASS),
    (_with_chart_operator(_policy(kind="Policy", namespace="team-a")), Status.PASS),
    (_with_chart_operator(_policy(extra="clusterRoles: [cluster-admin]")), Status.NOT_EVALUABLE),
    (_policy(preconditions="preconditions: {all: [{key: '{{request.object.metadata.name}}', "
                           "operator: NotEquals, value: 'chart-operator*'}]}"),
     Status.NOT_EVALUABLE),
    # chart-operator not in the input: nothing to report about it
    (_policy(), Status.NOT_APPLICABLE),
    (_policy(kind="Policy", namespace="giantswarm"), Status.NOT_EVALUABLE),
])
def test_prx011_policy_forms(tmp_path, text, status):
    _, result = scan_text(tmp_path, text, "PRX011")
    assert result.status is status, result.reason


def test_prx011_evidence_names_only_objects_of_the_input(tmp_path):
    report, _ = scan_text(tmp_path, _with_chart_operator(_policy()), "PRX011")
    (finding,) = report.findings
    said = " ".join([finding.message, *finding.evidence])
    assert "7d9f8c6b5" not in said, said  # no Pod of that name is in the input
    assert "the Pods of Deployment giantswarm/chart-operator" in said


def test_prx011_without_chart_operator_in_the_input_reports_nothing(tmp_path):
    """Kyverno's generic add-pod-proxies sample: no chart-operator, no Giant Swarm. A
    finding would name Deployments that are not in the input."""
    report, result = scan_text(tmp_path, _policy(), "PRX011")
    assert report.findings == []
    assert result.status is Status.NOT_APPLICABLE
    assert result.reason == ("rule 'add-proxy' would match a Deployment chart-operator in "
                             "namespace giantswarm, and the input holds no Deployment "
                             "chart-operator nor anything of namespace giantswarm")


def test_prx011_with_giant_swarm_but_not_chart_operator_says_what_to_add(tmp_path):
    namespace = "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: giantswarm}\n"
    report, result = scan_text(tmp_path, _policy().rstrip(" ") + namespace, "PRX011")
    assert report.findings == []
    assert result.status is Status.NOT_EVALUABLE
    assert "though it holds Namespace giantswarm: add it to judge the rule (kubectl get " \
           "deployment -n giantswarm chart-operator -o yaml)" in result.reason


def test_injected_variables_reads_json_patches_and_ignores_lookalikes():
    rule = {"mutate": {"patchesJson6902": "- op: add\n  value: {name: no_proxy, value: x}\n"
                                          "- {name: MY_HTTPS_PROXY_URL}"}}
    assert injected_variables(rule) == ["no_proxy"]
    assert injected_variables({"validate": {"message": "HTTPS_PROXY"}}) == []


CERT_MANAGER = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: cert-manager-controller, namespace: kube-system}
    spec:
      template:
        spec:
          containers:
          - name: cert-manager
            image: quay.io/jetstack/cert-manager-controller:v1.14.5
    """


def test_prx010_without_any_proxy_information_is_not_evaluable(tmp_path):
    _, result = scan_text(tmp_path, CERT_MANAGER, "PRX010")
    assert result.status is Status.NOT_EVALUABLE
    assert "whether the installation uses a proxy" in result.reason


def test_prx010_a_kyverno_proxy_policy_shows_the_installation_uses_a_proxy(tmp_path):
    report, result = scan_text(tmp_path, docs(_policy(), CERT_MANAGER), "PRX010")
    assert result.status is Status.FAIL
    assert any("inject-proxy spec.rules[0] injects HTTPS_PROXY" in e
               for e in report.findings[0].evidence)


def test_prx010_values_without_proxy_are_not_applicable(tmp_path):
    values = _values_secret("mycluster", b64("cluster:\n  kubernetes: {}\n"))
    report, result = scan_text(tmp_path, docs(values, CERT_MANAGER), "PRX010")
    assert report.findings == [] and result.status is Status.NOT_APPLICABLE, result.reason
    assert "uses no proxy" in result.reason


def test_prx010_skips_pods_whose_controller_is_in_the_input(tmp_path):
    pod = """\
        apiVersion: v1
        kind: Pod
        metadata:
          name: chart-operator
          namespace: giantswarm
          ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: chart-operator-7d9f8c6b5}]
        spec:
          containers: [{name: chart-operator, image: chart-operator:3.2.1}]
        """
    replica_set = """\
        apiVersion: apps/v1
        kind: ReplicaSet
        metadata:
          name: chart-operator-7d9f8c6b5
          namespace: giantswarm
        spec:
          template:
            spec:
              containers: [{name: chart-operator, image: chart-operator:3.2.1}]
        """
    report, result = scan_text(tmp_path, docs(_policy(), pod, replica_set), "PRX010")
    assert report.findings == [] and result.status is Status.NOT_APPLICABLE, result.reason
    # its ReplicaSet not in the input (`kubectl get pods -o yaml`): nothing else judges its
    # env, so the Pod is judged itself
    alone = tmp_path / "alone"
    alone.mkdir()
    report, result = scan_text(alone, docs(_policy(), pod), "PRX010")
    assert [(f.rule_id, f.object.kind) for f in report.findings] == [("PRX010", "Pod")]


def test_ocm004_names_openshifts_default_kas_ip_when_the_service_is_absent(tmp_path):
    text = """\
    apiVersion: cluster.open-cluster-management.io/v1
    kind: ManagedCluster
    metadata: {name: cluster1, labels: {vendor: OpenShift}}
    spec: {hubAcceptsClient: true}
    ---
    apiVersion: addon.open-cluster-management.io/v1alpha1
    kind: AddOnDeploymentConfig
    metadata: {name: proxy-config, namespace: cluster1}
    spec:
      proxyConfig: {httpsProxy: "http://proxy.corp.example.com:3128", noProxy: ".svc"}
    """
    report, result = scan_text(tmp_path, text, "OCM004")
    assert report.findings == [] and result.status is Status.NOT_EVALUABLE
    assert "cluster1 is OpenShift" in result.reason and "172.30.0.1" in result.reason
    report, result = scan_text(tmp_path, text, "OCM004",
                               ScanConfig(managed_cluster_kas_ip="172.30.0.1"))
    assert result.status is Status.FAIL


def test_prx009_an_inline_proxy_drop_in_needs_no_cluster_values_secret(tmp_path):
    template = """\
    apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
    kind: KubeadmConfigTemplate
    metadata:
      name: test-worker
      namespace: org-a
      labels: {cluster.x-k8s.io/cluster-name: test}
    spec:
      template:
        spec:
          files:
          - path: /etc/systemd/system/containerd.service.d/http-proxy.conf
            content: |
              [Service]
              Environment="%s"
    """
    # a GitOps tree: the <cluster>-cluster-values Secret is generated in the cluster, never in Git
    report, result = scan_text(tmp_path, template % "HTTPS_PROXY=http://proxy.corp:3128", "PRX009")
    assert report.findings == [] and result.status is Status.PASS and result.objects_checked == 1
    _, result = scan_text(tmp_path, template % "NO_PROXY=.svc", "PRX009")
    assert result.status is Status.NOT_EVALUABLE and "test-cluster-values" in result.reason
