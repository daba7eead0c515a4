"""One root cause, one finding: a noProxy string a chart renders into many workloads is
reported once, at its first place, naming every workload that reads it (issue 24 item 7)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.rules.harness import scan

RENDERED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: apps
spec:
  template:
    spec:
      containers:
      - name: main
        image: registry.corp.example.com/apps/{name}:1.0
        env:
        - name: HTTPS_PROXY
          value: http://proxy.corp.example.com:3128
        - name: NO_PROXY
          value: {no_proxy}
"""


def _chart(tmp_path: Path, no_proxy: str, names: list[str]) -> Path:
    (tmp_path / "rendered.yaml").write_text("---\n".join(
        RENDERED.format(name=n, no_proxy=no_proxy) for n in names))
    return tmp_path / "rendered.yaml"


def test_one_no_proxy_string_in_ten_workloads_is_one_finding(tmp_path: Path) -> None:
    names = [f"svc-{i}" for i in range(10)]
    report = scan([_chart(tmp_path, "localhost 127.0.0.1 .corp.example.com", names)],
                  ["PRX005", "PRX007"])
    by_rule: dict[str, list] = {}
    for f in report.findings:
        by_rule.setdefault(f.rule_id, []).append(f)
    assert {rule: len(found) for rule, found in by_rule.items()} == {"PRX005": 1, "PRX007": 1}
    for (finding,) in by_rule.values():
        assert finding.object.name == "svc-0"
        readers = [e for e in finding.evidence if e.startswith("also: ")]
        assert len(readers) == 9 and all(f"svc-{i}" in " ".join(readers) for i in range(1, 10))


def test_different_values_stay_different_findings(tmp_path: Path) -> None:
    text = (RENDERED.format(name="a", no_proxy="localhost") + "---\n"
            + RENDERED.format(name="b", no_proxy="127.0.0.1"))
    (tmp_path / "two.yaml").write_text(text)
    report = scan([tmp_path / "two.yaml"], ["PRX005"])
    assert sorted(f.object.name for f in report.findings) == ["a", "b"]


def test_fix_clears_every_reader_of_a_folded_value(tmp_path: Path, run_cli) -> None:
    # one finding for the root cause, but the value is written in each workload: `hcpscan fix`
    # must edit all of them, or the next scan reports the same problem at the second reader
    path = _chart(tmp_path, ".svc,127.0.0.1,localhost", ["svc-0", "svc-1", "svc-2"])
    result = run_cli("fix", str(path), "--select", "PRX005", "--no-progress")
    assert result.code in (0, 1), result.err
    assert path.read_text().count("value: .svc,127.0.0.1,localhost,.cluster.local") == 3
    after = run_cli("scan", str(path), "--select", "PRX005", "--format", "json", "--no-progress")
    assert json.loads(after.out)["findings"] == []


def test_an_annotation_on_the_first_reader_does_not_silence_the_others(tmp_path: Path) -> None:
    # hcpscan.io/ignore is the exemption of the object it is on; the other workloads that
    # read the same bad value are still reported, each at its own place
    docs = [RENDERED.format(name=n, no_proxy=".svc,127.0.0.1,localhost")
            for n in ("svc-0", "svc-1", "svc-2")]
    docs[0] = docs[0].replace("  namespace: apps\n", "  namespace: apps\n  annotations:\n"
                              "    hcpscan.io/ignore: 'PRX005: reaches nothing in-cluster'\n")
    (tmp_path / "rendered.yaml").write_text("---\n".join(docs))
    report = scan([tmp_path / "rendered.yaml"], ["PRX005"])
    shown = sorted((f.object.name, f.status.value) for f in report.findings)
    assert shown == [("svc-0", "suppressed"), ("svc-1", "fail"), ("svc-2", "fail")]
    for finding in report.findings:
        assert f"Deployment apps/{finding.object.name} " in finding.message


SEED_003 = Path(__file__).parents[2] / "fixtures" / "rules" / "PRX005" / "fail" / \
    "cluster-values-secret-and-configmap.yaml"


def test_a_value_read_by_many_is_worded_by_the_value_then_every_reader(tmp_path: Path) -> None:
    names = ["svc-0", "svc-1", "svc-2"]
    report = scan([_chart(tmp_path, "localhost 127.0.0.1 .corp.example.com", names)],
                  ["PRX005", "PRX007"])
    for finding in report.findings:
        assert finding.message.startswith("NO_PROXY 'localhost 127.0.0.1 .corp.example.com' "
                                          "(Deployment apps/svc-0 "), finding.message
        led, _, readers = finding.message.partition("; read by ")
        assert readers.split(", ") == [f"Deployment apps/{n} container main" for n in names]
        assert finding.data["readers"] == readers.split(", ")


def test_seed_003_cluster_values_span_configmap_and_secret_one_value_two_readers(run_cli) -> None:
    # the noProxy is in the ConfigMap, the proxy URLs in the same-named Secret: the finding
    # is the ConfigMap value's, and names both objects cluster-apps-operator reads together
    report = scan([SEED_003], ["PRX005", "PRX007"])
    assert sorted(f.rule_id for f in report.findings) == ["PRX005", "PRX007"]
    expected_readers = {"ConfigMap org-giantswarm/mycluster-cluster-values key values",
                        "Secret org-giantswarm/mycluster-cluster-values key values"}
    for finding in report.findings:
        assert finding.message.startswith("noProxy 'cluster.local,100.64.0.0/13,"), finding.message
        assert "(ConfigMap org-giantswarm/mycluster-cluster-values data.values)" in finding.message
        assert set(finding.message.partition("; read by ")[2].split(", ")) == expected_readers
        assert set(finding.data["readers"]) == expected_readers
    # the same wording in every report format a user reads
    table = run_cli("scan", str(SEED_003), "--select", "PRX005", "--no-progress")
    assert "noProxy 'cluster.local," in table.out and "read by" in table.out
    as_json = json.loads(run_cli("scan", str(SEED_003), "--select", "PRX005", "--format", "json",
                                 "--no-progress").out)
    (finding,) = as_json["findings"]
    assert finding["message"].startswith("noProxy 'cluster.local,")
    assert set(finding["data"]["readers"]) == expected_readers
    sarif = json.loads(run_cli("scan", str(SEED_003), "--select", "PRX005", "--format", "sarif",
                               "--no-progress").out)
    (result,) = sarif["runs"][0]["results"]
    assert result["message"]["text"].startswith("noProxy 'cluster.local,")
    assert all(r in result["message"]["text"] for r in expected_readers)


def test_one_reader_keeps_the_rules_own_wording(tmp_path: Path) -> None:
    report = scan([_chart(tmp_path, "localhost", ["only"])], ["PRX005"])
    (finding,) = report.findings
    assert finding.message.startswith("Deployment apps/only container main uses a proxy")
    assert "readers" not in finding.data


def test_a_configmap_value_many_workloads_read_is_not_repeated_as_also(tmp_path: Path) -> None:
    # the cert-manager chart's layout: one ConfigMap key read by three Deployments through
    # valueFrom; each reader's finding is already worded by the value with every reader, so
    # the folded ones add no "also: <the same sentence>" line
    docs = ["apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-proxy, namespace: apps}\n"
            "data:\n  no_proxy: localhost,127.0.0.1\n"]
    for name in ("svc-0", "svc-1", "svc-2"):
        docs.append(RENDERED.format(name=name, no_proxy="x").replace(
            "          value: x\n",
            "          valueFrom:\n            configMapKeyRef: {name: app-proxy, key: no_proxy}\n"))
    (tmp_path / "chart.yaml").write_text("---\n".join(docs))
    (finding,) = scan([tmp_path / "chart.yaml"], ["PRX005"]).findings
    assert finding.message.startswith("NO_PROXY 'localhost,127.0.0.1' (ConfigMap apps/app-proxy")
    assert f"also: {finding.message}" not in finding.evidence, finding.evidence
    assert len(finding.evidence) == len(set(finding.evidence))
