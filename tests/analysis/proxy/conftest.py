"""Fixtures for the proxy model tests: shared data paths and loaded inventories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hcpscan.inventory import Inventory
from hcpscan.sources.loader import load_paths

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO / ".." / "shared"
CONFORMANCE = SHARED / "conformance" / "noproxy"
CPO_RENDERED = SHARED / "realworld" / "hypershift" / "cpo-rendered"
FIXTURES = REPO / "fixtures" / "proxy"
DATA = Path(__file__).resolve().parent / "data"


def table(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def load(*paths: Path) -> Inventory:
    result = load_paths([str(p) for p in paths])
    return Inventory(result.objects, result.diagnostics, result.skipped)


@pytest.fixture(scope="session")
def cpo_inventory() -> Inventory:
    return load(CPO_RENDERED)


@pytest.fixture(scope="session")
def fixture_inventory() -> Inventory:
    return load(FIXTURES)
