"""deploy/: every manifest is accepted by kubectl against the stand-in, and the pieces fit together.

How it validates: ``kubectl apply --server-side --dry-run=server`` maps each
document to a served resource through the stand-in's discovery (an unknown
apiVersion/kind fails there, as on a real cluster) and sends it; the stand-in
checks it as an API server would (tests/live/schemas.py: the kubernetes
client's generated schemas of the built-in kinds, the OpenReports CRDs, the
OCM field lists) and stores nothing. kubectl's own client-side validation
(``--validate``) needs the server's OpenAPI v2 document in protobuf, which the
stand-in does not serve, hence ``--validate=false``: the server side decides.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import yaml

from hcpscan.fleet import contract
from tests.live.apiserver import DEPLOY_RESOURCES, REPORT_CRDS, catalog
from tests.live.conftest import HERE, write_kubeconfig
from tests.live.schemas import OPENREPORTS_CRDS, validators

DEPLOY = HERE.parents[1] / "deploy"
OWN_FILES = ("hcpscan-scansummary-crd.yaml", "ocm/hcpscan-work-agent-clusterrole.yaml",
             "hcpscan-readonly-clusterrole.yaml", "hcpscan-publisher-rbac.yaml", "hcpscan-cronjob.yaml")
MWRS = DEPLOY / "ocm" / "hcpscan-manifestworkreplicaset.yaml"
_spec = importlib.util.spec_from_file_location("regenerate", DEPLOY / "ocm" / "regenerate.py")
regenerate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regenerate)


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def manifests() -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))


def deploy_standin(standin):
    server = standin([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                      for ns in ("hcpscan", "hcpscan-fleet")],
                     resources=[*catalog(), *REPORT_CRDS, *DEPLOY_RESOURCES])
    server.state.appliable |= {(r.group, r.plural) for r in server.state.resources if "/" not in r.plural}
    server.state.schemas.update(validators())
    return server


def dry_run(kubectl, config: Path, *paths: Path):
    files = [arg for path in paths for arg in ("-f", str(path))]
    return kubectl(config, "apply", "--server-side", "--dry-run=server", "--validate=false", *files)


def test_every_deploy_manifest_passes_a_server_dry_run(standin, pki, kubectl, tmp_path):
    server = deploy_standin(standin)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    files = manifests()
    assert {p.relative_to(DEPLOY).as_posix() for p in files} >= {
        *OWN_FILES, "ocm/hcpscan-placement.yaml", "ocm/hcpscan-manifestworkreplicaset.yaml"}
    done = dry_run(kubectl, config, *files)
    assert done.returncode == 0, done.stderr
    count = sum(len(documents(p)) for p in files)
    assert done.stdout.count("serverside-applied (server dry run)") == count, done.stdout
    patches = [r for r in server.state.requests if r.method == "PATCH"]
    assert len(patches) == count and {r.status for r in patches} == {200}
    assert all(r.query.get("dryRun") == "All" for r in patches)
    # every kind was checked against a schema, and nothing was stored
    kinds = {(str(d["apiVersion"]).rpartition("/")[0], d["kind"]) for p in files for d in documents(p)}
    assert kinds <= set(server.state.schemas)
    assert set(server.state.objects) == {("", "Namespace")}


def test_the_manifests_the_fleet_gets_are_valid_too(standin, pki, kubectl, tmp_path):
    server = deploy_standin(standin)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    for rel, text in regenerate.render().items():
        assert (DEPLOY.parent / rel).read_text() == text, (
            f"{rel} is stale: run python3 deploy/ocm/regenerate.py")
    (mwrs,) = documents(MWRS)
    embedded = mwrs["spec"]["manifestWorkTemplate"]["workload"]["manifests"]
    assert embedded == [*(d for name in OWN_FILES for d in documents(DEPLOY / name)),
                        contract.scan_summary_seed()], (
        f"{MWRS.name} must carry exactly {', '.join(OWN_FILES)}: run python3 deploy/ocm/regenerate.py")
    work = tmp_path / "work.yaml"
    work.write_text(yaml.safe_dump_all(embedded[:-1]))  # the seed's CRD is not served here
    done = dry_run(kubectl, config, work)
    assert done.returncode == 0, done.stderr


def test_a_broken_manifest_is_refused(standin, pki, kubectl, tmp_path):
    server = deploy_standin(standin)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    cronjob = next(d for d in documents(DEPLOY / "hcpscan-cronjob.yaml") if d["kind"] == "CronJob")
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    pod["serviceAcountName"] = pod.pop("serviceAccountName")
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(cronjob))
    done = dry_run(kubectl, config, broken)
    assert done.returncode != 0
    assert "is invalid" in done.stderr and "'serviceAcountName' was unexpected" in done.stderr
    (placement,) = [d for d in documents(DEPLOY / "ocm" / "hcpscan-placement.yaml")
                    if d["kind"] == "Placement"]
    placement["apiVersion"] = "cluster.open-cluster-management.io/v1"  # not served
    broken.write_text(yaml.safe_dump(placement))
    done = dry_run(kubectl, config, broken)
    assert done.returncode != 0 and 'no matches for kind "Placement"' in done.stderr, done.stderr


def test_the_cronjob_publishes_with_its_own_service_account():
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for name in OWN_FILES:
        for doc in documents(DEPLOY / name):
            by_kind.setdefault(doc["kind"], []).append(doc)
    (cronjob,) = by_kind["CronJob"]
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"][:2] == ["cluster", "--publish-reports"]
    (account,) = by_kind["ServiceAccount"]
    assert pod["serviceAccountName"] == account["metadata"]["name"]
    assert cronjob["metadata"]["namespace"] == account["metadata"]["namespace"]
    subject = {"kind": "ServiceAccount", "name": account["metadata"]["name"],
               "namespace": account["metadata"]["namespace"]}
    roles = {r["metadata"]["name"] for r in by_kind["ClusterRole"]  # not the OCM work agent's
             if "open-cluster-management.io/aggregate-to-work" not in r["metadata"].get("labels", {})}
    bound = {b["roleRef"]["name"] for b in by_kind["ClusterRoleBinding"] if subject in b["subjects"]}
    assert bound == roles == {"hcpscan-readonly", "hcpscan-publisher"}


def test_the_replica_set_follows_the_placement():
    docs = documents(DEPLOY / "ocm" / "hcpscan-placement.yaml")
    (placement,) = [d for d in docs if d["kind"] == "Placement"]
    (binding,) = [d for d in docs if d["kind"] == "ManagedClusterSetBinding"]
    (mwrs,) = documents(MWRS)
    assert binding["metadata"]["name"] == binding["spec"]["clusterSet"]
    assert placement["spec"]["clusterSets"] == [binding["spec"]["clusterSet"]]
    namespaces = {d["metadata"]["namespace"] for d in (placement, binding, mwrs)}
    assert namespaces == {"hcpscan-fleet"}
    assert [ref["name"] for ref in mwrs["spec"]["placementRefs"]] == [placement["metadata"]["name"]]


def test_the_image_is_a_parameter_and_the_openreports_crds_can_ride_along(tmp_path):
    files = regenerate.render("registry.example/team/hcpscan@sha256:" + "a" * 64,
                              OPENREPORTS_CRDS)
    (mwrs,) = list(yaml.safe_load_all(files["deploy/ocm/hcpscan-manifestworkreplicaset.yaml"]))
    template = mwrs["spec"]["manifestWorkTemplate"]
    manifests = template["workload"]["manifests"]
    (cronjob,) = [m for m in manifests if m["kind"] == "CronJob"]
    (container,) = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.example/team/hcpscan@sha256:" + "a" * 64
    crds = [m["metadata"]["name"] for m in manifests if m["kind"] == "CustomResourceDefinition"]
    assert crds == ["clusterreports.openreports.io", "reports.openreports.io",
                    "scansummaries.hcpscan.io"]
    # someone else's CRDs: created only where missing, never deleted with the work
    create_only = {c["resourceIdentifier"]["name"] for c in template["manifestConfigs"]
                   if c.get("updateStrategy") == {"type": "CreateOnly"}
                   and c["resourceIdentifier"]["resource"] == "customresourcedefinitions"}
    assert create_only == {"clusterreports.openreports.io", "reports.openreports.io"}
    orphaned = {r["name"] for r in template["deleteOption"]["selectivelyOrphans"]["orphaningRules"]}
    assert template["deleteOption"]["propagationPolicy"] == "SelectivelyOrphan"
    assert orphaned == create_only
    assert not validators()[("work.open-cluster-management.io", "ManifestWorkReplicaSet")](mwrs)


def test_feedback_rules_name_the_objects_the_work_creates():
    (mwrs,) = documents(MWRS)
    template = mwrs["spec"]["manifestWorkTemplate"]
    manifests = template["workload"]["manifests"]
    plurals = {"CronJob": ("batch", "cronjobs"), "ScanSummary": ("hcpscan.io", "scansummaries")}
    assert {c["resourceIdentifier"]["resource"] for c in template["manifestConfigs"]} == {
        "cronjobs", "scansummaries"}
    for config in template["manifestConfigs"]:
        ident = config["resourceIdentifier"]
        assert config["feedbackRules"][0]["type"] == "JSONPaths"
        assert all(p["path"].startswith(".") for p in config["feedbackRules"][0]["jsonPaths"])
        # OCM runs feedback rules only on resources the work created
        (target,) = [m for m in manifests
                     if plurals.get(m["kind"]) == (ident["group"], ident["resource"])
                     and m["metadata"]["name"] == ident["name"]
                     and m["metadata"].get("namespace") == ident.get("namespace")]
        if target["kind"] == "ScanSummary":  # the scan writes its status: create it only
            assert config["updateStrategy"] == {"type": "CreateOnly"} and "status" not in target
            assert any(m["kind"] == "CustomResourceDefinition" and m["spec"]["group"] == "hcpscan.io"
                       for m in manifests)


# What the klusterlet lets its work agent do on a managed cluster, of the kinds deploy/
# uses (open-cluster-management-io/ocm manifests/klusterlet/managed/: the `admin`
# ClusterRole bound cluster-wide, and klusterlet-work-clusterrole-execution.yaml: CRDs,
# namespaces, RBAC with escalate and bind). Anything else needs a ClusterRole labelled
# open-cluster-management.io/aggregate-to-work, which the agent's aggregate role picks up.
WORK_AGENT_DEFAULT = {("", "serviceaccounts"), ("batch", "cronjobs"), ("", "namespaces"),
                      ("apiextensions.k8s.io", "customresourcedefinitions"),
                      *(("rbac.authorization.k8s.io", r) for r in
                        ("clusterroles", "clusterrolebindings", "roles", "rolebindings"))}
PLURALS = {"Namespace": "namespaces", "ServiceAccount": "serviceaccounts", "CronJob": "cronjobs",
           "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
           "CustomResourceDefinition": "customresourcedefinitions", "ScanSummary": contract.PLURAL}


def test_the_work_agent_may_apply_and_read_back_everything_the_work_carries():
    (mwrs,) = documents(MWRS)
    carried = mwrs["spec"]["manifestWorkTemplate"]["workload"]["manifests"]
    aggregated = {(g, r, v) for m in carried if m["kind"] == "ClusterRole"
                  and m["metadata"].get("labels", {}).get("open-cluster-management.io/aggregate-to-work") == "true"
                  for rule in m["rules"] for g in rule["apiGroups"] for r in rule["resources"]
                  for v in rule["verbs"]}
    missing = []
    for manifest in carried:
        group = manifest["apiVersion"].rpartition("/")[0]
        resource = (group, PLURALS[manifest["kind"]])
        if resource in WORK_AGENT_DEFAULT:
            continue
        # create (apply), get (status feedback, CreateOnly's existence check), delete (removal)
        missing += [f"{verb} {resource[1]}.{group}" for verb in ("create", "get", "delete")
                    if (*resource, verb) not in aggregated]
    assert not missing, f"the OCM work agent may not: {missing}"
