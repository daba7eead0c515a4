"""Package list only; everything else is in pyproject.toml.

``find_packages`` cannot see ``hcpscan.catalog``: it lives in the top-level
``rules/`` folder (mapped in pyproject.toml), so it is added by name.
"""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["hcpscan", "hcpscan.*"]), "hcpscan.catalog"])
