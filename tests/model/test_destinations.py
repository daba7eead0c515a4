"""Named destinations a flow reaches: the hosted cluster's proxy, read from its URL."""

from __future__ import annotations

import pytest

from hcpscan.model.destinations import address_space, proxy_endpoint
from hcpscan.model.ipspace import IPSpace


@pytest.mark.parametrize(("proxy", "expected"), [
    ({"httpsProxy": "http://10.0.50.10:3128"}, ("10.0.50.10", 3128, "spec.configuration.proxy.httpsProxy")),
    ({"httpProxy": "http://proxy.corp.example:8080"},
     ("proxy.corp.example", 8080, "spec.configuration.proxy.httpProxy")),
    ({"httpsProxy": "https://[fd00::5]"}, ("fd00::5", 443, "spec.configuration.proxy.httpsProxy")),
    ({"httpsProxy": "proxy.corp:3128"}, ("proxy.corp", 3128, "spec.configuration.proxy.httpsProxy")),
    ({"httpsProxy": "http://user:secret@10.0.0.1:8080"},
     ("10.0.0.1", 8080, "spec.configuration.proxy.httpsProxy")),
    # httpsProxy first; a malformed one gives way to httpProxy
    ({"httpsProxy": "http://[::1", "httpProxy": "http://10.1.1.1:80"},
     ("10.1.1.1", 80, "spec.configuration.proxy.httpProxy")),
])
def test_the_proxy_is_its_urls_host_and_port(proxy, expected):
    assert proxy_endpoint(proxy) == expected


@pytest.mark.parametrize("value", ["", "http://", "http://p:99999", "http://[::1", 42, None, ["x"]])
def test_no_usable_proxy_url_names_none(value):
    assert proxy_endpoint({"httpsProxy": value}) is None


def test_a_host_name_has_no_address_and_an_ip_literal_has_one():
    assert address_space("proxy.corp") is None
    assert address_space("10.0.50.10") == IPSpace.from_cidrs(["10.0.50.10/32"])
