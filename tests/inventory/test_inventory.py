"""Inventory queries, field lines, Secrets and the objects derived from them."""

from __future__ import annotations

import base64
import json

import pytest

from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import namespace_of
from hcpscan.inventory.secrets import secret_values
from hcpscan.sources.loader import load_paths
from hcpscan.sources.walk import ArchiveMembers
from tests.conftest import REALWORLD

POLICY = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: nodeport-ignition-proxy
  namespace: hcp-namespace
  labels:
    hypershift.openshift.io/managed: "true"
spec:
  podSelector:
    matchLabels:
      app: ignition-server-proxy
  ingress:
  - ports:
    - port: 8443
      protocol: TCP
  - ports:
    - port: 9090
      protocol: TCP
    - port: 8080
      protocol: TCP
  policyTypes:
  - Ingress
"""


def _inventory(tmp_path, name: str, text: str) -> Inventory:
    (tmp_path / name).write_text(text)
    result = load_paths([str(tmp_path / name)])
    return Inventory(result.objects, result.diagnostics, result.skipped)


def test_locate_gives_the_fields_own_line(tmp_path):
    inv = _inventory(tmp_path, "np.yaml", "# leading comment\n---\n" + POLICY)
    policy = inv.of_kind("NetworkPolicy")[0]
    assert policy.source.line == 3
    assert inv.locate(policy, "spec.ingress[1].ports[1].port").line == 21
    assert inv.locate(policy, "spec.ingress[0]").line == 15
    assert inv.locate(policy, 'metadata.labels["hypershift.openshift.io/managed"]').line == 9
    assert inv.locate(policy).line == 3


def test_missing_field_resolves_to_nearest_parent(tmp_path):
    inv = _inventory(tmp_path, "np.yaml", POLICY)
    policy = inv.of_kind("NetworkPolicy")[0]
    assert inv.locate(policy, "spec.ingress[0].from").line == inv.locate(policy, "spec.ingress[0]").line
    assert inv.locate(policy, "spec.egress").line == inv.locate(policy, "spec").line == 8


def test_locate_inside_list_items_and_archives(tmp_path):
    import io
    import tarfile

    items = "apiVersion: v1\nkind: List\nitems:\n" + "".join(
        "- " + POLICY.replace("\n", "\n  ").rstrip() .replace("nodeport-ignition-proxy", f"p{i}") + "\n"
        for i in range(3))
    archive = tmp_path / "dump.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = items.encode()
        info = tarfile.TarInfo("ns/networkpolicies.yaml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    result = load_paths([str(archive)])
    inv = Inventory(result.objects, read_member=ArchiveMembers().read)  # the sources stage reads members
    p2 = inv.get("NetworkPolicy", "hcp-namespace", "p2")
    assert p2.source.line == 4 + 2 * POLICY.count("\n")
    assert inv.locate(p2, "spec.ingress[0].ports[0].port").line == p2.source.line + 13
    assert inv.locate(p2, "spec").path == f"{archive}!ns/networkpolicies.yaml"


def test_query_by_kind_namespace_name_labels(tmp_path):
    inv = Inventory(load_paths([str(REALWORLD / "cpo-rendered")]).objects)
    managed = inv.query("Deployment", namespace="hcp-namespace",
                        labels={"hypershift.openshift.io/managed-by": "control-plane-operator"})
    assert "kube-apiserver" in [d.name for d in managed]
    assert all(d.labels["hypershift.openshift.io/managed-by"] == "control-plane-operator"
               for d in managed)
    assert inv.get("Deployment", "hcp-namespace", "oauth-openshift") is not None
    assert inv.query("Deployment", api_version="apps/v1", name="nope") == []


def test_an_object_written_without_namespace_is_found_in_default(tmp_path):
    """kubectl apply puts it there: the graph names it default/<name>, and a look-up by
    that name (a fix, an owner, a Service behind a Route) must find it, both ways."""
    inv = _inventory(tmp_path, "base.yaml", """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
""")
    deployment = inv.get_namespaced("Deployment", "default", "web")
    assert deployment is not None and deployment.namespace == ""
    assert namespace_of(deployment) == "default"
    assert inv.get_namespaced("Service", "", "web") is not None
    assert inv.get_namespaced("Deployment", "shop", "web") is None


def test_jsonpath_returns_values_with_their_field_paths(tmp_path):
    inv = Inventory(load_paths([str(REALWORLD / "cpo-rendered" / "oauth-openshift")]).objects)
    oauth = inv.get("Deployment", "hcp-namespace", "oauth-openshift")
    found = inv.jsonpath(oauth, "$.spec.template.spec.containers[*].name")
    assert [v for v, _ in found][:1] == ["oauth-openshift"]
    steps = found[0][1]
    assert steps == ("spec", "template", "spec", "containers", 0, "name")
    assert inv.locate(oauth, steps).line > oauth.source.line


def test_redacted_secret_values_are_marked_not_read(tmp_path):
    text = """\
apiVersion: v1
kind: Secret
metadata: {name: proxy-creds, namespace: openshift-config}
data:
  password: 12 bytes long
  encoded: %s
  plain: %s
  tls.crt: not-base64!!
""" % (base64.b64encode(b"31 bytes long").decode(), base64.b64encode(b"hunter2").decode())
    inv = _inventory(tmp_path, "s.yaml", text)
    values = secret_values(inv.of_kind("Secret")[0])
    assert values["password"].redacted and values["password"].text is None
    assert values["encoded"].redacted
    assert values["plain"].text == "hunter2" and not values["plain"].redacted
    assert not values["tls.crt"].known and values["tls.crt"].error


def test_kubeconfigs_inside_secrets_become_linked_objects():
    inv = Inventory(load_paths([str(REALWORLD / "cpo-rendered" / "kube-apiserver")]).objects)
    kubeconfigs = inv.of_kind("Kubeconfig")
    assert kubeconfigs
    admin = next(k for k in kubeconfigs if k.origin.name == "admin-kubeconfig")
    assert admin.origin.kind == "Secret"
    assert admin.body["clusters"][0]["cluster"]["server"].startswith("https://")
    # the location of a derived object is the Secret's data key
    where = inv.locate(admin, "clusters[0].cluster.server")
    assert where.path == admin.origin.source.path
    assert where.line == inv.locate(admin.origin, f"data.{admin.name.split('/')[-1]}").line


def test_standalone_kubeconfig_ignition_and_dropin(tmp_path):
    (tmp_path / "hub-kubeconfig").write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: hub\nclusters:\n- name: hub\n  cluster:\n"
        "    server: https://api.hub.example.com:6443\n    proxy-url: http://proxy.corp:3128\n"
        "contexts:\n- name: hub\n  context: {cluster: hub, user: u}\nusers: []\n")
    (tmp_path / "user-data.json").write_text(json.dumps({"ignition": {
        "version": "3.2.0", "proxy": {"httpsProxy": "http://proxy.corp:3128", "noProxy": [".svc"]}}}))
    dropin = tmp_path / "containerd.service.d"
    dropin.mkdir()
    (dropin / "http-proxy.conf").write_text(
        '[Service]\nEnvironment="HTTP_PROXY=http://proxy.corp:3128"\n'
        'Environment="NO_PROXY=.svc,10.0.0.0/8" "no_proxy=.svc"\n')
    inv = Inventory(load_paths([str(tmp_path)]).objects)
    kc = inv.of_kind("Kubeconfig")[0]
    assert kc.name == "hub-kubeconfig:hub" and kc.source.line == 1
    assert inv.locate(kc, "clusters[0].cluster.proxy-url").line == 8
    ign = inv.of_kind("IgnitionConfig")[0]
    assert ign.get("ignition.proxy.httpsProxy") == "http://proxy.corp:3128"
    unit = inv.of_kind("SystemdDropIn")[0]
    assert unit.name == "containerd.service.d/http-proxy.conf"
    assert unit.body["environment"] == {"HTTP_PROXY": "http://proxy.corp:3128",
                                        "NO_PROXY": ".svc,10.0.0.0/8", "no_proxy": ".svc"}
    assert inv.locate(unit, "environment.no_proxy").line == 3


@pytest.mark.parametrize("name", ["example-ns.conf", "plain.conf"])
def test_conf_files_without_service_section_are_reported(tmp_path, name):
    (tmp_path / name).write_text("[Unit]\nDescription=x\n")
    result = load_paths([str(tmp_path / name)])
    assert result.objects == [] and result.diagnostics[0].severity == "info"


def test_objects_and_locations_cross_processes_with_every_field():
    """A parse worker's objects are pickled by their own ``__reduce__``: every field, in
    every field's own value, whatever fields the classes gain."""
    import dataclasses
    import pickle

    from hcpscan.inventory.objects import K8sObject, SourceLocation

    origin = K8sObject("management", "v1", "Secret", "ns", "holder", {"data": {}},
                       SourceLocation("a.yaml", 3))
    where = SourceLocation("dump.tar.gz!ns/x.yaml", 12, 5, "dump.tar.gz", "ns/x.yaml", 2, 7,
                           "data.kubeconfig")
    obj = K8sObject("hostedcluster-a", "hcpscan.io/v1", "Kubeconfig", "ns", "holder/kubeconfig",
                    {"clusters": [{"name": "c"}]}, where, origin, {"memo": 1}, True)
    def state(value):  # every field, objects (compared by identity) by their own fields
        if not dataclasses.is_dataclass(value):
            return value
        return (type(value), [state(getattr(value, f.name)) for f in dataclasses.fields(value)])

    for value in (where, obj):
        fields = [f.name for f in dataclasses.fields(value)]
        assert len(set(fields) - {"_cache"}) >= 8
        for given in (value, dataclasses.replace(value, **{f: None for f in fields[-1:]})):
            back = pickle.loads(pickle.dumps(given, protocol=pickle.HIGHEST_PROTOCOL))
            assert state(back) == state(given)
    back = pickle.loads(pickle.dumps([obj, obj]))
    assert back[0] is back[1] and back[0].origin.source == origin.source


@pytest.mark.parametrize("kind", ["K8sObject", "SourceLocation"])
def test_a_pickled_object_keeps_a_field_whatever_its_default(kind):
    """Each field given a value of its own (none its default, not even ``None``) comes back:
    a field the classes gain that pickling leaves out fails here, wherever it stands."""
    import dataclasses
    import pickle

    from hcpscan.inventory import objects

    cls = getattr(objects, kind)
    names = [f.name for f in dataclasses.fields(cls)]
    given = cls(**{name: f"the {name} given" for name in names})
    back = pickle.loads(pickle.dumps(given, protocol=pickle.HIGHEST_PROTOCOL))
    assert type(back) is cls
    assert {name: getattr(back, name) for name in names} == {name: f"the {name} given" for name in names}


def test_a_route_written_without_namespace_is_served_as_one_in_default(tmp_path):
    """A router shard that serves the default namespace serves a Route written without a
    namespace (it lands there): its labels are default's, not a namespace named ''."""
    from hcpscan.analysis.reachability.routers import route_sources

    inv = _inventory(tmp_path, "route.yaml", """\
apiVersion: operator.openshift.io/v1
kind: IngressController
metadata: {name: default-ns-shard, namespace: openshift-ingress-operator}
spec:
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: default}
  endpointPublishingStrategy:
    type: LoadBalancerService
    loadBalancer:
      scope: External
      allowedSourceRanges: [203.0.113.0/24]
---
apiVersion: route.openshift.io/v1
kind: Route
metadata: {name: web}
spec:
  to: {kind: Service, name: web}
""")
    (route,) = inv.of_kind("Route")
    found = route_sources(inv, route)
    assert found is not None and found[1] == "IngressController openshift-ingress-operator/default-ns-shard"
    assert str(found[0]) == "203.0.113.0/24"
