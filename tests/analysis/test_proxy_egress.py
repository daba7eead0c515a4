"""The proxy endpoint under egress NetworkPolicy: the proxy model and the reachability
graph answer together (issue 13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hcpscan.analysis.proxy import effective_proxies
from hcpscan.analysis.proxy_egress import ALLOWED, BLOCKED, UNKNOWN, proxy_egress, proxy_endpoints
from hcpscan.analysis.reachability.graph import ReachabilityGraph
from hcpscan.inventory import Inventory
from hcpscan.sources.loader import load_paths

WORKLOAD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app, namespace: team}}
spec:
  selector: {{matchLabels: {{app: app}}}}
  template:
    metadata: {{labels: {{app: app}}}}
    spec:
      containers:
      - name: app
        image: app:1
        env:
        - {{name: HTTPS_PROXY, value: "{proxy}"}}
"""
# egress as ordinary hardening allows it: DNS, web and the API server, not the proxy port
EGRESS = """\
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {{name: egress, namespace: team}}
spec:
  podSelector: {{}}
  policyTypes: [Egress]
  egress:
  - ports: [{{port: 53, protocol: UDP}}, {{port: 53, protocol: TCP}}, {{port: 80}}, {{port: 443}},
            {{port: 6443}}]
  - to: [{{ipBlock: {{cidr: "{proxy_cidr}"}}}}]
    ports: [{{port: 3128}}]
"""


def _judge(tmp_path: Path, proxy: str, proxy_cidr: str | None,
           configured: dict[str, list[str]] | None = None):
    text = WORKLOAD.format(proxy=proxy) + (EGRESS.format(proxy_cidr=proxy_cidr)
                                           if proxy_cidr is not None else "")
    (tmp_path / "in.yaml").write_text(text)
    inventory = Inventory(load_paths([str(tmp_path / "in.yaml")]).objects)
    (consumer,) = [c for c in effective_proxies(inventory) if c.object.kind == "Deployment"]
    (endpoint,) = proxy_endpoints(consumer)
    graph = ReachabilityGraph(inventory)
    return proxy_egress(graph, "management:team/app[Deployment]", endpoint, configured or {})


def test_proxy_port_not_in_egress_is_blocked(tmp_path: Path) -> None:
    found = _judge(tmp_path, "http://10.20.0.5:3128", "192.0.2.0/24")
    assert found.verdict == BLOCKED and "10.20.0.5/32" in found.reason
    assert any("NetworkPolicy team/egress" in e for e in found.evidence)


def test_proxy_ip_inside_the_allowed_block_passes(tmp_path: Path) -> None:
    assert _judge(tmp_path, "http://10.20.0.5:3128", "10.20.0.0/24").verdict == ALLOWED


def test_no_egress_policy_means_allowed(tmp_path: Path) -> None:
    found = _judge(tmp_path, "http://proxy.corp.example.com:3128", None)
    assert found.verdict == ALLOWED and "no NetworkPolicy" in found.reason


def test_a_host_name_needs_its_addresses_unless_the_answer_is_the_same_for_all(tmp_path: Path):
    found = _judge(tmp_path, "http://proxy.corp.example.com:3128", "10.20.0.0/24")
    assert found.verdict == UNKNOWN and "inputs.proxy_addresses" in found.reason
    configured = {"proxy.corp.example.com": ["10.20.0.7"]}
    assert _judge(tmp_path, "http://proxy.corp.example.com:3128", "10.20.0.0/24",
                  configured).verdict == ALLOWED
    configured = {"proxy.corp.example.com": ["10.99.0.7"]}
    assert _judge(tmp_path, "http://proxy.corp.example.com:3128", "10.20.0.0/24",
                  configured).verdict == BLOCKED



def test_a_host_name_on_a_port_no_rule_opens_is_blocked_and_says_so(tmp_path: Path) -> None:
    """No address needed: egress on 8888 is open to nothing outside (the reason once lost
    its first half to a comment and read "outside address")."""
    found = _judge(tmp_path, "http://proxy.corp.example.com:8888", "10.20.0.0/24")
    assert found.verdict == BLOCKED and found.missing is None
    assert found.reason == "egress on TCP 8888 is allowed to no outside address"

def test_default_port_of_a_proxy_url(tmp_path: Path) -> None:
    """http://host has port 80, which the hardening allows to everyone."""
    found = _judge(tmp_path, "http://proxy.corp.example.com", "10.20.0.0/24")
    assert found.endpoint.port == 80 and found.verdict == ALLOWED


@pytest.mark.parametrize("proxy", ["http://squid.proxy.svc:3128", "http://squid:3128"])
def test_in_cluster_proxies_are_declared_not_judged(tmp_path: Path, proxy: str) -> None:
    found = _judge(tmp_path, proxy, "10.20.0.0/24")
    assert found.verdict == UNKNOWN and "in-cluster" in found.reason


@pytest.mark.parametrize("proxy", ["http://jdoe@corp.example.com:Pw@10.20.0.5:3128",
                                   "http://u:Pw@１０.２０.０.５:3128"])
def test_userinfo_with_at_and_full_width_hosts_are_still_judged(tmp_path: Path, proxy) -> None:
    """The last '@' ends the userinfo, and a host NFKC changes (which Python's urlsplit
    refuses, quoting the netloc and its password) is read as Go dials it."""
    found = _judge(tmp_path, proxy, "192.0.2.0/24")
    assert str(found.endpoint) == "10.20.0.5:3128" and found.verdict == BLOCKED
