"""`hcpscan fix` over hostile trees: it writes files, so every bad input must end in a
clear message and a documented exit code, with the good files beside it still fixed,
and nothing written outside what the user named."""

from __future__ import annotations

import os
from pathlib import Path

from hcpscan.fixes.diffs import opcodes, unified
from tests.hostile.harness import GOOD, hcpscan

FIXED = "secretKeyRef"  # PRX008's fix of the good Deployment's plain-text proxy password


def fix(*args: str) -> tuple[int, str]:
    done = hcpscan("fix", *args, "--no-progress", "--no-config", "--select", "PRX008")
    err = done.stderr.decode("utf-8")
    assert "Traceback" not in err and "internal error" not in err, err
    return done.returncode, err


def test_a_windows_checkout_keeps_its_byte_order_mark_and_crlf_line_ends(tmp_path: Path) -> None:
    """A BOM shifted the fixer's positions by one (the file 'did not parse' and was left to
    be fixed by hand); CRLF files were rewritten with LF line ends, every line changed,
    and their diff did not apply to the file."""
    tree = tmp_path / "gitops"
    tree.mkdir()
    original = ("\ufeff" + GOOD).replace("\n", "\r\n").encode("utf-8")
    (tree / "web.yaml").write_bytes(original)
    code, err = fix(str(tree), "--diff", str(tmp_path / "fix.patch"))
    assert code == 0, err
    patch = (tmp_path / "fix.patch").read_bytes()
    assert b"\r\n-        - {name: HTTPS_PROXY" in patch and b"+---\r\n" in patch
    code, err = fix(str(tree))
    assert code == 0, err
    text = (tree / "web.yaml").read_bytes()
    assert text.startswith(b"\xef\xbb\xbfapiVersion: apps/v1\r\n") and FIXED.encode() in text
    assert text.count(b"\n") == text.count(b"\r\n")  # no LF-only line added
    assert original.split(b"env:")[0] == text.split(b"env:")[0]  # the unchanged head, byte for byte


def test_out_inside_the_scanned_folder_is_refused(tmp_path: Path) -> None:
    """The patched copies would be read as input by the next scan (each object twice)."""
    tree = tmp_path / "gitops"
    tree.mkdir()
    (tree / "web.yaml").write_text(GOOD)
    code, err = fix(str(tree), "--out", str(tree / "sub" / ".." / "fixed"))
    assert code == 2 and "inside the scanned folder" in err and "--out" in err, err
    assert not (tree / "fixed").exists() and FIXED not in (tree / "web.yaml").read_text()
    code, err = fix(str(tree), "--out", str(tmp_path / "fixed"))
    assert code == 0, err
    assert FIXED in (tmp_path / "fixed" / "web.yaml").read_text()


def test_links_out_of_the_tree_and_dotdot_paths_are_never_edited(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "theirs.yaml").write_text(GOOD.replace("good-web", "theirs"))
    tree = tmp_path / "gitops"
    tree.mkdir()
    (tree / "web.yaml").write_text(GOOD)
    (tree / "link.yaml").symlink_to(outside / "theirs.yaml")
    code, err = fix(str(tree / ".." / "gitops"))
    assert code == 0, err
    assert FIXED in (tree / "web.yaml").read_text()
    assert (outside / "theirs.yaml").read_text() == GOOD.replace("good-web", "theirs")
    assert os.path.islink(tree / "link.yaml")


def test_an_alias_bomb_beside_a_good_file_is_said_and_fails_the_run(tmp_path: Path) -> None:
    """The good file is fixed; the bomb is named with file and line, and the run exits 2
    as `scan` does (what the bomb held was neither checked nor fixed)."""
    tree = tmp_path / "gitops"
    tree.mkdir()
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    (tree / "bomb.yaml").write_text("\n".join(lines) + "\n")
    (tree / "web.yaml").write_text(GOOD)
    code, err = fix(str(tree))
    assert code == 2, err
    assert "bomb.yaml:" in err and "nodes" in err and "--max-nodes" in err, err
    assert FIXED in (tree / "web.yaml").read_text()


def test_a_fix_near_the_end_of_a_huge_file_is_a_small_diff(tmp_path: Path) -> None:
    """A Secret added after a document followed by 150,000 alike comment lines: difflib's
    matcher took minutes over the changed middle; the diff now follows the edits."""
    tree = tmp_path / "gitops"
    tree.mkdir()
    (tree / "web.yaml").write_text(GOOD + "# " + "x" * 60 + "\n" * 1 + ("# " + "x" * 60 + "\n") * 150_000)
    code, err = fix(str(tree), "--diff", str(tmp_path / "fix.patch"))
    assert code == 0, err
    patch = (tmp_path / "fix.patch").read_text()
    assert patch.count("\n@@ ") + patch.startswith("@@") == 2  # the value, and the Secret at the end
    assert len(patch.splitlines()) < 40


def test_the_diff_is_a_shortest_edit_of_alike_lines() -> None:
    a = ["k: v\n"] + ["# x\n"] * 5000
    b = ["k: w\n"] + ["# x\n"] * 5000 + ["---\n", "kind: Secret\n"]
    assert opcodes(a, b) == [("replace", 0, 1, 0, 1), ("equal", 1, 5001, 1, 5001),
                             ("insert", 5001, 5001, 5001, 5003)]
    text = unified(a, b, "a/f", "b/f")
    assert text.count("@@ ") == 2 and "+kind: Secret\n" in text and "-k: v\n+k: w\n" in text


def test_a_file_in_another_encoding_is_named_and_left_alone(tmp_path: Path) -> None:
    tree = tmp_path / "gitops"
    tree.mkdir()
    latin = ("# café\n" + GOOD.replace("good-web", "latin")).encode("latin-1")
    (tree / "latin.yaml").write_bytes(latin)
    (tree / "web.yaml").write_text(GOOD)
    code, err = fix(str(tree))
    assert code == 2 and "latin.yaml:1: not UTF-8 text" in err and "save the file as UTF-8" in err, err
    assert (tree / "latin.yaml").read_bytes() == latin and FIXED in (tree / "web.yaml").read_text()
