"""A hostile (or broken) API server must not make failing rules pass: a kind it leaves out
of discovery, or a list it answers without an items array, is an error for that kind
(its rules not evaluable, exit 2), never zero objects."""

from __future__ import annotations

import json

import pytest

from tests.live.conftest import write_kubeconfig
from tests.live.test_cluster_scan import hcpscan

STATUS_200 = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403,
              "message": "forbidden by the gateway"}


def _report(server, pki, tmp_path, *extra: str) -> tuple[int, dict]:
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config",
                             "--request-timeout", "5", "--format", "json", *extra)
    assert "Traceback" not in err and "internal error" not in err, err
    return code, json.loads(out)


def _status(report: dict, rule: str) -> str:
    return next(r["status"] for r in report["rules"] if r["rule_id"] == rule)


def test_the_example_fails_hcp001_and_hcp009_when_served_honestly(standin, pki, tmp_path,
                                                                  example_bodies):
    # the baseline the hostile answers below tried to turn into a pass
    code, report = _report(standin(example_bodies), pki, tmp_path)
    assert code == 1 and _status(report, "HCP001") == "fail" and _status(report, "HCP009") == "fail"


def test_a_core_discovery_leaving_out_services_and_secrets_is_an_error(standin, pki, tmp_path,
                                                                      example_bodies):
    server = standin(example_bodies)
    only_configmaps = {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        {"name": "configmaps", "kind": "ConfigMap", "namespaced": True, "verbs": ["list"]}]}
    server.state.raw["/api/v1"] = ("200 OK", {}, json.dumps(only_configmaps).encode())
    code, report = _report(server, pki, tmp_path)
    assert code == 2
    said = [d["message"] for d in report["diagnostics"] if d["severity"] == "error"]
    for kind in ("Service", "Secret", "Namespace"):
        assert f"not read: the API server's discovery does not list {kind}, which every " \
               "Kubernetes API server serves" in said
    for rule in ("HCP001", "HCP002", "HCP009"):
        assert _status(report, rule) == "not-evaluable", rule


@pytest.mark.parametrize(("body", "words"), [
    (STATUS_200, "the answer is no list: a Status (forbidden by the gateway)"),
    ({"kind": "ServiceList", "apiVersion": "v1", "metadata": {}}, "no items array"),
    ({"kind": "ServiceList", "apiVersion": "v1", "items": "none"}, "items that are a str"),
    ({"kind": "ServiceList", "apiVersion": "v1", "items": {"a": "b"}}, "items that are a dict"),
])
def test_a_list_answered_without_an_items_array_is_an_error_not_zero_objects(
        standin, pki, tmp_path, example_bodies, body, words):
    server = standin(example_bodies)
    server.state.raw["/api/v1/services"] = ("200 OK", {}, json.dumps(body).encode())
    code, report = _report(server, pki, tmp_path)
    assert code == 2
    assert any(d["severity"] == "error" and "listing services failed" in d["message"]
               and words in d["message"] for d in report["diagnostics"]), report["diagnostics"]
    assert _status(report, "HCP009") == "not-evaluable"  # it failed on the Services served


def test_items_null_is_an_empty_list_as_go_writes_it(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    empty = {"kind": "EndpointsList", "apiVersion": "v1", "metadata": {}, "items": None}
    server.state.raw["/api/v1/endpoints"] = ("200 OK", {}, json.dumps(empty).encode())
    code, report = _report(server, pki, tmp_path)
    assert code == 1
    assert not any("endpoints" in d["message"] for d in report["diagnostics"])


def test_a_listed_object_with_a_lone_surrogate_is_refused_and_its_neighbours_kept(
        standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    page = ('{"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {}, "items": ['
            '{"metadata": {"name": "kept-cm", "namespace": "shop"}, "data": {"a": "b"}},'
            '{"metadata": {"name": "bad-cm", "namespace": "shop"}, "data": {"a": "x\\ud800"}}]}')
    server.state.raw["/api/v1/configmaps"] = ("200 OK", {}, page.encode())
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config",
                             "--request-timeout", "5", "--format", "json", "--save-dump",
                             str(tmp_path / "dump"))
    assert code == 2 and "internal error" not in err, err
    report = json.loads(out)
    assert any(d["message"] == "not read: ConfigMap shop/bad-cm: data.a holds a lone UTF-16 "
               "surrogate escape (\\ud800-\\udfff without its pair)" for d in report["diagnostics"])
    saved = "".join(p.read_text() for p in (tmp_path / "dump").rglob("*.yaml"))
    assert "kept-cm" in saved and "bad-cm" not in saved


@pytest.mark.parametrize("value", ["\u00b2", "\u00b9", "1.5", "-1", "soon", "Wed, 21 Oct 2015 07:28:00 GMT"])
def test_a_retry_after_that_is_no_ascii_number_or_date_is_ignored(standin, pki, tmp_path,
                                                                  example_bodies, value):
    # `Retry-After: ²` (byte 0xB2): str.isdigit() took it and float() refused it, exit 4
    from tests.live.apiserver import Fault

    server = standin(example_bodies)
    server.state.faults["/api/v1/secrets"] = Fault(429, 2, retry_after=value)
    code, report = _report(server, pki, tmp_path)
    assert code == 1
    assert not any("secrets" in d["message"] for d in report["diagnostics"])
    assert [r.status for r in server.state.requests if r.path == "/api/v1/secrets"][-1] == 200
