"""Kyverno policies that inject proxy env in Giant Swarm style fleets, where Kyverno injects it (seed 003).

* ``proxy_injecting_policies``: the policies that inject proxy env, which tell that the
  installation uses a proxy (``agreement``'s ``installation`` relation, PRX010).
* ``matched_resources`` (PRX011, a ``cel`` rule through ``kyverno_matches``): what of a
  workload a Kyverno rule that adds proxy env matches (chart-operator must be spared:
  cluster-apps-operator manages its env).

Kyverno's match/exclude is evaluated exactly for what decides a Deployment or Pod:
``any``/``all``/legacy ``resources`` filters with kinds, names, namespaces,
annotations, operations, ``selector`` and ``namespaceSelector``; filters on
users/roles cannot be decided offline and make the result unknown.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.resources import plural_of
from hcpscan.inventory.store import Inventory

POLICY_KINDS = ("ClusterPolicy", "Policy")
# Kyverno's CEL policies (policies.kyverno.io, Kyverno 1.15 on): a MutatingPolicy's
# spec.mutations[] are CEL programs (patchType ApplyConfiguration: applyConfiguration.expression;
# JSONPatch: jsonPatch.expression) run on each admitted object, and its match is
# matchConstraints/matchConditions as in a MutatingAdmissionPolicy. hcpscan evaluates neither:
# a mutation that names proxy variables is declared not evaluable (``cel_mutation_problem``).
CEL_POLICY_GROUP = "policies.kyverno.io"
MUTATING_POLICY_KINDS = ("MutatingPolicy", "NamespacedMutatingPolicy")
# What matched_resources reads: the workload, its namespace's labels, the resourceFilters.
MATCH_READS = ("Deployment", "Namespace", "ConfigMap")
# A name the Pods of a Deployment get (Kyverno matches `names` globs against it); never shown.
POD_SUFFIX = "7d9f8c6b5-x2x7k"
_PROXY_ENV = re.compile(r"(?<![A-Za-z0-9_])(https?_proxy|no_proxy)(?![A-Za-z0-9_])", re.IGNORECASE)


# -- Kyverno policies -----------------------------------------------------------

def injected_variables(rule: Mapping[str, Any]) -> list[str]:
    """Proxy variables a Kyverno rule's mutate block writes (as spelled there)."""
    mutate = rule.get("mutate")
    if not isinstance(mutate, dict):
        return []
    text = json.dumps(mutate)
    return sorted({m.group(1) for m in _PROXY_ENV.finditer(text)})


def cel_mutation_problem(policy: K8sObject, mutation: Any) -> str | None:
    """Why a MutatingPolicy mutation that names proxy variables cannot be judged (None: it
    names none, or ``policy`` is no Kyverno CEL policy)."""
    if policy.group != CEL_POLICY_GROUP or policy.kind not in MUTATING_POLICY_KINDS \
            or not isinstance(mutation, dict):
        return None
    names = sorted({m.group(1) for m in _PROXY_ENV.finditer(json.dumps(mutation))})
    if not names:
        return None
    how = f"{mutation['patchType']} " if isinstance(mutation.get("patchType"), str) else ""
    return (f"{policy.kind} {policy.name} ({policy.api_version}) writes {', '.join(names)} "
            f"through its {how}mutation, a CEL program hcpscan does not evaluate; which "
            "workloads its matchConstraints and matchConditions match is not decided either: "
            "check by hand that it leaves chart-operator alone")


def proxy_injecting_policies(inventory: Inventory) -> list[tuple[K8sObject, str, list[str]]]:
    """(policy, the rule's or mutation's field, the proxy variables it writes) of every
    Kyverno rule, and MutatingPolicy mutation, that writes proxy env: the installation then
    uses a proxy, whatever the rest of a CEL mutation does."""
    out = []
    for policy in inventory.of_kind(*POLICY_KINDS):
        if not policy.api_version.startswith("kyverno.io/"):
            continue
        for i, rule in enumerate(policy.get("spec.rules") or []):
            if isinstance(rule, dict) and injected_variables(rule):
                out.append((policy, f"spec.rules[{i}]", injected_variables(rule)))
    for policy in inventory.of_kind(*MUTATING_POLICY_KINDS):
        mutations = policy.get("spec.mutations") if policy.group == CEL_POLICY_GROUP else None
        for i, mutation in enumerate(mutations if isinstance(mutations, list) else []):
            names = _PROXY_ENV.findall(json.dumps(mutation)) if isinstance(mutation, dict) else []
            if names:
                out.append((policy, f"spec.mutations[{i}]", sorted(set(names))))
    return out


@dataclass(frozen=True, slots=True)
class Resource:
    """What Kyverno sees of an admission request's object."""

    kind: str
    namespace: str
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    # How to name it to a reader when it is not an object of the input: the Pods a
    # Deployment will create have names no input holds, and evidence cites only the input.
    shown: str = ""

    def __str__(self) -> str:
        return self.shown or f"{self.kind} {self.namespace}/{self.name}"


def _globs(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def kind_matches(pattern: str, kind: str) -> bool:
    """``Pod``, ``v1/Pod``, ``apps/v1/Deployment``, ``*``; ``Pod/exec`` is a subresource."""
    parts = pattern.strip().split("/")
    if len(parts) >= 2 and parts[-1][:1].islower() and parts[-1] != "*":
        return False  # Kind/subresource
    return fnmatch.fnmatchcase(kind, parts[-1])


def selector_matches(selector: Any, labels: Mapping[str, str]) -> bool:
    if not isinstance(selector, dict):
        return True
    match_labels = selector.get("matchLabels")
    for key, value in (match_labels if isinstance(match_labels, dict) else {}).items():
        if key not in labels or not fnmatch.fnmatchcase(str(labels[key]), str(value)):
            return False
    for expr in selector.get("matchExpressions") or []:
        if not isinstance(expr, dict):
            return False  # Kyverno rejects such a policy: it selects nothing
        key, op = expr.get("key"), str(expr.get("operator", ""))
        if not isinstance(key, str):
            return False
        values = [str(v) for v in expr.get("values") or []]
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def filter_matches(flt: Mapping[str, Any], res: Resource) -> bool | None:
    """One ResourceFilter; None when it depends on who sends the request."""
    if any(flt.get(k) for k in ("subjects", "roles", "clusterRoles")):
        return None
    rd = flt.get("resources") or {}
    if not isinstance(rd, dict):
        return False
    kinds = _globs(rd.get("kinds"))
    if kinds and not any(kind_matches(k, res.kind) for k in kinds):
        return False
    names = _globs(rd.get("names")) + _globs(rd.get("name"))
    if names and not any(fnmatch.fnmatchcase(res.name, n) for n in names):
        return False
    namespaces = _globs(rd.get("namespaces"))
    if namespaces and not any(fnmatch.fnmatchcase(res.namespace, n) for n in namespaces):
        return False
    for key, value in (rd.get("annotations") or {}).items():
        if not any(fnmatch.fnmatchcase(k, str(key)) and fnmatch.fnmatchcase(str(v), str(value))
                   for k, v in res.annotations.items()):
            return False
    operations = _globs(rd.get("operations"))
    if operations and not {"CREATE", "UPDATE"} & set(operations):
        return False
    if not selector_matches(rd.get("selector"), res.labels):
        return False
    return selector_matches(rd.get("namespaceSelector"), res.namespace_labels)


def _any(results: list[bool | None]) -> bool | None:
    if any(r is True for r in results):
        return True
    return None if any(r is None for r in results) else False


def _all(results: list[bool | None]) -> bool | None:
    if any(r is False for r in results):
        return False
    return None if any(r is None for r in results) else True


def block_matches(block: Any, res: Resource) -> bool | None:
    """A ``match`` or ``exclude`` block: ``any`` (OR), ``all`` (AND) or a legacy filter."""
    if not isinstance(block, dict) or not block:
        return False
    parts: list[bool | None] = []
    if isinstance(block.get("any"), list):
        parts.append(_any([filter_matches(f, res) for f in block["any"] if isinstance(f, dict)]))
    if isinstance(block.get("all"), list):
        parts.append(_all([filter_matches(f, res) for f in block["all"] if isinstance(f, dict)]))
    if any(k in block for k in ("resources", "subjects", "roles", "clusterRoles")):
        parts.append(filter_matches(block, res))
    return _all(parts) if parts else False


def rule_matches(policy: K8sObject, rule: Mapping[str, Any], res: Resource) -> bool | None:
    if policy.kind == "Policy" and policy.namespace != res.namespace:
        return False  # a namespaced Policy only sees its own namespace
    matched = block_matches(rule.get("match"), res)
    if matched is False:
        return False
    excluded = block_matches(rule.get("exclude"), res) if rule.get("exclude") else False
    if excluded is True:
        return False
    return None if matched is None or excluded is None else True


_FILTER = re.compile(r"\[([^\[\]]*)\]")


def resource_filters(inventory: Inventory, cluster: str) -> list[tuple[K8sObject, str]]:
    """Kyverno's global ``resourceFilters`` (``[kind,namespace,name]`` entries of the
    ``kyverno/kyverno`` ConfigMap of the policy's cluster): resources Kyverno never
    looks at, whatever the policies say."""
    out: list[tuple[K8sObject, str]] = []
    for cm in inventory.of_kind("ConfigMap"):
        data = cm.body.get("data")
        if (cm.name, cm.namespace, cm.cluster) != ("kyverno", "kyverno", cluster) or not isinstance(data, dict):
            continue
        out.extend((cm, f.strip()) for f in _FILTER.findall(str(data.get("resourceFilters") or "")))
    return out


def filtered_out(res: Resource, filters: list[tuple[K8sObject, str]]) -> str | None:
    """The entry that makes Kyverno skip ``res``, if any."""
    for _cm, entry in filters:
        parts = [p.strip() for p in entry.split(",")]
        if len(parts) != 3:
            continue
        kind, namespace, name = parts
        if (kind_matches(kind, res.kind) and fnmatch.fnmatchcase(res.namespace, namespace or "*")
                and fnmatch.fnmatchcase(res.name, name or "*")):
            return f"[{entry}]"
    return None


def workload_in_input(inventory: Inventory, name: str) -> bool:
    """Whether the input holds a Deployment named ``name`` (in any namespace): the one
    ``workload_resources`` takes, and the only one a finding may name."""
    return any(dep.name == name for dep in inventory.of_kind("Deployment"))


def namespace_signs(inventory: Inventory, cluster: str, namespace: str) -> list[str]:
    """What of ``namespace`` the input holds (the Namespace itself, objects in it), among
    the kinds matched_resources reads: a sign that the target's installation is the
    input's even though the target workload is not in it."""
    found = []
    for obj in inventory.of_kind(*MATCH_READS, *POLICY_KINDS):
        if obj.cluster != cluster:
            continue
        if (obj.kind == "Namespace" and obj.name == namespace) or obj.namespace == namespace:
            found.append(obj.ref)
    return sorted(set(found))


def workload_resources(inventory: Inventory, target: Mapping[str, Any]) -> list[Resource]:
    """The target Deployment (and its Pods) as Kyverno would see them: from the input when
    it holds the Deployment, else the defaults of ``target``."""
    out = []
    for dep in inventory.of_kind("Deployment"):
        if dep.name != target["name"]:
            continue
        ns_labels = inventory.namespace_labels(dep.namespace, dep.cluster)
        template = dep.get("spec.template.metadata") or {}
        out.append(Resource("Deployment", dep.namespace, dep.name, dep.labels, dep.annotations,
                            ns_labels))
        out.append(Resource("Pod", dep.namespace, f"{dep.name}-{target['pod_suffix']}",
                            template.get("labels") or {}, template.get("annotations") or {},
                            ns_labels, shown=f"the Pods of {dep.ref} (its pod template)"))
    if out:
        return out
    ns_labels = {"kubernetes.io/metadata.name": target["namespace"]}
    labels = target.get("labels", {})
    # no such object is in the input: say what the match covers, never name an object
    shown = (f"Deployments named {target['name']} in namespace {target['namespace']}"
             + (f" labelled {', '.join(f'{k}={v}' for k, v in labels.items())}" if labels else ""))
    return [Resource("Deployment", target["namespace"], target["name"], labels, {}, ns_labels,
                     shown=shown),
            Resource("Pod", target["namespace"], f"{target['name']}-{target['pod_suffix']}",
                     labels, {}, ns_labels, shown=f"the Pods of {shown}")]


def matched_resources(inventory: Inventory, policy: K8sObject, rule: Mapping[str, Any],
                      target: Mapping[str, Any]) -> list[Resource] | None:
    """The target Deployment and its Pods, as far as a Kyverno rule of ``policy`` matches
    them ([]: it leaves them alone; None: it depends on preconditions on the target, users
    or roles, which cannot be decided offline). The Deployment is the input's when it holds
    one of that name, else the target's namespace and labels."""
    if target["name"] in json.dumps(rule.get("preconditions") or {}):
        return None
    filters = resource_filters(inventory, policy.cluster)
    resources = [r for r in workload_resources(inventory, {"pod_suffix": POD_SUFFIX, **target})
                 if not filtered_out(r, filters)]
    results = [(res, rule_matches(policy, rule, res)) for res in resources]
    matched = [res for res, r in results if r is True]
    if not matched and any(r is None for _, r in results):
        return None
    return matched


# -- objects Kyverno generates ---------------------------------------------------

@dataclass(frozen=True, slots=True)
class Generation:
    """A Kyverno rule that generates objects of one kind (``generate`` with ``kind`` and
    ``data`` or ``clone``, or ``cloneList.kinds``): they exist on the cluster, not in a
    manifest of the input."""

    policy: K8sObject
    index: int  # of the rule in spec.rules
    rule: str
    kind: str
    name: str  # '' for a cloneList


def generations(inventory: Inventory) -> list[Generation]:
    """Every generate rule of the input's Kyverno policies, one per kind it generates."""
    found: list[Generation] = inventory.derived("kyverno.generations", _generations)
    return found


def _generations(inventory: Inventory) -> list[Generation]:
    out = []
    for policy in inventory.of_kind(*POLICY_KINDS):
        if not policy.api_version.startswith("kyverno.io/"):
            continue
        rules = policy.get("spec.rules")
        for i, rule in enumerate(rules if isinstance(rules, list) else []):
            generate = rule.get("generate") if isinstance(rule, dict) else None
            if not isinstance(generate, dict):
                continue
            name = str(rule.get("name") or i)
            if isinstance(generate.get("kind"), str):
                out.append(Generation(policy, i, name, generate["kind"],
                                      str(generate.get("name") or "")))
            clones = generate.get("cloneList")
            kinds = clones.get("kinds") if isinstance(clones, dict) else None
            for ref in kinds if isinstance(kinds, list) else []:
                # cloneList kinds are written apiVersion/Kind (v1/Secret)
                out.append(Generation(policy, i, name, str(ref).rsplit("/", 1)[-1], ""))
    return out


def generated_note(inventory: Inventory, kinds: tuple[str, ...]) -> str:
    """What the input's Kyverno policies generate of ``kinds`` ('' when nothing): those
    objects are made on the cluster and are not in a manifest of the input."""
    found = [g for g in generations(inventory) if g.kind in kinds]
    if not found:
        return ""
    parts = []
    for g in found[:3]:
        loc = inventory.locate(g.policy, ("spec", "rules", g.index, "generate"))
        what = f"{g.kind} {g.name}" if g.name else f"{g.kind} objects"
        parts.append(f"{g.policy.ref} rule {g.rule} "
                     f"({loc.path}:{loc.line}) generates {what}")
    more = f" (+{len(found) - 3} more)" if len(found) > 3 else ""
    kinds_made = list(dict.fromkeys(g.kind for g in found))
    plurals = ",".join(plural_of(k) or k.lower() for k in kinds_made)
    return ("generated by Kyverno: " + "; ".join(parts) + more + f": the {'/'.join(kinds_made)}"
            " objects made on the cluster are not in the input, and hcpscan does not judge a "
            f"generate rule's data; scan them from the cluster (kubectl get {plurals} -A -o yaml)")
