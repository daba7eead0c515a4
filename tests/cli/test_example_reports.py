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
