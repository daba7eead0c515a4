"""A rule's reason stays readable when hundreds of objects share it (a must-gather's
EndpointSlices each gave HCP010 the same sentence: 46 KB on one line)."""

from __future__ import annotations

import json

from hcpscan.rules.engine import NAMED, joined_reasons
from tests.conftest import SHARED


def test_objects_sharing_a_reason_are_counted_and_a_few_named() -> None:
    why = "not a hosted cluster's guest"
    reasons = [f"EndpointSlice ns/slice-{i:03d}: {why}" for i in range(200)]
    reasons.append("not collected: the must-gather does not gather networkpolicies")
    line = joined_reasons(reasons)
    assert line.count(why) == 1
    assert ("200 objects (EndpointSlice ns/slice-000, EndpointSlice ns/slice-001, "
            f"EndpointSlice ns/slice-002 and {200 - NAMED} more): {why}") in line
    assert "slice-199" not in line
    assert "not collected: the must-gather does not gather networkpolicies" in line


def test_a_few_objects_keep_their_own_reasons() -> None:
    reasons = ["Proxy cluster: uses no proxy", "Deployment a/b: no container",
               "Deployment a/c: no container"]
    assert joined_reasons(reasons) == "; ".join(sorted(reasons))


def test_hcp010_on_a_real_must_gather_says_how_many(run_cli) -> None:
    path = SHARED / "realworld" / "must-gather-aws"
    report = json.loads(run_cli("scan", str(path), "--format", "json", "--select",
                                "HCP010").out)
    (entry,) = report["rules"]
    assert len(entry["reason"]) < 2000
    assert "objects (EndpointSlice " in entry["reason"] and " more): " in entry["reason"]
