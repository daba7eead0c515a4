"""Which program reads a proxy setting, so whose NO_PROXY reading decides.

A NO_PROXY list means what its reader makes of it (DOMAIN.md §7). Settings in a
systemd drop-in are read by the unit's program; a container's by its image's
program. Where that program is known to be written in Go — containerd, kubelet,
CRI-O and every Kubernetes/OpenShift component (DOMAIN.md §1, §7), and the Go
operators of Cluster API fleets (cert-manager, chart-operator, teleport;
seed 003) — only Go's semantics apply, and portability warnings about other
clients would be false.
"""

from __future__ import annotations

import re

# Program names (a unit's, or an image repository's last path element) of Go programs.
GO_PROGRAMS = frozenset({
    "containerd", "kubelet", "crio", "cri-o", "dockerd", "docker", "teleport",
    "cert-manager", "chart-operator", "cluster-apps-operator", "app-operator",
    "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "coredns",
    "etcd", "hypershift", "control-plane-operator", "konnectivity", "cluster-api",
    "kyverno", "external-dns", "cluster-autoscaler", "kubeadm",
    # OCM's klusterlet and add-on agents, OpenShift's installer (DOMAIN.md §4-5)
    "klusterlet", "ocm-addon-agent", "openshift-install",
})
# Image repositories whose every image is an OpenShift or HyperShift component (Go).
GO_REGISTRIES = ("quay.io/openshift-release-dev/", "registry.redhat.io/openshift4/",
                 "quay.io/openshift/", "quay.io/hypershift/", "registry.k8s.io/", "k8s.gcr.io/")
_UNIT = re.compile(r"/([A-Za-z0-9_.@-]+?)\.service\.d/[^/]+$")


# Image programs (a repository's last path element) that say which client dials: curlimages/curl,
# and the language images whose runtime is the client. Their tag is the client's release (the
# NO_PROXY models, analysis/proxy/versions.py); the client says which CA files it loads
# (hcpscan.model.truststores).
IMAGE_CLIENTS: dict[str, str] = {
    "curl": "curl",
    "golang": "go",
    "ruby": "ruby",
    "python": "python",
    "eclipse-temurin": "java",
    "openjdk": "java",
}


def unit_program(path: str) -> str:
    """``/etc/systemd/system/containerd.service.d/http-proxy.conf`` -> ``containerd``."""
    found = _UNIT.search(path or "")
    return found.group(1) if found else ""


def image_program(image: str) -> str:
    """``quay.io/giantswarm/chart-operator:3.2.1`` -> ``chart-operator`` (the repository's
    last path element, without tag or digest)."""
    name = (image or "").split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[0]


def go_reader(program: str, image: str = "") -> str:
    """Why the reader is a Go program ('' when it is not known to be one)."""
    if image and image.startswith(GO_REGISTRIES):
        return f"its image {image.split('@', 1)[0]} is an OpenShift/Kubernetes component (Go)"
    if not program:
        return ""
    if program in GO_PROGRAMS:
        return f"read by {program}, a Go program"
    family = next((p for p in GO_PROGRAMS if program.startswith(p + "-")), None)
    return f"read by {program} ({family}, a Go program)" if family else ""


# Proxy settings only Go programs read directly: a config.openshift.io Proxy (OpenShift's
# operators, which copy it into the env of the workloads that need it - judged there) and a
# HostedCluster's configuration.proxy (HyperShift's operators and the nodes' Go services).
GO_READ_OBJECTS = {"Proxy": "read by OpenShift's operators (Go), which copy it into env",
                   "HostedCluster": "read by HyperShift (Go), which hands it to Go components",
                   "HostedControlPlane": "read by HyperShift's control-plane operator (Go), "
                                         "which hands it to Go components"}

# Programs whose only remote peer is the Kubernetes API server (in-cluster config: the
# kubernetes Service's ClusterIP): cert-manager's cainjector (writes CA bundles through the
# API) and its webhook (serves admission, reads the API). A proxy they cannot reach is never
# used when their NO_PROXY sends the API server direct.
API_SERVER_ONLY_PROGRAMS = frozenset({"cert-manager-cainjector", "cert-manager-webhook"})


def api_server_only(image: str) -> str:
    """The image's program when it talks to the API server only ('' otherwise)."""
    program = image_program(image)
    return program if program in API_SERVER_ONLY_PROGRAMS else ""
