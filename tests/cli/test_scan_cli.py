"""`hcpscan scan` and `hcpscan inventory` as a user runs them: outputs, exit codes, errors."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import FIXTURES, REALWORLD

EXAMPLE = str(FIXTURES / "example")


def test_version_and_help_document_exit_codes(run_cli):
    assert run_cli("--version").out.strip().startswith("hcpscan ")
    helped = run_cli("scan", "--help")
    assert helped.code == 0
    for text in ("exit codes:", "--fail-on", "--baseline", "hostedcluster-<name>"):
        assert text in helped.out


def test_bundled_example_has_findings_and_exits_1(run_cli):
    result = run_cli("scan", EXAMPLE)
    assert result.code == 1
    assert "PRX008" in result.out and "Coverage" in result.out
    assert "\x1b[" not in result.out  # NO_COLOR and not a TTY


def test_json_report_shape(run_cli):
    result = run_cli("scan", EXAMPLE, "--format", "json")
    report = json.loads(result.out)
    finding = next(f for f in report["findings"] if f["rule_id"] == "PRX008")
    assert finding["object"] == {"cluster": "management", "apiVersion": "v1", "kind": "ConfigMap",
                                 "namespace": "monitoring", "name": "proxy-env"}
    assert finding["location"]["path"].endswith("namespaces/monitoring/core/configmaps.yaml")
    assert finding["field"] == "data.HTTPS_PROXY"
    assert "Spring2026" not in json.dumps(report)  # the password is masked in messages
    statuses = {r["rule_id"]: r["status"] for r in report["rules"]}
    assert statuses["OCM003"] == "not-evaluable"


def test_field_line_in_report_is_the_offending_line(run_cli):
    report = json.loads(run_cli("scan", EXAMPLE, "--format", "json", "--select", "PRX008").out)
    (finding,) = report["findings"]
    lines = open(finding["location"]["path"]).read().splitlines()
    assert lines[finding["location"]["line"] - 1].strip().startswith("HTTPS_PROXY:")


def test_several_formats_with_files(run_cli, tmp_path):
    sarif, md = tmp_path / "out.sarif", tmp_path / "out.md"
    result = run_cli("scan", EXAMPLE, "--format", "table", "--format", f"sarif={sarif}",
                     "--format", f"markdown={md}")
    assert result.code == 1 and "Coverage" in result.out
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert md.read_text().startswith("## hcpscan")


def test_output_option_and_two_stdout_formats_is_an_error(run_cli, tmp_path):
    out = tmp_path / "r.json"
    assert run_cli("scan", EXAMPLE, "--format", "json", "-o", str(out)).code == 1
    assert json.loads(out.read_text())["schema_version"]
    bad = run_cli("scan", EXAMPLE, "--format", "json", "--format", "table")
    assert bad.code == 2 and "only one report can go to standard output" in bad.err


def test_fail_on_threshold(run_cli):
    assert run_cli("scan", EXAMPLE, "--select", "OCM005").code == 0  # medium < high
    assert run_cli("scan", EXAMPLE, "--select", "OCM005", "--fail-on", "medium").code == 1


def test_fail_on_incomplete(run_cli):
    assert run_cli("scan", EXAMPLE, "--select", "OCM003").code == 0
    assert run_cli("scan", EXAMPLE, "--select", "OCM003", "--fail-on-incomplete").code == 3


def test_exit_zero_ignores_findings_but_not_problems(run_cli, tmp_path):
    assert run_cli("scan", EXAMPLE, "--select", "OCM005", "--fail-on", "medium", "--exit-zero").code == 0
    assert run_cli("scan", EXAMPLE, "--select", "OCM003", "--fail-on-incomplete", "--exit-zero").code == 3
    assert run_cli("scan", str(tmp_path / "nope"), "--exit-zero").code == 2


def test_missing_path_is_a_usage_error(run_cli, tmp_path):
    result = run_cli("scan", str(tmp_path / "nope"))
    assert result.code == 2
    assert result.err.startswith("hcpscan: error: path not found")
    assert "Traceback" not in result.err


def test_path_without_objects_is_a_usage_error(run_cli, tmp_path):
    (tmp_path / "notes.md").write_text("# nothing here\n")
    result = run_cli("scan", str(tmp_path))
    assert result.code == 2 and "no Kubernetes objects found" in result.err


def test_objects_all_left_out_for_a_field_s_type_say_why(run_cli, tmp_path):
    """Every object rejected for a field's type (the API server would refuse it): the
    error said "no Kubernetes objects found" and nothing more (found by review)."""
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: b}\n"
                                       "spec: {containers: x}\n")
    result = run_cli("scan", str(tmp_path))
    assert result.code == 2 and "no Kubernetes objects found" in result.err
    assert "pod.yaml:4: Pod b/a is left out: spec.containers is a string or number, not a list" in result.err


def test_bad_input_is_reported_and_the_rest_scanned(run_cli, tmp_path):
    (tmp_path / "broken.yaml").write_text("kind: ConfigMap\nmetadata: {name: x\n")
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p, namespace: a}\n"
        "data: {HTTPS_PROXY: 'http://u:p@proxy:3128'}\n")
    result = run_cli("scan", str(tmp_path), "--format", "json")
    report = json.loads(result.out)
    assert result.code == 2
    assert [f["rule_id"] for f in report["findings"]] == ["PRX008"]
    (diag,) = report["diagnostics"]
    assert diag["path"].endswith("broken.yaml") and diag["line"] == 2  # the unclosed brace's line


def test_baseline_round_trip(run_cli, tmp_path):
    baseline = tmp_path / "baseline.json"
    failing = [f for f in json.loads(run_cli("scan", EXAMPLE, "--format", "json").out)["findings"]
               if f["status"] == "fail"]
    written = run_cli("scan", EXAMPLE, "--write-baseline", str(baseline))
    assert written.code == 0 and f"wrote {len(failing)} finding(s)" in written.err
    again = run_cli("scan", EXAMPLE, "--baseline", str(baseline), "--format", "json")
    assert again.code == 0
    assert {f["status"] for f in json.loads(again.out)["findings"]} == {"suppressed"}
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert run_cli("scan", EXAMPLE, "--baseline", str(broken)).code == 2


def test_config_file_is_used_and_its_errors_name_the_line(run_cli, tmp_path):
    config = tmp_path / ".hcpscan.yaml"
    config.write_text("select: [ocm]\nignore: [OCM006, OCM002]\n")
    result = run_cli("scan", EXAMPLE, "--config", str(config), "--format", "json")
    assert {f["rule_id"] for f in json.loads(result.out)["findings"]} == {"OCM005"}
    assert {r["rule_id"] for r in json.loads(result.out)["rules"]} == {
        "OCM001", "OCM003", "OCM004", "OCM005", "OCM007", "OCM008", "OCM009", "OCM010"}
    config.write_text("ignore: [PRX008]\nseverity: {PRX008: urgent}\n")
    bad = run_cli("scan", EXAMPLE, "--config", str(config))
    assert bad.code == 2 and f"{config}:2" in bad.err


def test_user_rule_directory_and_broken_rule(run_cli, tmp_path):
    rule = (FIXTURES.parent / "rules" / "OCM005.yaml").read_text().replace("OCM005", "ACME001")
    (tmp_path / "ACME001.yaml").write_text(rule)
    listed = run_cli("rules", "list", "--rules", str(tmp_path), "--format", "json")
    assert "ACME001" in {r["id"] for r in json.loads(listed.out)["rules"]}
    (tmp_path / "ACME001.yaml").write_text(rule.replace("severity: medium", "severity: 5"))
    bad = run_cli("scan", EXAMPLE, "--rules", str(tmp_path))
    assert bad.code == 2 and "ACME001.yaml:3" in bad.err


def test_rules_show_renders_docs_and_unknown_id_is_an_error(run_cli):
    shown = run_cli("rules", "show", "prx008")
    assert shown.code == 0 and "Why is this bad?" in shown.out and "kind: ConfigMap" in shown.out
    assert run_cli("rules", "show", "NOPE999").code == 2


def test_inventory_json_lists_objects_with_sources(run_cli):
    result = run_cli("inventory", str(REALWORLD / "cpo-rendered"), "--format", "json")
    doc = json.loads(result.out)
    # the one FeatureGate rendered for two feature sets: two variants, said once
    assert result.code == 0 and [(Path(d["path"]).name, d["severity"], d["message"].split(" (")[0])
                                 for d in doc["diagnostics"]] == [
        ("feature-gate.yaml", "warning", "FeatureGate cluster is written both in "
         f"{REALWORLD / 'cpo-rendered' / 'featuregate-generator' / 'feature-gate-tech-preview-no-upgrade.yaml'}"
         " and in "
         f"{REALWORLD / 'cpo-rendered' / 'featuregate-generator' / 'feature-gate.yaml'}")]
    kas = next(o for o in doc["objects"] if o["kind"] == "Deployment" and o["name"] == "kube-apiserver")
    assert kas["cluster"] == "management" and kas["namespace"] == "hcp-namespace"
    assert kas["source"]["path"].endswith("kube_apiserver_deployment.yaml") and kas["source"]["line"] == 1


def test_stdin(run_cli):
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p, namespace: a}\ndata: {x: 'http://u:p@h:1'}\n"
    result = run_cli("scan", "-", "--format", "json", "--select", "PRX008", stdin=text)
    assert json.loads(result.out)["findings"][0]["location"]["path"] == "<stdin>"


def test_a_message_placeholder_the_check_does_not_give_is_reported(run_cli, tmp_path):
    rule = (FIXTURES.parent / "rules" / "PRX008.yaml").read_text().replace("PRX008", "ACME002")
    rule = rule.replace('message: "{object} stores', 'message: "{object} ({owner}) stores')
    (tmp_path / "ACME002.yaml").write_text(rule)
    result = run_cli("scan", EXAMPLE, "--rules", str(tmp_path), "--select", "ACME002",
                     "--format", "json")
    report = json.loads(result.out)
    assert report["findings"] and all("({owner})" in f["message"] for f in report["findings"])
    (warning,) = [d for d in report["diagnostics"] if "ACME002" in d["message"]]
    assert "{owner}" in warning["message"] and warning["path"].endswith("ACME002.yaml")
    assert "{object}" in warning["hint"] and "{url}" in warning["hint"]


def test_templates_list_and_show_describe_what_a_rule_can_use(run_cli):
    listed = run_cli("templates", "list", "--format", "json")
    assert listed.code == 0
    names = {t["name"] for t in json.loads(listed.out)["templates"]}
    assert "reference_exists" in names
    shown = run_cli("templates", "show", "reference_exists", "--format", "json")
    item = json.loads(shown.out)["template"]
    assert {p["name"] for p in item["params"]} >= {"refs", "kind"}
    assert "ref_name" in item["message_fields"] and "object" in item["message_fields"]
    text = run_cli("templates", "show", "reference_exists")
    assert "refs (string, required): JSONPath to the reference objects" in text.out
    missing = run_cli("templates", "show", "no_such_template")
    assert missing.code == 2 and "templates list" in missing.err


def test_a_typo_in_select_or_ignore_is_an_error_naming_the_nearest_id(run_cli, tmp_path):
    result = run_cli("scan", EXAMPLE, "--no-progress", "--no-config", "--select", "HCP001,PRX0O8")
    assert result.code == 2 and "'PRX0O8'" in result.err and "PRX008" in result.err
    result = run_cli("scan", EXAMPLE, "--no-progress", "--no-config", "--select", "PRX01")
    assert result.code == 2 and "'PRX01*'" in result.err
    config = tmp_path / "hcpscan.yaml"
    config.write_text("ignore: [PRX07]\n")
    result = run_cli("scan", EXAMPLE, "--no-progress", "--config", str(config))
    assert result.code == 2 and str(config) in result.err and "PRX007" in result.err
    result = run_cli("scan", EXAMPLE, "--no-progress", "--no-config", "--select", "prx008",
                     "--format", "json")
    assert {r["rule_id"] for r in json.loads(result.out)["rules"]} == {"PRX008"}


def test_an_exit_2_scan_still_writes_each_report_file_with_the_error(run_cli, tmp_path):
    missing = tmp_path / "no-such-dump"
    files = {fmt: tmp_path / f"report.{fmt}" for fmt in ("json", "sarif", "junit", "html", "table")}
    args = [a for fmt, path in files.items() for a in ("--format", f"{fmt}={path}")]
    result = run_cli("scan", str(missing), "--no-progress", *args)
    assert result.code == 2 and "path not found" in result.err
    for fmt, path in files.items():
        assert "path not found" in path.read_text(encoding="utf-8"), fmt
    document = json.loads(files["json"].read_text(encoding="utf-8"))
    assert [d["severity"] for d in document["diagnostics"]] == ["error"]
    assert 'errors="1"' in files["junit"].read_text(encoding="utf-8")
    # -o as well, and a selection typo is as much an exit 2 as a missing path
    out = tmp_path / "out.sarif"
    result = run_cli("scan", EXAMPLE, "--no-progress", "--no-config", "--select", "PRX0O8",
                     "--format", "sarif", "-o", str(out))
    assert result.code == 2 and "PRX0O8" in out.read_text(encoding="utf-8")


def test_a_folder_of_tool_files_only_says_what_was_passed_over(run_cli, tmp_path):
    (tmp_path / "codecov.yml").write_text("coverage:\n  status:\n    patch: off\n")
    (tmp_path / "values.yaml").write_text("replicas: 3\n")
    result = run_cli("scan", str(tmp_path), "--no-config")
    assert result.code == 2
    assert (f"no Kubernetes objects found in {tmp_path} (passed over: 2 not a manifest "
            "(YAML without kind or apiVersion))") in result.err
