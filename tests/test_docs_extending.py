"""docs/extending.md's walk-through of a new rule runs as written.

Every ``<!-- file: PATH -->`` block is written to a fresh folder, and every
``<!-- run: exit N -->`` command is run there with the CLI; its exit code must be
the one the page promises. A failing case must also fire the page's rule on the
page's object, and the passing one must have checked it.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
BLOCK = re.compile(r"<!-- (file|run): ([^>]+?) -->\n```[a-z]*\n(.*?)```", re.S)


def _blocks() -> list[tuple[str, str, str]]:
    section = DOC.read_text().split("## 2.")[0]
    return BLOCK.findall(section)


def test_the_walk_through_runs_as_written(run_cli, tmp_path, monkeypatch):
    blocks = _blocks()
    files = [(where, body) for what, where, body in blocks if what == "file"]
    runs = [(where, body) for what, where, body in blocks if what == "run"]
    assert len(files) == 3 and len(runs) == 2
    for where, body in files:
        (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / where).write_text(body)
    monkeypatch.chdir(tmp_path)
    for promise, command in runs:
        argv = shlex.split(command.strip())
        assert argv[0] == "hcpscan"
        result = run_cli(*argv[1:], "--format", "json")
        assert f"exit {result.code}" == promise.strip(), (command, result.err)
        report = json.loads(result.out)
        (rule,) = report["rules"]
        assert rule["rule_id"] == "TEAM001" and rule["objects_checked"] >= 1, rule
        if result.code == 1:
            (finding,) = report["findings"]
            assert "clusters-prod/kube-apiserver" in finding["message"], finding
