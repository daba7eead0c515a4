"""Who a LoadBalancer Service's load balancer admits: its source ranges, read once.

Kubernetes takes the ranges from ``spec.loadBalancerSourceRanges`` when that list is not
empty, else from the legacy annotation ``service.beta.kubernetes.io/load-balancer-source-ranges``
(a comma-separated list of CIDRs, spaces around each tolerated), else admits every
address (kubernetes ``pkg/api/v1/service/util.go`` GetLoadBalancerSourceRanges, which
every cloud provider calls; the field wins when both are set). Each entry is a CIDR
(``10.0.0.0/8``; host bits are masked, as Go's ``net.ParseCIDR`` does); a bare address or
anything else is malformed: the API server refuses such a LoadBalancer Service and a cloud
provider cannot build its load balancer, so hcpscan names the entry instead of reading the
others as the whole truth.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hcpscan.inventory import K8sObject
from hcpscan.model.ipspace import AddressError, IPSpace, parse_network

SOURCE_RANGES_FIELD = "spec.loadBalancerSourceRanges"
SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"
ANNOTATION_PATH = f'metadata.annotations["{SOURCE_RANGES_ANNOTATION}"]'


@dataclass(frozen=True, slots=True)
class SourceRanges:
    """A Service's load-balancer source ranges: the CIDRs as written, where they are
    written (``path``: the field, the annotation, or '' when neither sets any), the
    entries that are not CIDRs, and whether an annotation stands shadowed by the field."""

    cidrs: tuple[str, ...] = ()
    path: str = ""
    malformed: tuple[str, ...] = ()
    shadowed_annotation: str = ""  # the annotation's value when the field wins over it

    @property
    def declared(self) -> bool:
        """Some range is set (a load balancer without any admits every address)."""
        return bool(self.path)

    @property
    def from_annotation(self) -> bool:
        return self.path == ANNOTATION_PATH

    @property
    def where(self) -> str:
        """The field or annotation, as a message names it."""
        return (f"annotation {SOURCE_RANGES_ANNOTATION}" if self.from_annotation
                else SOURCE_RANGES_FIELD if self.path else "")

    def space(self) -> IPSpace:
        """The addresses admitted: every address when none is declared. Only meaningful
        without ``malformed`` entries (the caller says what it reads then)."""
        if not self.declared:
            return IPSpace.everything()
        return IPSpace.union_of(IPSpace.from_networks([parse_network(c, strict=False)])
                                for c in self.cidrs)

    def malformed_text(self) -> str:
        """Why the ranges cannot be read, '' when they can."""
        if not self.malformed:
            return ""
        shown = ", ".join(repr(m) for m in self.malformed)
        return (f"{self.where} holds {shown}, which is not a CIDR (address/prefix): the API "
                "server refuses such a LoadBalancer Service and no cloud provider builds its "
                "load balancer")


def load_balancer_source_ranges(svc: K8sObject) -> SourceRanges:
    """The source ranges that bound ``svc``'s load balancer, from the field or else the
    annotation (see the module docstring)."""
    raw = svc.annotations.get(SOURCE_RANGES_ANNOTATION)
    # an annotation is a string; any other value (a YAML list, a number) is no list of CIDRs
    annotation = raw.strip() if isinstance(raw, str) else "" if raw is None else str(raw)
    field = svc.get(SOURCE_RANGES_FIELD)
    if isinstance(field, list) and field:
        cidrs, bad = _split(str(item) if item is not None else "" for item in field)
        return SourceRanges(cidrs, SOURCE_RANGES_FIELD, bad, annotation)
    if field is not None and not isinstance(field, list):
        return SourceRanges((), SOURCE_RANGES_FIELD, (str(field),), annotation)
    if annotation and not isinstance(raw, str):
        return SourceRanges((), ANNOTATION_PATH, (annotation,))
    if annotation:
        cidrs, bad = _split(annotation.split(","))
        return SourceRanges(cidrs, ANNOTATION_PATH, bad)
    return SourceRanges()


def _split(entries: Iterable[object]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    good: list[str] = []
    bad: list[str] = []
    for raw in entries:
        text = str(raw).strip()
        if _is_cidr(text):
            good.append(text)
        else:
            bad.append(text)
    return tuple(good), tuple(bad)


def _is_cidr(text: str) -> bool:
    if "/" not in text:
        return False  # Go's net.ParseCIDR wants address/prefix; a bare address is refused
    try:
        parse_network(text, strict=False)
    except AddressError:
        return False
    return True
