"""An offline scan never imports the kubernetes client (the `live` extra)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import FIXTURES, ROOT

PROGRAM = """
import io, sys
from hcpscan.cli.main import main
sys.stdout = io.StringIO()
code = main(["scan", sys.argv[1], "--no-progress", "--format", "json"])
sys.stdout = sys.__stdout__
print(code, sorted(m for m in sys.modules if m == "kubernetes" or m.startswith("kubernetes.")))
"""


def test_scan_of_a_dump_does_not_import_the_kubernetes_client():
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(FIXTURES / "example")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(None, 1) == ["1", "[]\n"]
