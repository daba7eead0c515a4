"""tests/k8sschema.py judges as an API server would: the Kubernetes extensions of a CRD schema."""

from __future__ import annotations

import pytest

from tests.k8sschema import CrdValidator, UnsupportedSchema, to_json_schema


def valid(schema: dict, instance: object) -> bool:
    return not list(CrdValidator(to_json_schema(schema)).iter_errors(instance))


def test_objects_are_closed_as_a_pruning_server_would_drop_unknown_fields():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert valid(schema, {"a": "x"}) and not valid(schema, {"a": "x", "b": "y"})
    open_schema = {**schema, "x-kubernetes-preserve-unknown-fields": True}
    assert valid(open_schema, {"a": "x", "b": "y"})
    assert valid({"type": "object", "additionalProperties": {"type": "string"}}, {"any": "x"})


def test_int_or_string_and_nullable():
    port = {"x-kubernetes-int-or-string": True}
    assert valid(port, 8443) and valid(port, "https") and not valid(port, 1.5)
    assert valid({"type": "string", "nullable": True}, None)
    assert not valid({"type": "string"}, None)


def test_list_types_and_integer_formats():
    assert not valid({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                     ["a", "a"])
    by_name = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
               "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
    assert valid(by_name, [{"name": "a"}, {"name": "b"}]) and not valid(by_name, [{"name": "a"}] * 2)
    assert not valid({"type": "integer", "format": "int32"}, 2**31)
    assert valid({"type": "integer", "format": "int64"}, 2**31)


def test_embedded_resources_need_kind_and_api_version():
    manifest = {"type": "object", "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True}
    assert valid(manifest, {"apiVersion": "v1", "kind": "ConfigMap", "data": {}})
    assert not valid(manifest, {"kind": "ConfigMap"})


def test_cel_rules_are_refused_rather_than_half_checked():
    with pytest.raises(UnsupportedSchema, match="x-kubernetes-validations"):
        to_json_schema({"type": "object", "x-kubernetes-validations": [{"rule": "self.a > 0"}]})
