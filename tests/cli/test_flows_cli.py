"""`hcpscan flows` and `hcpscan connectivity --path / --flow`: the catalog and one path."""

from __future__ import annotations

import json
from pathlib import Path

from hcpscan.model.flows import load_flows

REPO = Path(__file__).resolve().parents[2]
HCP007 = REPO / "fixtures" / "rules" / "HCP007"
SG = REPO / "fixtures" / "required-flows" / "sg-kas-only.yaml"


def test_flows_list_json_is_versioned_and_holds_the_catalog(run_cli):
    result = run_cli("flows", "list", "--format", "json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["schema_version"] == "1.0" and doc["version"] == 1  # the old field, kept
    assert [f["id"] for f in doc["flows"]] == [f.id for f in load_flows()]
    dns = next(f for f in doc["flows"] if f["id"] == "hcp-dns")
    assert dns["protocols"] == ["TCP", "UDP"] and any("Table 14.4" in s for s in dns["seed"])


def test_flows_show_names_the_table_rows_and_their_public_documents(run_cli):
    result = run_cli("flows", "show", "workers-to-konnectivity")
    assert result.code == 0, result.err
    assert ("OpenShift 'Networking for hosted control planes' §14.1.2 Table 14.5: 8091 TCP "
            "Konnectivity server") in result.out
    assert "HyperShift 'HCP networking requirements' Konnectivity Architecture" in result.out
    assert "https://docs.redhat.com/en/documentation/openshift_container_platform/" in result.out
    assert "seed" not in result.out and "\n  001 " not in result.out
    assert run_cli("flows", "show", "no-such-flow").code == 2


def test_path_query_prints_the_first_blocking_hop(run_cli):
    result = run_cli("connectivity", "--no-progress", str(HCP007 / "fail"), "--path",
                     "--from", "workers", "--to", "clusters-edge/kube-apiserver", "--port", "8091")
    assert result.code == 1, result.err  # blocked: the findings exit code
    lines = result.out.splitlines()
    assert lines[0] == "range 10.10.0.0/24 → clusters-edge/kube-apiserver[Deployment] TCP 8091: blocked"
    assert "✗ range 10.10.0.0/24 → LoadBalancer Service clusters-edge/konnectivity-server" in lines[1]
    assert "konnectivity-lb.yaml:48" in lines[1]  # its loadBalancerSourceRanges


def test_path_query_through_the_perimeter_names_its_rule_file(run_cli):
    result = run_cli("connectivity", "--no-progress", str(HCP007 / "pass"), "--firewall", str(SG),
                     "--path", "--from", "10.50.0.0/24", "--to", "clusters-bm/ignition-server-proxy",
                     "--port", "8443", "--format", "json")
    assert result.code == 1, result.err
    (answer,) = json.loads(result.out)["answers"]
    assert answer["open"] is False
    assert answer["blocked_by"]["layer"] == "perimeter"
    assert answer["blocked_by"]["path"] == str(SG)


def test_flow_query_agrees_with_the_rule(run_cli, tmp_path: Path):
    out = tmp_path / "paths.graphml"
    result = run_cli("connectivity", "--no-progress", str(HCP007 / "fail"), "--flow",
                     "workers-to-konnectivity", "--format", "json", "--paths-out", str(out))
    assert result.code == 1, result.err  # clusters/edge is blocked
    doc = json.loads(result.out)
    statuses = {r["hosted_cluster"]: r["status"] for r in doc["results"]}
    assert statuses["clusters/edge"] == "blocked"
    assert out.read_text().startswith("<?xml")


def test_an_open_path_or_flow_exits_0_and_a_blocked_one_exits_1(run_cli):
    args = ("--path", "--from", "workers", "--to", "clusters-edge/kube-apiserver", "--port", "8091")
    opened = run_cli("connectivity", "--no-progress", str(HCP007 / "pass"), *args)
    assert opened.code == 0, opened.err
    assert opened.out.splitlines()[0].endswith("TCP 8091: open")
    shut = run_cli("connectivity", "--no-progress", str(HCP007 / "fail"), *args, "--format", "json")
    assert shut.code == 1, shut.err
    assert [a["open"] for a in json.loads(shut.out)["answers"]] == [False]
    flow = ("--flow", "workers-to-konnectivity", "--hosted-cluster", "clusters/edge")
    assert run_cli("connectivity", "--no-progress", str(HCP007 / "pass"), *flow).code == 0
    assert run_cli("connectivity", "--no-progress", str(HCP007 / "fail"), *flow).code == 1


def test_path_needs_its_question(run_cli):
    result = run_cli("connectivity", "--no-progress", str(HCP007 / "fail"), "--path",
                     "--to", "clusters-edge/kube-apiserver", "--port", "8091")
    assert result.code == 2
    assert "--path answers one question" in result.err


def test_findings_carry_facts_in_json_and_sarif_that_validate(run_cli):
    import jsonschema

    from tests.reporters.sarif_checks import SCHEMA_FILES, schema_errors

    folder = str(HCP007 / "fail")
    result = run_cli("scan", "--no-progress", folder, "--select", "HCP007", "--format", "sarif")
    log = json.loads(result.out)
    for name in SCHEMA_FILES:
        assert schema_errors(log, name) == []
    facts = [r["properties"]["facts"] for r in log["runs"][0]["results"]]
    assert {f["flow"] for f in facts} >= {"workers-to-konnectivity", "workers-to-private-router"}
    report = json.loads(run_cli("scan", "--no-progress", folder, "--select", "HCP007",
                                "--format", "json").out)
    schema = json.loads((REPO / "hcpscan" / "reporters" / "hcpscan-report.schema.json").read_text())
    jsonschema.validate(report, schema)
    assert all(f["facts"]["blocking_hop"]["path"] for f in report["findings"])


def test_a_users_catalog_answers_a_flow_query_and_its_mistakes_are_usage_errors(run_cli, tmp_path):
    mine = tmp_path / "flows.yaml"
    mine.write_text("flows:\n- id: mine\n  title: t\n  from: workers\n"
                    "  to: [{app: kube-apiserver, port: 8091}]\n  check: ingress\n  seed: [mine]\n")
    result = run_cli("connectivity", "--no-progress", str(HCP007 / "fail"), "--flow", "mine",
                     "--flows", str(mine))
    assert result.code == 1, result.err
    assert "HostedCluster clusters/edge: mine: blocked" in result.out
    mine.write_text("flows: [\n")
    result = run_cli("connectivity", "--no-progress", str(HCP007 / "fail"), "--flow", "mine",
                     "--flows", str(mine))
    assert result.code == 2 and "flows.yaml:2: not YAML" in result.err


def test_a_users_own_citation_is_shown_as_written():
    from hcpscan.model.flows import cited, cited_documents

    assert cited("ACME network standard NET-7") == "ACME network standard NET-7"
    assert cited("001") == "001"  # a bare number names no row: left alone
    assert cited("002 Private Clusters").startswith("HyperShift 'HCP networking requirements' ")
    assert cited_documents(("mine", "our 001 table")) == []


def test_path_from_workers_without_a_machine_network_says_what_to_give(run_cli, tmp_path: Path):
    (tmp_path / "hcp.yaml").write_text(
        (REPO / "fixtures" / "required-flows" / "vanilla-dns" / "hcp.yaml").read_text())
    result = run_cli("connectivity", str(tmp_path), "--path", "--from", "workers",
                     "--to", "clusters-vanilla/kube-apiserver", "--port", "6443")
    assert result.code == 2
    assert "HostedCluster clusters/vanilla states no spec.networking.machineNetwork" in result.err
    assert "HostedCluster HostedCluster" not in result.err
    assert "--worker-cidr" in result.err


def test_a_guest_flow_query_judges_each_guest_as_hcp010_does(run_cli):
    guest = REPO / "fixtures" / "rules" / "HCP010"
    shut = run_cli("connectivity", "--no-progress", str(guest / "fail"), "--flow",
                   "guest-pods-to-kas", "--format", "json")
    assert shut.code == 1, shut.err
    results = json.loads(shut.out)["results"]
    assert {(r["guest_cluster"], r["workload"], r["status"]) for r in results} == {
        ("management", "payments/operator[Deployment]", "blocked"),
        ("hostedcluster-acme", "monitoring/metrics-exporter[Deployment]", "blocked")}
    opened = run_cli("connectivity", "--no-progress", str(guest / "pass"), "--flow",
                     "guest-pods-to-kas")
    assert opened.code == 0, opened.err
    assert "guest cluster hostedcluster-acme of HostedCluster clusters/acme: guest-pods-to-kas: open" \
        in opened.out
    none = run_cli("connectivity", "--no-progress", str(HCP007 / "fail"), "--flow", "guest-pods-to-kas")
    assert none.code == 2 and "no hosted cluster's guest in the input" in none.err


def test_a_guest_known_by_its_kubernetes_endpoints_is_queried_too(run_cli):
    """No Infrastructure: the default/kubernetes endpoints at the node-local proxy say it."""
    guest = REPO / "fixtures" / "required-flows" / "guest-endpoints-fail"
    shut = run_cli("connectivity", "--no-progress", str(guest), "--flow", "guest-pods-to-kas",
                   "--format", "json")
    assert shut.code == 1, shut.err
    results = json.loads(shut.out)["results"]
    assert [(r["workload"], r["status"]) for r in results] == [
        ("netobserv/flowlogs-pipeline[DaemonSet]", "blocked")]


def test_every_catalog_citation_names_a_public_document(run_cli):
    """Users have the public documents, not the project's notes: every row of the built-in
    catalog cites a numbered document whose URL `flows show` prints."""
    from hcpscan.model.flows import CITED_DOCUMENTS

    unnamed = [(flow.id, line) for flow in load_flows() for line in flow.seed
               if line.partition(" ")[0] not in CITED_DOCUMENTS]
    assert not unnamed, unnamed
    shown = run_cli("flows", "show", "workers-to-oauth")
    assert "DOMAIN.md" not in shown.out
    assert "https://github.com/openshift/hypershift/blob/main/hypershift-operator/" in shown.out


def test_paths_out_into_a_missing_folder_is_a_usage_error(run_cli, tmp_path: Path):
    out = tmp_path / "no-such-folder" / "paths.json"
    result = run_cli("connectivity", str(HCP007 / "fail"), "--no-progress", "--flow",
                     "workers-to-konnectivity", "--paths-out", str(out))
    assert result.code == 2, result.err
    assert f"--paths-out {out}: no folder {out.parent}" in result.err
    assert "internal error" not in result.err


def test_bad_catalog_and_perimeter_files_point_at_help_installed_users_have(run_cli, tmp_path: Path):
    """An installed hcpscan has no checkout: the hints name the public docs (the base the
    rule pages' helpUri uses) and the command's help, never a fixtures/ or docs/ path."""
    from hcpscan import DOCS_URL, FLOW_CATALOG_URL, PERIMETER_FORMAT_URL, RULE_PAGES_URL

    assert RULE_PAGES_URL.startswith(DOCS_URL) and PERIMETER_FORMAT_URL.startswith(DOCS_URL)
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just a list\n")
    flows = run_cli("flows", "list", "--flows", str(bad))
    perimeter = run_cli("connectivity", "--no-progress", str(HCP007 / "pass"), "--firewall", str(bad))
    path_flow = run_cli("connectivity", "--no-progress", str(HCP007 / "pass"), "--flow",
                        "workers-to-konnectivity", "--flows", str(bad))
    for result, url in ((flows, FLOW_CATALOG_URL), (path_flow, FLOW_CATALOG_URL),
                        (perimeter, PERIMETER_FORMAT_URL)):
        assert result.code == 2, result.err
        assert url in result.err
        local = result.err.replace(DOCS_URL, "")
        assert "fixtures/" not in local and "docs/" not in local
    helped = run_cli("connectivity", "--help").out + run_cli("flows", "--help").out
    assert PERIMETER_FORMAT_URL in helped and FLOW_CATALOG_URL in helped
    local = helped.replace(DOCS_URL, "")
    assert "fixtures/" not in local and "docs/required-flows.md" not in local
    # the anchors the URLs name are headings of the pages
    for url, page in ((PERIMETER_FORMAT_URL, "manual.md"), (FLOW_CATALOG_URL, "required-flows.md")):
        anchor = url.rpartition("#")[2]
        headings = [line.lstrip("#").strip().lower().replace(" ", "-")
                    for line in (REPO / "docs" / page).read_text().splitlines() if line.startswith("#")]
        assert anchor in headings, (page, anchor)
