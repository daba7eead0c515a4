"""What rules read once and reuse (flow results per HostedCluster, a HostedCluster read per
object, parsed noProxy values, field paths) never carries one HCP namespace's verdict into
another's: a failing and a passing control plane scanned together give each its own answer,
whichever comes first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.rules.harness import scan

# (rule, fixture): the fail and pass folders hold a file of this name each, one control plane
CASES = [("HCP007", "konnectivity-lb.yaml"), ("HCP007", "private-router.yaml"),
         ("HCP008", "kubevirt-default-deny.yaml"), ("HCP008", "dns-one-protocol.yaml"),
         ("HCP009", "apiserver-lb.yaml")]


def _renamed(text: str, suffix: str) -> str:
    """The same control plane under another HostedCluster name (and so HCP namespace)."""
    name = re.search(r"kind: HostedCluster\nmetadata:\n  name: (\S+)", text)
    assert name is not None, "the fixture declares a HostedCluster"
    old = name.group(1)
    text = text.replace(f"clusters-{old}", f"clusters-{old}{suffix}")
    return text.replace(f"kind: HostedCluster\nmetadata:\n  name: {old}\n",
                        f"kind: HostedCluster\nmetadata:\n  name: {old}{suffix}\n")


def _places(report) -> set[tuple[str, str, int]]:
    return {(f.rule_id, Path(f.location.path).name, f.location.line) for f in report.findings}


@pytest.mark.parametrize(("rule", "name"), CASES)
@pytest.mark.parametrize("passing_first", [False, True])
def test_a_passing_control_plane_beside_a_failing_one_keeps_its_own_verdict(
        tmp_path: Path, rule: str, name: str, passing_first: bool) -> None:
    failing = (FIXTURES / "rules" / rule / "fail" / name).read_text()
    passing = _renamed((FIXTURES / "rules" / rule / "pass" / name).read_text(), "x")
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "a-fail.yaml").write_text(failing)
    expected = _places(scan([alone], [rule]))
    assert expected, f"{rule} fires on its failing fixture {name}"
    together = tmp_path / "together"
    together.mkdir()
    (together / "a-fail.yaml").write_text(failing)
    # file order is scan order: the passing control plane first, or second
    (together / ("0-pass.yaml" if passing_first else "b-pass.yaml")).write_text(passing)
    report = scan([together], [rule])
    assert _places(report) == expected
    hosted = {f.message for f in report.findings}
    assert not any(f"clusters-{_hc_name(failing)}x" in m for m in hosted)


def _hc_name(text: str) -> str:
    found = re.search(r"kind: HostedCluster\nmetadata:\n  name: (\S+)", text)
    return found.group(1) if found else ""
