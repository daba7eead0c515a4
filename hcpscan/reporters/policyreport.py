"""PolicyReport: the OpenReports objects as ``wgpolicyk8s.io/v1alpha2`` for older consumers.

``PolicyReport`` / ``ClusterPolicyReport`` of the Kubernetes policy working
group, which Kyverno, Policy Reporter and OCM's insights still read. Same
names, layout and results as :mod:`hcpscan.reporters.openreports`; the one
difference in shape is that v1alpha2 has no report-level ``source`` (an API
server would prune it), so every result carries ``source: hcpscan``.
"""

from __future__ import annotations

from hcpscan.findings.model import ScanReport
from hcpscan.reporters.interface import ReportOptions
from hcpscan.reporters.openreports import ReportKinds, build_reports, dump_documents

POLICYREPORT = ReportKinds("wgpolicyk8s.io/v1alpha2", "PolicyReport", "ClusterPolicyReport", False)


class PolicyReportReporter:
    name = "policyreport"
    media_type = "application/yaml"
    extension = "yaml"

    def render(self, report: ScanReport, options: ReportOptions) -> str:
        return dump_documents(build_reports(report, POLICYREPORT))
