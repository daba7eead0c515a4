"""Findings, rule results and the scan report handed to reporters."""
