"""reports/ holds the bundled example's reports; regenerating them must change nothing."""

from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import ROOT

_spec = importlib.util.spec_from_file_location("regenerate", ROOT / "reports" / "regenerate.py")
regenerate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regenerate)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    return regenerate.generate(tmp_path_factory.mktemp("reports"))


@pytest.mark.parametrize("fmt", sorted(regenerate.FORMATS))
def test_committed_report_is_current(fresh, fmt):
    committed = ROOT / "reports" / regenerate.FORMATS[fmt]
    assert committed.read_text() == fresh[fmt].read_text(), (
        f"{committed.relative_to(ROOT)} is stale: run `python3 reports/regenerate.py`")


def test_every_scan_format_has_a_golden_report():
    """reports/ follows the one format registry: a format added to SCAN_FORMATS (as
    docs/extending.md says) gets its golden file without a second list to edit."""
    from hcpscan.reporters.formats import SCAN_FORMAT_NAMES

    assert set(regenerate.FORMATS) == set(SCAN_FORMAT_NAMES)
    missing = [name for name in regenerate.FORMATS.values() if not (ROOT / "reports" / name).is_file()]
    assert not missing, f"run `python3 reports/regenerate.py`: {missing}"
