"""An OLM Subscription's spec.config.env as the proxy consumer it is: OLM gives it to every
container of the operator, and adds the cluster Proxy status's HTTP_PROXY, HTTPS_PROXY and
NO_PROXY only when the env names none of those three (case-sensitive: OLM's IsOverridden)."""

from __future__ import annotations

from pathlib import Path

from hcpscan.analysis.proxy.effective import effective_proxies
from hcpscan.analysis.proxy.settings import OLM_SUBSCRIPTION, ConsumerProxy
from hcpscan.findings.model import Status
from hcpscan.inventory.store import Inventory
from hcpscan.sources.loader import load_paths
from tests.rules.test_primitives_proxy import run as _scan

NETWORK = """\
apiVersion: config.openshift.io/v1
kind: Network
metadata: {name: cluster}
spec:
  clusterNetwork: [{cidr: 10.128.0.0/14, hostPrefix: 23}]
  serviceNetwork: [172.30.0.0/16]
---
"""
PROXY = """\
apiVersion: config.openshift.io/v1
kind: Proxy
metadata: {name: cluster}
spec:
  httpProxy: http://proxy.corp.example.com:3128
  noProxy: .corp.example.com
status:
  httpProxy: http://proxy.corp.example.com:3128
  noProxy: .cluster.local,.corp.example.com,.svc,10.128.0.0/14,127.0.0.1,172.30.0.0/16,localhost
---
""" + NETWORK
SUBSCRIPTION = """\
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: eck, namespace: operators}
spec:
  channel: stable
  name: elastic-cloud-eck
  source: operatorhubio-catalog
  sourceNamespace: olm
  config:
    env:
%s
"""


def _env(*pairs: tuple[str, str]) -> str:
    return "\n".join(f"    - {{name: {name}, value: \"{value}\"}}" for name, value in pairs)


def _consumers(tmp_path: Path, text: str) -> list[ConsumerProxy]:
    (tmp_path / "in.yaml").write_text(text)
    inventory = Inventory(load_paths([str(tmp_path / "in.yaml")]).objects)
    return [c for c in effective_proxies(inventory) if c.kind == OLM_SUBSCRIPTION]


def test_http_proxy_without_no_proxy_drops_the_clusters_no_proxy(tmp_path: Path) -> None:
    """OLM#1845: HTTP(S)_PROXY in spec.config.env and no NO_PROXY: OLM injects none of the
    cluster values, so the operator has no NO_PROXY at all; PRX005 says so, and why."""
    text = PROXY + SUBSCRIPTION % _env(("HTTP_PROXY", "http://cntlm:3128"),
                                      ("HTTPS_PROXY", "http://cntlm:3128"))
    [consumer] = _consumers(tmp_path, text)
    assert consumer.no_proxy is None and set(consumer.variables) == {"HTTP_PROXY", "HTTPS_PROXY"}
    report = _scan(tmp_path, text, "PRX005")
    [finding] = report.findings
    assert finding.object.kind == "Subscription" and "172.30.0.0/16" in finding.message
    assert any("OLM gives the operator none of the cluster Proxy's" in e for e in finding.evidence)


def test_a_lower_case_variable_alone_overrides_nothing(tmp_path: Path) -> None:
    """IsOverridden compares names case-sensitively: with only http_proxy set, OLM still adds
    the Proxy status's HTTP_PROXY and NO_PROXY, which Go reads first."""
    text = PROXY + SUBSCRIPTION % _env(("http_proxy", "http://cntlm:3128"))
    [consumer] = _consumers(tmp_path, text)
    assert consumer.http_proxy is not None and consumer.http_proxy.value == \
        "http://proxy.corp.example.com:3128"
    assert consumer.no_proxy is not None and ".svc" in (consumer.no_proxy.value or "")
    assert "HTTPS_PROXY" not in consumer.variables  # an empty status value is not injected
    assert _scan(tmp_path, text, "PRX005").results[0].status is Status.PASS


def test_no_proxy_alone_overrides_the_cluster_urls_too(tmp_path: Path) -> None:
    text = PROXY + SUBSCRIPTION % _env(("NO_PROXY", ".svc"))
    [consumer] = _consumers(tmp_path, text)
    assert set(consumer.variables) == {"NO_PROXY"} and consumer.http_proxy is None


def test_only_olm_subscriptions_with_proxy_variables_are_consumers(tmp_path: Path) -> None:
    acm = """\
apiVersion: apps.open-cluster-management.io/v1
kind: Subscription
metadata: {name: app, namespace: apps}
spec:
  channel: apps/channel
  config:
    env:
    - {name: HTTPS_PROXY, value: "http://proxy:3128"}
---
"""
    plain = SUBSCRIPTION % _env(("ARGOCD_CLUSTER_CONFIG_NAMESPACES", "openshift-gitops"))
    assert _consumers(tmp_path, acm + plain) == []


def test_a_value_from_a_configmap_is_followed(tmp_path: Path) -> None:
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: proxy-env, namespace: operators}
data: {no-proxy: ".svc,.cluster.local"}
---
""" + SUBSCRIPTION % """\
    - {name: HTTPS_PROXY, value: "http://cntlm:3128"}
    - name: NO_PROXY
      valueFrom: {configMapKeyRef: {name: proxy-env, key: no-proxy}}"""
    [consumer] = _consumers(tmp_path, text)
    assert consumer.no_proxy is not None and consumer.no_proxy.value == ".svc,.cluster.local"


def test_a_subscription_env_of_the_wrong_type_is_left_out_with_its_line(tmp_path: Path) -> None:
    """The CRD's schema rejects `env: 5`: the object cannot exist, so it is left out with an
    error at the field, and the rules never meet it (no 'check failed')."""
    text = PROXY + """\
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: broken, namespace: operators}
spec:
  config:
    env: 5
"""
    report = _scan(tmp_path, text, "PRX005")
    said = " ".join(str(d) for d in report.diagnostics)
    assert "spec.config.env" in said and "left out" in said
    assert "check failed" not in said


def test_prx008_moves_a_subscription_password_to_a_secret(tmp_path: Path, run_cli) -> None:
    """OLM copies spec.config.env entries (valueFrom included) into the operator's
    containers: the fix is a container's, a Secret beside the Subscription read with
    valueFrom.secretKeyRef; the fixed input no longer fails PRX008."""
    source = Path(__file__).parents[3] / "fixtures/rules/PRX008/fail/olm-subscription-env.yaml"
    target = tmp_path / "subscription.yaml"
    target.write_text(source.read_text())
    result = run_cli("fix", str(target), "--select", "PRX008", "--no-progress")
    assert result.code == 0, result.err
    fixed = target.read_text()
    assert "secretKeyRef: {name: elastic-cloud-eck-operator-https-proxy, key: HTTPS_PROXY}" in fixed
    assert "kind: Secret" in fixed
    rescan = run_cli("scan", str(target), "--select", "PRX008", "--no-progress")
    assert rescan.code == 0, rescan.out


SPEC_ONLY_PROXY = """\
apiVersion: config.openshift.io/v1
kind: Proxy
metadata: {name: cluster}
spec:
  httpProxy: http://proxy.example.com:3128
  httpsProxy: http://proxy.example.com:3128
  noProxy: .example.com
---
"""
LOWER_CASE = SUBSCRIPTION % _env(("https_proxy", "http://proxy.example.com:3128"),
                                 ("no_proxy", "localhost"))


def test_lower_case_env_with_a_spec_only_proxy_is_not_judged_on_no_proxy(tmp_path: Path) -> None:
    """Lower-case names override nothing (IsOverridden), so OLM injects upper-case NO_PROXY
    from the Proxy's status, which Go reads before no_proxy. With no status in the input and
    nothing to compute it from, PRX005 cannot judge, and no fix edits the lower-case
    no_proxy nobody reads."""
    [consumer] = _consumers(tmp_path, SPEC_ONLY_PROXY + LOWER_CASE)
    assert consumer.no_proxy is not None and consumer.no_proxy.name == "NO_PROXY"
    assert not consumer.no_proxy.known
    report = _scan(tmp_path, SPEC_ONLY_PROXY + LOWER_CASE, "PRX005")
    assert report.findings == []
    [result] = report.results
    assert result.status is Status.NOT_EVALUABLE
    assert "NO_PROXY" in result.reason and "status" in result.reason


def test_lower_case_env_is_judged_on_the_status_computed_from_the_spec(tmp_path: Path) -> None:
    """With the Network and Infrastructure in the input, the status the network operator
    writes is computed (hcpscan.model.clusters), and the operator's NO_PROXY is that."""
    infra = NETWORK + """\
apiVersion: config.openshift.io/v1
kind: Infrastructure
metadata: {name: cluster}
status:
  apiServerInternalURI: https://api-int.demo.example.com:6443
  platformStatus: {type: None}
---
"""
    text = SPEC_ONLY_PROXY + infra + LOWER_CASE
    [consumer] = _consumers(tmp_path, text)
    assert consumer.no_proxy is not None and consumer.no_proxy.name == "NO_PROXY"
    assert ".svc" in (consumer.no_proxy.value or "")
    assert _scan(tmp_path, text, "PRX005").results[0].status is Status.PASS
