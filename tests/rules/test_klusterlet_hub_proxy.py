"""A KlusterletConfig's hub proxy and its CA as the import controller computes them (ACM-7118,
stolostron/rhacm-docs PR 5762): ``hubKubeAPIServerConfig``, when present, wins whole; the
deprecated ``hubKubeAPIServerProxyConfig`` is read only without it, and its https proxy's CA
is that block's ``caBundle``, not ``trustedCABundles``."""

from __future__ import annotations

from pathlib import Path

from hcpscan.analysis.proxy.klusterlet import hub_proxy
from hcpscan.inventory.objects import K8sObject
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES
from tests.rules.harness import scan

FAIL = FIXTURES / "rules" / "PRX012" / "fail" / "klusterletconfig-deprecated-proxy.yaml"
PASS = FIXTURES / "rules" / "PRX012" / "pass" / "klusterletconfig-deprecated-proxy.yaml"


def _findings(path: Path) -> dict[str, object]:
    return {f.object.name: f for f in scan([path], ["PRX012"]).findings}


def test_the_deprecated_https_proxy_wants_its_own_ca_bundle() -> None:
    found = _findings(FAIL)["https-proxy"]
    assert found.field == "spec.hubKubeAPIServerProxyConfig.httpsProxy"
    assert "spec.hubKubeAPIServerProxyConfig.caBundle" in found.message
    assert "spec.hubKubeAPIServerProxyConfig.caBundle" in found.remedy.why
    assert "base64" in found.remedy.why
    assert "trustedCABundles" not in found.remedy.why + found.message


def test_hub_config_without_proxy_url_drops_the_deprecated_proxy() -> None:
    found = _findings(FAIL)["https-proxy-followed-fix"]
    assert "ignored" in found.message and "dropped" in found.message
    assert "without a proxy" in " ".join(found.evidence)
    assert "hubKubeAPIServerConfig.proxyURL" in found.remedy.why
    # its trustedCABundles hold a good CA: no "without a CA" finding beside it
    assert "without spec" not in found.message


def test_the_passing_shapes_pass() -> None:
    assert _findings(PASS) == {}


def _config(tmp_path: Path, spec: str) -> K8sObject:
    path = tmp_path / "kc.yaml"
    path.write_text("apiVersion: config.open-cluster-management.io/v1alpha1\n"
                    "kind: KlusterletConfig\nmetadata:\n  name: kc\nspec:\n" + spec)
    (obj,) = load_paths([str(path)]).objects
    return obj


def test_hub_proxy_follows_the_import_controller(tmp_path: Path) -> None:
    legacy = ("  hubKubeAPIServerProxyConfig:\n    httpProxy: http://p:3128\n"
              "    httpsProxy: https://p:3129\n    caBundle: Zm9v\n")
    chosen = hub_proxy(_config(tmp_path, legacy))
    assert chosen.proxy == ("spec", "hubKubeAPIServerProxyConfig", "httpsProxy")
    assert chosen.ca == ("spec", "hubKubeAPIServerProxyConfig", "caBundle")
    assert chosen.dropped == ()
    # an empty hubKubeAPIServerConfig is present: the deprecated block is ignored whole
    empty = hub_proxy(_config(tmp_path, legacy + "  hubKubeAPIServerConfig: {}\n"))
    assert (empty.proxy, empty.ca) == (None, None)
    assert [s[-1] for s in empty.dropped] == ["httpsProxy", "httpProxy"]
    new = hub_proxy(_config(tmp_path, legacy + "  hubKubeAPIServerConfig:\n"
                                               "    proxyURL: http://q:3128\n"))
    assert new.proxy == ("spec", "hubKubeAPIServerConfig", "proxyURL") and new.dropped == ()
    # httpProxy alone: GetProxySettings returns no CA for it, caBundle or not
    http_only = hub_proxy(_config(tmp_path, "  hubKubeAPIServerProxyConfig:\n"
                                            "    httpProxy: https://p:3129\n"
                                            "    caBundle: Zm9v\n"))
    assert http_only.proxy == ("spec", "hubKubeAPIServerProxyConfig", "httpProxy")
    assert http_only.ca is None and "httpsProxy" in http_only.ca_field


MERGED_PASS = FIXTURES / "rules" / "PRX012" / "pass" / "klusterletconfig-merged.yaml"
MERGED_FAIL = FIXTURES / "rules" / "PRX012" / "fail" / "klusterletconfig-merged-other-proxy.yaml"


def test_a_merged_config_trusts_the_deprecated_ca_bundle_too() -> None:
    """GetProxySettings: proxyURL equal to the deprecated httpsProxy (two KlusterletConfigs
    merged) returns that block's caBundle as well, merged into the kubeconfig's CA data."""
    assert _findings(MERGED_PASS) == {}
    found = _findings(MERGED_FAIL)["moved"]
    assert found.field == "spec.hubKubeAPIServerConfig.proxyURL"
    assert "trustedCABundles" in found.message


def test_hub_proxy_reads_the_deprecated_ca_only_for_the_same_url(tmp_path: Path) -> None:
    legacy = ("  hubKubeAPIServerProxyConfig:\n    httpsProxy: https://p:3129\n"
              "    caBundle: Zm9v\n")
    same = hub_proxy(_config(tmp_path, legacy + "  hubKubeAPIServerConfig:\n"
                                                "    proxyURL: https://p:3129\n"))
    assert same.also_ca == ("spec", "hubKubeAPIServerProxyConfig", "caBundle")
    other = hub_proxy(_config(tmp_path, legacy + "  hubKubeAPIServerConfig:\n"
                                                 "    proxyURL: https://q:3129\n"))
    assert other.also_ca is None
