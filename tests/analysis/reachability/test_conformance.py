"""Every np-guard netpol-analyzer case of the shared conformance set, through the CLI."""

from __future__ import annotations

import pytest

from .conftest import CONFORMANCE

CASES = sorted(p.name for p in CONFORMANCE.iterdir() if (p / "expected_connlist.txt").is_file())


def test_the_conformance_set_is_present():
    assert len(CASES) >= 20


@pytest.mark.parametrize("case", CASES)
def test_connection_list_matches_the_oracle(case, run_cli):
    result = run_cli("connectivity", "--no-progress", str(CONFORMANCE / case / "input"))
    assert result.code == 0, result.err
    expected = (CONFORMANCE / case / "expected_connlist.txt").read_text().splitlines()
    got = result.out.splitlines()
    assert len(got) == len(set(got)), "duplicate lines"
    assert set(got) == {line for line in expected if line.strip()}
