"""`hcpscan connectivity --svg` on the bundled example: an HCP namespace, open within
itself, folds into a picture Graphviz lays out (it gave up after 120 s on ~1,900 edges)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import hcpscan.cli.connectivity_cmd as connectivity_cmd
import hcpscan.reporters.connectivity as reporter
from hcpscan.analysis.reachability.connlist import Connection
from hcpscan.model.ports import ConnectionSet

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "example"
NAMESPACE, = EXAMPLE.glob("must-gather.local.4242/*/namespaces/clusters-agent-prod")
EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)" \[label="([^"]*)"(.*)\]$', re.M)


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The dot text --svg hands to Graphviz, kept instead of drawn (no Graphviz needed)."""
    texts: list[str] = []
    monkeypatch.setattr(connectivity_cmd, "write_svg", lambda text, path: texts.append(text))
    return texts


def test_hcp_namespace_picture_folds_the_workloads_open_to_each_other(run_cli, drawn):
    listed = run_cli("connectivity", "--no-progress", str(NAMESPACE), "--format", "dot")
    assert len(EDGE.findall(listed.out)) > 1500  # the dot output keeps every edge
    result = run_cli("connectivity", "--no-progress", str(NAMESPACE), "--svg", "x.svg", "--full")
    assert result.code == 0, result.err
    edges = EDGE.findall(drawn[0])
    assert len(edges) < 60 and drawn[0].count("[label=") < 80
    group = next(src for src, dst, _, _ in edges if src == dst)  # one edge to itself
    assert group.endswith("(+39)") and "40 workloads connected alike" in drawn[0]
    # the exposed ports stand out: red, from outside, to the workloads they open
    red = {(src, dst, text) for src, dst, text, style in edges if "#d62728" in style}
    assert ("0.0.0.0-255.255.255.255[External]", "clusters-agent-prod/kube-apiserver[Deployment]",
            "TCP 6443,8091") in red
    assert ("{ingress-controller}", "clusters-agent-prod/metrics-proxy[Deployment]",
            "TCP 9443") in red
    assert "namespace clusters-agent-prod" in drawn[0]


def test_whole_example_picture_keeps_one_box_per_namespace(run_cli, drawn):
    result = run_cli("connectivity", "--no-progress", str(EXAMPLE), "--svg", "x.svg")
    assert result.code == 0, result.err
    assert len(EDGE.findall(drawn[0])) < 150
    for namespace in ("clusters-agent-prod", "clusters-aws-dev"):
        assert f'label="namespace {namespace}"' in drawn[0]
    # hypershift: no policy selects its operator, so it joins the namespaces open to everything
    assert re.search(r'"open" \[[^\]]*label="1 namespace, 1 workload\\nno policy restricts them:'
                     r'\\nopen to everything\\nhypershift"', drawn[0])


def test_a_large_list_is_drawn_as_an_overview_per_namespace(run_cli, drawn):
    """The whole example (89 workloads, 4,150 connections): one node per namespace, the
    workloads outside addresses and the ingress controller reach on their own, and one
    edge per pair of namespaces - a picture a person reads."""
    result = run_cli("connectivity", "--no-progress", str(EXAMPLE), "--svg", "x.svg")
    assert result.code == 0, result.err
    text = drawn[0]
    edges = EDGE.findall(text)
    assert 10 <= len(edges) <= 30
    red = {(src, dst, label) for src, dst, label, style in edges if "#d62728" in style}
    assert ("outside", "management|clusters-agent-prod/kube-apiserver[Deployment]",
            "TCP 6443,8091") in red
    assert ("outside", "open", "All Connections") in red
    assert r"44 workloads\nopen to each other: All Connections" in text
    # namespace to namespace: one edge each way at most
    pairs = [(s, d) for s, d, _, _ in edges if s.startswith("ns:") and d.startswith("ns:")]
    assert pairs and len(pairs) == len(set(pairs))
    # outside and the ingress controller stand in the first column, not inside a box
    assert re.search(r'subgraph sources \{ rank=min; "outside"', text)


def _conn(src: str, dst: str, port: int) -> Connection:
    return Connection("management", f"a/{src}[Pod]", f"a/{dst}[Pod]", ConnectionSet.port("TCP", port))


def test_workloads_fold_only_when_alike_each_other_included():
    # x, y, z open to each other on 80; w reaches them on 80 but nothing reaches w
    rows = [_conn(s, d, 80) for s in "xyz" for d in "xyz" if s != d]
    rows += [_conn("w", d, 80) for d in "xyz"]
    folded = reporter.list_dot(rows, compact=True)
    assert len(EDGE.findall(folded)) == 2 and "3 workloads connected alike" in folded
    assert len(EDGE.findall(reporter.list_dot(rows))) == len(rows)  # --format dot: all
    # z answers y on another port: x, y, z are no longer alike, nothing folds
    rows = [r for r in rows if (r.source, r.destination) != ("a/z[Pod]", "a/y[Pod]")]
    rows.append(_conn("z", "y", 443))
    assert len(EDGE.findall(reporter.list_dot(rows, compact=True))) == len(rows)


def test_graphviz_timing_out_says_so_and_what_to_draw_instead(run_cli, monkeypatch, tmp_path):
    def slow(*args, **kwargs):
        raise subprocess.TimeoutExpired(["dot"], 120)
    monkeypatch.setattr(reporter.shutil, "which", lambda name: "/usr/bin/dot")
    monkeypatch.setattr(reporter.subprocess, "run", slow)
    result = run_cli("connectivity", "--no-progress", str(NAMESPACE), "--svg",
                     str(tmp_path / "x.svg"))
    assert result.code == 2
    assert "did not finish drawing within 120 seconds" in result.err
    assert "--focus-workload" in result.err and "writable" not in result.err
