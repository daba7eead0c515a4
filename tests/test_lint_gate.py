"""CI lints and type-checks before the tests (issue 26): .ci/run runs ruff and mypy from
the project's venv, the test extra installs them, product code has no `assert` (python -O
strips them), and no product file is exempted from the rule set or the type check."""

from __future__ import annotations

import re
import tomllib

from tests.conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _commands() -> list[str]:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_ci_runs_ruff_and_mypy_before_the_tests():
    commands = _commands()
    ruff = next(i for i, c in enumerate(commands) if re.fullmatch(r"python3 -m ruff check \.", c))
    mypy = next(i for i, c in enumerate(commands) if re.fullmatch(r"python3 -m mypy hcpscan", c))
    pytest_at = next(i for i, c in enumerate(commands) if c == "python3 -m pytest")
    venv = next(i for i, c in enumerate(commands) if c.startswith('. "$VENV/bin/activate"'))
    assert venv < ruff < pytest_at and venv < mypy < pytest_at


def test_the_test_extra_installs_the_linters():
    extra = " ".join(PYPROJECT["project"]["optional-dependencies"]["test"])
    assert "ruff" in extra and "mypy" in extra and "types-PyYAML" in extra


def test_the_rule_set_forbids_assert_in_product_code_only():
    lint = PYPROJECT["tool"]["ruff"]["lint"]
    assert "S101" in lint["select"] and "S101" not in lint.get("ignore", [])
    assert "S101" in lint["per-file-ignores"]["tests/**"]
    assert PYPROJECT["tool"]["mypy"]["files"] == ["hcpscan"]


def test_no_product_file_is_exempted_from_the_lint_or_the_type_check():
    ruff = PYPROJECT["tool"]["ruff"]["lint"]["per-file-ignores"]
    assert [p for p in ruff if p.startswith("hcpscan")] == []
    exempt = [o["module"] for o in PYPROJECT["tool"]["mypy"].get("overrides", [])
              if o.get("ignore_errors")]
    assert exempt == []


def test_no_assert_in_product_code():
    found = []
    for path in sorted((ROOT / "hcpscan").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(r"\s*assert\b", line):
                found.append(f"{rel}:{number}: {line.strip()}")
    assert found == [], "raise an explicit error instead:\n" + "\n".join(found)
