"""hcpscan's built-in rule catalog: data only (one YAML file per rule).

Installed, this folder is the ``hcpscan.catalog`` package, so hcpscan finds its
rules through its own package and never through a top-level name that another
distribution could own.
"""
