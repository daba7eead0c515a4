"""Endpoints: pods, synthetic pods from workload templates, owners, classes, clusters."""

from __future__ import annotations

from hcpscan.analysis.reachability.endpoints import collect_endpoints, group_classes

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        ports: [{containerPort: 8080, name: http}, {containerPort: 53, protocol: UDP}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: report, namespace: shop}
spec:
  jobTemplate:
    spec:
      template:
        metadata: {labels: {app: report}}
        spec:
          hostNetwork: true
          containers: [{name: r}]
"""

RS_AND_PODS = """\
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-5d9c
  namespace: shop
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, controller: true}]
spec:
  template:
    metadata: {labels: {app: web}}
---
apiVersion: v1
kind: Pod
metadata:
  name: web-5d9c-aaaaa
  namespace: shop
  labels: {app: web}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-5d9c, controller: true}]
spec: {containers: [{name: web}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: web-5d9c-bbbbb
  namespace: shop
  labels: {app: web}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-5d9c, controller: true}]
spec: {containers: [{name: web}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: kube-apiserver-node1
  namespace: kube-system
  ownerReferences: [{apiVersion: v1, kind: Node, name: node1, controller: true}]
spec: {hostNetwork: true, containers: [{name: kas}]}
"""


def test_workloads_without_pods_become_one_synthetic_endpoint_each(manifests):
    inventory = manifests(DEPLOYMENT + "---\n" + RS_AND_PODS.split("---\n")[0].replace(
        "name: web-5d9c", "name: orphan-rs").replace("kind: Deployment, name: web", "kind: Deployment, name: gone"))
    endpoints = {e.workload.ref: e for e in collect_endpoints(inventory, "management")}
    assert set(endpoints) == {"shop/web[Deployment]", "shop/report[CronJob]", "shop/orphan-rs[ReplicaSet]"}
    web = endpoints["shop/web[Deployment]"]
    assert web.synthetic and web.labels == {"app": "web"}
    assert {(p.number, p.protocol, p.name) for p in web.ports} == {(8080, "TCP", "http"), (53, "UDP", "")}
    assert endpoints["shop/report[CronJob]"].host_network


def test_pods_are_named_by_their_top_owner_and_suppress_synthesis(manifests):
    inventory = manifests(DEPLOYMENT + "---\n" + RS_AND_PODS)
    refs = sorted(e.workload.ref for e in collect_endpoints(inventory, "management"))
    assert refs == ["kube-system/kube-apiserver-node1[Pod]", "shop/report[CronJob]",
                    "shop/web[Deployment]", "shop/web[Deployment]"]


def test_identical_pods_share_one_class(manifests):
    inventory = manifests(RS_AND_PODS)
    classes = group_classes(collect_endpoints(inventory, "management"), inventory)
    assert sorted(len(c.endpoints) for c in classes) == [1, 2]
    web = next(c for c in classes if len(c.endpoints) == 2)
    assert web.namespace_labels["kubernetes.io/metadata.name"] == "shop"


def test_clusters_are_never_connected(tmp_path):
    from hcpscan.analysis.reachability.connlist import connection_list

    from .conftest import load

    guest = tmp_path / "dump" / "hostedcluster-guest" / "namespaces" / "app" / "core" / "pods.yaml"
    mgmt = tmp_path / "dump" / "namespaces" / "hcp" / "core" / "pods.yaml"
    for path, ns in ((guest, "app"), (mgmt, "hcp")):
        path.parent.mkdir(parents=True)
        path.write_text(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {ns}}}\n"
                        "spec: {containers: [{name: c}]}\n")
    inventory = load(tmp_path / "dump")
    clusters = {o.cluster for o in inventory.of_kind("Pod")}
    assert len(clusters) == 2, clusters
    result = connection_list(inventory)
    assert not any("hcp/p[Pod]" in c.source and "app/p[Pod]" in c.destination
                   or "app/p[Pod]" in c.source and "hcp/p[Pod]" in c.destination
                   for c in result.connections)


def test_pods_of_a_same_named_controller_in_another_namespace_keep_their_own_owner(manifests):
    """A controller's top owner is walked once for all its pods, never for another
    namespace's controller of the same name (there without its Deployment)."""
    elsewhere = RS_AND_PODS.replace("namespace: shop", "namespace: lab").split("---\n")[1:3]
    inventory = manifests(DEPLOYMENT + "---\n" + RS_AND_PODS + "---\n" + "---\n".join(elsewhere)
                          + "---\n" + RS_AND_PODS.split("---\n")[0].replace("namespace: shop",
                                                                             "namespace: lab")
                          .replace("kind: Deployment, name: web", "kind: Deployment, name: gone"))
    refs = sorted(e.workload.ref for e in collect_endpoints(inventory, "management")
                  if not e.synthetic)
    assert refs == ["kube-system/kube-apiserver-node1[Pod]", "lab/web-5d9c[ReplicaSet]",
                    "lab/web-5d9c[ReplicaSet]", "shop/web[Deployment]", "shop/web[Deployment]"]


def test_pods_sharing_one_spec_dict_each_get_their_own_specs_ports(manifests):
    """The graph reads a pod spec's container ports once per spec dict (the pods of one
    template share it after loading); a pod whose spec is another dict, even an equal
    one changed later, gets its own spec's ports."""
    from hcpscan.analysis.reachability.endpoints import container_ports

    pods = "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: shop, labels: "
        f"{{app: web}}}}\nspec: {{containers: [{{name: c, ports: [{{containerPort: 8080}}]}}]}}\n"
        for i in range(4))
    inventory = manifests(pods)
    objs = sorted(inventory.of_kind("Pod"), key=lambda o: o.name)
    shared = objs[0].body["spec"]
    objs[1].body["spec"] = shared  # as a parse batch sends equal specs once
    objs[3].body["spec"] = {"containers": [{"name": "c", "ports": [{"containerPort": 9090,
                                                                     "protocol": "UDP"}]}]}
    found = {e.name: e.ports for e in collect_endpoints(inventory, "management")}
    assert found == {o.name: container_ports(o.body["spec"]) for o in objs}
    assert [p.number for p in found["p3"]] == [9090] and [p.number for p in found["p1"]] == [8080]



def _walking_every_workload(inventory, cluster):
    """The objects ``collect_endpoints`` makes endpoints of and their workloads, as defined:
    every pod, then
    every workload walked to its top owner first, passed over when owned by another or
    when pods it tops are in the input."""
    from hcpscan.analysis.reachability import endpoints as ep

    owners = ep._Owners(inventory, cluster)
    pods = [p for p in inventory.of_kind("Pod") if p.cluster == cluster]
    out = [(p, owners.top_of(p)) for p in pods]
    owned = {workload for _, workload in out}
    for obj in inventory.of_kind(*ep.WORKLOAD_KINDS):
        if obj.cluster != cluster:
            continue
        workload = owners.top_of(obj)
        if workload != ep.Workload(ep.namespace_of(obj), obj.name, obj.kind) or workload in owned:
            continue
        if ep.pod_template(obj) is not None:
            out.append((obj, workload))
    return out


def test_workloads_with_pods_are_passed_over_before_their_owners_are_walked():
    """Workloads whose pods are in the input are passed over before their owner chain is
    walked; the endpoints are those the walk of every workload gives, over every rule
    fixture and the real-world folders (synthetic pods of templates included)."""
    from hcpscan.inventory import Inventory
    from hcpscan.sources.loader import load_paths
    from tests.conftest import FIXTURES, SHARED

    folders = [*sorted((FIXTURES / "rules").glob("HCP*/*")), FIXTURES / "reachability",
               *sorted(p for p in (SHARED / "realworld").iterdir() if p.is_dir())]
    synthetic = passed_over = 0
    for folder in folders:
        inventory = Inventory(load_paths([str(folder)]).objects)
        for cluster in inventory.clusters:
            found = collect_endpoints(inventory, cluster)
            assert [(e.obj, e.workload) for e in found] == \
                _walking_every_workload(inventory, cluster), folder
            synthetic += sum(e.synthetic for e in found)
            passed_over += len(inventory.of_kind("Deployment")) - sum(
                e.synthetic and e.obj.kind == "Deployment" for e in found)
    assert synthetic > 0 and passed_over > 0
