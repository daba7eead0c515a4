"""What a check primitive is: parameters (validated by a JSON Schema) and a check.

A primitive looks at one subject object and yields outcomes: a ``Violation``
(the rule fails there, with the offending field and evidence),
``NotEvaluable`` (the data needed is redacted, absent, or must come from the
user) or ``NotApplicable`` (the subject holds nothing the check is about: a
Deployment that sets no proxy variable for a proxy check). Yielding nothing
means the subject was checked and passes; a rule passes only when at least one
subject was checked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import jsonschema

from hcpscan.inventory.objects import K8sObject

if TYPE_CHECKING:
    from hcpscan.rules.context import Context


@dataclass(slots=True)
class Violation:
    field: str
    values: dict[str, Any] = field(default_factory=dict)  # fill the rule's message template
    evidence: list[str] = field(default_factory=list)
    subject: K8sObject | None = None  # report on another object than the rule's subject


@dataclass(slots=True)
class NotEvaluable:
    reason: str


@dataclass(slots=True)
class NotApplicable:
    reason: str


Outcome = Violation | NotEvaluable | NotApplicable


class Primitive:
    name: ClassVar[str]
    description: ClassVar[str]
    params_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    # Kinds the check reads besides the rule's subjects (so dumps are not
    # pruned of them and live scans list them).
    reads: ClassVar[tuple[str, ...]] = ()

    def validate(self, params: dict[str, Any]) -> tuple[tuple[Any, ...], str] | None:
        validator = jsonschema.Draft202012Validator(self.params_schema)
        for error in sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path)):
            return tuple(error.absolute_path), error.message
        return None

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        raise NotImplementedError
