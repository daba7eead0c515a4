"""A LoadBalancer Service's source ranges: the field, else the legacy annotation, exactly."""

from __future__ import annotations

import pytest

from hcpscan.inventory.objects import K8sObject, SourceLocation
from hcpscan.model.ipspace import IPSpace
from hcpscan.model.sourceranges import (
    ANNOTATION_PATH,
    SOURCE_RANGES_ANNOTATION,
    SOURCE_RANGES_FIELD,
    load_balancer_source_ranges,
)


def _service(spec_ranges=None, annotation=None) -> K8sObject:
    metadata: dict = {"name": "lb", "namespace": "shop"}
    if annotation is not None:
        metadata["annotations"] = {SOURCE_RANGES_ANNOTATION: annotation}
    spec: dict = {"type": "LoadBalancer"}
    if spec_ranges is not None:
        spec["loadBalancerSourceRanges"] = spec_ranges
    return K8sObject("management", "v1", "Service", "shop", "lb",
                     {"metadata": metadata, "spec": spec}, SourceLocation("svc.yaml", 1))


def test_the_annotation_bounds_when_the_field_is_absent_or_empty():
    for field in (None, []):
        ranges = load_balancer_source_ranges(_service(field, " 10.0.0.0/8 ,192.168.0.0/16"))
        assert ranges.path == ANNOTATION_PATH and ranges.from_annotation
        assert ranges.cidrs == ("10.0.0.0/8", "192.168.0.0/16") and not ranges.malformed
        assert ranges.space() == IPSpace.from_cidrs(["10.0.0.0/8", "192.168.0.0/16"])


def test_the_field_wins_over_the_annotation():
    ranges = load_balancer_source_ranges(_service(["10.1.0.0/16"], "0.0.0.0/0"))
    assert ranges.path == SOURCE_RANGES_FIELD and ranges.cidrs == ("10.1.0.0/16",)
    assert ranges.shadowed_annotation == "0.0.0.0/0"


def test_neither_admits_every_address():
    for svc in (_service(), _service(None, ""), _service(None, "   ")):
        ranges = load_balancer_source_ranges(svc)
        assert not ranges.declared and ranges.space() == IPSpace.everything()


@pytest.mark.parametrize(("annotation", "bad"), [
    ("10.0.0.0/8,192.168.0.7", ("192.168.0.7",)),  # a bare address: Go's ParseCIDR refuses it
    ("10.0.0.0/8,,10.2.0.0/16", ("",)),  # an empty entry
    ("10.0.0.0/33", ("10.0.0.0/33",)),
    ("10.0.0.0/8;10.2.0.0/16", ("10.0.0.0/8;10.2.0.0/16",)),  # not the separator
])
def test_a_malformed_entry_is_named_never_dropped(annotation, bad):
    ranges = load_balancer_source_ranges(_service(None, annotation))
    assert ranges.malformed == bad
    assert all(repr(b) in ranges.malformed_text() for b in bad)
    assert SOURCE_RANGES_ANNOTATION in ranges.malformed_text()


def test_host_bits_are_masked_as_kubernetes_does():
    ranges = load_balancer_source_ranges(_service(["10.0.0.1/8"]))
    assert not ranges.malformed and ranges.space() == IPSpace.from_cidrs(["10.0.0.0/8"])


def test_an_annotation_that_is_not_a_string_is_malformed():
    ranges = load_balancer_source_ranges(_service(None, ["10.0.0.0/8"]))
    assert ranges.from_annotation and ranges.malformed == ("['10.0.0.0/8']",)
