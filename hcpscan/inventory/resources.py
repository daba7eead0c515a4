"""Kind -> resource: the plural name the API server lists a kind by, and the resources
hcpscan reads for the kinds it makes itself.

One table for everything that turns the kinds rules read into resources to read: the
file loader (dump and must-gather layouts name their folders and files by resource), the
live lister (``hcpscan cluster`` lists the same resources) and ``hcpscan rules`` runs. A
rule names kinds only (its subjects, and what its template reads for its params); the
resources follow from them here (``resources_for``).
"""

from __future__ import annotations

from collections.abc import Iterable

from hcpscan.inventory.objects import IGNITION_CONFIG, INSTALL_CONFIG_KIND, KUBECONFIG, SYSTEMD_DROPIN

# Plurals the English rule below does not give (CRDs of k8s.cni.cncf.io use dashes).
_IRREGULAR = {
    "Endpoints": "endpoints",
    "NetworkPolicy": "networkpolicies",
    "Proxy": "proxies",
    "Ingress": "ingresses",
    "NetworkAttachmentDefinition": "network-attachment-definitions",
    "MultiNetworkPolicy": "multi-networkpolicies",
}

# Kinds hcpscan makes from what other resources hold (a kubeconfig in a Secret's key, an
# install-config in a ConfigMap or Secret) -> those resources' kinds.
MADE_FROM: dict[str, tuple[str, ...]] = {
    KUBECONFIG: ("Secret",),
    IGNITION_CONFIG: ("Secret",),
    SYSTEMD_DROPIN: ("Secret",),
    INSTALL_CONFIG_KIND: ("ConfigMap", "Secret"),
}


def plural_of(kind: str) -> str:
    """The resource name (plural) the API server uses for a kind."""
    if kind in _IRREGULAR:
        return _IRREGULAR[kind]
    lower = kind.lower()
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


def resources_for(kinds: Iterable[str]) -> frozenset[str]:
    """The resources (plurals) to read for ``kinds``: each kind's own, and for a kind
    hcpscan makes itself, those of the kinds it is made from."""
    return frozenset(plural_of(source) for kind in kinds for source in MADE_FROM.get(kind, (kind,)))
