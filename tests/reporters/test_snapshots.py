"""Whole reports of one fixed small scan, per format (update with --snapshot-update)."""

from __future__ import annotations

import pytest

from hcpscan.reporters import REPORTERS
from tests.reporters.snapshots import SNAPSHOT_EXTENSIONS


@pytest.mark.parametrize("name", sorted(REPORTERS))
def test_small_report(name, small, options, snapshot):
    assert REPORTERS[name].render(small, options) == snapshot(
        extension_class=SNAPSHOT_EXTENSIONS[name])
