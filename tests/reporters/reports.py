"""Scan reports built from the findings model, as the rule engine would hand them over.

``small_report`` is the fixed report of the snapshot tests; ``realistic_report``
has everything GitHub is picky about: several rules and severities (info too),
suppressed findings of both kinds, a finding with a virtual location (live
cluster) and one inside an archive.
"""

from __future__ import annotations

from pathlib import Path

from hcpscan.findings.model import (
    Finding,
    HostedClusterExposure,
    Location,
    ObjectRef,
    RuleDocs,
    RuleInfo,
    RuleResult,
    ScanReport,
    Severity,
    Status,
    Suppression,
    WayIn,
)

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SARIF_SCHEMAS = SHARED / "sarif"

POLICIES_PATH = "gitops/hcp/networkpolicies.yaml"
POLICIES_YAML = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: nodeport-ignition-proxy
  namespace: hcp-ns
spec:
  podSelector:
    matchLabels:
      app: ignition-server-proxy
  ingress:
  - ports:
    - port: 8443
      protocol: TCP
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: nodeport-ignition
  namespace: hcp-ns
spec:
  podSelector:
    matchLabels:
      app: ignition-server
  ingress:
  - ports:
    - port: 9090
      protocol: TCP
"""

HOSTED_CLUSTER_PATH = "gitops/clusters/prod.yaml"
HOSTED_CLUSTER_YAML = """\
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata:
  name: prod
  namespace: clusters
  annotations:
    hcpscan.io/ignore-HCP-PROXY-002: "secondary network is reached without the proxy"
spec:
  platform:
    type: KubeVirt
  configuration:
    proxy:
      httpProxy: http://proxy.corp.example:3128
      httpsProxy: http://proxy.corp.example:3128
      noProxy: .cluster.local,10.128.0.0/14
"""

ARCHIVE_PATH = "dumps/hypershift-dump.tar.gz!hostedcluster-prod/namespaces/openshift-dns/dns.yaml"
ARCHIVE_MEMBER_YAML = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: allow-dns
  namespace: openshift-dns
spec:
  egress:
  - ports:
    - port: 53
      protocol: UDP
"""

# What ``read_text`` gives the SARIF reporter: paths exactly as findings hold them.
TEXTS = {POLICIES_PATH: POLICIES_YAML, HOSTED_CLUSTER_PATH: HOSTED_CLUSTER_YAML,
         ARCHIVE_PATH: ARCHIVE_MEMBER_YAML}

METADATA = {"started": "2026-02-03T04:05:06Z", "duration": 1.5,
            "paths": ["gitops", "dumps/hypershift-dump.tar.gz"],
            "clusters": ["management", "hostedcluster-prod"]}

IGNITION_DOCS = RuleDocs(
    what="Finds ignition endpoints (ports 8443 and 9090) that any source may reach.",
    why="Ignition serves node certificates, kubeconfigs and machine config; anyone who can "
        "reach it can join a node or read credentials.",
    failing="kind: NetworkPolicy\nspec:\n  ingress:\n  - ports:\n    - port: 8443\n",
    passing="kind: NetworkPolicy\nspec:\n  ingress:\n  - from:\n    - ipBlock:\n"
            "        cidr: 10.0.0.0/16\n    ports:\n    - port: 8443\n",
    fix="Restrict the port to the worker subnets at the perimeter (firewall, security group "
        "or loadBalancerSourceRanges).",
    known_problems="NodePort traffic may be SNATed, so ipBlock rules can miss.",
    references=("https://hypershift-docs.netlify.app/",),
)

RULE_IGNITION = RuleInfo("HCP-NET-001", "Ignition endpoint reachable from any source",
                         Severity.CRITICAL, "exposure", IGNITION_DOCS, ("network", "ignition"),
                         "high", "rules/net-001.yaml")
RULE_DNS = RuleInfo("HCP-NET-004", "DNS egress allowed on UDP but not TCP", Severity.HIGH,
                    "connectivity", RuleDocs(what="Finds DNS egress rules without TCP/53.",
                                             why="Large DNS answers fall back to TCP.",
                                             fix="Allow port 53 on TCP as well."),
                    ("dns",), "very-high")
RULE_NOPROXY = RuleInfo("HCP-PROXY-002", "Secondary network missing from noProxy",
                        Severity.MEDIUM, "proxy",
                        RuleDocs(what="Finds KubeVirt secondary networks absent from noProxy."),
                        ("proxy",), "medium")
RULE_CA = RuleInfo("HCP-PROXY-005", "Kubeconfig CA bundle lacks the proxy CA", Severity.LOW,
                   "proxy", RuleDocs(what="Checks the CA bundle of kubeconfigs."), (), "low")
RULE_INFO = RuleInfo("HCP-INFO-001", "Publishing strategy of each service", Severity.INFO,
                     "inventory", RuleDocs(what="Lists how each control-plane service is "
                                                "published."), ("inventory",), "high")
RULE_MGMT = RuleInfo("HCP-NET-009", "Management KAS reachable from hosted pods",
                     Severity.HIGH, "exposure", RuleDocs(what="Checks the management-kas policy."))


def hcp_policy(name: str) -> ObjectRef:
    return ObjectRef("management", "networking.k8s.io/v1", "NetworkPolicy", "hcp-ns", name)


def ignition_finding(name: str = "nodeport-ignition-proxy", line: int = 12,
                     port: int = 8443) -> Finding:
    return Finding(
        "HCP-NET-001", Severity.CRITICAL, hcp_policy(name), "spec.ingress[0].ports[0].port",
        Location(POLICIES_PATH, line, 7),
        f"Ignition port {port}/TCP is open to any source",
        [f"0.0.0.0/0 → {port}/TCP allowed by NetworkPolicy hcp-ns/{name} (any source), "
         "no perimeter rule"])


def prod_exposure() -> HostedClusterExposure:
    """HostedCluster clusters/prod: ignition open beyond the workers through a NodePort,
    the API server behind a LoadBalancer kept to the workers, a Route NetworkPolicy blocks."""
    def service(name: str) -> ObjectRef:
        return ObjectRef("management", "v1", "Service", "clusters-prod", name)

    return HostedClusterExposure(
        ObjectRef("management", "hypershift.openshift.io/v1beta1", "HostedCluster", "clusters",
                  "prod"), "clusters-prod", ("10.0.0.0/24",),
        (WayIn("NodePort", service("ignition-server-proxy"), "TCP", 30443, 8443,
               ("clusters-prod/ignition-server-proxy[Deployment]",), "any address",
               "any address outside 10.0.0.0/24", "", Location("gitops/hcp/services.yaml", 9, 5)),
         WayIn("LoadBalancer", service("kube-apiserver"), "TCP", 6443, 6443,
               ("clusters-prod/kube-apiserver[Deployment]",), "10.0.0.0/24", "", "",
               Location("gitops/hcp/services.yaml", 30, 5)),
         WayIn("Route", ObjectRef("management", "route.openshift.io/v1", "Route", "clusters-prod",
                                  "metrics"), "TCP", 443, 9443,
               ("clusters-prod/metrics-proxy[Deployment]",), "", "",
               "network-policy: no NetworkPolicy rule admits the router",
               Location("gitops/hcp/routes.yaml", 4, 5))))


def small_report() -> ScanReport:
    """The fixed report of the snapshot tests: one of each thing, nothing more."""
    findings = [
        ignition_finding(),
        Finding("HCP-PROXY-002", Severity.MEDIUM,
                ObjectRef("management", "hypershift.openshift.io/v1beta1", "HostedCluster",
                          "clusters", "prod"),
                "spec.configuration.proxy.noProxy", Location(HOSTED_CLUSTER_PATH, 15, 7),
                "Secondary network 192.168.10.0/24 is not in noProxy",
                ["NodePool clusters/prod-pool attaches clusters-prod/secondary (192.168.10.0/24)"],
                status=Status.SUPPRESSED,
                suppression=Suppression("inSource", "annotation",
                                        "secondary network is reached without the proxy")),
    ]
    results = [
        RuleResult("HCP-NET-001", Status.FAIL, findings=1, objects_checked=2),
        RuleResult("HCP-NET-004", Status.PASS, objects_checked=3),
        RuleResult("HCP-PROXY-002", Status.SUPPRESSED, "every finding is suppressed",
                   suppressed=1, objects_checked=1),
        RuleResult("HCP-PROXY-005", Status.NOT_EVALUABLE, "no kubeconfig in the input"),
    ]
    return ScanReport("0.1.0", [RULE_IGNITION, RULE_DNS, RULE_NOPROXY, RULE_CA], results,
                      findings,
                      [{"path": "gitops/broken.yaml", "line": 3, "severity": "error",
                        "message": "invalid YAML: mapping values are not allowed here",
                        "hint": "fix the indentation"}],
                      {"NetworkPolicy": 2, "HostedCluster": 1}, dict(METADATA),
                      [prod_exposure()])


def realistic_report() -> ScanReport:
    """Several rules and severities, both kinds of suppression, virtual and archive paths."""
    dns_object = ObjectRef("hostedcluster-prod", "networking.k8s.io/v1", "NetworkPolicy",
                           "openshift-dns", "allow-dns")
    live_kas = ObjectRef("prod-context", "networking.k8s.io/v1", "NetworkPolicy", "hcp-ns",
                         "management-kas")
    hosted = ObjectRef("management", "hypershift.openshift.io/v1beta1", "HostedCluster",
                       "clusters", "prod")
    kubeconfig = ObjectRef("management", "v1", "Secret", "clusters", "prod-admin-kubeconfig")
    findings = [
        ignition_finding(),
        ignition_finding("nodeport-ignition", 26, 9090),
        Finding("HCP-NET-004", Severity.HIGH, dns_object, "spec.egress[0].ports[0]",
                Location(ARCHIVE_PATH, 9, 7), "DNS egress allows 53/UDP but not 53/TCP",
                ["egress to 53/UDP allowed by NetworkPolicy openshift-dns/allow-dns",
                 "no rule allows 53/TCP"]),
        Finding("HCP-NET-009", Severity.HIGH, live_kas, "spec.egress",
                Location("cluster/prod-context/hcp-ns/NetworkPolicy/management-kas.yaml",
                         virtual=True),
                "Hosted pods can reach the management KAS", ["read from the live cluster"]),
        Finding("HCP-PROXY-002", Severity.MEDIUM, hosted, "spec.configuration.proxy.noProxy",
                Location(HOSTED_CLUSTER_PATH, 15, 7),
                "Secondary network 192.168.10.0/24 is not in noProxy",
                status=Status.SUPPRESSED,
                suppression=Suppression("inSource", "annotation",
                                        "secondary network is reached without the proxy")),
        Finding("HCP-PROXY-005", Severity.LOW, kubeconfig, "data.kubeconfig",
                Location(HOSTED_CLUSTER_PATH, 1), "CA bundle lacks the proxy's CA",
                status=Status.SUPPRESSED,
                suppression=Suppression("external", "baseline", "accepted in baseline",
                                        "2027-01-01")),
        Finding("HCP-INFO-001", Severity.INFO, hosted, "spec.services[3]",
                Location(HOSTED_CLUSTER_PATH, 8, 3), "Ignition is published as NodePort"),
        Finding("HCP-NET-004", Severity.HIGH,
                ObjectRef("management", "networking.k8s.io/v1", "NetworkPolicy", "hcp-ns",
                          "from-stdin"),
                "spec.egress", Location("<stdin>", 4), "DNS egress allows 53/UDP only"),
    ]
    results = [
        RuleResult("HCP-NET-001", Status.FAIL, findings=2, objects_checked=5),
        RuleResult("HCP-NET-004", Status.FAIL, findings=2, objects_checked=4),
        RuleResult("HCP-NET-009", Status.FAIL, findings=1, objects_checked=1),
        RuleResult("HCP-PROXY-002", Status.SUPPRESSED, "every finding is suppressed",
                   suppressed=1, objects_checked=1),
        RuleResult("HCP-PROXY-005", Status.SUPPRESSED, "baseline", suppressed=1,
                   objects_checked=1),
        RuleResult("HCP-INFO-001", Status.FAIL, findings=1, objects_checked=1),
        RuleResult("HCP-NET-010", Status.PASS, objects_checked=3),
        RuleResult("HCP-NET-011", Status.NOT_EVALUABLE, "no Service objects in the input"),
    ]
    rules = [RULE_IGNITION, RULE_DNS, RULE_NOPROXY, RULE_CA, RULE_INFO, RULE_MGMT,
             RuleInfo("HCP-NET-010", "Konnectivity port open", Severity.HIGH, "exposure"),
             RuleInfo("HCP-NET-011", "Health ports exposed", Severity.MEDIUM, "exposure")]
    return ScanReport("0.1.0", rules, results, findings,
                      [{"path": "dumps/hypershift-dump.tar.gz", "line": None,
                        "severity": "warning", "message": "archive is truncated"}],
                      {"NetworkPolicy": 6, "HostedCluster": 1, "Secret": 1}, dict(METADATA))


def many_findings(count: int) -> list[Finding]:
    """``count`` findings cycling through every severity, on distinct objects."""
    severities = list(Severity)
    out = []
    for i in range(count):
        severity = severities[i % len(severities)]
        out.append(Finding(f"HCP-GEN-{severity.rank}", severity, hcp_policy(f"policy-{i}"),
                           "spec.ingress[0]", Location(POLICIES_PATH, 1 + i % 20),
                           f"generated finding number {i} " + "with a long message " * 5,
                           [f"evidence {i} " + "x" * 80]))
    return out


def report_with(findings: list[Finding]) -> ScanReport:
    rules = [RuleInfo(f"HCP-GEN-{sev.rank}", f"generated {sev.value} rule", sev, "generated")
             for sev in Severity]
    results = [RuleResult(rule.id, Status.FAIL, findings=1) for rule in rules]
    return ScanReport("0.1.0", rules, results, findings, [], {}, dict(METADATA))
