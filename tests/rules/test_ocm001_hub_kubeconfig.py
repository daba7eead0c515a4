"""OCM001 judges the hub kubeconfig the klusterlet works with after registration, and once
per root cause: while the bootstrap Secret it is generated from is there, only that."""

from __future__ import annotations

import textwrap

from hcpscan.findings.model import Status
from tests.rules.harness import scan
from tests.rules.ocm_inputs import MANAGEMENT_PROXY, agent_secret

PROXY = MANAGEMENT_PROXY


def secret(name: str, proxy_url: str = "") -> str:
    extra = f"\n    proxy-url: {proxy_url}" if proxy_url else ""
    return agent_secret(f"""\
apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster:
    server: https://api.hub.example.com:6443{extra}
contexts:
- name: hub
  context: {{cluster: hub, user: agent}}
current-context: hub
""", name)


def run(tmp_path, *docs):
    (tmp_path / "input.yaml").write_text("---\n".join(textwrap.dedent(d) for d in docs))
    report = scan([tmp_path], ["OCM001"])
    return report, report.results[0]


def test_the_hub_kubeconfig_alone_is_judged(tmp_path):
    report, result = run(tmp_path, PROXY, secret("hub-kubeconfig-secret"))
    assert result.status is Status.FAIL
    assert [f.object.name for f in report.findings] == ["hub-kubeconfig-secret"]


def test_both_without_proxy_url_give_one_finding_at_the_bootstrap(tmp_path):
    report, result = run(tmp_path, PROXY, secret("bootstrap-hub-kubeconfig"),
                         secret("hub-kubeconfig-secret"))
    assert [f.object.name for f in report.findings] == ["bootstrap-hub-kubeconfig"]
    assert result.objects_checked == 1


def test_a_hub_kubeconfig_beside_a_good_bootstrap_is_left_to_ocm003(tmp_path):
    good = "http://proxy.corp.example.com:3128"
    report, result = run(tmp_path, PROXY, secret("bootstrap-hub-kubeconfig", good),
                         secret("hub-kubeconfig-secret"))
    assert report.findings == [] and result.status is Status.PASS
    both = scan([tmp_path], ["OCM003"])
    assert [f.object.name for f in both.findings] == ["hub-kubeconfig-secret"]
