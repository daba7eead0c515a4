"""systemd unit files and drop-ins, as far as proxy settings need them.

``Environment=`` takes space-separated ``VAR=value`` assignments, each of which
may be quoted as a whole (``Environment="HTTP_PROXY=http://p:3128"``); a later
assignment of the same variable wins, as systemd does.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

# systemd's env_name_is_valid(): letters, digits and '_', not starting with a digit.
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Quotes a word processor puts in: systemd reads them as ordinary characters.
TYPOGRAPHIC_QUOTES = "\u201c\u201d\u201e\u2018\u2019\u00ab\u00bb"


@dataclass(slots=True)
class Unit:
    # section name -> line of its header
    sections: dict[str, int] = field(default_factory=dict)
    # variable -> (value, line) from [Service] Environment=
    environment: dict[str, tuple[str, int]] = field(default_factory=dict)
    environment_files: list[tuple[str, int]] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)

    def to_body(self) -> dict[str, Any]:
        return {
            "sections": sorted(self.sections),
            "environment": {k: v for k, (v, _) in self.environment.items()},
            "environmentLines": {k: line for k, (_, line) in self.environment.items()},
            "environmentFiles": [f for f, _ in self.environment_files],
        }


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join backslash continuations; keep the line number where each starts."""
    out: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        if raw.endswith("\\"):
            pending.append(raw[:-1])
            continue
        pending.append(raw)
        out.append((start, " ".join(p.strip() for p in pending)))
        pending = []
    if pending:
        out.append((start, " ".join(p.strip() for p in pending)))
    return out


def parse_unit(text: str) -> Unit:
    unit = Unit()
    section = None
    for number, line in _logical_lines(text):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1].strip()
            unit.sections.setdefault(section, number)
            continue
        if "=" not in stripped:
            continue
        key, _, value = stripped.partition("=")
        key = key.strip()
        if section != "Service":
            if key in ("Environment", "EnvironmentFile") and _misplaced(section):
                # systemd: "Assignment outside of section" / "Unknown key name ... in
                # section 'Unit'" / "Unknown section 'service'", each time "Ignoring"
                where = f"in [{section}]" if section is not None else "before any section"
                unit.problems.append((number, f"{key}={value.strip()} {where}: systemd "
                                      "ignores it (it is read only under [Service], spelt so)"))
            continue
        if key == "Environment":
            _assignments(value.strip(), number, unit)
        elif key == "EnvironmentFile":
            unit.environment_files.append((value.strip().lstrip("-"), number))
    return unit


def _misplaced(section: str | None) -> bool:
    """A section where a service's Environment= is surely lost: none yet, [Unit], [Install],
    or [Service] spelt in another case (section names are case-sensitive)."""
    return section is None or section in ("Unit", "Install") or (
        section.lower() == "service" and section != "Service")


def _assignments(value: str, number: int, unit: Unit) -> None:
    if not value:  # "Environment=" resets the list
        unit.environment.clear()
        return
    try:
        words = shlex.split(value, posix=True)
    except ValueError as exc:
        unit.problems.append((number, f"cannot parse Environment= line: {exc}"
                              + _typographic(value)))
        return
    for word in words:
        name, sep, val = word.partition("=")
        if not sep or not name:
            unit.problems.append((number, f"Environment= assignment without '=': {word!r}"
                                  + _typographic(word)))
            continue
        if not _ENV_NAME.match(name):
            # systemd logs "Invalid environment assignment, ignoring" and drops it
            unit.problems.append((number, f"Environment= assignment {word!r} has no valid "
                                  f"variable name ({name!r}): systemd ignores it"
                                  + _typographic(word)))
            continue
        unit.environment[name] = (val, number)


def _typographic(text: str) -> str:
    found = sorted({c for c in text if c in TYPOGRAPHIC_QUOTES})
    if not found:
        return ""
    return (f"; {' '.join(found)} {'is a typographic quote' if len(found) == 1 else 'are typographic quotes'}"
            ", which systemd does not read as quoting (use straight \" quotes)")


def parse_environment_file(text: str) -> tuple[dict[str, tuple[str, int]], list[tuple[int, str]]]:
    """An environment file (``/etc/environment``, systemd ``EnvironmentFile=``): ``NAME=value``
    lines, optionally ``export``-prefixed and quoted; ``#`` comments. (variables, problems)"""
    env: dict[str, tuple[str, int]] = {}
    problems: list[tuple[int, str]] = []
    for number, line in _logical_lines(text):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("export "):
            stripped = stripped[len("export "):].strip()
        name, sep, value = stripped.partition("=")
        name = name.strip()
        if not sep or not _ENV_NAME.match(name):
            problems.append((number, f"{stripped!r} is no NAME=value assignment"
                             + _typographic(stripped)))
            continue
        try:
            words = shlex.split(value, posix=True) if value.strip() else [""]
        except ValueError as exc:
            problems.append((number, f"cannot read the value of {name}: {exc}" + _typographic(value)))
            continue
        env[name] = (" ".join(words), number)
    return env, problems
