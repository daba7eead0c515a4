"""Reading an input file under its byte limit: exactly its bytes, whatever its size says."""

from __future__ import annotations

import os

import pytest

from hcpscan.sources import walk
from hcpscan.sources.walk import FileTooLarge, read_bounded


def test_a_file_under_the_limit_is_read_whole(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_bytes(b"kind: ConfigMap\n" * 100)
    assert read_bounded(str(path), 128 << 20) == b"kind: ConfigMap\n" * 100


def test_a_file_at_and_past_the_limit(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_bytes(b"x" * 64)
    assert read_bounded(str(path), 64) == b"x" * 64
    with pytest.raises(FileTooLarge):
        read_bounded(str(path), 63)


@pytest.mark.parametrize("limit", [1 << 20, 100])
def test_a_file_grown_since_its_size_was_read_is_read_on(tmp_path, monkeypatch, limit):
    """The read is sized by fstat; a file that grew after it (a log being written) is
    still read to its end, or refused past the limit - never cut at the old size."""
    path = tmp_path / "a.yaml"
    path.write_bytes(b"y" * 90 + b"z" * 60)
    real = os.fstat

    class Shrunk:
        def __init__(self, status: os.stat_result) -> None:
            self.st_mode = status.st_mode
            self.st_size = 90  # what the size said before the file grew

    monkeypatch.setattr(walk.os, "fstat", lambda fd: Shrunk(real(fd)))
    if limit < 150:
        with pytest.raises(FileTooLarge):
            read_bounded(str(path), limit)
    else:
        assert read_bounded(str(path), limit) == b"y" * 90 + b"z" * 60
