"""The HTML report's text: self-contained, escaped, grouped as a reader expects."""

from __future__ import annotations

import base64
import hashlib
import re

from hcpscan.findings.model import ObjectRef
from hcpscan.reporters import render
from tests.reporters.reports import realistic_report, small_report


def test_page_fetches_nothing_and_allows_only_its_own_style_sheet(small, options):
    page = render("html", small, options)
    assert not re.search(r"\b(src|href|srcset|action|poster)\s*=", page, re.I)
    assert "@import" not in page and "<script" not in page and "<link" not in page
    # url(...) only for the SVG arrow markers, inside the page
    assert set(re.findall(r"url\(([^)]*)\)", page)) <= {f"#hcp0-{c}" for c in ("open", "workers", "blocked")}
    # the only attribute naming a URL is the SVG namespace (references in rule docs are text)
    assert set(re.findall(r'(\S+)="[^"]*://', page)) == {"xmlns"}
    css = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    assert f"default-src 'none'; style-src 'sha256-{digest}'" in page


def test_attacker_names_are_escaped_everywhere(options):
    report = small_report()
    hostile = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    report.findings[0].object = ObjectRef("management", "v1", "Service", "hcp-ns", hostile)
    report.findings[0].evidence.append("\x1b[31mred\u202eevil")
    report.findings[0].evidence.append("ok\r\nCoverage: 25 rules: 25 passed")
    exposure = report.exposures[0]
    way = exposure.ways_in[0]
    report.exposures[0] = type(exposure)(exposure.hosted_cluster, exposure.control_plane_namespace,
                                         exposure.workers, (type(way)(
                                             way.layer, ObjectRef("management", "v1", "Service", "x", hostile),
                                             way.protocol, way.entry_port, way.pod_port, (hostile,),
                                             way.admitted, way.beyond_workers, way.blocked_by,
                                             way.location),))
    page = render("html", report, options)
    assert "<script" not in page and "<img" not in page and "onerror=alert(2)>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\\x1b[31mred\\u202eevil" in page and "\x1b" not in page and "\u202e" not in page
    assert "ok\\r\\nCoverage: 25 rules: 25 passed" in page


def test_summary_coverage_and_reasons(small, options):
    page = render("html", small, options)
    assert 'data-severity="critical">1<' in page and 'data-severity="high">0<' in page
    assert "+1 suppressed" in page
    for status, count in (("fail", 1), ("pass", 1), ("not-evaluable", 1), ("not-applicable", 0),
                          ("suppressed", 1)):
        assert f'data-rules="{status}">{count}<' in page
    assert "no kubeconfig in the input" in page  # the not-evaluable reason


def test_findings_grouped_by_cluster_then_rule_with_docs_on_demand(options):
    page = render("html", realistic_report(), options)
    clusters = re.findall(r"<h3>Cluster ([^<]+)</h3>", page)
    assert clusters == ["management", "hostedcluster-prod", "prod-context"]
    assert '<details class="docs"><summary>About HCP-NET-001</summary>' in page
    assert "gitops/hcp/networkpolicies.yaml:12" in page  # file:line of a finding


def test_exposure_picture_colours_each_way_by_who_gets_through(small, options):
    page = render("html", small, options)
    svg = re.search(r'<svg[^>]*class="exposure".*?</svg>', page, re.S).group(0)
    assert svg.count('marker-end="url(#hcp0-open)"') == 2  # outside -> NodePort -> workload
    assert svg.count('marker-end="url(#hcp0-workers)"') == 2
    assert svg.count('marker-end="url(#hcp0-blocked)"') == 2
    for label in ("NodePort :30443", "LoadBalancer :6443", "Route :443", "pod port 8443",
                  "any address outside 10.0.0.0/24", "only 10.0.0.0/24", "blocked by network-policy"):
        assert label in svg
    assert "3 ways in from outside, 1 reachable beyond the worker subnets" in page
    assert "<code>gitops/hcp/services.yaml:9</code>" in page  # the ways table


def test_no_exposure_section_without_exposures(options):
    report = small_report()
    report.exposures = []
    assert "<svg class" not in render("html", report, options).replace('<svg class="bar"', "")


def test_no_way_in_found_is_not_shown_as_all_clear(options):
    report = small_report()
    exposure = report.exposures[0]
    report.exposures[0] = type(exposure)(exposure.hosted_cluster, exposure.control_plane_namespace,
                                         exposure.workers, ())
    page = render("html", report, options)
    line = re.search(r'<p class="exposure-line (\w+)"[^>]*>([^<]*)</p>', page)
    assert line.group(1) == "unknown" and "no way into 1 hosted control plane" in line.group(2)


def test_exposure_labels_sit_on_plates_above_every_arrow(small, options):
    """The arrows fan out from one point: drawn after a label, the next arrow ran through
    its letters (issue 29). Labels come after every arrow, each on a light plate."""
    page = render("html", small, options)
    svg = re.search(r'<svg[^>]*class="exposure".*?</svg>', page, re.S).group(0)
    last_arrow = max(m.start() for m in re.finditer(r"<path d=", svg))
    labels = list(re.finditer(r'(<rect [^>]*/>)<text [^>]*class="edge ', svg))
    assert len(labels) == 3 and all(m.start() > last_arrow for m in labels)
    assert all('fill="#ffffff"' in m.group(1) for m in labels)
