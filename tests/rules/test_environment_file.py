"""A drop-in's ``EnvironmentFile=`` read as systemd reads it (systemd.exec(5)): the file the
same bootstrap config writes, whose values win over ``Environment=`` whatever the order of
the lines; a file the input does not write leaves the unit not evaluable."""

from __future__ import annotations

import textwrap
from pathlib import Path

from hcpscan.analysis.proxy import effective_proxies
from hcpscan.analysis.proxy.settings import Source
from hcpscan.analysis.proxy.units import NodeFile, matching, unit_environment
from hcpscan.findings.model import Status
from hcpscan.inventory import Inventory
from hcpscan.sources.loader import load_paths
from tests.rules.harness import scan

VALUES = """\
apiVersion: v1
kind: Secret
metadata:
  name: mycluster-cluster-values
  namespace: org-acme
stringData:
  values: |
    cluster:
      proxy:
        http: http://192.168.52.220:3128
        https: http://192.168.52.220:3128
        noProxy: cluster.local,svc,127.0.0.1,localhost
---
"""


def _template(files: str) -> str:
    return VALUES + textwrap.dedent("""\
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
        kind: KubeadmConfigTemplate
        metadata:
          name: mycluster-md-0
          namespace: org-acme
          labels:
            cluster.x-k8s.io/cluster-name: mycluster
        spec:
          template:
            spec:
              files:
        """) + textwrap.indent(textwrap.dedent(files), " " * 6)


ENVIRONMENT = """\
- path: /etc/environment
  content: |
    HTTP_PROXY=http://192.168.52.220:3128
    HTTPS_PROXY=http://192.168.52.220:3128
    NO_PROXY=.svc,.cluster.local,127.0.0.1,localhost
"""


def _dropin(*lines: str) -> str:
    body = "".join(f"    {line}\n" for line in ("[Service]", *lines))
    return ("- path: /etc/systemd/system/containerd.service.d/http-proxy.conf\n"
            "  content: |\n" + body)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    return path


def test_a_dropin_reading_the_etc_environment_the_config_writes_sets_the_proxy(tmp_path):
    """hunt4 prx009-envfile-pass: PRX009 said the drop-in had no HTTP_PROXY."""
    path = _write(tmp_path, _template(ENVIRONMENT + _dropin("EnvironmentFile=/etc/environment")))
    report = scan([path], ["PRX009"])
    assert report.results[0].status is Status.PASS, [f.message for f in report.findings]
    # PRX005 sees the same unit: the drop-in is a proxy consumer with /etc/environment's values
    result = load_paths([str(path)])
    [unit] = [c for c in effective_proxies(Inventory(result.objects, result.diagnostics))
              if c.name.endswith("containerd.service.d/http-proxy.conf")]
    assert unit.https_proxy is not None and unit.https_proxy.value == "http://192.168.52.220:3128"
    assert "/etc/environment" in unit.https_proxy.source.field


def test_environment_file_values_win_over_environment_whatever_the_line_order():
    dropin = ('[Service]\nEnvironmentFile=-/etc/default/containerd\n'
              'Environment="HTTPS_PROXY=http://stale:3128" "NO_PROXY=localhost"\n')
    files = {"/etc/default/containerd": NodeFile('HTTPS_PROXY="http://proxy:3128"\n',
                                                 Source("file", "/etc/default/containerd"))}
    found = unit_environment([("/etc/systemd/system/containerd.service.d/p.conf", dropin,
                               Source("file", "p.conf"))],
                             lambda pattern: [(p, files[p]) for p in matching(files, pattern)])
    assert {k: v for k, (v, _) in found.environment.items()} == {
        "HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "localhost"}
    assert [path for path, _ in found.files] == ["/etc/default/containerd"]


def test_an_empty_environment_file_assignment_drops_the_files_named_before():
    first = "[Service]\nEnvironmentFile=/etc/environment\n"
    later = "[Service]\nEnvironmentFile=\nEnvironment=NO_PROXY=localhost\n"
    found = unit_environment([("a/containerd.service.d/10.conf", first, Source("f", "10")),
                              ("a/containerd.service.d/20.conf", later, Source("f", "20"))],
                             lambda pattern: [])
    assert found.unread == [] and found.files == []
    assert list(found.environment) == ["NO_PROXY"]


def test_an_environment_file_the_input_does_not_write_is_not_evaluable(tmp_path):
    path = _write(tmp_path, _template(_dropin("EnvironmentFile=-/etc/environment")))
    result = scan([path], ["PRX009"]).results[0]
    assert result.status is Status.NOT_EVALUABLE
    assert "EnvironmentFile=/etc/environment, which the input does not write" in result.reason
    assert "without HTTP_PROXY" not in result.reason


def test_an_environment_file_without_the_proxy_still_fails(tmp_path):
    env = "- path: /etc/default/containerd\n  content: |\n    NO_PROXY=.svc,localhost\n"
    path = _write(tmp_path, _template(env + _dropin("EnvironmentFile=/etc/default/containerd")))
    [finding] = scan([path], ["PRX009"]).findings
    assert "without HTTP_PROXY or HTTPS_PROXY" in finding.message


def test_a_proxy_exported_only_to_login_shells_still_needs_the_dropin():
    """kubeadm#687 on Cluster API (hunt5 c15): /etc/profile.d exports say the cluster uses a
    proxy (PRX009 was not evaluable); containerd never reads them, so the drop-in is due."""
    from tests.conftest import FIXTURES

    report = scan([FIXTURES / "rules" / "PRX009" / "fail" / "capi-profile-d-proxy.yaml"],
                  ["PRX009"])
    [finding] = report.findings
    assert "writes no /etc/systemd/system/containerd.service.d/http-proxy.conf" in finding.message
    evidence = " ".join(finding.evidence)
    assert "by KubeadmConfigTemplate default/wc2-md-0 file /etc/profile.d/proxy.sh" in evidence
    assert "login shells only" in evidence


def test_an_environment_file_wildcard_reads_the_files_it_matches_in_order(tmp_path):
    env = ("- path: /etc/proxy.d/20-proxy.env\n  content: |\n"
           "    HTTPS_PROXY=http://192.168.52.220:3128\n"
           "- path: /etc/proxy.d/10-old.env\n  content: |\n    HTTPS_PROXY=http://old:3128\n"
           "- path: /etc/proxy.d/sub/x.env\n  content: |\n    HTTPS_PROXY=http://sub:3128\n")
    path = _write(tmp_path, _template(env + _dropin("EnvironmentFile=/etc/proxy.d/*.env")))
    assert scan([path], ["PRX009"]).results[0].status is Status.PASS
    assert matching(["/etc/proxy.d/20-proxy.env", "/etc/proxy.d/10-old.env",
                     "/etc/proxy.d/sub/x.env"], "/etc/proxy.d/*.env") == [
        "/etc/proxy.d/10-old.env", "/etc/proxy.d/20-proxy.env"]
