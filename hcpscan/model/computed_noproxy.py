"""The noProxy a platform computes from the user's: one definition for HyperShift and OpenShift.

Both keep a set and print it sorted (Go's ``sets.String.List()``), then hand that list to
their clients, so what a reader gets is this function of the user's entries, the
cluster's networks and its platform:

* HyperShift, for a hosted cluster's nodes and components (openshift/hypershift
  ``support/globalconfig/proxy.go``, ``defaultProxyStatus``, read at commit 3ee96155):
  ``127.0.0.1``, ``localhost``, ``.svc``, ``.cluster.local``, ``.local``; the machine,
  cluster and service networks as written; ``169.254.169.254`` on **AWS and Azure only**
  (not GCP, OpenStack, KubeVirt, Agent, None, IBM Cloud, PowerVS); ``.ec2.internal`` in
  AWS ``us-east-1``, else ``.<region>.compute.internal``; then the user's entries. Nothing
  at all when neither ``httpProxy`` nor ``httpsProxy`` is set.
* OpenShift's cluster-network-operator, for a cluster's own ``Proxy cluster`` status, which
  the HyperShift operator copies into its own env and the control-plane Deployments that need
  the outside (openshift/cluster-network-operator ``pkg/util/proxyconfig/no_proxy.go``,
  ``mergeUserSystemNoProxy``, read at commit 2a6a57fe): ``127.0.0.1``, ``localhost``,
  ``.svc``, ``.cluster.local``, and ``.hypershift.local`` when the CNO runs for a hosted
  cluster; the install-config's machine networks except ``0.0.0.0/0``; the host of
  ``Infrastructure.status.apiServerInternalURI`` (api-int); the Network status's service
  and cluster networks; ``169.254.169.254`` on AWS, GCP, Azure and OpenStack; the AWS domain
  as above; ``168.63.129.16`` on an Azure cloud other than AzurePublicCloud (and the ARM
  endpoint on AzureStackCloud); ``metadata``, ``metadata.google.internal`` and
  ``metadata.google.internal.`` on GCP; then the user's entries.
"""

from __future__ import annotations

from collections.abc import Iterable

from hcpscan.core.userinfo import split_outside_credentials
from hcpscan.inventory import Inventory

LOCAL_ENTRIES = ("127.0.0.1", "localhost", ".svc", ".cluster.local")
HYPERSHIFT_LOCAL = ".local"  # HyperShift's own addition, "for private clusters"
HOSTED_LOCAL_ZONE = ".hypershift.local"  # the CNO's addition inside a hosted cluster
METADATA_ADDRESS = "169.254.169.254"
HYPERSHIFT_METADATA_PLATFORMS = ("AWS", "Azure")
# Cluster API infrastructure kinds whose machines are cloud instances with that metadata
# service: the kubelet's image credential provider (ecr-/acr-credential-provider, Go SDKs
# that follow the proxy env) calls it with the kubelet's environment.
CAPI_METADATA_INFRASTRUCTURE = ("AWSCluster", "AzureCluster")
OPENSHIFT_METADATA_PLATFORMS = ("AWS", "GCP", "Azure", "OpenStack")
AZURE_WIRESERVER = "168.63.129.16"
GCP_METADATA_NAMES = ("metadata", "metadata.google.internal", "metadata.google.internal.")
MATCH_ALL = ("0.0.0.0/0",)  # never added as a machine network (it would bypass everything)

HYPERSHIFT_SOURCE = ("HyperShift support/globalconfig/proxy.go (defaultProxyStatus): the "
                     "noProxy it hands the hosted cluster's nodes and components")
OPENSHIFT_SOURCE = ("OpenShift's cluster-network-operator pkg/util/proxyconfig/no_proxy.go: "
                    "the Proxy status it computes from spec, which operators read")


def aws_domain(region: str) -> str:
    return ".ec2.internal" if region == "us-east-1" else f".{region}.compute.internal"


def _user(user: str | None) -> list[str]:
    # never split inside a credential (a proxy URL with ',' in its password)
    return [e for e in split_outside_credentials(user or "", ",") if e]


def hypershift_no_proxy(machine: Iterable[str], cluster: Iterable[str], service: Iterable[str],
                        platform: str, aws_region: str, user: str | None) -> str:
    """HyperShift's computed noProxy of a hosted cluster (the proxy is set)."""
    entries = {*LOCAL_ENTRIES, HYPERSHIFT_LOCAL, *machine, *cluster, *service}
    if platform in HYPERSHIFT_METADATA_PLATFORMS:
        entries.add(METADATA_ADDRESS)
    if platform == "AWS":
        entries.add(aws_domain(aws_region))
    entries.update(_user(user))
    return ",".join(sorted(entries))


def openshift_no_proxy(*, machine: Iterable[str], api_internal_host: str,
                       service: Iterable[str], cluster: Iterable[str], platform: str,
                       aws_region: str = "", azure_cloud: str = "", azure_arm_endpoint: str = "",
                       user: str | None = None, hosted: bool = False) -> str:
    """The cluster-network-operator's Proxy status noProxy (the proxy is set)."""
    entries = set(LOCAL_ENTRIES)
    if hosted:
        entries.add(HOSTED_LOCAL_ZONE)
    entries.update(m for m in machine if m not in MATCH_ALL)
    if api_internal_host:
        entries.add(api_internal_host)
    entries.update(service)
    if platform in OPENSHIFT_METADATA_PLATFORMS:
        entries.add(METADATA_ADDRESS)
    if platform == "AWS":
        entries.add(aws_domain(aws_region))
    elif platform == "Azure" and azure_cloud and azure_cloud != "AzurePublicCloud":
        entries.add(AZURE_WIRESERVER)
        if azure_cloud == "AzureStackCloud" and azure_arm_endpoint:
            entries.add(azure_arm_endpoint)
    elif platform == "GCP":
        entries.update(GCP_METADATA_NAMES)
    entries.update(cluster)
    entries.update(_user(user))
    return ",".join(sorted(entries))


# What HyperShift adds to the management cluster's noProxy when it hands it to a control-plane
# container (support/proxy.SetEnvVars: kube-apiserver, then the set sorted).
SET_ENV_VARS_ADDED = frozenset({"kube-apiserver"})


def status_copy(inventory: Inventory, cluster: str, text: str) -> str:
    """Why a NO_PROXY value is its cluster's computed noProxy as an operator copies it ('' when
    it is not): the same entries as the ``Proxy cluster``'s ``status.noProxy`` (which the
    network operator computes; no user writes it), in any order, or those and what
    HyperShift adds handing it to a control-plane container. The network operator's
    DaemonSets, the hosted-cluster-config-operator's konnectivity-agent (proxy.Status
    verbatim) and HyperShift's control-plane Deployments carry such copies."""
    entries = _entry_set(text)
    if not entries:
        return ""
    for proxy in inventory.query("Proxy", name="cluster", cluster=cluster):
        status = proxy.body.get("status")
        computed = _entry_set(status.get("noProxy")) if isinstance(status, dict) else frozenset()
        if computed and entries in (computed, computed | SET_ENV_VARS_ADDED):
            return (f"it is {proxy.ref} status.noProxy (computed by the network operator, "
                    "copied by an operator" + (", with HyperShift's kube-apiserver" if
                                               entries != computed else "") + "): no user wrote it")
    return ""


def _entry_set(text: object) -> frozenset[str]:
    return frozenset(e.strip() for e in text.split(",") if e.strip()) if isinstance(text, str) \
        else frozenset()
