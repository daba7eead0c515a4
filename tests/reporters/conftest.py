"""Fixtures of the reporter tests: reports, options and text snapshots."""

from __future__ import annotations

import pytest

from hcpscan.reporters import ReportOptions
from tests.reporters.reports import TEXTS, realistic_report, small_report


@pytest.fixture
def small():
    return small_report()


@pytest.fixture
def realistic():
    return realistic_report()


@pytest.fixture
def options() -> ReportOptions:
    """Deterministic options: file texts from memory, paths relative to the cwd."""
    return ReportOptions(read_text=TEXTS.get, width=100)
