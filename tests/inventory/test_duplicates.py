"""One object written more than once: said the same way for every kind, with advice that
fits GitOps overlays (scan each environment on its own) and mistakes (keep one)."""

from __future__ import annotations

from pathlib import Path

from hcpscan.inventory import Inventory
from hcpscan.sources.loader import load_paths

POLICY = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: allow-from-monitoring
  namespace: {namespace}
spec:
  podSelector: {{}}
  ingress:
  - from:
    - namespaceSelector:
        matchLabels:
          network.openshift.io/policy-group: monitoring
"""
HOSTED_CLUSTER = """\
apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata:
  name: example-hcp
  namespace: clusters
spec:
  platform:
    type: KubeVirt
  release:
    image: quay.io/openshift-release-dev/ocp-release:4.17.0-multi
"""


def _inventory(root: Path, files: dict[str, str]) -> Inventory:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    result = load_paths([str(root)])
    return Inventory(result.objects, result.diagnostics, result.skipped)


def test_overlays_for_two_environments_are_told_to_be_scanned_apart(tmp_path):
    inventory = _inventory(tmp_path, {
        "policies/production/allow.yaml": POLICY.format(namespace="billing"),
        "policies/staging/allow.yaml": POLICY.format(namespace="billing"),
        "policies/staging/other.yaml": POLICY.format(namespace="billing").replace(
            "allow-from-monitoring", "allow-from-ingress")})
    (warning,) = inventory.diagnostics
    production, staging = tmp_path / "policies" / "production", tmp_path / "policies" / "staging"
    assert (warning.severity, warning.path, warning.line) == \
        ("warning", str(staging / "allow.yaml"), 1)
    assert warning.message.startswith(
        f"NetworkPolicy billing/allow-from-monitoring is written both in {production} and in "
        f"{staging} (once; first at {production / 'allow.yaml'}:1)")
    assert f"scan each on its own (hcpscan scan {production}, then hcpscan scan {staging})" \
        in warning.hint
    assert "remove the duplicate" not in warning.hint


def test_every_kind_is_said_the_same_way_once_per_pair_of_places(tmp_path):
    """Five copies of one HostedCluster were kept silently while NetworkPolicies were said."""
    files = {f"0{i}-example/hostedcluster.yaml": HOSTED_CLUSTER for i in range(1, 4)}
    files["01-example/policy.yaml"] = POLICY.format(namespace="clusters")
    files["02-example/policy.yaml"] = POLICY.format(namespace="clusters")
    inventory = _inventory(tmp_path, files)
    (warning,) = inventory.diagnostics
    first, second, third = (tmp_path / f"0{i}-example" for i in range(1, 4))
    assert warning.message.startswith(
        f"2 objects are written both in {first} and in {second}, {third} (HostedCluster "
        "clusters/example-hcp, NetworkPolicy clusters/allow-from-monitoring, 3 copies after the "
        "first; first at ")
    assert [o.kind for o in inventory.of_kind("HostedCluster")] == ["HostedCluster"] * 3


def test_a_copy_in_the_same_file_is_a_mistake_to_fix(tmp_path):
    text = POLICY.format(namespace="billing")
    inventory = _inventory(tmp_path, {"policies.yaml": text + "---\n" + text})
    (warning,) = inventory.diagnostics
    assert warning.line == 14
    assert warning.message.startswith("NetworkPolicy billing/allow-from-monitoring is defined "
                                      f"again (first at {tmp_path / 'policies.yaml'}:1)")
    assert warning.hint == "keep one of the two: applied together, the last one wins"


def test_without_a_namespace_is_the_same_object_as_in_default(tmp_path):
    inventory = _inventory(tmp_path, {
        "a/policy.yaml": POLICY.format(namespace="default"),
        "b/policy.yaml": POLICY.replace("  namespace: {namespace}\n", "").format()})
    (warning,) = inventory.diagnostics
    assert "NetworkPolicy default/allow-from-monitoring is written both in" in warning.message


def test_cluster_scoped_copies_are_named_as_written(tmp_path):
    binding = ("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n"
               "metadata:\n  name: hcpscan-readonly\nroleRef: {apiGroup: rbac.authorization.k8s.io,"
               " kind: ClusterRole, name: view}\n")
    inventory = _inventory(tmp_path, {"a/crb.yaml": binding, "b/crb.yaml": binding})
    (warning,) = inventory.diagnostics
    assert "ClusterRoleBinding hcpscan-readonly is written both in" in warning.message


CMA = """\
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata:
  name: helloworld
  namespace: {namespace}
spec:
  addOnMeta:
    displayName: helloworld
"""


def test_a_cluster_scoped_kind_an_overlay_namespaced_is_one_object(tmp_path):
    """kustomize's namespace transformer writes each overlay's namespace on kinds it does
    not know as cluster-scoped (a ClusterManagementAddOn): the API server drops it, so
    the two overlays write one object twice."""
    inventory = _inventory(tmp_path, {"a/cma.yaml": CMA.format(namespace="ns-a"),
                                      "b/cma.yaml": CMA.format(namespace="ns-b")})
    (warning,) = inventory.diagnostics
    assert "ClusterManagementAddOn helloworld (cluster-scoped: the API server drops the " \
        "namespaces ns-a and ns-b written on it) is written both in" in warning.message
    # a namespaced kind in two namespaces is two objects
    assert not _inventory(tmp_path / "np", {"a/np.yaml": POLICY.format(namespace="ns-a"),
                                            "b/np.yaml": POLICY.format(namespace="ns-b")}
                          ).diagnostics
