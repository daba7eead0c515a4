"""PolicyReport: the OpenReports objects as ``wgpolicyk8s.io/v1alpha2`` for older consumers.

``PolicyReport`` / ``ClusterPolicyReport`` of the Kubernetes policy working
group, which Kyverno, Policy Reporter and OCM's insights still read. Same
names, layout and results as :mod:`hcpscan.reporters.openreports`; the one
difference in shape is that v1alpha2 has no report-level ``source`` (an API
server would prune it), so every result carries ``source: hcpscan``.
"""

from __future__ import annotations

from hcpscan.reporters.openreports import OpenReportsReporter, ReportKinds

POLICYREPORT = ReportKinds("wgpolicyk8s.io/v1alpha2", "PolicyReport", "ClusterPolicyReport", False)


class PolicyReportReporter(OpenReportsReporter):
    name = "policyreport"
    kinds = POLICYREPORT
