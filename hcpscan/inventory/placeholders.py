"""Template variables left unrendered: clusterctl's (envsubst) ``${VAR}`` placeholders.

A Cluster API flavour template (``cluster-template*.yaml``) is rendered by
``clusterctl generate cluster``, which substitutes each ``${VAR}`` with the
variable's value the way envsubst does: ``${VAR}``, ``$VAR``, and the bash-like
forms with a default or a change (``${VAR:=default}``, ``${VAR:-default}``,
``${VAR=default}``, ``${VAR-default}``, ``${VAR:+alt}``, ``${VAR?message}``,
``${#VAR}``, ``${VAR^^}``, ``${VAR,,}``, ``${VAR:1:3}``, ``${VAR#pattern}``,
``${VAR%%pattern}``, ``${VAR/pattern/repl}``, ``${VAR/#pattern/repl}`` ...). The
value substituted may be a whole YAML mapping or list (``data: ${CNI_RESOURCES}``),
so a field whose *whole* value is one placeholder says nothing of the field's type
until the template is rendered. A string field holding ``${`` among other text is
just a string, and read as such.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from hcpscan.inventory.fieldpath import Step

_NAME = re.compile(r"#?([A-Za-z_][A-Za-z0-9_]*)")
_PLAIN = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_OPERATORS = frozenset("-=+?:#%/^,")  # what may follow the name inside the braces



def render_command(path: str) -> str:
    """The command that renders the template at ``path`` (its variables set in the
    environment or clusterctl's configuration) and scans the result."""
    return (f"clusterctl generate cluster NAME --from {shlex.quote(path)} > cluster.yaml && "
            "hcpscan scan cluster.yaml")


@dataclass(frozen=True, slots=True)
class Unrendered:
    """A field of an object whose whole value is a template variable."""

    path: tuple[Step, ...]
    text: str  # as written, e.g. ${CNI_RESOURCES}
    variable: str  # e.g. CNI_RESOURCES


def template_variable(value: object) -> str | None:
    """The variable a value stands for when the whole value is one envsubst placeholder
    (``${VAR...}`` with balanced braces, or ``$VAR``); None for anything else."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    plain = _PLAIN.fullmatch(text)
    if plain:
        return plain.group(1)
    if not text.startswith("${") or not text.endswith("}"):
        return None
    name = _NAME.match(text, 2)
    if name is None:
        return None
    rest = name.end()
    if text[rest] != "}" and text[rest] not in _OPERATORS:
        return None
    depth = 0
    for index in range(1, len(text)):  # the braces balance, the first closing at the end
        if text[index] == "{" and text[index - 1] == "$":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return name.group(1) if index == len(text) - 1 else None
    return None


def placeholders_in(text: str) -> list[str]:
    """The variables of every braced envsubst placeholder (``${VAR}``, ``${VAR:-default}``
    ...) anywhere in ``text``, in order: a value holding one is not rendered yet."""
    out: list[str] = []
    start = text.find("${")
    while start >= 0:
        name = _NAME.match(text, start + 2)
        if name is not None and name.end() < len(text) and (
                text[name.end()] == "}" or text[name.end()] in _OPERATORS) \
                and "}" in text[name.end():]:
            if name.group(1) not in out:
                out.append(name.group(1))
        start = text.find("${", start + 2)
    return out
