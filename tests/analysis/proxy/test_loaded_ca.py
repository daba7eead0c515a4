"""The CA bundle a consumer really loads: ignition data URLs, files a Go program reads."""

from __future__ import annotations

import base64
import tempfile
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


# -- every container: what its runtime really loads (issue 24 item 1) ---------------------------

RUNTIMES_FAIL = FIXTURES / "rules" / "PRX016" / "fail" / "container-runtimes-ca-not-loaded.yaml"
RUNTIMES_PASS = FIXTURES / "rules" / "PRX016" / "pass" / "container-runtimes-ca-loaded.yaml"


def _inventory(text: str) -> Inventory:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "input.yaml"
        path.write_text(text)
        return Inventory(load_paths([str(path)]).objects)


def _container(path: Path, name: str, edit=None):
    text = path.read_text()
    changed = edit(text) if edit is not None else text
    assert edit is None or changed != text, "the edit must change the fixture"
    inventory = _inventory(changed)
    (ref,) = [r for r in containers(inventory) if r.name == name]
    return inventory, ref


def _loads(path: Path, name: str, runtime: str, edit=None) -> list[str]:
    inventory, ref = _container(path, name, edit)
    loaded = container_loaded(inventory, ref, runtime)
    assert loaded.unknown == ""
    return [c.common_name for c in loaded.certificates]


def test_each_runtime_loads_the_ca_from_its_own_variable_or_path() -> None:
    assert _loads(RUNTIMES_PASS, "storefront", "node") == ["corp-tls-proxy-ca"]
    assert _loads(RUNTIMES_PASS, "billing", "requests") == ["corp-tls-proxy-ca"]
    assert _loads(RUNTIMES_PASS, "probe", "curl") == ["corp-tls-proxy-ca"]
    assert _loads(RUNTIMES_PASS, "sync", "go") == ["corp-tls-proxy-ca"]
    assert _loads(RUNTIMES_PASS, "ledger", "java") == ["corp-tls-proxy-ca"]


def test_a_variable_of_one_runtime_is_not_read_by_another() -> None:
    # Go ignores NODE_EXTRA_CA_CERTS and REQUESTS_CA_BUNDLE; Python's ssl module ignores
    # REQUESTS_CA_BUNDLE; Node ignores the system bundle mounted in the failing fixture
    assert _loads(RUNTIMES_PASS, "storefront", "go") == []
    assert _loads(RUNTIMES_PASS, "billing", "openssl") == []
    assert _loads(RUNTIMES_FAIL, "storefront", "node") == []
    # a Go program would read the bundle mounted at the RHEL path in an image of unknown
    # distribution (the union), not in this Alpine image, where /etc/ssl/certs/
    # ca-certificates.crt exists first in Go's list
    assert _loads(RUNTIMES_FAIL, "storefront", "go") == []
    assert _loads(RUNTIMES_FAIL, "storefront", "go", lambda t: t.replace(
        "docker.io/library/node:20-alpine", "registry.example.com/shop/storefront:1.0")) == [
        "corp-tls-proxy-ca"]


def test_openssl_and_curl_read_only_hashed_names_of_a_ca_directory() -> None:
    assert _loads(RUNTIMES_FAIL, "probe", "curl") == []
    hashed = _loads(RUNTIMES_FAIL, "probe", "curl", lambda t: t.replace(
        "configMap:\n          name: proxy-ca\n---\n# An http://",
        "configMap:\n          name: proxy-ca\n          items:\n          - key: ca.crt\n"
        "            path: 5e0bd6b4.0\n---\n# An http://"))
    assert hashed == ["corp-tls-proxy-ca"]


def test_node_with_use_openssl_ca_reads_the_system_store() -> None:
    from hcpscan.analysis.proxy.loaded_ca import trust_runtimes
    inventory, ref = _container(RUNTIMES_FAIL, "storefront")
    assert trust_runtimes(inventory, ref)[0] == ("node",)
    ref.spec["env"].append({"name": "NODE_OPTIONS", "value": "--use-openssl-ca"})
    assert trust_runtimes(inventory, ref)[0] == ("node", "openssl")


def test_the_injected_bundle_is_the_proxys_trusted_ca_and_an_init_copy_is_followed() -> None:
    assert _loads(RUNTIMES_PASS, "reporter", "go") == ["corp-tls-proxy-ca"]
    assert _loads(RUNTIMES_PASS, "operator", "go") == ["corp-tls-proxy-ca"]
    # without the init container that fills it, the emptyDir's content is not in the input
    inventory, ref = _container(RUNTIMES_PASS, "operator", lambda t: t.replace(
        "      initContainers:\n      - name: init-environment\n", "      initContainers: []\n"
        "      x-removed:\n      - name: init-environment\n"))
    loaded = container_loaded(inventory, ref, "go")
    assert loaded.certificates == [] and "filled at run time" in loaded.unknown


def _prx016(text: str) -> list:
    from hcpscan.rules.config import ScanConfig
    from hcpscan.rules.suppress import Suppressor
    from hcpscan.scan import RuleSelection, load_rules, run_scan
    config = ScanConfig()
    rules = load_rules(config, RuleSelection(select=["PRX016"]))
    report = run_scan(_inventory(text), rules, config, Suppressor(config.exemptions))
    return report.results


def test_a_plain_http_proxy_with_no_trusted_ca_is_not_judged() -> None:
    text = RUNTIMES_FAIL.read_text().replace("  trustedCA:\n    name: corp-proxy-ca\n", "")
    text = text.replace("https://secure-proxy", "http://secure-proxy")
    (result,) = _prx016(text)
    assert result.status.name == "NOT_APPLICABLE", result.reason


def test_the_proxy_objects_ca_counts_only_for_the_proxy_it_configures() -> None:
    # the reporter dials another http:// proxy: the Proxy's trustedCA says nothing about it
    text = RUNTIMES_FAIL.read_text().replace('value: "http://proxy.corp.example.com:3128"',
                                             'value: "http://other-proxy.corp.example.com:3128"')
    (result,) = _prx016(text)
    assert result.status.name == "FAIL"
    (full,) = _prx016(RUNTIMES_FAIL.read_text())
    assert result.reason != full.reason  # one finding fewer: 3 instead of 4
    assert "3 finding" in result.reason and "4 finding" in full.reason


def test_the_user_says_whether_the_http_proxy_intercepts_tls(tmp_path: Path) -> None:
    from hcpscan.rules.config import load_config
    from tests.rules.harness import scan
    config_path = tmp_path / ".hcpscan.yaml"
    # the reporter dials the http:// proxy: judged by default (a trustedCA names its CA) ...
    default = scan([RUNTIMES_FAIL], ["PRX016"])
    assert "Deployment shop/reporter" in " ".join(f.message for f in default.findings)
    # ... not when the user says it does not intercept; the https:// ones still are
    config_path.write_text("inputs:\n  proxy_intercepts_tls: false\n")
    said_no = scan([RUNTIMES_FAIL], ["PRX016"], load_config(config_path))
    names = " ".join(f.message for f in said_no.findings)
    assert "shop/reporter" not in names and "shop/storefront" in names


def _control_plane_deployment(proxy_url: str) -> str:
    """A control-plane Deployment of the example's HCP namespace that dials ``proxy_url``
    itself (no konnectivity sidecar), as a document to append to a stream."""
    return f"""---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: cloud-controller, namespace: clusters-example}}
spec:
  template:
    spec:
      containers:
      - name: manager
        image: quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0000
        env:
        - {{name: HTTPS_PROXY, value: "{proxy_url}"}}
"""


def test_a_container_of_an_hcp_namespace_that_dials_the_hosted_proxy_needs_its_trusted_ca() -> None:
    # a control-plane Deployment that dials the HostedCluster's https:// proxy itself (no
    # konnectivity sidecar): the CA is the HostedCluster's trustedCA, matched by host and port
    extra = _control_plane_deployment("https://proxy.corp.example.com:3129")
    (result,) = _prx016(FAIL.read_text() + extra)
    assert result.status.name == "FAIL"
    ours = _findings(FAIL.read_text() + extra)
    (finding,) = [f for f in ours if f.object.name == "cloud-controller"]
    assert "HostedCluster clusters/example spec.configuration.proxy.trustedCA" in " ".join(
        finding.evidence)
    assert finding.data["missing_ca"][0]["subject"] == "CN=corp-tls-proxy-ca,O=Example Corp"


def _findings(text: str) -> list:
    from hcpscan.rules.config import ScanConfig
    from hcpscan.rules.suppress import Suppressor
    from hcpscan.scan import RuleSelection, load_rules, run_scan
    config = ScanConfig()
    rules = load_rules(config, RuleSelection(select=["PRX016"]))
    return run_scan(_inventory(text), rules, config, Suppressor(config.exemptions)).findings


def test_an_intercepting_proxy_whose_trusted_ca_is_missing_is_not_evaluable() -> None:
    # the Proxy names corp-proxy-ca for its http:// proxy, but the ConfigMap is not in the input
    text = RUNTIMES_FAIL.read_text().replace("  name: corp-proxy-ca\n  namespace: openshift-config",
                                             "  name: other\n  namespace: openshift-config")
    text = text.replace("https://secure-proxy", "http://proxy")
    (result,) = _prx016(text)
    assert result.status.name == "NOT_EVALUABLE", result.reason
    assert "corp-proxy-ca" in result.reason


# A must-gather holds a Deployment with its ReplicaSet and Pods, a CronJob with its Jobs: the
# controller is judged, once (the other proxy rules do the same), and a CronJob is a workload.
_OWNED = """---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: reporter-5d8f9
  namespace: shop
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: reporter, uid: a, controller: true}]
spec:
  template:
    spec:
      containers:
      - name: reporter
        image: registry.example.com/shop/reporter:1.4
        env: [{name: HTTPS_PROXY, value: "http://proxy.corp.example.com:3128"}]
---
apiVersion: v1
kind: Pod
metadata:
  name: reporter-5d8f9-x2x7q
  namespace: shop
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: reporter-5d8f9, uid: b, controller: true}]
spec:
  containers:
  - name: reporter
    image: registry.example.com/shop/reporter:1.4
    env: [{name: HTTPS_PROXY, value: "http://proxy.corp.example.com:3128"}]
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly-export
  namespace: shop
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: export
            image: registry.example.com/shop/export:2.0
            env: [{name: HTTPS_PROXY, value: "https://secure-proxy.corp.example.com:3129"}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: nightly-export-2891
  namespace: shop
  ownerReferences: [{apiVersion: batch/v1, kind: CronJob, name: nightly-export, uid: c, controller: true}]
spec:
  template:
    spec:
      restartPolicy: OnFailure
      containers:
      - name: export
        image: registry.example.com/shop/export:2.0
        env: [{name: HTTPS_PROXY, value: "https://secure-proxy.corp.example.com:3129"}]
"""


def test_a_controllers_pods_are_not_judged_again_and_a_cronjob_is(tmp_path: Path) -> None:
    from tests.rules.harness import scan
    (tmp_path / "dump.yaml").write_text(RUNTIMES_FAIL.read_text() + _OWNED)
    judged = [f.object.kind + " " + f.object.name for f in scan([tmp_path / "dump.yaml"],
                                                                 ["PRX016"]).findings]
    assert "Deployment reporter" in judged and "CronJob nightly-export" in judged, judged
    assert not any(k.split()[0] in ("ReplicaSet", "Pod", "Job") for k in judged), judged


def test_an_intercepting_http_proxy_whose_ca_is_not_known_is_not_evaluable(tmp_path: Path) -> None:
    # the user says the http:// proxy re-signs TLS, but no trustedCA and no proxy_ca_files
    # name its CA: the workloads behind it cannot be judged - never "no https:// proxy"
    from hcpscan.rules.config import load_config
    from tests.rules.harness import scan
    (tmp_path / "app.yaml").write_text(RENDERED_HTTP_ONLY)
    (tmp_path / ".hcpscan.yaml").write_text("inputs:\n  proxy_intercepts_tls: true\n")
    (result,) = scan([tmp_path / "app.yaml"], ["PRX016"],
                     load_config(tmp_path / ".hcpscan.yaml")).results
    assert result.status.name == "NOT_EVALUABLE", result
    assert "inputs.proxy_ca_files" in result.reason and "intercepts" in result.reason


RENDERED_HTTP_ONLY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: shop}
spec:
  template:
    spec:
      containers:
      - name: app
        image: registry.example.com/shop/app:1.0
        env:
        - {name: HTTPS_PROXY, value: "http://proxy.corp.example.com:3128"}
"""


def test_openssl_reads_its_cert_pem_not_the_rhel_ca_bundle_crt_beside_it() -> None:
    # OpenSSL's default file is <OPENSSLDIR>/cert.pem (RHEL: /etc/pki/tls/cert.pem, a link to
    # /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem); /etc/pki/tls/certs/ca-bundle.crt is
    # another link to that file, which curl and Go read but OpenSSL does not: a bundle mounted
    # over it is not what Python's ssl module loads
    def over(path: str):  # on a UBI image (the fixture's python:3.12-slim is Debian)
        return lambda t: t.replace(
            '        - name: REQUESTS_CA_BUNDLE\n          value: "/etc/proxy-ca/ca.crt"\n'
            "        volumeMounts:\n        - name: proxy-ca\n          mountPath: /etc/proxy-ca\n",
            f"        volumeMounts:\n        - name: proxy-ca\n          mountPath: {path}\n"
            "          subPath: ca.crt\n").replace(
            "docker.io/library/python:3.12-slim", "registry.access.redhat.com/ubi9/python-312")
    assert _loads(RUNTIMES_PASS, "billing", "openssl",
                  over("/etc/pki/tls/certs/ca-bundle.crt")) == []
    assert _loads(RUNTIMES_PASS, "billing", "openssl",
                  over("/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem")) == ["corp-tls-proxy-ca"]
    assert _loads(RUNTIMES_PASS, "billing", "curl",
                  over("/etc/pki/tls/certs/ca-bundle.crt")) == ["corp-tls-proxy-ca"]


def test_a_container_whose_no_proxy_is_star_never_dials_the_proxy() -> None:
    # NO_PROXY=* sends every request direct (Go, curl, Python, Node): the proxy's CA is never
    # needed, whatever the container mounts
    text = RUNTIMES_FAIL.read_text()
    assert _prx016(text)[0].status.name == "FAIL"
    starred = text.replace('        - name: NO_PROXY\n          value: ".svc,.cluster.local,'
                           '172.30.0.0/16"\n', '        - name: NO_PROXY\n          value: "*"\n')
    assert starred != text
    (result,) = _prx016(starred)
    assert result.status.name == "NOT_APPLICABLE" and "noProxy" in result.reason, result


def test_a_keystore_mounted_over_the_jdks_cacerts_is_not_evaluable() -> None:
    # the common way to give a JVM a CA: a keystore Secret mounted over $JAVA_HOME's cacerts
    # (Temurin: /opt/java/openjdk/lib/security/cacerts). The JVM reads it; hcpscan cannot
    # (not PEM) - never "it loads no CA"
    inventory, ref = _container(RUNTIMES_PASS, "ledger", lambda t: t.replace(
        '        - name: USE_SYSTEM_CA_CERTS\n          value: "1"\n        volumeMounts:\n'
        '        - name: proxy-ca\n          mountPath: /certificates\n',
        "        volumeMounts:\n        - name: proxy-ca\n"
        "          mountPath: /opt/java/openjdk/lib/security/cacerts\n"
        "          subPath: proxy-ca.crt\n"))
    loaded = container_loaded(inventory, ref, "java")
    assert loaded.certificates == [] and "keystore" in loaded.unknown, loaded


_MIRRORS = """---
apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata: {name: release-mirrors}
spec:
  imageDigestMirrors:
  - source: quay.io/openshift-release-dev/ocp-release
    mirrors: [mirror.corp.example.com:8443/ocp/release]
"""


def test_a_trusted_ca_beside_mirror_registries_does_not_make_the_http_proxy_intercepting(
        tmp_path: Path) -> None:
    # a disconnected install copies the mirror registry's CA (additionalTrustBundle) into the
    # Proxy's trustedCA: that names no CA of the http:// proxy, so the workloads behind it are
    # not reported HIGH on a guess - they are not evaluable until the user says
    from hcpscan.rules.config import load_config
    from tests.rules.harness import scan
    (tmp_path / "in.yaml").write_text(RUNTIMES_FAIL.read_text() + _MIRRORS)
    report = scan([tmp_path / "in.yaml"], ["PRX016"])
    names = " ".join(f.message for f in report.findings)
    assert "shop/reporter" not in names and "shop/storefront" in names  # https:// still judged
    (result,) = report.results
    assert "mirror" in result.reason and "proxy_intercepts_tls" in result.reason, result.reason
    # the user says it intercepts: judged again
    (tmp_path / ".hcpscan.yaml").write_text("inputs:\n  proxy_intercepts_tls: true\n")
    said = scan([tmp_path / "in.yaml"], ["PRX016"], load_config(tmp_path / ".hcpscan.yaml"))
    assert "shop/reporter" in " ".join(f.message for f in said.findings)


def test_a_hosted_clusters_image_content_sources_are_mirror_registries_too() -> None:
    # a control-plane Deployment dialing the HostedCluster's http:// proxy: its trustedCA names
    # the proxy's CA unless the HostedCluster pulls from mirrors (spec.imageContentSources)
    extra = _control_plane_deployment("http://proxy.corp.example.com:3128")
    text = FAIL.read_text() + extra
    assert any(f.object.name == "cloud-controller" for f in _findings(text))
    mirrored = text.replace("spec:\n  configuration:\n    proxy:\n", (
        "spec:\n  imageContentSources:\n  - source: quay.io/openshift-release-dev/ocp-release\n"
        "    mirrors: [mirror.corp.example.com:8443/ocp/release]\n  configuration:\n"
        "    proxy:\n"), 1)
    assert mirrored != text
    assert not any(f.object.name == "cloud-controller" for f in _findings(mirrored))
    (result,) = _prx016(mirrored)
    assert "spec.imageContentSources" in result.reason, result.reason


def test_an_intercepting_http_proxy_set_only_as_http_proxy_carries_no_tls() -> None:
    # HTTP_PROXY alone sends plain http:// requests through the proxy; https:// requests go
    # direct (Go, curl, Python): an intercepting proxy never re-signs TLS for this container
    text = RUNTIMES_FAIL.read_text()
    only_http = text.replace('        - name: HTTPS_PROXY\n          value: "http://proxy.corp.'
                             'example.com:3128"', '        - name: HTTP_PROXY\n          value: '
                             '"http://proxy.corp.example.com:3128"')
    assert only_http != text
    assert "shop/reporter" in " ".join(f.message for f in _findings(text))
    assert "shop/reporter" not in " ".join(f.message for f in _findings(only_http))
