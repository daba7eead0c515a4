"""``hcpscan connectivity --explain`` beyond the oracle: a HyperShift control-plane
namespace, EgressFirewall (which netpol-analyzer does not read), agreement with the
connection list, and the refusals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hcpscan.model.ports import ConnectionSet, PortSet

from .conftest import CPO_RENDERED, FIXTURES

HCP = [str(CPO_RENDERED), str(FIXTURES / "hcp-nodeport")]
IGNITION = "hcp-namespace/ignition-server[Deployment]"
OUTSIDE = "0.0.0.0-255.255.255.255[External]"


def _block(text: str, source: str, destination: str) -> str:
    """The explanation of one pair (up to the next pair or section)."""
    head = f"Connections between {source} => {destination}:\n"
    assert head in text, f"no block for {source} => {destination}"
    return re.split(r"\n-{160}\n|\n\n#", text.split(head, 1)[1])[0]


def test_worker_addresses_reach_ignition_9090_through_the_nodeport_policy(run_cli):
    """Workers fetch their ignition from ignition-server on 9090: HyperShift's
    nodeport-ignition policy is what lets any address in, and the explanation says so."""
    result = run_cli("connectivity", "--no-progress", *HCP, "--explain",
                     "--focus-workload", "hcp-namespace/ignition-server", "--focus-conn", "tcp-9090")
    assert result.code == 0, result.err
    block = _block(result.out, OUTSIDE, IGNITION)
    assert "Allowed TCP:[9090] due to the following policies and rules:" in block
    assert "\t\tEgress (Allowed) due to the system default (Allow all)" in block
    assert "\t\t\tNetworkPolicy 'hcp-namespace/nodeport-ignition' allows connections by " \
           "Ingress rule #1" in block
    assert "Denied" not in block


def test_other_ports_of_ignition_name_every_policy_that_denies_them(run_cli):
    result = run_cli("connectivity", "--no-progress", *HCP, "--explain", "--explain-only", "deny",
                     "--focus-workload", "hcp-namespace/ignition-server",
                     "--focus-direction", "ingress")
    assert result.code == 0, result.err
    block = _block(result.out, OUTSIDE, IGNITION)
    assert "Allowed connections:" not in block  # --explain-only deny
    assert "Denied TCP:[1-9089,9091-65535], UDP, SCTP due to the following policies and rules:" \
        in block
    assert "\t\t\tNetworkPolicy list:" in block
    for policy in ("same-namespace", "openshift-ingress", "openshift-monitoring"):
        assert f"NetworkPolicy 'hcp-namespace/{policy}' selects {IGNITION}, but {OUTSIDE} is " \
               "not allowed by any Ingress rule" in block
    assert f"NetworkPolicy 'hcp-namespace/nodeport-ignition' selects {IGNITION}, and Ingress " \
           f"rule #1 selects {OUTSIDE}, but the protocols and ports do not match" in block


def _ports(text: str) -> PortSet:
    return PortSet.of(*((int(a), int(b or a)) for a, _, b in (r.partition("-") for r in text.split(","))))


def _explained(text: str) -> ConnectionSet:
    """``TCP:[80,8000-8090], UDP`` as a connection set."""
    out = ConnectionSet.none()
    for part in text.split(", "):
        proto, _, ports = part.partition(":")
        out = out.union(ConnectionSet.of(proto, _ports(ports.strip("[]")) if ports else PortSet.all()))
    return out


def _listed(text: str) -> ConnectionSet:
    """``TCP 80,443,UDP 53`` or ``All Connections`` as a connection set."""
    if text == "All Connections":
        return ConnectionSet.all()
    out = ConnectionSet.none()
    for proto, ports in re.findall(r"(TCP|UDP|SCTP) ([0-9,-]+?)(?=,[A-Z]|$)", text):
        out = out.union(ConnectionSet.of(proto, _ports(ports)))
    return out


def test_every_pair_is_explained_as_allowed_on_exactly_the_listed_connections(run_cli):
    """The explanation and the connection list come from the same evaluation."""
    listed = run_cli("connectivity", "--no-progress", *HCP)
    explained = run_cli("connectivity", "--no-progress", *HCP, "--explain")
    assert listed.code == explained.code == 0
    allowed: dict[tuple[str, str], ConnectionSet] = {}
    pair = ("", "")
    for line in explained.out.splitlines():
        if line.startswith("Connections between "):
            pair = tuple(line[len("Connections between "):-1].split(" => "))  # type: ignore[assignment]
        elif " => " in line and not line.startswith(("\t", "#", "Connections")):
            allowed[tuple(line.split(" => "))] = ConnectionSet.all()  # type: ignore[index]
        elif line.startswith("\tAllowed "):
            conns = _explained(line.split(" due to ")[0][len("\tAllowed "):])
            allowed[pair] = allowed.get(pair, ConnectionSet.none()).union(conns)
    lines = listed.out.splitlines()
    assert len(lines) > 100
    for line in lines:
        src, rest = line.split(" => ")
        dst, conns = rest.split(" : ")
        assert allowed.pop((src, dst)) == _listed(conns), line
    assert not allowed  # nothing explained as allowed that the list leaves out


FIREWALLED = """\
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: shop, labels: {app: app}}
spec: {containers: [{name: c}]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: out, namespace: shop}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
  - to: [{ipBlock: {cidr: 203.0.113.0/24}}]
---
apiVersion: k8s.ovn.org/v1
kind: EgressFirewall
metadata: {name: default, namespace: shop}
spec:
  egress:
  - type: Allow
    to: {cidrSelector: 203.0.113.0/24}
    ports: [{protocol: TCP, port: 443}]
  - type: Deny
    to: {cidrSelector: 0.0.0.0/0}
"""


def test_an_egress_firewall_rule_is_named_beside_the_policy(run_cli, tmp_path: Path):
    (tmp_path / "in.yaml").write_text(FIREWALLED)
    result = run_cli("connectivity", "--no-progress", str(tmp_path), "--explain")
    assert result.code == 0, result.err
    block = _block(result.out, "shop/app[Pod]", "203.0.113.0-203.0.113.255[External]")
    allowed, denied = block.split("Denied connections:")
    assert "Allowed TCP:[443] due to the following policies and rules:" in allowed
    assert "\t\t\tEgressFirewall 'shop/default' allows connections by rule #1" in allowed
    assert "\t\t\tNetworkPolicy 'shop/out' allows connections by Egress rule #1" in allowed
    assert "Denied TCP:[1-442,444-65535], UDP, SCTP" in denied
    assert "\t\t\tEgressFirewall 'shop/default' denies connections by rule #2" in denied
    assert "Egress (Allowed) due to" not in block and "Egress (Denied) due to" not in block


@pytest.mark.parametrize(("extra", "message"), [
    (["--explain-only", "allow"], "--explain-only needs --explain"),
    (["--explain", "--format", "json"], "--explain explains the whole connection list as text"),
    (["--explain", "--to", "hcp-namespace/ignition-server"], "leave out --to"),
])
def test_explain_refuses_what_it_does_not_do(run_cli, extra, message):
    result = run_cli("connectivity", "--no-progress", *HCP, *extra)
    assert result.code == 2 and result.out == ""
    assert message in result.err


def test_help_documents_explain(run_cli):
    result = run_cli("connectivity", "--help")
    assert result.code == 0
    assert "--explain" in result.out and "--explain-only {allow,deny}" in result.out
    assert "With --explain, say why instead" in result.out
