"""clusterctl templates: a field whose whole value is a `${VAR}` placeholder is a template
variable to render, not a type error; a string holding `${` is a string."""

from __future__ import annotations

from pathlib import Path

import pytest

from hcpscan.findings.model import Status
from hcpscan.inventory import Inventory
from hcpscan.inventory.placeholders import template_variable
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES
from tests.rules.harness import scan

TEMPLATE = FIXTURES / "clusterctl" / "cluster-template-proxy-crs.yaml"


@pytest.mark.parametrize("text, variable", [
    ("${CNI_RESOURCES}", "CNI_RESOURCES"), ("$CNI_RESOURCES", "CNI_RESOURCES"),
    ("${POD_CIDR:=192.168.0.0/16}", "POD_CIDR"), ("${NO_PROXY:-localhost,.svc}", "NO_PROXY"),
    ("${NO_PROXY-}", "NO_PROXY"), ("${EXTRA:+yes}", "EXTRA"), ("${NAME?required}", "NAME"),
    ("${VERSION/#v/}", "VERSION"), ("${NAME//_/-}", "NAME"), ("${NAME,,}", "NAME"),
    ("${#NAME}", "NAME"), ("${NAME:0:8}", "NAME"), ("${A:=${B}}", "A"), (" ${FILES} ", "FILES")])
def test_a_whole_envsubst_placeholder_names_its_variable(text, variable):
    assert template_variable(text) == variable


@pytest.mark.parametrize("text", [
    "cni-${CLUSTER_NAME}-crs-0", "${A}${B}", "${A}-x", "${1A}", "${A!}", "${}", "${A",
    "$(HTTP_PROXY)", "{{ .Values.proxy }}", "plain", None, 3, ["${A}"]])
def test_anything_else_is_no_placeholder(text):
    assert template_variable(text) is None


def _inventory(path: Path) -> Inventory:
    result = load_paths([str(path)])
    return Inventory(result.objects, result.diagnostics, result.skipped)


def test_a_placeholder_where_a_mapping_belongs_is_a_warning_and_the_object_kept():
    inventory = _inventory(TEMPLATE)
    (warning,) = inventory.diagnostics
    assert (warning.severity, Path(warning.path).name, warning.line) == \
        ("warning", TEMPLATE.name, 16)
    assert "ConfigMap cni-${CLUSTER_NAME}-crs-0 data is the unrendered template variable " \
           "${CNI_RESOURCES}" in warning.message
    assert f"clusterctl generate cluster NAME --from {TEMPLATE}" in warning.hint
    crs = inventory.get("ConfigMap", "", "cni-${CLUSTER_NAME}-crs-0")
    assert crs is not None and "data" not in crs.body
    assert [(u.path, u.variable) for u in inventory.unrendered_in(crs)] == \
        [(("data",), "CNI_RESOURCES")]
    # strings holding ${...} are strings: read as written, nothing said
    proxy = inventory.get("ConfigMap", "", "${CLUSTER_NAME}-proxy")
    assert proxy is not None and inventory.unrendered_in(proxy) == ()
    assert proxy.body["data"]["NO_PROXY"] == "${NO_PROXY:-localhost,127.0.0.1,.svc}"


def test_the_rules_checking_it_are_not_evaluable_for_it_and_judge_the_rest():
    report = scan([TEMPLATE], ["PRX008"])
    (result,) = report.results
    assert result.status is Status.FAIL  # the other ConfigMap's credentials
    assert [f.object.name for f in report.findings] == ["${CLUSTER_NAME}-proxy"]
    assert "also not evaluable for ConfigMap cni-${CLUSTER_NAME}-crs-0: data is " \
           "${CNI_RESOURCES}, a template variable clusterctl has not rendered" in result.reason


def test_only_the_placeholder_object_it_is_not_evaluable_not_passed(tmp_path):
    path = tmp_path / "cluster-template.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: proxy\n"
                    "data: ${PROXY_SETTINGS}\n")
    (result,) = scan([path], ["PRX008"]).results
    assert result.status is Status.NOT_EVALUABLE
    assert "ConfigMap proxy: data is ${PROXY_SETTINGS}" in result.reason


def test_a_value_of_the_wrong_type_that_is_no_placeholder_is_still_an_error(tmp_path):
    path = tmp_path / "cm.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
                    "data: cni-${CLUSTER_NAME}\n---\napiVersion: v1\nkind: ConfigMap\n"
                    "metadata:\n  name: b\ndata: ${B}\nbinaryData: [x]\n")
    inventory = _inventory(path)
    assert inventory.objects == []
    assert [(d.severity, d.line, d.message.split(":")[0]) for d in inventory.diagnostics] == [
        ("error", 5, "ConfigMap a is left out"),
        ("warning", 11, "ConfigMap b data is the unrendered template variable ${B} "
                        "(clusterctl/envsubst), where the API wants a mapping"),
        ("error", 12, "ConfigMap b is left out")]


def test_a_scan_of_an_unrendered_template_is_no_input_error(run_cli, tmp_path):
    """Exit 2 is for input that could not be read; a template variable is read (and said)."""
    path = tmp_path / "cluster-template.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cni-${CLUSTER_NAME}\n"
                    "data: ${CNI_RESOURCES}\n")
    result = run_cli("scan", str(path), "--no-config")
    assert result.code == 0, result.err
    assert f"{path}:5:1: input [warning] ConfigMap cni-${{CLUSTER_NAME}} data is the unrendered " \
           "template variable ${CNI_RESOURCES}" in result.out + result.err


CAPI_TEMPLATE = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: ${CLUSTER_NAME}
  namespace: ${NAMESPACE}
spec:
  clusterNetwork:
    pods:
      cidrBlocks: ${POD_CIDRS}
    services:
      cidrBlocks: ["10.96.0.0/12"]
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: ${CLUSTER_NAME}-md-0
spec:
  template:
    spec:
      files:
      - path: /etc/systemd/system/containerd.service.d/http-proxy.conf
        owner: root:root
        permissions: "0644"
        content: |
          [Service]
          Environment="HTTP_PROXY=${HTTP_PROXY}"
          Environment="HTTPS_PROXY=http://${PROXY_HOST}:3128"
          Environment="NO_PROXY=${NO_PROXY}"
"""


def test_a_proxy_value_holding_a_placeholder_is_unknown_not_judged(tmp_path):
    """clusterctl renders NO_PROXY=${NO_PROXY} when it generates the cluster: the value is
    unknown until then. PRX005 does not say it misses .svc, and PRX013 never quotes a
    host it made up by lower-casing the placeholder."""
    (tmp_path / "cluster-template.yaml").write_text(CAPI_TEMPLATE)
    for rule in ("PRX005", "PRX013"):
        report = scan([tmp_path], [rule])
        assert report.findings == [], [f.message for f in report.findings]
        [result] = report.results
        assert result.status is Status.NOT_EVALUABLE, result.reason
        assert "unrendered template variable" in result.reason
        assert "clusterctl generate cluster" in result.reason
        assert "${http_proxy}" not in result.reason
    reason = scan([tmp_path], ["PRX013"]).results[0].reason
    assert "PROXY_HOST" in reason and "HTTP_PROXY" in reason
