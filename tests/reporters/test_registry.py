"""The reporter registry: what the CLI calls."""

from __future__ import annotations

import pytest

from hcpscan.reporters import REPORTERS, ReportOptions, render


def test_all_formats_are_registered_under_their_names():
    assert set(REPORTERS) == {"table", "concise", "json", "sarif", "junit", "markdown", "html",
                              "openreports", "policyreport", "github", "gitlab"}
    for name, reporter in REPORTERS.items():
        assert reporter.name == name
        assert reporter.extension and reporter.media_type


@pytest.mark.parametrize("name", sorted(REPORTERS))
def test_rendering_is_repeatable(name, realistic, options):
    assert render(name, realistic, options) == render(name, realistic, options)


def test_unknown_format_names_the_known_ones(realistic):
    with pytest.raises(ValueError, match="known: concise, github, gitlab, html, json, junit, markdown, openreports, "
                                         "policyreport, sarif, table"):
        render("pdf", realistic, ReportOptions())
