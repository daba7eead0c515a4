"""Every case of the extended netpol-analyzer conformance set (``../shared/conformance/
netpol-extended/``), through the hcpscan mode that matches the flags the upstream test used.

A case is compared line for line as a set (blank lines and hcpscan's own ``#`` caveat
lines aside): the connection sets must be the expected ones. Every mode and feature is
supported, secondary networks in explain mode included; DEVIATIONS are where hcpscan
follows Kubernetes, not the oracle, each with its reason.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import require

from .conftest import SHARED

EXTENDED = SHARED / "conformance" / "netpol-extended"
CASES = sorted(p for p in EXTENDED.glob("*/*") if (p / "case.json").is_file())


def _meta(case: Path) -> dict:
    return json.loads((case / "case.json").read_text())


# Cases where hcpscan follows Kubernetes and the oracle does not (or the oracle leaves out
# what decided): case id -> (class, reason). docs/connectivity-fidelity.md lists each class
# with its reason; the test below holds every case to exactly its class's difference. The
# ids of the other half of netpol-analyzer's suite that fall into a class are listed too,
# so that those cases, when present, are held to the same.
UNROUTED_PORT = "unrouted-port"  # a backend names a Service port the Service lacks
UNDECLARED_PORT = "undeclared-port"  # a Service sends to a port the pod does not declare
NAMES_DENIER = "names-denier"  # the oracle's explanation omits the policy that denies
DEVIATIONS = {
    "diff_between_k8s_ingress_test_new_and_k8s_ingress_test": (UNROUTED_PORT,
        "the new Ingress backend names Service port 8080, but Service default/unicorn has only "
        "port 5000 (targetPort 8080): Kubernetes routes nothing there; netpol-analyzer matches "
        "the number against the targetPort and lists {ingress-controller} => unicorn : TCP 8080"),
    "k8s_ingress_test_new_exposure_output": (UNROUTED_PORT,
        "the same input with --exposure: the Ingress backend names Service port 8080, which "
        "Service default/unicorn does not have (its port is 5000, targetPort 8080), so "
        "Kubernetes routes nothing; the exposure section is the oracle's"),
    "k8s_ingress_test_new_explain_output": (UNROUTED_PORT,
        "the same Ingress and Service: netpol-analyzer explains {ingress-controller} => unicorn "
        "as allowed on TCP 8080; Kubernetes routes nothing there, so hcpscan has no such pair"),
    "onlineboutique_workloads_with_ingress_explain_output": (UNROUTED_PORT,
        "the Ingress names port 8080 of Service default/frontend-external, which has only port "
        "80 (targetPort 8080): no {ingress-controller} => frontend pair"),
    "diff_between_onlineboutique_workloads_with_ingress_and_onlineboutique_workloads": (
        UNROUTED_PORT, "the same Ingress: the diff adds no {ingress-controller} => frontend line"),
    "udn_with_ingress_controller_two_pods_connlist_output": (UNDECLARED_PORT,
        "Service green/app-service sends 8000 and 8090 to both pods it selects; db declares "
        "neither container port, but a container port list opens and closes nothing, and the "
        "router reaches a primary UDN's pods through the Service (OVN-Kubernetes); "
        "netpol-analyzer keeps only declared TCP ports"),
    "exposure_test_with_anp_4_entire_cluster_example_explain_exposure_output": (NAMES_DENIER,
        "between workload-a and workload-b all but TCP 80 is denied (the oracle's own list of "
        "this input allows only TCP 80) by NetworkPolicy hello-world/deny-all-app-a, which "
        "selects workload-a in both directions with no rules; the oracle's explanation of that "
        "denied group names no denying direction at all (only the other, allowed one), hcpscan "
        "names that policy"),
}


def missing_feature(meta: dict) -> str | None:
    """Why this case is not compared with the oracle as it is (None: it is)."""
    found = DEVIATIONS.get(meta["id"])
    return found[1] if found else None


def hcpscan_args(case: Path, meta: dict) -> list[str]:
    """The hcpscan command line for the upstream test's flags."""
    if meta["mode"] == "diff":
        fmt = ["--format", "csv"] if meta["expected"].endswith(".csv") else []  # no .txt upstream
        return ["connectivity", "--no-progress", "diff", str(case / meta["inputs"]["old"]),
                str(case / meta["inputs"]["new"]), *fmt]
    args = ["connectivity", "--no-progress", str(case / meta["inputs"]["dir"])]
    if meta["focus_workloads"]:
        args += ["--focus-workload", ",".join(meta["focus_workloads"])]
    if meta["focus_workload_peers"]:
        args += ["--focus-workload-peer", ",".join(meta["focus_workload_peers"])]
    if meta["focus_direction"]:
        args += ["--focus-direction", meta["focus_direction"]]
    if meta["focus_conn"]:
        args += ["--focus-conn", meta["focus_conn"]]
    if meta["exposure"]:
        args += ["--exposure"]
    if meta["explain"]:
        args += ["--explain"] + (["--explain-only", meta["explain_only"]] if meta["explain_only"] else [])
    # multiple_networks needs no flag: hcpscan always evaluates primary (C)UDNs
    return args


def _param(case: Path):
    meta = _meta(case)
    return pytest.param(case, id=f"{meta['category']}/{case.name}")


SUPPORTED = [_param(c) for c in CASES if missing_feature(_meta(c)) is None]
DEVIATING = [_param(c) for c in CASES if _meta(c)["id"] in DEVIATIONS]


def _lines(text: str) -> Counter:
    return Counter(line for line in text.splitlines() if line.strip() and not line.startswith("# "))


def test_every_case_is_held_to_something():
    assert len(SUPPORTED) + len(DEVIATING) == len(CASES)


@pytest.mark.parametrize("case", DEVIATING)
def test_where_hcpscan_follows_kubernetes_not_the_oracle(case, run_cli):
    """Each case differs from the oracle by exactly its class's difference: the
    {ingress-controller} lines (or explained pairs) Kubernetes would not route, with the
    warning that says why; the ports a Service sends to that the pod does not declare; the
    policy that denies, which the oracle's explanation leaves out. The rest must be
    exactly the oracle's."""
    meta = _meta(case)
    result = run_cli(*hcpscan_args(case, meta))
    text = (case / meta["expected"]).read_text()
    expected = _lines(text)
    got = _lines(result.out)
    kind = DEVIATIONS[meta["id"]][0]
    if kind == NAMES_DENIER:  # the oracle omits the deciding policy
        assert not expected - got
        assert sorted((got - expected).elements()) == sorted([
            "\t\tEgress (Denied)", "\t\tIngress (Denied)",
            *(f"\t\t\tNetworkPolicy 'hello-world/deny-all-app-a' selects hello-world/workload-a"
              f"[Deployment], but hello-world/workload-b[Deployment] is not allowed by any {d} rule "
              "(no rules defined)" for d in ("Egress", "Ingress"))])
        return
    if kind == UNDECLARED_PORT:  # more ports towards a pod, never fewer, never another line
        differ = list((expected - got).elements()) + list((got - expected).elements())
        assert differ and all(line.startswith("{ingress-controller} => ") for line in differ)
        ports = {}
        for side, lines in (("want", expected - got), ("got", got - expected)):
            for line in lines:
                dst, _, conns = line.removeprefix("{ingress-controller} => ").partition(" : ")
                ports.setdefault(dst, {})[side] = set(conns.removeprefix("TCP ").split(","))
        assert all(p.get("want", set()) < p["got"] for p in ports.values()), ports
        return
    assert kind == UNROUTED_PORT
    assert not got - expected
    assert expected - got
    # the class is said where it happens, at the backend (the diagnostics table wraps its
    # columns: compare words)
    words = set(result.err.replace("│", " ").split())
    assert {"names", "port", "such"} <= words and words & {"Ingress", "Route"}
    if meta["mode"] == "explain":  # the pairs' whole blocks, and nothing else, are missing
        ruler = "-" * 160
        blocks = [b.split("\n#")[0] for b in text.split(ruler)
                  if b.lstrip("\n").startswith("Connections between {ingress-controller} => ")]
        missing = [b for b in blocks if b.strip().splitlines()[0] not in got]
        assert missing
        assert expected - got == sum((_lines(ruler + b) for b in missing), Counter())
        return
    assert all("{ingress-controller}" in line for line in (expected - got).elements())


def test_the_extended_set_is_present():
    assert len(CASES) >= 172
    categories = {_meta(c)["category"] for c in CASES}
    assert categories == {"anp", "ingress", "udn", "multinet", "focus", "exposure", "explain", "diff"}


def test_anp_ingress_diff_and_focus_cases_without_other_features_all_run():
    """The categories this suite claims: none of their cases may be held only to the weaker checks below."""
    for case in CASES:
        meta = _meta(case)
        if meta["category"] in ("anp", "ingress", "diff", "udn", "multinet") and (
                meta["id"] not in DEVIATIONS):
            assert missing_feature(meta) is None, case.name
    focus = [c for c in CASES if _meta(c)["category"] == "focus"]
    assert len(focus) >= 15  # every one of them compared as it is (none deviates)
    assert all(missing_feature(_meta(c)) is None for c in focus)


@pytest.mark.parametrize("case", SUPPORTED)
def test_connections_match_the_oracle(case, run_cli):
    meta = _meta(case)
    result = run_cli(*hcpscan_args(case, meta))
    # input hcpscan cannot read is exit 2 (the rest is still analysed), as documented
    assert result.code == 0 or (result.code == 2 and "invalid YAML" in result.err), result.err
    expected = (case / meta["expected"]).read_text().splitlines()
    if meta["mode"] == "diff" and meta["id"].startswith("cli/"):
        # netpol-analyzer's CLI names the columns after its flags --dir1/--dir2; hcpscan
        # always writes ref1/ref2 (old/new), as its library does: presentation only
        expected = [e.replace(", dir1: ", ", ref1: ").replace(", dir2: ", ", ref2: ")
                    for e in expected]
    got = [line for line in result.out.splitlines() if not line.startswith("# answer excludes")]
    got = [line for line in got if line.strip()]
    # as multisets: per-network sections repeat lines such as "\tPrimary Network: pod-network"
    assert Counter(got) == Counter(line for line in expected if line.strip())


# -- the other formats the upstream tests compare ------------------------------------------

_EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)" \[label="([^"]*)"', re.M)


def _rows(fmt: str, text: str) -> set[tuple[str, ...]]:
    """The content of an output, without presentation: csv/md rows, json objects, dot edges."""
    if fmt == "csv":
        return {tuple(row) for row in csv.reader(io.StringIO(text))}
    if fmt == "md":
        return {tuple(c.strip() for c in line.strip().strip("|").split(" | "))
                for line in text.splitlines() if line.startswith("| ")}
    if fmt == "dot":
        # netpol-analyzer's picture shows a UDN as a box around plain ns/name nodes; hcpscan
        # names the nodes as its list does (ns[udn]/name): presentation only
        return {tuple(p.replace("[udn]/", "/") for p in edge) for edge in _EDGE.findall(text)}
    doc = json.loads(text)
    if isinstance(doc, dict) and "connections" not in doc:  # netpol-analyzer's exposure form
        (listed, exposed), = ((v, doc[k.replace("connlist", "exposure")])
                              for k, v in doc.items() if k.startswith("connlist"))
        doc = {"connections": listed, "exposure": {"egress": exposed["egress_exposure"] or [],
                                                   "ingress": exposed["ingress_exposure"] or []}}
    items = doc["connections"] if isinstance(doc, dict) else doc
    rows = {(i["src"], i["dst"], i.get("conn")) for i in items}
    exposure = doc.get("exposure") or {} if isinstance(doc, dict) else {}
    for direction in ("egress", "ingress"):
        rows |= {(direction, i["src"], i["dst"], i.get("conn")) for i in exposure.get(direction, [])}
    return rows


FORMAT_CASES = [pytest.param(case, fmt, id=f"{_meta(case)['category']}/{case.name}.{fmt}")
                for case in CASES if missing_feature(_meta(case)) is None
                for fmt in _meta(case)["formats"]
                if fmt in ("csv", "md", "json") or (fmt == "dot" and _meta(case)["mode"] != "diff")]


def test_every_supported_format_is_compared():
    assert len(FORMAT_CASES) >= 40


@pytest.mark.parametrize(("case", "fmt"), FORMAT_CASES)
def test_formats_match_the_oracle(case, fmt, run_cli):
    meta = _meta(case)
    expected_file = next(f for f in meta["expected_files"] if f.endswith(f".{fmt}"))
    result = run_cli(*hcpscan_args(case, meta), "--format", fmt)
    assert result.code in (0, 2), result.err
    expected = (case / expected_file).read_text()
    if not expected.strip():
        assert not _rows(fmt, result.out) - {tuple(DIFF_HEADER)}
        return
    want = _rows(fmt, expected)
    if fmt == "dot" and meta["focus_conn"]:
        # focused on one connection, every edge is that connection; netpol-analyzer labels
        # the unprotected workloads' entire-cluster edges "All Connections" even then
        proto, _, port = meta["focus_conn"].partition("-")
        want = {(src, dst, f"{proto.upper()} {port}") for src, dst, _ in want}
    assert _rows(fmt, result.out) == want


DIFF_HEADER = ("diff-type", "source", "destination", "ref1", "ref2", "workloads-diff-info")


def test_svg_draws_the_list(run_cli, tmp_path):
    """The picture: a namespace box per namespace, outside ranges, exposed edges in red."""
    require(shutil.which("dot"), "Graphviz's dot")
    case = EXTENDED / "anp" / "anp_banp_core_test_connlist_output"
    svg = tmp_path / "out.svg"
    result = run_cli("connectivity", "--no-progress", str(case / "input"), "--svg", str(svg))
    assert result.code == 0, result.err
    text = html.unescape(svg.read_text())
    assert text.startswith("<?xml") and "<svg" in text
    assert "namespace network-policy-conformance-gryffindor" in text
    assert "harry-potter" in text and "0.0.0.0-255.255.255.255" in text
    assert 'stroke="#d62728"' in text  # connections from outside stand out


def test_svg_without_graphviz_says_what_to_do(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot here
    case = EXTENDED / "anp" / "anp_banp_core_test_connlist_output"
    result = run_cli("connectivity", "--no-progress", str(case / "input"), "--svg",
                     str(tmp_path / "out.svg"))
    assert result.code == 2
    assert "Graphviz is not installed" in result.err and "apt-get install graphviz" in result.err
