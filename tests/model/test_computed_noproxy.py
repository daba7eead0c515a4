"""The noProxy HyperShift and OpenShift's network operator compute: one definition, each as
its source does (support/globalconfig/proxy.go; pkg/util/proxyconfig/no_proxy.go)."""

from __future__ import annotations

from pathlib import Path

from hcpscan.inventory import Inventory
from hcpscan.model.clusters import scan_model
from hcpscan.model.computed_noproxy import hypershift_no_proxy, openshift_no_proxy
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES

COMPUTED_PASS = FIXTURES / "computed-noproxy" / "pass" / "spec-only-proxy-operator-computed.yaml"


def test_hypershift_adds_the_metadata_address_on_aws_and_azure_only() -> None:
    for platform, region, extra in (("AWS", "us-east-1", {"169.254.169.254", ".ec2.internal"}),
                                    ("AWS", "eu-west-1", {"169.254.169.254",
                                                          ".eu-west-1.compute.internal"}),
                                    ("Azure", "", {"169.254.169.254"}),
                                    ("GCP", "", set()), ("OpenStack", "", set()),
                                    ("KubeVirt", "", set()), ("Agent", "", set())):
        value = hypershift_no_proxy(["10.0.0.0/16"], ["10.132.0.0/14"], ["172.31.0.0/16"],
                                    platform, region, "corp.example.com")
        assert set(value.split(",")) == {"127.0.0.1", "localhost", ".svc", ".cluster.local",
                                         ".local", "10.0.0.0/16", "10.132.0.0/14",
                                         "172.31.0.0/16", "corp.example.com", *extra}, platform
        assert value.split(",") == sorted(value.split(","))  # Go's sets.String.List()


def test_the_network_operator_adds_api_int_and_each_clouds_metadata() -> None:
    base = dict(machine=["0.0.0.0/0", "10.0.0.0/16"], api_internal_host="api-int.x.example.com",
                service=["172.30.0.0/16"], cluster=["10.128.0.0/14"], user=".corp.example.com")
    common = {"127.0.0.1", "localhost", ".svc", ".cluster.local", "10.0.0.0/16",
              "api-int.x.example.com", "172.30.0.0/16", "10.128.0.0/14", ".corp.example.com"}
    assert set(openshift_no_proxy(platform="GCP", **base).split(",")) == common | {
        "169.254.169.254", "metadata", "metadata.google.internal", "metadata.google.internal."}
    assert set(openshift_no_proxy(platform="OpenStack", **base).split(",")) == common | {
        "169.254.169.254"}
    assert set(openshift_no_proxy(platform="Azure", azure_cloud="AzureUSGovernmentCloud",
                                  **base).split(",")) == common | {"169.254.169.254",
                                                                   "168.63.129.16"}
    assert set(openshift_no_proxy(platform="Azure", azure_cloud="AzurePublicCloud",
                                  **base).split(",")) == common | {"169.254.169.254"}
    assert set(openshift_no_proxy(platform="BareMetal", **base).split(",")) == common
    # inside a hosted cluster the operator also sends the private zone direct
    assert ".hypershift.local" in openshift_no_proxy(platform="None", hosted=True, **base)


def test_a_spec_only_management_proxy_gets_the_status_the_network_operator_computes() -> None:
    path = COMPUTED_PASS
    management = scan_model(Inventory(load_paths([str(path)]).objects)).management
    assert management.proxy_status == {}
    operator_env = path.read_text().rstrip().rsplit("value: ", 1)[1]
    assert management.computed_no_proxy == operator_env
    assert "Infrastructure cluster status (platform GCP" in management.computed_from


def test_without_the_network_the_management_proxy_is_not_computed(tmp_path: Path) -> None:
    text = (FIXTURES / "computed-noproxy" / "pass" / "spec-only-proxy-operator-computed.yaml"
            ).read_text()
    start = text.index("apiVersion: config.openshift.io/v1\nkind: Network")
    end = text.index("---\n", start) + 4
    (tmp_path / "x.yaml").write_text(text[:start] + text[end:])
    management = scan_model(Inventory(load_paths([str(tmp_path / "x.yaml")]).objects)).management
    assert management.computed_no_proxy == "" and "Network" in management.computed_unknown


COMPUTED = FIXTURES / "computed-noproxy"


def test_prx003_judges_the_operator_on_the_computed_status_of_a_spec_only_proxy() -> None:
    from tests.rules.harness import expected_markers, scan
    failing = scan([COMPUTED / "fail"], ["PRX003"])
    assert {(f.location.path, f.location.line) for f in failing.findings} == \
        expected_markers(COMPUTED / "fail", "PRX003")
    (finding,) = failing.findings
    assert "Proxy cluster computed status.noProxy is .cluster.local," in finding.message
    assert any("no Proxy status in the input" in e for e in finding.evidence)
    passing = scan([COMPUTED / "pass"], ["PRX003"])
    assert passing.findings == [] and passing.results[0].status.name == "PASS"


def test_prx005_judges_a_spec_only_management_proxy_on_its_computed_status(tmp_path: Path) -> None:
    from tests.rules.harness import scan
    text = COMPUTED_PASS.read_text()
    proxy_only = text[:text.index("---\napiVersion: apps/v1")]
    (tmp_path / "proxy.yaml").write_text(proxy_only)
    (result,) = scan([tmp_path / "proxy.yaml"], ["PRX005"]).results
    # the spec alone names no cluster destination; the status computed from it names them all
    assert result.status.name == "PASS" and result.objects_checked >= 1, result.reason
    # with a status in the input, the status is what is judged (nothing is computed)
    with_status = proxy_only.replace("  noProxy: .corp.example.com\n", (
        "  noProxy: .corp.example.com\nstatus:\n  httpProxy: http://proxy.corp.example.com:3128\n"
        "  noProxy: .corp.example.com\n"))
    (tmp_path / "proxy.yaml").write_text(with_status)
    (judged,) = scan([tmp_path / "proxy.yaml"], ["PRX005"]).results
    assert judged.status.name == "FAIL"  # a status without the cluster's networks


# The install-config the network operator reads its machine networks from (the legacy
# networking.machineCIDR of clusters installed before machineNetwork, too).
INSTALL_CONFIG = """---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-config-v1
  namespace: kube-system
data:
  install-config: |
    apiVersion: v1
    baseDomain: example.com
    metadata:
      name: mgmt
    networking:
      machineCIDR: 10.0.0.0/16
      networkType: OpenShiftSDN
    platform:
      gcp:
        region: us-east1
"""


def _operator_with_machine_network(tmp_path: Path, install_config: str) -> Path:
    """The pass fixture whose operator carries the machine network 10.0.0.0/16 as the network
    operator computes it (HyperShift writes the real status into the operator's env)."""
    text = COMPUTED_PASS.read_text().replace(
        "value: .cluster.local,.corp.example.com,.svc,10.128.0.0/14",
        "value: .cluster.local,.corp.example.com,.svc,10.0.0.0/16,10.128.0.0/14")
    (tmp_path / "x.yaml").write_text(text + install_config)
    return tmp_path / "x.yaml"


def test_the_network_operator_adds_an_install_configs_legacy_machine_cidr(tmp_path: Path) -> None:
    path = _operator_with_machine_network(tmp_path, INSTALL_CONFIG)
    management = scan_model(Inventory(load_paths([str(path)]).objects)).management
    assert "10.0.0.0/16" in management.computed_no_proxy.split(",")
    from tests.rules.harness import scan
    (result,) = scan([path], ["PRX003"]).results
    assert result.status.name == "PASS", [f.message for f in scan([path], ["PRX003"]).findings]


def test_without_the_install_config_the_operators_machine_networks_are_no_difference(
        tmp_path: Path) -> None:
    # the network operator always adds the install-config's machine networks; with the
    # install-config out of the input they are unknown, not absent
    from tests.rules.harness import scan
    path = _operator_with_machine_network(tmp_path, "")
    scanned = scan([path], ["PRX003"])
    assert scanned.findings == [], [f.message for f in scanned.findings]
    # what the spec leaves out is still a difference
    stale = path.read_text().replace(",api-int.mgmt.example.com", "")
    path.write_text(stale)
    (finding,) = scan([path], ["PRX003"]).findings
    assert "lacks api-int.mgmt.example.com" in " ".join(finding.evidence)


def test_a_spec_only_proxy_that_cannot_be_computed_is_not_compared_with_its_spec(
        tmp_path: Path) -> None:
    # without the Network the status cannot be computed; the operator's NO_PROXY is the
    # computed status, so comparing it with the bare spec would report a correct operator
    from tests.rules.harness import scan
    text = COMPUTED_PASS.read_text()
    start = text.index("apiVersion: config.openshift.io/v1\nkind: Network")
    end = text.index("---\n", start) + 4
    (tmp_path / "x.yaml").write_text(text[:start] + text[end:])
    scanned = scan([tmp_path / "x.yaml"], ["PRX003"])
    assert scanned.findings == [], [f.message for f in scanned.findings]
    # the status holds every spec entry: an operator without one of them still differs
    stale = (tmp_path / "x.yaml").read_text().replace("value: .cluster.local,.corp.example.com,",
                                                      "value: .cluster.local,")
    (tmp_path / "x.yaml").write_text(stale)
    (finding,) = scan([tmp_path / "x.yaml"], ["PRX003"]).findings
    assert "lacks .corp.example.com" in " ".join(finding.evidence)
    assert any("cannot be computed" in e and "Network" in e for e in finding.evidence)
