"""Exposure analysis (``connectivity --exposure``) beyond the netpol-analyzer oracle: an HCP
namespace, how rule selectors are matched to the stand-ins for unknown pods, and the CLI."""

from __future__ import annotations

import json

from hcpscan.analysis.reachability.connlist import Focus, connection_list
from hcpscan.analysis.reachability.openness import (
    ENTIRE_CLUSTER,
    exposure_report,
    exposure_text,
    exposure_title,
    requirements,
)
from hcpscan.analysis.reachability.selectors import LabelSelector

# An HCP namespace: the ignition server open to every namespace on 9090 (the NodePort path
# reaches it from the nodes' namespaces), the kube-apiserver open to outside addresses and
# to the monitoring namespaces, etcd only to the apiserver, and an unprotected operator.
HCP = """\
apiVersion: v1
kind: Namespace
metadata: {name: clusters-edge, labels: {hypershift.openshift.io/hosted-control-plane: "true"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ignition-server, namespace: clusters-edge}
spec:
  template:
    metadata: {labels: {app: ignition-server}}
    spec: {containers: [{name: s, ports: [{containerPort: 9090}]}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: kube-apiserver, namespace: clusters-edge}
spec:
  template:
    metadata: {labels: {app: kube-apiserver}}
    spec: {containers: [{name: s, ports: [{containerPort: 6443, name: client}]}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: etcd, namespace: clusters-edge}
spec:
  template:
    metadata: {labels: {app: etcd}}
    spec: {containers: [{name: s, ports: [{containerPort: 2379}]}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: control-plane-operator, namespace: clusters-edge}
spec:
  template:
    metadata: {labels: {app: control-plane-operator}}
    spec: {containers: [{name: s}]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: ignition, namespace: clusters-edge}
spec:
  podSelector: {matchLabels: {app: ignition-server}}
  policyTypes: [Ingress]
  ingress:
  - from: [{namespaceSelector: {}}]
    ports: [{port: 9090}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: kas, namespace: clusters-edge}
spec:
  podSelector: {matchLabels: {app: kube-apiserver}}
  policyTypes: [Ingress]
  ingress:
  - from: [{ipBlock: {cidr: 0.0.0.0/0}}]
    ports: [{port: client}]
  - from: [{namespaceSelector: {matchLabels: {network.openshift.io/policy-group: monitoring}}}]
    ports: [{port: 6443}, {port: 9443}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: etcd, namespace: clusters-edge}
spec:
  podSelector: {matchLabels: {app: etcd}}
  policyTypes: [Ingress, Egress]
  ingress:
  - from: [{podSelector: {matchLabels: {app: kube-apiserver}}}]
    ports: [{port: 2379}]
"""

NS = "clusters-edge"


def _report(inventory, focus: Focus | None = None):
    listed = connection_list(inventory)
    if focus is not None:
        listed = listed.focused(focus)
    return exposure_report(inventory, listed, focus)


def _lines(report) -> set[tuple[str, str, str, str]]:
    return {(x.workload.split("/")[1], x.direction, x.peer, str(x.openness)) for x in report.lines}


def test_ignition_server_is_open_to_every_namespace_on_its_port(manifests):
    report = _report(manifests(HCP))
    assert ("ignition-server[Deployment]", "ingress", ENTIRE_CLUSTER, "TCP 9090") in _lines(report)
    # its egress is not restricted: open to everything there, and said so
    unprotected = {(u.workload, u.direction) for u in report.unprotected}
    assert (f"{NS}/ignition-server[Deployment]", "egress") in unprotected
    assert (f"{NS}/ignition-server[Deployment]", "ingress") not in unprotected


def test_apiserver_lines_name_the_monitoring_namespaces_and_the_outside(manifests):
    lines = _lines(_report(manifests(HCP)))
    kas = {line for line in lines if line[0] == "kube-apiserver[Deployment]"}
    assert ("kube-apiserver[Deployment]", "ingress",
            "[namespace with {network.openshift.io/policy-group=monitoring}]/[all pods]",
            "TCP 6443,9443") in kas
    # the named port resolves on the apiserver's own container port
    assert ("kube-apiserver[Deployment]", "ingress", "0.0.0.0-255.255.255.255[External]",
            "TCP 6443") in kas
    # nothing of the apiserver is open to every namespace
    assert not any(line[2] == ENTIRE_CLUSTER and line[1] == "ingress" for line in kas)


def test_a_rule_matched_by_a_pod_of_the_input_names_no_unknown_pods(manifests):
    """etcd admits the apiserver's pods, which the input holds: no exposure on ingress,
    and its egress is isolated with no rule, so etcd is not exposed at all."""
    report = _report(manifests(HCP))
    assert not any("etcd" in x.workload for x in report.lines)
    assert not any("etcd" in u.workload for u in report.unprotected)


def test_unprotected_workload_is_open_both_ways(manifests):
    report = _report(manifests(HCP))
    cpo = f"{NS}/control-plane-operator[Deployment]"
    assert {(u.workload, u.direction) for u in report.unprotected if u.workload == cpo} == {
        (cpo, "ingress"), (cpo, "egress")}
    text = exposure_text(report, exposure_title(None))
    assert f"{cpo} is not protected on Ingress" in text
    assert any(t.startswith(cpo) and "<= \tentire-cluster : All Connections" in t for t in text)


ANP_EXCEPTION = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: s, ports: [{containerPort: 8080}]}]}
---
apiVersion: policy.networking.k8s.io/v1alpha1
kind: AdminNetworkPolicy
metadata: {name: no-scrapers}
spec:
  priority: 5
  subject: {namespaces: {matchLabels: {kubernetes.io/metadata.name: shop}}}
  ingress:
  - name: deny-scrapers
    action: Deny
    from: [{pods: {namespaceSelector: {}, podSelector: {matchLabels: {role: scraper}}}}]
  - name: allow-all
    action: Allow
    from: [{namespaces: {}}]
"""


def test_an_admin_deny_is_an_exception_cut_out_of_the_entire_cluster(manifests):
    lines = _lines(_report(manifests(ANP_EXCEPTION)))
    assert ("web[Deployment]", "ingress", ENTIRE_CLUSTER, "All Connections") in lines
    assert ("web[Deployment]", "ingress", "[all namespaces]/[pod with {role=scraper}]",
            "No Connections") in lines


def test_focus_on_one_connection_keeps_only_lines_that_allow_it(manifests):
    report = _report(manifests(HCP), Focus(connection=("TCP", 9443)))
    outside = "0.0.0.0-255.255.255.255[External]"
    kas, cpo, ign = "kube-apiserver", "control-plane-operator", "ignition-server"
    assert {(x.workload.split("/")[1].split("[")[0], x.direction, x.peer)
            for x in report.lines} == {
        (kas, "ingress", "[namespace with {network.openshift.io/policy-group=monitoring}]/[all pods]"),
        (kas, "egress", ENTIRE_CLUSTER), (kas, "egress", outside),  # egress is not isolated
        (cpo, "ingress", ENTIRE_CLUSTER), (cpo, "egress", ENTIRE_CLUSTER),
        (cpo, "ingress", outside), (cpo, "egress", outside),
        (ign, "egress", ENTIRE_CLUSTER), (ign, "egress", outside)}
    assert all(str(x.openness) == "TCP 9443" for x in report.lines)
    assert not report.unprotected  # netpol-analyzer names none in a list on one connection


def test_selectors_requiring_the_same_are_one_stand_in():
    one = LabelSelector.parse({"matchLabels": {"app": "x"}})
    same = LabelSelector.parse({"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["x"]}]})
    wider = LabelSelector.parse({"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["x", "y"]}]})
    assert requirements(one) == requirements(same)
    assert requirements(one) != requirements(wider)  # overlap is not the same requirement
    assert requirements(LabelSelector()) == requirements(None) == ()


def test_cli_exposure_in_text_json_and_dot(manifests, run_cli, tmp_path):
    path = tmp_path / "hcp.yaml"
    path.write_text(HCP)
    text = run_cli("connectivity", "--no-progress", str(path), "--exposure")
    assert text.code == 0, text.err
    assert "Exposure Analysis Result:" in text.out and "Ingress Exposure:" in text.out
    (line,) = [t for t in text.out.splitlines() if t.startswith(f"{NS}/ignition-server") and "<=" in t]
    # the workload column is as wide as the longest exposed workload, then a tab
    assert line == f"{NS}/ignition-server[Deployment]{' ' * 7} \t<= \tentire-cluster : TCP 9090"
    doc = json.loads(run_cli("connectivity", "--no-progress", str(path), "--exposure",
                             "--format", "json").out)
    assert {"src": "entire-cluster", "dst": f"{NS}/ignition-server[Deployment]",
            "conn": "TCP 9090", "cluster": doc["connections"][0]["cluster"]} in doc["exposure"]["ingress"]
    dot = run_cli("connectivity", "--no-progress", str(path), "--exposure", "--format", "dot").out
    assert '"entire-cluster" -> "clusters-edge/ignition-server[Deployment]"' in dot
    assert "pods not in the input" in dot


def test_cli_exposure_answers_no_question(run_cli, tmp_path):
    path = tmp_path / "hcp.yaml"
    path.write_text(HCP)
    result = run_cli("connectivity", "--no-progress", str(path), "--exposure",
                     "--to", f"{NS}/kube-apiserver")
    assert result.code == 2 and "--exposure" in result.err and result.out == ""


def test_user_defined_networks_are_said_to_be_left_out(run_cli):
    from .test_conformance_extended import EXTENDED

    case = next(p for p in sorted((EXTENDED / "udn").iterdir()) if p.name.startswith("udn_"))
    result = run_cli("connectivity", "--no-progress", str(case / "input"), "--exposure")
    assert result.code == 0
    assert "Exposure Analysis Result:" in result.out
    assert "exposure analysis" in result.err and "UserDefinedNetworks" in result.err


def test_exposure_is_no_diff_option(run_cli, tmp_path):
    path = tmp_path / "hcp.yaml"
    path.write_text(HCP)
    result = run_cli("connectivity", "--no-progress", "diff", str(path), str(path), "--exposure")
    assert result.code == 2 and "--exposure" in result.err and result.out == ""


def test_every_exposure_case_is_compared_with_the_oracle():
    from .test_conformance_extended import CASES, _meta, missing_feature

    exposure = [c for c in CASES if _meta(c)["category"] == "exposure"]
    assert len(exposure) == 46
    # the one left is the Ingress-port deviation, held to its own test there
    assert [c.name for c in exposure if missing_feature(_meta(c)) is not None] == [
        "k8s_ingress_test_new_exposure_output"]


ANP_NAMED_EGRESS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: agent, namespace: telemetry}
spec:
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: c, ports: [{name: metrics, containerPort: 9100}]}]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: lockdown, namespace: telemetry}
spec: {podSelector: {}, policyTypes: [Ingress, Egress]}
---
apiVersion: policy.networking.k8s.io/v1alpha1
kind: AdminNetworkPolicy
metadata: {name: scrape-anywhere}
spec:
  priority: 5
  subject: {namespaces: {matchLabels: {kubernetes.io/metadata.name: telemetry}}}
  egress:
  - name: FIRST
    action: Allow
    to: [{namespaces: {}}]
    ports: [{namedPort: metrics}]
"""


def test_an_admin_named_port_towards_the_entire_cluster_is_kept_by_name(manifests):
    """An AdminNetworkPolicy namedPort has no protocol of its own: kept by its name alone."""
    lines = _lines(_report(manifests(ANP_NAMED_EGRESS.replace("FIRST", "metrics-anywhere"))))
    assert ("agent[Deployment]", "egress", ENTIRE_CLUSTER, " metrics") in lines
    # a Deny of every connection before it leaves the named port nothing to open
    denied = ANP_NAMED_EGRESS.replace("  - name: FIRST", "  - name: none\n    action: Deny\n"
                                      "    to: [{namespaces: {}}]\n  - name: FIRST")
    assert not [x for x in _lines(_report(manifests(denied))) if x[1] == "egress"]


BANP_NAMED_EGRESS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: agent, namespace: telemetry}
spec:
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: c, ports: [{name: metrics, containerPort: 9100}]}]}
---
apiVersion: policy.networking.k8s.io/v1alpha1
kind: BaselineAdminNetworkPolicy
metadata: {name: default}
spec:
  subject: {namespaces: {matchLabels: {kubernetes.io/metadata.name: telemetry}}}
  egress:
  - name: scrape-anywhere
    action: Allow
    to: [{namespaces: {}}]
    ports: [{namedPort: metrics}]
  - name: nothing-else
    action: Deny
    to: [{namespaces: {}}]
"""


def test_a_baseline_named_port_towards_the_entire_cluster_is_kept_by_name(manifests):
    """The baseline's Allow namedPort opens the same way when no NetworkPolicy isolates the
    workload: the line was missing, as if the baseline denied everything."""
    lines = _lines(_report(manifests(BANP_NAMED_EGRESS)))
    assert ("agent[Deployment]", "egress", ENTIRE_CLUSTER, " metrics") in lines
    # a NetworkPolicy isolating egress takes the baseline's place: nothing is open
    isolated = BANP_NAMED_EGRESS + ("---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
                                    "metadata: {name: lockdown, namespace: telemetry}\n"
                                    "spec: {podSelector: {}, policyTypes: [Egress]}\n")
    assert not [x for x in _lines(_report(manifests(isolated))) if x[1] == "egress"]
    # an AdminNetworkPolicy denying everything first leaves the baseline nothing to open
    denied = BANP_NAMED_EGRESS + (
        "---\napiVersion: policy.networking.k8s.io/v1alpha1\nkind: AdminNetworkPolicy\n"
        "metadata: {name: deny}\nspec:\n  priority: 1\n"
        "  subject: {namespaces: {matchLabels: {kubernetes.io/metadata.name: telemetry}}}\n"
        "  egress: [{name: all, action: Deny, to: [{namespaces: {}}]}]\n")
    assert not [x for x in _lines(_report(manifests(denied))) if x[1] == "egress"
                and x[2] == ENTIRE_CLUSTER]
