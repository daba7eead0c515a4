"""Helpers for the reachability tests: load YAML text as an inventory, list connections."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.analysis.reachability.connlist import connection_list
from scanner.analysis.reachability.evaluation import EvaluationOptions
from scanner.inventory import Inventory
from scanner.sources.loader import load_paths

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO / ".." / "shared"
CONFORMANCE = SHARED / "conformance" / "netpol" / "cases"
CPO_RENDERED = SHARED / "realworld" / "hypershift" / "cpo-rendered"
FIXTURES = REPO / "fixtures" / "reachability"


def load(*paths: Path) -> Inventory:
    result = load_paths([str(p) for p in paths])
    return Inventory(result.objects, result.diagnostics, result.skipped)


@pytest.fixture
def manifests(tmp_path: Path):
    """Write YAML text to a file and load it: ``manifests(text) -> Inventory``."""

    def build(text: str, name: str = "manifests.yaml") -> Inventory:
        path = tmp_path / name
        path.write_text(text)
        return load(path)

    return build


@pytest.fixture
def connections(manifests):
    """``connections(text, **options) -> set of connection-list lines``."""

    def run(text: str, **options: bool) -> set[str]:
        result = connection_list(manifests(text), EvaluationOptions(**options))
        return set(result.lines())

    return run
