"""hcpscan: policy-as-code checks for the networking and proxy configuration of hosted control planes."""

__version__ = "0.1.0"
