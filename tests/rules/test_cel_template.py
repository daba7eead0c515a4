"""The cel template: expressions checked when the rule loads, domain functions, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hcpscan.rules.loader import RuleFileError, load_rule_file
from hcpscan.rules.templates.cel import cel
from tests.conftest import requirement

_cel = requirement(lambda: cel is not None, "cel-expr-python (a dependency with wheels for "
                                           "Linux x86_64, macOS and Windows)")

RULE = """\
id: CEL001
title: A CEL rule under test
severity: medium
message: "{{object}} fails"
applies_to: {{kinds: [{kind}]}}
check:
  template: cel
  params:
{params}
"""


def _rule(tmp_path: Path, kind: str, params: str) -> Path:
    folder = tmp_path / "rules"
    folder.mkdir(exist_ok=True)
    (folder / "CEL001.yaml").write_text(RULE.format(kind=kind, params=params))
    return folder


def _scan(run_cli, tmp_path: Path, manifest: str, rules: Path) -> dict:
    (tmp_path / "in.yaml").write_text(manifest)
    result = run_cli("scan", str(tmp_path / "in.yaml"), "--rules", str(rules), "--select", "CEL001",
                     "--no-config", "--format", "json")
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


def test_a_type_error_is_reported_at_the_rule_line_with_the_column(tmp_path):
    folder = _rule(tmp_path, "ConfigMap", "    expression: object.metadata.name.startsWith(3)")
    with pytest.raises(RuleFileError) as info:
        load_rule_file(folder / "CEL001.yaml")
    assert info.value.line == 9
    assert "invalid CEL" in info.value.message and "1:" in info.value.message


def test_objects_need_their_kinds_named(tmp_path):
    folder = _rule(tmp_path, "ConfigMap", '    expression: objects.exists(o, o.kind == "Secret")')
    with pytest.raises(RuleFileError) as info:
        load_rule_file(folder / "CEL001.yaml")
    assert "params.reads" in info.value.message


def test_a_non_boolean_expression_is_refused(tmp_path):
    folder = _rule(tmp_path, "ConfigMap", '    expression: "\\"text\\""')
    with pytest.raises(RuleFileError) as info:
        load_rule_file(folder / "CEL001.yaml")
    assert "not a bool" in info.value.message


def test_false_fails_true_passes_and_an_error_is_not_evaluable(run_cli, tmp_path):
    folder = _rule(tmp_path, "ConfigMap", "    expression: object.data.mode == 'strict'")
    manifest = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: %s, namespace: a}
%s
"""
    strict = _scan(run_cli, tmp_path, manifest % ("x", "data: {mode: strict}"), folder)
    assert strict["rules"][0]["status"] == "pass" and strict["rules"][0]["objects_checked"] == 1
    loose = _scan(run_cli, tmp_path, manifest % ("x", "data: {mode: loose}"), folder)
    assert loose["rules"][0]["status"] == "fail"
    assert loose["findings"][0]["evidence"] == ["false for ConfigMap a/x: object.data.mode == 'strict'"]
    missing = _scan(run_cli, tmp_path, manifest % ("x", "data: {}"), folder)
    assert missing["rules"][0]["status"] == "not-evaluable"
    assert "could not be evaluated" in missing["rules"][0]["reason"]


def test_no_proxy_functions_use_each_clients_semantics(run_cli, tmp_path):
    # curl reads a leading-dot entry as the domain and its subdomains; Go likewise; but an IP
    # CIDR is matched by address for both and a bare domain entry 'corp' covers nothing else.
    folder = _rule(tmp_path, "ConfigMap", """\
    expression: >
      no_proxy_direct("go", object.data.NO_PROXY, "https://api.corp.example.com")
      && no_proxy_covers("curl", object.data.NO_PROXY, "10.200.0.0/16")
      && !no_proxy_direct("go", object.data.NO_PROXY, "https://example.org")""")
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: env, namespace: a}\ndata: {NO_PROXY: '%s'}\n"
    good = _scan(run_cli, tmp_path, manifest % ".corp.example.com,10.200.0.0/16", folder)
    assert good["rules"][0]["status"] == "pass", good["rules"][0]["reason"]
    bad = _scan(run_cli, tmp_path, manifest % ".corp.example.com,10.200.0.0/17", folder)
    assert bad["rules"][0]["status"] == "fail"


def test_reachable_asks_the_reachability_engine(run_cli, tmp_path):
    cases = Path(__file__).resolve().parents[2] / "fixtures" / "custom-rules" / "cases" / "ACME004"
    folder = _rule(tmp_path, "HostedCluster", """\
    expression: >
      !reachable("192.0.2.0/24", hcp_namespace(object), "ignition-server", 9090)""")
    for case, status in (("fail", "fail"), ("pass", "pass")):
        result = run_cli("scan", str(cases / case), "--rules", str(folder), "--select", "CEL001",
                         "--no-config", "--format", "json")
        assert json.loads(result.out)["rules"][0]["status"] == status, case


def _must_gather(root: Path, objects: list[dict]) -> Path:
    """``objects`` laid out as `oc adm must-gather` writes them: one List per kind and
    namespace, so the loader can leave out the kinds the selected rules do not read."""
    from hcpscan.inventory.resources import plural_of

    base = root / "must-gather.local.1" / "image" / "namespaces"
    for obj in objects:
        group = obj["apiVersion"].rpartition("/")[0] or "core"
        file = base / obj["metadata"]["namespace"] / group / f"{plural_of(obj['kind'])}.yaml"
        file.parent.mkdir(parents=True, exist_ok=True)
        items = yaml.safe_load(file.read_text())["items"] if file.exists() else []
        file.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*items, obj]}))
    return root / "must-gather.local.1"


IGNITION = [
    {"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
     "metadata": {"name": "hc1", "namespace": "clusters"},
     "spec": {"networking": {"machineNetwork": [{"cidr": "10.0.0.0/16"}]},
              "services": [{"service": "Ignition",
                            "servicePublishingStrategy": {"type": "NodePort"}}]}},
    {"apiVersion": "apps/v1", "kind": "Deployment",
     "metadata": {"name": "ignition-server", "namespace": "clusters-hc1"},
     "spec": {"selector": {"matchLabels": {"app": "ignition-server"}},
              "template": {"metadata": {"labels": {"app": "ignition-server"}},
                           "spec": {"containers": [{"name": "s", "image": "x",
                                                    "ports": [{"containerPort": 9090}]}]}}}},
    {"apiVersion": "v1", "kind": "Service",
     "metadata": {"name": "ignition-server", "namespace": "clusters-hc1"},
     "spec": {"type": "NodePort", "selector": {"app": "ignition-server"},
              "ports": [{"port": 9090, "targetPort": 9090, "nodePort": 30090}]}},
]
KYVERNO = [
    {"apiVersion": "kyverno.io/v1", "kind": "Policy",
     "metadata": {"name": "inject", "namespace": "giantswarm"},
     "spec": {"rules": [{"name": "add", "match": {"any": [{"resources": {
         "kinds": ["Deployment"], "selector": {"matchLabels": {"team": "x"}}}}]},
         "mutate": {"patchStrategicMerge": {"spec": {"template": {"spec": {"containers": [
             {"(name)": "*", "env": [{"name": "HTTPS_PROXY", "value": "http://p:3128"}]}]}}}}}}]}},
    {"apiVersion": "apps/v1", "kind": "Deployment",
     "metadata": {"name": "chart-operator", "namespace": "giantswarm", "labels": {"team": "x"}},
     "spec": {"selector": {"matchLabels": {"app": "c"}},
              "template": {"metadata": {"labels": {"app": "c"}},
                           "spec": {"containers": [{"name": "c", "image": "x"}]}}}},
]


@pytest.mark.parametrize(("kind", "objects", "expression"), [
    ("HostedCluster", IGNITION,
     '!reachable("8.8.8.0/24", hcp_namespace(object), "ignition-server", 9090)'),
    ("Policy", KYVERNO,
     'object.spec.rules.all(r, size(kyverno_matches(r, "giantswarm", "chart-operator", {})) == 0)'),
])
def test_domain_functions_keep_the_kinds_they_read_when_run_alone(
        run_cli, tmp_path, kind, objects, expression):
    """Without params.reads, a rule run alone on a must-gather still sees the kinds its
    domain functions read (the graph's for reachable, the workload for kyverno_matches)."""
    dump = _must_gather(tmp_path / "dump", objects)
    folder = _rule(tmp_path, kind, f"    expression: '{expression}'")
    alone = run_cli("scan", str(dump), "--rules", str(folder), "--select", "CEL001",
                    "--no-config", "--format", "json")
    assert [r["status"] for r in json.loads(alone.out)["rules"]] == ["fail"], alone.err


def test_comprehensions_nested_beyond_the_cost_bound_are_refused_at_load(tmp_path):
    nested = "objects.all(a, objects.all(b, objects.all(c, objects.all(d, a == d))))"
    folder = _rule(tmp_path, "ConfigMap", f"    reads: [ConfigMap]\n    expression: '{nested}'")
    with pytest.raises(RuleFileError) as info:
        load_rule_file(folder / "CEL001.yaml")
    assert "4 comprehensions" in info.value.message and info.value.line == 10


def test_an_expression_whose_estimated_cost_is_too_high_is_not_evaluable(run_cli, tmp_path):
    """Three comprehensions over 500 objects: 1.25e8 evaluations, above the bound; the
    subject is not evaluable, saying why, instead of the scan running for minutes."""
    nested = "objects.all(a, objects.all(b, objects.exists(c, a != b || b == c)))"
    folder = _rule(tmp_path, "ConfigMap", f"    reads: [ConfigMap]\n    expression: '{nested}'")
    manifest = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}, namespace: a}}\n"
                       for i in range(500))
    report = _scan(run_cli, tmp_path, manifest, folder)
    (result,) = report["rules"]
    assert result["status"] == "not-evaluable" and "estimated cost" in result["reason"]


@pytest.mark.parametrize("disguise", [
    "true // it's a comment\n&& {nested}",  # a quote in a comment opened a "string"
    "\"\\\\\" == \"\\\\\" && {nested}",  # a literal ending in a backslash "escaped" its quote
    "objects.all" + " " * 40 + "\n(a, objects.all(b, objects.all(c, objects.all(d, a == d))))",  # far '('
])
def test_a_disguised_nesting_is_still_counted(tmp_path, disguise):
    """The count skipped everything after such a comment or literal: four comprehensions
    over the objects then ran unbounded (issue 22 item 4)."""
    nested = "objects.all(a, objects.all(b, objects.all(c, objects.all(d, a == d))))"
    expression = disguise.format(nested=nested).replace("\n", "\n      ")
    folder = _rule(tmp_path, "ConfigMap", f"    reads: [ConfigMap]\n    expression: |-\n      {expression}")
    with pytest.raises(RuleFileError) as info:
        load_rule_file(folder / "CEL001.yaml")
    assert "4 comprehensions" in info.value.message


def test_a_chained_comprehension_bomb_is_refused_at_load(tmp_path):
    """Chained comprehensions (each at most 3 deep) escaped the nesting bound: their
    number in one expression is bounded too (issue 22 review)."""
    link = "objects.map(a, objects.exists(b, objects.all(c, a == c)))"
    chained = " && ".join(f"size({link}) > 0" for _ in range(5))
    folder = _rule(tmp_path, "ConfigMap", f"    reads: [ConfigMap]\n    expression: '{chained}'")
    with pytest.raises(RuleFileError) as info:
        load_rule_file(folder / "CEL001.yaml")
    assert "15 comprehensions" in info.value.message and "chained" in info.value.message
    assert info.value.line == 10


def test_chained_comprehensions_add_to_the_estimated_cost(run_cli, tmp_path):
    """Two nested comprehensions over 3,000 objects are 9e6; twelve such chains are 1.1e8,
    above the bound: not evaluable, saying why, rather than a long scan."""
    link = "objects.exists(a, objects.exists(b, a == b))"
    chained = " && ".join([link] * 6)
    folder = _rule(tmp_path, "ConfigMap", f"    reads: [ConfigMap]\n    expression: '{chained}'")
    manifest = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}, namespace: a}}\n"
                       for i in range(3000))
    report = _scan(run_cli, tmp_path, manifest, folder)
    (result,) = report["rules"]
    assert result["status"] == "not-evaluable" and "12 in all" in result["reason"]


def test_an_ordinary_chained_expression_is_accepted(run_cli, tmp_path):
    chained = ("object.data.map(k, object.data[k]).filter(v, v.startsWith(\"http\"))"
               ".exists(v, v.contains(\"@\"))")
    folder = _rule(tmp_path, "ConfigMap", f"    expression: '!({chained})'")
    load_rule_file(folder / "CEL001.yaml")
    manifest = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\n"
                "data: {p: 'http://proxy:3128', q: 'x@y'}\n")
    report = _scan(run_cli, tmp_path, manifest, folder)
    (result,) = report["rules"]
    assert result["status"] == "pass", report
