"""What a check template is: parameters (validated by a JSON Schema) and a check.

A rule file instantiates one template with its params (``check: {template: NAME,
params: {...}}``). Each template declares what a user needs to write a rule on
it without reading its code: the kinds it can judge, its parameters (with
descriptions), the kinds it reads as a function of those parameters (so the
loader keeps them and a live scan lists them), and the fields it gives a rule's
message.

A template looks at one subject object and yields outcomes: a ``Violation``
(the rule fails there, with the offending field and evidence),
``NotEvaluable`` (the data needed is redacted, absent, or must come from the
user) or ``NotApplicable`` (the subject holds nothing the check is about: a
Deployment that sets no proxy variable for a proxy check). Yielding nothing
means the subject was checked and passes; a rule passes only when at least one
subject was checked.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from hcpscan.findings.fix import NoFix, Remedy
from hcpscan.inventory.objects import K8sObject

if TYPE_CHECKING:
    from hcpscan.rules.context import Context


@dataclass(slots=True)
class Violation:
    field: str
    values: dict[str, Any] = dataclasses.field(default_factory=dict)  # fill the rule's message template
    evidence: list[str] = dataclasses.field(default_factory=list)
    subject: K8sObject | None = None  # report on another object than the rule's subject
    # Structured facts a fix can be computed from (e.g. a flow's missing connections,
    # the blocking object, the subject workload); reported as the finding's ``facts``.
    facts: dict[str, Any] = dataclasses.field(default_factory=dict)
    # The minimal change that clears it (hcpscan.findings.fix), or why none is safe.
    remedy: Remedy | NoFix | None = None
    # Exact values a fix needs (missing noProxy entries, the CA a consumer lacks and where it
    # loads its bundle, the consumer's object and field), as JSON-ready data, not only text.
    data: dict[str, Any] = dataclasses.field(default_factory=dict)
    # When ``subject`` is another reader's place for one root cause (a value written into
    # several workloads, reported once): the object the problem is really in, whose own
    # suppressions (annotation, config exemption) decide whether it is reported.
    reader: K8sObject | None = None
    reader_field: str = ""  # where the value is in ``reader``
    # One value many consumers read (a noProxy string rendered into ten workloads, seed 003's
    # cluster-values ConfigMap read with its Secret): the problem said of the value itself
    # ("noProxy '...' (where) misses ..."), and the consumers that read it. When the finding
    # ends up with more than one reader its message is the lead, then every reader.
    lead: str = ""
    readers: list[str] = dataclasses.field(default_factory=list)


@dataclass(slots=True)
class NotEvaluable:
    reason: str


@dataclass(slots=True)
class NotApplicable:
    reason: str


Outcome = Violation | NotEvaluable | NotApplicable


@dataclass(slots=True)
class Settled:
    """A rule's subjects as ``check`` answers them, told apart in bulk (``Template.settle``):
    ``rest``, those ``check`` must still be asked of (in the subjects' order); of the others,
    the reasons of their ``NotApplicable`` outcomes (each counted once per outcome) and how
    many give no outcome at all (checked: nothing wrong). Those others are exactly the
    subjects whose ``check`` gives nothing else and cannot raise."""

    rest: list[K8sObject]
    inapplicable: Counter[str] = dataclasses.field(default_factory=Counter)
    passed: int = 0


class Template:
    name: ClassVar[str]
    description: ClassVar[str]
    params_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    # Kinds the check reads besides the rule's subjects (so dumps are not
    # pruned of them and live scans list them); see reads_for.
    reads: ClassVar[tuple[str, ...]] = ()
    # Words of API groups whose every kind the check reads too (unknown CRDs).
    reads_groups: ClassVar[tuple[str, ...]] = ()
    # Kinds a rule on this template may apply to; empty: any kind.
    subject_kinds: ClassVar[tuple[str, ...]] = ()
    # Placeholders the check fills in a rule's message, besides kind/namespace/name/object/cluster.
    message_fields: ClassVar[dict[str, str]] = {}
    # The shared analyses the check may read (``Context.analysis`` names: the reachability
    # graph, the flow results, the proxy model ...); None: any of them. A scan drops an
    # analysis once no rule left to run may read it (``engine.evaluate``); one read after
    # all is built again, with the same answers, only slower.
    analyses: ClassVar[frozenset[str] | None] = None

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        """The kinds a rule with these params reads besides its subjects."""
        return self.reads

    def reads_whole(self, params: dict[str, Any], subjects: tuple[str, ...]) -> tuple[str, ...]:
        """The kinds of which a rule with these params, on these subject kinds, may read any
        field; of every other kind it reads only what ``inventory/kept.KEPT`` keeps, so a
        scan may prune those bodies. By default every kind it reads: a template that reads
        fields a user names (a JSONPath, a CEL expression) must keep them whole."""
        return (*subjects, *self.reads_for(params))

    def reads_served(self, group: str, kind: str) -> bool:
        """Whether a live scan lists this served resource for the check besides ``reads``
        (a kind it cannot name in advance: an unknown policy CRD)."""
        return any(word in group for word in self.reads_groups)

    def problems(self, params: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
        """Every way ``params`` break the template's schema: (field path, message)."""
        import jsonschema  # only when a rule is validated: start-up stays light

        validator = jsonschema.Draft202012Validator(self.params_schema)
        return [(tuple(e.absolute_path), e.message)
                for e in sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path))]

    def validate(self, params: dict[str, Any]) -> tuple[tuple[Any, ...], str] | None:
        found = self.problems(params)
        return found[0] if found else None

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        raise NotImplementedError

    def settle(self, ctx: Context, subjects: list[K8sObject], params: dict[str, Any]
               ) -> Settled | None:
        """The subjects ``check`` would answer with ``NotApplicable`` outcomes only (or none at
        all), told apart without asking it of each: a fleet's proxy rules have hundreds of
        thousands of subjects, most holding nothing they judge (a Pod its controller
        stands for, a Deployment that sets no proxy). None: ``check`` is asked of every
        subject. A template's answer is held to its ``check`` by tests
        (tests/rules/test_settled_subjects.py)."""
        return None

    def caveat(self, ctx: Context) -> str:
        """What the rule's answer leaves out, once its checks ran ('' for nothing): the
        engine adds it to the rule's result and to each finding's evidence."""
        return ""




def conditions_param(names: Iterable[str], description: str) -> dict[str, Any]:
    """The schema of a template's ``conditions``: a non-empty set of the names it knows."""
    return {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"enum": list(names)},
            "description": description}


def roles_param(roles: Iterable[str], description: str) -> dict[str, Any]:
    """The schema of a list of consumer roles (``consumers: [container, kubeconfig]``)."""
    return {"type": "array", "items": {"enum": sorted(roles)}, "description": description}
