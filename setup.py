"""Package list and the compiled part; everything else is in pyproject.toml.

``find_packages`` cannot see ``hcpscan.catalog``: it lives in the top-level
``rules/`` folder (mapped in pyproject.toml), so it is added by name.

``hcpscan.sources._rebuild`` is the rebuild of parsed trees in C (``_rebuild.c``; the
Python code it stands for is ``hcpscan/sources/fastyaml.py``'s). It is optional: where
no C compiler or Python headers are, the install goes on without it and hcpscan reads
the same results through the Python code, more slowly. ``HCPSCAN_NO_EXTENSIONS=1``
builds without it: the pure-Python wheel (``py3-none-any``) a release publishes beside
the compiled ones, which pip takes on every platform no compiled wheel was built for
(docs/image.md).

The module is stamped with the CRC-32 of the source it was built from (its ``SOURCE``):
in a checkout or an editable install, where the module built in place stays after the
source is edited or pulled, fastyaml uses it only while it matches the ``_rebuild.c``
beside it (``pip install -e .`` builds it again).
"""

import os
import zlib
from pathlib import Path

from setuptools import Extension, find_packages, setup

SOURCE = "hcpscan/sources/_rebuild.c"


def compiled() -> list[Extension]:
    """The extension, stamped; none for the pure-Python build (whose source distribution
    leaves the C source out, so a wheel built from it has none to read)."""
    if os.environ.get("HCPSCAN_NO_EXTENSIONS", "").strip() == "1":
        return []
    source = Path(__file__).resolve().parent / SOURCE
    if not source.is_file():
        return []
    stamp = zlib.crc32(source.read_bytes())
    return [Extension("hcpscan.sources._rebuild", [SOURCE], optional=True,
                      define_macros=[("HCPSCAN_REBUILD_SOURCE", f"{stamp}UL")])]


setup(
    packages=[*find_packages(include=["hcpscan", "hcpscan.*"]), "hcpscan.catalog"],
    ext_modules=compiled(),
)
