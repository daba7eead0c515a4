"""`hcpscan fix` on copies of real files: a plain GitOps folder, a kustomize tree and Helm
output. The patch a reviewer reads changes only the lines the fixes are about, applies
with `git apply`, and the scan of the patched tree has none of the fixed findings and no
new one."""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, SHARED, require

APPS = SHARED / "realworld" / "gs-wc-apps-proxy"
CHART_OPERATOR = APPS / "giantswarm" / "chart-operator.rendered.yaml"
NO_PROXY = ("172.31.0.0/16,10.244.0.0/16,test.gigantic.io,some.other.domain,10.0.0.0/24,svc,"
            "127.0.0.1,localhost")


def _plain_copy(source: Path, dest: Path) -> Path:
    """The rendered files as a GitOps folder keeps them: without Helm's `# Source:` lines."""
    for path in sorted(source.rglob("*.yaml")):
        target = dest / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                                  if not line.startswith("# Source:")))
    return dest


def _findings(run_cli, *args: str) -> list[dict]:
    result = run_cli("scan", *args, "--format", "json", "--no-progress")
    assert result.code in (0, 1), result.err
    return json.loads(result.out)["findings"]


def _keys(findings: list[dict]) -> set[tuple[str, str]]:
    return {(f["rule_id"], f["fingerprint"]) for f in findings}


def _only_changed(before: str, after: str) -> list[tuple[str, list[str], list[str]]]:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    return [(tag, a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in
            difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal"]


@pytest.fixture
def gitops(tmp_path: Path) -> tuple[Path, Path]:
    require(APPS.is_dir(), "../shared/realworld/gs-wc-apps-proxy")
    tree = _plain_copy(APPS, tmp_path / "gitops")
    config = tmp_path / "hcpscan.yaml"
    config.write_text("inputs:\n  proxy_addresses: {proxy.test.gigantic.io: [10.0.0.53]}\n")
    return tree, config


def test_plain_gitops_folder_patch_is_readable_applies_and_clears(gitops, tmp_path, run_cli):
    tree, config = gitops
    pristine = shutil.copytree(tree, tmp_path / "pristine")
    before = _findings(run_cli, str(tree), "--config", str(config))
    fixable = {(f["rule_id"], f["fingerprint"]) for f in before
               if f.get("fix", {}).get("changes")}
    # PRX014 is not evaluable here: cainjector and webhook talk only to the API server, whose
    # Service IP their NO_PROXY may cover, and the service network is not in the input
    assert {rule for rule, _ in fixable} == {"PRX005"}

    patch = tmp_path / "fix.patch"
    result = run_cli("fix", str(tree), "--config", str(config), "--diff", str(patch),
                     "--no-progress")
    assert result.code == 1, result.err  # PRX011 has no automatic fix and says why
    assert "no automatic fix: PRX011" in result.err
    assert [p.read_text() for p in sorted(tree.rglob("*.yaml"))] == \
        [p.read_text() for p in sorted(pristine.rglob("*.yaml"))], "--diff must not edit"
    text = patch.read_text()
    removed = [line[1:] for line in text.splitlines() if line.startswith("-")
               and not line.startswith("---")]
    # only the three NO_PROXY values change; everything else is added lines
    assert removed == [f"          value: {NO_PROXY}"] * 2 + [f'  no_proxy: "{NO_PROXY}"']
    assert f"+          value: {NO_PROXY},.cluster.local" in text
    assert text.count("+  name: cert-manager-app-") == 0  # no proxy policy without PRX014

    require(shutil.which("git"), "git")
    subprocess.run(["git", "apply", "--unsafe-paths", "--directory", str(tree.relative_to("/")),
                    str(patch)], cwd="/", check=True, capture_output=True)
    after = _findings(run_cli, str(tree), "--config", str(config))
    assert not fixable & _keys(after), "a fixed finding is still reported"
    assert _keys(after) <= _keys(before), "the fix brought a new finding"


def test_in_place_edits_keep_every_other_line(gitops, tmp_path, run_cli):
    tree, config = gitops
    original = (tree / "giantswarm" / "chart-operator.rendered.yaml").read_text()
    result = run_cli("fix", str(tree), "--config", str(config), "--select", "PRX005",
                     "--no-progress")
    assert result.code == 0, result.err
    changed = _only_changed(original, (tree / "giantswarm" / "chart-operator.rendered.yaml")
                            .read_text())
    assert [(tag, len(old), len(new)) for tag, old, new in changed] == [("replace", 1, 1)] * 2
    assert all(new[0] == old[0].rstrip("\n") + ",.cluster.local\n" for _, old, new in changed)
    assert not [f for f in _findings(run_cli, str(tree), "--select", "PRX005")]


def test_out_dir_writes_patched_copies_only(gitops, tmp_path, run_cli):
    tree, config = gitops
    out = tmp_path / "fixed"
    original = (tree / "kube-system" / "cert-manager-app.rendered.yaml").read_text()
    result = run_cli("fix", str(tree), "--config", str(config), "--out", str(out),
                     "--no-progress")
    assert result.code == 1, result.err
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.yaml")) == \
        ["giantswarm/chart-operator.rendered.yaml", "kube-system/cert-manager-app.rendered.yaml"]
    assert (tree / "kube-system" / "cert-manager-app.rendered.yaml").read_text() == original
    assert f"no_proxy: \"{NO_PROXY},.cluster.local\"" in \
        (out / "kube-system" / "cert-manager-app.rendered.yaml").read_text()


def test_kustomize_tree_edits_the_base_not_the_build(tmp_path, run_cli):
    require(shutil.which("kubectl"), "kubectl")
    require(CHART_OPERATOR.is_file(), str(CHART_OPERATOR))
    tree = tmp_path / "kz"
    (tree / "base").mkdir(parents=True)
    base = tree / "base" / "chart-operator.yaml"
    base.write_text("".join(line for line in CHART_OPERATOR.read_text().splitlines(True)
                            if not line.startswith("# Source:")))
    kustomization = "resources:\n- base/chart-operator.yaml\ncommonLabels:\n  team: platform\n"
    (tree / "kustomization.yaml").write_text(kustomization)
    original = base.read_text()
    before = _findings(run_cli, str(tree), "--select", "PRX005")
    assert [f["object"]["name"] for f in before] == ["chart-operator"]
    assert before[0]["location"]["path"].endswith("kustomization.yaml")  # a built object
    result = run_cli("fix", str(tree), "--select", "PRX005", "--no-progress")
    assert result.code == 0, result.err
    assert (tree / "kustomization.yaml").read_text() == kustomization
    changed = _only_changed(original, base.read_text())
    assert [tag for tag, _, _ in changed] == ["replace", "replace"]
    assert _findings(run_cli, str(tree), "--select", "PRX005") == []


def test_helm_output_names_the_chart_template_and_changes_nothing(tmp_path, run_cli):
    require(APPS.is_dir(), "../shared/realworld/gs-wc-apps-proxy")
    tree = shutil.copytree(APPS, tmp_path / "rendered")
    result = run_cli("fix", str(tree), "--select", "PRX005", "--no-progress")
    assert result.code == 1
    assert "change the Helm template chart-operator/templates/deployment.yaml" in result.err
    assert "change the Helm template cert-manager-app/templates/proxy.yaml" in result.err
    assert (tree / "giantswarm" / "chart-operator.rendered.yaml").read_text() == \
        CHART_OPERATOR.read_text()


def test_standard_input_cannot_be_fixed(run_cli):
    result = run_cli("fix", "-")
    assert result.code == 2
    assert "standard input cannot be fixed" in result.err


def test_in_place_keeps_links_and_file_modes(tmp_path, run_cli):
    source = FIXTURES / "rules" / "HCP004" / "fail" / "payments-egress.yaml"
    tree = tmp_path / "tree"
    (tree / "real").mkdir(parents=True)
    target = tree / "real" / "policy.yaml"
    target.write_text(source.read_text())
    target.chmod(0o640)
    (tree / "links").mkdir()
    (tree / "links" / "linked.yaml").symlink_to(target)
    result = run_cli("fix", str(tree / "links"), "--follow-symlinks", "--select", "HCP004",
                     "--no-progress")
    assert result.code == 0, result.err
    assert "- {port: 5353, protocol: TCP}" in target.read_text()
    assert (tree / "links" / "linked.yaml").is_symlink()
    assert target.stat().st_mode & 0o777 == 0o640
