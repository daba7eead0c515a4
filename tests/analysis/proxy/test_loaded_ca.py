"""The CA bundle a consumer really loads: ignition data URLs, files a Go program reads."""

from __future__ import annotations

import base64
from pathlib import Path

from hcpscan.analysis.proxy.containers import containers
from hcpscan.analysis.proxy.loaded_ca import container_loaded, ignition_loaded
from hcpscan.analysis.proxy.openshift import decode_data_url
from hcpscan.inventory import Inventory
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES

FAIL = FIXTURES / "rules" / "PRX016" / "fail" / "https-proxy-ca-not-loaded.yaml"
PASS = FIXTURES / "rules" / "PRX016" / "pass" / "https-proxy-ca-loaded.yaml"


def _sidecar(path: Path):
    inventory = Inventory(load_paths([str(path)]).objects)
    (ref,) = [r for r in containers(inventory) if r.name == "konnectivity-proxy-https"]
    return inventory, ref


def test_data_urls_base64_and_percent_encoded() -> None:
    pem = b"-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n"
    encoded = "data:text/plain;charset=utf-8;base64," + base64.b64encode(pem).decode()
    assert decode_data_url(encoded) == pem.decode()
    assert decode_data_url("data:,a%20b%0A") == "a b\n"
    assert decode_data_url("https://ca.example.com/ca.pem") is None


def test_an_ignition_stub_loads_only_its_certificate_authorities() -> None:
    loaded = ignition_loaded({"ignition": {"security": {"tls": {"certificateAuthorities": [
        {"source": "https://ca.example.com/ca.pem"}]}}}}, "stub")
    assert loaded.certificates == [] and "fetched at boot" in loaded.unknown


def test_a_bundle_mounted_where_go_does_not_look_is_not_loaded() -> None:
    inventory, ref = _sidecar(FAIL)
    loaded = container_loaded(inventory, ref)
    # trusted-ca-bundle-managed is mounted under /etc/pki/ca-trust/source/anchors: Go never reads it
    assert (loaded.certificates, loaded.sources, loaded.unknown) == ([], [], "")


def test_a_bundle_mounted_over_the_file_go_reads_is_loaded() -> None:
    inventory, ref = _sidecar(PASS)
    loaded = container_loaded(inventory, ref)
    assert loaded.sources == ["ConfigMap clusters-example/trusted-ca-bundle-managed key "
                              "ca-bundle.crt mounted at "
                              "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"]
    assert [c.common_name for c in loaded.certificates] == ["corp-tls-proxy-ca"]


def test_ssl_cert_file_decides_which_file_go_reads() -> None:
    inventory, ref = _sidecar(FAIL)
    ref.spec.setdefault("env", []).append(
        {"name": "SSL_CERT_FILE", "value": "/etc/pki/ca-trust/source/anchors/tls-ca-bundle.pem"})
    loaded = container_loaded(inventory, ref)
    assert [c.common_name for c in loaded.certificates] == ["corp-tls-proxy-ca"]


CAPI_NODE = """\
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: workers
  namespace: default
  labels: {{cluster.x-k8s.io/cluster-name: edge}}
spec:
  template:
    spec:
      files:
      - path: /etc/systemd/system/containerd.service.d/http-proxy.conf
        content: |
          [Service]
          Environment="HTTPS_PROXY=https://proxy.corp.example.com:3129"
          Environment="NO_PROXY=.svc,.cluster.local,10.96.0.0/12,127.0.0.1,localhost"
{extra}"""


def _proxy_ca() -> str:
    text = PASS.read_text()
    start = text.index("-----BEGIN CERTIFICATE-----")
    end = text.index("-----END CERTIFICATE-----", start) + len("-----END CERTIFICATE-----")
    return "\n".join(line.strip() for line in text[start:end].splitlines()) + "\n"


def _node_scan(tmp_path: Path, extra: str):
    from hcpscan.rules.config import ScanConfig
    from tests.rules.harness import scan

    ca = tmp_path / "proxy-ca.pem"
    ca.write_text(_proxy_ca())
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "node.yaml").write_text(CAPI_NODE.format(extra=extra))
    return scan([tmp_path / "in"], ["PRX016"], ScanConfig(proxy_ca_files=[ca]))


def test_a_capi_node_behind_an_https_proxy_must_get_its_ca(tmp_path: Path) -> None:
    report = _node_scan(tmp_path, "")
    (finding,) = report.findings
    assert finding.data["missing_ca"][0]["source"].startswith("proxy_ca_files")
    assert "trust store" in finding.data["loads_bundle_at"]


def test_a_capi_node_that_writes_the_ca_into_its_trust_store_trusts_the_proxy(tmp_path: Path) -> None:
    pem = "".join(f"          {line}\n" for line in _proxy_ca().splitlines())
    extra = ("      - path: /etc/pki/ca-trust/source/anchors/corp-proxy-ca.crt\n"
             "        content: |\n" + pem)
    report = _node_scan(tmp_path, extra)
    assert (report.findings, report.results[0].status.value) == ([], "pass")


def test_a_bundle_in_a_projected_volume_is_loaded() -> None:
    inventory, ref = _sidecar(PASS)
    volumes = ref.obj.get(ref.pod_path)["volumes"]
    (trusted,) = [v for v in volumes if v["name"] == "trusted-ca"]
    trusted["projected"] = {"sources": [{"configMap": trusted.pop("configMap")}]}
    loaded = container_loaded(inventory, ref)
    assert [c.common_name for c in loaded.certificates] == ["corp-tls-proxy-ca"]


def test_a_bundle_mounted_where_go_reads_from_a_configmap_not_in_the_input_is_unknown() -> None:
    # the mount says Go reads the ConfigMap's files; without the ConfigMap nobody can say
    # whether they hold the proxy's CA, so this is not 'loads no CA besides the system roots'
    inventory, ref = _sidecar(PASS)
    inventory = Inventory([o for o in inventory
                           if o.name != "trusted-ca-bundle-managed"])
    (ref,) = [r for r in containers(inventory) if r.name == "konnectivity-proxy-https"]
    loaded = container_loaded(inventory, ref)
    assert loaded.certificates == []
    assert "trusted-ca-bundle-managed mounted at /etc/pki/ca-trust/extracted/pem" in loaded.unknown


def test_a_truncated_or_corrupt_gzip_data_url_is_unreadable_not_a_crash() -> None:
    import gzip

    whole = gzip.compress(b"-----BEGIN CERTIFICATE-----\n")
    for payload in (whole[:12], whole[:10] + b"\xff" * 20):
        url = "data:;base64," + base64.b64encode(payload).decode()
        assert decode_data_url(url, "gzip") is None


def test_a_capi_node_without_proxy_ca_files_is_told_where_to_name_the_ca(tmp_path: Path) -> None:
    from tests.rules.harness import scan

    (tmp_path / "node.yaml").write_text(CAPI_NODE.format(extra=""))
    report = scan([tmp_path / "node.yaml"], ["PRX016"])
    (result,) = report.results
    assert result.status.value == "not-evaluable", result
    # no HostedCluster is involved: the advice names the config's proxy_ca_files only
    assert "inputs.proxy_ca_files" in result.reason and "HostedCluster" not in result.reason
