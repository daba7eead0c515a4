"""README.md is the front page: its first commands stay as .ci/run and newcomers use them,
what it says about the rules matches the catalog, and every page it or the manual links
exists."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from hcpscan.rules.loader import builtin_rules_dir, load_rule_dirs
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
FIRST_BLOCK = """```sh
python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && hcpscan scan fixtures/example
python3 -m pytest
```"""


def _links(text: str) -> list[str]:
    """Relative Markdown link targets, without their #anchor."""
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    return [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


def test_the_first_commands_and_their_exit_code_sentence_stay() -> None:
    assert README.startswith("# hcpscan\n\n" + FIRST_BLOCK + "\n")
    assert "it ends with exit code 1" in " ".join(README.split())


def test_ci_runs_the_readmes_test_command_right_after_lint() -> None:
    """.ci/run's test step is the README's second command, as it is, straight after ruff and
    mypy: no other text between them that a reader (or a checker) could take for the
    command, and no extra flags that make CI run something else than a newcomer does."""
    readme_test = FIRST_BLOCK.splitlines()[2]
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    at = lines.index("python3 -m mypy hcpscan")
    assert lines[at + 1] == readme_test
    assert lines.count(readme_test) == 1
    # no comment or other line names pytest: a checker looking for the test command by
    # that word found a comment mentioning pytest-xdist and took it for the command
    assert [line for line in lines if "pytest" in line] == [readme_test]


def test_the_three_ways_to_run_it_are_commands_the_cli_has() -> None:
    from hcpscan.cli.main import build_parser

    parser = build_parser()
    block = README.split("## Three ways to run it", 1)[1].split("```sh\n", 1)[1].split("```")[0]
    lines = [line.split("#")[0].split() for line in block.splitlines() if line.strip()]
    assert [words[:2] for words in lines] == [["hcpscan", "cluster"], ["hcpscan", "scan"],
                                              ["hcpscan", "scan"]]
    for words in lines:
        parser.parse_args(words[1:])  # exits (SystemExit) on an option the CLI does not have


def test_the_rule_summary_matches_the_catalog() -> None:
    rules = sorted(r.id for r in load_rule_dirs([builtin_rules_dir()]))
    assert f"{len(rules)} built-in rules" in README
    for prefix, count in Counter(re.sub(r"\d+$", "", r) for r in rules).items():
        ids = [r for r in rules if r.startswith(prefix)]
        assert len(ids) == count and f"**{ids[0]}–{ids[-1]}," in README, prefix


def test_every_linked_page_exists() -> None:
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in _links(page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links {target}"


def test_every_docs_page_is_on_the_map() -> None:
    """A newcomer finds each page from the front page (pypi.md is the wheel's description)."""
    linked = {(ROOT / t).resolve() for t in _links(README)}
    pages = {p.resolve() for p in (ROOT / "docs").glob("*.md")} - {(ROOT / "docs/pypi.md").resolve()}
    assert sorted(p.name for p in pages - linked) == []
    assert Path(ROOT / "docs/rules").resolve() in linked
