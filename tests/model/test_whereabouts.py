"""The networks a whereabouts ipam states (k8snetworkplumbingwg/whereabouts pkg/config)."""

from __future__ import annotations

import json

import pytest

from hcpscan.inventory.objects import K8sObject
from hcpscan.model.secondary import nad_cidrs


def _nad(ipam: dict) -> K8sObject:
    config = {"cniVersion": "0.3.1", "name": "net", "type": "macvlan", "ipam": ipam}
    return K8sObject("management", "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "default",
                     "net", {"spec": {"config": json.dumps(config)}}, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(("ipam", "networks"), [
    ({"type": "whereabouts", "ipRanges": [{"range": "192.168.50.0/24"}, {"range": "fd10:50::/64"}]},
     ["192.168.50.0/24", "fd10:50::/64"]),
    # a CIDR with host bits set: its network
    ({"type": "whereabouts", "range": "192.168.2.225/28"}, ["192.168.2.224/28"]),
    # <first IP>-<CIDR> (the CIDR's address the last IP); start, end and exclude narrow the
    # addresses pods get, not the network
    ({"type": "whereabouts", "range": "192.168.2.225-192.168.2.230/28",
      "range_start": "192.168.2.226", "exclude": ["192.168.2.229/30"]}, ["192.168.2.224/28"]),
    # the top-level range is one more range beside ipRanges
    ({"type": "whereabouts", "range": "abcd::1/64", "ipRanges": [{"range": "192.168.10.1/24"}]},
     ["abcd::/64", "192.168.10.0/24"]),
])
def test_whereabouts_ranges_give_their_networks(ipam, networks):
    assert nad_cidrs(_nad(ipam))[0] == networks
