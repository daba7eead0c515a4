"""A scan's report says where its time went: every stage the scan passes through, in
order, the planning of fixes and the exposures included (they were in none before)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES


def test_the_stages_of_a_scan_cover_its_duration(run_cli: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    out = tmp_path / "report.json"
    result = run_cli("scan", str(FIXTURES / "example"), "--format", "json", "-o", str(out))
    assert result.code == 1, result.err
    scan = json.loads(out.read_text())["scan"]
    stages = scan["stage_seconds"]
    assert list(stages) == ["load", "graph", "rules", "findings"]
    assert all(seconds >= 0 for seconds in stages.values())
    assert sum(stages.values()) <= scan["duration"] + 0.01  # rounded to milliseconds
