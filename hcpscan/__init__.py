"""hcpscan: policy-as-code checks for the networking and proxy configuration of hosted control planes."""

__version__ = "0.1.0"

# The project's public home (pyproject's Homepage); its docs/ (rule pages under docs/rules/)
# are what messages point installed users at: they have no checkout.
HOMEPAGE = "https://github.com/hcpscan/hcpscan"
DOCS_URL = f"{HOMEPAGE}/blob/main/docs"
RULE_PAGES_URL = f"{DOCS_URL}/rules"
PERIMETER_FORMAT_URL = f"{DOCS_URL}/manual.md#perimeter-file"
FLOW_CATALOG_URL = f"{DOCS_URL}/required-flows.md#the-catalog"
