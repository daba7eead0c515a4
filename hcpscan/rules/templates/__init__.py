"""The registry of check templates: the only code behind the rules in rules/.

Every module of this package is imported once; its ``@register``-decorated
classes become available to rule files by their ``name``.
"""

from __future__ import annotations

import importlib
import pkgutil

from hcpscan.rules.templates.base import NotApplicable, NotEvaluable, Template, Violation

TEMPLATES: dict[str, Template] = {}


def register(cls: type[Template]) -> type[Template]:
    if cls.name in TEMPLATES:
        raise RuntimeError(f"check template {cls.name!r} is registered twice")
    TEMPLATES[cls.name] = cls()
    return cls


def _load_builtin() -> None:
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            importlib.import_module(f"{__name__}.{module.name}")


_load_builtin()

__all__ = ["TEMPLATES", "NotApplicable", "NotEvaluable", "Template", "Violation",
           "register"]
