"""The ``agreement`` template on its own: a user's rule from --rules DIR, and each of its
parameters (match, missing, when, relations) deciding as documented."""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from hcpscan.rules.loader import RuleFileError, builtin_rules_dir, load_rule_dirs, load_rule_file
from hcpscan.rules.templates import TEMPLATES
from tests.conftest import FIXTURES
from tests.rules.harness import expected_markers

BASE = FIXTURES / "agreement"
OWNED = ("PRX002", "PRX003", "PRX004", "PRX006", "PRX009", "PRX010", "OCM001", "OCM003")

HOSTED_CLUSTER = """\
    apiVersion: hypershift.openshift.io/v1beta1
    kind: HostedCluster
    metadata: {name: prod, namespace: clusters}
    spec:
      configuration:
        proxy: {httpsProxy: "http://proxy.corp.example.com:3128", noProxy: ".corp.example.com,10.0.0.0/16"}
    """


def _deployment(env: str, namespace: str = "clusters-prod") -> str:
    return textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: tool, namespace: {namespace}}}
        spec:
          template:
            spec:
              containers:
              - name: tool
                image: quay.io/acme/tool:1.0
                env: {env}
        """)


def _scan(run_cli, tmp_path: Path, params: str, *documents: str, kinds: str = "[Deployment]",
          message: str = "{consumer}: {problem}") -> tuple[dict, dict]:
    """Scan ``documents`` with one user rule on ``agreement`` with ``params`` (YAML)."""
    rules = tmp_path / "rules"
    rules.mkdir(exist_ok=True)
    (rules / "ACME900.yaml").write_text(
        f"id: ACME900\ntitle: Agreement under test\nseverity: high\nmessage: \"{message}\"\n"
        f"applies_to: {{kinds: {kinds}}}\ncheck:\n  template: agreement\n  params:\n"
        + textwrap.indent(textwrap.dedent(params), "    "))
    (tmp_path / "input.yaml").write_text("---\n".join(textwrap.dedent(d) for d in documents))
    result = run_cli("scan", str(tmp_path / "input.yaml"), "--rules", str(rules), "--select",
                     "ACME900", "--no-config", "--format", "json")
    assert result.code in (0, 1), result.err
    report = json.loads(result.out)
    (rule,) = report["rules"]
    return report, rule


# -- the user's rule of fixtures/agreement ---------------------------------------------------


def test_users_rule_fires_on_the_marked_lines(run_cli):
    folder = BASE / "cases" / "ACME101" / "fail"
    result = run_cli("scan", str(folder), "--rules", str(BASE / "rules"), "--select", "ACME101",
                     "--no-config", "--format", "json")
    report = json.loads(result.out)
    found = {(f["location"]["path"], f["location"]["line"]) for f in report["findings"]}
    assert found == expected_markers(folder, "ACME101")
    assert report["rules"][0]["status"] == "fail"
    messages = sorted(f["message"] for f in report["findings"])
    assert messages[1].endswith("container mirror: NO_PROXY lacks 10.0.0.0/16")
    # the lab HostedCluster sets no proxy: its Deployment is not judged at all
    assert all("clusters-lab" not in m for m in messages)


def test_users_rule_passes_having_checked_its_deployment(run_cli):
    result = run_cli("scan", str(BASE / "cases" / "ACME101" / "pass"), "--rules",
                     str(BASE / "rules"), "--select", "ACME101", "--no-config", "--format", "json")
    (rule,) = json.loads(result.out)["rules"]
    assert (rule["status"], rule["objects_checked"]) == ("pass", 1), rule["reason"]


# -- parameters ----------------------------------------------------------------------------------

HC_REFERENCE = """\
    consumers: {role: container}
    reference: {relation: hosted-cluster}
    fields: [httpsProxy, noProxy]
    """


@pytest.mark.parametrize("match, status", [("contains", "pass"), ("equal", "fail")])
def test_contains_accepts_extra_no_proxy_entries_equal_does_not(run_cli, tmp_path, match, status):
    env = ("[{name: HTTPS_PROXY, value: 'http://proxy.corp.example.com:3128'}, "
           "{name: NO_PROXY, value: '10.0.0.0/16,.corp.example.com,.svc'}]")
    report, rule = _scan(run_cli, tmp_path, HC_REFERENCE + f"match: {match}\n", HOSTED_CLUSTER,
                         _deployment(env))
    assert rule["status"] == status, rule["reason"]
    if status == "fail":
        assert report["findings"][0]["message"].endswith("NO_PROXY has in addition .svc")


@pytest.mark.parametrize("missing, status", [("fail", "fail"), ("ok", "pass")])
def test_missing_decides_a_field_set_on_one_side_only(run_cli, tmp_path, missing, status):
    env = "[{name: HTTPS_PROXY, value: 'http://proxy.corp.example.com:3128'}]"
    report, rule = _scan(run_cli, tmp_path, HC_REFERENCE + f"missing: {missing}\n", HOSTED_CLUSTER,
                         _deployment(env))
    assert rule["status"] == status, rule["reason"]
    if status == "fail":
        (finding,) = report["findings"]
        assert finding["message"].endswith("container tool: no NO_PROXY")
        assert finding["field"] == "spec.template.spec.containers[0].env"


def test_without_its_hosted_cluster_a_deployment_is_not_evaluable(run_cli, tmp_path):
    env = "[{name: HTTPS_PROXY, value: 'http://proxy.corp.example.com:3128'}]"
    _, rule = _scan(run_cli, tmp_path, HC_REFERENCE, _deployment(env, "clusters-other"))
    assert rule["status"] == "not-evaluable"
    assert "no HostedCluster (or HostedControlPlane) whose HCP namespace is clusters-other " \
           "is in the input" in rule["reason"]


def test_uses_proxy_makes_a_reference_without_proxy_not_applicable(run_cli, tmp_path):
    lab = """\
        apiVersion: hypershift.openshift.io/v1beta1
        kind: HostedCluster
        metadata: {name: prod, namespace: clusters}
        spec: {}
        """
    env = "[{name: HTTPS_PROXY, value: 'http://elsewhere:3128'}]"
    _, judged = _scan(run_cli, tmp_path, HC_REFERENCE, lab, _deployment(env))
    assert judged["status"] == "fail"  # equal: the reference sets no proxy, the container does
    _, scoped = _scan(run_cli, tmp_path, HC_REFERENCE + "when: {uses_proxy: true}\n", lab,
                      _deployment(env))
    assert (scoped["status"], scoped["reason"]) == ("not-applicable", "the hosted cluster uses no proxy")


def test_variable_case_compares_a_consumers_own_spellings(run_cli, tmp_path):
    params = """\
        consumers: {role: container}
        reference: {relation: variable-case}
        fields: [httpsProxy, noProxy]
        missing: ok
        """
    env = ("[{name: HTTPS_PROXY, value: 'http://a:3128'}, {name: https_proxy, value: 'http://b:3128'},"
           " {name: NO_PROXY, value: '.svc'}]")
    report, rule = _scan(run_cli, tmp_path, params, _deployment(env))
    (finding,) = report["findings"]
    assert finding["message"].endswith("HTTPS_PROXY and https_proxy differ")
    assert finding["field"] == "spec.template.spec.containers[0].env[1].value"  # the lower case
    assert any(e.startswith("each client takes: HTTPS_PROXY: go") for e in finding["evidence"])


KUBECONFIG_PROXY_URL = """\
    consumers: {role: kubeconfig}
    reference: {relation: managed-cluster}
    fields: [proxy-url]
    match: present
    when: {proxied: server}
    """
MANAGED_PROXY = """\
    apiVersion: config.openshift.io/v1
    kind: Proxy
    metadata: {name: cluster}
    spec: {httpsProxy: "http://proxy.corp.example.com:3128", noProxy: ".internal.example.com"}
    """


def _kubeconfig_secret(name: str, host: str) -> str:
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: Secret
        metadata: {{name: {name}, namespace: agents}}
        stringData:
          kubeconfig: |
            apiVersion: v1
            kind: Config
            clusters: [{{name: hub, cluster: {{server: "https://{host}:6443"}}}}]
            contexts: [{{name: hub, context: {{cluster: hub}}}}]
            current-context: hub
        """)


def test_present_with_proxied_destination_judges_a_kubeconfig(run_cli, tmp_path):
    params, proxy = KUBECONFIG_PROXY_URL, MANAGED_PROXY
    report, rule = _scan(run_cli, tmp_path, params, proxy, _kubeconfig_secret("hub", "api.hub.example.com"),
                         kinds="[Secret]", message="{destination} through {proxy}")
    assert rule["status"] == "fail"
    assert report["findings"][0]["message"] == ("https://api.hub.example.com:6443 through "
                                                "http://proxy.corp.example.com:3128")
    _, direct = _scan(run_cli, tmp_path, params, proxy,
                      _kubeconfig_secret("hub", "api.internal.example.com"), kinds="[Secret]")
    assert (direct["status"], direct["objects_checked"]) == ("pass", 1)


def test_schema_errors_are_shown_at_their_lines(tmp_path):
    path = tmp_path / "ACME901.yaml"
    path.write_text(textwrap.dedent("""\
        id: ACME901
        title: Agreement under test
        severity: low
        message: "{consumer} disagrees"
        applies_to: {kinds: [Deployment]}
        check:
          template: agreement
          params:
            consumers: {role: sidecar}
            reference: {relation: hosted-cluster}
            fields: [httpProxy, color]
        """))
    with pytest.raises(RuleFileError) as err:
        load_rule_file(path)
    lines = {line for line, _ in err.value.problems}
    assert lines == {9, 11}, err.value.problems


def test_reads_follow_the_role_and_the_relation():
    template = TEMPLATES["agreement"]
    reads = template.reads_for({"consumers": {"role": "container"}, "reference": {"relation": "hosted-cluster"}})
    assert set(reads) == {"ConfigMap", "Secret", "HostedCluster", "HostedControlPlane"}
    reads = template.reads_for({"consumers": {"role": "kubeconfig"},
                                "reference": {"relation": "management-proxy"}})
    assert reads == ("Proxy",)


def test_templates_show_documents_roles_relations_and_fields(run_cli):
    result = run_cli("templates", "show", "agreement")
    assert result.code == 0
    for word in ("konnectivity-path", "bootstrap-file", "variable-case", "cluster-values",
                 "{reference_field}", "{destination}", "Proxy"):
        assert word in result.out, word


def test_the_agreement_rules_share_one_template():
    """No template other than cel serves exactly one built-in rule (issue 12), for the rules
    this template took over."""
    rules = {r.id: r for r in load_rule_dirs([builtin_rules_dir()])}
    assert {rules[i].template for i in OWNED} == {"agreement"}
    uses = Counter(r.template for r in rules.values())
    assert all(uses[rules[i].template] >= 2 for i in OWNED)


def test_the_manual_shows_the_fixtures_rule():
    import yaml

    readme = (Path(__file__).parents[2] / "docs" / "manual.md").read_text()
    block = readme.split("uses its HostedCluster's proxy (`fixtures/agreement/`):\n\n```yaml\n")[1]
    shown = yaml.safe_load(block.split("```")[0])
    rule = yaml.safe_load((BASE / "rules" / "ACME101.yaml").read_text())
    assert (shown["applies_to"], shown["check"]) == (rule["applies_to"], rule["check"])


def test_a_shared_reference_gives_each_finding_its_own_evidence(run_cli, tmp_path):
    """The managed cluster's proxy is resolved once per scan; two kubeconfigs judged against
    it must not collect each other's evidence."""
    report, rule = _scan(run_cli, tmp_path, KUBECONFIG_PROXY_URL, MANAGED_PROXY,
                         _kubeconfig_secret("one", "api.hub.example.com"),
                         _kubeconfig_secret("two", "api2.hub.example.com"), kinds="[Secret]")
    assert rule["status"] == "fail" and len(report["findings"]) == 2
    for finding in report["findings"]:
        said = [e for e in finding["evidence"] if "go(es) through" in e]
        assert len(said) == 1, finding["evidence"]


KCP = """\
    apiVersion: controlplane.cluster.x-k8s.io/v1beta1
    kind: KubeadmControlPlane
    metadata: {name: mycluster, namespace: org-acme}
    spec:
      kubeadmConfigSpec:
        files:
        - path: /etc/systemd/system/containerd.service.d/http-proxy.conf
          content: |
            [Service]
            Environment="%s"
    """
VALUES = """\
    apiVersion: v1
    kind: Secret
    metadata: {name: mycluster-cluster-values, namespace: org-acme}
    stringData:
      values: |
        cluster:
          proxy: {https: "http://192.168.52.220:3128"}
    """


@pytest.mark.parametrize("environment, status", [
    ("https_proxy=http://192.168.52.220:3128", "pass"),
    ("NO_PROXY=.svc", "fail"),
])
def test_prx009_reads_a_control_planes_inline_drop_in(tmp_path, environment, status):
    from tests.rules.harness import scan

    (tmp_path / "input.yaml").write_text(textwrap.dedent(VALUES) + "---\n" + textwrap.dedent(KCP % environment))
    report = scan([tmp_path / "input.yaml"], ["PRX009"])
    assert report.results[0].status.value == status, report.results[0].reason
    if status == "fail":
        (finding,) = report.findings
        assert finding.field == "spec.kubeadmConfigSpec.files[0].content"
        assert finding.message.endswith("(cluster mycluster) writes /etc/systemd/system/"
                                        "containerd.service.d/http-proxy.conf without HTTP_PROXY or "
                                        "HTTPS_PROXY")


def test_a_url_differing_only_in_the_case_of_its_scheme_and_host_agrees():
    """OCM009 said an add-on kubeconfig's proxy-url `HTTP://Proxy.corp.example.com:3128/`
    differs from the klusterlet's `http://proxy.corp.example.com:3128`: every client dials
    the same proxy (scheme and host are case-insensitive); a password's case still counts."""
    from hcpscan.rules.templates.noproxy_coverage import same_url

    assert same_url("HTTP://Proxy.corp.example.com:3128/", "http://proxy.corp.example.com:3128")
    assert same_url("https://u:P@ss@PROXY.corp:3129", "https://u:P@ss@proxy.corp:3129")
    assert not same_url("http://u:Secret@proxy.corp:3128", "http://u:secret@proxy.corp:3128")
    assert not same_url("http://proxy.corp:3128/A", "http://proxy.corp:3128/a")
    assert not same_url("http://proxy.corp:3128", "http://proxy.corp:3129")
