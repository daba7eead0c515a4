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
"""

import os

from setuptools import Extension, find_packages, setup

compiled = [Extension("hcpscan.sources._rebuild", ["hcpscan/sources/_rebuild.c"], optional=True)]

setup(
    packages=[*find_packages(include=["hcpscan", "hcpscan.*"]), "hcpscan.catalog"],
    ext_modules=[] if os.environ.get("HCPSCAN_NO_EXTENSIONS", "").strip() == "1" else compiled,
)
