"""A rule's ``workloads`` selectors read once (``sides._Picks``) pick exactly the objects
``sides._workload`` picks, selector by selector: names, namespaces and label values as
fnmatch globs or plain text, static (mirror) pods, a hosted control plane's workloads, and
every mix of them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hcpscan.analysis.proxy.sides import _Picks, _workload
from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import K8sObject, SourceLocation

# texts and patterns over a few letters, so globs and plain patterns do match now and then
TEXT = st.text(alphabet="ab-.", max_size=4)
PATTERN = st.text(alphabet="ab-.*?[]!", max_size=5)
SELECTOR = st.fixed_dictionaries({}, optional={
    "names": st.lists(PATTERN, min_size=0, max_size=3),
    "namespaces": st.lists(PATTERN, min_size=0, max_size=3),
    "labels": st.dictionaries(st.sampled_from(["app", "component", "tier"]), PATTERN, max_size=2),
    "static": st.booleans(),
    "hcp": st.booleans(),
})
# the label HyperShift puts on control-plane pods, or another
LABEL_KEYS = st.sampled_from(["app", "component", "hypershift.openshift.io/hosted-control-plane"])
ANNOTATIONS = st.sampled_from([{}, {"kubernetes.io/config.mirror": "x"},
                               {"kubernetes.io/config.source": "file"},
                               {"kubernetes.io/config.source": "api"}])


def _object(kind: str, namespace: str, name: str, labels: dict[str, object],
            annotations: dict[str, str]) -> K8sObject:
    body: dict[str, object] = {
        "apiVersion": "v1", "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "labels": labels,
                     "annotations": annotations}}
    if kind == "Deployment":  # a workload's pod labels are its template's
        body["spec"] = {"template": {"metadata": {"labels": labels}}}
    return K8sObject("management", "v1", kind, namespace, name, body,
                     SourceLocation("x.yaml", 1))


@settings(max_examples=600, deadline=None)
@given(named=st.dictionaries(st.text(max_size=3), SELECTOR, min_size=1, max_size=4),
       objects=st.lists(st.tuples(st.sampled_from(["Pod", "Deployment"]), TEXT, TEXT,
                                  st.dictionaries(LABEL_KEYS,
                                                  st.one_of(TEXT, st.integers(0, 3)), max_size=3),
                                  ANNOTATIONS), min_size=1, max_size=6))
def test_picks_answer_as_workload_does(named, objects) -> None:
    made = [_object(*o) for o in objects]
    inventory = Inventory(made, [], [])
    picks = _Picks(named, inventory)
    for obj in made:
        assert picks.any(obj) is (_workload(obj, named, inventory) is not None), (named, obj.body)


def test_plain_and_glob_patterns_both_match() -> None:
    named = {"cert-manager": {"names": ["cert-manager", "cm-*"]},
             "static apiserver": {"static": True, "namespaces": ["kube-system"],
                                  "labels": {"component": "kube-apiserver"}}}
    inventory = Inventory([], [], [])
    picks = _Picks(named, inventory)
    mirror = {"kubernetes.io/config.mirror": "x"}
    cases = [
        (_object("Deployment", "a", "cert-manager", {}, {}), True),
        (_object("Deployment", "a", "cm-webhook", {}, {}), True),
        (_object("Deployment", "a", "cert-manager-x", {}, {}), False),
        (_object("Pod", "kube-system", "kas", {"component": "kube-apiserver"}, mirror), True),
        (_object("Pod", "kube-system", "kas", {"component": "kube-apiserver"}, {}), False),
        (_object("Pod", "default", "kas", {"component": "kube-apiserver"}, mirror), False),
    ]
    for obj, picked in cases:
        assert picks.any(obj) is picked, obj.name
        assert (_workload(obj, named, inventory) is not None) is picked, obj.name


def test_hcp_picks_only_a_hosted_control_planes_workloads() -> None:
    named = {"cso": {"names": ["cluster-storage-operator"], "hcp": True}}
    hosted = _object("Deployment", "clusters-hc1", "cluster-storage-operator",
                     {"hypershift.openshift.io/hosted-control-plane": "clusters-hc1"}, {})
    own = _object("Deployment", "openshift-cluster-storage-operator", "cluster-storage-operator",
                  {"name": "cluster-storage-operator-pod"}, {})
    inventory = Inventory([hosted, own], [], [])
    picks = _Picks(named, inventory)
    assert picks.any(hosted) and _workload(hosted, named, inventory) == "cso"
    assert not picks.any(own) and _workload(own, named, inventory) is None
