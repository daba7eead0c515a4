"""proxy_values conditions on built-in rules: template leftovers (issue 13), credentials kept
in Secrets, and portability judged only where a non-Go client reads the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from hcpscan.findings.fix import NoFix
from hcpscan.findings.model import Finding, Status
from tests.rules.harness import expected_markers, scan
from tests.rules.test_primitives_proxy import run as _scan

HOSTED_CLUSTER = """\
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata: {name: example, namespace: clusters}
spec:
  configuration:
    proxy:
      httpProxy: %s
      noProxy: %s
"""


def test_prx013_names_a_literal_no_value_a_renderer_left(tmp_path: Path) -> None:
    report = _scan(tmp_path, HOSTED_CLUSTER % ('"<no value>"', '".svc,<no value>"'), "PRX013")
    by_field = {f.field: f for f in report.findings}
    assert set(by_field) == {"spec.configuration.proxy.httpProxy", "spec.configuration.proxy.noProxy"}
    assert "template leftover '<no value>'" in by_field["spec.configuration.proxy.httpProxy"].message
    assert any("'<no value>' is the template leftover" in e
               for e in by_field["spec.configuration.proxy.noProxy"].evidence)
    assert by_field["spec.configuration.proxy.noProxy"].location.line == 8


def test_prx013_passes_a_clean_proxy_and_skips_an_unset_one(tmp_path: Path) -> None:
    clean = _scan(tmp_path, HOSTED_CLUSTER % ("http://proxy.corp:3128", ".svc,10.0.0.0/16"), "PRX013")
    assert clean.results[0].status is Status.PASS
    unset = _scan(tmp_path, "apiVersion: hypershift.openshift.io/v1beta1\nkind: HostedCluster\n"
                            "metadata: {name: e, namespace: clusters}\nspec: {}\n", "PRX013")
    assert unset.results[0].status is Status.NOT_APPLICABLE


def test_prx008_a_value_taken_from_a_secret_is_not_plain_text(tmp_path: Path) -> None:
    # the container reads every variable of the Secret (envFrom), none of it is plain text
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: a}
spec: {template: {spec: {containers: [{name: c, image: "app:1", envFrom: [{secretRef: {name: proxy-env}}]}]}}}
---
apiVersion: v1
kind: Secret
metadata: {name: proxy-env, namespace: a}
stringData:
  HTTPS_PROXY: http://u:S3cret@proxy.corp:3128
"""
    report = _scan(tmp_path, text, "PRX008")
    assert report.findings == []
    assert report.results[0].status is Status.PASS


TWINS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: demo}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      - name: c
        image: x
        env:
        - {name: HTTPS_PROXY, value: "%s"}
        - {name: https_proxy, value: "%s"}
"""


def test_one_value_in_both_spellings_of_one_container_is_one_finding(tmp_path: Path) -> None:
    """Issue 13: HTTPS_PROXY and https_proxy holding one URL in one consumer are one root
    cause: one finding whose evidence names both variables."""
    url = "http://user:s3cret@proxy.example.com:3128"
    report = _scan(tmp_path, TWINS % (url, url), "PRX008")
    [finding] = report.findings
    assert finding.field == "spec.template.spec.containers[0].env[0].value"
    assert any("HTTPS_PROXY and https_proxy" in e for e in finding.evidence), finding.evidence
    other = "http://other:pw@proxy.example.com:3128"  # two values: two findings
    assert len(_scan(tmp_path, TWINS % (url, other), "PRX008").findings) == 2


CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: app}
data:
  LOG_LEVEL: debug
  CALLBACK: %s
"""


def test_prx008_judges_plain_values_without_an_at_sign_and_fires_on_one_with_it(
        tmp_path: Path) -> None:
    """Plain text values without '@' are passed without being built (they cannot hold a
    credential); they still count as looked at, and a value with one is still judged."""
    clean = _scan(tmp_path, CONFIGMAP % "http://proxy.corp:3128", "PRX008")
    assert (clean.results[0].status, clean.results[0].objects_checked) == (Status.PASS, 1)
    leaked = _scan(tmp_path, CONFIGMAP % "http://svc:Zq9pw@proxy.corp:3128", "PRX008")
    assert leaked.results[0].status is Status.FAIL
    assert [(f.field, f.location.line) for f in leaked.findings] == [("data.CALLBACK", 6)]


def test_prx008_says_why_a_plain_field_is_moved_by_hand_by_its_object_and_field(tmp_path: Path) -> None:
    """A credential in a Deployment's command[]/args[] or inside a JSON env value was
    explained as 'the readers of a ConfigMap key'; each now names its object and field
    and the way out that field has ($(VAR) from a secretKeyRef, the whole value in a Secret)."""
    url = "http://svc:Zq9pass@proxy.corp.example.com:3128"
    text = f"""\
apiVersion: batch/v1
kind: CronJob
metadata: {{name: sync, namespace: app}}
spec:
  schedule: "@hourly"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: sync
            image: registry.example.com/sync:1
            command: ["/bin/sync", "--proxy={url}"]
            args: ["--https-proxy", "{url}"]
            env:
            - name: CONFIG_JSON
              value: '{{"proxy": "{url}"}}'
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: proxy, namespace: app}}
data:
  HTTPS_PROXY: {url}
"""
    report = _scan(tmp_path, text, "PRX008")
    fixes = {f.field: f.remedy.why for f in report.findings if isinstance(f.remedy, NoFix)}
    containers = "spec.jobTemplate.spec.template.spec.containers[0]"
    assert set(fixes) == {f"{containers}.command[1]", f"{containers}.args[1]",
                          f"{containers}.env[0].value", "data.HTTPS_PROXY"}, fixes
    for field in (f"{containers}.command[1]", f"{containers}.args[1]"):
        assert fixes[field].startswith(f"{field} of CronJob app/sync is a container's command line")
        assert "$(THAT_VARIABLE)" in fixes[field] and "ConfigMap" not in fixes[field]
    env = fixes[f"{containers}.env[0].value"]
    assert env.startswith(f"{containers}.env[0].value of CronJob app/sync is an env value that "
                          "holds the URL inside other text") and "ConfigMap" not in env
    assert fixes["data.HTTPS_PROXY"].startswith("data.HTTPS_PROXY of ConfigMap app/proxy is a "
                                                "ConfigMap key: its readers")
    assert not any("Zq9pass" in s for s in fixes.values())


def test_prx008_a_proxy_flag_a_consumer_reads_is_worded_as_a_command_line(tmp_path: Path) -> None:
    """The konnectivity sidecar's --http-proxy flag is a setting the model reads: its
    credential was explained as read 'through envFrom/valueFrom'."""
    fixture = Path(__file__).parents[2] / "fixtures/rules/PRX002/pass/control-plane-with-proxy.yaml"
    text = fixture.read_text().replace("--http-proxy=http://", "--http-proxy=http://svc:Zq9pass@")
    report = _scan(tmp_path, text, "PRX008")
    why = [f.remedy.why for f in report.findings if isinstance(f.remedy, NoFix)
           and f.field.endswith(".args[2]")]
    assert why and all(" is a container's command line" in w and "envFrom" not in w for w in why), why


PRX013_MUST_GATHER = Path(__file__).parents[2] / "fixtures/rules/PRX013/must-gather"


def _must_gather_case(case: str) -> list[Finding]:
    """The findings of the case's failing must-gather (exactly on its marked lines), after
    checking that its passing one is quiet and checked."""
    folder = PRX013_MUST_GATHER / case / "fail"
    report = scan([folder], ["PRX013"])
    assert {(f.location.path, f.location.line) for f in report.findings} == \
        expected_markers(folder, "PRX013")
    passing = scan([PRX013_MUST_GATHER / case / "pass"], ["PRX013"])
    assert (passing.findings, passing.results[0].status) == ([], Status.PASS)
    return report.findings


def test_prx013_a_proxy_the_network_operator_refuses_is_said_to_be_rejected_whole() -> None:
    """A `*.domain` noProxy entry (rosa#724, openshift-docs#1864): the cluster-network-operator
    accepts `*` only as the whole value, refuses the entry and with it the whole Proxy, whose
    status stays as it was; as a must-gather collects it."""
    [finding] = _must_gather_case("wildcard-noproxy")
    assert "'*.apps.internal.example.com'" in finding.message
    assert "rejects the whole Proxy" in finding.message and "status as it was" in finding.message
    assert any("write '.apps.internal.example.com'" in e for e in finding.evidence)


def test_prx013_a_password_with_a_slash_is_told_to_be_percent_encoded() -> None:
    """rosa#3052: `http://u:Qv/trk@host:8080` was reported as 'port is not a number; carries
    a path' (what Go's url.Parse makes of it); the finding now names the unescaped '/' in the
    password and its encoding, and says nothing of a port or path the user never wrote."""
    findings = _must_gather_case("password-slash")
    assert {f.field for f in findings} == {"spec.httpProxy", "spec.httpsProxy"}
    for finding in findings:
        assert "password holds '/' unescaped" in finding.message and "%2F" in finding.message
        assert "not a number" not in finding.message and "carries a path" not in finding.message
        assert "trkCiY5" not in " ".join([finding.message, *finding.evidence])


@pytest.mark.parametrize(("url", "said"), [
    ("http://u:p?x#y@proxy.corp:3128", "'?', '#' unescaped"),
    ("http://u:p^s[s@proxy.corp:3128", "invalid userinfo"),
    ("http://u:p%zzs@proxy.corp:3128", "as %25"),
    ("http://u:p ss@proxy.corp:3128", "U+0020 unescaped"),
])
def test_prx013_other_userinfo_go_cannot_parse(tmp_path: Path, url: str, said: str) -> None:
    report = _scan(tmp_path, HOSTED_CLUSTER % (f'"{url}"', ".svc"), "PRX013")
    [finding] = report.findings
    assert said in finding.message, finding.message


def test_prx013_a_password_go_reads_is_not_faulted(tmp_path: Path) -> None:
    """'@' in a password is Go's too (the last '@' ends the userinfo); %XX escapes are read."""
    for url in ("http://u:p@ss@proxy.corp:3128", "http://u%2F:p%2F%40@proxy.corp:3128"):
        report = _scan(tmp_path, HOSTED_CLUSTER % (f'"{url}"', ".svc"), "PRX013")
        assert report.findings == [], url


def test_prx013_other_consumers_keep_their_wildcard_suffix(tmp_path: Path) -> None:
    """Only OpenShift's validators refuse `*.domain`: an AddOnDeploymentConfig
    (read by Go's httpproxy, which strips `*.`) is judged as before; PRX007 judges clients."""
    text = """\
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: proxy-config, namespace: cluster1}
spec:
  proxyConfig:
    httpsProxy: http://proxy.corp.example.com:3128
    noProxy: .svc,*.apps.example.com,registry.corp.example.com:5000
"""
    report = _scan(tmp_path, text, "PRX013")
    assert (report.findings, report.results[0].status) == ([], Status.PASS)


CLUSTER_CONFIG_V1 = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-config-v1
  namespace: kube-system
data:
  install-config: |
    apiVersion: v1
    baseDomain: example.com
    metadata:
      name: ocp
    networking:
      machineNetwork:
      - cidr: 10.0.0.0/16
    platform:
      none: {}
    proxy:
      httpProxy: http://proxy.corp.example.com:3128
      noProxy: %s
"""


def test_prx013_names_the_entry_openshift_install_refuses_in_cluster_config_v1(
        tmp_path: Path) -> None:
    """openshift-docs#25195: openshift-install refuses spaces and `*.` entries in
    `proxy.noProxy`; the install-config kept in kube-system/cluster-config-v1 is judged too."""
    report = _scan(tmp_path, CLUSTER_CONFIG_V1 % ".corp.example.com, *.apps.ocp.example.com",
                   "PRX013")
    [finding] = report.findings
    assert "'*.apps.ocp.example.com'" in finding.message and "spaces" in finding.message
    assert "openshift-install refuses the install-config" in finding.message
    assert finding.field == "data.install-config"
    clean = _scan(tmp_path, CLUSTER_CONFIG_V1 % ".corp.example.com,.apps.ocp.example.com", "PRX013")
    assert (clean.findings, clean.results[0].status) == ([], Status.PASS)


def test_prx013_a_proxy_with_only_no_proxy_is_rejected_whole(tmp_path: Path) -> None:
    text = "apiVersion: config.openshift.io/v1\nkind: Proxy\nmetadata: {name: cluster}\n" \
           "spec:\n  noProxy: \"*\"\n  trustedCA: {name: \"\"}\n"
    [finding] = _scan(tmp_path, text, "PRX013").findings
    assert "without httpProxy or httpsProxy" in finding.message
    assert "rejects the whole Proxy" in finding.message
