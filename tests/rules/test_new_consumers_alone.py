"""The rules that judge issue 13's new proxy consumers, each run alone on a must-gather,
find what they find among all rules: the loader keeps every kind their consumers are
built from (HelmRelease, App, KubeadmControlPlane, KlusterletConfig,
KlusterletAddonConfig, MachineConfig, install-configs in ConfigMaps ...)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hcpscan.inventory.resources import plural_of
from tests.conftest import FIXTURES
from tests.rules.harness import scan

RULES = ["PRX005", "PRX008", "PRX012", "PRX013", "OCM007", "OCM008"]
SOURCES = [FIXTURES / "rules" / rule / "fail" / name for rule, name in [
    ("PRX005", "capi-fleet-values.yaml"), ("PRX005", "machineconfig-dropin.yaml"),
    ("PRX008", "node-and-fleet-configs.yaml"), ("PRX012", "klusterlet-and-install-config.yaml"),
    ("PRX013", "chart-values-and-ocm.yaml"), ("OCM007", "misspelled-resources.yaml"),
    ("OCM008", "configs-outside-spec.yaml")]]
CLUSTER_SCOPED = {"KlusterletConfig", "MachineConfig", "ClusterManagementAddOn", "Network"}
INSTALL_CONFIG = """\
apiVersion: v1
baseDomain: example.com
metadata: {name: edge}
platform: {none: {}}
proxy:
  httpProxy: https://svc-proxy:S3cret@proxy.corp.example.com:3129
  noProxy: .corp.example.com,<no value>
"""


def _must_gather(root: Path) -> Path:
    """The fixtures' objects laid out as `oc adm must-gather` writes them."""
    base = root / "must-gather.local.1" / "image"
    lists: dict[Path, list[dict]] = {}
    seen: set[tuple[str, str, str]] = set()
    for path in SOURCES:
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc or "kind" not in doc:
                continue  # install-config files: added below as the cluster keeps them
            meta = doc["metadata"]
            while (doc["kind"], meta.get("namespace", ""), meta["name"]) in seen:
                meta["name"] += "-again"  # two fixtures' objects of one name: keep both
            seen.add((doc["kind"], meta.get("namespace", ""), meta["name"]))
            group = doc["apiVersion"].rpartition("/")[0] or "core"
            where = (base / "cluster-scoped-resources" if doc["kind"] in CLUSTER_SCOPED
                     else base / "namespaces" / doc["metadata"]["namespace"])
            lists.setdefault(where / group / f"{plural_of(doc['kind'])}.yaml", []).append(doc)
    kube_system = base / "namespaces" / "kube-system" / "core" / "configmaps.yaml"
    lists.setdefault(kube_system, []).append({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cluster-config-v1", "namespace": "kube-system"},
        "data": {"install-config": INSTALL_CONFIG}})
    for file, items in lists.items():
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return root


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _must_gather(tmp_path_factory.mktemp("estate"))


@pytest.fixture(scope="module")
def together(dump: Path) -> dict[str, list[str]]:
    report = scan([dump], RULES)
    return {rule: sorted(f.key for f in report.findings if f.rule_id == rule) for rule in RULES}


@pytest.mark.parametrize("rule", RULES)
def test_each_rule_alone_finds_what_it_finds_among_all(dump: Path, together, rule: str) -> None:
    alone = scan([dump], [rule])
    assert together[rule], f"{rule} finds nothing on the dump"
    assert sorted(f.key for f in alone.findings) == together[rule]


def test_install_config_kept_by_the_cluster_is_judged(dump: Path) -> None:
    report = scan([dump], ["PRX008", "PRX012", "PRX013"])
    found = {(f.rule_id, f.object.kind, f.object.name) for f in report.findings
             if f.object.name == "cluster-config-v1"}
    # credentials in a ConfigMap, an https:// httpProxy without CA, a <no value> entry
    assert {r for r, _, _ in found} == {"PRX008", "PRX012", "PRX013"}, found
