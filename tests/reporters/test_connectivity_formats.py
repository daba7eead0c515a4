"""The connection list's csv, Markdown and dot forms (hcpscan/reporters/connectivity.py)."""

from __future__ import annotations

from hcpscan.analysis.reachability.connlist import Connection
from hcpscan.model.ports import ConnectionSet
from hcpscan.reporters.connectivity import list_csv, list_dot, list_md

TCP_80 = ConnectionSet.port("TCP", 80)


def _conn(src: str, dst: str, conns: ConnectionSet = TCP_80, cluster: str = "management") -> Connection:
    return Connection(cluster, src, dst, conns)


def test_csv_quotes_connection_lists_and_md_escapes_pipes():
    rows = [_conn("a/x[Pod]", "b/y[Pod]", ConnectionSet.port("TCP", 80) | ConnectionSet.port("UDP", 53))]
    assert list_csv(rows) == 'src,dst,conn\na/x[Pod],b/y[Pod],"TCP 80,UDP 53"\n'
    assert list_md(rows).splitlines()[2] == "| a/x[Pod] | b/y[Pod] | TCP 80,UDP 53 |"
    assert list_csv(rows, pairs_only=True) == "src,dst\na/x[Pod],b/y[Pod]\n"


def test_several_clusters_get_a_cluster_column():
    rows = [_conn("a/x[Pod]", "a/y[Pod]"), _conn("a/x[Pod]", "a/y[Pod]", cluster="hostedcluster-1")]
    assert list_csv(rows).splitlines()[0] == "cluster,src,dst,conn"


def test_workloads_connected_alike_share_one_node_and_outside_stands_out():
    rows = [_conn(f"a/w{i}[Deployment]", "b/api[Deployment]") for i in range(3)]
    rows.append(_conn("0.0.0.0-255.255.255.255[External]", "b/api[Deployment]"))
    dot = list_dot(rows)
    assert "3 workloads connected alike" in dot
    edges = [line for line in dot.splitlines() if " -> " in line]
    assert len(edges) == 2
    outside = next(e for e in edges if "External" in e)
    assert 'color="#d62728"' in outside and "penwidth" in outside
    assert "subgraph cluster_" in dot and "namespace b" in dot
