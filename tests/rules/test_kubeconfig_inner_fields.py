"""Findings on a kubeconfig kept in a Secret key name the field inside it: the cluster entry
the klusterlet uses (OCM001), the entry's proxy-url (PRX013)."""

from __future__ import annotations

import textwrap

from tests.rules.harness import scan
from tests.rules.ocm_inputs import MANAGEMENT_PROXY, agent_secret

PROXY = MANAGEMENT_PROXY


def bootstrap(clusters: str, current: str) -> str:
    return agent_secret(f"""\
apiVersion: v1
kind: Config
clusters:
{textwrap.dedent(clusters)}contexts:
- name: other-context
  context: {{cluster: other, user: default-auth}}
- name: default-context
  context: {{cluster: default-cluster, user: default-auth}}
current-context: {current}
""")


TWO = """\
- name: other
  cluster:
    server: https://api.hub.example.com:6443
    proxy-url: http://proxy.corp.example.com:3128
- name: default-cluster
  cluster:
    server: https://api.hub.example.com:6443
"""


def test_ocm001_names_the_current_contexts_entry(tmp_path):
    (tmp_path / "m.yaml").write_text(PROXY + "---\n" + bootstrap(TWO, "default-context"))
    (finding,) = scan([tmp_path], ["OCM001"]).findings
    assert ("Secret open-cluster-management-agent/bootstrap-hub-kubeconfig cluster "
            "default-cluster (clusters[1], the current context's) has no proxy-url"
            in finding.evidence), finding.evidence


def test_ocm001_quiet_when_the_current_entry_has_it(tmp_path):
    (tmp_path / "m.yaml").write_text(PROXY + "---\n" + bootstrap(TWO, "other-context"))
    assert scan([tmp_path], ["OCM001"]).findings == []


def test_prx013_names_the_proxy_url_inside_the_kubeconfig(tmp_path):
    one = """\
    - name: default-cluster
      cluster:
        server: https://api.hub.example.com:6443
        proxy-url: proxy.corp.example.com:3128
    """
    (tmp_path / "m.yaml").write_text(bootstrap(one, "default-context"))
    (finding,) = scan([tmp_path], ["PRX013"]).findings
    assert finding.message == ("Secret open-cluster-management-agent/bootstrap-hub-kubeconfig: "
                               "clusters[0].cluster.proxy-url has no scheme (expected http:// or "
                               "https:// or socks5://host:port)")
    assert finding.location.line == 6  # the finding stays on the Secret key
