"""The registry of check primitives: the only code behind the rules in rules/.

Every module of this package is imported once; its ``@register``-decorated
classes become available to rule files by their ``name``.
"""

from __future__ import annotations

import importlib
import pkgutil

from hcpscan.rules.primitives.base import NotApplicable, NotEvaluable, Primitive, Violation

PRIMITIVES: dict[str, Primitive] = {}


def register(cls: type[Primitive]) -> type[Primitive]:
    if cls.name in PRIMITIVES:
        raise RuntimeError(f"check primitive {cls.name!r} is registered twice")
    PRIMITIVES[cls.name] = cls()
    return cls


def _load_builtin() -> None:
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            importlib.import_module(f"{__name__}.{module.name}")


_load_builtin()

__all__ = ["PRIMITIVES", "NotApplicable", "NotEvaluable", "Primitive", "Violation", "register"]
