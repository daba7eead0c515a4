"""The bottom of the pipeline: what every stage may use. Diagnostics (what could not
be read, and why), the YAML parsers, and what a report may show of a value."""
