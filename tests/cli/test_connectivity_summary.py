"""`hcpscan connectivity` at a terminal: a summary read in one screen; the list on request."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from hcpscan.analysis.reachability.connlist import Connection
from hcpscan.analysis.reachability.summary import summarize
from hcpscan.model.ports import ConnectionSet
from hcpscan.reporters.connectivity import fit, summary_text

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "example"


def _summary_at(columns: str, monkeypatch) -> str:
    from hcpscan.cli.main import main

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setenv("COLUMNS", columns)
    assert main(["connectivity", "--no-progress", str(EXAMPLE), "--summary"]) == 0
    return out.getvalue()


def test_summary_of_the_example_fits_a_screen_at_80_and_120_columns(run_cli, monkeypatch):
    full = run_cli("connectivity", "--no-progress", str(EXAMPLE), "--full")
    assert len(full.out.splitlines()) > 4000
    for columns in ("80", "120"):
        text = _summary_at(columns, monkeypatch)
        lines = text.splitlines()
        assert len(lines) <= 50
        assert max(len(line) for line in lines) <= int(columns)
    assert text.startswith("4,150 allowed connections between 89 workloads in 3 namespaces.")
    # the namespace no policy restricts is named first; the exposed ports stand out
    assert "hypershift" in text.split("Open to everything")[1].split("\n\n")[0]
    exposed = text.split("Open to outside addresses, besides those:\n")[1].split("\n\n")[0]
    assert ["clusters-agent-prod/kube-apiserver", "TCP", "6443,8091"] in [
        e.split() for e in exposed.splitlines()]
    assert "hypershift/operator" not in exposed
    assert "  clusters-agent-prod — 44 workloads" in text
    assert "    within:  every pair: All Connections" in text


def test_piped_output_stays_the_full_list(run_cli):
    """Scripts and the netpol-analyzer comparisons read the list: a pipe keeps it."""
    result = run_cli("connectivity", "--no-progress", str(EXAMPLE))
    assert result.out.splitlines()[0].startswith("0.0.0.0-255.255.255.255[External] => ")


def test_summary_refuses_what_it_cannot_show(run_cli):
    result = run_cli("connectivity", "--no-progress", str(EXAMPLE), "--summary", "--format", "json")
    assert result.code == 2 and "--summary" in result.err


def _c(src: str, dst: str, conns: ConnectionSet) -> Connection:
    return Connection("management", src, dst, conns)


def test_a_namespace_without_policies_folds_into_one_line():
    everything = ConnectionSet.all()
    rows = [_c("0.0.0.0-255.255.255.255[External]", f"open/w{i}[Pod]", everything) for i in range(30)]
    rows += [_c(f"open/w{i}[Pod]", "0.0.0.0-255.255.255.255[External]", everything) for i in range(30)]
    rows += [_c(f"open/w{i}[Pod]", f"open/w{j}[Pod]", everything)
             for i in range(30) for j in range(30) if i != j]
    lines = summary_text(summarize(rows), 80)
    assert len(lines) < 10 and "  open" in lines
    assert not any("w17" in line for line in lines)


def test_counts_are_exact():
    tcp80 = ConnectionSet.port("TCP", 80)
    rows = [_c("a/x[Pod]", "a/y[Pod]", tcp80), _c("a/y[Pod]", "a/x[Pod]", tcp80),
            _c("a/x[Pod]", "b/z[Pod]", ConnectionSet.port("TCP", 443)),
            _c("a/y[Pod]", "b/z[Pod]", tcp80),
            _c("10.0.0.0-10.0.0.255[External]", "b/z[Pod]", ConnectionSet.port("TCP", 8443)),
            _c("{ingress-controller}", "a/y[Pod]", tcp80)]
    summary = summarize(rows, ["a/x[Pod]", "a/y[Pod]", "b/z[Pod]", "c/idle[Pod]"])
    spaces = {ns.namespace: ns for ns in summary.namespaces}
    assert set(spaces) == {"a", "b", "c"} and len(spaces["c"].workloads) == 1
    assert spaces["a"].open_within and str(spaces["a"].within.connections) == "TCP 80"
    to_b = spaces["a"].to_namespaces["b"]
    assert to_b.pairs == 2 and not to_b.alike and str(to_b.connections) == "TCP 80,443"
    assert spaces["b"].from_namespaces["a"].workloads == {"b/z[Pod]"}
    (exposed,) = summary.exposed
    assert exposed.workload == "b/z[Pod]" and exposed.sources == ("10.0.0.0-10.0.0.255",)
    text = "\n".join(summary_text(summary, 80))
    assert "b/z[Pod]  TCP 8443 from 10.0.0.0-10.0.0.255" in text
    assert "to:      b: 2 (up to TCP 80,443)" in text


def test_long_names_are_cut_in_the_middle_never_past_the_width():
    name = "clusters-a-very-long-hosted-cluster-name/ignition-server-proxy[Deployment]"
    assert fit(name, 30) == name[:15] + "…" + name[-14:] and len(fit(name, 30)) == 30
    rows = [_c("0.0.0.0-255.255.255.255[External]", name, ConnectionSet.port("TCP", 8443))]
    for width in (40, 80):
        assert all(len(line) <= width for line in summary_text(summarize(rows), width))


def test_only_a_namespace_open_to_every_address_and_workload_folds_as_open():
    """A policy admitting one ipBlock (10.0.0.0/8, every port) or only some peers is a
    restriction: its namespace must not be listed as "open to everything"."""
    everything = ConnectionSet.all()
    rows = [_c(f"{r}[External]", "other/cli[Pod]", everything)
            for r in ("0.0.0.0-9.255.255.255", "10.0.0.0-10.255.255.255", "11.0.0.0-255.255.255.255")]
    rows += [_c("10.0.0.0-10.255.255.255[External]", "shop/web[Pod]", everything),
             _c("other/cli[Pod]", "0.0.0.0-255.255.255.255[External]", everything),
             _c("shop/web[Pod]", "0.0.0.0-255.255.255.255[External]", everything),
             _c("shop/web[Pod]", "other/cli[Pod]", everything)]
    spaces = {ns.namespace: ns for ns in summarize(rows).namespaces}
    assert spaces["other"].unrestricted and not spaces["shop"].unrestricted
    text = "\n".join(summary_text(summarize(rows), 80))
    assert text.split("Open to everything")[1].split("\n\n")[0].splitlines()[-1] == "  other"
    # every address, but not from the other namespace's workload: restricted too
    rows[3] = _c("0.0.0.0-255.255.255.255[External]", "shop/web[Pod]", everything)
    assert not {ns.namespace: ns for ns in summarize(rows).namespaces}["shop"].unrestricted
    rows.append(_c("other/cli[Pod]", "shop/web[Pod]", everything))
    assert {ns.namespace: ns for ns in summarize(rows).namespaces}["shop"].unrestricted
