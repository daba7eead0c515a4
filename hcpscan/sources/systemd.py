"""systemd unit files and drop-ins, as far as proxy settings need them.

``Environment=`` takes space-separated ``VAR=value`` assignments, each of which
may be quoted as a whole (``Environment="HTTP_PROXY=http://p:3128"``); a later
assignment of the same variable wins, as systemd does. Words are split as
systemd's ``extract_first_word(EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE)`` splits them
(``config_parse_environ``): only ASCII ``"`` and ``'`` quote, C escapes are
unescaped, an unclosed quote or a bad escape ends the line (the words before it
are kept), and a word that is no ``NAME=value`` with a valid name is ignored.

Each word then goes through systemd's specifier expansion (``unit_env_printf``, the table of
src/core/unit-printf.c): ``%%`` is a literal ``%``, a ``%`` at the very end stays itself, the
unit-name specifiers (``%n %N %p %P %i %I %j %J``) are resolved from the unit's name when it
is known, the host-dependent ones (host name, machine ID, directories, user ...) make the
value unknown, and any other ``%x`` makes systemd log "Failed to resolve specifiers" and drop
the whole assignment. So a literal ``%`` in a drop-in (a percent-encoded password) is ``%%``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# systemd's env_name_is_valid(): letters, digits and '_', not starting with a digit.
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Quotes a word processor puts in: systemd reads them as ordinary characters.
TYPOGRAPHIC_QUOTES = "\u201c\u201d\u201e\u2018\u2019\u00ab\u00bb"
# Search path of system units, in order of precedence (systemd.unit(5), "System Unit Search
# Path"; the control/transient/generator directories are not written by configuration).
UNIT_ROOTS = ("etc/systemd/system/", "run/systemd/system/", "usr/local/lib/systemd/system/",
              "usr/lib/systemd/system/", "lib/systemd/system/")
UNIT_ROOT = re.compile(r"(?:^|/)(" + "|".join(re.escape(r) for r in UNIT_ROOTS) + ")")


def unit_relative(shown: str, relative: str) -> str:
    """A drop-in's path from its unit directory's root (``etc/systemd/system/...``): the
    path relative to the scanned folder, or, when that lost the systemd directories (a file
    or its drop-in directory scanned by itself), the tail of the path the user gave."""
    if UNIT_ROOT.search(relative) is not None:
        return relative
    shown = shown.replace("\\", "/")
    found = UNIT_ROOT.search(shown)
    return shown[found.start(1):] if found is not None else relative


# An assignment of a proxy URL variable, in a problem's text: the line meant to set a proxy.
_PROXY_ASSIGNMENT = re.compile(r"(?<![A-Za-z0-9_])https?_proxy=", re.IGNORECASE)


def tries_proxy(problem: str) -> bool:
    """Whether an ignored line (a ``Unit.problems`` text) meant to set HTTP(S)_PROXY."""
    return _PROXY_ASSIGNMENT.search(problem) is not None


# unit_full_printf's table (src/core/unit-printf.c): resolved from the unit's name ...
NAME_SPECIFIERS = frozenset("nNpPiIjJ")
# ... and from the host, its user, its directories or the fragment's path: unknown here
HOST_SPECIFIERS = frozenset("fyYcrRCdDELStTVhsaAbBHlqmMovwWgGuU")


class Unresolved(str):
    """A word whose value depends on the host (a host-dependent specifier): why."""


class Dropped(str):
    """A word systemd drops for an unknown specifier: why."""


def expand_specifiers(word: str, unit: str = "") -> str | Unresolved | Dropped:
    """``word`` as systemd's specifier_printf expands it for ``unit`` ('' = not known)."""
    out: list[str] = []
    unresolved = ""
    i = 0
    while i < len(word):
        c = word[i]
        if c != "%" or i + 1 == len(word):  # a stray '%' at the end stays itself
            out.append(c)
            i += 1
            continue
        spec = word[i + 1]
        i += 2
        if spec == "%":
            out.append("%")
        elif spec in NAME_SPECIFIERS and unit and "\\" not in unit:
            out.append(_name_specifier(spec, unit))
        elif spec in NAME_SPECIFIERS or spec in HOST_SPECIFIERS:
            unresolved = unresolved or (f"%{spec} is " + (
                "the unit's name, not known here" if spec in NAME_SPECIFIERS
                else "resolved on the node by systemd (host, user or directory)"))
        else:
            return Dropped(f"%{spec} is no systemd specifier: systemd logs \"Failed to resolve "
                           "specifiers\" and ignores the assignment (write a literal '%' as "
                           "'%%')")
    return Unresolved(unresolved) if unresolved else "".join(out)


def _name_specifier(spec: str, unit: str) -> str:
    name = unit.rpartition(".")[0] or unit  # %N: without the type suffix
    prefix, _, instance = name.partition("@")
    return {"n": unit, "N": name, "p": prefix, "P": prefix, "i": instance, "I": instance,
            "j": prefix.rpartition("-")[2], "J": prefix.rpartition("-")[2]}[spec]


def dropin_unit(path: str) -> str:
    """The one unit a drop-in's directory names (``containerd.service`` for
    ``.../containerd.service.d/x.conf``), '' for a type, prefix or template directory."""
    parts = path.replace("\\", "/").rstrip("/").split("/")
    directory = parts[-2] if len(parts) >= 2 else ""
    name = directory[:-2] if directory.endswith(".d") else ""
    stem, _, kind = name.rpartition(".")
    if not stem or not kind or stem.endswith(("-", "@")):
        return ""
    return name


@dataclass(slots=True)
class Unit:
    # section name -> line of its header
    sections: dict[str, int] = field(default_factory=dict)
    # variable -> (value, line) from [Service] Environment=
    environment: dict[str, tuple[str, int]] = field(default_factory=dict)
    # EnvironmentFile= paths in order, with their line and whether '-' made them optional
    environment_files: list[tuple[str, int, bool]] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    # an empty ``Environment=`` was read: what earlier files of the unit assigned is dropped
    resets: bool = False
    # variable -> why its value is known only on the node (a host-dependent specifier); its
    # ``environment`` entry keeps the value as written
    unknown: dict[str, str] = field(default_factory=dict)
    # an empty ``EnvironmentFile=`` was read: the files earlier files of the unit named are dropped
    files_reset: bool = False

    def to_body(self) -> dict[str, Any]:
        return {
            "sections": sorted(self.sections),
            "environment": {k: v for k, (v, _) in self.environment.items()},
            "environmentLines": {k: line for k, (_, line) in self.environment.items()},
            "environmentFiles": [f for f, _, _ in self.environment_files],
            **({"environmentFilesOptional": [f for f, _, optional in self.environment_files
                                             if optional]}
               if any(optional for _, _, optional in self.environment_files) else {}),
            **({"environmentFilesReset": True} if self.files_reset else {}),
            **({"environmentReset": True} if self.resets else {}),
            **({"environmentUnknown": dict(self.unknown)} if self.unknown else {}),
            **({"ignoredLines": [[line, why] for line, why in self.problems]}
               if self.problems else {}),
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


def parse_unit(text: str, name: str = "") -> Unit:
    """A unit file or drop-in; ``name``: the unit it belongs to, for its name specifiers."""
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
            _assignments(value.strip(), number, unit, name)
        elif key == "EnvironmentFile":
            _environment_file(value.strip(), number, unit)
    return unit


def _environment_file(value: str, number: int, unit: Unit) -> None:
    """``EnvironmentFile=[-]PATH`` (systemd.exec(5)): '-' means a missing file is no error;
    an empty value drops the files named before it."""
    if not value:
        unit.environment_files.clear()
        unit.files_reset = True
        return
    optional = value.startswith("-")
    unit.environment_files.append((value[1:].strip() if optional else value, number, optional))


def _misplaced(section: str | None) -> bool:
    """A section where a service's Environment= is surely lost: none yet, [Unit], [Install],
    or [Service] spelt in another case (section names are case-sensitive)."""
    return section is None or section in ("Unit", "Install") or (
        section.lower() == "service" and section != "Service")


def _assignments(value: str, number: int, unit: Unit, name: str = "") -> None:
    if not value:  # "Environment=" resets the list
        unit.environment.clear()
        unit.unknown.clear()
        unit.resets = True
        return
    words = environment_words(value)
    for word in words:
        if isinstance(word, _Stop):
            # systemd: "Invalid syntax, ignoring: <value>" - the words before stay assigned
            unit.problems.append((number, f"Environment={value}: {word.why}; systemd ignores the "
                                  "line from there" + _typographic(value)))
            return
        expanded = expand_specifiers(word, name)
        if isinstance(expanded, Dropped):
            unit.problems.append((number, f"Environment= assignment {word!r}: {expanded}"))
            continue
        unknown = str(expanded) if isinstance(expanded, Unresolved) else ""
        if not unknown:
            word = str(expanded)
        var, sep, val = word.partition("=")
        if not sep or not var:
            unit.problems.append((number, f"Environment= assignment without '=': {word!r}"
                                  + _typographic(word)))
            continue
        if not _ENV_NAME.match(var):
            # systemd logs "Invalid environment assignment, ignoring" and drops it
            unit.problems.append((number, f"Environment= assignment {word!r} has no valid "
                                  f"variable name ({var!r}): systemd ignores it"
                                  + _typographic(word)))
            continue
        unit.environment[var] = (val, number)
        if unknown:
            unit.unknown[var] = unknown
        else:
            unit.unknown.pop(var, None)


@dataclass(frozen=True, slots=True)
class _Stop:
    """Where systemd's word splitting fails: the rest of the line is ignored."""

    why: str


_SEPARATORS = " \t\n\r"
_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                   "v": "\v", "\\": "\\", '"': '"', "'": "'", "s": " "}
_HEX = frozenset("0123456789abcdefABCDEF")


def environment_words(value: str) -> Iterator[str | _Stop]:
    """The words of an ``Environment=`` value as systemd splits them; a ``_Stop`` (last)
    where it gives up on the line."""
    i, n = 0, len(value)
    while True:
        while i < n and value[i] in _SEPARATORS:
            i += 1
        if i >= n:
            return
        word: list[str] = []
        quote = ""
        while i < n:
            c = value[i]
            if c == "\\":
                escaped = _unescape(value, i + 1)
                if isinstance(escaped, _Stop):
                    yield escaped
                    return
                text, i = escaped
                word.append(text)
            elif quote:
                if c == quote:
                    quote = ""
                else:
                    word.append(c)
                i += 1
            elif c in "\"'":  # only ASCII quotes quote; typographic ones are characters
                quote = c
                i += 1
            elif c in _SEPARATORS:
                break
            else:
                word.append(c)
                i += 1
        if quote:
            yield _Stop(f"the quote {quote} is never closed")
            return
        yield "".join(word)


def _unescape(value: str, i: int) -> tuple[str, int] | _Stop:
    """systemd's ``cunescape_one`` at ``value[i]`` (after a backslash): the text and where
    the word goes on."""
    if i >= len(value):
        return _Stop("it ends in a backslash")
    c = value[i]
    if c in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[c], i + 1
    digits = {"x": 2, "u": 4, "U": 8}.get(c)
    if digits is not None:
        code = value[i + 1:i + 1 + digits]
        number = int(code, 16) if len(code) == digits and set(code) <= _HEX else 0
        # NUL is refused; \U also refuses what is no Unicode code point
        if number and (c != "U" or (number <= 0x10FFFF and not 0xD800 <= number <= 0xDFFF)):
            return chr(number), i + 1 + digits
        return _Stop(f"\\{c}{code} is no valid escape")
    if c in "01234567":
        code = value[i:i + 3]
        if len(code) == 3 and set(code) <= set("01234567") and 0 < int(code, 8) <= 255:
            return chr(int(code, 8)), i + 3
        return _Stop(f"\\{code} is no valid octal escape")
    return _Stop(f"\\{c} is no escape systemd knows (write \\\\ for a backslash)")


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


# Scripts a login shell sources (bash(1) INVOCATION; Debian's /etc/bash.bashrc, Red Hat's
# /etc/bashrc): what they export reaches the shells of people logged in, never a systemd
# service (a service's environment is its unit's Environment=/EnvironmentFile=).
LOGIN_SCRIPTS = ("/etc/profile", "/etc/bash.bashrc", "/etc/bashrc")
LOGIN_SCRIPT_DIR = "/etc/profile.d/"
_SHELL_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_SHELL_ASSIGNMENT = re.compile(rf"^({_SHELL_NAME})=(.*)$", re.DOTALL)
_SHELL_REFERENCE = re.compile(rf"\$(?:\{{({_SHELL_NAME})\}}|({_SHELL_NAME}))")


def is_login_script(path: str) -> bool:
    """``/etc/profile``, ``/etc/profile.d/*.sh``, ``/etc/bash.bashrc`` or ``/etc/bashrc``."""
    path = path.strip()
    return path in LOGIN_SCRIPTS or (path.startswith(LOGIN_SCRIPT_DIR) and path.endswith(".sh")
                                     and "/" not in path[len(LOGIN_SCRIPT_DIR):])


def parse_shell_exports(text: str) -> tuple[dict[str, tuple[str, int]], list[tuple[int, str]]]:
    """The variables a login script exports: ``export A=1 B="$A"``, or ``A=1`` then
    ``export A``; ``$A``/``${A}`` of variables the script set before are expanded (not inside
    single quotes). Lines of other commands are not run. (variables, problems)"""
    assigned: dict[str, tuple[str, int]] = {}
    exported: set[str] = set()
    problems: list[tuple[int, str]] = []
    for number, line in _logical_lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        export = stripped.startswith("export ")
        rest = stripped[len("export "):] if export else stripped
        try:
            words = shlex.split(_expanded(rest, assigned), comments=True, posix=True)
        except ValueError as exc:
            if "PROXY" in rest.upper():
                problems.append((number, f"cannot read {stripped!r}: {exc}"))
            continue
        if not export and not (len(words) == 1 and _SHELL_ASSIGNMENT.match(words[0])):
            continue  # another command, or assignments that only prefix one
        for word in words:
            found = _SHELL_ASSIGNMENT.match(word)
            if found:
                assigned[found.group(1)] = (found.group(2), number)
                if export:
                    exported.add(found.group(1))
            elif export and re.fullmatch(_SHELL_NAME, word):
                exported.add(word)
    return {name: assigned[name] for name in assigned if name in exported}, problems


def _expanded(text: str, assigned: dict[str, tuple[str, int]]) -> str:
    """``text`` with ``$NAME``/``${NAME}`` of variables set so far replaced, outside single
    quotes (an unknown variable expands to nothing, as in the shell)."""
    out: list[str] = []
    quoted = False
    start = 0
    for i, c in enumerate(text):
        if c == "'":
            chunk = text[start:i]
            out.append(chunk if quoted else _SHELL_REFERENCE.sub(
                lambda m: assigned.get(m.group(1) or m.group(2), ("", 0))[0], chunk))
            out.append(c)
            quoted, start = not quoted, i + 1
    chunk = text[start:]
    out.append(chunk if quoted else _SHELL_REFERENCE.sub(
        lambda m: assigned.get(m.group(1) or m.group(2), ("", 0))[0], chunk))
    return "".join(out)
