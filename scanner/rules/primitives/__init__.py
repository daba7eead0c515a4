"""The registry of check primitives: the only code behind the rules in rules/."""

from __future__ import annotations

from scanner.rules.primitives.base import NotEvaluable, Primitive, Violation

PRIMITIVES: dict[str, Primitive] = {}


def register(cls: type[Primitive]) -> type[Primitive]:
    PRIMITIVES[cls.name] = cls()
    return cls


def _load_builtin() -> None:
    # Importing the modules registers their primitives.
    from scanner.rules.primitives import fields, kubeconfigs, references  # noqa: F401


_load_builtin()

__all__ = ["PRIMITIVES", "NotEvaluable", "Primitive", "Violation", "register"]
