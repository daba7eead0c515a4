"""Rule engine: selection, statuses, suppressions (annotation, exemption, baseline), rule errors."""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
from pathlib import Path

import pytest

from hcpscan.findings.model import Severity, Status
from hcpscan.rules.config import ConfigError, Exemption, ScanConfig, find_config, load_config
from hcpscan.rules.engine import SelectionError, select_rules
from hcpscan.rules.loader import RuleFileError, builtin_rules_dir, load_rule_dirs, load_rule_file
from hcpscan.rules.suppress import Suppressor, parse_annotation, read_baseline, write_baseline
from tests.conftest import FIXTURES
from tests.rules.harness import scan

CM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: {namespace}
{annotations}data:
  HTTPS_PROXY: http://user:pw@proxy.corp:3128
"""


def _cm(tmp_path: Path, name: str = "proxy-env", namespace: str = "team-a",
        annotation: str | None = None) -> Path:
    annotations = f"  annotations:\n    hcpscan.io/ignore: \"{annotation}\"\n" if annotation else ""
    path = tmp_path / f"{name}.yaml"
    path.write_text(CM.format(name=name, namespace=namespace, annotations=annotations))
    return path


def test_annotation_suppresses_named_rules_with_reason(tmp_path):
    _cm(tmp_path, annotation="HCP001,PRX008: lab proxy, password rotated daily")
    report = scan([tmp_path], ["PRX008"])
    (finding,) = report.findings
    assert finding.status is Status.SUPPRESSED
    assert finding.suppression.kind == "inSource"
    assert finding.suppression.justification == "lab proxy, password rotated daily"
    assert report.results[0].status is Status.SUPPRESSED


def test_annotation_for_other_rules_does_not_suppress(tmp_path):
    _cm(tmp_path, annotation="HCP001: not this one")
    report = scan([tmp_path], ["PRX008"])
    assert report.findings[0].status is Status.FAIL


def test_parse_annotation():
    assert parse_annotation("HCP001, PRX005 : why") == ({"HCP001", "PRX005"}, "why")
    assert parse_annotation("PRX008") == ({"PRX008"}, "")


def test_config_exemption_by_namespace_glob_and_expiry(tmp_path):
    _cm(tmp_path, name="a", namespace="lab-1")
    _cm(tmp_path, name="b", namespace="prod")
    _cm(tmp_path, name="c", namespace="lab-2")
    today = dt.date(2026, 11, 21)
    config = ScanConfig(exemptions=[
        Exemption("PRX008", "lab proxy", namespace="lab-1"),
        Exemption("PRX008", "old waiver", namespace="lab-2", expires=dt.date(2026, 1, 31)),
    ])
    report = scan([tmp_path], ["PRX008"], config, Suppressor(config.exemptions, today=today))
    by_ns = {f.object.namespace: f for f in report.findings}
    assert by_ns["lab-1"].status is Status.SUPPRESSED
    assert by_ns["lab-1"].suppression.kind == "external"
    assert by_ns["prod"].status is Status.FAIL
    assert by_ns["lab-2"].status is Status.FAIL
    assert by_ns["lab-2"].notes == ["exemption for PRX008 expired on 2026-01-31 (old waiver)"]


def test_baseline_is_keyed_on_object_and_field_not_line(tmp_path):
    path = _cm(tmp_path)
    first = scan([tmp_path], ["PRX008"])
    baseline = tmp_path / "baseline.json"
    assert write_baseline(baseline, first.findings) == 1
    # edit elsewhere in the file: the finding moves down two lines
    path.write_text("# a comment\n# another\n" + path.read_text())
    _cm(tmp_path, name="new-one")
    second = scan([tmp_path], ["PRX008"], suppressor=Suppressor(baseline=read_baseline(baseline)))
    status = {f.object.name: (f.status, f.location.line) for f in second.findings}
    assert status["proxy-env"] == (Status.SUPPRESSED, 9)
    assert status["new-one"][0] is Status.FAIL


def test_kind_absent_is_not_applicable_with_reason(tmp_path):
    _cm(tmp_path)
    report = scan([tmp_path], ["OCM005"])
    (result,) = report.results
    assert result.status is Status.NOT_APPLICABLE and result.objects_checked == 0
    assert "kind absent" in result.reason and "ManagedClusterAddOn" in result.reason


def test_select_ignore_and_severity_override():
    rules = load_rule_dirs([builtin_rules_dir()])
    assert {r.id for r in select_rules(rules, ["proxy"])} >= {"PRX008"}
    assert "PRX008" not in {r.id for r in select_rules(rules, ["PRX"], ["PRX008"])}
    (prx008,) = select_rules(rules, ["PRX008"], [], {"PRX008": "low"})
    assert prx008.info.severity is Severity.LOW


def test_broken_rule_file_names_file_and_line(tmp_path):
    text = (FIXTURES.parent / "rules" / "PRX008.yaml").read_text()
    bad = tmp_path / "X.yaml"
    bad.write_text(text.replace("severity: high", "severity: urgent"))
    with pytest.raises(RuleFileError) as info:
        load_rule_file(bad)
    assert info.value.line == 3 and "severity" in info.value.message
    bad.write_text(text.replace("template: proxy_values", "template: no_such_check"))
    with pytest.raises(RuleFileError) as info:
        load_rule_file(bad)
    assert "unknown check template" in info.value.message
    assert bad.read_text().splitlines()[info.value.line - 1].strip().startswith("template:")


def test_every_problem_of_a_rule_file_is_shown_at_once_with_its_line(tmp_path):
    bad = tmp_path / "X.yaml"
    bad.write_text("""\
id: ACME001
title: A custom rule with three mistakes
severity: urgent
message: "{name} is wrong"
applies_to: {kinds: [ConfigMap], where: "$.data["}
check:
  template: field_matches
  params: {path: "$.data.x", pattern: "(", must: maybe}
""")
    with pytest.raises(RuleFileError) as info:
        load_rule_file(bad)
    lines = {line for line, _ in info.value.problems}
    assert lines == {3, 5, 8}, info.value.problems
    text = str(info.value.message)
    assert "severity" in text and "must" in text and "regular expression" in text


def test_a_user_rule_needs_no_docs_but_a_builtin_one_does(tmp_path):
    rule = tmp_path / "ACME002.yaml"
    rule.write_text("""\
id: ACME002
title: ConfigMaps name their owner
severity: low
message: "{object} has no owner label"
applies_to: {kinds: [ConfigMap]}
check: {template: field_matches, params: {path: "$.metadata.labels.owner", pattern: ".", required: true}}
""")
    loaded = load_rule_file(rule)
    assert loaded.template == "field_matches" and loaded.info.category == "custom"
    with pytest.raises(RuleFileError) as info:
        load_rule_file(rule, builtin=True)
    assert "'docs'" in info.value.message and "'category'" in info.value.message


def test_config_file_is_found_upwards_to_the_repository_root_and_validated(tmp_path):
    (tmp_path / ".hcpscan.yaml").write_text("select: [PRX]\nfail_on: medium\n")
    (tmp_path / ".git").mkdir()
    nested = tmp_path / "clusters" / "prod"
    nested.mkdir(parents=True)
    found = find_config(nested)
    assert found == tmp_path.resolve() / ".hcpscan.yaml"
    assert find_config(nested, [tmp_path / "clusters"]) == found
    assert find_config(nested, [tmp_path]) == found  # the repository's own config, scanned from its root (issue 29)
    assert load_config(found).fail_on == "medium"
    (tmp_path / ".hcpscan.yaml").write_text("select: [PRX]\nexemptions:\n- rule: HCP001\n")
    with pytest.raises(ConfigError) as info:
        load_config(found)
    assert info.value.line == 3 and "reason" in info.value.message


def test_redacted_secret_makes_the_rule_not_evaluable_with_reason(tmp_path):
    (tmp_path / "secrets.yaml").write_text("""\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: bootstrap-hub-kubeconfig, namespace: open-cluster-management-agent}
  data: {kubeconfig: 1022 bytes long}
- apiVersion: v1
  kind: Secret
  metadata: {name: hub-kubeconfig-secret, namespace: open-cluster-management-agent}
  data: {kubeconfig: 2214 bytes long}
""")
    report = scan([tmp_path], ["OCM003"])
    assert report.findings == []
    (result,) = report.results
    assert result.status is Status.NOT_EVALUABLE
    assert "redacted" in result.reason and "hub-kubeconfig-secret" in result.reason


def test_invalid_jsonpath_and_regex_in_a_rule_are_errors_at_their_line(tmp_path):
    text = """\
id: ACME010
title: An https proxy comes with a caBundle
severity: high
message: "{object} has no caBundle"
applies_to: {kinds: [AddOnDeploymentConfig]}
check:
  template: field_matches
  params:
    when: {path: "$.spec.proxyConfig.httpsProxy", pattern: "^https://"}
    path: "$.spec.proxyConfig.caBundle"
    pattern: "\\\\S"
    required: true
"""
    bad = tmp_path / "X.yaml"
    bad.write_text(text.replace('path: "$.spec.proxyConfig.caBundle"', 'path: "$.data["'))
    with pytest.raises(RuleFileError) as info:
        load_rule_file(bad)
    assert "invalid JSONPath" in info.value.message
    assert "path:" in bad.read_text().splitlines()[info.value.line - 1]
    bad.write_text(text.replace('pattern: "\\\\S"', 'pattern: "["'))
    with pytest.raises(RuleFileError) as info:
        load_rule_file(bad)
    assert "invalid regular expression" in info.value.message


def test_config_values_are_checked_when_loaded(tmp_path):
    config = tmp_path / ".hcpscan.yaml"
    for text, line, words in (
        ("inputs:\n  worker_cidrs: [garbage]\n", 2, "not a CIDR"),
        ("inputs:\n  worker_cidrs: [10.10.0.5/24]\n", 2, "host bits"),
        ("inputs:\n  managed_cluster_kas_ip: 300.1.1.1\n", 2, "not an IP address"),
        ("inputs:\n  proxy_ca_files: [missing.pem]\n", 2, "file not found"),
        ("exemptions:\n- rule: HCP001\n  reason: lab\n  expires: 2020-02-30\n", 4, "not a date"),
        ("inputs:\n  runtime_versions:\n    curl: '6.0'\n", 3, "known: curl: >= 7.86"),
        ("inputs:\n  runtime_versions:\n    perl: '5'\n", 3, "unknown runtime 'perl'"),
        ("inputs:\n  runtime_versions:\n    curl: 7.88\n", 3, "is not of type 'string'"),
    ):
        config.write_text(text)
        with pytest.raises(ConfigError) as info:
            load_config(config)
        assert info.value.line == line and words in info.value.message, text


@pytest.mark.parametrize("enabled", [True, False])
def test_a_scan_leaves_the_garbage_collector_as_it_found_it(tmp_path, enabled):
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        report = scan([_cm(tmp_path)], ["PRX008"])
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert [f.rule_id for f in report.findings] == ["PRX008"]


def test_rules_run_with_the_collector_on_but_sparing(tmp_path, monkeypatch):
    """Paused, the cyclic garbage of the rules and their analyses piled up (44 MiB more
    peak RSS at 100 hosted clusters); on for the youngest generation only, and no
    collection of an older generation over the analyses kept alive (at 500 hosted clusters
    the middle one's took 0.44 s and found nothing); the thresholds are restored after."""
    import hcpscan.scan as scan_module

    seen: list[tuple[bool, int, bool, bool]] = []
    evaluate = scan_module.evaluate

    def spying(*args, **kwargs):  # type: ignore[no-untyped-def]
        young, middle, full = gc.get_threshold()
        seen.append((gc.isenabled(), young, middle > 10**6, full > 10**6))
        return evaluate(*args, **kwargs)

    monkeypatch.setattr(scan_module, "evaluate", spying)
    before = gc.get_threshold()
    report = scan([_cm(tmp_path)], ["PRX008"])
    assert seen == [(True, 700, True, True)]
    assert gc.get_threshold() == before
    assert [f.rule_id for f in report.findings] == ["PRX008"]


def test_sparing_blocks_overlapping_in_threads_leave_the_collector_as_found() -> None:
    """Two scans in threads whose sparing blocks overlap (A in, B in, A out, B out): each
    saving and restoring on its own, B put back the thresholds A had set, and the older
    generations were never collected again in that process."""
    import threading

    from hcpscan import collector

    before = (gc.isenabled(), gc.get_threshold())
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    inside: list[tuple[int, int, int]] = []

    def first() -> None:
        with collector.sparing():
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def second() -> None:
        a_in.wait(10)
        with collector.sparing():
            b_in.set()
            a_out.wait(10)
            inside.append(gc.get_threshold())  # A has left: still sparing for B

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert a_out.is_set() and inside and inside[0][1] > 10**6
    assert (gc.isenabled(), gc.get_threshold()) == before


def test_a_scan_releases_its_analyses_before_the_collector_runs_in_full_again(tmp_path,
                                                                              monkeypatch):
    """The analyses (the reachability graph here) are forgotten inside the sparing block, once the
    rules and exposures are done: freed by reference counting there, they are not left
    for the older generations' next collection to walk."""
    import hcpscan.scan as scan_module
    from hcpscan.analysis.reachability.scan_graph import REACHABILITY
    from hcpscan.rules.context import Context

    contexts: list[Context] = []

    class Kept(Context):
        def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            contexts.append(self)

    monkeypatch.setattr(scan_module, "Context", Kept)
    report = scan([FIXTURES / "rules" / "HCP004" / "fail"], ["HCP004"])
    assert {f.rule_id for f in report.findings} == {"HCP004"}
    (ctx,) = contexts
    assert REACHABILITY in ctx.asked  # built, and kept past the rules for the exposures
    assert ctx.built_names() == [] and ctx.built(REACHABILITY) is None


def test_config_runtime_versions_are_typed_references(tmp_path):
    config = tmp_path / ".hcpscan.yaml"
    config.write_text("inputs:\n  runtime_versions: {curl: '7.88', node-undici: '7'}\n")
    versions = load_config(config).runtime_versions
    assert {k: str(v) for k, v in versions.items()} == {"curl": "curl@7.88",
                                                         "node-undici": "node-undici@7.0"}


def test_a_reference_rule_alone_reads_the_kind_it_references(tmp_path):
    """In a must-gather the loader reads only the resources the selected rules need: the
    referenced kind must be among them, or every reference looks dangling."""
    ns = tmp_path / "must-gather.local.1" / "image" / "namespaces" / "cluster1"
    group = ns / "addon.open-cluster-management.io"
    group.mkdir(parents=True)
    (ns / "cluster1.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: cluster1}\n")
    (group / "managedclusteraddons.yaml").write_text("""\
apiVersion: v1
kind: List
items:
- apiVersion: addon.open-cluster-management.io/v1alpha1
  kind: ManagedClusterAddOn
  metadata: {name: application-manager, namespace: cluster1}
  spec:
    configs:
    - {group: addon.open-cluster-management.io, resource: addondeploymentconfigs, name: proxy-config}
""")
    (group / "addondeploymentconfigs.yaml").write_text("""\
apiVersion: v1
kind: List
items:
- apiVersion: addon.open-cluster-management.io/v1alpha1
  kind: AddOnDeploymentConfig
  metadata: {name: proxy-config, namespace: cluster1}
  spec: {proxyConfig: {httpProxy: "http://proxy.corp.example.com:3128"}}
""")
    (result,) = scan([tmp_path], ["OCM005"]).results
    assert result.status is Status.PASS and result.objects_checked == 1, result.reason


def test_selection_is_case_insensitive_and_prefixes_need_a_star():
    rules = load_rule_dirs([builtin_rules_dir()])
    assert [r.id for r in select_rules(rules, ["prx008"])] == ["PRX008"]
    assert {r.id for r in select_rules(rules, ["PRX01*"])} == {r.id for r in rules
                                                             if r.id.startswith("PRX01")}
    assert {r.id for r in select_rules(rules, ["Proxy"])} >= {"PRX008"}


@pytest.mark.parametrize(("option", "selector", "nearest"), [
    ("--select", "PRX0O8", "PRX008"),  # letter O for digit 0
    ("--select", "PRX01", "PRX010"),  # a bare prefix selects no range
    ("--ignore", "PRX07", "PRX007"),
])
def test_a_selector_naming_no_rule_is_an_error_with_the_nearest_ids(option, selector, nearest):
    rules = load_rule_dirs([builtin_rules_dir()])
    args = ([selector], []) if option == "--select" else ([], [selector])
    with pytest.raises(SelectionError) as caught:
        select_rules(rules, *args)
    assert caught.value.option == option and nearest in caught.value.nearest
    assert selector in str(caught.value)


def test_severity_overrides_take_ids_in_any_case_and_refuse_unknown_ones():
    rules = load_rule_dirs([builtin_rules_dir()])
    (prx008,) = select_rules(rules, ["PRX008"], [], {"prx008": "low"})
    assert prx008.info.severity is Severity.LOW
    with pytest.raises(SelectionError) as caught:
        select_rules(rules, [], [], {"PRX0O8": "low"})
    assert "PRX008" in caught.value.nearest


def test_a_family_is_the_letters_an_id_starts_with_also_for_dashed_custom_ids(tmp_path):
    rules = load_rule_dirs([builtin_rules_dir()])
    custom = dataclasses.replace(rules[0], info=dataclasses.replace(rules[0].info, id="ACME-NET-001"))
    assert [r.id for r in select_rules([*rules, custom], ["acme"])] == ["ACME-NET-001"]


def test_a_rule_scoped_by_kind_alone_takes_every_object_of_its_kinds_as_asking_each_would(tmp_path):
    """``subjects_of``'s shortcut (no condition but kinds, none named like a policy kind of
    another group) gives what asking every object each condition gives (``in_scope``), for
    every built-in rule over the fixtures and the real estates; Calico's NetworkPolicy,
    named like the evaluated kind, still goes through the conditions."""
    from hcpscan.inventory.store import Inventory
    from hcpscan.rules.context import Context
    from hcpscan.rules.engine import in_scope, subjects_of
    from hcpscan.sources.loader import load_paths
    from tests.conftest import REALWORLD

    (tmp_path / "calico.yaml").write_text(
        "apiVersion: crd.projectcalico.org/v1\nkind: NetworkPolicy\n"
        "metadata: {name: calico, namespace: team-a}\nspec: {selector: all()}\n")
    rules = load_rule_dirs([builtin_rules_dir()])
    result = load_paths([str(FIXTURES), str(REALWORLD.parent), str(tmp_path)])
    ctx = Context(Inventory(result.objects, result.diagnostics, result.skipped))
    by_kind_alone = 0
    for rule in rules:
        applies = rule.applies_to
        plain = in_scope(ctx.inventory.of_kind(*applies.kinds), applies)
        assert subjects_of(applies, ctx) == plain, rule.id
        by_kind_alone += bool(plain) and applies == type(applies)(kinds=applies.kinds)
    assert by_kind_alone > 10
    policies = type(rules[0].applies_to)(kinds=("NetworkPolicy",))
    plain = in_scope(ctx.inventory.of_kind("NetworkPolicy"), policies)
    assert subjects_of(policies, ctx) == plain
    assert "calico" in {o.name for o in ctx.inventory.of_kind("NetworkPolicy")} - {o.name for o in plain}
