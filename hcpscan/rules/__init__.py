"""Declarative rules: YAML files evaluated by a small set of check templates."""
