"""OCM006 judges an AddOnDeploymentConfig's caBundle against the proxy's CA as *other*
sources state it (issue 24): a cluster Proxy's trustedCA, the klusterlet's hub kubeconfig,
``inputs.proxy_ca_files``, for the same proxy host and port - never the caBundle itself."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from hcpscan.findings.model import Status
from hcpscan.rules.config import ScanConfig
from tests.conftest import FIXTURES
from tests.rules.harness import scan

FAIL = FIXTURES / "rules" / "OCM006" / "fail"
PASS = FIXTURES / "rules" / "OCM006" / "pass"


def _pem(path: Path, field: str = "caBundle", index: int = 0) -> str:
    values = re.findall(rf"{field}: (\S+)", path.read_text())
    return base64.b64decode(values[index]).decode()


def _ocm006(paths: list[Path], config: ScanConfig | None = None) -> list:
    return [f for f in scan(paths, ["OCM006"], config).findings if f.rule_id == "OCM006"]


def test_another_ca_than_the_proxy_trusted_ca_is_reported() -> None:
    found = _ocm006([FAIL / "addon-ca-not-the-proxys-trusted-ca.yaml"])
    assert len(found) == 1
    evidence = " ".join(found[0].evidence)
    assert "other-issuing-ca" in evidence and "corp-proxy-ca" in evidence
    assert "openshift-config/corp-proxy-ca" in evidence
    assert found[0].data["missing_ca"][0]["subject"].startswith("CN=corp-proxy-ca")


def test_without_another_source_the_bundle_is_not_cross_checked(tmp_path: Path) -> None:
    """The add-on's own caBundle never proves itself: alone it passes as before."""
    text = (FAIL / "addon-ca-not-the-proxys-trusted-ca.yaml").read_text()
    alone = tmp_path / "alone.yaml"
    alone.write_text(text[text.index("apiVersion: addon."):])
    report = scan([alone], ["OCM006"])
    assert not [f for f in report.findings if f.rule_id == "OCM006"]
    (result,) = [r for r in report.results if r.rule_id == "OCM006"]
    assert result.status is Status.PASS and result.objects_checked == 1, result.reason


def test_proxy_ca_files_cross_check(tmp_path: Path) -> None:
    source = FAIL / "addon-ca-not-the-proxys-trusted-ca.yaml"
    text = source.read_text()
    alone = tmp_path / "alone.yaml"
    alone.write_text(text[text.index("apiVersion: addon."):])
    right = tmp_path / "proxy-ca.pem"
    right.write_text(_pem(PASS / "addon-ca-is-the-klusterlets-proxy-ca.yaml"))
    wrong = tmp_path / "other-ca.pem"
    wrong.write_text(_pem(source))
    assert len(_ocm006([alone], ScanConfig(proxy_ca_files=[right]))) == 1
    assert not _ocm006([alone], ScanConfig(proxy_ca_files=[wrong]))


def test_klusterlet_kubeconfig_states_the_proxy_ca() -> None:
    assert len(_ocm006([FAIL / "addon-ca-not-the-klusterlets-proxy-ca.yaml"])) == 1
    # the same kubeconfig, the add-on holding the proxy's CA; another proxy (port) is not
    # judged against this one's CA
    assert not _ocm006([PASS / "addon-ca-is-the-klusterlets-proxy-ca.yaml"])


def _klusterlet_config(pem: str) -> str:
    body = "".join(f"    {line}\n" for line in pem.strip().splitlines())
    return f"""apiVersion: config.open-cluster-management.io/v1alpha1
kind: KlusterletConfig
metadata:
  name: behind-https-proxy
spec:
  hubKubeAPIServerConfig:
    proxyURL: https://proxy.corp.example.com:3129
    trustedCABundles:
    - name: proxy-ca
      caBundle:
        name: proxy-ca
        namespace: multicluster-engine
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: proxy-ca
  namespace: multicluster-engine
data:
  ca-bundle.crt: |
{body}"""


def test_a_klusterlet_config_states_the_proxy_ca(tmp_path: Path) -> None:
    source = FAIL / "addon-ca-not-the-proxys-trusted-ca.yaml"
    text = source.read_text()
    addon = text[text.index("apiVersion: addon."):]
    proxy_ca = _pem(PASS / "addon-ca-is-the-klusterlets-proxy-ca.yaml")
    other_ca = _pem(source)
    (tmp_path / "wrong").mkdir()
    (tmp_path / "wrong" / "in.yaml").write_text(_klusterlet_config(proxy_ca) + "---\n" + addon)
    found = _ocm006([tmp_path / "wrong"])
    assert len(found) == 1 and "KlusterletConfig behind-https-proxy" in " ".join(found[0].evidence)
    # the KlusterletConfig names the add-on's own CA: they agree
    (tmp_path / "right").mkdir()
    (tmp_path / "right" / "in.yaml").write_text(_klusterlet_config(other_ca) + "---\n" + addon)
    assert not _ocm006([tmp_path / "right"])
    # another proxy (port) in the KlusterletConfig: not cross-checked
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "in.yaml").write_text(
        _klusterlet_config(proxy_ca).replace(":3129", ":8443") + "---\n" + addon)
    assert not _ocm006([tmp_path / "other"])
