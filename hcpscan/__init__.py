"""hcpscan: policy-as-code checks for the networking and proxy configuration of hosted control planes."""

__version__ = "0.1.0"

# The project's public home (pyproject's Homepage); rule pages live under docs/rules/ there.
HOMEPAGE = "https://github.com/hcpscan/hcpscan"
RULE_PAGES_URL = f"{HOMEPAGE}/blob/main/docs/rules"
