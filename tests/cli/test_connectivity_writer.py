"""The listing writer: a big list is checked in one pass and written as it is, yet every
line still reads exactly as ``shown`` makes it (credentials masked, controls escaped)."""

from __future__ import annotations

import io

import pytest

from hcpscan.cli import connectivity_cmd
from hcpscan.core.redact import lines_shown_as_they_are, shown


def _per_line(lines: list[str]) -> str:
    """What the writer wrote before: each line masked and escaped on its own."""
    return "\n".join(line[:len(line) - len(line.lstrip("\t"))] + shown(line.lstrip("\t"))
                     for line in lines) + "\n"


def _written(monkeypatch: pytest.MonkeyPatch, lines: list[str]) -> str:
    out = io.StringIO()
    monkeypatch.setattr(connectivity_cmd.sys, "stdout", out)
    connectivity_cmd._write_lines(lines)
    return out.getvalue()


CLEAN = ["a/web[Deployment] => b/db[StatefulSet] : TCP 5432",
         "0.0.0.0-9.255.255.255[External] => a/web[Deployment] : All Connections",
         "Workload-to-Networks Mapping:", "a/web[Deployment]: ", "\tPrimary Network: pod-network"]
HOSTILE = [
    "a/w\x1b]52;c;eA==\x07[Pod] => b/db[Pod] : TCP 1",   # OSC 52 in a name
    "a/w\u202e[Pod] => b/db[Pod] : TCP 1",               # a bidi override
    "a/web[Pod] => b/d\tb[Pod] : TCP 1",                 # a tab inside a line
    "a/web[Pod] => b/db\nforged[Pod] : TCP 1",           # a newline inside a line
    "a/web[Pod] => http://u:hunter2@proxy[Pod] : TCP 1",  # a credential
    "\ta/x\ty",                                          # a leading tab, then one inside
]


def test_clean_lines_are_written_as_they_are(monkeypatch):
    text = "\n".join(CLEAN)
    assert lines_shown_as_they_are(text, len(CLEAN))
    assert _written(monkeypatch, CLEAN) == text + "\n" == _per_line(CLEAN)


@pytest.mark.parametrize("bad", HOSTILE)
def test_one_hostile_line_among_many_is_still_escaped(monkeypatch, bad):
    lines = CLEAN * 3 + [bad] + CLEAN
    assert not lines_shown_as_they_are("\n".join(lines), len(lines))
    written = _written(monkeypatch, lines)
    assert written == _per_line(lines)
    assert "hunter2" not in written and "\x1b" not in written and "\u202e" not in written
    assert written.count("\n") == len(lines)


def test_chunks_join_to_the_same_text(monkeypatch):
    monkeypatch.setattr(connectivity_cmd, "_CHUNK", 4)
    lines = CLEAN * 5 + [HOSTILE[0]] + CLEAN * 2
    assert _written(monkeypatch, lines) == _per_line(lines)


def test_an_empty_list_is_one_newline(monkeypatch):
    assert _written(monkeypatch, []) == "\n"
