"""OCM010: an add-on whose agents reach hub services other than the kube-apiserver
(model.ocm.HUB_SERVICE_ADDONS) needs an AddOnDeploymentConfig proxyConfig when its
cluster's klusterlet reaches the hub through a proxy (seed 004, "Add-on proxy settings")."""

from __future__ import annotations

from pathlib import Path

from hcpscan.findings.model import Status
from hcpscan.model.ocm import HUB_SERVICE_ADDONS
from tests.conftest import FIXTURES
from tests.rules.harness import scan

BOUND = """\
apiVersion: config.open-cluster-management.io/v1alpha1
kind: KlusterletConfig
metadata: {name: bound}
spec: BOUND_SPEC
---
apiVersion: config.open-cluster-management.io/v1alpha1
kind: KlusterletConfig
metadata: {name: global}
spec: GLOBAL_SPEC
---
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: cluster1
  annotations: {agent.open-cluster-management.io/klusterlet-config: bound}
spec: {hubAcceptsClient: true}
"""

ADDON = """\
---
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: ADDON, namespace: cluster1}
spec:
  installNamespace: open-cluster-management-agent-addon
"""

PROXY_URL = "{hubKubeAPIServerConfig: {proxyURL: 'http://proxy.corp.example.com:3128'}}"
LEGACY = "{hubKubeAPIServerProxyConfig: {httpsProxy: 'http://legacy.corp.example.com:3128'}}"
NO_PROXY = "{hubKubeAPIServerConfig: {url: 'https://api.hub.example.com:6443'}}"


def _result(tmp_path: Path, text: str):
    (tmp_path / "hub.yaml").write_text(text)
    report = scan([tmp_path], ["OCM010"])
    return report.results[0], [f.message for f in report.findings if f.status is Status.FAIL]


def _hub(bound: str, global_: str, addon: str = "cluster-proxy") -> str:
    return (BOUND.replace("BOUND_SPEC", bound).replace("GLOBAL_SPEC", global_)
            + ADDON.replace("ADDON", addon))


def test_the_list_is_the_cited_one():
    assert set(HUB_SERVICE_ADDONS) == {"cluster-proxy", "observability-controller"}


def test_bound_klusterletconfig_proxy_url(tmp_path: Path):
    result, messages = _result(tmp_path, _hub(PROXY_URL, "{}"))
    assert result.status is Status.FAIL
    assert "http://proxy.corp.example.com:3128" in messages[0]
    assert "KlusterletConfig bound spec.hubKubeAPIServerConfig.proxyURL" in messages[0]


def test_global_klusterletconfig_when_the_bound_one_sets_no_proxy(tmp_path: Path):
    result, messages = _result(tmp_path, _hub("{}", LEGACY))
    assert result.status is Status.FAIL
    assert "KlusterletConfig global spec.hubKubeAPIServerProxyConfig.httpsProxy" in messages[0]


def test_deprecated_block_beside_hub_config_is_no_proxy(tmp_path: Path):
    """hubKubeAPIServerConfig present: the deprecated block is ignored whole."""
    legacy_dropped = ("{hubKubeAPIServerConfig: {url: 'https://api.hub.example.com:6443'}, "
                      "hubKubeAPIServerProxyConfig: {httpProxy: 'http://p.example.com:3128'}}")
    result, messages = _result(tmp_path, _hub(legacy_dropped, "{}"))
    assert messages == [] and result.status is Status.NOT_APPLICABLE
    assert "no proxy is known for the klusterlet of managed cluster cluster1" in result.reason


def test_add_on_that_talks_to_the_hub_api_only_is_not_applicable(tmp_path: Path):
    result, messages = _result(tmp_path, _hub(PROXY_URL, "{}", addon="work-manager"))
    assert messages == [] and result.status is Status.NOT_APPLICABLE
    assert "work-manager is not known to reach hub services" in result.reason


def test_empty_proxy_config_is_no_proxy(tmp_path: Path):
    """The seed's example writes httpProxy: "" and httpsProxy: "": no proxy at all."""
    text = _hub(NO_PROXY, PROXY_URL, addon="observability-controller") + """\
  configs:
  - {group: addon.open-cluster-management.io, resource: addondeploymentconfigs,
     name: addon-proxy-settings, namespace: cluster1}
---
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: addon-proxy-settings, namespace: cluster1}
spec:
  proxyConfig: {httpProxy: "", httpsProxy: "", noProxy: ".cluster.local,.svc,"}
"""
    result, messages = _result(tmp_path, text)
    assert result.status is Status.FAIL
    assert "cluster1/addon-proxy-settings (from its own spec.configs) without proxyConfig" \
        in messages[0]
    fixed = text.replace('httpsProxy: ""', 'httpsProxy: "http://proxy.corp.example.com:3128"')
    result, messages = _result(tmp_path, fixed)
    assert messages == [] and result.status is Status.PASS


def test_klusterlet_proxy_url_from_the_managed_clusters_own_hub_kubeconfig(tmp_path: Path):
    """A hub scanned together with its managed cluster cluster1: the klusterlet's
    hub-kubeconfig-secret there (cluster-name cluster1) carries the proxy-url."""
    secret = (FIXTURES / "rules" / "OCM001" / "pass" / "hub-kubeconfig-with-proxy-url.yaml"
              ).read_text().split("\n---\n")[0]
    addon = ADDON.replace("ADDON", "cluster-proxy")
    result, messages = _result(tmp_path, secret + "\n" + addon)
    assert result.status is Status.FAIL
    assert "Secret open-cluster-management-agent-hub2/hub-kubeconfig-secret key kubeconfig " \
           "proxy-url" in messages[0]
    assert "http://proxy.corp.example.com:3128" in messages[0]


def test_bound_hub_config_hides_globals_deprecated_block(tmp_path: Path):
    """MergeKlusterletConfigs: hubKubeAPIServerConfig in the merge, the deprecated block is
    ignored, wherever it came from."""
    result, messages = _result(tmp_path, _hub(NO_PROXY, LEGACY))
    assert messages == [] and result.status is Status.NOT_APPLICABLE


def test_bound_deprecated_block_overrides_global_whole(tmp_path: Path):
    """The deprecated block is merged whole: the bound one's httpProxy wins over global's
    httpsProxy (which alone would be chosen over an httpProxy)."""
    bound = "{hubKubeAPIServerProxyConfig: {httpProxy: 'http://bound.corp.example.com:3128'}}"
    result, messages = _result(tmp_path, _hub(bound, LEGACY))
    assert result.status is Status.FAIL
    assert "http://bound.corp.example.com:3128" in messages[0]
    assert "KlusterletConfig bound spec.hubKubeAPIServerProxyConfig.httpProxy" in messages[0]


def test_a_missing_cluster_management_addon_is_said(tmp_path: Path):
    """Without configs of its own, the ClusterManagementAddOn's placements and default
    decide: the message says when it is not in the input, and not when it is."""
    _, messages = _result(tmp_path, _hub(PROXY_URL, "{}"))
    assert "(ClusterManagementAddOn cluster-proxy, whose placements or default could give " \
           "one, is not in the input)" in messages[0]
    cma = """\
---
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata: {name: cluster-proxy}
spec:
  supportedConfigs:
  - {group: addon.open-cluster-management.io, resource: addondeploymentconfigs}
"""
    result, messages = _result(tmp_path, _hub(PROXY_URL, "{}") + cma)
    assert result.status is Status.FAIL
    assert "gets no AddOnDeploymentConfig, so no proxyConfig, but" in messages[0]
