"""A kustomize root is built with `kubectl kustomize` when kubectl is there, named otherwise."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import tarfile
from pathlib import Path

import pytest

from hcpscan.sources import kustomize
from hcpscan.sources.loader import KUSTOMIZE_INPUT, KUSTOMIZE_NOT_BUILT, load_paths
from tests.conftest import require
from tests.sources.dumps import write_tree

needs_kubectl = pytest.mark.usefixtures("kubectl")


@pytest.fixture
def kubectl() -> None:
    require(shutil.which("kubectl"), "kubectl")

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: addon-controller
spec:
  selector: {matchLabels: {app: addon}}
  template:
    metadata: {labels: {app: addon}}
    spec:
      containers:
      - name: controller
        image: quay.io/open-cluster-management/addon-examples:latest
"""
SERVICE = "apiVersion: v1\nkind: Service\nmetadata:\n  name: addon\nspec:\n  ports:\n  - port: 443\n"
PATCH = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: addon-controller\nspec:\n  replicas: 2\n"
KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: open-cluster-management
resources:
- resources/deployment.yaml
- resources/service.yaml
patches:
- path: replicas-patch.yaml
configMapGenerator:
- name: addon-proxy
  literals:
  - HTTPS_PROXY=http://addon:s3cret@proxy.corp.example.com:3128
"""


def _addon(root: Path) -> Path:
    write_tree(root, {"addon/kustomization.yaml": KUSTOMIZATION,
                      "addon/replicas-patch.yaml": PATCH,
                      "addon/resources/deployment.yaml": DEPLOYMENT,
                      "addon/resources/service.yaml": SERVICE,
                      "other/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                              "  name: plain\n  namespace: apps\n"})
    return root


def _no_kubectl(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", str(empty))


def _fake_kubectl(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, script: str) -> None:
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    kubectl = folder / "kubectl"
    kubectl.write_text("#!/bin/sh\n" + script)
    kubectl.chmod(kubectl.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")


@needs_kubectl
def test_a_root_is_built_and_its_objects_located_at_the_kustomization(tmp_path):
    root = _addon(tmp_path / "gitops")
    result = load_paths([str(root)])
    objects = {(o.kind, o.namespace, o.name.split("-")[0] if o.kind == "ConfigMap" else o.name): o
               for o in result.objects}
    deployment = objects[("Deployment", "open-cluster-management", "addon-controller")]
    assert deployment.body["spec"]["replicas"] == 2  # the patch was applied
    assert ("ConfigMap", "open-cluster-management", "addon") in objects  # generated
    assert ("ConfigMap", "apps", "plain") in objects  # beside the root: read as it is
    assert len(result.objects) == 4  # nothing read twice
    kustomization = str(root / "addon" / "kustomization.yaml")
    assert (deployment.source.path, deployment.source.line) == (kustomization, 1)
    (info,) = result.diagnostics
    assert info.severity == "info" and info.path == kustomization
    assert "built with `kubectl kustomize" in info.message and "3 objects" in info.message
    assert result.skipped.counts[KUSTOMIZE_INPUT] == 4


@needs_kubectl
def test_a_finding_on_a_built_object_points_at_the_kustomization(tmp_path, run_cli):
    root = _addon(tmp_path / "gitops")
    result = run_cli("scan", str(root), "--format", "json", "--select", "PRX008")
    report = json.loads(result.out)
    (finding,) = report["findings"]
    assert finding["location"]["path"] == str(root / "addon" / "kustomization.yaml")
    assert finding["location"]["line"] == 1
    assert "s3cret" not in json.dumps(report)


@needs_kubectl
def test_a_base_used_by_an_overlay_is_built_once(tmp_path):
    write_tree(tmp_path, {
        "base/kustomization.yaml": "resources:\n- service.yaml\n",
        "base/service.yaml": SERVICE,
        "overlays/prod/kustomization.yaml": "namespace: prod\nresources:\n- ../../base\n",
    })
    result = load_paths([str(tmp_path)])
    assert [(o.kind, o.namespace) for o in result.objects] == [("Service", "prod")]


def test_without_kubectl_the_root_is_named_with_the_command(tmp_path, monkeypatch):
    _no_kubectl(monkeypatch, tmp_path)
    root = _addon(tmp_path / "gitops")
    result = load_paths([str(root)])
    # the resources it lists, as they are; not the patch, nor the kustomization as an object
    assert sorted((o.kind, o.name) for o in result.objects) == [
        ("ConfigMap", "plain"), ("Deployment", "addon-controller"), ("Service", "addon")]
    (warning,) = result.diagnostics
    assert warning.severity == "warning"
    assert warning.path == str(root / "addon" / "kustomization.yaml")
    assert warning.message.startswith("kustomize root not built: kubectl was not found on PATH")
    assert f"kubectl kustomize {root / 'addon'} > built.yaml && hcpscan scan built.yaml" in warning.hint
    assert result.skipped.counts[KUSTOMIZE_NOT_BUILT] == 2  # the kustomization and the patch
    assert not [d for d in result.diagnostics if "metadata.name" in d.message]


def test_a_failing_build_says_why_and_reads_the_resources(tmp_path, monkeypatch):
    _fake_kubectl(monkeypatch, tmp_path, 'echo \'E1124 10:52:37.516954   20652 run.go:72] "command failed" '
                                         'err="accumulating resources: no such file"\' >&2\nexit 1\n')
    root = _addon(tmp_path / "gitops")
    result = load_paths([str(root)])
    (warning,) = result.diagnostics
    assert "`kubectl kustomize` failed: accumulating resources: no such file;" in warning.message
    assert len(result.objects) == 3


# What kubectl 1.32 writes when a remote base cannot be fetched: klog writes an error
# holding line breaks as a block (`err=<`, the value's lines after a tab, ` >`).
REMOTE_FETCH_FAILED = (
    'E1127 13:30:49.593782   32488 run.go:72] "command failed" err=<\n'
    "\taccumulating resources: accumulation err='accumulating resources from "
    "'https://github.com/example-org/platform//deploy?ref=v1.0.0': Get "
    '"https://github.com/example-org/platform//deploy?ref=v1.0.0": dial tcp: lookup '
    "github.com on 10.255.255.53:53: no such host': failed to run '/usr/bin/git fetch "
    "--depth=1 https://github.com/example-org/platform v1.0.0': fatal: unable to access "
    "'https://github.com/example-org/platform/': Could not resolve host: github.com\n"
    "\t: exit status 128\n"
    " >\n")


def test_a_failing_build_s_multi_line_klog_error_is_read_whole(tmp_path, monkeypatch):
    (tmp_path / "stderr").write_text(REMOTE_FETCH_FAILED)
    _fake_kubectl(monkeypatch, tmp_path, f"cat {tmp_path / 'stderr'} >&2\nexit 1\n")
    root = _addon(tmp_path / "gitops")
    (warning,) = load_paths([str(root)]).diagnostics
    why = warning.message.partition("`kubectl kustomize` failed: ")[2].partition("; the resources")[0]
    assert why.startswith("accumulating resources: accumulation err=")
    assert why.endswith("Could not resolve host: github.com : exit status 128")
    assert " … " in why and len(why) <= 400  # the middle left out, never the cause at the end
    assert "--enable-helm" not in warning.hint


@needs_kubectl
def test_a_kustomization_inflating_a_helm_chart_names_the_flag_it_needs(tmp_path):
    """The real kubectl refuses helmCharts without --enable-helm, in a multi-line klog
    block: the reason is that sentence (not the block's closing ' >') and the command
    given carries the flag."""
    write_tree(tmp_path / "gitops", {
        "eso/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\n"
                                  "kind: Kustomization\nnamespace: external-secrets\n"
                                  "resources:\n- service.yaml\nhelmCharts:\n"
                                  "- name: external-secrets\n  repo: https://charts.external-secrets.io\n"
                                  "  version: 0.9.20\n  releaseName: external-secrets\n"
                                  "  valuesFile: values.yaml\n",
        "eso/values.yaml": "installCRDs: true\n",
        "eso/service.yaml": SERVICE})
    result = load_paths([str(tmp_path / "gitops")])
    (warning,) = [d for d in result.diagnostics if d.severity == "warning"]
    assert warning.message.startswith("kustomize root not built: `kubectl kustomize` failed: "
                                      "trouble configuring builtin HelmChartInflationGenerator")
    assert "`: must specify --enable-helm; the resources it lists" in warning.message
    assert warning.hint.endswith(f"kubectl kustomize --enable-helm {tmp_path / 'gitops' / 'eso'}"
                                 " > built.yaml && hcpscan scan built.yaml")
    assert [o.kind for o in result.objects] == ["Service"]


def test_a_build_that_hangs_is_given_up(tmp_path, monkeypatch):
    _fake_kubectl(monkeypatch, tmp_path, "exec sleep 30\n")
    monkeypatch.setattr(kustomize, "BUILD_TIMEOUT", 0.5)
    root = _addon(tmp_path / "gitops")
    result = load_paths([str(root)])
    (warning,) = result.diagnostics
    assert "did not finish within 0.5 s" in warning.message


def test_a_kustomization_in_an_archive_is_named_not_read_as_an_object(tmp_path):
    archive = tmp_path / "gitops.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in {"addon/kustomization.yaml": KUSTOMIZATION,
                           "addon/resources/service.yaml": SERVICE}.items():
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text.encode()))
    result = load_paths([str(archive)])
    assert [o.kind for o in result.objects] == ["Service"]
    (warning,) = result.diagnostics
    assert warning.message.startswith("kustomize root inside an archive: not built")
    assert "kubectl kustomize DIR" in warning.hint


@needs_kubectl
def test_a_kustomization_given_on_its_own_is_built(tmp_path):
    root = _addon(tmp_path / "gitops")
    result = load_paths([str(root / "addon" / "kustomization.yaml")])
    assert {o.namespace for o in result.objects} == {"open-cluster-management"}
    assert len(result.objects) == 3


def test_a_kustomization_given_on_its_own_without_kubectl(tmp_path, monkeypatch):
    _no_kubectl(monkeypatch, tmp_path)
    root = _addon(tmp_path / "gitops")
    result = load_paths([str(root / "addon" / "kustomization.yaml")])
    assert sorted(o.name for o in result.objects) == ["addon", "addon-controller"]
    (warning,) = result.diagnostics
    assert warning.message.startswith("kustomize root not built")
