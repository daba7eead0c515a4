"""Files a scanned tree may hold that must not hang, exhaust or crash any command:
special files, links out of the tree, huge files, deep trees, names that are not UTF-8."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from hcpscan.sources.walk import LINK_OUTSIDE, NOT_REGULAR
from tests.hostile.harness import GOOD, diagnostics, hcpscan, run, run_every_command, skipped, with_good

LEAK = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: leaked-kubeconfig, namespace: home}
data: {token: s3cr3t}
"""


def test_fifos_sockets_and_links_to_devices_are_never_opened(tmp_path: Path) -> None:
    tree = with_good(tmp_path / "dump")
    os.mkfifo(tree / "pipe.yaml")  # opening it would wait for a writer forever
    os.mkfifo(tree / "pipe")
    (tree / "zero.yaml").symlink_to("/dev/zero")  # reading it never ends
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tree / "agent.sock"))
    try:
        runs = run_every_command(str(tree))
    finally:
        listener.close()
    assert skipped(runs)[NOT_REGULAR] == 4
    assert diagnostics(runs) == []


def test_a_pipe_named_on_the_command_line_is_read(tmp_path: Path) -> None:
    """`hcpscan scan <(helm template ...)` hands over a pipe: the user asked for it."""
    done = hcpscan("inventory", "/dev/stdin", "--no-progress", stdin=GOOD.encode())
    assert done.returncode == 0 and b"Deployment" in done.stdout


def test_a_fifo_nobody_writes_to_named_on_the_command_line_does_not_hang(tmp_path: Path) -> None:
    good = with_good(tmp_path / "dump")
    os.mkfifo(tmp_path / "lonely.yaml")  # opened as given, it would wait for a writer forever
    for command in ("scan", "inventory", "proxy", "connectivity"):
        done = hcpscan(command, str(good), str(tmp_path / "lonely.yaml"), "--no-progress")
        assert done.returncode in (0, 1, 2), (command, done.stderr)
        assert b"Traceback" not in done.stderr
    done = hcpscan("inventory", str(good), str(tmp_path / "lonely.yaml"), "--no-progress")
    assert b"Deployment" in done.stdout


def test_links_out_of_the_tree_are_not_read_unless_asked(tmp_path: Path) -> None:
    tree = with_good(tmp_path / "dump")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.yaml").write_text(LEAK)
    (tree / "kubeconfig.yaml").symlink_to(tmp_path / "home" / "config.yaml")
    (tree / "copy.yaml").symlink_to("good.yaml")  # inside the tree: read
    runs = run_every_command(str(tree))
    assert skipped(runs)[LINK_OUTSIDE] == 1
    for result in runs.values():
        assert "leaked-kubeconfig" not in result.out and "s3cr3t" not in result.out
    names = [o["source"]["path"] for o in runs["inventory"].json()["objects"]]
    assert sorted(Path(n).name for n in names) == ["copy.yaml", "good.yaml"]

    followed = run("inventory", str(tree), "--follow-symlinks")
    assert "leaked-kubeconfig" in followed.out


def test_files_above_the_maximum_size_are_not_read(tmp_path: Path) -> None:
    tree = with_good(tmp_path / "dump")
    (tree / "huge.yaml").write_text(GOOD.replace("good-web", "huge-web") + "#" * 4096 + "\n")
    runs = run_every_command(str(tree), "--max-file-size", "2K")
    [diagnostic] = diagnostics(runs)
    assert diagnostic["path"].endswith("huge.yaml")
    assert "larger than the maximum file size (2048 bytes)" in diagnostic["message"]
    assert "--max-file-size" in diagnostic["hint"]
    assert all(r.code != 0 for r in runs.values() if r.command != "proxy"), "unread input is exit 2"
    assert "huge-web" in run("inventory", str(tree), "--max-file-size", "1M").out


def test_standard_input_is_bounded_too() -> None:
    done = hcpscan("inventory", "-", "--no-progress", "--max-file-size", "100", stdin=GOOD.encode())
    assert done.returncode == 2 and b"larger than the maximum file size" in done.stderr


@pytest.mark.parametrize("size", ["0", "ten", "-5M"])
def test_a_bad_size_is_a_usage_error(size: str) -> None:
    done = hcpscan("inventory", ".", f"--max-file-size={size}")
    assert done.returncode == 2 and b"is not a size" in done.stderr


def test_a_tree_1500_folders_deep(tmp_path: Path) -> None:
    tree = with_good(tmp_path / "dump")
    here = os.getcwd()
    os.chdir(tree)
    try:  # relative steps: the absolute path would soon be too long for one call
        for _ in range(1500):
            os.mkdir("d")
            os.chdir("d")
        Path("deep.yaml").write_text(GOOD.replace("good-web", "deep-web"))
    finally:
        os.chdir(here)
    try:
        runs = run_every_command(str(tree))
        assert "deep-web" in runs["inventory"].out
    finally:
        _remove_deep(tree, 1500)


def _remove_deep(tree: Path, depth: int) -> None:
    """Remove the tree from its bottom up: pytest's own clean-up recurses, and fails on it."""
    here = os.getcwd()
    os.chdir(tree)
    try:
        for _ in range(depth):
            os.chdir("d")
        os.remove("deep.yaml")
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("d")
    finally:
        os.chdir(here)


def test_names_that_are_not_utf8_never_break_a_report(tmp_path: Path) -> None:
    tree = with_good(tmp_path / "dump")
    bad = os.fsencode(tree) + b"/caf\xe9.yaml"
    with open(bad, "wb") as fh:
        fh.write(GOOD.replace("good-web", "latin-web").encode())
    with open(os.fsencode(tree) + b"/bro\xffken.yaml", "wb") as fh:
        fh.write(b"kind: [\n")
    runs = run_every_command(str(tree))  # every output is decoded strictly as UTF-8
    assert "caf\ufffd.yaml" in runs["scan"].out
    assert any("bro\ufffdken.yaml" in d["path"] for d in diagnostics(runs))
    outputs = {fmt: tmp_path / f"report.{fmt}" for fmt in ("sarif", "junit", "markdown", "json")}
    done = hcpscan("scan", str(tree), "--no-progress", "--format", "table",
                   *[arg for fmt, path in outputs.items() for arg in ("--format", f"{fmt}={path}")])
    assert done.returncode in (1, 2), done.stderr
    done.stdout.decode("utf-8")
    for path in outputs.values():
        assert "caf\ufffd.yaml" in path.read_text(encoding="utf-8")


def test_a_path_that_is_not_utf8_on_the_command_line(tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path) + b"/dump\xe9"
    os.mkdir(folder)
    with open(folder + b"/good.yaml", "w") as fh:
        fh.write(GOOD)
    result = run("scan", os.fsdecode(folder))
    assert result.code == 1 and "good-web" in result.out
