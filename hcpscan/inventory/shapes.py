"""The shape of the fields hcpscan reads, per kind: which are mappings, lists or scalars.

The API server (and a CRD's structural schema) rejects an object whose field has
the wrong JSON type — ``containers`` as a mapping, a port's ``protocol`` as a
list — so such an object cannot exist in a cluster. The inventory checks every
object against these shapes once, when it is built, and leaves out the objects
that do not fit, with an error at the offending field's line: every command
(``scan``, ``inventory``, ``proxy``, ``connectivity``, ``cluster``) reads the same
checked objects, and no analysis meets a list where the API guarantees a string.

Only what the analyses and rules read is described; everything else is free.
Scalars are not told apart (an unquoted number where the API wants a string is
read as its text, as before). ``None`` (a field written empty) is always
accepted, as the API server accepts it.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hcpscan.inventory.fieldpath import Step


class _Scalar:
    """A string, number or boolean."""


SCALAR = _Scalar()
ANY_KEY = "*"
# A shape: ``dict`` (any mapping), ``list`` (any list), SCALAR, a mapping of field to
# shape (``ANY_KEY`` for every key), or a one-element list (the shape of every entry).
Shape = type | _Scalar | dict[str, "Shape"] | list["Shape"]

STRING_MAP: Shape = {ANY_KEY: SCALAR}
OBJECT_REF: Shape = {"name": SCALAR, "namespace": SCALAR, "key": SCALAR, "kind": SCALAR}
METADATA: Shape = {"name": SCALAR, "namespace": SCALAR, "generateName": SCALAR,
                   "labels": STRING_MAP, "annotations": STRING_MAP,
                   "ownerReferences": [{"kind": SCALAR, "name": SCALAR, "apiVersion": SCALAR,
                                        "controller": SCALAR}]}
SELECTOR: Shape = {"matchLabels": STRING_MAP, "matchExpressions": [dict]}
ENV: Shape = {"name": SCALAR, "value": SCALAR,
              "valueFrom": {"configMapKeyRef": OBJECT_REF, "secretKeyRef": OBJECT_REF,
                            "fieldRef": dict}}
ENV_FROM: Shape = {"prefix": SCALAR, "configMapRef": OBJECT_REF, "secretRef": OBJECT_REF}
CONTAINER: Shape = {
    "name": SCALAR, "image": SCALAR, "env": [ENV],
    "envFrom": [ENV_FROM],
    "ports": [{"containerPort": SCALAR, "hostPort": SCALAR, "protocol": SCALAR, "name": SCALAR}],
    "args": [SCALAR], "command": [SCALAR], "volumeMounts": [dict],
}
POD_SPEC: Shape = {"containers": [CONTAINER], "initContainers": [CONTAINER],
                   "hostNetwork": SCALAR, "volumes": [dict], "nodeSelector": STRING_MAP,
                   "dnsPolicy": SCALAR, "hostAliases": [{"ip": SCALAR, "hostnames": [SCALAR]}]}
POD_TEMPLATE: Shape = {"metadata": METADATA, "spec": POD_SPEC}
WORKLOAD: Shape = {"metadata": METADATA,
                   "spec": {"selector": SELECTOR, "template": POD_TEMPLATE, "replicas": SCALAR}}
PROXY_VALUES: Shape = {"httpProxy": SCALAR, "httpsProxy": SCALAR, "noProxy": SCALAR,
                       "trustedCA": {"name": SCALAR}, "readinessEndpoints": [SCALAR]}
CIDR_LIST: Shape = [{"cidr": SCALAR}]

HOSTED_CLUSTER: Shape = {"metadata": METADATA, "spec": {
    "networking": {"clusterNetwork": CIDR_LIST, "serviceNetwork": CIDR_LIST,
                   "machineNetwork": CIDR_LIST, "networkType": SCALAR},
    "services": [{"service": SCALAR, "servicePublishingStrategy": {
        "type": SCALAR, "nodePort": {"address": SCALAR, "port": SCALAR},
        "route": {"hostname": SCALAR}, "loadBalancer": {"hostname": SCALAR}}}],
    "configuration": {"proxy": PROXY_VALUES}, "platform": dict,
    "additionalTrustBundle": {"name": SCALAR}}}

KUBEADM_CONFIG: Shape = {"files": [{"path": SCALAR, "content": SCALAR, "encoding": SCALAR,
                                     "contentFrom": {"secret": OBJECT_REF}}],
                          "preKubeadmCommands": [SCALAR], "postKubeadmCommands": [SCALAR]}
ANY_KIND: Shape = {"metadata": METADATA}  # ObjectMeta is the same in every kind

POLICY_PORT: Shape = {"port": SCALAR, "endPort": SCALAR, "protocol": SCALAR}
POLICY_PEER: Shape = {"podSelector": SELECTOR, "namespaceSelector": SELECTOR,
                      "ipBlock": {"cidr": SCALAR, "except": [SCALAR]}}

NETWORK_POLICY: Shape = {"metadata": METADATA, "spec": {
    "podSelector": SELECTOR, "policyTypes": [SCALAR],
    "ingress": [{"from": [POLICY_PEER], "ports": [POLICY_PORT]}],
    "egress": [{"to": [POLICY_PEER], "ports": [POLICY_PORT]}]}}

# KubeVirt: a VirtualMachine's template is a VirtualMachineInstance's metadata and spec
VMI_SPEC: Shape = {"domain": dict, "networks": [{"name": SCALAR, "pod": dict, "multus": {
    "networkName": SCALAR, "default": SCALAR}}]}

# policy.networking.k8s.io AdminNetworkPolicy / BaselineAdminNetworkPolicy
ANP_PODS: Shape = {"namespaceSelector": SELECTOR, "podSelector": SELECTOR}
ANP_PEER: Shape = {"namespaces": SELECTOR, "pods": ANP_PODS, "nodes": SELECTOR,
                   "networks": [SCALAR]}
ANP_PORT: Shape = {"portNumber": {"protocol": SCALAR, "port": SCALAR}, "namedPort": SCALAR,
                   "portRange": {"protocol": SCALAR, "start": SCALAR, "end": SCALAR}}
ANP_RULE: Shape = {"name": SCALAR, "action": SCALAR, "from": [ANP_PEER], "to": [ANP_PEER],
                   "ports": [ANP_PORT]}
ADMIN_POLICY: Shape = {"metadata": METADATA, "spec": {
    "priority": SCALAR, "subject": {"namespaces": SELECTOR, "pods": ANP_PODS},
    "ingress": [ANP_RULE], "egress": [ANP_RULE]}}

# k8s.ovn.org UserDefinedNetwork and ClusterUserDefinedNetwork's spec.network
UDN_LAYER: Shape = {"role": SCALAR, "subnets": list, "joinSubnets": list}
UDN_SPEC: Shape = {"topology": SCALAR, "layer2": UDN_LAYER, "layer3": UDN_LAYER}
INGRESS_BACKEND: Shape = {"service": {"name": SCALAR, "port": {"number": SCALAR, "name": SCALAR}},
                          "resource": dict}

SHAPES: dict[str, Shape] = {
    "Deployment": WORKLOAD, "StatefulSet": WORKLOAD, "DaemonSet": WORKLOAD,
    "ReplicaSet": WORKLOAD, "Job": WORKLOAD,
    "CronJob": {"metadata": METADATA, "spec": {"jobTemplate": {"spec": {"template": POD_TEMPLATE}}}},
    "Pod": {"metadata": METADATA, "spec": POD_SPEC,
            "status": {"podIP": SCALAR, "hostIP": SCALAR, "podIPs": [{"ip": SCALAR}]}},
    "Namespace": {"metadata": METADATA},
    "ConfigMap": {"metadata": METADATA, "data": STRING_MAP, "binaryData": STRING_MAP},
    "Secret": {"metadata": METADATA, "data": STRING_MAP, "stringData": STRING_MAP, "type": SCALAR},
    "Service": {"metadata": METADATA, "spec": {
        "type": SCALAR, "selector": STRING_MAP, "clusterIP": SCALAR, "externalIPs": [SCALAR],
        "loadBalancerSourceRanges": [SCALAR], "externalTrafficPolicy": SCALAR,
        "ports": [{"name": SCALAR, "port": SCALAR, "targetPort": SCALAR, "nodePort": SCALAR,
                   "protocol": SCALAR}]}},
    "Route": {"metadata": METADATA, "spec": {"host": SCALAR, "to": {"kind": SCALAR, "name": SCALAR},
                                             "port": {"targetPort": SCALAR}, "tls": dict}},
    "Proxy": {"metadata": METADATA, "spec": PROXY_VALUES, "status": PROXY_VALUES},
    "Network": {"metadata": METADATA,
                "spec": {"clusterNetwork": CIDR_LIST, "serviceNetwork": [SCALAR],
                         "networkType": SCALAR},
                "status": {"clusterNetwork": CIDR_LIST, "serviceNetwork": [SCALAR]}},
    "HostedCluster": HOSTED_CLUSTER, "HostedControlPlane": HOSTED_CLUSTER,
    "NodePool": {"metadata": METADATA, "spec": {"clusterName": SCALAR, "platform": dict,
                                                "config": [{"name": SCALAR}]}},
    "ManagedClusterAddOn": {"metadata": METADATA, "spec": {
        "installNamespace": SCALAR,
        "configs": [{"group": SCALAR, "resource": SCALAR, "name": SCALAR, "namespace": SCALAR}]}},
    "AddOnDeploymentConfig": {"metadata": METADATA, "spec": {
        "proxyConfig": {"httpProxy": SCALAR, "httpsProxy": SCALAR, "noProxy": SCALAR,
                        "caBundle": SCALAR},
        "customizedVariables": [{"name": SCALAR, "value": SCALAR}], "nodePlacement": dict}},
    # types only: what a policy means (and rejects beyond types) is analysis/reachability/policies.py
    "NetworkPolicy": NETWORK_POLICY, "MultiNetworkPolicy": NETWORK_POLICY,
    "AdminNetworkPolicy": ADMIN_POLICY, "BaselineAdminNetworkPolicy": ADMIN_POLICY,
    "EgressFirewall": {"metadata": METADATA, "spec": {"egress": [{
        "type": SCALAR, "to": {"cidrSelector": SCALAR, "dnsName": SCALAR, "nodeSelector": SELECTOR},
        "ports": [{"protocol": SCALAR, "port": SCALAR}]}]}},
    "UserDefinedNetwork": {"metadata": METADATA, "spec": UDN_SPEC},
    "ClusterUserDefinedNetwork": {"metadata": METADATA, "spec": {
        "namespaceSelector": SELECTOR, "network": UDN_SPEC}},
    "VirtualMachine": {"metadata": METADATA, "spec": {
        "template": {"metadata": METADATA, "spec": VMI_SPEC}, "running": SCALAR,
        "runStrategy": SCALAR}},
    "VirtualMachineInstance": {"metadata": METADATA, "spec": VMI_SPEC},
    "Ingress": {"metadata": METADATA, "spec": {
        "ingressClassName": SCALAR, "defaultBackend": INGRESS_BACKEND, "tls": [dict],
        "rules": [{"host": SCALAR, "http": {"paths": [{
            "path": SCALAR, "pathType": SCALAR, "backend": INGRESS_BACKEND}]}}]}},
    "NetworkAttachmentDefinition": {"metadata": METADATA, "spec": {"config": SCALAR}},
    "KubeadmConfig": {"metadata": METADATA, "spec": KUBEADM_CONFIG},
    "KubeadmConfigTemplate": {"metadata": METADATA, "spec": {"template": {"spec": KUBEADM_CONFIG}}},
    "KubeadmControlPlane": {"metadata": METADATA, "spec": {"kubeadmConfigSpec": KUBEADM_CONFIG}},
    "KubeadmControlPlaneTemplate": {"metadata": METADATA, "spec": {"template": {"spec": {
        "kubeadmConfigSpec": KUBEADM_CONFIG}}}},
    # operators.coreos.com (OLM): what it writes into the operator's containers
    "Subscription": {"metadata": METADATA, "spec": {"config": {
        "env": [ENV], "envFrom": [ENV_FROM]}}},
    "Cluster": {"metadata": METADATA, "spec": {"clusterNetwork": {
        "pods": {"cidrBlocks": [SCALAR]}, "services": {"cidrBlocks": [SCALAR]},
        "serviceDomain": SCALAR}}},
}


Misfit = tuple[tuple[Step, ...], str, str]  # (field path, what it is, what it should be)


def first_misfit(kind: str, body: dict[str, Any]) -> Misfit | None:
    """The first field of ``body`` (in the object's own order) whose type does not fit the
    kind's shape, or None. Every object of a dump is checked, so the check looks up the
    shape's fields in the object (its cost is that of the fields read, not of every
    field the object has); only an object that does not fit is walked in its own order,
    to name the same first misfit whichever way the fields were written."""
    shape = SHAPES.get(kind, ANY_KIND)
    if body is None or _fits(body, shape):
        return None
    return _misfit(body, shape, ())


# Pod specs found to fit while ``remembering``: replicas, their ReplicaSet and Deployment
# hold one pod spec object (inventory/kept.py shares equal ones), checked once. The
# value is kept beside its id, so an id reused by a new object is never taken for it.
_fitted: dict[int, Any] | None = None


@contextmanager
def remembering() -> Iterator[None]:
    """Check each pod spec object once while checking many objects that share them."""
    global _fitted
    _fitted = {}
    try:
        yield
    finally:
        _fitted = None


def _fits(value: Any, shape: Shape) -> bool:
    # plain loops, no generators: this runs for every described field of every object
    if shape is SCALAR:
        return type(value) is not dict and type(value) is not list
    if shape is dict:
        return type(value) is dict
    if type(shape) is dict:
        if type(value) is not dict:
            return False
        if shape is POD_SPEC and _fitted is not None:
            if _fitted.get(id(value)) is value:
                return True
            if not _fits_fields(value, shape):  # type: ignore[arg-type]
                return False
            _fitted[id(value)] = value
            return True
        return _fits_fields(value, shape)  # type: ignore[arg-type]
    if type(value) is not list:
        return False
    if type(shape) is list:
        inner = shape[0]  # type: ignore[index]
        if inner is SCALAR:
            for item in value:
                if type(item) is dict or type(item) is list:
                    return False
            return True
        for item in value:
            if item is not None and not _fits(item, inner):
                return False
    return True


_COLLECTIONS = frozenset((dict, list))


def _fits_fields(value: dict[Any, Any], shape: dict[str, Shape]) -> bool:
    every = shape.get(ANY_KEY)
    if every is None:
        for key, sub in shape.items():
            item = value.get(key)
            if item is None:
                continue
            if sub is SCALAR:  # _fits inlined for the commonest shape
                if type(item) is dict or type(item) is list:
                    return False
            elif not _fits(item, sub):
                return False
        return True
    if every is SCALAR and len(shape) == 1:  # labels, annotations, data: one C loop
        return _COLLECTIONS.isdisjoint(map(type, value.values()))
    for key, item in value.items():
        if item is not None and not _fits(item, shape.get(key, every) if type(key) is str else every):
            return False
    return True


def _misfit(value: Any, shape: Shape, path: tuple[Step, ...]) -> Misfit | None:
    if value is None:
        return None
    if shape is SCALAR:
        return (path, _name(value), "a string or number") if isinstance(value, (dict, list)) else None
    if shape is dict or type(shape) is dict:
        if type(value) is not dict:
            return path, _name(value), "a mapping"
        return _fields(value, shape, path) if type(shape) is dict else None  # type: ignore[arg-type]
    if type(value) is not list:
        return path, _name(value), "a list"
    if type(shape) is list:
        inner = shape[0]  # type: ignore[index]
        for index, item in enumerate(value):
            found = _misfit(item, inner, (*path, index))
            if found is not None:
                return found
    return None


def _fields(value: dict[Any, Any], shape: dict[str, Shape], path: tuple[Step, ...]) -> Misfit | None:
    every = shape.get(ANY_KEY)
    for key, item in value.items():
        sub = shape.get(key, every) if isinstance(key, str) else every
        if sub is not None and item is not None:
            found = _misfit(item, sub, (*path, str(key)))
            if found is not None:
                return found
    return None


def _name(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, (set, frozenset)):
        return "a set (!!set)"
    if isinstance(value, (bytes, bytearray)):
        return "binary data (!!binary)"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return "a timestamp"
    return "a string or number"
