"""OCM002's fix: the one known proxy CA appended to a klusterlet kubeconfig's
`certificate-authority-data`, in the Secret key the kubeconfig is kept in (text in
`stringData`, base64 in `data`), changing only that line of the kubeconfig."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import yaml

from hcpscan.analysis.proxy.pem import parse_bundle
from hcpscan.findings.fix import NoFix, Remedy
from hcpscan.rules.config import load_config
from tests.conftest import FIXTURES
from tests.fixes.test_fix_cli import _only_changed
from tests.rules.harness import scan

CASES = FIXTURES / "rules" / "OCM002" / "fail"
ADDON = "hub-kubeconfig-wrong-second-ca.yaml"  # its AddOnDeploymentConfig names the proxy CA
BOOTSTRAP = "bootstrap-kubeconfig-hub-ca-only.yaml"


def _docs(path: Path) -> list[dict]:
    return list(yaml.safe_load_all(path.read_text()))


def _proxy_ca_pem() -> str:
    addon = [d for d in _docs(CASES / ADDON) if d["kind"] == "AddOnDeploymentConfig"][0]
    return base64.b64decode(addon["spec"]["proxyConfig"]["caBundle"]).decode()


def _ca_data(kubeconfig: str) -> str:
    return yaml.safe_load(kubeconfig)["clusters"][0]["cluster"]["certificate-authority-data"]


def _failing(folder: Path, config: Path | None = None):
    loaded = load_config(config) if config is not None else None
    return [f for f in scan([folder], ["OCM002"], loaded).findings if f.status.name == "FAIL"]


def test_fix_appends_the_proxy_ca_in_stringdata_and_in_base64_data(tmp_path, run_cli):
    tree = tmp_path / "hub"
    shutil.copytree(CASES, tree)
    before = {p.name: p.read_text() for p in tree.iterdir()}
    result = run_cli("fix", str(tree), "--no-progress", "--no-config", "--select", "OCM002")
    assert result.code == 0, result.out + result.err
    assert _failing(tree) == []
    proxy = parse_bundle(_proxy_ca_pem()).certificates[0].sha256

    # stringData: the kubeconfig's one CA line changes, as text
    text = (tree / BOOTSTRAP).read_text()
    (tag, old, new), = _only_changed(before[BOOTSTRAP], text)
    assert tag == "replace" and len(old) == len(new) == 1
    assert old[0].split(":")[0] == new[0].split(":")[0] == "        certificate-authority-data"
    kubeconfig = [d for d in _docs(tree / BOOTSTRAP) if d["kind"] == "Secret"][0]["stringData"]["kubeconfig"]
    old_kubeconfig = [d for d in yaml.safe_load_all(before[BOOTSTRAP]) if d["kind"] == "Secret"][0]
    bundle = base64.b64decode(_ca_data(kubeconfig)).decode()
    hub = base64.b64decode(_ca_data(old_kubeconfig["stringData"]["kubeconfig"])).decode()
    assert bundle == hub + _proxy_ca_pem().strip() + "\n"  # the hub CA first, as written
    assert [c.sha256 for c in parse_bundle(bundle).certificates][1] == proxy

    # data: base64 of the kubeconfig again; decoded, only its CA line differs
    secret = [d for d in _docs(tree / ADDON) if d["kind"] == "Secret"][0]
    old_secret = [d for d in yaml.safe_load_all(before[ADDON]) if d["kind"] == "Secret"][0]
    new_inner = base64.b64decode(secret["data"]["kubeconfig"]).decode()
    old_inner = base64.b64decode(old_secret["data"]["kubeconfig"]).decode()
    (tag, old, new), = _only_changed(old_inner, new_inner)
    assert tag == "replace" and "certificate-authority-data" in old[0] and len(new) == 1
    assert proxy in {c.sha256 for c in parse_bundle(_ca_data(new_inner)).certificates}
    assert len(_only_changed(before[ADDON], (tree / ADDON).read_text())) == 1


def test_no_known_proxy_ca_says_how_to_name_one_and_the_config_file_makes_the_fix(tmp_path):
    tree = tmp_path / "agent"
    tree.mkdir()
    shutil.copy(CASES / BOOTSTRAP, tree / BOOTSTRAP)
    found, = _failing(tree)
    assert isinstance(found.remedy, NoFix) and "proxy_ca_files" in found.remedy.why

    ca = tmp_path / "proxy-ca.pem"
    ca.write_text(_proxy_ca_pem())
    config = tmp_path / "hcpscan.yaml"
    config.write_text(f"inputs:\n  proxy_ca_files: [{ca}]\n")
    found, = _failing(tree, config)
    assert isinstance(found.remedy, Remedy)
    assert f"proxy_ca_files {ca}" in found.remedy.summary


def test_several_known_proxy_cas_are_not_guessed_between(tmp_path):
    tree = tmp_path / "agent"
    shutil.copytree(CASES, tree)
    hub = _ca_data([d for d in _docs(CASES / BOOTSTRAP)
                    if d["kind"] == "Secret"][0]["stringData"]["kubeconfig"])
    ca = tmp_path / "other-ca.pem"
    ca.write_text(base64.b64decode(hub).decode())  # a second, different "proxy" CA
    # named beside the add-on's: a file that contradicted the add-on alone would make its
    # caBundle no proof (OCM006 reports it) and leave one known CA
    proxy = tmp_path / "proxy-ca.pem"
    proxy.write_text(_proxy_ca_pem())
    config = tmp_path / "hcpscan.yaml"
    config.write_text(f"inputs:\n  proxy_ca_files: [{ca}, {proxy}]\n")
    whys = [f.remedy.why for f in _failing(tree, config) if isinstance(f.remedy, NoFix)]
    assert whys and all("several valid proxy CAs" in w for w in whys)


def test_an_expired_known_ca_is_not_written_and_the_valid_one_is():
    from hcpscan.analysis.proxy.trust import KnownProxyCA
    from hcpscan.rules.templates.trust import _one_proxy_ca

    configmaps = FIXTURES / "example" / "must-gather.local.4242" / \
        "quay-io-openshift-must-gather-sha256-5be0c0ffee" / "namespaces" / "openshift-config" / \
        "core" / "configmaps.yaml"
    bundle, = [i["data"]["ca-bundle.crt"] for i in yaml.safe_load(configmaps.read_text())["items"]
               if i["metadata"]["name"] == "corp-proxy-ca"]
    certs = parse_bundle(bundle).certificates
    assert sorted(c.expired() for c in certs) == [False, True]
    known = [KnownProxyCA(c, "trustedCA") for c in certs]
    chosen = _one_proxy_ca(known, "caBundle")
    assert isinstance(chosen, KnownProxyCA) and not chosen.certificate.expired()
    assert chosen.certificate.pem.startswith("-----BEGIN CERTIFICATE-----")
    expired = [k for k in known if k.certificate.expired()]
    assert "expired" in _one_proxy_ca(expired, "caBundle").why


def test_prx012_findings_say_what_to_set_per_case():
    found = [f for f in scan([FIXTURES / "rules" / "PRX012" / "fail"], ["PRX012"]).findings
             if f.status.name == "FAIL"]
    whys = {f.message: f.remedy.why for f in found}
    assert all(isinstance(f.remedy, NoFix) for f in found)
    kubeconfig = next(w for m, w in whys.items() if "without certificate-authority-data" in m)
    assert "server's CA" in kubeconfig and "system roots" in kubeconfig
    missing = next(w for m, w in whys.items() if "is missing" in m)
    assert "create ConfigMap clusters/payments-proxy-ca with key ca-bundle.crt" in missing
    install = next(w for m, w in whys.items() if "additionalTrustBundle" in m)
    assert install.startswith("add additionalTrustBundle")
    dropped = next(w for m, w in whys.items() if "is dropped" in m)  # not about a CA
    assert dropped.startswith("set spec.hubKubeAPIServerConfig.proxyURL")
    pasted = {m: w for m, w in whys.items() if "is not base64" in m}
    assert sorted(pasted) == [
        "AddOnDeploymentConfig cluster1/addon-proxy-settings: caBundle is not base64: no client "
        "reads it",
        "Secret open-cluster-management-agent/bootstrap-hub-kubeconfig: "
        "certificate-authority-data is not base64: the kubeconfig fails to load"]
    assert all(w.startswith("base64-encode what ") for w in pasted.values())
    assert all("proxy_ca_files" in w for m, w in whys.items()
               if m not in pasted and w != dropped)  # no CA known in this input


def test_reports_show_that_secret_data_changed_never_what_it_holds(tmp_path, run_cli, monkeypatch):
    tree = tmp_path / "hub"
    shutil.copytree(CASES, tree)
    monkeypatch.chdir(tmp_path)
    secret = [d for d in _docs(tree / ADDON) if d["kind"] == "Secret"][0]["data"]["kubeconfig"]
    for fmt in ("json", "sarif", "markdown", "html"):
        out = run_cli("scan", "hub", "--format", fmt, "--no-progress", "--no-config",
                      "--select", "OCM002").out
        assert secret[:200] not in out and "Secret data, " in out, fmt
    patch = tmp_path / "fix.patch"
    run_cli("fix", "hub", "--no-progress", "--no-config", "--select", "OCM002", "--diff", str(patch))
    assert secret[:200] in patch.read_text()  # the patch git applies holds the real text
