"""Reading every document a YAML parser reads: template text inside strings is content,
a bad document costs only itself, duplicate keys are named with both lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from hcpscan.sources import fastyaml
from hcpscan.sources.loader import load_paths
from tests.conftest import require

ALERTMANAGER = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: alertmanager-templates
  namespace: openshift-monitoring
data:
  slack.tmpl: |
    {{ define "slack.text" }}
    {{ range .Alerts }}* {{ .Annotations.summary }}
    {{ end }}
    {{ end }}
"""

PROMETHEUS_RULE = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: node-exporter-rules
  namespace: openshift-monitoring
spec:
  groups:
  - name: node-exporter
    rules:
    - alert: NodeFilesystemSpaceFillingUp
      annotations:
        description: "Filesystem on {{ $labels.device }} at {{ $labels.instance }} has only
          {{ printf \\"%.2f\\" $value }}% available space left."
        summary: '{{ range query "up" }}{{ .Labels.instance }}{{ end }}'
      expr: node_filesystem_avail_bytes{job="node-exporter"} < 0.4
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: app
spec:
  ports:
  - port: 443
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_go_templates_inside_strings_are_read(tmp_path, parser):
    path = _write(tmp_path, "monitoring.yaml", "\n---\n".join([ALERTMANAGER, PROMETHEUS_RULE,
                                                              SERVICE.format(name="after")]))
    result = load_paths([str(path)])
    assert result.diagnostics == []
    assert [o.kind for o in result.objects] == ["ConfigMap", "PrometheusRule", "Service"]
    assert "{{ range .Alerts }}" in result.objects[0].body["data"]["slack.tmpl"]


def test_template_breaking_the_structure_loses_only_its_document(tmp_path, parser):
    chart = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
             "  name: {{ include \"app.fullname\" . }}\n"
             "spec:\n  replicas: {{ .Values.replicas }}\n")
    path = _write(tmp_path, "gitops.yaml", "\n---\n".join([SERVICE.format(name="before"), chart,
                                                           PROMETHEUS_RULE]))
    result = load_paths([str(path)])
    assert [o.name for o in result.objects] == ["before", "node-exporter-rules"]
    (diag,) = result.diagnostics
    assert diag.line == 14 and diag.message.startswith("unrendered Helm template")
    assert "invalid YAML" in diag.message
    assert "include" in diag.message and "other documents were read" in diag.hint


def test_helm_control_lines_are_an_unrendered_template(tmp_path):
    chart = "{{- if .Values.enabled }}\n" + SERVICE.format(name="svc") + "{{- end }}\n"
    result = load_paths([str(_write(tmp_path, "service.yaml", chart))])
    assert result.objects == []
    (diag,) = result.diagnostics
    assert diag.line == 1 and "{{- if .Values.enabled }}" in diag.message


def test_a_bad_document_in_the_middle_does_not_end_the_file(tmp_path):
    text = "\n---\n".join([SERVICE.format(name="first"), "kind: [\n",
                           SERVICE.format(name="third"), SERVICE.format(name="fourth")])
    path = _write(tmp_path, "services.yaml", text)
    result = load_paths([str(path)])
    assert [o.name for o in result.objects] == ["first", "third", "fourth"]
    (diag,) = result.diagnostics
    assert diag.path == str(path) and diag.line == 11 and diag.message.startswith("invalid YAML")
    # the objects after the bad document keep their own lines
    assert [o.source.line for o in result.objects] == [1, 14, 24]


def test_field_lines_after_a_bad_document_are_found(tmp_path):
    from hcpscan.inventory import Inventory

    text = "\n---\n".join(["kind: [\n", SERVICE.format(name="after")])
    path = _write(tmp_path, "services.yaml", text)
    result = load_paths([str(path)])
    inventory = Inventory(result.objects, result.diagnostics)
    (service,) = result.objects
    assert inventory.locate(service, "spec.ports[0].port").line == 11


@pytest.fixture(params=["yaml-rs", "pyyaml"])
def parser(request, monkeypatch):
    """Both parse paths: the yaml-rs fast path (which hands duplicates to PyYAML) and
    PyYAML alone (whose plain-data builder hands them to the composing loader)."""
    if request.param == "pyyaml":
        monkeypatch.setattr(fastyaml, "yaml_rs", None)
    else:
        require(fastyaml.AVAILABLE, "yaml-rs (a dependency)")
    return request.param


def test_duplicate_keys_are_named_with_both_lines(tmp_path, parser):
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: proxy\n  namespace: app\n"
            "data:\n  HTTPS_PROXY: http://user:secret@proxy.corp:3128\n"
            "  NO_PROXY: .svc\n  HTTPS_PROXY: http://proxy.corp:3128\n")
    result = load_paths([str(_write(tmp_path, "proxy.yaml", text))])
    (diag,) = result.diagnostics
    assert diag.line == 9 and "'HTTPS_PROXY'" in diag.message
    assert "lines 7 and 9" in diag.message and "kubectl" in diag.message
    assert result.objects[0].body["data"]["HTTPS_PROXY"] == "http://proxy.corp:3128"


def test_duplicate_keys_in_a_list_entry_and_a_flow_mapping(tmp_path, parser):
    text = ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n"
            "  metadata: {name: s, name: t}\n")
    result = load_paths([str(_write(tmp_path, "list.yaml", text))])
    assert [(d.line, d.message.split(" (")[0]) for d in result.diagnostics] == \
        [(6, "duplicate key 'name'")]


def test_merge_keys_are_not_duplicates(tmp_path):
    text = ("base: &base {a: 1}\n---\napiVersion: v1\nkind: ConfigMap\n"
            "metadata: {name: m}\ndata:\n  <<: {a: '1'}\n  a: '2'\n")
    result = load_paths([str(_write(tmp_path, "merge.yaml", text))])
    assert result.diagnostics == []
    assert result.skipped.counts == {"not a manifest (YAML without kind or apiVersion)": 1}
    assert [o.name for o in result.objects] == ["m"]


def test_json_that_is_not_a_manifest_is_passed_over(tmp_path):
    # what a must-gather keeps beside the manifests: etcdctl and Prometheus API output
    etcd = tmp_path / "etcd_info"
    etcd.mkdir()
    (etcd / "endpoint_health.json").write_text('[{"endpoint": "https://10.0.0.5:2379", "health": true}]\n')
    (etcd / "member_list.json").write_text('{"header": {"cluster_id": 1}, "members": []}\n')
    (tmp_path / "alerts.json").write_text('{"status": "success", "data": {"alerts": '
                                          '[{"annotations": {"summary": "{{ $labels.pod }}"}}]}}\n')
    (tmp_path / "broken.json").write_text('{"apiVersion": "v1", "metadata": {"name": "x"}}\n')
    result = load_paths([str(tmp_path)])
    assert result.skipped.counts == {"not a manifest (JSON without kind or apiVersion)": 3}
    # JSON that means to be an object but lacks its kind is still reported
    assert [(Path(d.path).name, d.message) for d in result.diagnostics] == \
        [("broken.json", "document has no 'kind'")]
